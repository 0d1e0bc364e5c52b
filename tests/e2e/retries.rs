//! `--retries` and `--flaky-result`: a case that fails on its first attempt only (it leaves a
//! marker file in a folder passed through its `env`) is `flaky` in every report with
//! `--retries 2` and exit 0, fails the run with `--flaky-result fail`, and fails without
//! retries; a case that always fails keeps every attempt; a round trip is tried again with a
//! dump of its own. The JUnit files are validated with xmllint against junit-10.xsd, whose
//! testcase has Maven Surefire's `flakyFailure` and `rerunFailure` elements.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

/// Fails while the folder `MARKS` holds fewer than `FAILS` markers, leaving one each attempt.
const FIRST_FAILS: &str = r#"title: fails on its first attempt only
env:
  MARKS: "@MARKS@"
code: |
  import os
  marks = os.environ["MARKS"]
  n = len(os.listdir(marks))
  open(os.path.join(marks, "attempt-%d" % n), "w").close()
  if n < @FAILS@:
      raise ValueError("attempt %d fails" % (n + 1))
"#;

/// A round trip whose load fails on its first attempt; each dump leaves a marker too.
const ROUND_TRIP: &str = r#"title: a round trip whose first load fails
env:
  MARKS: "@MARKS@"
dump: |
  import os, pickle
  marks = os.environ["MARKS"]
  open(os.path.join(marks, "dump-%d" % len(os.listdir(marks))), "w").close()
  data = pickle.dumps([1, 2])
load: |
  import os, pickle
  marks = os.environ["MARKS"]
  loads = [m for m in os.listdir(marks) if m.startswith("load")]
  open(os.path.join(marks, "load-%d" % len(loads)), "w").close()
  if not loads:
      raise ValueError("first load fails")
  assert pickle.loads(data) == [1, 2]
"#;

fn schema() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        root.join("../shared/junit/junit-10.xsd"),
        PathBuf::from("/work/shared/junit/junit-10.xsd"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| "junit-10.xsd not found in ../shared/junit/".to_string())
}

/// Whether `file` validates against junit-10.xsd (with Maven Surefire's rerun elements).
pub(crate) fn xmllint(file: &Path) -> TestResult {
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema()?)
        .arg(file)
        .output()
        .map_err(|e| format!("xmllint (apt-get install libxml2-utils): {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    check(
        out.status.success() && stderr.contains("validates"),
        format!("{} does not validate:\n{stderr}", file.display()),
    )
}

/// A case folder whose case fails its first `fails` attempts, with an empty marker folder.
fn setup(template: &str, fails: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = folder(&[]);
    let marks = dir.path().join("marks");
    std::fs::create_dir(&marks).unwrap();
    let text = template
        .replace("@MARKS@", &path_str(&marks))
        .replace("@FAILS@", &fails.to_string());
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    std::fs::write(dir.path().join("cases/c.yaml"), text).unwrap();
    (dir, marks)
}

