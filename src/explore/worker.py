# crosspickle explore's worker (appended to prelude.py): one process per interpreter for the
# whole run, fed batches over its standard input and answering each with one message. Valid on
# Python 2.7 and every Python 3.
#
# A message, either way, is a list of parts: a 4-byte big-endian count, then each part as a
# 4-byte big-endian length and its bytes. Part 0 is a JSON header; the others are pickles.
# The worker says {"ready": 1} as it starts, then answers each request:
#   {"op": "dump", "limit": S, "values": [[ID, SOURCE], ...], "tasks": [[ID, PROTOCOL, PICKLER], ...]}
#     (PROTOCOL 100: the default, none named; 105: 5 with the buffers out of band)
#     -> {"built": {ID: [CANON, HASH] or {"err": [TYPE, MESSAGE]}},
#         "other": [{"err": [TYPE, MESSAGE, SITE]} or {"hang": 1} or {"built": 0}, ...],
#         "parity": [[ID, PROTOCOL, C_PART, PY_PART], ...]}
#        the pickles as parts, then the answers' table (below); "parity" only where the C and
#        the Python pickler wrote different bytes and still differ once pickletools.optimize'd
#        and their memo renumbered (the optimized forms as parts: crosspickle reads what
#        differs from them, parity_cause.rs).
#   {"op": "load", "limit": S, "tasks": [[PART, UNPICKLER], ...], "hashes": [HASH, ...]}, the
#     pickles (each part's HASH the one its load is expected to describe; and "setup":
#     [SOURCE, ...], run once each before loading: the user's folders on sys.path)
#     -> {"other": [{"h": HASH, "canon": TEXT} or {"err": [TYPE, MESSAGE, SITE]} or
#         {"hang": 1}, ...]}, then the answers' table
#   The answers' table, the last part: one 4-byte big-endian number per task, in the order of
#   the tasks: a dump's pickle's part, 0 for a load as expected (its canonical description's
#   hash the expected one), or OTHER (0xffffffff) for the next answer of "other". The first two
#   are the commonest answers by far: written and read without JSON (the parts' table of a
#   batch was a sixth of crosspickle's own work as a JSON list).
#   SITE: where the exception was raised, "pickle.save_global", "copyreg._reduce_ex", the
#   reducer's "module.__reduce__", or "_pickle" ("cPickle" on 2.7) for the C code (_site).
#   {"op": "streams", ...}: byte streams loaded under limits (streams.py, before this file),
#     whose answers are all in "other"
# What a value prints goes to stderr: the worker's channel is a copy of its stdout.
import hashlib
import json
import os
import signal


# An answer of the table that is in "other" (see above).
_OTHER = 0xFFFFFFFF


class _Hang(BaseException):
    pass


# A task's time limit. While a dump or load request runs, SIGALRM ticks every quarter of its
# limit (one timer a request, where two system calls a task were a twentieth of a worker's
# time): a task under way through more than _TICKS ticks, between the limit and 1.25 times
# it, is a hang. Elsewhere (a stream's load where there is no fork) a task has a timer of its
# own. _under_way: the number of the task under way (0 for none, -1 for one with a timer of
# its own), the number the last tick saw, and how many ticks in a row saw it.
_TICKS = 4
_ticking = [0.0]
_under_way = [0, 0, 0]
_tasks = [0]


def _alarm(signum, frame):
    n = _under_way[0]
    if n == -1:
        raise _Hang()
    if n == 0:
        return
    if n != _under_way[1]:
        _under_way[1] = n
        _under_way[2] = 1
        return
    _under_way[2] += 1
    if _under_way[2] > _TICKS:
        raise _Hang()


def _tick(limit):
    """SIGALRM every quarter of limit from now on, or no more where limit is 0."""
    _ticking[0] = limit
    every = float(limit) / _TICKS
    signal.setitimer(signal.ITIMER_REAL, every, every)


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
    """fn(*args) as {"ok": result}, {"err": [type, message]} or {"hang": 1}."""
    ticking = _ticking[0] == limit
    if ticking:
        _tasks[0] += 1
        _under_way[0] = _tasks[0]
    else:
        _under_way[0] = -1
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return {"ok": fn(*args)}
    except _Hang:
        return {"hang": 1}
    except Exception as e:
        return {"err": _error(e) + [_site(sys.exc_info()[2])]}
    finally:
        _under_way[0] = 0
        if not ticking:
            signal.setitimer(signal.ITIMER_REAL, 0)


# What the C pickler and unpickler are, as a raise site: an exception raised in C code called
# from this file's own frames.
_ACCELERATOR = "cPickle" if PY2 else "_pickle"


