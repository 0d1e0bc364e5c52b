# Named checks inside one run: the `check` the case's code finds among its globals (_Checks),
# used as a context manager (`with check("name"):`) or a decorator (`@check("name")` runs the
# function at once, as the check), with `check.skip(reason)` to skip the check it is called
# in. Each check's outcome (pass, fail, error, skip), exception, message, traceback and class
# relations are kept in the order the checks ended, and written to the result record as one
# `check` field each (a record of the same form inside) as each ends, before the run's end: a
# run that then crashes, is killed or times out keeps the checks that ended. A check that
# raised an Exception does not stop the code, which goes on after it. What is not an Exception (SystemExit,
# KeyboardInterrupt) is recorded, then goes on up, as it would without the check.

# What a run that names no check needs is here: `check` itself (_Checks), whose instance every
# run binds. What checking takes (its classes, check.Skipped and what check("name") returns,
# and the record of an ended check) is 7_one_check.py, loaded when a run first uses `check`
# (_need("check")): a class made and freed is about 0.1 M instructions on 3.12, and most runs
# name no check.


class _Checks(object):
    # check(name): a named check of this run, as a context manager or a decorator;
    # check.skip(reason): skip the check this is called in.

    @property
    def Skipped(self):
        _need("check")
        return _check_classes()[0]

    def __init__(self, class_names=(), modules_before=None, builtins_before=None, main=None, result=None):
        self._done = []
        self._context = (class_names, modules_before, builtins_before, main)
        # The result record each check is written to as it ends (_result_mark), and how many
        # of _done are there; the others go with the run's end (_fields).
        self._result = result
        self._written = 0

    def __call__(self, name):
        _need("check")
        return _check_new(self, name)

    def skip(self, reason=""):
        _need("check")
        raise _check_classes()[0](reason)

    def _fields(self):
        # The result record's `check` fields not written yet, one per check in the order they
        # ended.
        return [("check", _record_fields(done)) for done in self._done[self._written :]]
