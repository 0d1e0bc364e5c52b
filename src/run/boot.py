import sys
_h='marshal' in sys.modules
import marshal as _m
if not _h:del sys.modules['marshal']
_v=(sys.version if str is bytes else sys.version.encode('utf-8'))+b' @NAME@\n'
_f=_d=_c=None
try:
 _f=open(@CACHE@,'rb');_d=_f.read();_f.close();_c=_d[:len(_v)]==_v and _m.loads(_d[len(_v):])
except Exception:pass
if not _c:exec(@FALLBACK@)
del _h,_m,_v,_f,_d
exec(_c)
