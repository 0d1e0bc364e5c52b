def _write_compiled(source, name, path, head, marshal, lazy=None):
    # The file `source` compiled (its code named `name`) and written to `path` behind `head`,
    # atomically: a reader finds the whole file or none. Nothing is raised. With `lazy` (the
    # driver's parts loaded only when needed: name, first line, end, counted from 0), the pair
    # the driver is loaded from: the code of the rest, those lines left blank, and a dict of
    # each part's code, marshalled, its lines where they are in the file.
    import os
    tmp = '%s.%d' % (path, os.getpid())
    try:
        f = open(source, 'rb')
        text = f.read()
        f.close()
        if lazy is None:
            code = compile(text, name, 'exec', 0, True)
        else:
            lines, parts = text.split(b'\n'), {}
            for part, start, end in lazy:
                body = b'\n' * start + b'\n'.join(lines[start:end])
                parts[part] = marshal.dumps(compile(body, name, 'exec', 0, True))
                lines[start:end] = [b''] * (end - start)
            code = (compile(b'\n'.join(lines), name, 'exec', 0, True), parts)
        f = open(tmp, 'wb')
        f.write(head + marshal.dumps(code))
        f.close()
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except BaseException:
            pass
def _pyc_head():
    # The header of a .pyc this interpreter runs as its program (`python PYC FALLBACK`): the
    # boot program compiled, which every later process of this CPython loads instead of
    # parsing and compiling the `-c` text (a twentieth of a bare interpreter start on 3.12).
    # Its magic number, then the flags, date and size (3.7), date and size (3.3), date (2.7),
    # unread when a .pyc is run as the program. None on PyPy, which starts a .pyc program
    # more slowly than it compiles the text (0.5 ms against 0.2).
    import sys
    if '__pypy__' in sys.builtin_module_names:
        return None
    try:
        try:
            from importlib.util import MAGIC_NUMBER as magic
        except ImportError:
            import imp
            magic = imp.get_magic()
    except Exception:
        return None
    pad = 12 if sys.version_info >= (3, 7) else 8 if sys.version_info >= (3, 3) else 4
    return magic + b'\0' * pad
def _fallback(cache, source, marshal, version, write, pyc_head):
    # The driver's compiled form is missing, is another interpreter's or does not load (the
    # boot program has just read it): a child compiles it and writes it (atomically), so
    # that this process too starts the driver from its loaded form, as every other does (the
    # first compile() of a process changes its state); the process compiles it itself only
    # if that fails. The child also writes the boot program's .pyc, under the name
    # crosspickle gives per interpreter binary (its path, size and modification time): a
    # .pyc of another version's magic number is never started.
    import os
    pid = os.fork()
    if pid == 0:
        write(source, source, cache, version, marshal, @LAZY@)
        head, pyc = pyc_head(), @BOOT_PYC@
        if head is not None and pyc is not None:
            write(@BOOT_SOURCE@, '<string>', pyc, head, marshal)
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
        return compile(f.read(), source, 'exec', 0, True), {}
    finally:
        f.close()
_c = _fallback(@CACHE@, @SOURCE@, _m, _v, _write_compiled, _pyc_head)
del _fallback, _write_compiled, _pyc_head
