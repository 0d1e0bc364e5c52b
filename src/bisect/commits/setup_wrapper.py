# crosspickle's wrapper around CPython's setup.py, for builds of only the extension modules a
# case needs (docs/bisect.md). make's `sharedmods` recipe runs it in place of setup.py:
#     ./python -E crosspickle-setup.py SRCDIR/setup.py [setup.py's arguments]
# It runs setup.py unchanged, except that every extension module not named in
# CROSSPICKLE_MODULES (comma-separated) counts as one of DISABLED_MODULE_LIST, the list
# setup.py itself consults to leave modules out. It writes to CROSSPICKLE_MODULES_REPORT the
# names of every module setup.py would have built (`known ...`) once it knows them.
import os
import sys


def main():
    setup_py = sys.argv[1]
    wanted = set(n for n in os.environ.get("CROSSPICKLE_MODULES", "").split(",") if n)
    report = os.environ["CROSSPICKLE_MODULES_REPORT"]
    known = set()

    class LeaveOut(object):
        def __contains__(self, name):
            known.add(name)
            return name not in wanted

    namespace = {
        "__name__": "crosspickle_setup",
        "__file__": setup_py,
        "__builtins__": __builtins__,
    }
    with open(setup_py, "rb") as f:
        code = compile(f.read(), setup_py, "exec")
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(setup_py))
    exec(code, namespace)
    if "DISABLED_MODULE_LIST" not in namespace or "main" not in namespace:
        sys.stderr.write("crosspickle: this setup.py has no DISABLED_MODULE_LIST or main()\n")
        sys.exit(3)
    namespace["DISABLED_MODULE_LIST"] = LeaveOut()
    try:
        namespace["main"]()
    finally:
        if known:
            with open(report, "w") as f:
                f.write("known " + " ".join(sorted(known)) + "\n")


main()
