//! `crosspickle repro`: a round trip and a plain case turned into one plain Python script that
//! shows the behaviour without crosspickle, with its output on each interpreter; the script,
//! run by hand with a plain interpreter, shows the same.

use crate::support::*;

/// 3.9 pickles an IPv6 address without its scope (python/cpython gh-110196, fixed in 3.11.7
/// and 3.12.1): 3.12 loads 3.9's pickle without it, and its own with it.
const SCOPE: &str = "title: an IPv6 address keeps its scope when pickled
params:
  protocol: [2]
dump: |
  import ipaddress, pickle
  data = pickle.dumps(ipaddress.ip_address(u'fe80::1%eth0'), protocol)
load: |
  import pickle
  address = pickle.loads(data)
  assert str(address) == 'fe80::1%eth0', 'loaded %s' % address
";

const PLAIN: &str = "title: a plain case
params:
  n: [1, 2]
code: |
  assert n == 1, 'n is %d' % n
";

trial!(a_script_that_shows_the_difference, needs = &["3.9", "3.12"]);
fn a_script_that_shows_the_difference() -> TestResult {
    let dir = folder(&[("scope.yaml", SCOPE), ("plain.yaml", PLAIN)]);
    let d = dir.path();
    let (py39, py312) = (
        path_str(&python("3.9").unwrap()),
        path_str(&python("3.12").unwrap()),
    );
    let on = [
        "--pythons-toml",
        "/dev/null",
        "--python",
        &py39,
        "--python",
        &py312,
    ];
    let mut args = vec!["repro", "scope.yaml", "-o", "repro.py"];
    args.extend(on);
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(0)?;
    let script = std::fs::read_to_string(d.join("repro.py")).unwrap_or_default();
    check(
        !script.contains("crosspickle") && !script.contains("yaml") && script.contains("PICKLES"),
        format!("a plain script: {script}"),
    )?;
    check(
        run.stdout.contains("```python") && run.stdout.contains("Output on"),
        format!("the script and its outputs: {}", run.stdout),
    )?;
    // Run by hand, with 3.12: 3.9's pickle lost the scope, 3.12's kept it.
    let out = std::process::Command::new(&py312)
        .arg(d.join("repro.py"))
        .output()
        .expect("3.12 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |producer: &str| {
        text.lines()
            .find(|l| l.starts_with(producer))
            .unwrap_or("")
            .to_string()
    };
    check(
        line("cpython-3.9").ends_with("AssertionError: loaded fe80::1"),
        format!("3.9's pickle loses the scope: {text}"),
    )?;
    check(
        line("cpython-3.12").ends_with("-> ok"),
        format!("3.12's keeps it: {text}"),
    )?;
    check(
        run.stdout
            .contains(&text.lines().nth(1).unwrap_or("?").to_string()),
        "the output shown is the script's",
    )?;

    // A plain case: its code with each params combination.
    let mut args = vec!["repro", "plain.yaml"];
    args.extend(on);
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(0)?;
    check(
        run.stdout.contains("{u'n': 1} -> ok")
            || run.stdout.contains("{'n': 1} -> ok")
                && run.stdout.contains("AssertionError: n is 2"),
        format!("each combination: {}", run.stdout),
    )?;

    // Two cases: one is to be chosen.
    let mut args = vec!["repro", "."];
    args.extend(on);
    let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
    run.expect_code(2)?;
    check(
        run.stderr.contains("-k"),
        format!("says to choose with -k: {}", run.stderr),
    )
}

trial!(
    the_pypy_findings_for_upstream,
    needs = &["2.7", "3.12", "pypy3.11", "pypy8"]
);
/// The three PyPy bugs explore found, each a corpus case, as scripts for PyPy's tracker: run
/// by hand, PyPy 3.11's `timezone` pickles fail on 3.12 (slot state) and load on PyPy 3.11
/// itself; PyPy 8's C unpickler refuses protocol 0's `inf` and `nan` where 3.12 loads them;
/// PyPy 8's `_pickle` writes LONG1 and MEMOIZE below their protocols where 3.12 does not.
fn the_pypy_findings_for_upstream() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    let [py27, py312, pypy311, pypy8] =
        ["2.7", "3.12", "pypy3.11", "pypy8"].map(|n| path_str(&python(n).unwrap()));
    let by_hand = |python: &str, script: &str| {
        let out = std::process::Command::new(python)
            .arg(d.join(script))
            .output()
            .expect("the interpreter runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let lines = |text: &str, start: &str, end: &str| {
        let of: Vec<&str> = text.lines().filter(|l| l.contains(start)).collect();
        !of.is_empty() && of.iter().all(|l| l.contains(end))
    };
    for (id, script) in [
        ("pypy311-timezone-slots-state", "timezone.py"),
        ("pypy8-float-inf-nan-protocol-0", "inf.py"),
        ("pypy8-opcodes-above-protocol", "opcodes.py"),
    ] {
        let mut args = vec!["repro", "--corpus", "-k", id, "-o", script];
        args.extend(["--pythons-toml", "/dev/null"]);
        for p in [&py27, &py312, &pypy311, &pypy8] {
            args.extend(["--python", p.as_str()]);
        }
        let run = Run::from(crosspickle(d).args(&args).output().expect("runs"));
        run.expect_code(0)?;
        check(
            run.stdout.contains("Output on cpython-2.7"),
            format!("{id}: the output on each: {}", run.stdout),
        )?;
    }
    let on312 = by_hand(&py312, "timezone.py");
    let on_pypy = by_hand(&pypy311, "timezone.py");
    check(
        lines(&on312, "pypy-3.11", "AttributeError") && lines(&on312, "cpython-3.12", "-> ok"),
        format!("3.12 cannot load PyPy 3.11's timezone: {on312}"),
    )?;
    check(
        lines(&on_pypy, "pypy-3.11", "-> ok"),
        format!("PyPy 3.11 loads its own: {on_pypy}"),
    )?;
    let on8 = by_hand(&pypy8, "inf.py");
    check(
        lines(&on8, "'inf', 'unpickler': 'c'", "ValueError")
            && lines(&on8, "'nan', 'unpickler': 'c'", "ValueError")
            && lines(&on8, "'unpickler': 'py'", "-> ok"),
        format!("PyPy 8's C unpickler refuses inf and nan: {on8}"),
    )?;
    let on312 = by_hand(&py312, "inf.py");
    check(
        lines(&on312, "unpickler", "-> ok"),
        format!("3.12 loads them: {on312}"),
    )?;
    let on8 = by_hand(&pypy8, "opcodes.py");
    check(
        lines(
            &on8,
            "'protocol': 1}",
            "opcodes newer than protocol 1: LONG1, MEMOIZE",
        ),
        format!("PyPy 8 writes opcodes above the protocol: {on8}"),
    )?;
    let on27 = by_hand(&py27, "opcodes.py");
    check(
        lines(&on27, "protocol", "-> ok"),
        format!("2.7 does not: {on27}"),
    )
}
