//! The driver's pure parts tested in Python on every interpreter (`tests/python/driver_test.py`:
//! the quiet ending's rules, class relations, tracebacks, the result record), one trial per
//! interpreter: ignored where it is missing, failing where `CROSSPICKLE_REQUIRE_PYTHONS` names
//! it.

use std::path::Path;

use libtest_mimic::Trial;

use crate::support::{check, python, trial, TestResult, EVERY_PYTHON, NEWEST_PYTHONS};

trial!(pure_parts, generated);
/// `driver_python::pure_parts[VERSION]` for every interpreter the e2e tests know.
fn pure_parts() -> Vec<Trial> {
    on_every_python("driver_python::pure_parts", run_suite)
}

/// `NAME[VERSION]`, a trial running `run(VERSION)`, for every interpreter the e2e tests know.
pub(crate) fn on_every_python(name: &str, run: fn(&str) -> TestResult) -> Vec<Trial> {
    EVERY_PYTHON
        .iter()
        .chain(NEWEST_PYTHONS)
        .chain(&["3.13t"])
        .map(|&version| {
            trial(&format!("{name}[{version}]"), &[version], move || {
                run(version)
            })
        })
        .collect()
}

fn run_suite(version: &str) -> TestResult {
    // Everywhere: relations, tracebacks and the record (17 tests at least); with gc.freeze
    // (CPython 3.7 and later), _loud's rules too (33 at least).
    let freezes = !matches!(version, "2.7" | "3.6") && !version.starts_with("pypy");
    let least = if freezes { 33 } else { 17 };
    python_suite(version, "driver_test.py", "src/run/driver", "driver", least)
}

/// Runs `tests/python/SCRIPT DIR` on the interpreter of `version`: it must exit 0 with its
/// summary line (`TITLE tests on ...: N passed, 0 failed, ...`), `least` tests passed at least.
pub(crate) fn python_suite(
    version: &str,
    script: &str,
    dir: &str,
    title: &str,
    least: usize,
) -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let interpreter = python(version).ok_or(version)?;
    let out = std::process::Command::new(&interpreter)
        .arg(root.join("tests/python").join(script))
        .arg(root.join(dir))
        .env_remove("PYTHONPATH")
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!("{}:\n{stdout}{stderr}", interpreter.display());
    check(out.status.success(), format!("failed: {said}"))?;
    // The suite ran to its summary, every test either passed or was skipped with a reason.
    let summary = stdout.lines().last().unwrap_or("");
    check(
        summary.starts_with(&format!("{title} tests on ")) && summary.contains(" 0 failed"),
        format!("no summary: {said}"),
    )?;
    let passed: usize = summary
        .split(": ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    check(passed >= least, format!("only {passed} passed: {said}"))
}
