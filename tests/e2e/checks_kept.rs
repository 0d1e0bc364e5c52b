//! Named checks are kept wherever a run goes: the checks of the earlier attempts of a run tried
//! again (`--retries`) in the JSON and as JUnit's flaky or rerun elements of the check's own
//! testcase, and the checks that ended before a run crashed (`os._exit`, a signal) or ran out
//! of time in its record, in both isolations.

use crate::support::*;

/// A check that fails on each interpreter's first attempt only (a marker per attempt, named by
/// the interpreter's version, in the folder `MARKS`), after one that always passes.
const FIRST_FAILS: &str = r#"title: a check that fails on its first attempt only
env:
  MARKS: "@MARKS@"
code: |
  import os, sys
  marks = os.environ["MARKS"]
  me = "%d.%d" % sys.version_info[:2]
  n = len([m for m in os.listdir(marks) if m.startswith(me + "-")])
  open(os.path.join(marks, "%s-%d" % (me, n)), "w").close()
  with check("steady"):
      pass
  with check("first time"):
      assert n > 0, "attempt %d fails" % (n + 1)
"#;

trial!(
    a_retried_run_keeps_each_attempts_checks,
    needs = &["2.7", "3.12"],
    tool = "xmllint"
);
/// 2.7 and 3.12 with `--retries 1`: each run is `flaky`, its check `first time` too; the
/// attempt before holds its own checks (`first time` a regression with its message); in JUnit
/// the check's testcase passes with a `<flakyFailure>` of that attempt, and the file validates;
/// `merge` keeps the attempts' checks.
fn a_retried_run_keeps_each_attempts_checks() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    let marks = d.join("marks");
    std::fs::create_dir_all(&marks)?;
    std::fs::create_dir_all(d.join("cases"))?;
    std::fs::write(
        d.join("cases/c.yaml"),
        FIRST_FAILS.replace("@MARKS@", &path_str(&marks)),
    )?;
    let junit = d.join("j.xml");
    let extra = [
        "-j",
        "2",
        "--retries",
        "1",
        "--junit-xml",
        &path_str(&junit),
    ];
    let (run, json) = run_json(d, &args_on(&["2.7", "3.12"], &extra));
    run.expect_code(0)?;
    let all = runs(&json);
    check(all.len() == 2, format!("two runs, got {}", all.len()))?;
    for r in &all {
        let python = r["python"].as_str().unwrap_or("?");
        let seen = |checks: &serde_json::Value| -> Vec<String> {
            checks
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| format!("{} {}", c["name"], c["verdict"]))
                .collect()
        };
        check(
            r["verdict"] == "flaky"
                && seen(&r["checks"]) == ["\"steady\" \"ok\"", "\"first time\" \"flaky\""],
            format!("{python}: the run and its check `first time` are flaky: {r}"),
        )?;
        let attempts = r["attempts"].as_array().cloned().unwrap_or_default();
        let first = attempts.first().cloned().unwrap_or_default();
        check(
            attempts.len() == 1
                && seen(&first["checks"]) == ["\"steady\" \"ok\"", "\"first time\" \"regression\""]
                && first["checks"][1]["message"] == "attempt 1 fails"
                && first["checks"][1]["traceback"]
                    .as_str()
                    .is_some_and(|t| t.contains("File \"cases/c.yaml\", line 13, in <module>")),
            format!("{python}: the earlier attempt keeps its own checks: {first}"),
        )?;
    }
    let xml = std::fs::read_to_string(&junit)?;
    for (start, _) in xml.match_indices(":: first time\"") {
        let case = &xml[start..];
        let case = &case[..case.find("</testcase>").unwrap_or(case.len())];
        check(
            case.contains("<flakyFailure")
                && case.contains("type=\"regression\"")
                && case.contains("attempt 1: first time: regression")
                && case.contains("line 13, in &lt;module&gt;"),
            format!("the check's testcase has the attempt's flakyFailure:\n{case}"),
        )?;
    }
    check(
        xml.matches(":: first time\"").count() == 2,
        format!("a testcase per run for the check:\n{xml}"),
    )?;
    crate::retries::xmllint(&junit)?;
    // `merge` reads the attempts' checks back and writes them as they were.
    let merged = Run::from(
        crosspickle(d)
            .args(["merge", "results.json", "--json", "merged.json"])
            .output()?,
    );
    merged.expect_code(0)?;
    let merged_json = json_at(&d.join("merged.json"));
    let attempts_of = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        runs(v).iter().map(|r| r["attempts"].clone()).collect()
    };
    check(
        attempts_of(&merged_json) == attempts_of(&json),
        format!("merge keeps the attempts' checks: {merged_json}"),
    )
}

/// Two checks end (one passes, one fails as its rule expects), then the process ends without
/// reporting: `os._exit(3)`, killed by SIGKILL, or killed at its time limit (1 s).
const CRASHES: &str = r#"title: checks that ended before the run crashed
timeout: 1
params:
  how: [exit, kill, hang]
code: |
  import os, signal, time
  with check("before"):
      pass
  with check("fails"):
      assert False, "as its rule expects"
  if how == "exit":
      os._exit(3)
  if how == "hang":
      time.sleep(60)
  os.kill(os.getpid(), signal.SIGKILL)
expect:
  - check: fails
    outcome: fail
    match: "^as its rule expects$"
  - where: {how: hang}
    outcome: timeout
  - outcome: crash
"#;

trial!(
    a_run_that_crashes_keeps_the_checks_that_ended,
    needs = &["2.7", "3.12"],
    both
);
/// On 2.7 and 3.12, in each isolation: each run crashes or times out as expected (`xfail`),
/// and each keeps the two checks that ended before, judged (`ok`, and the failure its rule
/// expects).
fn a_run_that_crashes_keeps_the_checks_that_ended(isolation: &'static str) -> TestResult {
    let dir = folder(&[("cases/crashes.yaml", CRASHES)]);
    let extra = ["-j", "2", "--isolation", isolation];
    let (run, json) = run_json(dir.path(), &args_on(&["2.7", "3.12"], &extra));
    run.expect_code(0)?;
    let all = runs(&json);
    check(all.len() == 6, format!("six runs, got {}", all.len()))?;
    for r in &all {
        let what = format!("{} {}", r["python"], r["params"]);
        let checks: Vec<String> = r["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{} {} {}", c["name"], c["outcome"], c["verdict"]))
            .collect();
        let ended = if r["params"]["how"] == "hang" {
            "timeout"
        } else {
            "crash"
        };
        check(
            r["verdict"] == "xfail"
                && r["outcome"] == ended
                && checks == ["\"before\" \"pass\" \"ok\"", "\"fails\" \"fail\" \"xfail\""],
            format!("{what}: the crash keeps the checks that ended: {checks:?}\n{r}"),
        )?;
    }
    check(
        run.stdout.contains("12 named checks: 6 ok, 6 xfail"),
        format!("the summary counts the kept checks:\n{}", run.stdout),
    )
}
