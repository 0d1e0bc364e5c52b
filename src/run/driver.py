# crosspickle's driver: runs one case's code as __main__ and writes what happened to a result
# file. It must run unchanged on Python 2.7 and every Python 3, and import nothing that
# `python -c pass` does not: a fork server runs it too, and its children must start as a fresh
# interpreter would.
#
# boot.py runs it in the __main__ of `python -c BOOT`, with fd 0 reading requests, one a line:
#   preload NAMES     import these modules (comma-separated, the case's `preload`), first,
#                     with what they write kept in files: a server's fd 1 is the protocol's;
#                     one that fails is imported again where the case's code starts
#   import NAMES      the same in a process that runs one request: what they write is the run's
#   once LITERAL      run the request in this very process (exec isolation), then end
#   run ID LITERAL    fork a child that runs it (its own session), reply `started ID PID`
#                     (the child writes its pid in its result file first, then goes on only
#                     if the server is still its parent)
#   reap PID          wait for that child, reply `exited PID STATUS` (wait(2)'s raw status)
# and end of input ends the loop. A child returns out of the loop, and out of this script, and
# boot.py runs its request at its own top level, the bottom of the stack (_begin, the code,
# _end), so that the code runs as `python case.py` runs it and the process ends as a normal
# interpreter does: its threads joined, atexit handlers, finalisation, flushing and exit
# status. A forked child whose finalisation would show nothing (_loud) ends quietly after its
# atexit handlers (_quiet_exit) instead of freeing everything its server made. The server never
# runs case code.
#
# LITERAL is one line, a Python dict literal of inputs (extensible: unknown keys are ignored):
#   case    the file holding the code, run as __main__
#   result  where the result record goes: a file in a folder the case is not told about,
#           opened before the case runs and kept out of its reach (see _Result)
#   params  a dict literal of scalars bound as globals
#   phase   "dump" or "load" for a round trip; data  where `data` goes to or comes from
#   cwd, stdout, stderr   for a forked child: its working directory and output FIFOs
#   code_cache   where this interpreter's compiled form of this very code is kept (see
#                _compile)
#   classes the class names the case's rules name (`exception`, `instance_of`), comma-
#           separated: the result says how the raised exception's class stands to each here
import os
import sys

# What the driver uses once the case has run is bound before it starts: a case may replace any
# builtin (`builtins.isinstance = ...`) or attribute of sys and os (`sys.exc_info`,
# `sys.version_info = (2, 7)`, `del os.open`), and what it did must be reported all the same.
# (os and sys are imported by `python -c pass` too.)
_BUILTINS = __builtins__ if type(__builtins__) is dict else __builtins__.__dict__
for _name in (
    "isinstance issubclass getattr len str repr type bytes bytearray list tuple dict range "
    "enumerate any int BaseException Exception SystemExit AssertionError SyntaxError TypeError "
    "OSError"
).split():
    globals()[_name] = _BUILTINS[_name]
del _name
_unicode = _BUILTINS.get("unicode")
_PY2 = sys.version_info[0] == 2
_exc_info = sys.exc_info
_gettrace, _settrace = sys.gettrace, sys.settrace
_getprofile, _setprofile = sys.getprofile, sys.setprofile
_getrecursionlimit, _setrecursionlimit = sys.getrecursionlimit, sys.setrecursionlimit
_os_open, _os_read, _os_write, _os_close = os.open, os.read, os.write, os.close
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
_READ_FLAGS = os.O_RDONLY
# The driver's own Python frames while it reports: a case's lower recursion limit is raised to
# this meanwhile.
_DRIVER_DEPTH = 100
# type's own descriptors (of a class's names, of its MRO), which a metaclass's __getattribute__
# cannot answer for.
_TYPE_DICT = type.__dict__

