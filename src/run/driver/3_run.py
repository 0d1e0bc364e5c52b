# One request between its two halves, around the case's code that boot.py runs at its own
# top level: _begin (the request read, streams, folder, result file, __main__, preload, the
# code compiled) and _end (the round trip's dump, the report, the case's trace and profile
# functions given back); and the compiled forms of cases kept per interpreter (_compile).


def _Run():
    # One request between its two halves: what _begin made ready for the boot program, which
    # runs the code at its own level, and what _end reports (code, main, raised, phase,
    # data_path, result, class_names, modules_before, builtins_before, frozen, checks, legs,
    # leg, relay). A namespace, a module object: a class of those fourteen slots cost 23 us
    # to make in every exec'd run on 3.12.
    return type(sys)("_run")


def _begin(wire, server, preload):
    # Everything before the case's code: the request read, the streams, folder and result file
    # set up, __main__ made, the preload imported and the code compiled. boot.py then runs the
    # code at the bottom of the stack, as `python case.py` would (no driver frame below it: the
    # same stack, recursion depth and messages as a plain script's), and calls _end.
    request = _loads(bytes(bytearray.fromhex(wire.decode("ascii"))))
    if "stdout" in request:
        _redirect(_path(request["stdout"]), 1)
    if "stderr" in request:
        _redirect(_path(request["stderr"]), 2)
    if "cwd" in request:
        os.chdir(_path(request["cwd"]))
    run = _Run()
    run.result = _result_open(_path(request["result"]))
    if server is not None and os.getppid() != server:
        # The server died before it could say it forked this run: the run is given to
        # another, and this process, which nobody watches, must not go on.
        os._exit(70)
    # A forked child of a server that froze its objects (_quiet_exit may end it).
    run.frozen = server is not None and _GC is not None
    case_path = _path(request["case"])
    run.phase = request.get("phase")
    run.data_path = _path(request.get("data"))
    code_cache = _path(request.get("code_cache"))
    run.class_names = [_native(n) for n in request.get("classes", "").split(",") if n]
    params = {}
    for key, value in request.get("params", {}).items():
        params[str(key)] = _native(value)
    main = run.main = type(sys)("__main__")
    main.__file__ = case_path
    main.__builtins__ = __builtins__
    main.__dict__.update(params)
    if run.phase in ("load", "reload"):
        main.data = _read(run.data_path)
    # A load with a relay (the bounce) runs two codes in this process, one after the other:
    # boot.py asks _code for each of run.legs while nothing has raised.
    run.relay = None
    if "relay" in request:
        run.relay = {"case": request["relay"], "data": request["relay_data"],
                     "code_cache": request.get("relay_cache")}
    run.legs = (0, 1) if run.relay is not None else (0,)
    run.leg = None
    run.modules_before = run.builtins_before = None
    if run.class_names:
        # What the case cannot take back: the modules and builtins there before it started.
        run.modules_before = dict(sys.modules)
        run.builtins_before = dict(getattr(__builtins__, "__dict__", __builtins__))
    # `check`, the named checks of the run (7_checks.py), unless a param has that name; each
    # written to the result record as it ends.
    run.checks = _Checks(run.class_names, run.modules_before, run.builtins_before, main, run.result)
    main.__dict__.setdefault("check", run.checks)
    # This driver's module must outlive the swap: Python 2 clears a dead module's globals.
    sys.modules["__crosspickle_driver__"] = sys.modules["__main__"]
    sys.modules["__main__"] = main
    sys.argv = [case_path]
    sys.path[0] = os.path.dirname(case_path)
    if "support" in request:
        # The case's `support` files: after the standard library and site-packages, so that
        # they shadow nothing.
        sys.path.append(_path(request["support"]))
    run.code = run.raised = None
    try:
        for name in preload:
            if name not in sys.modules:
                __import__(name)
        run.code = _compile(case_path, code_cache)
        if run.relay is not None:
            # Compiled now, before any case code runs (a compile may fork); what compiling it
            # raised is raised as the relay starts.
            try:
                run.relay["code"] = _compile(_path(run.relay["case"]), _path(run.relay.get("code_cache")))
            except Exception as e:
                run.relay["code"] = e
    except BaseException as e:
        run.raised = (None, e, sys.exc_traceback if _PY2 else e.__traceback__)
    except:  # noqa: E722 (2.7 raises instances of old-style classes too)
        run.raised = (sys.exc_type, sys.exc_value, sys.exc_traceback)
    return run


