//! One finding per cause: what shows a cause (a container's items, a protocol number in a
//! message) does not enter its signature. Values whose C and Python picklers write their items
//! as a tuple and as a list (PyPy 3.11's C pickler does so with a frozenset) are one parity
//! finding whatever the items are, and another choice of the picklers is another; one change
//! of an exception's wording, shown at two protocols, is one message-differs finding.

use crate::support::*;

const CONTAINERS: &str = r#"import sys


def by_python_pickler(caller):
    # The Python pickler (pickle.py) calls __reduce_ex__ from its own code, the C one does not.
    return caller.f_code.co_filename.endswith(("pickle.py", "pickle.pyc"))


class Items(object):
    # Reduced as PyPy 3.11's picklers reduce a frozenset: its items in a tuple for the C
    # pickler, in a list for the Python one.
    def __init__(self, items):
        self.items = list(items)

    def __reduce_ex__(self, protocol):
        if by_python_pickler(sys._getframe(1)):
            return (Items, (list(self.items),))
        return (Items, (tuple(self.items),))


class Stated(object):
    # Another choice: the Python pickler alone adds a state.
    def __reduce_ex__(self, protocol):
        if by_python_pickler(sys._getframe(1)):
            return (Stated, (), {"a": 1})
        return (Stated, ())

    def __setstate__(self, state):
        pass


def empty():
    return Items([])


def ints():
    return Items([1, 2])


def texts():
    return Items([u"a"])


def floats_and_none():
    return Items([1.5, None, 3, 4])


def pairs():
    return Items([(1, 2)])


def stated():
    return Stated()
"#;

const ON: &[&str] = &["2.7", "3.12"];

trial!(one_parity_finding_per_choice, needs = ON);
/// Five values whose items differ (none, ints, a text, a float with `None`, a tuple) and whose
/// two picklers write them as a tuple and as a list: one parity finding, `TUPLE/LIST`, on every
/// protocol (each value's first differing opcode, `EMPTY_TUPLE/EMPTY_LIST`,
/// `BININT1/EMPTY_LIST`, `FRAME`…, made eleven before); a state one pickler alone writes is a
/// second. The case files pass on the interpreters explored.
fn one_parity_finding_per_choice() -> TestResult {
    let dir = folder(&[("containers.py", CONTAINERS)]);
    let d = dir.path();
    let findings = explore_findings(
        d,
        ON,
        &["--values", "containers.py", "--count", "6", "--out", "out"],
    )?;
    let parity: Vec<_> = of_oracle(&findings, "parity");
    let summary: Vec<String> = parity
        .iter()
        .map(|f| format!("{} {}", f["signature"], f["value"]))
        .collect();
    check(
        parity.len() == 2,
        format!("two parity findings, one per choice: {summary:#?}"),
    )?;
    let of = |builder: &str| {
        parity.iter().find(|f| {
            f["value"]
                .as_str()
                .is_some_and(|v| v.contains(&format!(".{builder}()")))
        })
    };
    let Some(items) = parity.iter().find(|f| {
        f["value"]
            .as_str()
            .is_some_and(|v| !v.contains(".stated()"))
    }) else {
        return check(false, format!("no parity finding of Items: {summary:#?}"));
    };
    check(
        items["cause"] == "TUPLE/LIST",
        format!("the containers chosen: {}", items["cause"]),
    )?;
    let protocols: Vec<String> = items["protocols"]
        .as_array()
        .map(|ps| ps.iter().map(|p| p.to_string()).collect())
        .unwrap_or_default();
    check(
        ["0", "1", "2", "3", "4", "5"]
            .iter()
            .all(|p| protocols.contains(&p.to_string())),
        format!("every protocol of 3.12 in one finding: {protocols:?}"),
    )?;
    check(
        items["occurrences"].as_u64() == Some(5),
        format!("the five values of Items counted: {}", items["occurrences"]),
    )?;
    let Some(stated) = of("stated") else {
        return check(false, format!("no parity finding of Stated: {summary:#?}"));
    };
    check(
        stated["cause"] != items["cause"],
        format!("another choice, another cause: {}", stated["cause"]),
    )?;
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(ON, &["out"]));
    let (run, _) = run_json(d, &run_args);
    run.expect_code(0)
}

const SLOTS: &str = r#"class Slots(object):
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


