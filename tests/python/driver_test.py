# Tests of the driver's pure parts (src/run/driver/): the quiet ending's rules (_loud), how a
# raised class stands to a class the rules name (_relation, _resolve), traceback formatting and
# the result record. Written for every interpreter crosspickle runs on, 2.7 and PyPy included,
# with nothing but the standard library: a tiny runner, plain asserts.
#
# Usage: python driver_test.py DRIVER_DIR
#   DRIVER_DIR is src/run/driver; its parts are joined as run/driver.rs joins them, without the
#   start (9_start.py, which would read requests), and run in a namespace of their own.
# Prints a line per test (ok, FAIL with its traceback, skip with why) and a summary; exits 1
# when a test failed.
import gc
import os
import sys
import tempfile
import threading
import traceback
import weakref

PY2 = sys.version_info[0] == 2
from runner import Skip, main, test


def read(path):
    f = open(path, "rb")
    try:
        return f.read()
    finally:
        f.close()


def load_driver(folder, scratch):
    parts = sorted(n for n in os.listdir(folder) if n.endswith(".py") and n != "9_start.py")
    source = b"".join(read(os.path.join(folder, n)) for n in parts)
    path = os.path.join(scratch, "crosspickle_driver.py")
    f = open(path, "wb")
    f.write(source)
    f.close()
    import __main__

    namespace = {"__name__": "crosspickle_driver", "__builtins__": __main__.__builtins__}
    exec(compile(source, path, "exec"), namespace)
    return namespace


SCRATCH = tempfile.mkdtemp(prefix="driver-test-")
D = load_driver(sys.argv[1], SCRATCH)


def write(name, text):
    path = os.path.join(SCRATCH, name)
    f = open(path, "wb")
    f.write(text if isinstance(text, bytes) else text.encode("utf-8"))
    f.close()
    return path


def load_case(name, text):
    # A case's functions, defined in a file of their own (what tracebacks show).
    path = write(name, text)
    namespace = {"__name__": name}
    exec(compile(read(path), path, "exec"), namespace)
    return namespace


def caught(function, *args):
    try:
        function(*args)
    except BaseException:
        return sys.exc_info()
    raise AssertionError("%r raised nothing" % function)


def eq(got, want):
    assert got == want, "got %r, want %r" % (got, want)


# --- the quiet ending's rules (_loud) ---
# _loud is asked only in a fork server's child, where gc.freeze has put what the server made
# out of the collector's lists: each test freezes what is there, makes what it names, and asks.


def need_freeze():
    if getattr(gc, "freeze", None) is None:
        raise Skip("no gc.freeze on this interpreter: runs never end quietly here")


def loud_with(make):
    need_freeze()
    D["_GC"] = gc
    gc.collect()
    gc.freeze()
    try:
        run = D["_Run"]()
        kept = make()
        said = D["_loud"](run)
        del kept
        return said
    finally:
        gc.unfreeze()


class WithDel(object):
    def __del__(self):
        pass


class Target(object):
    pass


def finished_generator():
    generator = (x for x in [1])
    list(generator)
    return generator


@test
def loud_plain_objects_are_quiet():
    import io

    def make():
        target = Target()
        values = WeakValueHolder(target)
        return [[1, 2], {"a": (3,)}, Target(), io.BytesIO(b"x"), io.StringIO(u"x"), finished_generator(), values, target]

    eq(loud_with(make), None)


def WeakValueHolder(target):
    values = weakref.WeakValueDictionary()
    values["t"] = target
    members = weakref.WeakSet()
    members.add(target)
    return values, members


@test
def loud_an_object_with_del():
    eq(loud_with(lambda: WithDel()), "a WithDel object")


@test
def loud_an_open_file():
    path = write("open-file", b"")

    opened = []

    def make():
        opened.append(open(path, "rb"))

    try:
        said = loud_with(make)
    finally:
        for f in opened:
            f.close()
    assert said is not None and said.startswith("a "), said


@test
def loud_a_subclass_of_bytesio():
    import io

    class MyBytesIO(io.BytesIO):
        pass

    eq(loud_with(lambda: MyBytesIO()), "a MyBytesIO object")


