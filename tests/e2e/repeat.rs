//! `--repeat N` and a case's `repeat`: every run attempted N times, each in a fresh process (a
//! marker file per attempt shows it), the verdict the worst attempt's, the record that attempt
//! with the others kept, and the reports counting what the attempts did (`2/8 crash`). A
//! repeated run is not retried.

use std::path::{Path, PathBuf};

use crate::support::*;

/// Leaves one marker per attempt in `MARKS`; attempts 2, 6, 10… (n % 4 == 1) crash.
const SOMETIMES_CRASHES: &str = r#"title: crashes one attempt in four
@REPEAT@env:
  MARKS: "@MARKS@"
code: |
  import os
  marks = os.environ["MARKS"]
  n = len(os.listdir(marks))
  open(os.path.join(marks, "attempt-%d" % n), "w").close()
  if n % 4 == 1:
      os.abort()
"#;

/// A "race": attempts 2, 5, 8… (n % 3 == 1) raise `@RAISES@`, the others pass, unless the
/// race is `@FIXED@`; its rule says it sometimes raises RuntimeError.
const KNOWN_RACE: &str = r#"title: a known race
@REPEAT@env:
  MARKS: "@MARKS@"
code: |
  import os
  marks = os.environ["MARKS"]
  n = len(os.listdir(marks))
  open(os.path.join(marks, "attempt-%d" % n), "w").close()
  if n % 3 == 1 and not @FIXED@:
      raise @RAISES@("lost the race")
expect:
  - outcome: [pass, error]
    exception: RuntimeError
    match: "^lost the race$"
"#;

fn race(repeat: &str, fixed: bool, raises: &str) -> (tempfile::TempDir, PathBuf) {
    let text = KNOWN_RACE
        .replace("@FIXED@", if fixed { "True" } else { "False" })
        .replace("@RAISES@", raises);
    setup(&text, repeat)
}

trial!(
    a_known_race_is_xfail_and_its_fix_is_fixed,
    needs = &["2.7", "3.12", "pypy"]
);
fn a_known_race_is_xfail_and_its_fix_is_fixed() -> TestResult {
    for p in ["2.7", "3.12", "pypy"] {
        let on = |dir: &Path, extra: &[&str]| {
            let mut args = python_args(&[p]);
            args.extend(extra.iter().map(|a| a.to_string()));
            let out = crosspickle(dir)
                .args(&args)
                .args(["cases", "--json", "out.json", "-v"])
                .output()
                .unwrap();
            (Run::from(out), json_at(&dir.join("out.json")))
        };
        // The race shows: every attempt one of the list, so xfail, and counted.
        let (dir, marks) = race("repeat: 6\n", false, "RuntimeError");
        let (run, json) = on(dir.path(), &[]);
        run.expect_code(0)?;
        let r = &runs(&json)[0];
        check(
            markers(&marks) == 6
                && r["verdict"] == "xfail"
                && run.stdout.contains("[4/6 pass, 2/6 error]")
                && r["expected"]["any_of"] == serde_json::json!(["pass", "error"]),
            format!(
                "{p}: the race is xfail, counted with -v: {r}\n{}",
                run.stdout
            ),
        )?;
        // Its fix: every attempt passes, so fixed (and the run fails).
        let (dir, _) = race("repeat: 6\n", true, "RuntimeError");
        let (run, json) = on(dir.path(), &[]);
        run.expect_code(1)?;
        check(
            runs(&json)[0]["verdict"] == "fixed"
                && run.stdout.contains("counts:    6/6 pass")
                && run
                    .stdout
                    .contains("expected:  pass or error: RuntimeError, each attempt"),
            format!("{p}: the fix is fixed:\n{}", run.stdout),
        )?;
        // Another exception than the rule's is changed, with the attempts counted.
        let (dir, _) = race("repeat: 6\n", false, "ValueError");
        let (run, json) = on(dir.path(), &[]);
        run.expect_code(1)?;
        check(
            runs(&json)[0]["verdict"] == "changed"
                && runs(&json)[0]["exception"] == "ValueError"
                && run.stdout.contains("counts:    4/6 pass, 2/6 error"),
            format!("{p}: another error is changed:\n{}", run.stdout),
        )?;
    }
    // One attempt that passes: every attempt passed, so fixed too; with --retries, a later
    // attempt that loses the race makes it flaky.
    let (dir, _) = race("", false, "RuntimeError");
    let (run, json) = run_with(dir.path(), &[])?;
    run.expect_code(1)?;
    check(
        runs(&json)[0]["verdict"] == "fixed",
        runs(&json)[0].to_string(),
    )?;
    let (dir, _) = race("", false, "RuntimeError");
    let (run, json) = run_with(dir.path(), &["--retries", "1"])?;
    run.expect_code(0)?;
    check(
        runs(&json)[0]["verdict"] == "flaky",
        runs(&json)[0].to_string(),
    )?;
    // A list of one, or with skip, is bad input with its place.
    for (list, says) in [
        ("[pass]", "a list of outcomes needs two or more"),
        ("[pass, skip]", "`skip` cannot be in a list of outcomes"),
        ("[error, error]", "`error` is twice in the list of outcomes"),
        ("[pass, bogus]", "unknown variant `bogus`"),
    ] {
        let text = KNOWN_RACE.replace("[pass, error]", list);
        let (dir, _) = setup(&text, "");
        let (run, _) = run_with(dir.path(), &[])?;
        run.expect_code(2)?;
        check(
            run.stderr.contains("c.yaml:") && run.stderr.contains(says),
            format!("{list}: {}", run.stderr),
        )?;
    }
    Ok(())
}

