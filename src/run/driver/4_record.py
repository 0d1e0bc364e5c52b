# The result record (_Result: a file opened before the case runs, out of its reach, written
# as `crosspickle-result 1` and named, length-prefixed fields) and what goes in it for what
# the case raised (_report), with the text of values and names of classes it holds.
_MAX_TEXT = 16384
# Messages go to crosspickle whole (up to this), which matches `match` on all of it and cuts
# only what it shows and stores.
_MAX_MESSAGE = 8 * 1024 * 1024
# The result file's descriptor is moved up here, so that the case's own files get the numbers
# a fresh interpreter would give them.
_RESULT_FD = 255


def _raised(exc_type, exc, tb):
    # What an exception that ended the code (or a named check) was: its outcome (fail for an
    # AssertionError, else error), its class's name, its message and its traceback's text.
    outcome = "fail" if issubclass(exc_type, AssertionError) else "error"
    exc_name = _type_name(exc_type)
    message = _text(exc, _MAX_MESSAGE)
    try:
        _need("traceback")
        tb_text = _traceback(exc_type, exc, tb)
    except BaseException:
        tb_text = None
    return outcome, exc_name, message, tb_text


def _report(raised, class_names, modules_before, builtins_before, main):
    # The result's fields for what the case raised (sys.exc_info()'s triple), None if nothing.
    outcome = "pass"
    exc_name = message = tb_text = classes = None
    if raised is not None:
        exc_type, exc, tb = raised
        if issubclass(exc_type, SystemExit):
            try:
                code = exc.code
                failed = code is not None and code != 0
            except Exception:
                code, failed = None, True
            if failed:
                outcome = "error"
                exc_name = "SystemExit"
                message = _text(code, _MAX_MESSAGE)
            else:
                exc_type = None
        else:
            outcome, exc_name, message, tb_text = _raised(exc_type, exc, tb)
        if class_names and exc_type is not None:
            _need("relation")
            classes = _classes(class_names, exc_type, modules_before, builtins_before, main)
    return [
        ("outcome", outcome),
        ("exception", exc_name),
        ("message", message),
        ("traceback", tb_text),
        ("classes", classes),
    ]


class _Result(object):
    """The result channel: a file opened before the case runs, on a descriptor moved out of the
    way. A case that changes directory, removes its folder, closes or redirects its standard
    streams, or writes files of any name cannot touch it; one that closes or reuses the
    descriptor makes the driver open the file again by its path. Only the process that started
    the run writes it, never a forked copy of it. Its pid is written as soon as the file is
    open: a runner that loses a fork server before it heard of this process finds it there."""

    def __init__(self, path):
        self.os_open, self.write, self.fstat = _os_open, _os_write, os.fstat
        self.getpid = os.getpid
        self.flags = _WRITE_FLAGS
        self.path = path
        self.pid = os.getpid()
        fd = self.os_open(path, self.flags, 0o600)
        if fd != _RESULT_FD:
            try:
                if sys.version_info >= (3, 4):
                    os.dup2(fd, _RESULT_FD, False)
                else:
                    os.dup2(fd, _RESULT_FD)
                os.close(fd)
                fd = _RESULT_FD
            except OSError:
                pass
        self.fd = fd
        st = self.fstat(fd)
        self.identity = (st.st_dev, st.st_ino)
        # What is written before the end (the head, then each mark), said again by a file
        # opened anew: chunks, joined only then.
        self.head = [b"crosspickle-result 1\n" + self._fields([("pid", str(self.pid))])]
        self._write(fd, self.head[0])

    @staticmethod
    def _fields(fields):
        # A named, length-prefixed record: `name length\n<bytes>\n` per field.
        out = []
        for name, value in fields:
            if value is None:
                continue
            data = value if isinstance(value, bytes) else value.encode("utf-8", "replace")
            out.append(_ascii("%s %d\n" % (name, len(data))))
            out.append(data)
            out.append(b"\n")
        return b"".join(out)

    def _write(self, fd, data):
        while data:
            data = data[self.write(fd, data) :]

    def send(self, fields):
        self._emit(self._fields(fields) + b"end 0\n\n")

    def mark(self, fields):
        # Fields written before the end (the leg of a bounce a run is in, each named check as
        # it ends), said again by a file opened anew.
        data = self._fields(fields)
        self._emit(data)
        self.head.append(data)

    def _emit(self, data):
        if self.getpid() != self.pid:
            return
        fd = self.fd
        try:
            st = self.fstat(fd)
            ours = (st.st_dev, st.st_ino) == self.identity
        except OSError:
            ours = False
        if not ours:
            fd = self.os_open(self.path, self.flags, 0o600)
            data = b"".join(self.head) + data
        self._write(fd, data)


def _text(value, limit=_MAX_TEXT):
    # str(value), else its repr, as a plain str (not a subclass of the case's) of at most
    # `limit` characters.
    text = None
    for convert in (str, repr):
        try:
            text = convert(value)
            text = "".join([text]) if isinstance(text, str) else None
        except Exception:
            text = None
        if text is not None:
            break
    if text is None:
        text = "<unprintable %s object>" % _class_name(type(value), "__name__")
    if len(text) > limit:
        text = text[: limit // 2] + "\n[... %d characters omitted ...]\n" % (len(text) - limit) + text[-limit // 2 :]
    return text


def _class_name(cls, attribute):
    # A class's __module__, __qualname__ or __name__ as a str, as the class holds it (type's own
    # descriptor, whatever its metaclass's __getattribute__ answers), else None.
    try:
        value = _TYPE_DICT[attribute].__get__(cls, type)
    except Exception:
        try:  # an old-style class (2.7), or a name this Python's type lacks (__qualname__)
            value = getattr(cls, attribute, None)
        except Exception:
            value = None
    return value if isinstance(value, str) else None


def _type_name(exc_type, plain=("builtins", "exceptions", "__builtin__")):
    # `module.QualName`, without the module when it is one of `plain`.
    module = _class_name(exc_type, "__module__")
    name = _class_name(exc_type, "__qualname__") or _class_name(exc_type, "__name__") or "?"
    if module is None or module in plain:
        return name
    return module + "." + name