def slots():
    return Slots(b"")
"#;

const WORDING: &[&str] = &["3.6", "3.8", "3.12", "pypy"];

trial!(one_message_finding_per_wording, needs = WORDING);
/// 3.8 and PyPy 3.9 refuse to pickle a class with `__slots__` at protocols 0 and 1 with
/// another message than 3.6 and 3.12 (`cannot pickle 'Slots' object: … with protocol 0`):
/// one message-differs finding of both protocols, the protocol's number masked in its cause
/// (two findings before, one per number).
fn one_message_finding_per_wording() -> TestResult {
    let dir = folder(&[("slots.py", SLOTS)]);
    let d = dir.path();
    let findings = explore_findings(d, WORDING, &["--values", "slots.py", "--count", "1"])?;
    let messages: Vec<_> = of_oracle(&findings, "message-differs");
    let summary: Vec<String> = messages
        .iter()
        .map(|f| f["signature"].to_string())
        .collect();
    check(
        messages.len() == 1,
        format!("one message-differs finding: {summary:#?}"),
    )?;
    let f = messages[0];
    check(
        f["protocols"] == serde_json::json!([0, 1]),
        format!("both protocols in it: {}", f["protocols"]),
    )?;
    check(
        f["cause"]
            .as_str()
            .is_some_and(|c| c.contains("with protocol ?") && c.contains("'?' object")),
        format!("the value's parts masked: {}", f["cause"]),
    )?;
    check(
        f["detail"]
            .as_str()
            .is_some_and(|d| d.contains("'Slots'") && d.contains("protocol ")),
        format!("the message itself kept: {}", f["detail"]),
    )
}

const FROZENSETS: &str = r#"import array


def empty():
    return frozenset()


def ints():
    return frozenset([1, 2])


def texts():
    return frozenset([u"a"])


def mixed():
    return frozenset([1.5, None, 3, 4])


def pairs():
    return frozenset([(1, 2)])


def same_bytes_twice():
    return {b"\xff\xfe": b"\xff\xfe"}


def doubles():
    return array.array("d")
"#;

trial!(pypy8_frozensets_are_one_finding, needs = &["pypy8"]);
/// PyPy 8's C pickler writes a frozenset's items as a tuple, its Python pickler as a list
/// (protocols 0 to 3): five frozensets of other items are one parity finding, `TUPLE/LIST`
/// (ten before, one per first differing opcode and protocol). Its C pickler reads from its
/// memo an equal bytes (at every protocol) and a module's name (protocols 4 and 5) that the
/// Python one writes again: one finding each, named by what is read, `memo: c only, bytes`
/// and `memo: c only, text` (before: `memo: c only` and, at protocols 0 to 2, where the Python
/// pickler memoizes the global that writes a bytes first, `memo: py only`).
fn pypy8_frozensets_are_one_finding() -> TestResult {
    let dir = folder(&[("frozensets.py", FROZENSETS)]);
    let d = dir.path();
    let findings = explore_findings(
        d,
        &["pypy8"],
        &["--values", "frozensets.py", "--count", "7"],
    )?;
    let parity: Vec<_> = of_oracle(&findings, "parity");
    let causes: Vec<&str> = parity.iter().filter_map(|f| f["cause"].as_str()).collect();
    check(
        causes.len() == 3
            && ["TUPLE/LIST", "memo: c only, bytes", "memo: c only, text"]
                .iter()
                .all(|c| causes.contains(c)),
        format!("three causes, one finding each: {causes:?}"),
    )?;
    let tuples = parity
        .iter()
        .find(|f| f["cause"] == "TUPLE/LIST")
        .expect("checked above");
    check(
        tuples["protocols"] == serde_json::json!([0, 1, 2, 3])
            && tuples["occurrences"].as_u64() == Some(5),
        format!(
            "the five frozensets at protocols 0 to 3: {} {}",
            tuples["protocols"], tuples["occurrences"]
        ),
    )
}