def _site(tb):
    """Where an exception was raised, as MODULE.FUNCTION of the innermost frame (pickle.py's,
    copyreg's, a reducer's): no line numbers, which move between versions. The import
    machinery's frames are passed over (a class that is not found is find_class's); an
    exception raised with no frame under this file's own was raised by the C accelerator."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    own = globals()
    for f in reversed(frames):
        g = f.f_globals
        if g is own:
            break
        module = g.get("__name__") or "?"
        if module.startswith(("importlib", "_frozen_importlib")):
            continue
        return "%s.%s" % (module, f.f_code.co_name)
    return _ACCELERATOR


def _build(src):
    ns = {"range_": range_, "drawn": drawn, "__name__": "__explore__"}
    exec(compile(src, "<value>", "exec"), ns)
    return ns["value"]


def _digest(text):
    if not isinstance(text, bytes):
        text = text.encode("utf-8")
    return hashlib.sha1(text).hexdigest()[:16]


# A description's stand-in: the bytes pickle.dumps writes at the highest protocol (2.7:
# cPickle's at 2) for an object that is described by it and is made only of the types pickle
# writes by itself, with opcodes of their own (described() in prelude.py: None, bool, numbers,
# text, bytes and the builtin containers, no reducer and no class by name). Another object
# that pickles to the same bytes is made of the same types, holding the same, shared alike:
# canon describes it the same without walking it. So a load whose value pickles to its
# expected description's stand-in is as expected, and only the others are described. No other
# value has a stand-in: where a reducer writes the pickle, two objects that canon tells apart
# can pickle alike (3.9's IPv6Address leaves out its scope), and that is what explore looks for.
# Two generations of at most _KEPT stand-ins: a value's loads come a batch after its dump.
# 2.7's cPickle memoizes only what is referenced more than once, so a built value (whose
# strings its code holds too) rarely pickles as a loaded one does: there only loads stand in.
# Only with a C pickler: PyPy's Python one costs more than the walk it would spare.
_KEPT = 4096
_stand_ins = [{}, {}]
_HIGHEST = 2 if PY2 else pickle.HIGHEST_PROTOCOL
try:
    _accelerator()
    _STAND_INS = True
except ImportError:
    _STAND_INS = False


def _stand_in(obj):
    return _accelerator().dumps(obj, _HIGHEST)


def _stand_in_of(digest):
    return _stand_ins[0].get(digest) or _stand_ins[1].get(digest)


def _keep_stand_in(obj, digest):
    """Keeps obj's stand-in for its description's digest, obj made only of pickle's own types
    (where there is a C pickler)."""
    if not _STAND_INS or _stand_in_of(digest) is not None:
        return
    try:
        data = _stand_in(obj)
    except Exception:
        data = b""  # never a pickle: the description's loads are walked
    if len(_stand_ins[0]) >= _KEPT:
        _stand_ins[1] = _stand_ins[0]
        _stand_ins[0] = {}
    _stand_ins[0][digest] = data


def _canon(obj):
    text, plain = described(obj)
    digest = _digest(text)
    if plain and not PY2:
        _keep_stand_in(obj, digest)
    return [text, digest]


def _loaded(data, which, expected):
    """What the load of data gave: None where it is described as expected (the hash expected),
    else its canonical description and the description's hash."""
    obj = loads_with(data, which)
    stand_in = _stand_in_of(expected)
    if stand_in:
        try:
            if _stand_in(obj) == stand_in:
                return None
        except Exception:
            pass
    text, plain = described(obj)
    digest = _digest(text)
    if digest != expected:
        return [text, digest]
    if plain and stand_in is None:
        _keep_stand_in(obj, expected)
    return None


# How a dump request names the protocols that are not numbers (see _dump).
_NAMED = {100: "default", 105: "oob"}

# The protocol pickle.dumps writes when it names none: 0 on 2.7, which has no DEFAULT_PROTOCOL.
_DEFAULT = getattr(pickle, "DEFAULT_PROTOCOL", 0)


