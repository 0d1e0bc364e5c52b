# How the class of what the case raised stands to each class name the case's rules name
# (`exception`, `instance_of`): same, subclass, unrelated or missing, decided by the class's
# own MRO and by name, never by code the case could have replaced.


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
    class_types = _CLASS_TYPES
    if isinstance(exc_type, type):
        mro = list(_TYPE_DICT["__mro__"].__get__(exc_type, type))
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