trial!(
    two_unpicklers_refusing_otherwise_are_one_load_finding,
    needs = &["2.7", "pypy8"]
);
/// PyPy 8's C pickler writes `MEMOIZE` (protocol 4) into protocols 1 and 2: 2.7's cPickle
/// refuses the pickle with `UnpicklingError`, its pickle.py with `KeyError`. One load-differs
/// finding names what each did (two before, one per unpickler), beside the unpickler-parity
/// finding; the case files pass on the two interpreters.
fn two_unpicklers_refusing_otherwise_are_one_load_finding() -> TestResult {
    const ON: &[&str] = &["2.7", "pypy8"];
    let dir = folder(&[("texts.py", "def texts():\n    return [u\"\"]\n")]);
    let d = dir.path();
    let findings = explore_findings(
        d,
        ON,
        &["--values", "texts.py", "--count", "1", "--out", "out"],
    )?;
    let refused: Vec<_> = findings
        .iter()
        .filter(|f| {
            f["oracle"] == "load-differs"
                && f["protocols"]
                    .as_array()
                    .is_some_and(|p| p.contains(&serde_json::json!(1)))
        })
        .collect();
    let summary: Vec<String> = findings
        .iter()
        .map(|f| format!("{} {}", f["signature"], f["protocols"]))
        .collect();
    check(
        refused.len() == 1,
        format!("one load-differs finding at protocol 1: {summary:#?}"),
    )?;
    let f = refused[0];
    check(
        f["cause"] == "c=UnpicklingError py=KeyError"
            && f["unpicklers"] == serde_json::json!(["c", "py"]),
        format!("what each unpickler did, both in it: {f:#}"),
    )?;
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(ON, &["out"]));
    let (run, _) = run_json(d, &run_args);
    run.expect_code(0)
}

const AWARE: &str = "import datetime


def aware():
    return datetime.time(11, 44, 38, tzinfo=datetime.timezone(datetime.timedelta(0)))
";

const TZ: &[&str] = &["3.8", "3.12", "3.13", "3.14", "pypy8"];

trial!(one_message_finding_whichever_wording_leads, needs = TZ);
/// CPython cannot load PyPy 8's pickle of an aware `time` (`AttributeError`), and 3.13 added
/// words to the message. Which wording is the reference follows who has the protocol: 3.8
/// and 3.12 at protocols 0 to 4, 3.13 and 3.14 at 5 (with PyPy 8's own). One message-differs
/// finding names both wordings (two before, one per reference).
fn one_message_finding_whichever_wording_leads() -> TestResult {
    let dir = folder(&[("aware.py", AWARE)]);
    let d = dir.path();
    let findings = explore_findings(d, TZ, &["--values", "aware.py", "--count", "1"])?;
    let messages: Vec<_> = of_oracle(&findings, "message-differs");
    let summary: Vec<String> = findings
        .iter()
        .map(|f| format!("{} {}", f["signature"], f["protocols"]))
        .collect();
    check(
        messages.len() == 1,
        format!("one message-differs finding: {summary:#?}"),
    )?;
    let f = messages[0];
    check(
        f["cause"].as_str().is_some_and(|c| {
            c.contains(" | ") && c.contains("no __dict__ for setting new attributes")
        }) && f["protocols"].as_array().is_some_and(|p| p.len() >= 6),
        format!("both wordings, every protocol: {f:#}"),
    )
}

const SHRINK: &[&str] = &["2.7", "3.8", "3.9", "3.10", "3.11", "3.12", "pypy"];

trial!(a_message_change_shrinks_to_one_finding, needs = SHRINK);
/// 3.8 to 3.10 and PyPy 3.9 word the refusal of a class with `__slots__` otherwise. Generated
/// values show it inside values that only some interpreters build (`int | None` on 3.10 and
/// later, a `ZoneInfo` on 3.9 and later): shrunk on a producer and its witness alone, the two
/// wordings tied and the reference flipped, so such a value was never shrunk and each was a
/// finding of its own sides (three, six on main). Now each shrinks to the same `Slots` and
/// the run has one finding of that wording.
fn a_message_change_shrinks_to_one_finding() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    let findings = explore_findings(d, SHRINK, &["--seed", "7", "--count", "800"])?;
    let slots: Vec<String> = findings
        .iter()
        .filter(|f| {
            f["oracle"] == "message-differs"
                && f["cause"].as_str().is_some_and(|c| c.contains("__slots__"))
        })
        .map(|f| format!("{} {}", f["signature"], f["value"]))
        .collect();
    check(
        slots.len() == 1,
        format!("one finding of the __slots__ wording: {slots:#?}"),
    )
}