/// A case folder with `text` (its `@MARKS@` the marker folder, `@REPEAT@` the `repeat` line).
pub fn setup(template: &str, repeat: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = folder(&[]);
    let marks = dir.path().join("marks");
    std::fs::create_dir(&marks).unwrap();
    let text = template
        .replace("@MARKS@", &path_str(&marks))
        .replace("@REPEAT@", repeat);
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    std::fs::write(dir.path().join("cases/c.yaml"), text).unwrap();
    (dir, marks)
}

pub fn run_with(
    dir: &Path,
    extra: &[&str],
) -> Result<(Run, serde_json::Value), libtest_mimic::Failed> {
    let mut args = python_args(&["3.12"]);
    args.extend(extra.iter().map(|a| a.to_string()));
    let out = crosspickle(dir)
        .args(&args)
        .args(["cases", "--json", "out.json", "--markdown", "out.md", "-v"])
        .output()?;
    Ok((Run::from(out), json_at(&dir.join("out.json"))))
}

pub fn markers(marks: &Path) -> usize {
    std::fs::read_dir(marks).map(|d| d.count()).unwrap_or(0)
}

trial!(worst_of_n_attempts_and_their_counts, needs = &["3.12"]);
fn worst_of_n_attempts_and_their_counts() -> TestResult {
    let (dir, marks) = setup(SOMETIMES_CRASHES, "");
    // --retries does not add attempts to a repeated run.
    let (run, json) = run_with(dir.path(), &["--repeat", "8", "--retries", "3"])?;
    run.expect_code(1)?;
    check(
        markers(&marks) == 8,
        format!("8 attempts, {} made", markers(&marks)),
    )?;
    let r = &runs(&json)[0];
    let attempts = r["attempts"].as_array().cloned().unwrap_or_default();
    let crashes = attempts.iter().filter(|a| a["outcome"] == "crash").count();
    check(
        r["verdict"] == "regression"
            && r["outcome"] == "crash"
            && attempts.len() == 7
            && crashes == 1
            && attempts
                .iter()
                .all(|a| a["outcome"] == "crash" || a["verdict"] == "ok"),
        format!("the worst attempt is the record, the 7 others kept: {r}"),
    )?;
    check(
        run.stdout.contains("counts:    6/8 pass, 2/8 crash"),
        format!("terminal counts:\n{}", run.stdout),
    )?;
    // Without --repeat, one attempt, which passes.
    let (dir, marks) = setup(SOMETIMES_CRASHES, "");
    let (run, json) = run_with(dir.path(), &[])?;
    run.expect_code(0)?;
    check(
        markers(&marks) == 1 && runs(&json)[0].get("attempts").is_none(),
        format!("one attempt: {}", runs(&json)[0]),
    )
}

trial!(a_case_asks_for_its_own_attempts, needs = &["3.12"]);
fn a_case_asks_for_its_own_attempts() -> TestResult {
    // `repeat: 3` in the case, and the larger of it and --repeat.
    let (dir, marks) = setup(SOMETIMES_CRASHES, "repeat: 3\n");
    let (run, json) = run_with(dir.path(), &[])?;
    run.expect_code(1)?;
    check(
        markers(&marks) == 3,
        format!("3 attempts, {} made", markers(&marks)),
    )?;
    check(
        runs(&json)[0]["verdict"] == "regression",
        runs(&json)[0].to_string(),
    )?;
    let (dir, marks) = setup(SOMETIMES_CRASHES, "repeat: 3\n");
    run_with(dir.path(), &["--repeat", "5"])?.0.expect_code(1)?;
    check(
        markers(&marks) == 5,
        format!("5 attempts, {} made", markers(&marks)),
    )?;
    let (dir, marks) = setup(SOMETIMES_CRASHES, "repeat: 1\n");
    run_with(dir.path(), &["--repeat", "2"])?.0.expect_code(1)?;
    check(
        markers(&marks) == 2,
        format!("2 attempts, {} made", markers(&marks)),
    )?;
    // A repeat outside 1..=10000 is bad input, with its place.
    let (dir, _) = setup(SOMETIMES_CRASHES, "repeat: 0\n");
    let (run, _) = run_with(dir.path(), &[])?;
    run.expect_code(2)?;
    check(
        run.stderr.contains("c.yaml:2:")
            && run
                .stderr
                .contains("`repeat` must be from 1 to 10000 attempts, not 0"),
        &run.stderr,
    )
}
