# The quiet ending of a forked run (docs/case-format.md, `isolation`): a fork server freezes
# what it holds (gc.freeze) and registers _quiet_exit as its first atexit callback; in a child,
# once the case's own ending has run, _quiet_exit ends the process with os._exit(0) when _loud
# finds nothing that finalising it would let the case see. _loud's rules are this file's.
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