_HEAD_FRAMES = 12
_TAIL_FRAMES = 24
_MAX_TEXT = 16384
# Messages go to crosspickle whole (up to this), which matches `match` on all of it and cuts
# only what it shows and stores.
_MAX_MESSAGE = 8 * 1024 * 1024
# The result file's descriptor is moved up here, so that the case's own files get the numbers
# a fresh interpreter would give them.
_RESULT_FD = 255
# A fork server's gc module where it has gc.freeze (_gc_freeze), and in a forked child its
# _Run once _end has reported: the state _quiet_exit decides by.
_GC = None
_ENDED = None
# Py_TPFLAGS_HAVE_GC: a class without it has instances the collector does not know of.
_HAVE_GC = 1 << 14
_HEAP_TYPE = 1 << 9
# Modules whose presence makes an ending loud: C code that writes through C's stdio (which only
# exit() flushes) or does what it likes as it is freed.
_LOUD_MODULES = frozenset(
    "_ctypes _cffi_backend _testcapi _testinternalcapi _testmultiphase _testsinglephase "
    "_testbuffer _testimportmultiple _xxtestfuzz readline _curses _tkinter".split()
)


def _serve():
    read, write, fork, waitpid = os.read, os.write, os.fork, os.waitpid
    me = os.getpid()
    buf = b""
    names, preloaded, cannot_fork = [], [], None
    freeze = None
    # Children started and not reaped yet: each leads a session (and group) of its own.
    children = set()
    while True:
        nl = buf.find(b"\n")
        if nl < 0:
            try:
                chunk = read(0, 65536)
            except OSError as e:
                if e.errno == 4:  # EINTR, on Python 2
                    continue
                raise
            if not chunk:
                # Nothing more to do. The server never ran case code: it has nothing to
                # finalise that anyone could see, and crosspickle waits for it to be gone. A
                # child still there (crosspickle was killed) ends with its group.
                _end_groups(children)
                os._exit(0)
            buf += chunk
            continue
        line, buf = buf[:nl], buf[nl + 1 :]
        verb, _, rest = line.partition(b" ")
        if verb in (b"preload", b"import"):
            names = [n if str is bytes else n.decode("ascii") for n in rest.split(b",")]
            if verb == b"import":
                _import(names)
            else:
                if freeze is None and sys.version_info >= (3, 10):
                    # Before the preload, so that _quiet_exit is still the server's first
                    # atexit callback, run after those the preload registers (logging's). From
                    # 3.10, where atexit's callbacks are the interpreter's: before, the module
                    # keeps them, and the preload's `import atexit` (weakref's) makes another
                    # (on 3.7 and 3.8, a run then crashed as it ended).
                    freeze = _gc_freeze()
                preloaded, cannot_fork = _preload(names)
            continue
        if verb == b"once":
            try:
                os.setsid()
            except OSError:
                pass  # already leads a group: started by hand
            _fresh_stdin()
            return rest, None, names
        if verb == b"run":
            ident, _, rest = rest.partition(b" ")
            if cannot_fork:
                # What the preload did cannot be given to forked children: this server cannot
                # serve, and crosspickle starts an interpreter for each run instead.
                write(2, cannot_fork)
                os._exit(70)
            for _, out in preloaded:
                os.close(out)
            preloaded = []
            if freeze is None:
                freeze = _gc_freeze()
            if freeze:
                freeze.freeze()
            try:
                pid = fork()
            except OSError as e:
                write(1, b"failed " + ident + b" " + _ascii(str(e)) + b"\n")
                continue
            if pid == 0:
                os.setsid()
                _fresh_stdin()
                return rest, me, names
            children.add(pid)
            write(1, b"started " + ident + b" " + _ascii(str(pid)) + b"\n")
        elif verb == b"reap":
            children.discard(int(rest))
            try:
                status = waitpid(int(rest), 0)[1]
            except OSError:
                status = -1
            write(1, b"exited " + rest + b" " + _ascii(str(status)) + b"\n")


def _gc_freeze():
    # The gc module where it has gc.freeze (3.7 and later; False where there is none: 2.7,
    # 3.6, PyPy), without leaving it imported. Frozen before each fork, what the server holds
    # (what starting the interpreter made, and the preload) is out of every collection in the
    # child, its last ones at exit included: they no longer walk and rewrite the server's pages
    # (a fifth of a forked run's CPU on 3.12). The child can tell (docs/case-format.md,
    # `isolation`). A child keeps the module for its ending (_loud), which is registered here.
    global _GC
    gc = _import_unseen("gc")
    if getattr(gc, "freeze", None) is None:
        return False
    _GC = gc
    _register_quiet_exit()
    return gc


