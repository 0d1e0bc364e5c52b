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
