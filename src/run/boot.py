import sys
def _load(cache, source):
    had = 'marshal' in sys.modules
    import marshal
    if not had:
        del sys.modules['marshal']
    try:
        f = open(cache, 'rb')
        try:
            return marshal.loads(f.read())
        finally:
            f.close()
    except Exception:
        pass
    f = open(source, 'rb')
    try:
        code = compile(f.read(), source, 'exec', 0, True)
    finally:
        f.close()
    try:
        import os
        tmp = '%s.%d' % (cache, os.getpid())
        f = open(tmp, 'wb')
        try:
            f.write(marshal.dumps(code))
        finally:
            f.close()
        os.rename(tmp, cache)
    except Exception:
        pass
    return code
exec(_load(@CACHE@, @SOURCE@))
