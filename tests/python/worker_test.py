# Tests of explore's worker's pure parts (src/explore/prelude.py, streams.py, worker.py): the
# canonical description's text and whether a value is made only of pickle's own types
# (described), and the stand-ins that let a load be as expected without describing it
# (_canon, _loaded). Written for every interpreter explore runs on, 2.7 and PyPy included,
# with nothing but the standard library: a tiny runner, plain asserts.
#
# Usage: python worker_test.py EXPLORE_DIR
#   EXPLORE_DIR is src/explore; its three Python files are joined as worker.rs joins them,
#   without the last line's _main() (which would read requests), in a namespace of their own.
# Prints a line per test (ok, FAIL with its traceback, skip with why) and a summary; exits 1
# when a test failed.
import json
import os
import pickle
import signal
import sys
import time
import types

PY2 = sys.version_info[0] == 2
from runner import Skip, main, test


def load_worker(folder):
    source = ""
    for name in ("prelude.py", "streams.py", "worker.py"):
        f = open(os.path.join(folder, name))
        try:
            source += f.read() + "\n"
        finally:
            f.close()
    head, _, tail = source.rpartition("_main()")
    assert tail.strip() == "", "worker.py no longer ends with _main()"
    namespace = {"__name__": "explore_worker"}
    exec(compile(head, "explore_worker", "exec"), namespace)
    return namespace


W = load_worker(sys.argv[1])


def eq(got, want):
    assert got == want, "got %r, want %r" % (got, want)


def digest_of(value):
    """The hash a load request expects for value, with value's stand-in kept where it has one:
    by its dump, or on 2.7 (where only loads stand in) by a load of it."""
    digest = W["_canon"](value)[1]
    if PY2:
        eq(W["_loaded"](W["dumps_with"](value, 2, "py"), "py", digest), None)
    return digest


def forget_stand_ins():
    W["_stand_ins"][0].clear()
    W["_stand_ins"][1].clear()


def needs_stand_ins():
    if not W["_STAND_INS"]:
        raise Skip("no C pickler, so no stand-ins (PyPy's Python one costs more than a walk)")


@test
def the_encoders_write_what_json_dumps_writes():
    texts = [
        ["str", "61"], ["int", "-7"], ["bool", True], [None], ["x", [1, 2, [3]], []],
        [u"caf\xe9", u"\u2603", "tab\there", "quote\"back\\slash", u"\U0001f600"],
        [[["a", 1.5], ["b", -0.0]], 1e300, 12345678901234567890],
    ]
    for separators in ((",", ":"), (", ", ": ")):
        encode = W["_encoder"](json, separators)
        for t in texts:
            eq(encode(t), json.dumps(t, separators=separators))
    eq(W["_encoder"](json, (", ", ": "))(["a", 1]), json.dumps(["a", 1]))


def own_containers():
    # What pickle writes with opcodes of its own at its highest protocol, besides the atoms.
    own = [[1, [2]], (1, (2,)), {"a": {"b": 1}}]
    if pickle.HIGHEST_PROTOCOL >= 4:
        own += [set([1, 2]), frozenset([3])]
    return own


@test
def values_made_of_pickles_own_types_are_plain():
    atoms = [None, True, False, 0, -5, 2 ** 70, 1.5, -0.0, float("nan"), u"x\u2603", b"\x00\xff"]
    for value in atoms + own_containers() + [[atoms, own_containers()]]:
        text, plain = W["described"](value)
        assert plain, "%r should be plain" % (value,)
        eq(text, W["canon"](value))


@test
def values_with_a_reducer_or_a_class_by_name_are_not():
    import collections
    import decimal
    import datetime

    types_ = W["explore_types"] if "explore_types" in W else sys.modules["explore_types"]
    others = [
        1j, Ellipsis, NotImplemented, decimal.Decimal("1.0"), datetime.date(2020, 1, 2),
        collections.OrderedDict(a=1), types_.Plain(1), ValueError("x"), W["range_"](3),
        slice(1, 2), int, [1, [2, (3, decimal.Decimal(1))]], {1: {2: 1j}},
        {decimal.Decimal(1): 1}, (collections.deque([1]),),
    ]
    if pickle.HIGHEST_PROTOCOL < 4:
        others += [set([1]), frozenset([1])]  # 2.7: written by their reducers
    others.append(bytearray(b"a"))  # pickle writes a writable PickleBuffer as one
    for value in others:
        text, plain = W["described"](value)
        assert not plain, "%r should not be plain" % (value,)
        # A plain value described right after is plain again (the flag is per description).
        assert W["described"]([1])[1]


