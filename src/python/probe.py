# crosspickle's interpreter probe: runs on Python 2.7 and every 3.x, prints one marked JSON line.
import sys


def _probe():
    import json
    import os

    try:
        implementation = sys.implementation.name
    except AttributeError:
        import platform

        implementation = platform.python_implementation().lower()
    accelerator = None
    for name in ("_pickle", "cPickle"):
        try:
            __import__(name)
        except ImportError:
            continue
        accelerator = name
        break
    try:
        import sysconfig

        free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    except Exception:
        free_threaded = False
    try:
        import pickle

        highest, default = pickle.HIGHEST_PROTOCOL, getattr(pickle, "DEFAULT_PROTOCOL", 0)
    except Exception:
        highest, default = None, None
    pypy = getattr(sys, "pypy_version_info", None)
    return {
        "implementation": implementation,
        "version_info": list(sys.version_info[:3]) + [sys.version_info[3], sys.version_info[4]],
        "version": sys.version.split()[0],
        "implementation_version": ".".join(str(p) for p in pypy[:3]) if pypy else None,
        "executable": os.path.realpath(sys.executable) if sys.executable else None,
        "prefix": sys.prefix,
        "debug": hasattr(sys, "gettotalrefcount"),
        "free_threaded": free_threaded,
        "c_pickle": accelerator,
        "pickle_highest_protocol": highest,
        "pickle_default_protocol": default,
        "platform": sys.platform,
    }


sys.stdout.write("CROSSPICKLE-PROBE " + __import__("json").dumps(_probe()) + "\n")
