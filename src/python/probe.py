# crosspickle's interpreter probe: runs on Python 2.7 and every 3.x, prints one marked JSON line.
import sys


def _c_pickle_used():
    # The case format's feature `c_pickle`: the C pickler and unpickler are there and are what
    # the pickle module hands out. True when `_pickle` imports and pickle's Pickler, Unpickler,
    # dump, dumps, load and loads are its objects. False on 2.7 (pickle.Pickler is the Python
    # class even with cPickle there) and on PyPy without _pickle.
    try:
        import pickle
        import _pickle
    except ImportError:
        return False
    names = ("Pickler", "Unpickler", "dump", "dumps", "load", "loads")
    return all(getattr(pickle, n, None) is getattr(_pickle, n, False) for n in names)


def _machine():
    # platform.machine(): `x86_64`, `aarch64`, `arm64` (macOS), `AMD64` (Windows).
    try:
        import platform

        return platform.machine()
    except Exception:
        return ""


def _probe():
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
    # The case format's feature `gil_enabled`: whether the GIL is on in this process (a
    # free-threaded build turns it back on with PYTHON_GIL=1 or for an extension that needs it).
    # sys._is_gil_enabled() from 3.13; before, the GIL is on exactly when the build has one.
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    if is_gil_enabled is not None:
        gil_enabled = bool(is_gil_enabled())
    else:
        gil_enabled = not free_threaded
    try:
        import pickle

        highest, default = pickle.HIGHEST_PROTOCOL, getattr(pickle, "DEFAULT_PROTOCOL", 0)
    except Exception:
        highest, default = None, None
    pypy = getattr(sys, "pypy_version_info", None)
    # The implementation's own version (the case format's `implementation_version`):
    # sys.implementation.version, or on 2.7 PyPy's pypy_version_info and CPython's version_info.
    own = getattr(getattr(sys, "implementation", None), "version", None) or pypy or sys.version_info
    return {
        "implementation": implementation,
        "version_info": list(sys.version_info[:3]) + [sys.version_info[3], sys.version_info[4]],
        "version": sys.version.split()[0],
        "implementation_version": ".".join(str(p) for p in pypy[:3]) if pypy else None,
        "implementation_version_info": [own[0], own[1], own[2], own[3], own[4]],
        "executable": os.path.realpath(sys.executable) if sys.executable else None,
        "prefix": sys.prefix,
        "debug": hasattr(sys, "gettotalrefcount"),
        "free_threaded": free_threaded,
        "gil_enabled": gil_enabled,
        "c_pickle": accelerator,
        "c_pickle_used": _c_pickle_used(),
        "pickle_highest_protocol": highest,
        "pickle_default_protocol": default,
        "platform": sys.platform,
        "machine": _machine(),
    }


sys.stdout.write("CROSSPICKLE-PROBE " + __import__("json").dumps(_probe()) + "\n")
