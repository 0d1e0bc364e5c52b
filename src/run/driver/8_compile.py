# The compiled form of a case's code made and kept (_compile, 3_run.py): loaded (_need) by the
# run that finds none, the first of each code on each interpreter and environment.


def _compile_child(path, cache, marshal):
    # A child of this process compiles the code and writes its compiled form, then this process
    # loads it (None if the child could not: the code said something as it compiled, or failed).
    pid = os.fork()
    if pid == 0:
        status = 3
        try:
            # What compiling writes to sys.stderr (a SyntaxWarning). A class made here, in
            # the child, not by every run (a class is 70 K instructions on 3.12).
            class _Collector(object):
                def __init__(self):
                    self.text = []

                def write(self, text):
                    self.text.append(text)

                def flush(self):
                    pass

            said = sys.stderr = _Collector()
            code = compile(_read(path), path, "exec", 0, True)
            if not said.text:
                _write_atomic(cache, _header(cache) + marshal.dumps(code))
                status = 0
        finally:
            os._exit(status)
    os.waitpid(pid, 0)
    return _load_code(cache, marshal.loads)


def _write_atomic(path, data):
    # Whole or not at all, and nothing left behind when it cannot be written (a full disk).
    tmp = "%s.%d" % (path, os.getpid())
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            while data:
                data = data[os.write(fd, data) :]
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