const REDUCERS: &str = r#"import sys


def by_python_pickler(caller):
    return caller.f_code.co_filename.endswith(("pickle.py", "pickle.pyc"))


def build_a(x):
    return Swapped(x)


def build_b(x):
    return Swapped(x)


def make_c(x):
    return Other(x)


def make_d(x):
    return Other(x)


class Swapped(object):
    # The C pickler reduces it with build_a, the Python one with build_b.
    def __init__(self, x):
        self.x = x

    def __reduce_ex__(self, protocol):
        if by_python_pickler(sys._getframe(1)):
            return (build_b, (self.x,))
        return (build_a, (self.x,))


class Other(object):
    # Another pair of globals: make_c and make_d.
    def __init__(self, x):
        self.x = x

    def __reduce_ex__(self, protocol):
        if by_python_pickler(sys._getframe(1)):
            return (make_d, (self.x,))
        return (make_c, (self.x,))


def swapped_int():
    return Swapped(1)


def swapped_text():
    return Swapped(u"a")


def other():
    return Other(1)
"#;

trial!(one_parity_finding_per_pair_of_globals, needs = ON);
/// Two classes whose C and Python picklers reduce them with different functions (`build_a`
/// against `build_b`, `make_c` against `make_d`): two parity findings, each naming its two
/// globals by module and name, each on every protocol, `GLOBAL` at 0 to 3 and `STACK_GLOBAL`
/// at 4 and 5 alike; the two values of `Swapped` are one. Before, the globals were compared
/// by opcode alone: one finding `GLOBAL` (protocols 0 to 3) and one `SHORT_BINUNICODE` (4
/// and 5, where the names' texts differ), each mixing both classes. The case files pass on
/// the interpreters explored.
fn one_parity_finding_per_pair_of_globals() -> TestResult {
    let dir = folder(&[("reducers.py", REDUCERS)]);
    let d = dir.path();
    let findings = explore_findings(
        d,
        ON,
        &["--values", "reducers.py", "--count", "3", "--out", "out"],
    )?;
    let parity: Vec<_> = of_oracle(&findings, "parity");
    let summary: Vec<String> = parity
        .iter()
        .map(|f| format!("{} {} {}", f["signature"], f["protocols"], f["value"]))
        .collect();
    check(
        parity.len() == 2,
        format!("two parity findings, one per pair of globals: {summary:#?}"),
    )?;
    for (pair, occurrences) in [
        ("GLOBAL reducers.build_a/GLOBAL reducers.build_b", 2),
        ("GLOBAL reducers.make_c/GLOBAL reducers.make_d", 1),
    ] {
        let Some(f) = parity.iter().find(|f| f["cause"] == pair) else {
            return check(false, format!("no finding {pair}: {summary:#?}"));
        };
        check(
            f["protocols"] == serde_json::json!([0, 1, 2, 3, 4, 5, "default"])
                && f["occurrences"].as_u64() == Some(occurrences),
            format!(
                "{pair}: every protocol of 3.12, {occurrences} values: {} {}",
                f["protocols"], f["occurrences"]
            ),
        )?;
    }
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(ON, &["out"]));
    let (run, _) = run_json(d, &run_args);
    run.expect_code(0)
}

const NAN: &str = r#"def zero():
    return 0


def nan():
    return float("nan")


def nan_in_a_list():
    return [float("nan")]
"#;

const REFUSING: &[&str] = &["2.7", "3.14", "pypy8"];

