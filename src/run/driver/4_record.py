# The result record (_result_open: a file opened before the case runs, out of its reach, written
# as `crosspickle-result 1` and named, length-prefixed fields) and what goes in it for what
# the case raised (_report; what it was is worked out by 5_traceback.py).
_MAX_TEXT = 16384
# Messages go to crosspickle whole (up to this), which matches `match` on all of it and cuts
# only what it shows and stores.
_MAX_MESSAGE = 8 * 1024 * 1024
# The result file's descriptor is moved up here, so that the case's own files get the numbers
# a fresh interpreter would give them.
_RESULT_FD = 255


def _report(raised, class_names, modules_before, builtins_before, main):
    # The result's fields for what the case raised (sys.exc_info()'s triple), None if nothing.
    outcome = "pass"
    exc_name = message = tb_text = classes = None
    if raised is not None:
        _need("traceback")
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


def _result_open(path):
    # The result channel: a file opened before the case runs, on a descriptor moved out of the
    # way. A case that changes directory, removes its folder, closes or redirects its standard
    # streams, or writes files of any name cannot touch it; one that closes or reuses the
    # descriptor makes the driver open the file again by its path (_result_emit). Only the
    # process that started the run writes it, never a forked copy of it. Its pid is written as
    # soon as the file is open: a runner that loses a fork server before it heard of this
    # process finds it there. A namespace (path, pid, fd, identity, head), a module object
    # with functions over it: a class of its methods was made in every exec'd run.
    result = type(sys)("_result")
    result.path = path
    result.pid = _getpid()
    fd = _os_open(path, _WRITE_FLAGS, 0o600)
    if fd != _RESULT_FD:
        try:
            if sys.version_info >= (3, 4):
                os.dup2(fd, _RESULT_FD, False)
            else:
                os.dup2(fd, _RESULT_FD)
            _os_close(fd)
            fd = _RESULT_FD
        except OSError:
            pass
    result.fd = fd
    st = _os_fstat(fd)
    result.identity = (st.st_dev, st.st_ino)
    # What is written before the end (the head, then each mark), said again by a file opened
    # anew: chunks, joined only then.
    result.head = [b"crosspickle-result 1\n" + _record_fields([("pid", str(result.pid))])]
    _write_all(fd, result.head[0])
    return result


def _record_fields(fields):
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


def _write_all(fd, data):
    while data:
        data = data[_os_write(fd, data) :]


def _result_send(result, fields):
    # The run's last fields, and the record's end.
    _result_emit(result, _record_fields(fields) + b"end 0\n\n")


def _result_mark(result, fields):
    # Fields written before the end (the leg of a bounce a run is in, each named check as it
    # ends), said again by a file opened anew.
    data = _record_fields(fields)
    _result_emit(result, data)
    result.head.append(data)


def _result_emit(result, data):
    if _getpid() != result.pid:
        return
    fd = result.fd
    try:
        st = _os_fstat(fd)
        ours = (st.st_dev, st.st_ino) == result.identity
    except OSError:
        ours = False
    if not ours:
        fd = _os_open(result.path, _WRITE_FLAGS, 0o600)
        data = b"".join(result.head) + data
    _write_all(fd, data)
