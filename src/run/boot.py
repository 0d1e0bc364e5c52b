import sys
_h='marshal' in sys.modules
import marshal as _m
_v=(sys.version if str is bytes else sys.version.encode('utf-8'))+b' @NAME@\n'
_f=_d=_c=None
try:
 _f=open(@CACHE@,'rb');_d=_f.read();_f.close();_c=_d[:len(_v)]==_v and _m.loads(_d[len(_v):])
except Exception:pass
if not _c:_f=open(sys.argv[1],'rb');exec(_f.read());_f.close()
exec(_c[0])
if _request is not None:
 _s=_begin(*_request);_x=_s.raised;_r=None
 for _i in _s.legs:
  if _x is None:
   try:exec(_code(_s,_i),_s.main.__dict__)
   except BaseException as _e:_x=(None,_e,sys.exc_traceback if str is bytes else _e.__traceback__)
   except:_x=(sys.exc_type,sys.exc_value,sys.exc_traceback)
 for _i in (1,2):
  try:
   _r=(_gettrace(),_getprofile(),_getrecursionlimit());_setprofile(None);_settrace(None)
   if _r[2]<_DRIVER_DEPTH:_setrecursionlimit(_DRIVER_DEPTH)
   break
  except BaseException:pass
 _end(_s,_x,_r)