trial!(one_load_finding_per_place_raised, needs = REFUSING);
/// Two causes of one exception type: 2.7 refuses the newer default protocols of 3.14 and PyPy
/// 8 (`ValueError`, raised in cPickle's C code and in pickle.py's `load_proto`), and PyPy 8's
/// C unpickler refuses 2.7's protocol 0 `nan` (`ValueError`, in its C code too), which its
/// Python unpickler loads. A `nan` shows both: two findings, the second named by its wording;
/// before, the `nan`'s was one finding of both causes, its consumers
/// 2.7 and PyPy 8, beside the protocol's own. Each cause stays one finding whatever value
/// shows it (0, `nan`, `[nan]`), and the case files pass on the three.
fn one_load_finding_per_place_raised() -> TestResult {
    let dir = folder(&[("nan.py", NAN)]);
    let d = dir.path();
    let findings = explore_findings(
        d,
        REFUSING,
        &["--values", "nan.py", "--count", "3", "--out", "out"],
    )?;
    let refused: Vec<_> = findings
        .iter()
        .filter(|f| f["oracle"] == "load-differs" && f["observed"] == "ValueError")
        .collect();
    let summary: Vec<String> = refused
        .iter()
        .map(|f| format!("{} {} x{}", f["signature"], f["value"], f["occurrences"]))
        .collect();
    check(
        refused.len() == 2,
        format!("two ValueError findings, one per cause: {summary:#?}"),
    )?;
    let Some(protocol) = refused
        .iter()
        .find(|f| sites(f).contains(&"pickle.load_proto".to_string()))
    else {
        return check(false, format!("no refusal of a protocol: {summary:#?}"));
    };
    check(
        protocol["signature"]
            .as_str()
            .is_some_and(|s| s.ends_with("> cpython 2.7"))
            && protocol["occurrences"].as_u64() == Some(3),
        format!("2.7 alone refuses the protocols, of all three values: {summary:#?}"),
    )?;
    let Some(nan) = refused
        .iter()
        .find(|f| !sites(f).contains(&"pickle.load_proto".to_string()))
    else {
        return check(false, format!("no refusal of a nan: {summary:#?}"));
    };
    check(
        nan["cause"] == "ValueError: could not convert string to float"
            && sites(nan) == ["_pickle"]
            && nan["signature"]
                .as_str()
                .is_some_and(|s| s.ends_with("> pypy"))
            && nan["occurrences"].as_u64() == Some(2),
        format!("PyPy 8 alone refuses a nan, of both values that hold one: {summary:#?}"),
    )?;
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(REFUSING, &["out"]));
    let (run, _) = run_json(d, &run_args);
    run.expect_code(0)
}

const SHARED: &str = r#"import sys


def by_python_pickler(caller):
    return caller.f_code.co_filename.endswith(("pickle.py", "pickle.pyc"))


class Stated3(object):
    # On Python 3 the Python pickler alone adds a state; on 2.7 both picklers write the same.
    def __reduce_ex__(self, protocol):
        if sys.version_info[0] >= 3 and by_python_pickler(sys._getframe(1)):
            return (Stated3, (), {"a": 1})
        return (Stated3, ())

    def __setstate__(self, state):
        pass


def shared():
    x = [1]
    return [Stated3(), x, x]
"#;

trial!(a_parity_case_numbers_the_memo_as_explore_does, needs = ON);
/// A parity case compares what explore compared: on 2.7, where cPickle numbers its memo from 1,
/// pickle.py from 0 and `pickletools.optimize` does not renumber, a value with a shared list
/// is written alike by both picklers once the memo is numbered alike, so its case, written
/// from 3.12's difference, expects a pass on 2.7 and gets it (the case compared the optimized
/// pickles alone before and failed there: `lp4` against `lp3`).
fn a_parity_case_numbers_the_memo_as_explore_does() -> TestResult {
    let dir = folder(&[("shared.py", SHARED)]);
    let d = dir.path();
    let findings = explore_findings(
        d,
        ON,
        &["--values", "shared.py", "--count", "1", "--out", "out"],
    )?;
    let parity = of_oracle(&findings, "parity");
    check(
        parity.len() == 1,
        format!("one parity finding, 3.12's state: {findings:#?}"),
    )?;
    check(
        !parity[0]["signature"]
            .as_str()
            .unwrap_or_default()
            .contains("2.7"),
        format!("2.7's picklers agree: {}", parity[0]["signature"]),
    )?;
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(ON, &["out"]));
    let (run, json) = run_json(d, &run_args);
    run.expect_code(0)?;
    let on_27: Vec<_> = runs(&json)
        .iter()
        .filter(|r| {
            r["python"]
                .as_str()
                .is_some_and(|p| p.starts_with("cpython-2.7"))
        })
        .filter(|r| r["case"].as_str().is_some_and(|c| c.contains("parity")))
        .map(|r| r["verdict"].as_str().unwrap_or_default().to_string())
        .collect();
    check(
        !on_27.is_empty() && on_27.iter().all(|v| v == "ok"),
        format!("the parity case on 2.7: {on_27:?}"),
    )
}

const BUFFERS: &str = r#"import pickle


