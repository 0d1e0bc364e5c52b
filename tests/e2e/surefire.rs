//! crosspickle's JUnit XML with the attempts of `--retries` (`flakyFailure` for a flaky run,
//! `rerunFailure` for the reruns of one that failed every time, a round trip included) is
//! valid to Maven Surefire's own schema of its reports, `surefire-test-report.xsd`, as well as
//! to junit-10.xsd (retries.rs), a crashed attempt (no traceback) included, and a retried case
//! printing megabytes keeps its testcase within its bytes. A Surefire report is one `<testsuite>` a file, so each
//! `<testsuite>` of crosspickle's `<testsuites>` is validated as a document of its own.
//!
//! The schema is the file `CROSSPICKLE_TEST_SUREFIRE_XSD` names, else
//! `target/ci-tools/surefire/surefire-test-report.xsd`, where `.ci/surefire-schema` (run by
//! .ci/run) puts it from Debian's source package of Surefire. Without it the trial is ignored,
//! or fails when `CROSSPICKLE_REQUIRE_TOOLS` names `surefire-xsd`, as CI does.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Trial;

use crate::support::*;

const REQUIRED_AS: &str = "surefire-xsd";

/// The trial's gate: run with xmllint and 3.12 when the schema is there; else ignored, or a
/// failure when CI requires the schema.
fn surefire_gate(name: &str, test: fn() -> TestResult) -> Trial {
    if schema().is_some() {
        return tool_trial(name, "xmllint", &["3.12"], test);
    }
    let required = std::env::var("CROSSPICKLE_REQUIRE_TOOLS").unwrap_or_default();
    if required.split(',').any(|t| t.trim() == REQUIRED_AS) {
        let msg = format!(
            "required {REQUIRED_AS} missing: no surefire-test-report.xsd at CROSSPICKLE_TEST_SUREFIRE_XSD or {} (.ci/surefire-schema fetches it)",
            default_schema().display()
        );
        return crate::support::timed(name, move || Err(msg.clone().into()));
    }
    crate::support::timed(name, test)
        .with_kind("needs surefire-test-report.xsd (.ci/surefire-schema)")
        .with_ignored_flag(true)
}

fn default_schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-tools/surefire/surefire-test-report.xsd")
}

fn schema() -> Option<PathBuf> {
    std::env::var_os("CROSSPICKLE_TEST_SUREFIRE_XSD")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| Some(default_schema()))
        .filter(|p| p.is_file())
}

/// Passes on its attempt number `@PASS@` (0: never), leaving a marker each attempt; a round
/// trip, so that each attempt is a dump and a load.
const CASE: &str = r#"title: a round trip whose load fails until an attempt
env:
  MARKS: "@MARKS@"
dump: |
  import pickle
  data = pickle.dumps([1, 2])
load: |
  import os, pickle
  marks = os.environ["MARKS"]
  n = len(os.listdir(marks)) + 1
  open(os.path.join(marks, "load-%d" % n), "w").close()
  if n != @PASS@:
      raise ValueError("attempt %d fails" % n)
  assert pickle.loads(data) == [1, 2]
"#;

/// The JUnit XML of a run of `CASE` passing on attempt `pass`, with `--retries 2`.
fn junit(pass: u32, code: i32) -> Result<(tempfile::TempDir, PathBuf), libtest_mimic::Failed> {
    let dir = folder(&[]);
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&marks)?;
    std::fs::create_dir_all(dir.path().join("cases"))?;
    let text = CASE
        .replace("@MARKS@", &path_str(&marks))
        .replace("@PASS@", &pass.to_string());
    std::fs::write(dir.path().join("cases/c.yaml"), text)?;
    let out = crosspickle(dir.path())
        .args(python_args(&["3.12"]))
        .args(["cases", "--retries", "2", "--junit-xml", "out.xml"])
        .output()?;
    Run::from(out).expect_code(code)?;
    let xml = dir.path().join("out.xml");
    Ok((dir, xml))
}

/// Every `<testsuite>` of `file`, as a file of its own, valid to Surefire's schema.
fn valid_suites(file: &Path, xsd: &Path) -> Result<usize, libtest_mimic::Failed> {
    let xml = std::fs::read_to_string(file)?;
    let count = xml.matches("<testsuite ").count();
    for i in 1..=count {
        let out = Command::new("xmllint")
            .arg("--xpath")
            .arg(format!("/testsuites/testsuite[{i}]"))
            .arg(file)
            .output()?;
        check(out.status.success(), format!("xmllint --xpath: {out:?}"))?;
        let suite = file.with_extension(format!("suite-{i}.xml"));
        std::fs::write(&suite, &out.stdout)?;
        let out = Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(xsd)
            .arg(&suite)
            .output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        check(
            out.status.success() && stderr.contains("validates"),
            format!(
                "testsuite {i} of {} is not a valid Surefire report:\n{stderr}\n{}",
                file.display(),
                String::from_utf8_lossy(&std::fs::read(&suite)?)
            ),
        )?;
    }
    Ok(count)
}

