import sys
def _load(cache, source):
    had = 'marshal' in sys.modules
    import marshal
    if not had:
        del sys.modules['marshal']
    for attempt in (0, 1):
        try:
            f = open(cache, 'rb')
        except (IOError, OSError):
            f = None
        if f is not None:
            try:
                return marshal.loads(f.read())
            finally:
                f.close()
        if attempt:
            break
        import os
        pid = os.fork()
        if pid == 0:
            try:
                f = open(source, 'rb')
                code = compile(f.read(), source, 'exec', 0, True)
                f.close()
                tmp = '%s.%d' % (cache, os.getpid())
                f = open(tmp, 'wb')
                f.write(marshal.dumps(code))
                f.close()
                os.rename(tmp, cache)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    f = open(source, 'rb')
    try:
        return compile(f.read(), source, 'exec', 0, True)
    finally:
        f.close()
exec(_load(@CACHE@, @SOURCE@))
