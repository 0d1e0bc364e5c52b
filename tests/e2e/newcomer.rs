//! What a newcomer meets around a run (issue 23): version ranges that match no interpreter of
//! the machine, environments built for minutes, a matrix wider than the terminal, a package
//! bisect that crosses several changes, tooling failures that must not pass for verdicts.

use std::path::Path;

use libtest_mimic::Trial;

use crate::support::*;

pub fn trials() -> Vec<Trial> {
    let t = |name: &str, needs: &[&str], f: fn() -> TestResult| {
        trial(&format!("newcomer::{name}"), needs, f)
    };
    vec![t(
        "a_version_range_that_matches_no_interpreter_here_is_a_warning",
        &["2.7", "3.12"],
        unmatched_range_warns,
    )]
}

/// A pythons.toml that names `pythons` (name, need) and discovers nothing else: the machine,
/// as far as crosspickle knows, is exactly these.
fn machine_of(dir: &Path, pythons: &[(&str, &str)]) -> String {
    let mut text = String::from(
        "[discovery]\npath = false\npyenv = false\nuv = false\nconda = false\n\n[pythons]\n",
    );
    for (name, need) in pythons {
        let path = python(need).expect("a trial's interpreter");
        text.push_str(&format!("{name} = {:?}\n", path.display().to_string()));
    }
    std::fs::write(dir.join("pythons.toml"), text).unwrap();
    dir.join("pythons.toml").display().to_string()
}

/// On a machine with 2.7 and 3.12, a case's `python: ">=3.20"` (a typo for `>=3.10`) skips
/// the case everywhere: the run still exits 0, and warns at the range's line and column; a
/// rule's `<2` is counted in a note, and `list --expected` warns about it at its place.
fn unmatched_range_warns() -> TestResult {
    let dir = folder(&[
        ("cases/typo.yaml", "title: typo\npython: \">=3.20\"\ncode: pass\n"),
        (
            "cases/rule.yaml",
            "title: rule\nexpect:\n  - outcome: fail\n    python: [\"<3\", \"<2\"]\ncode: assert str is not bytes\n",
        ),
        ("cases/fine.yaml", "title: fine\npython: \">=3.10\"\ncode: pass\n"),
    ]);
    let toml = machine_of(dir.path(), &[("old", "2.7"), ("new", "3.12")]);
    let (run, json) = run_json(dir.path(), &["cases", "--pythons-toml", &toml]);
    run.expect_code(0)?;
    check(
        runs(&json)
            .iter()
            .filter(|r| r["case"] == "typo")
            .all(|r| r["verdict"] == "skipped"),
        "typo is skipped everywhere",
    )?;
    let warned = "warning: cases/typo.yaml:2:9: python `>=3.20` matches no interpreter of this machine (found 2.7.18 to 3.12.1): the case is skipped on every one of them";
    check(
        run.stderr.contains(warned),
        format!("the case's range: {}", run.stderr),
    )?;
    check(
        run.stderr.contains("note: 1 rule's version range matches no interpreter of this machine, such as cases/rule.yaml:4:20: expect[0].python[1] `<2`"),
        format!("the rules' note: {}", run.stderr),
    )?;
    check(
        !run.stderr.contains("fine.yaml") && !run.stderr.contains("`<3`"),
        format!("ranges that match are not named: {}", run.stderr),
    )?;
    let list = Run::from(
        crosspickle(dir.path())
            .args(["list", "--expected", "cases", "--pythons-toml", &toml])
            .output()?,
    );
    list.expect_code(0)?;
    check(
        list.stderr.contains(warned)
            && list.stderr.contains("warning: cases/rule.yaml:4:20: expect[0].python[1] `<2` matches no interpreter of this machine (found 2.7.18 to 3.12.1): the rule decides no run here"),
        format!("list --expected names each: {}", list.stderr),
    )
}