@test
def a_types_description_is_learnt_once_and_is_the_same_whichever_object_came_first():
    # canon describes each type as its first object taught it: in any order, with a fresh
    # describer each time, every object is described as canon describes it on its own, and
    # shared objects and equal keys keep their order and numbers.
    import collections
    import datetime
    import decimal

    shared = [1]
    values = [
        Ellipsis, 1j, decimal.Decimal("2.5"), datetime.datetime(2020, 1, 2, 3, 4, 5),
        collections.OrderedDict([(2, shared), (1, shared)]), collections.deque([shared, shared]),
        ValueError("x", 1), KeyError("k"), {float("nan"): "a", float("nan"): shared, (1,): shared},
        [shared, {u"k": shared}], set([1, 2, (3,)]), frozenset([u"a", b"a"]), bytearray(b"ab"),
        slice(None, 2, shared), W["range_"](2),
    ]
    alone = [W["_describer"]()(v) for v in values]
    for order in (list(range(len(values))), list(reversed(range(len(values))))):
        describe = W["_describer"]()
        got = dict((i, describe(values[i])) for i in order)
        for i in order:
            eq(got[i], alone[i])
    # And a plain value after a type that is not pickle's own is plain again.
    describe = W["_describer"]()
    describe(decimal.Decimal(1))
    assert describe([1, u"a"])[1]
    assert not describe([1, decimal.Decimal(1)])[1]


@test
def a_load_is_as_expected_by_its_stand_in_without_being_described():
    needs_stand_ins()
    forget_stand_ins()
    value = {"a": [1, 2.5, None], "b": (True, u"x\u2603"), "c": b"\x00"}
    digest = digest_of(value)
    assert W["_stand_in_of"](digest), "no stand-in kept for a plain value"
    walked = []
    real = W["described"]

    def counting(obj):
        walked.append(obj)
        return real(obj)

    W["described"] = counting
    try:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            for which in ("py",) + (("c",) if has_c() else ()):
                data = W["dumps_with"](value, protocol, which)
                eq(W["_loaded"](data, which, digest), None)
    finally:
        W["described"] = real
    eq(walked, [])


def has_c():
    try:
        W["dumps_with"](1, 2, "c")
        return True
    except ImportError:
        return False


@test
def a_load_that_differs_is_described_with_its_hash():
    needs_stand_ins()
    forget_stand_ins()
    shared = [1]
    pairs = [
        ([1, 2], [1, True]),
        ([1.0], [1]),
        ([0.0], [-0.0]),
        ([shared, shared], [[1], [1]]),
        ({"a": u"x"}, {"a": b"x"}),
        ((1, 2), [1, 2]),
    ]
    for built, loaded in pairs:
        digest = digest_of(built)
        assert W["_stand_in_of"](digest), "no stand-in kept for %r" % (built,)
        data = W["dumps_with"](loaded, 2, "py")
        got = W["_loaded"](data, "py", digest)
        assert got is not None, "%r loaded as %r" % (loaded, built)
        eq(got, [W["canon"](loaded), W["_digest"](W["canon"](loaded))])


class Lossy(object):
    # Its reducer leaves out what canon reads (as 3.9's IPv6Address leaves out its scope).
    def __init__(self, a=None):
        self.a = a

    def __reduce__(self):
        return (Lossy, ())


@test
def a_reducer_that_leaves_state_out_is_never_stood_in_for():
    forget_stand_ins()
    module = types.ModuleType("worker_test_lossy")
    module.Lossy = Lossy
    Lossy.__module__ = module.__name__
    sys.modules[module.__name__] = module
    # The two pickle alike and are described apart: neither may stand for the other.
    eq(pickle.dumps(Lossy(1), 2), pickle.dumps(Lossy(), 2))
    for built in (Lossy(1), [Lossy(1)], {"k": (Lossy(1),)}):
        digest = W["_canon"](built)[1]
        eq(W["_stand_in_of"](digest), None)
        data = W["dumps_with"](built, 2, "py")
        got = W["_loaded"](data, "py", digest)
        assert got is not None and "[\"object\"" in got[0], got
        eq(W["_stand_in_of"](digest), None)
    # Nor where it loads as built.
    digest = W["_canon"]([Lossy()])[1]
    eq(W["_loaded"](W["dumps_with"]([Lossy()], 2, "py"), "py", digest), None)
    eq(W["_stand_in_of"](digest), None)


