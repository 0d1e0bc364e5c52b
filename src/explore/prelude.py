# crosspickle explore: the helpers a generated value and its round trip need, the same in the
# worker and in every case file explore writes (valid on Python 2.7 and every Python 3).
import io
import pickle
import struct
import sys
PY2 = sys.version_info[0] == 2
if PY2:
    range_ = xrange  # noqa: F821
else:
    range_ = range

# The classes explore ships, as module explore_types (made here, so that a case file needs
# nothing installed): pickled by reference, each a way of customising pickling.
_EXPLORE_TYPES = """
import collections
try:
    import copyreg
except ImportError:
    import copy_reg as copyreg


class Plain(object):
    def __init__(self, a):
        self.a = a


class Reduce(object):
    def __init__(self, a):
        self.a = a

    def __reduce__(self):
        return (Reduce, (self.a,))


class ReduceEx(object):
    def __init__(self, a):
        self.a = a

    def __reduce_ex__(self, protocol):
        return (ReduceEx, (self.a,))


class State(object):
    def __init__(self, a):
        self.a = a

    def __getstate__(self):
        return {"state": self.a}

    def __setstate__(self, state):
        self.a = state["state"]


class Slots(object):
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


class NewArgsEx(object):
    def __new__(cls, a):
        self = object.__new__(cls)
        self.a = a
        return self

    def __getnewargs_ex__(self):
        return ((self.a,), {})


class Copyreg(object):
    def __init__(self, a):
        self.a = a


def _reduce_copyreg(obj):
    return (Copyreg, (obj.a,))


copyreg.pickle(Copyreg, _reduce_copyreg)
Point = collections.namedtuple("Point", "x y")


class Falsy(object):
    # Its state is its value, falsy or not: pickle leaves a falsy state out on protocols 0
    # and 1 (copyreg's _reduce_ex), so __setstate__ is never called.
    def __init__(self, a):
        self.a = a

    def __getstate__(self):
        return self.a

    def __setstate__(self, state):
        self.a = state


def _set_state(obj, state):
    obj.a = state["s"]


class Setter(object):
    # A reduce value's sixth item, a state setter (3.8 and later).
    def __init__(self, a=None):
        self.a = a

    def __reduce_ex__(self, protocol):
        return (Setter, (), {"s": self.a}, None, None, _set_state)


def noted(exc, *notes):
    for note in notes:
        exc.add_note(note)
    return exc


try:
    import enum

    class Color(enum.Enum):
        RED = 1
        GREEN = "g"

    class Perm(enum.Flag):
        R = 1
        W = 2
        X = 4
except (ImportError, AttributeError):
    pass
"""


def _explore_types():
    import types
    if "explore_types" not in sys.modules:
        module = types.ModuleType("explore_types")
        exec(_EXPLORE_TYPES, module.__dict__)
        sys.modules["explore_types"] = module


_explore_types()


# What dumps_with("oob") writes when buffers went out of band: this mark (0xff is no
# opcode, so no pickle starts with it), the number of buffers, each buffer as its flag
# (b"r" read-only, b"w" writable), its 8-byte big-endian length and its bytes, then the
# pickle itself.
OOB_MARK = b"\xffOOB"


def _accelerator():
    """The C pickler's module: _pickle (2.7: cPickle), imported once; an ImportError where
    there is none (PyPy 3.9), at each use."""
    if not _ACCELERATED:
        if PY2:
            import cPickle as c
        else:
            import _pickle as c
        _ACCELERATED.append(c)
    return _ACCELERATED[0]


_ACCELERATED = []
# pickle.py's own pickler and unpickler (2.7's pickle has no C code: Pickler and Unpickler).
_PY_PICKLER = getattr(pickle, "_Pickler", pickle.Pickler)
_PY_UNPICKLER = getattr(pickle, "_Unpickler", pickle.Unpickler)


def dumps_with(obj, protocol, which):
    """Pickle obj with the C pickler ("c": _pickle, 2.7's cPickle) or the Python one ("py"),
    with the protocol given, or with none ("default": the interpreter's default), or with
    protocol 5 and a buffer_callback ("oob": the buffers out of band, carried before the
    pickle as OOB_MARK says; the pickle alone where no buffer went out of band)."""
    buffers = []
    kwargs = {}
    if protocol == "oob":
        protocol = 5
        kwargs["buffer_callback"] = buffers.append
    args = () if protocol == "default" else (protocol,)
    if which == "c":
        if PY2:
            return _accelerator().dumps(obj, *args)
        data = _accelerator().dumps(obj, *args, **kwargs)
    else:
        f = io.BytesIO()
        _PY_PICKLER(f, *args, **kwargs).dump(obj)
        data = f.getvalue()
    if not buffers:
        return data
    head = [OOB_MARK, struct.pack(">I", len(buffers))]
    for b in buffers:
        raw = b.raw()
        head.append(b"r" if raw.readonly else b"w")
        head.append(struct.pack(">Q", raw.nbytes))
        head.append(raw.tobytes())
    return b"".join(head) + data


