"""Runs CPython's test_xpickle as regrtest does (the arguments are regrtest's, e.g.
`-u xpickle test_xpickle`) and counts its work: each bounce (one object pickled here, loaded
and pickled again by a worker of another version, loaded here) and each worker process it
starts, by wrapping the two class methods of test_xpickle that do them. The counts, in total
and by test and by worker version, are written as JSON to the file XPICKLE_COUNTS names.
The interpreter's own `test` package (libregrtest, support) lacks the tests: the folder that
XPICKLE_PEER_PATH names (the test package of libpython3.15-testsuite, which has no
`__init__.py` of its own) is added to its path."""
import atexit
import json
import os
import sys

import test

test.__path__.append(os.environ["XPICKLE_PEER_PATH"])

import test.test_xpickle as peer  # noqa: E402  (after the path above)

counts = {"bounces": 0, "worker_starts": 0, "by_test": {}, "by_version": {}}
send_to_worker = peer.AbstractCompatTests.send_to_worker.__func__
start_worker = peer.AbstractCompatTests.start_worker.__func__


def _test_name():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name.startswith("test_"):
            return frame.f_code.co_name
        frame = frame.f_back
    return "?"


def counted_send(cls, python, data):
    counts["bounces"] += 1
    name = _test_name()
    counts["by_test"][name] = counts["by_test"].get(name, 0) + 1
    version = "%d.%d" % cls.py_version
    counts["by_version"][version] = counts["by_version"].get(version, 0) + 1
    return send_to_worker(cls, python, data)


def counted_start(cls, python):
    counts["worker_starts"] += 1
    return start_worker(cls, python)


peer.AbstractCompatTests.send_to_worker = classmethod(counted_send)
peer.AbstractCompatTests.start_worker = classmethod(counted_start)


@atexit.register
def _write():
    with open(os.environ["XPICKLE_COUNTS"], "w") as f:
        json.dump(counts, f, indent=1, sort_keys=True)


from test.libregrtest.main import main  # noqa: E402

main()