@test
def loud_an_unfinished_generator():
    def make():
        generator = (x for x in [1, 2])
        next(generator)
        return generator

    eq(loud_with(make), "an unfinished generator")


@test
def loud_a_weak_reference_with_a_callback():
    def make():
        target = Target()
        return target, weakref.ref(target, lambda ref: None)

    eq(loud_with(make), "a weak reference with a callback")


@test
def loud_a_dead_weak_reference_with_a_callback_is_quiet():
    def make():
        target = Target()
        ref = weakref.ref(target, lambda ref: None)
        del target
        gc.collect()
        return ref

    eq(loud_with(make), None)


@test
def loud_a_weak_proxy():
    def make():
        target = Target()
        return target, weakref.proxy(target)

    eq(loud_with(make), "a weak proxy")


@test
def loud_a_thread_still_running():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        eq(loud_with(lambda: None), "a thread is still running")
    finally:
        stop.set()
        thread.join()


@test
def loud_the_collector_debugged_or_watched():
    need_freeze()
    def debugged():
        gc.set_debug(gc.DEBUG_UNCOLLECTABLE)

    def watched():
        gc.callbacks.append(lambda *a: None)

    for start, stop in ((debugged, lambda: gc.set_debug(0)), (watched, lambda: gc.callbacks.pop())):
        try:
            eq(loud_with(start), "the collector is debugged, watched or holds garbage")
        finally:
            stop()


@test
def loud_a_module_that_writes_through_c_stdio():
    module = type(sys)("_testcapi")
    had = sys.modules.get("_testcapi")
    sys.modules["_testcapi"] = module
    try:
        eq(loud_with(lambda: None), "module _testcapi")
    finally:
        if had is None:
            del sys.modules["_testcapi"]
        else:
            sys.modules["_testcapi"] = had


@test
def loud_an_extension_module_from_outside_the_standard_library():
    for path, want in (
        ("/site-packages/fake_ext.so", "extension module crosspickle_fake_ext"),
        ("/usr/lib/python3/lib-dynload/fake_ext.so", None),
        ("/site-packages/fake_ext.py", None),
    ):
        module = type(sys)("crosspickle_fake_ext")
        module.__file__ = path
        sys.modules["crosspickle_fake_ext"] = module
        try:
            eq(loud_with(lambda: None), want)
        finally:
            del sys.modules["crosspickle_fake_ext"]


@test
def loud_an_x_option():
    if getattr(sys, "_xoptions", None) is None:
        raise Skip("no -X options")
    sys._xoptions["tracemalloc"] = True
    try:
        eq(loud_with(lambda: None), "-X tracemalloc")
    finally:
        del sys._xoptions["tracemalloc"]


@test
def loud_the_case_froze_its_objects():
    def make():
        gc.freeze()  # the run made before is frozen with it

    eq(loud_with(make), "the case froze its objects")


@test
def loud_too_many_objects():
    eq(loud_with(lambda: [[] for _ in range(200001)]), "more objects than are worth looking at")


@test
def bookkeeping_callbacks_only_drop_an_entry():
    values = weakref.WeakValueDictionary()
    target = Target()
    values["t"] = target
    assert D["_bookkeeping"](values._remove), values._remove
    assert not D["_bookkeeping"](lambda ref: None)
    assert not D["_bookkeeping"](len)


# --- class relations (_relation, _resolve, _classes) ---


@test
def relation_by_the_class_itself():
    missing = D["_MISSING"]
    relation = D["_relation"]
    eq(relation("ValueError", ValueError, ValueError), "same")
    eq(relation("Exception", Exception, ValueError), "subclass")
    eq(relation("LookupError", LookupError, KeyError), "subclass")
    eq(relation("KeyError", KeyError, ValueError), "unrelated")
    eq(relation("NoSuchError", missing, ValueError), "missing")
    eq(relation("len", len, ValueError), "missing")  # not a class


