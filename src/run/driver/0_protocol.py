# crosspickle's driver: runs one case's code as __main__ and writes what happened to a result
# file. It must run unchanged on Python 2.7 and every Python 3, and import nothing that
# `python -c pass` does not: a fork server runs it too, and its children must start as a fresh
# interpreter would.
#
# boot.py runs it in the __main__ of `python -c BOOT FALLBACK` (or `python BOOT.pyc FALLBACK`),
# with fd 0 reading requests, one a line:
#   preload NAMES     import these modules (comma-separated, the case's `preload`), first,
#                     with what they write kept in files: a server's fd 1 is the protocol's;
#                     one that fails is imported again where the case's code starts
#   import NAMES      the same in a process that runs one request: what they write is the run's
#   once REQUEST      run the request in this very process (exec isolation), then end
#   run ID REQUEST    fork a child that runs it (its own session), reply `started ID PID`
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
# REQUEST is a dict of inputs (extensible: unknown keys are ignored), marshalled (the codes of
# marshal version 2: text as unicode, params' scalars as themselves) and written in hex, one
# line (run/marshal.rs): loading it parses nothing (eval of a dict literal, which it was, ran
# the parser in every exec'd run: 1.4 M instructions on 3.12). Its keys:
#   case    the file holding the code, run as __main__
#   result  where the result record goes: a file in a folder the case is not told about,
#           opened before the case runs and kept out of its reach (see _result_open)
#   params  a dict of scalars bound as globals
#   phase   "dump" or "load" for a round trip, "reload" for a bounce's producer; data  where
#           `data` goes to or comes from
#   relay, relay_data, relay_cache   a load's bounce: the relay's code, run after the load's in
#           its __main__ (the record says `leg relay` as it starts), where its `data` goes,
#           and its compiled form (as code_cache)
#   cwd, stdout, stderr   for a forked child: its working directory and output FIFOs
#   code_cache   where this interpreter's compiled form of this very code is kept (see
#                _compile)
#   support the folder of the case's `support` files, appended to sys.path
#   classes the class names the case's rules name (`exception`, `instance_of`), comma-
#           separated: the result says how the raised exception's class stands to each here
#
# The driver is this file and the others of its folder, joined in the order of their names
# into one module (run/driver.rs, DRIVER_SOURCE): what one defines at its top level, every
# other uses. Each opens with what it owns:
#   0_protocol.py   this protocol, and what every part uses: the builtins and functions of sys
#                   and os bound before a case can replace them, and small conversions
#   1_serve.py      the loop that reads requests as a process that runs one starts it
#   2_ending.py     the quiet ending of a forked run (_quiet_exit) and its rules (_loud)
#   3_run.py        one request's two halves around the case's code (_begin, _end) and the
#                   compiled forms of cases
#   4_record.py     the result record (_result_open) and its fields (_report)
#   5_traceback.py  what was raised (outcome, class name, message) and its traceback,
#                   formatted as Python prints it
#   6_relation.py   how the raised exception's class stands to a class the rules name
#   7_checks.py     the named checks of a run (`check`), each written as a `check` field
#   7_one_check.py  what checking takes: the checks' classes and each ended check's record
#   8_compile.py    the compiled form of a case's code made and kept (the compile child)
#   8_server.py     the fork server's loop, its preload and its children's groups
#   9_start.py      the start: the loop, then the request left for boot.py
# Of these, 2_ending.py, 5_traceback.py, 6_relation.py, 7_one_check.py, 8_compile.py and
# 8_server.py are loaded only when they are needed (_need): a fork server loads them all before
# its first child, an exec'd run the ones it uses (what was raised and its traceback when its
# code raised, the relations when it also names classes, the checks' classes and records when
# it uses `check`, the compile child when its code has no compiled form yet), so that a run
# that passes unmarshals and runs none of them (the ending, traceback and relations: 0.4 M
# instructions of a trivial exec'd run on 3.12; the compile child and the server, with the
# classes of named checks made when first used, 0.28 M more; what was raised, the rest of
# the checks and the result record as functions, not a class, 0.24 M more). The compiled
# form boot.py loads is a pair: the code of the other parts (these parts' lines left blank, so
# that every line keeps its number), and a dict of these parts' codes, each marshalled
# (boot_fallback.py writes it). Run as a script, the driver has them all.
# Loaded after the case's code may have replaced builtins, these parts make nothing as they
# load: their top level defines functions and constants only.
# tests/python/driver_test.py tests the pure parts on every interpreter (0 to 6, without the
# start).
import os
import sys

