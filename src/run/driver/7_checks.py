# Named checks inside one run: the `check` the case's code finds among its globals (_Checks),
# used as a context manager (`with check("name"):`) or a decorator (`@check("name")` runs the
# function at once, as the check), with `check.skip(reason)` to skip the check it is called
# in. Each check's outcome (pass, fail, error, skip), exception, message, traceback and class
# relations are kept in the order the checks ended, and written to the result record as one
# `check` field each (a record of the same form inside) as each ends, before the run's end: a
# run that then crashes, is killed or times out keeps the checks that ended. A check that
# raised an Exception does not stop the code, which goes on after it. What is not an Exception (SystemExit,
# KeyboardInterrupt) is recorded, then goes on up, as it would without the check.


class CheckSkipped(BaseException):
    # What check.skip() raises: a BaseException, so that the case's `except Exception:` does
    # not take it for a failure of its own.
    pass


class _Checks(object):
    """check(name): a named check of this run, as a context manager or a decorator;
    check.skip(reason): skip the check this is called in."""

    Skipped = CheckSkipped

    def __init__(self, class_names=(), modules_before=None, builtins_before=None, main=None, result=None):
        self._done = []
        self._context = (class_names, modules_before, builtins_before, main)
        # The result record each check is written to as it ends (_Result.mark), and how many
        # of _done are there; the others go with the run's end (_fields).
        self._result = result
        self._written = 0

    def __call__(self, name):
        if not isinstance(name, str) and not (_unicode is not None and isinstance(name, _unicode)):
            raise TypeError("check() takes the check's name, a str, not %s" % _class_name(type(name), "__name__"))
        return _Check(self, _native(name))

    def skip(self, reason=""):
        raise CheckSkipped(reason)

    def _record(self, name, exc_type, exc, tb):
        # One ended check: its fields, in the order it ended.
        outcome = "pass"
        exc_name = message = tb_text = classes = None
        if exc_type is not None:
            if issubclass(exc_type, CheckSkipped):
                outcome = "skip"
                message = _text(exc.args[0] if exc.args else "", _MAX_TEXT)
            else:
                outcome, exc_name, message, tb_text = _raised(exc_type, exc, tb)
                names, modules_before, builtins_before, main = self._context
                if names:
                    _need("relation")
                    classes = _classes(names, exc_type, modules_before, builtins_before, main)
        self._done.append([
            ("name", name),
            ("outcome", outcome),
            ("exception", exc_name),
            ("message", message),
            ("traceback", tb_text),
            ("classes", classes),
        ])
        if self._result is not None and self._written == len(self._done) - 1:
            try:
                self._result.mark([("check", _Result._fields(self._done[-1]))])
                self._written += 1
            except BaseException:
                # Not written now (a descriptor the case took, a full disk): this one and
                # those after it go with the run's end, in order.
                self._result = None

    def _fields(self):
        # The result record's `check` fields not written yet, one per check in the order they
        # ended.
        return [("check", _Result._fields(done)) for done in self._done[self._written :]]


class _Check(object):
    __slots__ = ("checks", "name")

    def __init__(self, checks, name):
        self.checks = checks
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and not isinstance(exc_type, type):
            exc_type = type(exc)  # an old-style class's instance (2.7)
        self.checks._record(self.name, exc_type, exc, tb)
        # The check took what it recorded, but what is not an Exception (nor a skip) goes on.
        return exc_type is not None and issubclass(exc_type, (Exception, CheckSkipped))

    def __call__(self, function):
        with self:
            function()
        return function
