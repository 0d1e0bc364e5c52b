# crosspickle explore's worker (appended to prelude.py): reads one JSON request on stdin, a
# batch of tasks, and writes one JSON line per task as it finishes it, so that crosspickle
# knows which task a crash or a hang stopped at. Valid on Python 2.7 and every Python 3.
#   {"op": "dump", "values": {"ID": SOURCE}, "tasks": [[ID, PROTOCOL, PICKLER], ...]}
#   {"op": "load", "blobs": {"ID": HEX}, "tasks": [[ID, UNPICKLER], ...]}
import binascii
import json
import signal


class _Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _error(e):
    t = type(e)
    try:
        msg = str(e)
    except Exception:
        msg = "<unprintable>"
    if PY2 and isinstance(msg, str):
        msg = msg.decode("utf-8", "replace")  # 2.7's json.dumps takes only UTF-8 bytes
    return [t.__name__, msg[:500]]


def _bounded(limit, fn, *args):
    """fn(*args) as {"ok": result}, {"err": [type, message]} or {"hang": true}."""
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return {"ok": fn(*args)}
    except _Hang:
        return {"hang": True}
    except Exception as e:
        return {"err": _error(e)}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _build(src):
    ns = {"range_": range_, "__name__": "__explore__"}
    exec(compile(src, "<value>", "exec"), ns)
    return ns["value"]


def _dump(req, limit, emit):
    built = {}
    for i, (vid, protocol, which) in enumerate(req["tasks"]):
        out = {"t": i}
        if vid not in built:
            made = _bounded(limit, _build, req["values"][vid])
            if "ok" in made:
                c = _bounded(limit, canon, made["ok"])
                made["canon"] = c.get("ok")
                if "ok" not in c:
                    made = {"err": c.get("err", ["Hang", ""])}
            built[vid] = made
            out["canon"] = made.get("canon")
        made = built[vid]
        if "ok" not in made:
            out["build"] = made.get("err", ["Hang", ""])
        if "ok" in made:
            r = _bounded(limit, dumps_with, made["ok"], protocol, which)
            if "ok" in r:
                data = r.pop("ok")
                r["hex"] = binascii.hexlify(data).decode("ascii")
                try:
                    import pickletools
                    r["opt"] = binascii.hexlify(pickletools.optimize(data)).decode("ascii")
                except Exception:
                    pass
            out.update(r)
        emit(out)


def _load(req, limit, emit):
    for i, (bid, which) in enumerate(req["tasks"]):
        data = binascii.unhexlify(req["blobs"][bid].encode("ascii"))
        r = _bounded(limit, lambda: canon(loads_with(data, which)))
        if "ok" in r:
            r["canon"] = r.pop("ok")
        r["t"] = i
        emit(r)


def _main():
    req = json.loads(sys.stdin.read())
    signal.signal(signal.SIGALRM, _alarm)
    limit = float(req.get("limit", 5))
    out = sys.stdout

    def emit(obj):
        out.write(json.dumps(obj, sort_keys=True) + "\n")
        out.flush()

    (_dump if req["op"] == "dump" else _load)(req, limit, emit)


_main()
