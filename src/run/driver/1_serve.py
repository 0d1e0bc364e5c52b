# The driver's loop (see 0_protocol.py) as a process that runs one request starts it: the
# `import` and `once` requests of fd 0; any other (`preload`, `run`) makes this process a fork
# server, whose loop (8_server.py) is loaded then and takes the rest of the input.


def _serve():
    buf = b""
    names = []
    while True:
        nl = buf.find(b"\n")
        if nl < 0:
            try:
                chunk = os.read(0, 65536)
            except OSError as e:
                if e.errno == 4:  # EINTR, on Python 2
                    continue
                raise
            if not chunk:
                os._exit(0)  # nothing to do
            buf += chunk
            continue
        verb, _, rest = buf[:nl].partition(b" ")
        if verb == b"import":
            buf = buf[nl + 1 :]
            names = _listed(rest)
            _import(names)
            continue
        if verb == b"once":
            _alone()
            return rest, None, names
        # A server: its children start with every part of the driver loaded (_need).
        _need(*list(_LAZY))
        return _server(buf, names)


def _listed(listed):
    # The modules of a `preload` or `import` request (comma-separated).
    return [n if str is bytes else n.decode("ascii") for n in listed.split(b",")]


def _import(names):
    # Import the case's `preload` modules; one that fails is imported again as the case's code
    # starts, and fails there.
    for name in names:
        try:
            __import__(name)
        except BaseException:
            pass


def _alone():
    # The process that runs a `once` request: a session of its own, an empty stdin.
    try:
        os.setsid()
    except OSError:
        pass  # already leads a group: started by hand
    _fresh_stdin()


def _fresh_stdin():
    fd = os.open("/dev/null", os.O_RDONLY)
    if fd != 0:
        os.dup2(fd, 0)
        os.close(fd)
