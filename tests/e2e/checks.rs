//! Named checks in one run: `check(name)` as a context manager and a decorator,
//! `check.skip(reason)`, each check judged by the rules whose `check` names it (else `pass`),
//! shown under its run with its own traceback and re-run arguments, counted in the summary,
//! and `--lf` running again the runs that hold a failing check.

use crate::support::*;

/// Four checks in one run, each another way: one passes, one raises what the rule of its
/// glob (`lambda*`) expects, one is skipped from inside, one is a decorated function whose
/// failure another rule expects on 2.7 only (it fails everywhere: `fixed` would show if the
/// rule were wrong, so it holds on 2.7 and passes elsewhere). The code goes on after each.
const CHECKS: &str = r#"title: checks in one run
code: |
  import pickle, sys
  with check("ints"):
      assert pickle.loads(pickle.dumps(7)) == 7
  with check("lambda, protocol 2"):
      pickle.dumps(lambda: 0, 2)
  with check("frozendict"):
      if not hasattr(__builtins__, "frozendict"):
          check.skip("no frozendict before 3.15")
  @check("py2 only")
  def _():
      assert sys.version_info[0] > 2, "this is Python 2"
  REACHED = True
  assert REACHED
expect:
  - check: "lambda*"
    outcome: error
    exception: PicklingError
  - check: [py2 only]
    python: "2.7"
    outcome: fail
    match: "^this is Python 2$"
"#;

trial!(
    checks_are_judged_one_by_one,
    needs = &["2.7", "3.12", "pypy"]
);
/// On 2.7, 3.12 and PyPy: the run passes, each check has its verdict in the JSON (the lambda's
/// `xfail` with its traceback into `pickle.py` and the case file's line 7, the skip with its
/// reason), the summary counts the checks, and the command exits 0.
fn checks_are_judged_one_by_one() -> TestResult {
    let dir = folder(&[("cases/checks.yaml", CHECKS)]);
    let (run, json) = run_json(dir.path(), &args_on(&["2.7", "3.12", "pypy"], &["-j", "2"]));
    run.expect_code(0)?;
    let all = runs(&json);
    check(all.len() == 3, format!("three runs, got {}", all.len()))?;
    for r in &all {
        let python = r["python"].as_str().unwrap_or("");
        check(
            r["verdict"] == "ok",
            format!("{python}: the run itself passes: {r}"),
        )?;
        let checks = r["checks"].as_array().cloned().unwrap_or_default();
        let names: Vec<&str> = checks.iter().filter_map(|c| c["name"].as_str()).collect();
        check(
            names == ["ints", "lambda, protocol 2", "frozendict", "py2 only"],
            format!("{python}: the checks in the order they ended: {names:?}"),
        )?;
        let verdicts: Vec<&str> = checks
            .iter()
            .filter_map(|c| c["verdict"].as_str())
            .collect();
        let last = if python.contains("2.7") {
            "xfail"
        } else {
            "ok"
        };
        check(
            verdicts == ["ok", "xfail", "skipped", last],
            format!("{python}: verdicts {verdicts:?}"),
        )?;
        let lambda = &checks[1];
        let traceback = lambda["traceback"].as_str().unwrap_or("");
        check(
            lambda["outcome"] == "error"
                && lambda["exception"]
                    .as_str()
                    .is_some_and(|e| e.ends_with("PicklingError"))
                && traceback.contains("File \"cases/checks.yaml\", line 7, in <module>")
                && traceback.contains("pickle.dumps(lambda: 0, 2)"),
            format!("{python}: the lambda's own exception and traceback: {lambda}"),
        )?;
        if python.contains("2.7") {
            check(
                traceback.contains("pickle.py\", line"),
                format!(
                    "2.7's pure-Python pickler: the traceback goes into pickle.py: {traceback}"
                ),
            )?;
        }
        check(
            checks[2]["outcome"] == "skip" && checks[2]["message"] == "no frozendict before 3.15",
            format!("{python}: the skip and its reason: {}", checks[2]),
        )?;
    }
    check(
        run.stdout.contains("3 ok in ")
            && run
                .stdout
                .contains("; 12 named checks: 5 ok, 4 xfail, 3 skipped"),
        format!(
            "the summary counts the runs and the checks:\n{}",
            run.stdout
        ),
    )?;
    // `merge` reads the checks back and writes them as they were.
    let merged = crosspickle(dir.path())
        .args(["merge", "results.json", "--json", "merged.json"])
        .output()?;
    let merged_json = json_at(&dir.path().join("merged.json"));
    let checks_of = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        runs(v).iter().map(|r| r["checks"].clone()).collect()
    };
    check(
        merged.status.code() == Some(0) && checks_of(&merged_json) == checks_of(&json),
        format!(
            "merge keeps every check: exit {:?}\n{}",
            merged.status.code(),
            String::from_utf8_lossy(&merged.stdout)
        ),
    )
}

/// A round trip whose dump and load each make a check: the load's fails on every pair.
const FAILING: &str = r#"title: a failing check in a round trip
dump: |
  import pickle
  with check("dumps"):
      data = pickle.dumps({"a": 1}, 2)
load: |
  import pickle
  with check("loads"):
      got = pickle.loads(data)
  with check("is two"):
      assert got == {"a": 2}, "got %r" % (got,)
"#;

