# The fork server's loop (see 0_protocol.py), loaded (_need) when a process is sent its first
# `preload` or `run` (1_serve.py): it reads the requests of fd 0 and answers on fd 1, forking a
# child per run, and the child, as a process that runs one request, returns out of the loop
# with it. The preload: the case's modules imported first, with what they write kept aside (a
# server that cannot keep it, or whose preload wrote or started threads, cannot serve forked
# runs). And what a forked child's request has that an exec'd run's has not: its output FIFOs.


def _server(buf, names):
    read, write, fork, waitpid = os.read, os.write, os.fork, os.waitpid
    me = os.getpid()
    preloaded, cannot_fork = [], None
    freeze = None
    # Children started and not reaped yet: each leads a session (and group) of its own.
    children = set()
    while True:
        nl = buf.find(b"\n")
        if nl < 0:
            try:
                chunk = read(0, 65536)
            except OSError as e:
                if e.errno == 4:  # EINTR, on Python 2
                    continue
                raise
            if not chunk:
                # Nothing more to do. The server never ran case code: it has nothing to
                # finalise that anyone could see, and crosspickle waits for it to be gone. A
                # child still there (crosspickle was killed) ends with its group.
                _end_groups(children)
                os._exit(0)
            buf += chunk
            continue
        line, buf = buf[:nl], buf[nl + 1 :]
        verb, _, rest = line.partition(b" ")
        if verb in (b"preload", b"import"):
            names = _listed(rest)
            if verb == b"import":
                _import(names)
            else:
                if freeze is None and sys.version_info >= (3, 10):
                    # Before the preload, so that _quiet_exit is still the server's first
                    # atexit callback, run after those the preload registers (logging's). From
                    # 3.10, where atexit's callbacks are the interpreter's: before, the module
                    # keeps them, and the preload's `import atexit` (weakref's) makes another
                    # (on 3.7 and 3.8, a run then crashed as it ended).
                    freeze = _gc_freeze()
                preloaded, cannot_fork = _preload(names)
            continue
        if verb == b"once":
            _alone()
            return rest, None, names
        if verb == b"run":
            ident, _, rest = rest.partition(b" ")
            if cannot_fork:
                # What the preload did cannot be given to forked children: this server cannot
                # serve, and crosspickle starts an interpreter for each run instead.
                write(2, cannot_fork)
                os._exit(70)
            for _, out in preloaded:
                os.close(out)
            preloaded = []
            if freeze is None:
                freeze = _gc_freeze()
            if freeze:
                freeze.freeze()
            try:
                pid = fork()
            except OSError as e:
                write(1, b"failed " + ident + b" " + _ascii(str(e)) + b"\n")
                continue
            if pid == 0:
                os.setsid()
                _fresh_stdin()
                return rest, me, names
            children.add(pid)
            write(1, b"started " + ident + b" " + _ascii(str(pid)) + b"\n")
        elif verb == b"reap":
            children.discard(int(rest))
            try:
                status = waitpid(int(rest), 0)[1]
            except OSError:
                status = -1
            write(1, b"exited " + rest + b" " + _ascii(str(status)) + b"\n")


def _end_groups(children):
    # Kill each child's group (its pid: it made a session of its own), or the child alone if
    # it has not made it yet. A child not reaped keeps its pid: no other process has it.
    for pid in children:
        try:
            os.killpg(pid, 9)
        except OSError:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def _preload(names):
    # _import in a server: what the modules write goes to files (fd 1 is the protocol's).
    # Returns them, with (fd, file) pairs, and why this server cannot fork runs, if it cannot.
    outputs, saved = [], []
    try:
        for fd in (1, 2):
            name = ".crosspickle-preload-%d-%d" % (os.getpid(), fd)
            out = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            os.unlink(name)
            outputs.append((fd, out))
    except OSError as e:
        # Nothing imported: the runs are started as under exec, where what is written is theirs.
        return outputs, _ascii("cannot keep what importing the case's preload writes: %s\n" % e)
    for fd, out in outputs:
        saved.append((fd, os.dup(fd)))
        os.dup2(out, fd)
    try:
        _import(names)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
    if any(os.fstat(out).st_size for _, out in outputs):
        return outputs, b"importing the case's preload wrote output, which forked runs would not show\n"
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return outputs, b"importing the case's preload started threads, which forked runs would lack\n"
    return outputs, None


def _redirect(path, fd):
    new = os.open(path, os.O_WRONLY)
    os.dup2(new, fd)
    os.close(new)