class NewArgsEx(object):
    def __new__(cls, a):
        self = object.__new__(cls)
        self.a = a
        return self

    def __getnewargs_ex__(self):
        return ((self.a,), {})


def buffer_in_newargs():
    return NewArgsEx(pickle.PickleBuffer(bytearray(b"")))
"#;

const ASSERTS: &[&str] = &["3.12", "3.13"];

trial!(
    a_dump_that_fails_an_assert_is_written_as_fail,
    needs = ASSERTS
);
/// 3.12's Python pickler fails `memoize`'s assert on a `PickleBuffer` among the arguments of
/// `__getnewargs_ex__` at protocol 5 (3.13 does not): the case file expects `fail` with
/// `AssertionError`, which is what a run that raises it is (an `error` rule made every such
/// run `changed`, so the files of a run did not pass on the interpreters it explored).
fn a_dump_that_fails_an_assert_is_written_as_fail() -> TestResult {
    let dir = folder(&[("buffers.py", BUFFERS)]);
    let d = dir.path();
    let findings = explore_findings(
        d,
        ASSERTS,
        &["--values", "buffers.py", "--count", "1", "--out", "out"],
    )?;
    let dumps = of_oracle(&findings, "dump-differs");
    check(
        dumps.iter().any(|f| f["observed"] == "AssertionError"),
        format!("3.12's assert, a dump-differs finding: {findings:#?}"),
    )?;
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(ASSERTS, &["out"]));
    let (run, json) = run_json(d, &run_args);
    let changed: Vec<String> = runs(&json)
        .iter()
        .filter(|r| r["verdict"] != "ok" && r["verdict"] != "xfail")
        .map(|r| format!("{} {}: {}", r["case"], r["verdict"], r["outcome"]))
        .collect();
    check(
        changed.is_empty(),
        format!("every run ok or xfail: {changed:#?}"),
    )?;
    run.expect_code(0)
}

const BYTES_IN_DICTS: &str = r#"def alone():
    return b""


def in_a_dict():
    return {0: b"", b"": b""}


def shared():
    v0 = []
    return {2.2250738585072014e-308: v0, b"": v0}


def in_a_frozenset():
    return frozenset([(u"", b""), (b"", (), b"")])
"#;

trial!(
    bytes_loaded_as_str_are_one_cause_where_they_sort,
    needs = &["2.7", "3.12"]
);
/// 2.7's `str` loads as `str` on 3 (`bytes->str`), also inside a dict or a frozenset, whose
/// pairs and items, described in order, sort elsewhere once a key's type changed: paired by
/// what they hold, the four values are one cause and one finding (the 600 s run of seed 7 on
/// 19 interpreters named them `bytes->str`, `bytes->int`, `bytes->float` and `list differs`:
/// four findings).
fn bytes_loaded_as_str_are_one_cause_where_they_sort() -> TestResult {
    let dir = folder(&[("bytes.py", BYTES_IN_DICTS)]);
    let findings = explore_findings(
        dir.path(),
        &["2.7", "3.12"],
        &["--values", "bytes.py", "--count", "4"],
    )?;
    let values = of_oracle(&findings, "value-differs");
    let causes: Vec<&str> = values.iter().filter_map(|f| f["cause"].as_str()).collect();
    check(
        causes == ["bytes->str"] && values[0]["occurrences"].as_u64() == Some(4),
        format!(
            "one value-differs finding, bytes->str, shown by the four values: {causes:?} {}",
            values
                .first()
                .map_or(serde_json::Value::Null, |f| f["occurrences"].clone())
        ),
    )
}