def _import_unseen(name):
    # A module the driver needs, imported without leaving it in sys.modules for the case to
    # see when it was not there (None if it cannot be imported).
    had = name in sys.modules
    try:
        module = __import__(name)
    except ImportError:
        return None
    if not had:
        del sys.modules[name]
    return module


def _register_quiet_exit():
    # _quiet_exit as this server's first atexit callback (before its preload), so that in a
    # child it runs last, after every callback the preload and the case registered; not where
    # something registered one already (it would run after it, and the quiet ending skip it).
    atexit = _import_unseen("atexit")
    count = getattr(atexit, "_ncallbacks", None)
    if count is not None and count() == 0:
        atexit.register(_quiet_exit)


def _quiet_exit():
    # A forked run's last atexit callback: once the case's threads are joined and its atexit
    # callbacks have run (as the interpreter ends, by itself), end the process here, its
    # streams flushed, when what is left of finalising it is the server's objects being freed
    # and nothing the case could see (_loud says what would be seen). That is most of a forked
    # run's CPU: every object the server made is freed, and every page it shares with the
    # server written (copy-on-write). Not when the case calls atexit._run_exitfuncs() itself.
    if _ENDED is None:
        return
    try:
        if _loud(_ENDED) is not None:
            return
        for stream in (sys.stdout, sys.stderr):
            if stream is not None and not stream.closed:
                stream.flush()
    except BaseException:
        return  # the interpreter's own ending says it (exit status 120 for stdout)
    os._exit(0)


def _loud(run):
    # Why finalising this child would do something a case could see (None if nothing): what a
    # started interpreter would show at exit and a quiet ending would not. What the server made
    # is frozen (gc.freeze), so what gc still lists is what the run made: an object with a
    # finaliser among it (`__del__`, or a type's tp_finalize: files, sockets, futures) is
    # loud, but for a generator or coroutine that has finished and a plain BytesIO or StringIO;
    # so is a weak reference whose callback is not a weak container's bookkeeping, a thread
    # still running, the collector's debugging or callbacks, and C code that may write through
    # C's stdio or at teardown (_LOUD_MODULES, an extension module from outside the standard
    # library).
    gc = _GC
    if gc.get_debug() or gc.callbacks or gc.garbage:
        return "the collector is debugged, watched or holds garbage"
    count = getattr(sys.modules.get("_thread"), "_count", None)
    if count is None or count():
        return "a thread is still running"
    if sys.flags.verbose or sys.flags.debug:
        return "the interpreter's verbose or debug flag"
    for option in ("showrefcount", "dev", "tracemalloc", "importtime", "showalloccount"):
        if option in sys._xoptions:
            return "-X " + option
    module_dict = type(sys).__dict__["__dict__"].__get__
    for name, module in list(sys.modules.items()):
        if name in _LOUD_MODULES:
            return "module " + name
        if not issubclass(type(module), type(sys)):
            continue  # (isinstance would ask the object's own __class__)
        path = module_dict(module).get("__file__")
        if isinstance(path, str) and not path.endswith((".py", ".pyc")) and "/lib-dynload/" not in path:
            return "extension module " + name
    objects = gc.get_objects()
    if len(objects) > 200000:
        return "more objects than are worth looking at"
    # Nothing here may run the case's code: types are told apart by identity (a metaclass can
    # define __eq__ and __hash__) and read through type's own descriptors.
    name_of = _TYPE_DICT["__name__"].__get__
    flags_of = _TYPE_DICT["__flags__"].__get__
    io = sys.modules.get("_io")
    plain = (id(getattr(io, "BytesIO", None)), id(getattr(io, "StringIO", None)))
    weak = sys.modules.get("_weakref")
    reference = getattr(weak, "ReferenceType", type)
    proxies = (id(getattr(weak, "ProxyType", None)), id(getattr(weak, "CallableProxyType", None)))
    kinds = list(map(type, objects))
    kinds = dict(zip(map(id, kinds), kinds))
    # The run's _Run, made in this child after the server froze its objects, is among them
    # unless the case froze what it had made too (gc.freeze), which hides it all from this
    # look: gc.get_freeze_count() would tell as well, but walks every frozen object (a tenth of
    # a trivial run's CPU on 3.12). A case that unfreezes shows the server's objects to it.
    if id(type(run)) not in kinds:
        return "the case froze its objects"
    watched = {}
    for kind in kinds.values():
        if issubclass(kind, type) or issubclass(kind, reference):
            watched[id(kind)] = kind
        elif id(kind) in proxies:
            return "a weak proxy"
        elif not flags_of(kind) & _HEAP_TYPE and name_of(kind) in ("generator", "coroutine", "async_generator"):
            watched[id(kind)] = kind
        elif id(kind) not in plain and _finalises(kind):
            return "a %s object" % name_of(kind)
    del kinds
    if not watched:
        return None
    for value in objects:
        kind = type(value)
        if id(kind) not in watched:
            continue
        if issubclass(kind, type):
            if not flags_of(value) & _HAVE_GC and _finalises(value):
                return "class %s has __del__ and instances the collector does not list" % name_of(value)
        elif issubclass(kind, reference):
            callback = reference.__callback__.__get__(value)
            if callback is not None and reference.__call__(value) is not None and not _bookkeeping(callback):
                return "a weak reference with a callback"
        elif getattr(value, "gi_frame", getattr(value, "cr_frame", getattr(value, "ag_frame", None))) is not None:
            return "an unfinished " + name_of(kind)
    return None


