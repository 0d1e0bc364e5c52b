# crosspickle's driver: runs one case's code as __main__ and writes what happened to a result
# file. It must run unchanged on Python 2.7 and every Python 3, and import as little as it can:
# its start-up cost is paid by every run.
#
# argv: CASE_FILE RESULT_FILE PARAMS_LITERAL [DATA_FILE PHASE [CLASS_NAMES]]
#   PARAMS_LITERAL is a Python dict literal of scalars; DATA_FILE, for the load phase of a
#   round trip, holds the bytes bound to `data`; for the dump phase it names where `data` goes
#   (both empty for a plain run). CLASS_NAMES, comma-separated, are the classes the case's
#   rules name (`exception`, `instance_of`): the result says how the raised exception's class
#   stands to each of them here.
import sys

_HEAD_FRAMES = 12
_TAIL_FRAMES = 24
_MAX_TEXT = 16384
# Messages go to crosspickle whole (up to this), which matches `match` on all of it and cuts
# only what it shows and stores.
_MAX_MESSAGE = 8 * 1024 * 1024


def _text(value, limit=_MAX_TEXT):
    try:
        text = value if isinstance(value, str) else str(value)
    except Exception:
        try:
            text = repr(value)
        except Exception:
            text = "<unprintable %s object>" % type(value).__name__
    if len(text) > limit:
        text = text[: limit // 2] + "\n[... %d characters omitted ...]\n" % (len(text) - limit) + text[-limit // 2 :]
    return text


def _type_name(exc_type):
    module = getattr(exc_type, "__module__", None)
    name = getattr(exc_type, "__qualname__", None) or exc_type.__name__
    if module in (None, "builtins", "exceptions", "__builtin__"):
        return name
    return module + "." + name


def _traceback(exc_type, exc, tb):
    # Keep the first and last frames only: a RecursionError 100,000 frames deep is reported as
    # fast as it is raised. The first frame is this driver's own exec() and is dropped.
    import traceback

    tb = tb.tb_next if tb is not None else None
    count = 0
    t = tb
    while t is not None:
        count += 1
        t = t.tb_next
    lines = ["Traceback (most recent call last):\n"]
    if count <= _HEAD_FRAMES + _TAIL_FRAMES:
        lines.extend(traceback.format_list(traceback.extract_tb(tb)))
    else:
        lines.extend(traceback.format_list(traceback.extract_tb(tb, _HEAD_FRAMES)))
        lines.append("  [... %d frames omitted ...]\n" % (count - _HEAD_FRAMES - _TAIL_FRAMES))
        t = tb
        for _ in range(count - _TAIL_FRAMES):
            t = t.tb_next
        lines.extend(traceback.format_list(traceback.extract_tb(t)))
    try:
        lines.extend(traceback.format_exception_only(exc_type, exc))
    except Exception:
        lines.append(_type_name(exc_type) + "\n")
    return "".join(lines)


_MISSING = object()


def _resolve(name, modules_before, builtins_before, main):
    # What `name` denotes in this interpreter, resolved after the case ran but not as the case
    # left things: a bare name is the builtin as it was before the case started; in a dotted
    # name the longest prefix that is a module is taken from sys.modules as it was before the
    # case started, else as it is now, else imported now; `__main__` is the case's own module.
    # A module the case blocked (None in sys.modules) or that does not import does not resolve.
    parts = name.split(".")
    if len(parts) == 1:
        return builtins_before.get(name, _MISSING)
    module_type = type(sys)
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        if module_name == "__main__":
            module = main
        else:
            module = modules_before.get(module_name)
            if not isinstance(module, module_type):
                module = sys.modules.get(module_name, _MISSING)
                if module is _MISSING:
                    try:
                        __import__(module_name)
                    except BaseException:
                        continue
                    module = sys.modules.get(module_name)
        if not isinstance(module, module_type):
            continue
        value = module
        for attribute in parts[cut:]:
            value = getattr(value, attribute, _MISSING)
            if value is _MISSING:
                return _MISSING
        return value
    return _MISSING


def _named(name, cls):
    # The format's rule for names: a bare name is the last dotted part, a dotted name must
    # match whole trailing parts of `module.QualName`.
    want = name.split(".")
    got = _type_name(cls).split(".")
    return len(want) <= len(got) and got[len(got) - len(want) :] == want


def _relation(name, value, exc_type):
    # same / subclass / unrelated / missing, as `except value:` would see exc_type: by the
    # type's own MRO (what the interpreter's exception matching walks), never __subclasscheck__.
    # Then by name: a class of the MRO that `name` names (a class whose module the case
    # removed from sys.modules, or a bare name that is no builtin) is the same or a base.
    class_types = (type,) if sys.version_info[0] > 2 else (type, type(_OldStyle))
    if isinstance(exc_type, type):
        mro = list(type.__dict__["__mro__"].__get__(exc_type, type))
    else:
        mro = [exc_type]
    if value is _MISSING or not isinstance(value, class_types):
        relation = "missing"
    elif value is exc_type:
        return "same"
    elif any(c is value for c in mro):
        return "subclass"
    elif not isinstance(exc_type, type):
        try:
            relation = "subclass" if issubclass(exc_type, value) else "unrelated"
        except BaseException:
            relation = "unrelated"
        if relation == "subclass":
            return relation
    else:
        relation = "unrelated"
    if _named(name, exc_type):
        return "same"
    if any(_named(name, c) for c in mro[1:]):
        return "subclass"
    return relation


class _OldStyle:
    pass


def _classes(names, exc_type, modules_before, builtins_before, main):
    lines = []
    for name in names:
        try:
            value = _resolve(name, modules_before, builtins_before, main)
            relation = _relation(name, value, exc_type)
        except BaseException:
            relation = "missing"
        lines.append(name + " " + relation)
    return "\n".join(lines)


def _encode(text):
    if not isinstance(text, bytes):
        text = text.encode("utf-8", "replace")
    return text


def _write_result(path, fields):
    # A line-oriented, length-prefixed record: `name length\n<bytes>\n` per field.
    out = [b"crosspickle-result 1\n"]
    for name, value in fields:
        if value is None:
            continue
        data = _encode(value)
        out.append(_encode("%s %d\n" % (name, len(data))))
        out.append(data)
        out.append(b"\n")
    f = open(path, "wb")
    try:
        f.write(b"".join(out))
    finally:
        f.close()


def _main():
    case_path, result_path, params_literal = sys.argv[1], sys.argv[2], sys.argv[3]
    data_path = sys.argv[4] if len(sys.argv) > 4 else None
    phase = sys.argv[5] if len(sys.argv) > 5 else None
    class_names = [n for n in sys.argv[6].split(",") if n] if len(sys.argv) > 6 else []
    # Only the names a params literal can hold (on 2.7 True and False are builtins, not literals).
    names = {"True": True, "False": False, "None": None, "float": float}
    params = eval(params_literal, {"__builtins__": names}) if params_literal else {}
    if sys.version_info[0] == 2:
        # Python 2 cases expect native strings where they can have them.
        for key, value in list(params.items()):
            try:
                value = value.encode("ascii") if isinstance(value, unicode) else value  # noqa: F821
            except UnicodeEncodeError:
                pass
            del params[key]
            params[str(key)] = value
    f = open(case_path, "rb")
    try:
        source = f.read()
    finally:
        f.close()

    import os

    main = type(sys)("__main__")
    main.__file__ = case_path
    main.__builtins__ = __builtins__
    main.__dict__.update(params)
    if phase == "load":
        f = open(data_path, "rb")
        try:
            main.data = f.read()
        finally:
            f.close()
    if class_names:
        # What the case cannot take back: the modules and builtins there before it started.
        modules_before = dict(sys.modules)
        builtins_before = dict(getattr(__builtins__, "__dict__", __builtins__))
    # This driver's module must outlive the swap: Python 2 clears a dead module's globals.
    sys.modules["__crosspickle_driver__"] = sys.modules["__main__"]
    sys.modules["__main__"] = main
    sys.argv = [case_path]
    sys.path[0] = os.path.dirname(case_path)

    outcome = "pass"
    exc_name = message = tb_text = classes = None
    raised = None
    try:
        code = compile(source, case_path, "exec", 0, True)
        exec(code, main.__dict__)
        if phase == "dump":
            data = main.__dict__.get("data")
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError("dump must leave bytes in the global `data`, not %s" % type(data).__name__)
            f = open(data_path, "wb")
            try:
                f.write(bytes(data))
            finally:
                f.close()
    except SystemExit as e:
        if e.code is not None and e.code != 0:
            outcome = "error"
            exc_name = "SystemExit"
            message = _text(e.code, _MAX_MESSAGE)
            raised = type(e)
    except BaseException as e:
        exc_type, exc, tb = sys.exc_info()
        outcome = "fail" if isinstance(e, AssertionError) else "error"
        exc_name = _type_name(exc_type)
        raised = exc_type
        message = _text(exc, _MAX_MESSAGE)
        try:
            tb_text = _traceback(exc_type, exc, tb)
        except BaseException:
            tb_text = None
        del tb, exc
    if class_names and raised is not None:
        classes = _classes(class_names, raised, modules_before, builtins_before, main)
    _write_result(
        result_path,
        [
            ("outcome", outcome),
            ("exception", exc_name),
            ("message", message),
            ("traceback", tb_text),
            ("classes", classes),
        ],
    )
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass


_main()