@test
def relation_by_name_when_the_module_is_gone():
    relation = D["_relation"]
    Base = type("Base", (Exception,), {"__module__": "gone.mod"})
    Boom = type("Boom", (Base,), {"__module__": "gone.mod"})
    missing = D["_MISSING"]
    eq(relation("gone.mod.Boom", missing, Boom), "same")
    eq(relation("mod.Boom", missing, Boom), "same")
    eq(relation("Boom", missing, Boom), "same")
    eq(relation("gone.mod.Base", missing, Boom), "subclass")
    eq(relation("other.Boom", missing, Boom), "missing")
    eq(relation("od.Boom", missing, Boom), "missing")  # whole parts only


@test
def relation_never_asks_subclasscheck():
    Liar = type("Liar", (type,), {"__subclasscheck__": lambda cls, sub: True, "__instancecheck__": lambda cls, i: True})
    Claimed = Liar("Claimed", (Exception,), {})
    eq(D["_relation"]("Claimed", Claimed, ValueError), "unrelated")


@test
def relation_of_an_old_style_class():
    if not PY2:
        raise Skip("old-style classes are Python 2's")
    class Old:
        pass

    eq(D["_relation"]("Old", Old, Old), "same")
    eq(D["_relation"]("ValueError", ValueError, Old), "unrelated")


@test
def resolve_names():
    resolve = D["_resolve"]
    builtins = dict(getattr(__builtins__, "__dict__", __builtins__))
    main = type(sys)("__main__")
    main.Mine = Target
    modules = dict(sys.modules)
    assert resolve("ValueError", modules, builtins, main) is ValueError
    assert resolve("os.path.join", modules, builtins, main) is os.path.join
    assert resolve("__main__.Mine", modules, builtins, main) is Target
    assert resolve("no_such_module_here.X", modules, builtins, main) is D["_MISSING"]
    assert resolve("os.no_such_name", modules, builtins, main) is D["_MISSING"]
    # A bare name is the builtin as it was before the case replaced it.
    assert resolve("KeyError", modules, {"KeyError": LookupError}, main) is LookupError


@test
def classes_lines():
    builtins = dict(getattr(__builtins__, "__dict__", __builtins__))
    got = D["_classes"](["KeyError", "LookupError", "ValueError", "Nope"], KeyError, dict(sys.modules), builtins, None)
    eq(got, "KeyError same\nLookupError subclass\nValueError unrelated\nNope missing")


# --- tracebacks (_traceback) ---

CASE = """\
def inner(n):
    if n:
        return inner(n - 1)
    raise ValueError("deep %d" % n)


def outer(depth):
    return inner(depth)
"""


def python_prints(exc_type, exc, tb):
    # As the traceback module writes it, without the carets of 3.11 and later.
    lines = ["Traceback (most recent call last):\n"]
    for filename, lineno, name, line in traceback.extract_tb(tb):
        lines.append('  File "%s", line %s, in %s\n' % (filename, lineno, name))
        if line:
            lines.append("    %s\n" % line.strip())
    lines.extend(traceback.format_exception_only(exc_type, exc))
    return "".join(lines)


@test
def traceback_as_python_prints_it():
    case = load_case("shallow_case.py", CASE)
    exc_type, exc, tb = caught(case["outer"], 2)
    eq(D["_traceback"](exc_type, exc, tb), python_prints(exc_type, exc, tb))


@test
def traceback_keeps_the_first_and_last_frames():
    case = load_case("deep_case.py", CASE)
    exc_type, exc, tb = caught(case["outer"], 100)
    text = D["_traceback"](exc_type, exc, tb)
    frames = text.count('\n  File "')
    eq(frames, 12 + 24)
    total = len(traceback.extract_tb(tb))
    assert "  [... %d frames omitted ...]\n" % (total - 36) in text, text
    full = python_prints(exc_type, exc, tb).split("\n")
    eq(text.split("\n")[:25], full[:25])  # the heading and 12 frames of two lines
    eq(text.split("\n")[-50:], full[-50:])  # 24 frames, the exception, the end