def _finalises(kind):
    for klass in _TYPE_DICT["__mro__"].__get__(kind):
        if "__del__" in _TYPE_DICT["__dict__"].__get__(klass):
            return True
    return False


def _bookkeeping(callback):
    # The callbacks the standard library gives its weak references, which only drop an entry:
    # weak containers', ABCs' caches, thread-locals' (`clear_locals` from 3.13), logging's list
    # of handlers.
    kind = _TYPE_DICT["__name__"].__get__(type(callback))
    if kind == "function":
        module = callback.__module__
        return type(module) is str and (
            module in ("weakref", "_weakrefset") or (module == "logging" and callback.__name__ == "_removeHandlerRef")
        )
    return kind == "builtin_function_or_method" and callback.__name__ in (
        "_destroy",
        "_remove_dead_weakref",
        "_localdummy_destroyed",
        "clear_locals",
    )


def _end_groups(children):
    # Kill each child's group (its pid: it made a session of its own), or the child alone if
    # it has not made it yet. A child not reaped keeps its pid: no other process has it.
    for pid in children:
        try:
            os.killpg(pid, 9)
        except OSError:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def _import(names):
    # Import the case's `preload` modules; one that fails is imported again as the case's code
    # starts, and fails there.
    for name in names:
        try:
            __import__(name)
        except BaseException:
            pass


def _preload(names):
    # _import in a server: what the modules write goes to files (fd 1 is the protocol's).
    # Returns them, with (fd, file) pairs, and why this server cannot fork runs, if it cannot.
    outputs, saved = [], []
    try:
        for fd in (1, 2):
            name = ".crosspickle-preload-%d-%d" % (os.getpid(), fd)
            out = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            os.unlink(name)
            outputs.append((fd, out))
    except OSError as e:
        # Nothing imported: the runs are started as under exec, where what is written is theirs.
        return outputs, _ascii("cannot keep what importing the case's preload writes: %s\n" % e)
    for fd, out in outputs:
        saved.append((fd, os.dup(fd)))
        os.dup2(out, fd)
    try:
        _import(names)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
    if any(os.fstat(out).st_size for _, out in outputs):
        return outputs, b"importing the case's preload wrote output, which forked runs would not show\n"
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return outputs, b"importing the case's preload started threads, which forked runs would lack\n"
    return outputs, None


def _ascii(text):
    # On Python 2 a str is bytes already, and encoding it would import a codec into the
    # server, and so into every child after it.
    if _PY2:
        return text
    return text.encode("ascii", "replace")


def _fresh_stdin():
    fd = os.open("/dev/null", os.O_RDONLY)
    if fd != 0:
        os.dup2(fd, 0)
        os.close(fd)


