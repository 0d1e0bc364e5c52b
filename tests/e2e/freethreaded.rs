//! Free-threaded CPython (`3.13t`, built by `.ci/newest-pythons.sh` from Debian's source
//! package): `crosspickle pythons` says so with its GIL state; `gil: [0, 1]` runs a case with
//! `PYTHON_GIL=0` and `=1` there, and only `gil=1` on a build with a GIL; the corpus's race
//! case, repeated 50 times, is counted and judged by its rule on both kinds of build.

use std::path::{Path, PathBuf};

use crate::support::*;

fn corpus_case(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cases")
        .join(path)
}

trial!(pythons_lists_the_build_and_its_gil, needs = &["3.13t"]);
fn pythons_lists_the_build_and_its_gil() -> TestResult {
    let dir = folder(&[]);
    let out = crosspickle(dir.path())
        .arg("pythons")
        .args(python_args(&["3.13t", "3.13"]))
        .output()?;
    let run = Run::from(out);
    run.expect_code(0)?;
    let line = |label: &str| {
        run.stdout
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_default()
            .to_string()
    };
    let ft = line("cpython-3.13.15+freethreaded");
    let gil = line("cpython-3.13.0");
    check(
        ft.contains("free-threaded") && ft.contains("GIL off"),
        format!("the free-threaded build and its GIL state:\n{}", run.stdout),
    )?;
    check(
        !gil.is_empty() && !gil.contains("free-threaded") && !gil.contains("GIL off"),
        format!("3.13.0 has its GIL:\n{}", run.stdout),
    )
}

/// Asserts that the GIL is in the state the run's `gil` asks for.
const GIL_STATE: &str = r#"title: the GIL is as gil says
gil: [0, 1]
code: |
  import sys
  assert sys._is_gil_enabled() == bool(gil), (sys._is_gil_enabled(), gil)
"#;

trial!(gil_dimension_sets_python_gil, needs = &["3.13t", "3.14"]);
fn gil_dimension_sets_python_gil() -> TestResult {
    let dir = folder(&[("cases/gil.yaml", GIL_STATE)]);
    let mut args = python_args(&["3.13t", "3.14"]);
    args.extend(["cases".to_string(), "-v".to_string()]);
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let verdict = |python: &str, gil: i64| {
        runs(&json)
            .into_iter()
            .find(|r| {
                r["python"].as_str().is_some_and(|p| p.starts_with(python))
                    && r["params"]["gil"] == gil
            })
            .map(|r| (r["verdict"].clone(), r["reason"].clone()))
    };
    let ft = "cpython-3.13.15+freethreaded";
    check(
        verdict(ft, 0).map(|v| v.0) == Some("ok".into())
            && verdict(ft, 1).map(|v| v.0) == Some("ok".into()),
        format!("both GIL states run on {ft}: {json}"),
    )?;
    check(
        verdict("cpython-3.14.10", 1).map(|v| v.0) == Some("ok".into())
            && verdict("cpython-3.14.10", 0)
                == Some((
                    "skipped".into(),
                    "gil=0 (PYTHON_GIL=0) needs a free-threaded build".into(),
                )),
        format!("a GIL build runs gil=1 and skips gil=0: {json}"),
    )?;
    check(
        run.stdout.contains("gil[gil=0]") && run.stdout.contains("gil[gil=1]"),
        format!("run names carry the GIL state:\n{}", run.stdout),
    )?;
    check(
        run.stdout.contains("+freethreaded (") && run.stdout.contains(", free-threaded, GIL off"),
        format!(
            "the columns' legend names the build and its GIL:\n{}",
            run.stdout
        ),
    )?;
    // `PYTHON_GIL` given twice is bad input, at its line.
    let dir = folder(&[(
        "cases/gil.yaml",
        &GIL_STATE.replace("gil: [0, 1]\n", "gil: [0, 1]\nenv:\n  PYTHON_GIL: '1'\n"),
    )]);
    let (run, _) = run_json(dir.path(), &args);
    run.expect_code(2)?;
    check(
        run.stderr.contains("gil.yaml:4:") && run.stderr.contains("drop one of them"),
        run.stderr,
    )
}

trial!(
    race_repeated_50_times_is_counted_and_judged,
    needs = &["3.13t", "3.14"]
);
fn race_repeated_50_times_is_counted_and_judged() -> TestResult {
    let case = std::fs::read_to_string(corpus_case("threads/pickler-dump-race.yaml"))?;
    let dir = folder(&[("cases/race.yaml", &case)]);
    let mut args = python_args(&["3.13t", "3.14"]);
    args.extend(["--repeat", "50", "cases", "-v"].map(String::from));
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let all = runs(&json);
    let find = |python: &str, gil: i64| {
        all.iter().find(|r| {
            r["python"].as_str().is_some_and(|p| p.starts_with(python)) && r["params"]["gil"] == gil
        })
    };
    let judged = [
        ("cpython-3.13.15+freethreaded", 0),
        ("cpython-3.13.15+freethreaded", 1),
        ("cpython-3.14.10", 1),
    ];
    for (python, gil) in judged {
        let r = find(python, gil).ok_or(format!("no run on {python} gil={gil}: {json}"))?;
        let attempts = r["attempts"].as_array().map(|a| a.len() + 1).unwrap_or(1);
        check(
            r["verdict"] == "xfail" && attempts == 50,
            format!("{python} gil={gil}: 50 attempts judged by the rule: {r}"),
        )?;
    }
    check(
        find("cpython-3.14.10", 0).is_some_and(|r| r["verdict"] == "skipped"),
        format!("gil=0 is skipped on 3.14: {json}"),
    )?;
    let counted = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("xfail") && l.contains("/50 error"))
        .count();
    check(
        counted == 3,
        format!("the 3 judged runs say their counts:\n{}", run.stdout),
    )?;
    // Its rule decides: expecting every attempt to pass, the races are regressions, counted.
    let strict = case[..case.find("expect:").unwrap()].to_string() + "expect:\n  - outcome: pass\n";
    let dir = folder(&[("cases/race.yaml", &strict)]);
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(1)?;
    let ft_off = runs(&json)
        .into_iter()
        .find(|r| r["params"]["gil"] == 0 && r["verdict"] != "skipped")
        .unwrap_or_default();
    check(
        ft_off["verdict"] == "regression" && run.stdout.contains("/50 error"),
        format!("a rule of `pass` fails the race: {ft_off}\n{}", run.stdout),
    )
}
