# crosspickle explore --streams, in the worker (between prelude.py and worker.py): byte
# streams loaded by the C unpickler ("c": _pickle, 2.7's cPickle), the Python one ("py":
# pickle._Unpickler, 2.7's pickle.Unpickler) and pickletools.dis ("dis"). Valid on 2.7 and
# every Python 3.
#
#   {"op": "streams", "limit": S, "memory": BYTES, "globals": [[MODULE, NAME], ...],
#    "tasks": [[PART, WHICH], ...]}, the streams as parts
#     -> {"other": [{"h": HASH, "canon": TEXT} or {"err": [TYPE, MESSAGE]} or {"hang": 1}
#                   or {"crash": HOW}, ...]}, then the answers' table, all of it OTHER
#        (worker.py)
#
# Each load runs in a child forked for it (where the platform forks): its address space
# limited to what the worker uses plus BYTES (RLIMIT_AS, so an allocation without bound is a
# MemoryError or the child's death), killed by SIGALRM after S seconds (also inside C code),
# so that a stream that allocates, hangs or crashes takes only that child down. A stream may
# import only the globals listed: any other is refused (Refused) before it is imported.


class Refused(Exception):
    pass


class _Discard(object):
    def write(self, text):
        pass


def _stream_load(data, which, allowed):
    import io
    import pickle
    import sys

    def check(module, name):
        if [module, name] not in allowed:
            raise Refused("%s.%s" % (module, name))

    if which == "dis":
        import pickletools
        pickletools.dis(data, out=_Discard())
        return None
    if PY2:
        if which == "c":
            import cPickle
            import cStringIO
            u = cPickle.Unpickler(cStringIO.StringIO(data))

            def find_global(module, name):
                check(module, name)
                __import__(module)
                return getattr(sys.modules[module], name)
            u.find_global = find_global
            return u.load()

        class U2(pickle.Unpickler):
            def find_class(self, module, name):
                check(module, name)
                return pickle.Unpickler.find_class(self, module, name)
        return U2(io.BytesIO(data)).load()
    if which == "c":
        import _pickle
        base = _pickle.Unpickler
    else:
        base = pickle._Unpickler

    class U3(base):
        def find_class(self, module, name):
            check(module, name)
            return base.find_class(self, module, name)
    return U3(io.BytesIO(data)).load()


def _stream_task(data, which, allowed, ceiling=None):
    """One load as a result record (what the child sends). A load that raised near the
    ceiling of its address space ran out of memory, whatever it raised (3.12's deque raises
    SystemError then): it is reported as a MemoryError."""
    r = _bounded_plain(lambda: _stream_load(data, which, allowed))
    if "err" in r:
        if ceiling and r["err"][0] != "MemoryError" and _peak() > ceiling - (16 << 20):
            r["err"] = ["MemoryError", "at the memory limit: %s: %s" % tuple(r["err"])]
        return r
    if which == "dis":
        return {"h": "dis-ok"}
    try:
        text = canon(r["ok"])
    except Exception as e:
        # Loaded, but what loaded cannot be described (a nesting too deep, say).
        return {"h": "not-comparable", "canon": "not comparable: " + type(e).__name__}
    h = _digest(text)
    out = {"h": h}
    if len(text) <= 4096:
        out["canon"] = text
    return out


def _bounded_plain(fn):
    try:
        return {"ok": fn()}
    except Exception as e:
        return {"err": _error(e)}


def _address_space():
    try:
        import resource
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except Exception:
        return 0


def _peak():
    """The largest the address space has been (VmPeak), in bytes; 0 where unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) * 1024
    except Exception:
        pass
    return 0


def _limit_memory(extra):
    """The address space limited to what it is now and `extra` bytes: the limit, or None."""
    now = _address_space()
    if not now:
        return None
    import resource
    size = now + extra
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        size = min(size, hard)
    resource.setrlimit(resource.RLIMIT_AS, (size, hard))
    return size


def _stream_forked(data, which, allowed, limit, memory):
    import select
    import time
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_REAL, limit)
            ceiling = _limit_memory(memory)
            text = json.dumps(_stream_task(data, which, allowed, ceiling))
            if not isinstance(text, bytes):
                text = text.encode("utf-8")
            while text:
                text = text[os.write(w, text):]
        finally:
            os._exit(0)
    os.close(w)
    chunks, deadline, hung = [], time.time() + limit + 2, False
    while True:
        left = deadline - time.time()
        if left <= 0:
            hung = True
            break
        ready, _, _ = select.select([r], [], [], left)
        if not ready:
            continue
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    if hung:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if hung:
        return {"hang": 1}
    if chunks:
        try:
            return json.loads(b"".join(chunks).decode("utf-8"))
        except ValueError:
            pass
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGALRM:
            return {"hang": 1}
        return {"crash": "killed by signal %d" % sig}
    return {"crash": "exited with status %d and no result" % os.WEXITSTATUS(status)}


def _streams(req, parts, limit):
    allowed = [list(g) for g in req.get("globals", [])]
    memory = int(req.get("memory", 1 << 30))
    tasks = []
    for part, which in req["tasks"]:
        data = parts[part - 1]
        if hasattr(os, "fork"):
            tasks.append(_stream_forked(data, which, allowed, limit, memory))
        else:
            r = _bounded(limit, lambda: _stream_task(data, which, allowed))
            tasks.append(r.get("ok", r))
    return {"codes": [0xFFFFFFFF] * len(tasks), "other": tasks}, []