def _native(value):
    # Python 2 cases expect native strings where they can have them.
    if _PY2 and isinstance(value, _unicode):
        try:
            return value.encode("ascii")
        except UnicodeEncodeError:
            return value
    return value


def _path(value):
    if _PY2 and isinstance(value, _unicode):
        return value.encode(sys.getfilesystemencoding() or "utf-8")
    return value


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
        self.head = b"crosspickle-result 1\n" + self._fields([("pid", str(self.pid))])
        self._write(fd, self.head)

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
        if self.getpid() != self.pid:
            return
        data = self._fields(fields) + b"end 0\n\n"
        fd = self.fd
        try:
            st = self.fstat(fd)
            ours = (st.st_dev, st.st_ino) == self.identity
        except OSError:
            ours = False
        if not ours:
            fd = self.os_open(self.path, self.flags, 0o600)
            data = self.head + data
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


def _traceback(exc_type, exc, tb):
    # As Python prints it, without its traceback module: importing that (and linecache,
    # tokenize, re...) took a run that raised 10 to 15 ms, and it would stay imported for the
    # case's atexit handlers and finalisation. Keep the first and last frames only: a
    # RecursionError 100,000 frames deep is reported as fast as it is raised. The driver's own
    # frames (its exec(), its compile()) are dropped.
    # So is boot.py's, where the code's exception was caught: the bottom of the stack.
    own = _traceback.__code__.co_filename
    while tb is not None and (tb.tb_frame.f_code.co_filename == own or tb.tb_frame.f_back is None):
        tb = tb.tb_next
    frames = []
    count = 0
    while tb is not None:
        count += 1
        frames.append(tb)
        if len(frames) > _HEAD_FRAMES + _TAIL_FRAMES:
            del frames[_HEAD_FRAMES]
        tb = tb.tb_next
    lines = ["Traceback (most recent call last):\n"]
    sources = {}
    for i, t in enumerate(frames):
        if i == _HEAD_FRAMES and count > _HEAD_FRAMES + _TAIL_FRAMES:
            lines.append("  [... %d frames omitted ...]\n" % (count - _HEAD_FRAMES - _TAIL_FRAMES))
        code = t.tb_frame.f_code
        lines.append('  File "%s", line %s, in %s\n' % (code.co_filename, t.tb_lineno, code.co_name))
        line = _source_line(sources, code.co_filename, t.tb_lineno)
        if line:
            lines.append("    %s\n" % line)
    lines.extend(_exception_only(exc_type, exc))
    return "".join(lines)


def _exception_only(exc_type, exc):
    # The last lines of a traceback, as traceback.format_exception_only writes them; a
    # SyntaxError (its text and caret) is left to that module.
    if isinstance(exc_type, type) and issubclass(exc_type, SyntaxError):
        try:
            import traceback

            return traceback.format_exception_only(exc_type, exc)
        except Exception:
            pass
    name = _type_name(exc_type, ("__main__", "builtins", "exceptions"))
    try:
        text = str(exc)
    except Exception:
        try:
            text = _unicode(exc).encode("ascii", "backslashreplace")  # Python 2
        except Exception:
            text = "<exception str() failed>"
    lines = [name + ": " + text + "\n" if text else name + "\n"]
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, (list, tuple)):
        # Bounded as the frames are (3.14's pickler adds a note per level of nesting): the
        # first and last notes, each cut to _MAX_TEXT characters.
        count = len(notes)
        keep = _HEAD_FRAMES + _TAIL_FRAMES
        for i, note in enumerate(notes):
            if count > keep and _HEAD_FRAMES <= i < count - _TAIL_FRAMES:
                if i == _HEAD_FRAMES:
                    lines.append("[... %d notes omitted ...]\n" % (count - keep))
                continue
            if not isinstance(note, str):
                lines.append("<note str() failed>\n")
                continue
            if len(note) > _MAX_TEXT:
                note = note[:_MAX_TEXT] + "[... %d characters omitted]" % (len(note) - _MAX_TEXT)
            lines.append(note + "\n")
    return lines


