# Named checks inside one run: the `check` the case's code finds among its globals (_Checks),
# used as a context manager (`with check("name"):`) or a decorator (`@check("name")` runs the
# function at once, as the check), with `check.skip(reason)` to skip the check it is called
# in. Each check's outcome (pass, fail, error, skip), exception, message, traceback and class
# relations are kept in the order the checks ended, and written to the result record as one
# `check` field each (a record of the same form inside) as each ends, before the run's end: a
# run that then crashes, is killed or times out keeps the checks that ended. A check that
# raised an Exception does not stop the code, which goes on after it. What is not an Exception (SystemExit,
# KeyboardInterrupt) is recorded, then goes on up, as it would without the check.

# Two of its classes, check.Skipped and what check("name") returns, are made when a run first
# uses them (_check_classes), from the builtins bound at the start: a class made and freed is
# about 0.1 M instructions on 3.12, and most runs name no check.
_CHECK_CLASSES = []


def _check_classes():
    # (CheckSkipped, _Check), made once. CheckSkipped is what check.skip() raises: a
    # BaseException, so that the case's `except Exception:` does not take it for a failure of
    # its own.
    if not _CHECK_CLASSES:
        module = _DRIVER["__name__"]
        skipped = type("CheckSkipped", (BaseException,), {"__module__": module})
        check = type("_Check", (object,), {
            "__module__": module,
            "__slots__": ("checks", "name"),
            "__init__": _check_init,
            "__enter__": _check_enter,
            "__exit__": _check_exit,
            "__call__": _check_call,
        })
        _CHECK_CLASSES.extend((skipped, check))
    return _CHECK_CLASSES


class _Checks(object):
    """check(name): a named check of this run, as a context manager or a decorator;
    check.skip(reason): skip the check this is called in."""

    @property
    def Skipped(self):
        return _check_classes()[0]

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
        return _check_classes()[1](self, _native(name))

    def skip(self, reason=""):
        raise _check_classes()[0](reason)

    def _record(self, name, exc_type, exc, tb):
        # One ended check: its fields, in the order it ended.
        outcome = "pass"
        exc_name = message = tb_text = classes = None
        if exc_type is not None:
            if issubclass(exc_type, _check_classes()[0]):
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


# The methods of _Check (_check_classes): one named check, as a context manager or a decorator.


def _check_init(self, checks, name):
    self.checks = checks
    self.name = name


def _check_enter(self):
    return self


def _check_exit(self, exc_type, exc, tb):
    if exc_type is not None and not isinstance(exc_type, type):
        exc_type = type(exc)  # an old-style class's instance (2.7)
    self.checks._record(self.name, exc_type, exc, tb)
    # The check took what it recorded, but what is not an Exception (nor a skip) goes on.
    return exc_type is not None and issubclass(exc_type, (Exception, _check_classes()[0]))


def _check_call(self, function):
    with self:
        function()
    return function
