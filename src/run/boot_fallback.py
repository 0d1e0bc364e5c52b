def _fallback(cache, source, marshal, version):
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
_c = _fallback(@CACHE@, @SOURCE@, _m, _v)
del _fallback