# What the driver uses once the case has run is bound before it starts: a case may replace any
# builtin (`builtins.isinstance = ...`) or attribute of sys and os (`sys.exc_info`,
# `sys.version_info = (2, 7)`, `del os.open`), and what it did must be reported all the same.
# (os and sys are imported by `python -c pass` too.)
_BUILTINS = __builtins__ if type(__builtins__) is dict else __builtins__.__dict__
for _name in (
    "isinstance issubclass getattr len str repr type bytes bytearray list tuple dict range "
    "enumerate any int object BaseException Exception SystemExit AssertionError SyntaxError "
    "TypeError OSError"
).split():
    globals()[_name] = _BUILTINS[_name]
del _name
_unicode = _BUILTINS.get("unicode")
_PY2 = sys.version_info[0] == 2
if "exec" in _BUILTINS:
    globals()["exec"] = _BUILTINS["exec"]  # a function from 3.0 (a statement in 2.7)
_exc_info = sys.exc_info
_gettrace, _settrace = sys.gettrace, sys.settrace
_getprofile, _setprofile = sys.getprofile, sys.setprofile
_getrecursionlimit, _setrecursionlimit = sys.getrecursionlimit, sys.setrecursionlimit
_os_open, _os_read, _os_write, _os_close, _os_fstat = os.open, os.read, os.write, os.close, os.fstat
_getpid = os.getpid
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
_READ_FLAGS = os.O_RDONLY
# The driver's own Python frames while it reports: a case's lower recursion limit is raised to
# this meanwhile.
_DRIVER_DEPTH = 100
# type's own descriptors (of a class's names, of its MRO), which a metaclass's __getattribute__
# cannot answer for.
_TYPE_DICT = type.__dict__
# What 6_relation.py uses, made here: loaded once the case has run, that part makes nothing as
# it loads (the case may have replaced `object` or `__build_class__`). A name that resolves to
# nothing, and the types of classes: on 2.7 old-style classes' too (the type of one).
_MISSING = object()
_CLASS_TYPES = (type,)
if _PY2:

    class _OldStyle:
        pass

    _CLASS_TYPES = (type, type(_OldStyle))
    del _OldStyle


# This module's namespace, and the parts of it not loaded yet with what loads them (see the
# header): the compiled form's dict and marshal.loads, bound before 9_start.py takes boot.py's
# names (_c, _m) out of the module.
_DRIVER = globals()
_LAZY = {}
if type(_DRIVER.get("_c")) is tuple:
    _LAZY = _DRIVER["_c"][1]


def _need(*names):
    # Load these parts of the driver into this module, those not loaded yet (see the header).
    for name in names:
        code = _LAZY.pop(name, None)
        if code is not None:
            exec(_loads(code), _DRIVER)


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


# What reads requests and the lazy parts (marshal is imported by every boot program).
_loads = _import_unseen("marshal").loads


def _ascii(text):
    # On Python 2 a str is bytes already, and encoding it would import a codec into the
    # server, and so into every child after it.
    if _PY2:
        return text
    return text.encode("ascii", "replace")


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


def _read(path):
    # The whole file, in as few calls as it takes (open() would add a buffered reader and
    # six calls more): its size and a byte more asked first, then what it grew by. (A buffer
    # of a megabyte a read, as it was, had Python map and unmap a megabyte for each: 50 to
    # 100 us of a 10 ms exec'd run on 3.12, for a code file of 200 bytes.)
    fd = _os_open(path, _READ_FLAGS)
    try:
        chunks = []
        size = _os_fstat(fd).st_size + 1
        while 1:
            chunk = _os_read(fd, size)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size = 1 << 16
    finally:
        _os_close(fd)