def _source_line(sources, filename, lineno):
    # Line `lineno` of a source file, stripped, as linecache finds it: decoded as its coding
    # cookie says (UTF-8 when it says nothing; kept as bytes on Python 2), None when there is no
    # such file (<string>, <frozen ...>) or line.
    if filename not in sources:
        sources[filename] = _source_lines(filename)
    lines, encoding = sources[filename]
    if not isinstance(lineno, int) or not 0 < lineno <= len(lines):
        return None
    line = lines[lineno - 1].strip()
    if _PY2:
        return line
    try:
        return line.decode(encoding, "replace")
    except Exception:
        return line.decode("utf-8", "replace")


def _source_lines(filename):
    # The file's lines (bytes) and the encoding its coding cookie names.
    try:
        data = _read(filename)
    except Exception:
        return [], "utf-8"
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    encoding = "utf-8"
    for line in lines[:2]:
        # PEP 263: `coding[:=]` in a comment line of the first two.
        stripped = line.lstrip(b" \t\f")
        if not stripped.startswith(b"#"):
            if stripped.strip():
                break
            continue
        at = stripped.find(b"coding")
        if at >= 0 and stripped[at + 6 : at + 7] in (b":", b"="):
            name = stripped[at + 7 :].lstrip(b" \t")
            end = 0
            while end < len(name) and (name[end : end + 1].isalnum() or name[end : end + 1] in b"-_."):
                end += 1
            if end:
                encoding = name[:end].decode("ascii")
            break
    return lines, encoding


_MISSING = object()


def _resolve(name, modules_before, builtins_before, main):
    # What `name` denotes in this interpreter, resolved after the case ran but not as the case
    # left things: a bare name is the builtin as it was before the case started; in a dotted
    # name the longest prefix that is a module is taken from sys.modules as it was before the
    # case started, else as it is now, else imported now; `__main__` is the case's own module.
    # A module the case blocked (None in sys.modules) or that does not import does not resolve.
    parts = name.split(".")
    if len(parts) == 1:
        return builtins_before.get(name, _MISSING)
    module_type = type(sys)
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        if module_name == "__main__":
            module = main
        else:
            module = modules_before.get(module_name)
            if not isinstance(module, module_type):
                module = sys.modules.get(module_name, _MISSING)
                if module is _MISSING:
                    try:
                        __import__(module_name)
                    except BaseException:
                        continue
                    module = sys.modules.get(module_name)
        if not isinstance(module, module_type):
            continue
        value = module
        for attribute in parts[cut:]:
            value = getattr(value, attribute, _MISSING)
            if value is _MISSING:
                return _MISSING
        return value
    return _MISSING


def _named(name, cls):
    # The format's rule for names: a bare name is the last dotted part, a dotted name must
    # match whole trailing parts of `module.QualName`.
    want = name.split(".")
    got = _type_name(cls).split(".")
    return len(want) <= len(got) and got[len(got) - len(want) :] == want


def _relation(name, value, exc_type):
    # same / subclass / unrelated / missing, as `except value:` would see exc_type: by the
    # type's own MRO (what the interpreter's exception matching walks), never __subclasscheck__.
    # Then by name: a class of the MRO that `name` names (a class whose module the case
    # removed from sys.modules, or a bare name that is no builtin) is the same or a base.
    class_types = (type, type(_OldStyle)) if _PY2 else (type,)
    if isinstance(exc_type, type):
        mro = list(_TYPE_DICT["__mro__"].__get__(exc_type, type))
    else:
        mro = [exc_type]
    if value is _MISSING or not isinstance(value, class_types):
        relation = "missing"
    elif value is exc_type:
        return "same"
    elif any(c is value for c in mro):
        return "subclass"
    elif not isinstance(exc_type, type):
        try:
            relation = "subclass" if issubclass(exc_type, value) else "unrelated"
        except BaseException:
            relation = "unrelated"
        if relation == "subclass":
            return relation
    else:
        relation = "unrelated"
    if _named(name, exc_type):
        return "same"
    if any(_named(name, c) for c in mro[1:]):
        return "subclass"
    return relation


class _OldStyle:
    pass