@test
def traceback_drops_the_drivers_own_frames():
    # The frames of the driver's own file where the traceback starts (its exec(), its
    # compile()) are not the case's.
    own = D["_traceback"].__code__.co_filename
    namespace = {}
    source = "import sys\ndef run(f):\n    try:\n        f()\n    except BaseException:\n        return sys.exc_info()\n"
    exec(compile(source, own, "exec"), namespace)
    case = load_case("own_case.py", CASE)
    exc_type, exc, tb = namespace["run"](lambda: case["outer"](0))
    eq(tb.tb_frame.f_code.co_filename, own)
    text = D["_traceback"](exc_type, exc, tb)
    assert own not in text, text
    eq(text, python_prints(exc_type, exc, tb.tb_next))


@test
def traceback_reads_the_coding_cookie():
    source = u"# -*- coding: latin-1 -*-\ndef f():\n    raise ValueError(u'\\xe9')  # \xe9t\xe9\n"
    case = load_case("latin1_case.py", source.encode("latin-1"))
    exc_type, exc, tb = caught(case["f"])
    text = D["_traceback"](exc_type, exc, tb)
    line = u"raise ValueError(u'\\xe9')  # \xe9t\xe9"
    want = line.encode("latin-1") if PY2 else line
    assert ("    %s\n" % want) in text, repr(text)


@test
def traceback_of_a_syntax_error_is_the_traceback_modules():
    exc_type, exc, tb = caught(compile, "x = (\n", "broken_case.py", "exec")
    text = D["_traceback"](exc_type, exc, tb)
    assert text.endswith("".join(traceback.format_exception_only(exc_type, exc))), text


@test
def traceback_keeps_the_first_and_last_notes():
    if sys.version_info < (3, 11):
        raise Skip("notes are 3.11's")
    exc = ValueError("noted")
    for i in range(50):
        exc.add_note("note %d" % i)
    exc.add_note("x" * 20000)
    lines = D["_exception_only"](ValueError, exc)
    eq(lines[0], "ValueError: noted\n")
    eq(lines[1:13], ["note %d\n" % i for i in range(12)])
    eq(lines[13], "[... 15 notes omitted ...]\n")
    eq(lines[14:37], ["note %d\n" % i for i in range(27, 50)])
    eq(lines[37], "x" * 16384 + "[... %d characters omitted]\n" % (20000 - 16384))


@test
def exception_names():
    type_name = D["_type_name"]
    Mine = type("Mine", (Exception,), {"__module__": "pkg.mod"})
    eq(type_name(ValueError), "ValueError")
    eq(type_name(Mine), "pkg.mod.Mine")
    eq(D["_exception_only"](Mine, Mine("m")), ["pkg.mod.Mine: m\n"])
    eq(D["_exception_only"](ValueError, ValueError()), ["ValueError\n"])
    main_class = type("Local", (Exception,), {"__module__": "__main__"})
    eq(D["_exception_only"](main_class, main_class("x")), ["Local: x\n"])


# --- the result record (_result_open, _report, _text) ---


def record_of(fields, between=None):
    path = os.path.join(SCRATCH, "result")
    result = D["_result_open"](path)
    try:
        if between is not None:
            between(result)
        D["_result_send"](result, fields)
    finally:
        try:
            os.close(result.fd)
        except OSError:
            pass
    return read(path)


def head():
    pid = str(os.getpid()).encode("ascii")
    return b"crosspickle-result 1\npid " + str(len(pid)).encode("ascii") + b"\n" + pid + b"\n"


@test
def record_fields_are_named_and_length_prefixed():
    fields = [("outcome", "error"), ("exception", None), ("message", u"\xe9\n")]
    eq(record_of(fields), head() + b"outcome 5\nerror\nmessage 3\n\xc3\xa9\n\nend 0\n\n")


@test
def record_moves_out_of_the_cases_way():
    path = os.path.join(SCRATCH, "result-fd")
    result = D["_result_open"](path)
    try:
        eq(result.fd, 255)
    finally:
        os.close(result.fd)


@test
def record_written_again_when_the_case_closed_it():
    def close(result):
        os.close(result.fd)

    eq(record_of([("outcome", "pass")], close), head() + b"outcome 4\npass\nend 0\n\n")


