# What an exception that ended the code (or a named check) was (_raised): its outcome, its
# class's name, its message (the text of a value: _text) and its traceback, formatted as Python
# prints it, without the traceback module (which a run would import, with linecache, tokenize
# and re): the first and last frames of a deep one, the source lines read as linecache reads
# them, the notes of 3.11 and later. Loaded when something raised (_need("traceback")).


def _raised(exc_type, exc, tb):
    # What an exception that ended the code (or a named check) was: its outcome (fail for an
    # AssertionError, else error), its class's name, its message and its traceback's text.
    outcome = "fail" if issubclass(exc_type, AssertionError) else "error"
    exc_name = _type_name(exc_type)
    message = _text(exc, _MAX_MESSAGE)
    try:
        tb_text = _traceback(exc_type, exc, tb)
    except BaseException:
        tb_text = None
    return outcome, exc_name, message, tb_text


def _text(value, limit=_MAX_TEXT):
    # str(value), else its repr, as a plain str (not a subclass of the case's) of at most
    # `limit` characters.
    text = None
    for convert in (str, repr):
        try:
            text = convert(value)
            text = "".join([text]) if isinstance(text, str) else None
        except Exception:
            text = None
        if text is not None:
            break
    if text is None:
        text = "<unprintable %s object>" % _class_name(type(value), "__name__")
    if len(text) > limit:
        text = text[: limit // 2] + "\n[... %d characters omitted ...]\n" % (len(text) - limit) + text[-limit // 2 :]
    return text


def _class_name(cls, attribute):
    # A class's __module__, __qualname__ or __name__ as a str, as the class holds it (type's own
    # descriptor, whatever its metaclass's __getattribute__ answers), else None.
    try:
        value = _TYPE_DICT[attribute].__get__(cls, type)
    except Exception:
        try:  # an old-style class (2.7), or a name this Python's type lacks (__qualname__)
            value = getattr(cls, attribute, None)
        except Exception:
            value = None
    return value if isinstance(value, str) else None


def _type_name(exc_type, plain=("builtins", "exceptions", "__builtin__")):
    # `module.QualName`, without the module when it is one of `plain`.
    module = _class_name(exc_type, "__module__")
    name = _class_name(exc_type, "__qualname__") or _class_name(exc_type, "__name__") or "?"
    if module is None or module in plain:
        return name
    return module + "." + name


_HEAD_FRAMES = 12
_TAIL_FRAMES = 24


def _traceback(exc_type, exc, tb):
    # As Python prints it, without its traceback module: importing that (and linecache,
    # tokenize, re...) took a run that raised 10 to 15 ms, and it would stay imported for the
    # case's atexit handlers and finalisation. Keep the first and last frames only: a
    # RecursionError 100,000 frames deep is reported as fast as it is raised. The driver's own
    # frames (its exec(), its compile()) are dropped.
    # So is boot.py's, where the code's exception was caught: the bottom of the stack.
    own = _traceback.__code__.co_filename
    while tb is not None and (tb.tb_frame.f_code.co_filename == own or tb.tb_frame.f_back is None):
        tb = tb.tb_next
    frames = []
    count = 0
    while tb is not None:
        count += 1
        frames.append(tb)
        if len(frames) > _HEAD_FRAMES + _TAIL_FRAMES:
            del frames[_HEAD_FRAMES]
        tb = tb.tb_next
    lines = ["Traceback (most recent call last):\n"]
    sources = {}
    for i, t in enumerate(frames):
        if i == _HEAD_FRAMES and count > _HEAD_FRAMES + _TAIL_FRAMES:
            lines.append("  [... %d frames omitted ...]\n" % (count - _HEAD_FRAMES - _TAIL_FRAMES))
        code = t.tb_frame.f_code
        lines.append('  File "%s", line %s, in %s\n' % (code.co_filename, t.tb_lineno, code.co_name))
        line = _source_line(sources, code.co_filename, t.tb_lineno)
        if line:
            lines.append("    %s\n" % line)
    lines.extend(_exception_only(exc_type, exc))
    return "".join(lines)


def _exception_only(exc_type, exc):
    # The last lines of a traceback, as traceback.format_exception_only writes them; a
    # SyntaxError (its text and caret) is left to that module.
    if isinstance(exc_type, type) and issubclass(exc_type, SyntaxError):
        try:
            import traceback

            return traceback.format_exception_only(exc_type, exc)
        except Exception:
            pass
    name = _type_name(exc_type, ("__main__", "builtins", "exceptions"))
    try:
        text = str(exc)
    except Exception:
        try:
            text = _unicode(exc).encode("ascii", "backslashreplace")  # Python 2
        except Exception:
            text = "<exception str() failed>"
    lines = [name + ": " + text + "\n" if text else name + "\n"]
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, (list, tuple)):
        # Bounded as the frames are (3.14's pickler adds a note per level of nesting): the
        # first and last notes, each cut to _MAX_TEXT characters.
        count = len(notes)
        keep = _HEAD_FRAMES + _TAIL_FRAMES
        for i, note in enumerate(notes):
            if count > keep and _HEAD_FRAMES <= i < count - _TAIL_FRAMES:
                if i == _HEAD_FRAMES:
                    lines.append("[... %d notes omitted ...]\n" % (count - keep))
                continue
            if not isinstance(note, str):
                lines.append("<note str() failed>\n")
                continue
            if len(note) > _MAX_TEXT:
                note = note[:_MAX_TEXT] + "[... %d characters omitted]" % (len(note) - _MAX_TEXT)
            lines.append(note + "\n")
    return lines


def _source_line(sources, filename, lineno):
    # Line `lineno` of a source file, stripped, as linecache finds it: decoded as its coding
    # cookie says (UTF-8 when it says nothing; kept as bytes on Python 2), None when there is no
    # such file (<string>, <frozen ...>) or line.
    if filename not in sources:
        sources[filename] = _source_lines(filename)
    lines, encoding = sources[filename]
    if not isinstance(lineno, int) or not 0 < lineno <= len(lines):
        return None
    line = lines[lineno - 1].strip()
    if _PY2:
        return line
    try:
        return line.decode(encoding, "replace")
    except Exception:
        return line.decode("utf-8", "replace")


def _source_lines(filename):
    # The file's lines (bytes) and the encoding its coding cookie names.
    try:
        data = _read(filename)
    except Exception:
        return [], "utf-8"
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    encoding = "utf-8"
    for line in lines[:2]:
        # PEP 263: `coding[:=]` in a comment line of the first two.
        stripped = line.lstrip(b" \t\f")
        if not stripped.startswith(b"#"):
            if stripped.strip():
                break
            continue
        at = stripped.find(b"coding")
        if at >= 0 and stripped[at + 6 : at + 7] in (b":", b"="):
            name = stripped[at + 7 :].lstrip(b" \t")
            end = 0
            while end < len(name) and (name[end : end + 1].isalnum() or name[end : end + 1] in b"-_."):
                end += 1
            if end:
                encoding = name[:end].decode("ascii")
            break
    return lines, encoding