def _classes(names, exc_type, modules_before, builtins_before, main):
    lines = []
    for name in names:
        try:
            value = _resolve(name, modules_before, builtins_before, main)
            relation = _relation(name, value, exc_type)
        except BaseException:
            relation = "missing"
        lines.append(name + " " + relation)
    return "\n".join(lines)


class _Collector(object):
    def __init__(self):
        self.text = []

    def write(self, text):
        self.text.append(text)

    def flush(self):
        pass


def _read(path):
    # The whole file, in as few calls as it takes (open() would add a buffered reader and
    # six calls more).
    fd = _os_open(path, _READ_FLAGS)
    try:
        chunks = []
        while 1:
            chunk = _os_read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        _os_close(fd)


def _compile(path, cache):
    """The code object of a case's source. The first compile() of a process builds the
    classes of the ast module (a millisecond or two, and objects that change the state the
    case starts in), so the compiled form is kept per (interpreter, environment, code) at
    `cache`, behind the interpreter's sys.version and the file's name, and every run loads it
    as importlib loads a .pyc: unmarshalled, then its file name set to this run's
    (_imp._fix_co_filename). The run that finds no compiled form has a child of its own
    compile it, so that it too starts the code from what it loaded. Code
    whose compiling says anything (a SyntaxWarning) or fails is compiled by every run, so that
    every run says it. The source is read only to be compiled."""
    fix = getattr(sys.modules.get("_imp"), "_fix_co_filename", None)
    if not cache or fix is None:
        return compile(_read(path), path, "exec", 0, True)
    marshal = _import_unseen("marshal")
    code = _load_code(cache, marshal.loads)
    if code is None:
        pid = os.fork()
        if pid == 0:
            status = 3
            try:
                said = sys.stderr = _Collector()
                code = compile(_read(path), path, "exec", 0, True)
                if not said.text:
                    _write_atomic(cache, _header(cache) + marshal.dumps(code))
                    status = 0
            finally:
                os._exit(status)
        os.waitpid(pid, 0)
        code = _load_code(cache, marshal.loads)
    if code is None:
        return compile(_read(path), path, "exec", 0, True)
    fix(code, path)
    return code


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


def _header(path):
    # What a compiled form is kept behind: it is only good for the interpreter that made it,
    # and under the name it was written to (which names the code it is).
    name = os.path.basename(path)
    if _PY2:
        return sys.version + b" " + name + b"\n"
    return sys.version.encode("utf-8") + b" " + name.encode("utf-8") + b"\n"


def _load_code(path, loads):
    try:
        data = _read(path)
    except OSError:
        return None
    version = _header(path)
    if data[: len(version)] != version:
        return None
    try:
        return loads(data[len(version) :])
    except Exception:
        return None


def _redirect(path, fd):
    new = os.open(path, os.O_WRONLY)
    os.dup2(new, fd)
    os.close(new)


class _Run(object):
    # One request between its two halves: what _begin made ready for the boot program, which
    # runs the code at its own level, and what _end reports.
    __slots__ = ("code", "main", "raised", "phase", "data_path", "result", "class_names",
                 "modules_before", "builtins_before", "frozen")