@test
def record_says_the_relay_started_and_again_when_the_case_closed_it():
    leg = b"leg 5\nrelay\n"

    def relay(result):
        D["_result_mark"](result, [("leg", "relay")])

    eq(record_of([("outcome", "pass")], relay), head() + leg + b"outcome 4\npass\nend 0\n\n")

    def relay_then_close(result):
        relay(result)
        os.close(result.fd)

    eq(record_of([("outcome", "pass")], relay_then_close), head() + leg + b"outcome 4\npass\nend 0\n\n")


@test
def record_not_written_by_a_forked_copy():
    def forked(result):
        result.pid = -1

    eq(record_of([("outcome", "pass")], forked), head())


def report(raised, names=()):
    builtins = dict(getattr(__builtins__, "__dict__", __builtins__))
    fields = D["_report"](raised, list(names), dict(sys.modules), builtins, None)
    return dict((k, v) for k, v in fields if v is not None)


def raising(exc):
    def run():
        raise exc

    return caught(run)


@test
def report_outcomes():
    eq(report(None), {"outcome": "pass"})
    eq(report(raising(SystemExit(0))), {"outcome": "pass"})
    eq(report(raising(SystemExit(None))), {"outcome": "pass"})
    eq(report(raising(SystemExit(3))), {"outcome": "error", "exception": "SystemExit", "message": "3"})
    eq(report(raising(SystemExit("bye"))), {"outcome": "error", "exception": "SystemExit", "message": "bye"})
    failed = report(raising(AssertionError("no")))
    eq((failed["outcome"], failed["exception"], failed["message"]), ("fail", "AssertionError", "no"))
    assert failed["traceback"].endswith("AssertionError: no\n"), failed["traceback"]
    error = report(raising(KeyError("k")), ["LookupError", "ValueError"])
    eq((error["outcome"], error["exception"], error["message"]), ("error", "KeyError", "'k'"))
    eq(error["classes"], "LookupError subclass\nValueError unrelated")


@test
def text_of_values():
    text = D["_text"]
    eq(text("short"), "short")
    long_text = text("a" * 100 + "b" * 100, 50)
    eq(long_text, "a" * 25 + "\n[... 150 characters omitted ...]\n" + "b" * 25)

    class Unprintable(object):
        def __str__(self):
            raise ValueError

        __repr__ = __str__

    eq(text(Unprintable()), "<unprintable Unprintable object>")

    class Sub(str):
        pass

    class Fancy(object):
        def __str__(self):
            return Sub("fancy")

    got = text(Fancy())
    eq((got, type(got)), ("fancy", str))


# --- named checks (_Checks, 7_checks.py) ---


def checks_of(checks):
    # Each recorded check as a dict of its fields that are set.
    return [dict((k, v) for k, v in done if v is not None) for done in checks._done]


@test
def checks_as_context_managers_record_each_and_go_on():
    checks = D["_Checks"]()
    after = []
    with checks("passes"):
        pass
    with checks("fails"):
        assert 1 == 2, "one is not two"
    with checks("errs"):
        raise KeyError("k")
    after.append("went on")
    got = checks_of(checks)
    eq([c["name"] for c in got], ["passes", "fails", "errs"])
    eq([c["outcome"] for c in got], ["pass", "fail", "error"])
    eq((got[1]["exception"], got[1]["message"]), ("AssertionError", "one is not two"))
    eq((got[2]["exception"], got[2]["message"]), ("KeyError", "'k'"))
    eq(after, ["went on"])
    # The check's traceback starts at its own block, as Python would print it.
    lines = got[1]["traceback"].splitlines()
    eq(lines[0], "Traceback (most recent call last):")
    assert 'assert 1 == 2, "one is not two"' in got[1]["traceback"], got[1]["traceback"]
    eq(lines[-1], "AssertionError: one is not two")


