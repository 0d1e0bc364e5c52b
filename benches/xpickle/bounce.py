"""What every case of this folder does alike: many pickles as one `data` (each part's name and
bytes, length-prefixed, so that 2.7 and 3.x read it alike), and the producer's pickler or
unpickler by its param (`c`: the C one, `py`: pickle._Pickler and pickle._Unpickler)."""
import io
import pickle
import struct


def frame(items):
    out = []
    for name, p in items:
        name = name.encode("utf-8")
        out.append(struct.pack("!II", len(name), len(p)) + name + p)
    return b"".join(out)


def unframe(data):
    at, items = 0, []
    while at < len(data):
        n, m = struct.unpack("!II", data[at:at + 8])
        at += 8
        items.append((data[at:at + n].decode("utf-8"), data[at + n:at + n + m]))
        at += n + m
    return items


def dumps(pickler, obj, protocol):
    f = io.BytesIO()
    (pickle.Pickler if pickler == "c" else pickle._Pickler)(f, protocol).dump(obj)
    return f.getvalue()


def loads(pickler, p):
    return (pickle.Unpickler if pickler == "c" else pickle._Unpickler)(io.BytesIO(p)).load()