def _begin(literal, server, preload):
    # Everything before the case's code: the request read, the streams, folder and result file
    # set up, __main__ made, the preload imported and the code compiled. boot.py then runs the
    # code at the bottom of the stack, as `python case.py` would (no driver frame below it: the
    # same stack, recursion depth and messages as a plain script's), and calls _end.
    # Only the names a literal can hold (on 2.7 True and False are builtins, not literals).
    names = {"True": True, "False": False, "None": None, "float": float}
    request = eval(literal, {"__builtins__": names})
    if "stdout" in request:
        _redirect(_path(request["stdout"]), 1)
    if "stderr" in request:
        _redirect(_path(request["stderr"]), 2)
    if "cwd" in request:
        os.chdir(_path(request["cwd"]))
    run = _Run()
    run.result = _Result(_path(request["result"]))
    if server is not None and os.getppid() != server:
        # The server died before it could say it forked this run: the run is given to
        # another, and this process, which nobody watches, must not go on.
        os._exit(70)
    # A forked child of a server that froze its objects (_quiet_exit may end it).
    run.frozen = server is not None and _GC is not None
    case_path = _path(request["case"])
    run.phase = request.get("phase")
    run.data_path = _path(request.get("data"))
    code_cache = _path(request.get("code_cache"))
    run.class_names = [_native(n) for n in request.get("classes", "").split(",") if n]
    params = {}
    for key, value in request.get("params", {}).items():
        params[str(key)] = _native(value)
    main = run.main = type(sys)("__main__")
    main.__file__ = case_path
    main.__builtins__ = __builtins__
    main.__dict__.update(params)
    if run.phase == "load":
        main.data = _read(run.data_path)
    run.modules_before = run.builtins_before = None
    if run.class_names:
        # What the case cannot take back: the modules and builtins there before it started.
        run.modules_before = dict(sys.modules)
        run.builtins_before = dict(getattr(__builtins__, "__dict__", __builtins__))
    # This driver's module must outlive the swap: Python 2 clears a dead module's globals.
    sys.modules["__crosspickle_driver__"] = sys.modules["__main__"]
    sys.modules["__main__"] = main
    sys.argv = [case_path]
    sys.path[0] = os.path.dirname(case_path)
    run.code = run.raised = None
    try:
        for name in preload:
            if name not in sys.modules:
                __import__(name)
        run.code = _compile(case_path, code_cache)
    except BaseException as e:
        run.raised = (None, e, sys.exc_traceback if _PY2 else e.__traceback__)
    except:  # noqa: E722 (2.7 raises instances of old-style classes too)
        run.raised = (sys.exc_type, sys.exc_value, sys.exc_traceback)
    return run


def _end(run, caught, aside):
    # Everything after the case's code, called by boot.py with what the code raised (None if
    # nothing) and the case's trace and profile functions and recursion limit, which boot.py
    # set aside (a trace function could fail in the driver's frames, a limit too low stop
    # them) and which are given back here for its atexit handlers and finalisation. A profile
    # function that failed in boot.py's frame (it sees the calls made there) was dropped by
    # Python itself, and those calls made again.
    global _ENDED
    trace, profile, limit = aside or (None, None, None)
    raised = None if caught is None else (caught[0] or type(caught[1]), caught[1], caught[2])
    del caught
    main = run.main
    if raised is None and run.phase == "dump":
        try:
            _dump(main, run.data_path)
        except BaseException:
            raised = _exc_info()
    fields = _report(raised, run.class_names, run.modules_before, run.builtins_before, main)
    del raised
    run.result.send(fields)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    if limit is not None:
        try:
            _setrecursionlimit(limit)
        except Exception:
            pass
    if run.frozen and trace is None and profile is None:
        # The interpreter's ending may be cut short (_quiet_exit): a trace or profile function
        # would see _quiet_exit's frame.
        _ENDED = run
    _settrace(trace)
    try:
        # Last: from here on the profile function sees this frame (and fails in it, at worst).
        _setprofile(profile)
    except BaseException:
        pass


def _dump(main, data_path):
    # The dump phase's `data`, written where the load phase reads it.
    data = main.__dict__.get("data")
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("dump must leave bytes in the global `data`, not %s" % _class_name(type(data), "__name__"))
    data = bytes(data)
    fd = _os_open(data_path, _WRITE_FLAGS, 0o600)
    try:
        while data:
            data = data[_os_write(fd, data) :]
    finally:
        _os_close(fd)


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
            outcome = "fail" if issubclass(exc_type, AssertionError) else "error"
            exc_name = _type_name(exc_type)
            message = _text(exc, _MAX_MESSAGE)
            try:
                tb_text = _traceback(exc_type, exc, tb)
            except BaseException:
                tb_text = None
        if class_names and exc_type is not None:
            classes = _classes(class_names, exc_type, modules_before, builtins_before, main)
    return [
        ("outcome", outcome),
        ("exception", exc_name),
        ("message", message),
        ("traceback", tb_text),
        ("classes", classes),
    ]


# The request this process runs (None in a server, which never returns from _serve): boot.py
# runs it, with _begin and _end, once this module's code has returned.
_request = _serve()