def out_of_band(data):
    """The pickle and its buffers (bytes for a read-only one, bytearray for a writable one)
    of what dumps_with wrote; None for buffers where it wrote a plain pickle."""
    if data[:4] != OOB_MARK:
        return data, None
    (count,) = struct.unpack(">I", data[4:8])
    at, buffers = 8, []
    for _ in range(count):
        flag = data[at:at + 1]
        (size,) = struct.unpack(">Q", data[at + 1:at + 9])
        raw = data[at + 9:at + 9 + size]
        buffers.append(bytes(raw) if flag == b"r" else bytearray(raw))
        at += 9 + size
    return data[at:], buffers


def parity_form(data):
    """What the parity oracle compares of a pickle dumps_with wrote: the pickle alone (its
    out-of-band buffers left out), pickletools.optimize'd, and its memo numbered from 0 in the
    order of its PUTs: 2.7's cPickle numbers from 1 and 2.7's optimize does not renumber, which
    is no difference between the picklers. A pickle with MEMOIZE (protocol 4 and later,
    numbered implicitly) is left as optimize wrote it."""
    import pickletools
    data = pickletools.optimize(out_of_band(data)[0])
    ops = list(pickletools.genops(data))
    if any(op.name == "MEMOIZE" for op, _, _ in ops):
        return data
    ends = [pos for _, _, pos in ops[1:]] + [len(data)]
    memo, out = {}, []
    for (op, arg, pos), end in zip(ops, ends):
        if op.name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[arg] = n = len(memo)
            text, short, long = b"p", b"q", b"r"
        elif op.name in ("GET", "BINGET", "LONG_BINGET") and arg in memo:
            n = memo[arg]
            text, short, long = b"g", b"h", b"j"
        else:
            out.append(data[pos:end])
            continue
        if op.name in ("PUT", "GET"):
            out.append(text + str(n).encode("ascii") + b"\n")
        elif n < 256:
            out.append(short + struct.pack("<B", n))
        else:
            out.append(long + struct.pack("<I", n))
    return b"".join(out)


def loads_with(data, which):
    """Unpickle data with the C unpickler ("c") or the Python one ("py"), default arguments
    (and buffers=, for what dumps_with wrote with its buffers out of band)."""
    if data[:4] != OOB_MARK:
        if which == "c":
            return _accelerator().loads(data)
        return _PY_UNPICKLER(io.BytesIO(data)).load()
    data, buffers = out_of_band(data)
    if which == "c":
        return _accelerator().loads(data, buffers=buffers)
    return _PY_UNPICKLER(io.BytesIO(data), buffers=buffers).load()