/// crosspickle with every report, as `out.json|xml|md|html` in `dir`.
fn run_all(dir: &Path, extra: &[&str]) -> Result<(Run, serde_json::Value), libtest_mimic::Failed> {
    let mut args = python_args(&["3.12"]);
    args.extend(extra.iter().map(|a| a.to_string()));
    let out = crosspickle(dir)
        .args(&args)
        .args(["cases", "--json", "out.json", "--junit-xml", "out.xml"])
        .args(["--markdown", "out.md", "--html", "out.html"])
        .output()?;
    Ok((Run::from(out), json_at(&dir.join("out.json"))))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

trial!(flaky_in_every_report, needs = &["3.12"], tool = "xmllint");
fn flaky_in_every_report() -> TestResult {
    let (dir, _) = setup(FIRST_FAILS, 1);
    let d = dir.path();
    let (run, json) = run_all(d, &["--retries", "2"])?;
    run.expect_code(0)?;
    let r = &runs(&json)[0];
    let attempts = r["attempts"].as_array().cloned().unwrap_or_default();
    check(
        r["verdict"] == "flaky"
            && r["outcome"] == "pass"
            && attempts.len() == 1
            && attempts[0]["verdict"] == "regression"
            && attempts[0]["exception"] == "ValueError"
            && attempts[0]["message"] == "attempt 1 fails",
        format!("JSON: flaky, its failing first attempt kept: {r}"),
    )?;
    flaky_shown(d, &run)?;

    // --flaky-result fail: the same flaky run fails the run.
    let (dir, _) = setup(FIRST_FAILS, 1);
    let (run, json) = run_all(dir.path(), &["--retries", "2", "--flaky-result", "fail"])?;
    run.expect_code(1)?;
    check(
        runs(&json)[0]["verdict"] == "flaky",
        "still flaky with --flaky-result fail",
    )?;
    // merge says the same of the same file.
    let merge = |extra: &[&str]| {
        Run::from(
            crosspickle(dir.path())
                .args(["merge", "out.json"])
                .args(extra)
                .output()
                .expect("crosspickle runs"),
        )
    };
    merge(&[]).expect_code(0)?;
    merge(&["--flaky-result", "fail"]).expect_code(1)?;

    // Without retries it fails.
    let (dir, _) = setup(FIRST_FAILS, 1);
    let (run, json) = run_all(dir.path(), &[])?;
    run.expect_code(1)?;
    check(
        runs(&json)[0]["verdict"] == "regression" && runs(&json)[0].get("attempts").is_none(),
        format!(
            "without --retries: a regression, tried once: {}",
            runs(&json)[0]
        ),
    )
}

trial!(
    failing_keeps_every_attempt_and_round_trips_dump_again,
    needs = &["3.12"],
    tool = "xmllint"
);
fn failing_keeps_every_attempt_and_round_trips_dump_again() -> TestResult {
    let (dir, marks) = setup(FIRST_FAILS, 99);
    let d = dir.path();
    let (run, json) = run_all(d, &["--retries", "2"])?;
    run.expect_code(1)?;
    let r = &runs(&json)[0];
    let attempts = r["attempts"].as_array().cloned().unwrap_or_default();
    let messages: Vec<&str> = attempts
        .iter()
        .filter_map(|a| a["message"].as_str())
        .collect();
    check(
        r["verdict"] == "regression"
            && r["message"] == "attempt 3 fails"
            && messages == ["attempt 1 fails", "attempt 2 fails"],
        format!("3 attempts, each in a process of its own, all kept: {r}"),
    )?;
    check(
        std::fs::read_dir(&marks)?.count() == 3,
        "the case ran 3 times",
    )?;
    let xml = read(&d.join("out.xml"));
    check(
        xml.matches("<rerunFailure").count() == 2 && xml.matches("<failure").count() == 1,
        format!("JUnit: a failure and its 2 reruns:\n{xml}"),
    )?;
    xmllint(&d.join("out.xml"))?;

    // A round trip is tried again with a dump of its own.
    let (dir, marks) = setup(ROUND_TRIP, 0);
    let (run, json) = run_all(dir.path(), &["--retries", "1"])?;
    run.expect_code(0)?;
    let r = &runs(&json)[0];
    let mut made: Vec<String> = std::fs::read_dir(&marks)?
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    made.sort();
    check(
        r["verdict"] == "flaky"
            && r["attempts"][0]["phase"] == "load"
            && made == ["dump-0", "dump-2", "load-0", "load-1"],
        format!("the round trip, dumped again for its second load: {r}; markers {made:?}"),
    )?;
    // Out of range is bad input.
    let bad = Run::from(
        crosspickle(dir.path())
            .args(["--retries", "101"])
            .output()?,
    );
    bad.expect_code(2)
}

/// The terminal, JUnit (valid), Markdown and HTML reports of the flaky run in `d` show it.
fn flaky_shown(d: &Path, run: &Run) -> TestResult {
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("c "))
        .unwrap_or("");
    check(
        line.trim_end().ends_with('R')
            && run.stdout.contains("R flaky")
            && run.stdout.contains("FLAKY c on cpython-3.12")
            && run.stdout.contains(
                "attempts:  1: regression (error: ValueError: attempt 1 fails); 2: flaky (pass)",
            )
            && run.stdout.contains("1 flaky in "),
        format!(
            "terminal: the R symbol, the attempts and the count:\n{}",
            run.stdout
        ),
    )?;
    let xml = read(&d.join("out.xml"));
    check(
        xml.contains("<flakyFailure")
            && xml
                .contains("message=\"attempt 1: regression: error: ValueError: attempt 1 fails\"")
            && !xml.contains("<failure")
            && xml.contains("failures=\"0\""),
        format!("JUnit: a passing testcase with its flakyFailure:\n{xml}"),
    )?;
    xmllint(&d.join("out.xml"))?;
    let md = read(&d.join("out.md"));
    check(
        md.contains("**🔁 1 flaky**")
            && md.contains("| c | 🔁 |")
            && md.contains("### 🔁 Flaky runs (1)"),
        format!("Markdown: the count, the matrix cell, the list:\n{md}"),
    )?;
    let html = read(&d.join("out.html"));
    check(
        html.contains("class=\"cell v-flaky")
            && html.contains("value=\"flaky\" checked> flaky (1)")
            && html.contains("1: regression (error: ValueError: attempt 1 fails)"),
        "HTML: a flaky cell, its filter and its attempts",
    )?;
    Ok(())
}
