# Where explore's worker spends its CPU beyond the pickle operations, on one interpreter: the
# worker's own dump and load requests (src/explore/worker.py's _dump and _load, framed by
# _send) for the values of a seed, as observe.rs makes them with this interpreter as the only
# producer and consumer, against the floor (the same values' pickle operations alone) in the
# same process, each the least of three rounds; or, with "profile", cProfile of the requests.
#
# Usage: PYTHON benches/explore-worker.py VALUES.jsonl [COUNT] [BATCH] [profile] [SRC]
#   VALUES.jsonl: `crosspickle explore --seed N --count M --emit-values VALUES.jsonl`;
#   COUNT values (default 500), BATCH values per request (default 100), SRC the folder of
#   prelude.py, streams.py and worker.py (default src/explore beside this script).
import json
import os
import pickle
import signal
import sys

here = os.path.dirname(os.path.abspath(__file__))
values_path = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 500
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 100
mode = sys.argv[4] if len(sys.argv) > 4 else "time"
src = sys.argv[5] if len(sys.argv) > 5 else os.path.join(here, "..", "src", "explore")
code = ""
for name in ("prelude.py", "streams.py", "worker.py"):
    code += open(os.path.join(src, name)).read() + "\n"
code = code.rsplit("_main()", 1)[0]  # the functions, not the loop over stdin
ns = {"__name__": "explore_worker"}
exec(compile(code, "worker", "exec"), ns)
sources = [json.loads(line)["source"] for line in open(values_path)][:count]
try:
    ns["loads_with"](ns["dumps_with"](1, 2, "c"), "c")
    picklers = ["c", "py"]
except ImportError:
    picklers = ["py"]
protocols = list(range(pickle.HIGHEST_PROTOCOL + 1)) + [100]  # 100: the default protocol
devnull = os.open(os.devnull, os.O_WRONLY)
signal.signal(signal.SIGALRM, ns["_alarm"])


def op(name, req, parts):
    # As the worker's _main asks it: the task timer ticking through the request.
    ns["_tick"](5.0)
    try:
        return ns[name](req, parts, 5.0)
    finally:
        ns["_tick"](0)


def explore():
    for start in range(0, len(sources), batch):
        chunk = list(enumerate(sources[start:start + batch], start))
        req = {"op": "dump", "values": [[str(i), s] for i, s in chunk],
               "tasks": [[str(i), p, k] for i, _ in chunk for p in protocols for k in picklers]}
        header, blobs = op("_dump", req, [])
        codes = list(header["codes"])  # _send takes them out of the header
        ns["_send"](devnull, header, blobs)
        # Each distinct pickle once, with the hash of what was pickled.
        distinct = {}
        for (vid, _, _), t in zip(req["tasks"], codes):
            if t != ns["_OTHER"]:  # a pickle's part
                built = header["built"].get(vid)
                expected = built[1] if isinstance(built, list) else ""
                distinct.setdefault(blobs[t - 1], expected)
        parts = list(distinct)
        tasks = [[i + 1, u] for i, b in enumerate(parts) for u in picklers]
        hashes = [distinct[b] for b in parts]
        header, blobs = op("_load", {"op": "load", "tasks": tasks, "hashes": hashes}, parts)
        ns["_send"](devnull, header, blobs)


def floor():
    for source in sources:
        d = {"range_": ns["range_"], "__name__": "__explore__"}
        try:
            exec(compile(source, "<value>", "exec"), d)
        except Exception:
            continue
        value = d["value"]
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            for which in picklers:
                try:
                    data = ns["dumps_with"](value, protocol, which)
                except Exception:
                    continue
                for unpickler in picklers:
                    try:
                        ns["loads_with"](data, unpickler)
                    except Exception:
                        pass


def cpu():
    t = os.times()
    return t[0] + t[1]


if mode == "profile":
    import cProfile
    import pstats
    profile = cProfile.Profile()
    profile.runcall(explore)
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)
else:
    floors, workers = [], []
    for _ in range(3):
        a = cpu()
        floor()
        b = cpu()
        explore()
        c = cpu()
        floors.append(b - a)
        workers.append(c - b)
    print("%s: %d values, floor %.3f s, worker %.3f s of CPU (least of 3): %.2fx the floor" % (
        sys.version.split()[0], len(sources), min(floors), min(workers),
        min(workers) / max(min(floors), 0.001)))
