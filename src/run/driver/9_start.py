# The start (last, once every part is defined): what boot.py loaded the driver with taken out
# of this module, with marshal if it was not imported before (here, not in boot.py, which
# every process compiles: those three statements were 0.13 M instructions a run on 3.12; the
# driver also runs as a script of its own, without them); then the loop of 1_serve.py, then
# the request this process runs (None in a server, which never returns from _serve): boot.py
# runs it, with _begin and _end, once this module's code has returned.
_names = globals()
if not _names.pop("_h", True):
    del sys.modules["marshal"]
for _name in ("_m", "_v", "_f", "_d", "_c"):
    _names.pop(_name, None)
del _names, _name
_request = _serve()