@test
def a_scoped_ipv6_address_is_described_on_every_load():
    try:
        import ipaddress
        built = ipaddress.ip_address(u"::%1")
    except (ImportError, ValueError):
        raise Skip("no ipaddress with scopes (3.9 and later)")
    forget_stand_ins()
    digest = W["_canon"](built)[1]
    eq(W["_stand_in_of"](digest), None)
    got = W["_loaded"](W["dumps_with"](ipaddress.ip_address(u"::"), 2, "py"), "py", digest)
    assert got is not None and "IPv6Address" in got[0], got


@test
def a_value_that_does_not_pickle_keeps_no_stand_in_and_is_walked():
    needs_stand_ins()
    forget_stand_ins()
    built = [1, 2]
    digest = digest_of(built)
    W["_stand_ins"][0][digest] = b""  # what _keep_stand_in keeps when pickling fails
    eq(W["_loaded"](W["dumps_with"](built, 2, "py"), "py", digest), None)
    got = W["_loaded"](W["dumps_with"]([2, 1], 2, "py"), "py", digest)
    assert got is not None and got[0] == W["canon"]([2, 1]), got


@test
def stand_ins_are_kept_in_two_generations():
    needs_stand_ins()
    forget_stand_ins()
    kept = W["_KEPT"]
    W["_KEPT"] = 2
    try:
        digests = [digest_of([n]) for n in range(5)]
        # [0] and [1] filled the first generation, [2] and [3] the next; [4] began a third.
        eq([bool(W["_stand_in_of"](d)) for d in digests], [False, False, True, True, True])
        # A forgotten one is walked, and kept again.
        eq(W["_loaded"](W["dumps_with"]([0], 2, "py"), "py", digests[0]), None)
        assert W["_stand_in_of"](digests[0])
    finally:
        W["_KEPT"] = kept


@test
def a_bytearray_has_no_stand_in_for_a_pickle_buffer_to_match():
    # A writable PickleBuffer shared twice pickles as a bytearray shared twice (on CPython),
    # and canon describes it as two: a value holding a bytearray is never plain.
    if pickle.HIGHEST_PROTOCOL < 5:
        raise Skip("no PickleBuffer before protocol 5")
    forget_stand_ins()
    shared = bytearray(b"ab")
    digest = digest_of([shared, shared])
    eq(W["_stand_in_of"](digest), None)
    buffer = pickle.PickleBuffer(bytearray(b"ab"))
    assert W["canon"]([buffer, buffer]) != W["canon"]([shared, shared])


def spin(seconds):
    end = time.time() + seconds
    while time.time() < end:
        pass
    return seconds


@test
def a_task_past_its_limit_is_a_hang_while_the_timer_ticks():
    signal.signal(signal.SIGALRM, W["_alarm"])
    W["_tick"](0.2)
    try:
        began = time.time()
        eq(W["_bounded"](0.2, spin, 30), {"hang": 1})
        took = time.time() - began
        assert 0.2 <= took < 0.5, "a hang after %.2f s, for a limit of 0.2 s" % took
        # Tasks that each end in time are no hang, however long they take together.
        for _ in range(12):
            eq(W["_bounded"](0.2, spin, 0.05), {"ok": 0.05})
        # Nor is the worker's own work between tasks.
        spin(0.5)
    finally:
        W["_tick"](0)
    eq(signal.getitimer(signal.ITIMER_REAL), (0.0, 0.0))


@test
def a_task_has_a_timer_of_its_own_where_none_ticks():
    signal.signal(signal.SIGALRM, W["_alarm"])
    began = time.time()
    eq(W["_bounded"](0.2, spin, 30), {"hang": 1})
    took = time.time() - began
    assert 0.2 <= took < 0.4, "a hang after %.2f s, for a limit of 0.2 s" % took
    eq(W["_bounded"](0.2, spin, 0.01), {"ok": 0.01})
    eq(signal.getitimer(signal.ITIMER_REAL), (0.0, 0.0))


if __name__ == "__main__":
    sys.exit(main("worker"))
