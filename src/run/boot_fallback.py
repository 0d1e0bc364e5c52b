def _boot_pyc(source, pyc, marshal):
    # The boot program compiled as a .pyc this interpreter runs as its program (`python
    # PYC FALLBACK`): every later process of this CPython loads it instead of parsing and
    # compiling the `-c` text (a twentieth of a bare interpreter start on 3.12). Written only
    # here, by the interpreter that runs it, under a name crosspickle gives per interpreter
    # binary (its path, size and modification time): a pyc of another version's magic is
    # never started.
    import os, sys
    # PyPy starts a .pyc program more slowly than it compiles the text (0.5 ms against 0.2).
    if pyc is None or '__pypy__' in sys.builtin_module_names:
        return
    tmp = '%s.%d' % (pyc, os.getpid())
    try:
        try:
            from importlib.util import MAGIC_NUMBER as magic
        except ImportError:
            import imp
            magic = imp.get_magic()
        # The header's flags, date and size (3.7), date and size (3.3), date (2.7): unread
        # when a .pyc is run as the program.
        pad = 12 if sys.version_info >= (3, 7) else 8 if sys.version_info >= (3, 3) else 4
        f = open(source, 'rb')
        code = compile(f.read(), '<string>', 'exec', 0, True)
        f.close()
        f = open(tmp, 'wb')
        f.write(magic + b'\0' * pad + marshal.dumps(code))
        f.close()
        os.rename(tmp, pyc)
    except BaseException:
        try:
            os.unlink(tmp)
        except BaseException:
            pass
def _fallback(cache, source, marshal, version, boot_pyc):
    # The driver's compiled form is missing, is another interpreter's or does not load (the
    # boot program has just read it): a child compiles it and writes it (atomically), so
    # that this process too starts the driver from its loaded form, as every other does (the
    # first compile() of a process changes its state); the process compiles it itself only
    # if that fails.
    import os
    pid = os.fork()
    if pid == 0:
        tmp = '%s.%d' % (cache, os.getpid())
        try:
            f = open(source, 'rb')
            code = compile(f.read(), source, 'exec', 0, True)
            f.close()
            f = open(tmp, 'wb')
            f.write(version + marshal.dumps(code))
            f.close()
            os.rename(tmp, cache)
        except BaseException:
            try:
                os.unlink(tmp)
            except BaseException:
                pass
        boot_pyc(@BOOT_SOURCE@, @BOOT_PYC@, marshal)
        os._exit(0)
    os.waitpid(pid, 0)
    try:
        f = open(cache, 'rb')
        data = f.read()
        f.close()
        if data[:len(version)] == version:
            return marshal.loads(data[len(version):])
    except Exception:
        pass
    f = open(source, 'rb')
    try:
        return compile(f.read(), source, 'exec', 0, True)
    finally:
        f.close()
_c = _fallback(@CACHE@, @SOURCE@, _m, _v, _boot_pyc)
del _fallback, _boot_pyc