trial!(
    two_causes_in_one_value_are_shrunk_apart,
    needs = &["2.7", "pypy8"]
);
/// Value 257 of seed 7, `OrderedDict([(None, complex(-2.5, float('-inf'))), (b'\x80', b'')])`,
/// holds two causes for PyPy 8 loading 2.7's protocol 0: its C unpickler refuses the `inf`
/// (`ValueError`), which its Python unpickler loads, and the Python one then refuses the 2.7
/// `str` that is not ASCII (`UnicodeDecodeError`). Both unpicklers refusing, each with its own
/// type, made a load-differs and an unpickler-parity finding of their own,
/// `c=ValueError py=UnicodeDecodeError`; shrunk apart, each part is the finding of its cause,
/// and no finding holds the two.
fn two_causes_in_one_value_are_shrunk_apart() -> TestResult {
    let dir = folder(&[]);
    let findings = explore_findings(
        dir.path(),
        &["2.7", "pypy8"],
        &["--seed", "7", "--count", "260"],
    )?;
    let observed: Vec<String> = findings
        .iter()
        .map(|f| format!("{} {}", f["oracle"], f["observed"]))
        .collect();
    let both = observed
        .iter()
        .filter(|o| o.contains("c=") && !o.contains("=ok") && o.contains("ValueError"))
        .count();
    check(
        both == 0
            && observed.iter().any(|o| o.contains("c=ValueError py=ok"))
            && observed.iter().any(|o| o.contains("UnicodeDecodeError")),
        format!("each cause alone, none holding the two: {observed:#?}"),
    )
}

const BUFFERS_IN_BAND: &str = r#"import pickle


def a_key_and_its_buffer():
    # pickle.py of 3.8 to 3.12 writes a PickleBuffer's bytes in band and memoizes them without
    # looking in its memo first: b'' is one object, already memoized as the key.
    return {b'': pickle.PickleBuffer(b'')}


def a_byte_and_its_buffer():
    # The same cause, where the buffer's one byte is the object before it: on PyPy alone.
    return (b'\n', pickle.PickleBuffer(b'\n'))
"#;

const IN_BAND: &[&str] = &["3.8", "3.12", "3.13", "pypy"];

trial!(
    a_cause_shown_by_fewer_is_the_finding_before,
    needs = IN_BAND
);
/// Two values whose Python pickler raises `AssertionError` in `pickle.memoize` at protocol 5,
/// the first on 3.8, 3.12 and PyPy 3.9, the second on PyPy alone (3.13 pickles both): one
/// cause, raised at the same place, the second shown by fewer interpreters. One finding, the
/// first value's (two before, `cpython 3.8-3.12, pypy` and `pypy`); the same from two shards
/// merged, each of which found one of them.
fn a_cause_shown_by_fewer_is_the_finding_before() -> TestResult {
    let dir = folder(&[("buffers.py", BUFFERS_IN_BAND)]);
    one_finding_whole_and_sharded(
        dir.path(),
        IN_BAND,
        ("buffers.py", "2"),
        |f| f["oracle"] == "dump-differs" && f["observed"] == "AssertionError",
        "at pickle.memoize | cpython 3.8-3.12, pypy (value 0)",
    )
}

const BUFFERS_WIDER_LATER: &str = r#"import pickle


def a_byte_and_its_buffer():
    # pickle.py of 3.8 to 3.12 writes a PickleBuffer's bytes in band and memoizes them without
    # looking in its memo first: this one byte is the object before it on PyPy alone.
    return (b'\n', pickle.PickleBuffer(b'\n'))


def a_key_and_its_buffer():
    # The same cause on CPython too: b'' is one object, already memoized as the key.
    return {b'': pickle.PickleBuffer(b'')}
"#;

trial!(
    a_cause_shown_by_more_later_is_the_one_finding,
    needs = IN_BAND
);
/// The two values above in the other order: the first shows the cause on PyPy alone, the
/// second on 3.8, 3.12 and PyPy. One finding, the second value's, which takes the place of the
/// first's (two before, `pypy` and the wider `cpython 3.8-3.12, pypy`: only a finding from a
/// later value that was within an earlier one was left out); the same from two shards merged,
/// each of which found one of them.
fn a_cause_shown_by_more_later_is_the_one_finding() -> TestResult {
    let dir = folder(&[("buffers.py", BUFFERS_WIDER_LATER)]);
    one_finding_whole_and_sharded(
        dir.path(),
        IN_BAND,
        ("buffers.py", "2"),
        |f| f["oracle"] == "dump-differs" && f["observed"] == "AssertionError",
        "at pickle.memoize | cpython 3.8-3.12, pypy (value 1)",
    )
}

const TEXTS_WRITTEN_AGAIN: &str = r#"def a_byte_and_a_text():
    # pickle.py of 2.7 and 3.6 to 3.12 memoizes, at protocol 0, the escaped copy of a text it
    # writes, not the text: a text met again is written again where the C pickler reads it
    # from its memo. Here '\x00' is one object on 3.7 to 3.12 alone.
    return [b'\x00', u'\x00']