def drawn(obj, seed, number):
    """What a builder of explore --values returned: itself, or where it is a Hypothesis
    strategy, a value drawn from it, the same for the same seed and value number (and the same
    Hypothesis): the last of the up to 5 examples Hypothesis's generate phase makes under
    hypothesis.seed(seed * 2**32 + number), no database, no deadline, no health check."""
    module = getattr(type(obj), "__module__", None) or ""
    if not module.startswith("hypothesis") or not hasattr(obj, "example"):
        return obj
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as seeded
    examples = []

    @seeded(seed * 4294967296 + number)
    @settings(max_examples=5, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(obj)
    def collect(x):
        examples.append(x)
    collect()
    return examples[-1]


def canon(obj):
    """A description of obj that reads the same on every interpreter (docs/explore.md)."""
    return described(obj)[0]


def described(obj):
    """canon(obj), and whether obj is made only of the types pickle writes by itself at its
    highest protocol, each with opcodes of its own (no reducer, no class by name): None, bool,
    int, float, str, bytes, tuple, list and dict, and from protocol 4 set and frozenset. Not
    bytearray: pickle writes a writable PickleBuffer as one (and shares it as one, where canon
    does not)."""
    if not _DESCRIBER:
        _DESCRIBER.append(_describer())
    return _DESCRIBER[0](obj)


# canon's describer, made once per process: its helpers are closures over one another.
_DESCRIBER = []


def _describer():
    import binascii
    import json
    ints = (int, long) if PY2 else (int,)  # noqa: F821
    text_type = unicode if PY2 else str  # noqa: F821
    # The types pickle writes by itself (see described), and whether all met so far were.
    own = set([type(None), bool, float, text_type, bytes, tuple, list, dict]) | set(ints)
    if pickle.HIGHEST_PROTOCOL >= 4:
        own |= set([set, frozenset])
    plain = [True]
    # json.dumps's own encoder made once (it makes one a call where its arguments are not the
    # defaults): the same text.
    compact = _encoder(json, (",", ":"))
    spaced = _encoder(json, (", ", ": "))

    if PY2:
        def hexs(b):
            return binascii.hexlify(bytes(b)).decode("ascii")
    else:
        def hexs(b):
            return b.hex()

    def flt(x):
        return "nan" if x != x else x.hex()

    def tz(t):
        if t is None:
            return None
        off = t.utcoffset(None)
        return [off.days * 86400 + off.seconds, off.microseconds, t.tzname(None)]

    def key(o):
        # No sort_keys: a description holds no dict (it would make 2.7 encode in Python).
        return spaced(walk(o, None))

    def pairs(items, memo):
        # Sorted by their keys' text, each key walked once; the values walked in that order
        # (the memo numbers what they share).
        keyed = []
        for k, v in items:
            w = walk(k, None)
            keyed.append((spaced(w), w, v))
        keyed.sort(key=lambda e: e[0])
        return [[w, walk(v, memo)] for _, w, v in keyed]

    def seen(o, memo):
        if memo is None:
            return None
        if id(o) in memo:
            return ["ref", memo[id(o)][0]]
        memo[id(o)] = (len(memo), o)
        return None

    def walk(o, memo):
        t = type(o)
        if t not in own:
            plain[0] = False
        if o is None or o is Ellipsis or o is NotImplemented:
            return [repr(o)]
        if t is bool:
            return ["bool", o]
        if t in ints:
            return ["int", str(o)]
        if t is float:
            return ["float", flt(o)]
        if t is complex:
            return ["complex", flt(o.real), flt(o.imag)]
        if t is text_type:
            return ["str", hexs(o.encode("utf-8"))]
        if t is bytes:
            return ["bytes", hexs(o)]
        if t is tuple:
            return ["tuple", [walk(x, memo) for x in o]]
        if t is frozenset:
            return ["frozenset", sorted(key(x) for x in o)]
        if t is slice:
            return ["slice", walk(o.start, memo), walk(o.stop, memo), walk(o.step, memo)]
        if t is range_:
            return ["range", [str(x) for x in o]]
        if t is list or t is dict or t is set or t is bytearray:
            ref = seen(o, memo)
            if ref is not None:
                return ref
            if t is list:
                return ["list", [walk(x, memo) for x in o]]
            if t is dict:
                return ["dict", pairs(o.items(), memo)]
            if t is set:
                return ["set", sorted(key(x) for x in o)]
            return ["bytearray", hexs(o)]
        # Any other type by its name: how is learnt at its first object (it depends on the
        # type alone), one lookup for the next instead of a chain of tests.
        how = by_type.get(t)
        if how is None:
            if len(by_type) >= 4096:
                by_type.clear()  # types made anew for each value (a user's) are not all kept
            how = by_type[t] = kind(t)
        return how(o, memo)

    by_type = {}

    def shared(how):
        # An object the memo numbers: a second reference to it is a "ref".
        def describe(o, memo):
            ref = seen(o, memo)
            if ref is not None:
                return ref
            return how(o, memo)
        return describe

    def kind(t):
        """How walk describes an object of type t, of none of the types it tests first."""
        name = (t.__module__, t.__name__)
        if name[0] == "explore_types":
            return ours
        if name[1] in ("Pattern", "SRE_Pattern"):
            return lambda o, memo: ["Pattern", walk(o.pattern, memo), o.flags & ~32]
        if name[0] == "array":
            return lambda o, memo: ["array", o.typecode, [str(x) for x in o.tolist()]]
        if name[0].startswith("pathlib"):
            return lambda o, memo: ["path", name[1], str(o)]
        if name[0] == "ipaddress":
            return lambda o, memo: ["ip", name[1], str(o)]
        if issubclass(t, BaseException):
            return exception
        newer = newest(name)
        if newer is not None:
            return newer
        simple = SIMPLE.get(name)
        if simple is not None:
            return lambda o, memo: [name[1]] + simple(o)
        if name == ("collections", "OrderedDict"):
            return shared(lambda o, memo: ["OrderedDict", [[walk(k, None), walk(v, memo)]
                                                           for k, v in o.items()]])
        if name == ("collections", "Counter"):
            return shared(lambda o, memo: ["Counter", pairs(o.items(), memo)])
        if name == ("collections", "defaultdict"):
            return shared(lambda o, memo: [
                "defaultdict", getattr(o.default_factory, "__name__", repr(o.default_factory)),
                pairs(o.items(), memo)])
        if name == ("collections", "deque"):
            return shared(lambda o, memo: ["deque", o.maxlen, [walk(x, memo) for x in o]])
        label = "%s.%s" % name

        def instance(o, memo):
            state = getattr(o, "__dict__", None)
            if isinstance(state, dict) and not callable(o):
                # An instance (the user's own, with --values) by its class and attributes.
                return ["object", label, sorted((k, walk(v, memo)) for k, v in state.items())]
            return ["object", label, repr(o)]
        return shared(instance)

    def ours(o, memo):
        name = type(o).__name__
        if name == "Point":
            return ["Point", [walk(x, memo) for x in o]]
        if name == "Color":
            return ["Color", o.name]
        if name == "Perm":
            return ["Flag", o.value]
        ref = seen(o, memo)
        if ref is not None:
            return ref
        if not hasattr(o, "a"):
            return [name, ["missing"]]
        return [name, walk(o.a, memo)]

    def exception(o, memo):
        # By state: the class, its arguments and its attributes (__notes__ among them), so
        # Python 3's OSError(2, ...) (a FileNotFoundError) is not 2.7's.
        attrs = sorted((k, walk(v, memo)) for k, v in getattr(o, "__dict__", {}).items())
        return ["exception", type(o).__name__, [walk(a, memo) for a in o.args], attrs]

    def newest(name):
        # The types 2.7 does not have, by what they hold; None for any other type.
        if name == ("types", "SimpleNamespace"):
            return shared(lambda o, memo: [
                "SimpleNamespace", sorted((k, walk(v, memo)) for k, v in vars(o).items())])
        if name == ("collections", "ChainMap"):
            return shared(lambda o, memo: ["ChainMap", [walk(m, memo) for m in o.maps]])
        if name in (("types", "UnionType"), ("typing", "Union"), ("typing", "_UnionGenericAlias")):
            # 3.14's int | str is a typing.Union, 3.10's a types.UnionType: equal either way.
            return lambda o, memo: ["union", sorted(getattr(a, "__name__", repr(a))
                                                    for a in o.__args__)]
        if name == ("functools", "partial"):
            return lambda o, memo: [
                "partial", o.func.__name__, [walk(a, memo) for a in o.args],
                sorted((k, walk(v, memo)) for k, v in (o.keywords or {}).items())]
        if name[1] == "_PlaceholderType":
            return lambda o, memo: ["Placeholder"]
        if name == ("string.templatelib", "Template"):
            return lambda o, memo: [
                "Template", [walk(s, memo) for s in o.strings],
                [[walk(i.value, memo), i.expression, i.conversion, i.format_spec]
                 for i in o.interpolations]]
        if name == ("zoneinfo", "ZoneInfo"):
            return lambda o, memo: ["ZoneInfo", o.key]
        if name in (("pickle", "PickleBuffer"), ("builtins", "PickleBuffer")):  # PyPy's
            def buffer(o, memo):
                raw = o.raw()
                return ["bytes" if raw.readonly else "bytearray", hexs(raw.tobytes())]
            return buffer
        if name == ("builtins", "memoryview"):
            # What an out-of-band buffer may load as: apart from bytes and bytearray.
            return lambda o, memo: ["memoryview", "ro" if o.readonly else "rw", hexs(o.tobytes())]
        if name[1] == "frozendict":
            return lambda o, memo: ["frozendict", pairs(o.items(), None)]
        return None

    SIMPLE = {
        ("datetime", "datetime"): lambda o: [o.replace(tzinfo=None).isoformat(), getattr(o, "fold", 0), tz(o.tzinfo)],
        ("datetime", "time"): lambda o: [o.replace(tzinfo=None).isoformat(), getattr(o, "fold", 0), tz(o.tzinfo)],
        ("datetime", "date"): lambda o: [o.isoformat()],
        ("datetime", "timedelta"): lambda o: [o.days, o.seconds, o.microseconds],
        ("datetime", "timezone"): lambda o: [tz(o)],
        ("decimal", "Decimal"): lambda o: [str(o)],
        ("fractions", "Fraction"): lambda o: [str(o.numerator), str(o.denominator)],
        ("uuid", "UUID"): lambda o: [str(o)],
    }

    def describe(obj):
        plain[0] = True
        text = compact(walk(obj, {}))
        return text, plain[0]
    return describe


def _encoder(json, separators):
    """json.dumps(o, separators=separators) as a function, its encoder made once: C's where
    json.dumps would use it (CPython), else the encoder's own (PyPy's)."""
    encoder = json.JSONEncoder(separators=separators)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    c = make(None, encoder.default, json.encoder.encode_basestring_ascii, None,
             separators[1], separators[0], False, False, True)

    def encode(o):
        return "".join(c(o, 0))
    return encode