trial!(
    a_failing_check_fails_with_its_own_traceback_and_lf_runs_it_again,
    needs = &["2.7", "3.12"]
);
/// 2.7 and 3.12, both ways: the runs pass but their check `is two` fails, so the command exits
/// 1; each pair holds the dump's check (`phase: dump`) and the load's; the failures show the
/// check's own traceback (the case file's line 11), the short summary names it with its run's
/// re-run arguments; `--lf` then runs those runs again, and only those.
fn a_failing_check_fails_with_its_own_traceback_and_lf_runs_it_again() -> TestResult {
    let dir = folder(&[
        ("cases/failing.yaml", FAILING),
        ("cases/other.yaml", "title: other\ncode: pass\n"),
    ]);
    let args = args_on(&["2.7", "3.12"], &["-j", "2", "cases"]);
    let mut with_files = args.clone();
    with_files.extend(["--junit-xml", "j.xml", "--markdown", "m.md"].map(String::from));
    let (run, json) = run_json(dir.path(), &with_files);
    run.expect_code(1)?;
    // JUnit: a testcase of its own per check, after its run's; the failing one with its
    // traceback, the passing ones without.
    let junit = std::fs::read_to_string(dir.path().join("j.xml"))?;
    check(
        junit.matches(":: is two\"").count() == 4
            && junit.matches(":: dumps\"").count() == 4
            && junit.matches("<failure message=\"is two: regression: expected pass, got fail: AssertionError").count() == 4
            && junit.contains("cases/failing.yaml&quot;, line 11, in &lt;module&gt;"),
        format!("JUnit has each check as a testcase, the failing ones with their tracebacks:\n{junit}"),
    )?;
    let markdown = std::fs::read_to_string(dir.path().join("m.md"))?;
    check(
        markdown.contains("check:     is two: regression")
            && markdown.contains("--- check traceback"),
        format!("the Markdown shows the failing check under its run:\n{markdown}"),
    )?;
    let pairs: Vec<serde_json::Value> = runs(&json)
        .into_iter()
        .filter(|r| r["case"] == "failing")
        .collect();
    check(pairs.len() == 4, format!("four pairs, got {}", pairs.len()))?;
    for r in &pairs {
        let checks = r["checks"].as_array().cloned().unwrap_or_default();
        let seen: Vec<String> = checks
            .iter()
            .map(|c| format!("{} {} {}", c["name"], c["phase"], c["verdict"]))
            .collect();
        check(
            r["verdict"] == "ok"
                && seen
                    == [
                        "\"dumps\" \"dump\" \"ok\"",
                        "\"loads\" \"load\" \"ok\"",
                        "\"is two\" \"load\" \"regression\"",
                    ],
            format!("{} -> {}: {seen:?}", r["dump_python"], r["python"]),
        )?;
    }
    let out = &run.stdout;
    check(
        out.contains(
            "check:     is two: regression: expected pass, got fail: AssertionError: got {",
        ) && out.contains("  check traceback:\n")
            && out.contains("File \"cases/failing.yaml\", line 11, in <module>"),
        format!("the failing check with its own traceback:\n{out}"),
    )?;
    let summary_line = out
        .lines()
        .position(|l| l.starts_with("REGRESSION failing ") && l.contains(" check is two on "));
    let rerun = summary_line
        .and_then(|i| out.lines().nth(i + 1))
        .unwrap_or("");
    check(
        rerun.contains("-k failing") && rerun.contains("--dump-python"),
        format!("the short summary names the check and its re-run arguments:\n{out}"),
    )?;
    check(
        out.contains("; 12 named checks: 8 ok, 4 regression"),
        format!("the summary counts the checks:\n{out}"),
    )?;
    let mut lf_args = args.clone();
    lf_args.push("--lf".into());
    let (again, json) = run_json(dir.path(), &lf_args);
    again.expect_code(1)?;
    let cases: Vec<String> = runs(&json).iter().map(|r| r["case"].to_string()).collect();
    check(
        cases.len() == 4 && cases.iter().all(|c| c == "\"failing\""),
        format!(
            "--lf runs the four pairs holding a failed check, nothing else: {cases:?}\n{}",
            again.stderr
        ),
    )
}

/// A bounce whose load and relay each make checks, in one process: a rule for the load's
/// phase decides the load's check, one for the relay's the relay's, and the reload's its own.
const BOUNCED: &str = r#"title: checks in each leg of a bounce
setup: import pickle
dump: |
  data = pickle.dumps(1, 2)
load: |
  with check("read"):
      obj = pickle.loads(data)
      assert obj == 2, "loaded %r" % (obj,)
relay: |
  with check("read"):
      data = pickle.dumps(obj, 2)
      assert False, "relayed"
reload: |
  with check("read"):
      assert pickle.loads(data) == 1
expect:
  - check: read
    phase: load
    outcome: fail
    match: "^loaded 1$"
  - check: read
    phase: relay
    outcome: fail
    match: "^relayed$"
"#;

trial!(a_bounces_checks_are_each_of_its_own_leg, needs = &["3.12"]);
/// 3.12 to itself: the load's process makes a check in the load and one in the relay, each
/// judged by the rule of its own phase (the load's was taken for the relay's, as the process
/// was, and failed its rule); the reload's passes; the command exits 0.
fn a_bounces_checks_are_each_of_its_own_leg() -> TestResult {
    let dir = folder(&[("cases/bounced.yaml", BOUNCED)]);
    let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &[]));
    let all = runs(&json);
    let seen: Vec<String> = all
        .iter()
        .flat_map(|r| r["checks"].as_array().cloned().unwrap_or_default())
        .map(|c| format!("{} {} {}", c["name"], c["phase"], c["verdict"]))
        .collect();
    check(
        seen == [
            "\"read\" \"load\" \"xfail\"",
            "\"read\" \"relay\" \"xfail\"",
            "\"read\" \"reload\" \"ok\"",
        ],
        format!("each check of its own leg: {seen:?}\n{}", run.stdout),
    )?;
    run.expect_code(0)
}
