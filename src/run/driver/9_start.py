# The start (last, once every part is defined): the loop of 1_serve.py, then the request
# this process runs (None in a server, which never returns from _serve): boot.py runs it, with
# _begin and _end, once this module's code has returned.
_request = _serve()