def _dump(req, parts, limit):
    sources = dict((vid, src) for vid, src in req["values"])
    built, made, codes, others, out, parity = {}, {}, [], [], [], []
    written, done = {}, {}
    for vid, protocol, which in req["tasks"]:
        if vid not in made:
            m = _bounded(limit, _build, sources[vid])
            if "ok" in m:
                c = _bounded(limit, _canon, m["ok"])
                if "ok" in c:
                    built[vid] = c["ok"]
                else:
                    built[vid] = {"err": c.get("err", ["Hang", ""])[:2]}
                    m = {}
            else:
                built[vid] = {"err": m.get("err", ["Hang", ""])[:2]}
            made[vid] = m
        m = made[vid]
        if "ok" not in m:
            codes.append(_OTHER)
            others.append({"built": 0})
            continue
        # 100 stands for no protocol named (crosspickle's DEFAULT_PROTOCOL), 105 for protocol 5
        # with its buffers out of band (OOB_PROTOCOL): a value none of whose buffers went out
        # of band is not dumped that way (its pickle is protocol 5's).
        named = _NAMED.get(protocol, protocol)
        # No protocol named is the default's number named (pickle.dumps and both picklers take
        # None for DEFAULT_PROTOCOL): that dump's answer and pickle are the default's.
        same = (vid, _DEFAULT, which) if named == "default" else None
        if same in done:
            r = done[same]
            if same in written:
                written[(vid, protocol, which)] = written[same]
        else:
            r = _bounded(limit, dumps_with, m["ok"], named, which)
            if named == "oob" and r.get("ok", OOB_MARK)[:4] != OOB_MARK:
                codes.append(_OTHER)
                others.append({"built": 0})
                continue
            if "ok" in r:
                data = r.pop("ok")
                out.append(data)
                r = len(out)
                written[(vid, protocol, which)] = data
            done[(vid, protocol, which)] = r
        if r.__class__ is int:
            codes.append(r)
        else:
            codes.append(_OTHER)
            others.append(r)
    formed = {}  # the parts of two pickles' parity forms, by the pickles (the default's twice)
    for (vid, protocol, which), data in written.items():
        other = written.get((vid, protocol, "py"))
        if which != "c" or other is None or other == data:
            continue
        if (id(data), id(other)) not in formed:
            try:
                a, b = parity_form(data), parity_form(other)
            except Exception:
                a = b = None
            if a != b:
                out.append(a)
                out.append(b)
            formed[(id(data), id(other))] = None if a == b else len(out) - 1
        first = formed[(id(data), id(other))]
        if first is not None:
            parity.append([vid, protocol, first, first + 1])
    return {"built": built, "codes": codes, "other": others, "parity": parity}, out


_setup_done = set()


def _load(req, parts, limit):
    for src in req.get("setup", []):
        if src not in _setup_done:
            _setup_done.add(src)
            try:
                exec(compile(src, "<setup>", "exec"), {})
            except Exception:
                pass  # what it was for shows as the load's error
    codes, others = [], []
    hashes = req["hashes"]
    for part, which in req["tasks"]:
        data = parts[part - 1]
        expected = hashes[part - 1]
        r = _bounded(limit, _loaded, data, which, expected)
        if "ok" in r:
            got = r.pop("ok")
            if got is None:
                codes.append(0)
                continue
            r["canon"], r["h"] = got
        codes.append(_OTHER)
        others.append(r)
    return {"codes": codes, "other": others}, []


def _read(fd, n):
    chunks = []
    while n > 0:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            raise EOFError()
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def _receive(fd):
    (count,) = struct.unpack(">I", _read(fd, 4))
    parts = []
    for _ in range(count):
        (size,) = struct.unpack(">I", _read(fd, 4))
        parts.append(_read(fd, size))
    return parts


def _send(fd, header, blobs):
    # A header's "codes" (an answers' table, see above) go as the last part.
    codes = header.pop("codes", None)
    if codes is not None:
        blobs = blobs + [struct.pack(">%dI" % len(codes), *codes)]
    head = json.dumps(header, separators=(",", ":"))
    if not isinstance(head, bytes):
        head = head.encode("utf-8")
    pieces = [struct.pack(">I", 1 + len(blobs)), struct.pack(">I", len(head)), head]
    for b in blobs:
        pieces.append(struct.pack(">I", len(b)))
        pieces.append(b)
    data = b"".join(pieces)
    while data:
        data = data[os.write(fd, data):]


def _main():
    channel = os.dup(1)
    os.dup2(2, 1)  # what values print goes to stderr
    signal.signal(signal.SIGALRM, _alarm)
    _send(channel, {"ready": 1}, [])
    while True:
        try:
            parts = _receive(0)
        except EOFError:
            return
        req = json.loads(parts[0].decode("utf-8"))
        limit = float(req.get("limit", 5))
        op = {"dump": _dump, "load": _load, "streams": _streams}[req["op"]]
        ticks = op is not _streams  # a stream's load is timed in a child of its own
        if ticks:
            _tick(limit)
        try:
            header, blobs = op(req, parts[1:], limit)
        finally:
            if ticks:
                _tick(0)
        _send(channel, header, blobs)


_main()