trial!(retried_runs_are_valid_surefire_reports, by = surefire_gate);
fn retried_runs_are_valid_surefire_reports() -> TestResult {
    let xsd = schema().ok_or("no surefire-test-report.xsd")?;
    // The schema is Surefire's, with the elements of reruns.
    let text = std::fs::read_to_string(&xsd)?;
    check(
        text.contains("<xs:element name=\"flakyFailure\"")
            && text.contains("<xs:element name=\"rerunFailure\""),
        format!("{} has no flakyFailure and rerunFailure", xsd.display()),
    )?;
    // Flaky: fails, then passes on the second attempt (exit 0).
    let (_flaky_dir, flaky) = junit(2, 0)?;
    let xml = std::fs::read_to_string(&flaky)?;
    check(
        xml.contains("<flakyFailure") && !xml.contains("<failure"),
        format!("a flaky run's JUnit:\n{xml}"),
    )?;
    check(valid_suites(&flaky, &xsd)? == 1, "one testsuite")?;
    // Failing every attempt: the failure and its two reruns (exit 1).
    let (_failing_dir, failing) = junit(0, 1)?;
    let xml = std::fs::read_to_string(&failing)?;
    check(
        xml.matches("<rerunFailure").count() == 2 && xml.matches("<failure").count() == 1,
        format!("a failing run's JUnit:\n{xml}"),
    )?;
    check(valid_suites(&failing, &xsd)? == 1, "one testsuite")?;
    // And the schema does refuse what it should: a rerunFailure without its stackTrace.
    let broken = failing.with_file_name("broken.xml");
    let bad = xml
        .replacen("<stackTrace>", "<trace>", 1)
        .replacen("</stackTrace>", "</trace>", 1);
    std::fs::write(&broken, bad)?;
    check(
        valid_suites(&broken, &xsd).is_err(),
        "a rerunFailure without stackTrace passes the schema",
    )
}

/// Prints 4 MB on stdout and on stderr, then crashes (SIGKILL: no traceback) on its first
/// attempt and raises on the others.
const LOUD: &str = r#"title: prints megabytes, crashes once, then fails
env:
  MARKS: "@MARKS@"
code: |
  import os, sys
  marks = os.environ["MARKS"]
  n = len(os.listdir(marks)) + 1
  open(os.path.join(marks, "attempt-%d" % n), "w").close()
  sys.stdout.write("out %d " % n * 500000)
  sys.stderr.write("err %d " % n * 500000)
  sys.stdout.flush()
  sys.stderr.flush()
  if n == 1:
      os.kill(os.getpid(), 9)
  raise ValueError("attempt %d fails" % n)
"#;

trial!(
    loud_crashing_attempts_are_bounded_with_stack_traces,
    by = surefire_gate
);
/// Four attempts (`--retries 3`) of a case printing 8 MB each, the first killed by a signal:
/// the three earlier attempts are `<rerunFailure>`s, each with a `<stackTrace>` (the crash's
/// summary when there is no traceback), valid to Surefire's schema, and the testcase with all
/// its attempts stays within the 64 KiB a testcase's text may take (and the tags), saying
/// what it left out.
fn loud_crashing_attempts_are_bounded_with_stack_traces() -> TestResult {
    let xsd = schema().ok_or("no surefire-test-report.xsd")?;
    let dir = folder(&[]);
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&marks)?;
    std::fs::create_dir_all(dir.path().join("cases"))?;
    let text = LOUD.replace("@MARKS@", &path_str(&marks));
    std::fs::write(dir.path().join("cases/loud.yaml"), text)?;
    let out = crosspickle(dir.path())
        .args(python_args(&["3.12"]))
        .args(["cases", "--retries", "3", "-q", "--junit-xml", "out.xml"])
        .output()?;
    Run::from(out).expect_code(1)?;
    let file = dir.path().join("out.xml");
    let xml = std::fs::read_to_string(&file)?;
    let reruns: Vec<&str> = xml.split("<rerunFailure").skip(1).collect();
    check(
        reruns.len() == 3
            && reruns.iter().all(|r| {
                r.split("</rerunFailure>")
                    .next()
                    .unwrap_or("")
                    .contains("<stackTrace>")
            }),
        format!("3 rerunFailures, each with its stackTrace:\n{xml}"),
    )?;
    check(
        reruns[0].contains("type=\"regression\"")
            && reruns[0]
                .split("</stackTrace>")
                .next()
                .unwrap_or("")
                .contains("SIGKILL"),
        format!(
            "the crashed attempt's stack trace names its signal:\n{}",
            reruns[0]
        ),
    )?;
    let start = xml.find("<testcase ").ok_or("no testcase")?;
    let end = xml.find("</testcase>").ok_or("no testcase end")?;
    let bytes = end - start;
    check(
        bytes < 64 * 1024 + 4096,
        format!("the testcase with its 3 earlier attempts takes {bytes} bytes (at most 64 KiB of text and 4 KiB of tags)"),
    )?;
    check(
        xml.contains("bytes left out") && xml.contains("<system-out>[… "),
        "what was cut is said, the attempts' output tails too",
    )?;
    check(valid_suites(&file, &xsd)? == 1, "one testsuite")
}
