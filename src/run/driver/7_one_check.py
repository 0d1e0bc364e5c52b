# What checking takes (see 7_checks.py), loaded when a run first uses `check`: the classes of
# check.Skipped and of what check("name") returns, made once from the builtins bound at the
# start, and the record of each ended check.
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


def _check_new(checks, name):
    # check(name): the check named `name`.
    if not isinstance(name, str) and not (_unicode is not None and isinstance(name, _unicode)):
        _need("traceback")
        raise TypeError("check() takes the check's name, a str, not %s" % _class_name(type(name), "__name__"))
    return _check_classes()[1](checks, _native(name))


def _check_record(checks, name, exc_type, exc, tb):
    # One ended check of `checks`: its fields, in the order it ended.
    outcome = "pass"
    exc_name = message = tb_text = classes = None
    if exc_type is not None:
        _need("traceback")
        if issubclass(exc_type, _check_classes()[0]):
            outcome = "skip"
            message = _text(exc.args[0] if exc.args else "", _MAX_TEXT)
        else:
            outcome, exc_name, message, tb_text = _raised(exc_type, exc, tb)
            names, modules_before, builtins_before, main = checks._context
            if names:
                _need("relation")
                classes = _classes(names, exc_type, modules_before, builtins_before, main)
    checks._done.append([
        ("name", name),
        ("outcome", outcome),
        ("exception", exc_name),
        ("message", message),
        ("traceback", tb_text),
        ("classes", classes),
    ])
    if checks._result is not None and checks._written == len(checks._done) - 1:
        try:
            _result_mark(checks._result, [("check", _record_fields(checks._done[-1]))])
            checks._written += 1
        except BaseException:
            # Not written now (a descriptor the case took, a full disk): this one and those
            # after it go with the run's end, in order.
            checks._result = None


# The methods of _Check (_check_classes): one named check, as a context manager or a decorator.


def _check_init(self, checks, name):
    self.checks = checks
    self.name = name


def _check_enter(self):
    return self


def _check_exit(self, exc_type, exc, tb):
    if exc_type is not None and not isinstance(exc_type, type):
        exc_type = type(exc)  # an old-style class's instance (2.7)
    _check_record(self.checks, self.name, exc_type, exc, tb)
    # The check took what it recorded, but what is not an Exception (nor a skip) goes on.
    return exc_type is not None and issubclass(exc_type, (Exception, _check_classes()[0]))


def _check_call(self, function):
    with self:
        function()
    return function