def a_newline_by_way_of_bytes():
    # '\n' is one object on 3.6 to 3.12 (protocol 0 writes a bytes by way of a text).
    return {u'': u'\n', b'\n': 0.5}


def one_text_twice():
    # On 2.7 too.
    text = u'a\\b\n'
    return (text, text)
"#;

/// Where `pickle.py` writes a text again that the C pickler reads from its memo.
const WRITTEN_AGAIN: &[&str] = &["2.7", "3.6", "3.7", "3.12", "3.13"];

trial!(a_text_written_again_is_one_finding, needs = WRITTEN_AGAIN);
/// The three values above show one cause, a text the C pickler reads from its memo and
/// `pickle.py` writes again at protocol 0, on more interpreters each: one parity finding, the
/// last value's, named by the object's type (three before, each `memo: c only`, on 3.7-3.12,
/// 3.6-3.12 and 2.7-3.12); the same from two shards merged.
fn a_text_written_again_is_one_finding() -> TestResult {
    let dir = folder(&[("texts.py", TEXTS_WRITTEN_AGAIN)]);
    one_finding_whole_and_sharded(
        dir.path(),
        WRITTEN_AGAIN,
        ("texts.py", "3"),
        |f| f["oracle"] == "parity",
        "parity memo: c only, text | cpython 2.7-3.12 (value 2)",
    )
}

/// `explore --values FILE --count N` on `on` (`values` is `FILE` and `N`, the number of its
/// values) finds, of the findings `pick` keeps, one whose signature and value number end with
/// `expected`; each of the shards 1/2 and 2/2 finds one (of its own values), and the two
/// merged give the whole run's.
fn one_finding_whole_and_sharded(
    d: &std::path::Path,
    on: &[&str],
    values: (&str, &str),
    pick: impl Fn(&serde_json::Value) -> bool,
    expected: &str,
) -> TestResult {
    let [whole, one, two, merged] =
        explored_whole_and_sharded(d, on, values)?.map(|report| findings_of(&report, &pick));
    check(
        whole.len() == 1 && whole[0].ends_with(expected),
        format!("one finding, ending `{expected}`: {whole:#?}"),
    )?;
    check(
        one.len() == 1 && two.len() == 1,
        format!("each shard found its value's: {one:#?} / {two:#?}"),
    )?;
    check(
        merged == whole,
        format!("the merge has the whole run's one finding: {merged:#?}"),
    )
}

/// The signatures and value numbers of a report's findings that `pick` keeps.
fn findings_of(
    report: &serde_json::Value,
    pick: impl Fn(&serde_json::Value) -> bool,
) -> Vec<String> {
    let all = report["findings"].as_array().cloned().unwrap_or_default();
    all.iter()
        .filter(|f| pick(f))
        .map(|f| {
            format!(
                "{} (value {})",
                f["signature"].as_str().unwrap_or("?"),
                f["index"]
            )
        })
        .collect()
}

/// `explore --values FILE --count N` on `on` (`values`: `FILE` and `N`), whole, as shards 1/2
/// and 2/2, and those two merged: the four JSON reports (each run finds something: exit 1).
fn explored_whole_and_sharded(
    d: &std::path::Path,
    on: &[&str],
    (values, count): (&str, &str),
) -> Result<[serde_json::Value; 4], libtest_mimic::Failed> {
    let explore =
        |name: &str, extra: &[&str]| -> Result<serde_json::Value, libtest_mimic::Failed> {
            let json = format!("{name}.json");
            let mut all = vec!["--values", values, "--count", count, "--out", name];
            all.extend(["--json", &json]);
            all.extend(extra);
            let mut args = vec!["explore".to_string()];
            args.extend(args_on(on, &all));
            let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
            run.expect_code(1)?;
            Ok(json_at(&d.join(&json)))
        };
    let whole = explore("whole", &[])?;
    let one = explore("one", &["--partition", "1/2"])?;
    let two = explore("two", &["--partition", "2/2"])?;
    let merged = Run::from(
        crosspickle(d)
            .args(["merge", "one.json", "two.json", "--json", "merged.json"])
            .output()
            .expect("runs"),
    );
    merged.expect_code(1)?;
    Ok([whole, one, two, json_at(&d.join("merged.json"))])
}