def _end(run, caught, aside):
    # Everything after the case's code, called by boot.py with what the code raised (None if
    # nothing) and the case's trace and profile functions and recursion limit, which boot.py
    # set aside (a trace function could fail in the driver's frames, a limit too low stop
    # them) and which are given back here for its atexit handlers and finalisation. A profile
    # function that failed in boot.py's frame (it sees the calls made there) was dropped by
    # Python itself, and those calls made again.
    global _ENDED
    trace, profile, limit = aside or (None, None, None)
    raised = None if caught is None else (caught[0] or type(caught[1]), caught[1], caught[2])
    del caught
    main = run.main
    if raised is None and (run.phase == "dump" or run.leg == "relay"):
        try:
            if run.leg == "relay":
                _dump(main, _path(run.relay["data"]), "relay")
            else:
                _dump(main, run.data_path, "dump")
        except BaseException:
            raised = _exc_info()
    fields = _report(raised, run.class_names, run.modules_before, run.builtins_before, main)
    fields.extend(run.checks._fields())  # those not written as they ended
    del raised
    _result_send(run.result, fields)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    if limit is not None:
        try:
            _setrecursionlimit(limit)
        except Exception:
            pass
    if run.frozen and trace is None and profile is None:
        # The interpreter's ending may be cut short (_quiet_exit): a trace or profile function
        # would see _quiet_exit's frame.
        _ENDED = run
    _settrace(trace)
    try:
        # Last: from here on the profile function sees this frame (and fails in it, at worst).
        _setprofile(profile)
    except BaseException:
        pass


def _code(run, leg):
    # The code object of leg `leg` of `run`, called by boot.py right before it runs it: the
    # request's code (0); or a bounce's relay (1), which runs after the load passed, in its
    # __main__. Both were compiled by _begin. The result file says first that the relay
    # started, so that a crash or a time limit in it is the relay's, as is a SyntaxError
    # compiling it.
    if leg == 0:
        return run.code
    run.leg = "relay"
    _result_mark(run.result, [("leg", "relay")])
    code = run.relay["code"]
    if isinstance(code, BaseException):
        raise code
    return code


def _dump(main, data_path, leg):
    # The dump phase's `data` (or the relay's), written where the load phase (or the reload)
    # reads it.
    data = main.__dict__.get("data")
    if not isinstance(data, (bytes, bytearray)):
        _need("traceback")
        raise TypeError("%s must leave bytes in the global `data`, not %s" % (leg, _class_name(type(data), "__name__")))
    data = bytes(data)
    fd = _os_open(data_path, _WRITE_FLAGS, 0o600)
    try:
        while data:
            data = data[_os_write(fd, data) :]
    finally:
        _os_close(fd)


def _compile(path, cache):
    # The code object of a case's source. The first compile() of a process builds the classes of the
    # ast module (a millisecond or two, and objects that change the state the case starts in), so
    # the compiled form is kept per (interpreter, environment, code) at `cache`, behind the
    # interpreter's sys.version and the file's name, and every run loads it as importlib loads a
    # .pyc: unmarshalled, then its file name set to this run's (_imp._fix_co_filename; on 2.7,
    # _refile). The run that finds no compiled form has a child of its own compile it, so that it
    # too starts the code from what it loaded. Code whose compiling says anything (a SyntaxWarning)
    # or fails is compiled by every run, so that every run says it. The source is read only to be
    # compiled.
    fix = getattr(sys.modules.get("_imp"), "_fix_co_filename", None)
    if fix is None and _PY2:
        fix = _refile
    if not cache or fix is None:
        return compile(_read(path), path, "exec", 0, True)
    marshal = _import_unseen("marshal")
    code = _load_code(cache, marshal.loads)
    if code is None:
        _need("compile")
        code = _compile_child(path, cache, marshal)
    if code is None:
        return compile(_read(path), path, "exec", 0, True)
    return fix(code, path) or code


def _refile(code, path):
    # Python 2's _imp._fix_co_filename (which it lacks): the code object and those it holds
    # with `path` as their file name, made anew (a code object cannot be changed there).
    # Without it every run compiled its code, and 2.7's first compile() builds the classes of
    # the ast module: 6.6 M instructions, two thirds of a trivial exec'd run's over `python
    # -c pass` (callgrind).
    kind = type(code)
    consts = tuple([_refile(c, path) if type(c) is kind else c for c in code.co_consts])
    return kind(code.co_argcount, code.co_nlocals, code.co_stacksize, code.co_flags, code.co_code, consts,
                code.co_names, code.co_varnames, path, code.co_name, code.co_firstlineno, code.co_lnotab,
                code.co_freevars, code.co_cellvars)


def _header(path):
    # What a compiled form is kept behind: it is only good for the interpreter that made it,
    # and under the name it was written to (which names the code it is).
    name = os.path.basename(path)
    if _PY2:
        return sys.version + b" " + name + b"\n"
    return sys.version.encode("utf-8") + b" " + name.encode("utf-8") + b"\n"


def _load_code(path, loads):
    try:
        data = _read(path)
    except OSError:
        return None
    version = _header(path)
    if data[: len(version)] != version:
        return None
    try:
        return loads(data[len(version) :])
    except Exception:
        return None
