# The tiny test runner of tests/python/*_test.py, for every interpreter crosspickle runs on (2.7
# and PyPy included) with nothing but the standard library: tests register with @test, skip
# by raising Skip with why, and main(TITLE) prints a line per test (ok, FAIL with its
# traceback, skip with why) and a summary, "TITLE tests on IMPLEMENTATION VERSION: N passed,
# N failed, N skipped", and returns the exit status (1 when a test failed).
import sys
import traceback

TESTS = []


class Skip(Exception):
    pass


def test(function):
    TESTS.append(function)
    return function


def main(title):
    failed = skipped = 0
    for function in TESTS:
        name = function.__name__
        try:
            function()
        except Skip as e:
            skipped += 1
            sys.stdout.write("skip %s: %s\n" % (name, e))
        except BaseException:
            failed += 1
            sys.stdout.write("FAIL %s\n%s" % (name, traceback.format_exc()))
        else:
            sys.stdout.write("ok   %s\n" % name)
    passed = len(TESTS) - failed - skipped
    version = sys.version.split()[0]
    implementation = getattr(sys, "implementation", None)
    kind = implementation.name if implementation is not None else "cpython"
    sys.stdout.write("%s tests on %s %s: %d passed, %d failed, %d skipped\n" % (
        title, kind, version, passed, failed, skipped))
    sys.stdout.flush()
    return 1 if failed else 0