@test
def checks_as_decorators_run_the_function_at_once():
    checks = D["_Checks"]()
    ran = []

    @checks("decorated")
    def body():
        ran.append(1)
        raise ValueError("v")

    eq(ran, [1])
    eq(body.__name__, "body")
    got = checks_of(checks)
    eq((got[0]["name"], got[0]["outcome"], got[0]["exception"]), ("decorated", "error", "ValueError"))
    # The driver's own frame (the decorator's call) is left out.
    tb = got[0]["traceback"]
    assert "_check" not in tb.lower() and "in body" in tb, tb


@test
def checks_skip_with_a_reason_past_except_exception():
    checks = D["_Checks"]()
    with checks("skipped"):
        try:
            checks.skip("no frozendict here")
        except Exception:
            raise AssertionError("check.skip() was caught as an Exception")
    with checks("bare skip"):
        checks.skip()
    eq(checks_of(checks), [
        {"name": "skipped", "outcome": "skip", "message": "no frozendict here"},
        {"name": "bare skip", "outcome": "skip", "message": ""},
    ])


@test
def checks_make_their_classes_when_first_used():
    # check.Skipped and a named check's class are made when a run first uses them, not as the
    # driver loads: most runs name no check.
    fresh = load_driver(sys.argv[1], SCRATCH)
    eq(fresh["_CHECK_CLASSES"], [])
    checks = fresh["_Checks"]()
    eq(fresh["_CHECK_CLASSES"], [])
    skipped = checks.Skipped
    eq((skipped.__name__, issubclass(skipped, BaseException), issubclass(skipped, Exception)),
       ("CheckSkipped", True, False))
    assert checks.Skipped is skipped
    with checks("one"):
        pass
    eq(type(checks("two")).__name__, "_Check")
    eq(len(fresh["_CHECK_CLASSES"]), 2)


@test
def checks_let_system_exit_go_on_after_recording_it():
    checks = D["_Checks"]()

    def leave():
        with checks("exits"):
            sys.exit(3)

    exc_type = caught(leave)[0]
    eq(exc_type, SystemExit)
    eq(checks_of(checks)[0]["outcome"], "error")


@test
def checks_are_written_as_nested_records():
    checks = D["_Checks"]()
    with checks(u"caf\xe9"):
        pass
    fields = checks._fields()
    eq(len(fields), 1)
    eq(fields[0][0], "check")
    name = u"caf\xe9".encode("utf-8")
    eq(fields[0][1], b"name " + str(len(name)).encode("ascii") + b"\n" + name + b"\noutcome 4\npass\n")


@test
def checks_are_written_to_the_record_as_each_ends():
    path = os.path.join(SCRATCH, "result-checks")
    result = D["_result_open"](path)
    try:
        checks = D["_Checks"](result=result)
        with checks("first"):
            pass
        # Written before the run's end: a run killed now keeps it.
        eq(read(path), head() + b"check 28\nname 5\nfirst\noutcome 4\npass\n\n")
        eq(checks._fields(), [])
        os.close(result.fd)  # the case closed the descriptor: the file is written again
        with checks("second"):
            pass
        D["_result_send"](result, [("outcome", "pass")] + checks._fields())
    finally:
        try:
            os.close(result.fd)
        except OSError:
            pass
    eq(read(path), head() + b"check 28\nname 5\nfirst\noutcome 4\npass\n\n"
       + b"check 29\nname 6\nsecond\noutcome 4\npass\n\noutcome 4\npass\nend 0\n\n")


@test
def checks_refuse_a_name_that_is_not_a_string():
    checks = D["_Checks"]()
    got = caught(checks, 3)
    eq(got[0], TypeError)
    assert "takes the check's name" in str(got[1]), got[1]


@test
def checks_say_how_the_raised_class_stands_to_the_rules_names():
    builtins = dict(getattr(__builtins__, "__dict__", __builtins__))
    checks = D["_Checks"](["KeyError", "LookupError"], dict(sys.modules), builtins, None)
    with checks("k"):
        raise KeyError("k")
    eq(checks_of(checks)[0]["classes"], "KeyError same\nLookupError subclass")


if __name__ == "__main__":
    status = main("driver")
    import shutil

    shutil.rmtree(SCRATCH, ignore_errors=True)
    sys.exit(status)
