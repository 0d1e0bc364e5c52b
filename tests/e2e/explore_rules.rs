//! The case files `crosspickle explore` writes, run on interpreters it did not explore: a rule
//! names `c_pickle` only where the C pickler or unpickler of its end runs, so PyPy 8 (which
//! has `_pickle`) is judged by the rules written from PyPy 3.9's Python pickler; and the rules
//! of a dump with the default protocol stop where pickle's default changes, so 3.14 (whose
//! default is 5) is not judged by what 3.12 did with its 4.

use std::path::Path;

use crate::support::*;

/// Explores `pythons` (seed 1, `count` values) into `dir/out`.
fn explore(dir: &Path, pythons: &[&str], count: &str) -> TestResult {
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(
        pythons,
        &[
            "--seed", "1", "--count", count, "--out", "out", "--json", "x.json",
        ],
    ));
    let run = Run::from(
        crosspickle(dir)
            .args(&args)
            .output()
            .expect("crosspickle runs"),
    );
    check(
        matches!(run.code, 0 | 1) && dir.join("out/explore_support.py").exists(),
        format!(
            "explore wrote no case files: exit {}\n{}\n{}",
            run.code, run.stdout, run.stderr
        ),
    )
}

/// `crosspickle run out` on `pythons`, its JSON report.
fn run_on(dir: &Path, pythons: &[&str]) -> Result<serde_json::Value, libtest_mimic::Failed> {
    let mut args = vec!["run".to_string()];
    args.extend(args_on(pythons, &["out"]));
    let (run, report) = run_json(dir, &args);
    check(
        matches!(run.code, 0 | 1),
        format!(
            "run failed: exit {}\n{}\n{}",
            run.code, run.stdout, run.stderr
        ),
    )?;
    Ok(report)
}

/// The expectation rules of every case file of `dir/out`, one text per rule.
fn rules(dir: &Path) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir.join("out"))
        .expect("the folder")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".yaml") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).expect("a case file");
        let Some((_, expect)) = text.split_once("\nexpect:\n") else {
            continue;
        };
        for rule in expect.split("\n  - ") {
            all.push((name.clone(), rule.to_string()));
        }
    }
    all
}

trial!(
    pypy_8_is_judged_by_the_python_pickler_rules_of_pypy_3_9,
    needs = &["3.12", "pypy", "pypy8"]
);
/// Written from 3.12 and PyPy 3.9 and run on PyPy 8 too: PyPy 3.9's Python pickler refuses a
/// class with `__slots__` at protocols 0 and 1 (a message-differs finding), and so does PyPy
/// 8's; the rule of that dump named `c_pickle: false`, which PyPy 8 is not, and every such run
/// on PyPy 8 was a regression. Now every rule naming `c_pickle` is the skip of a C end, and
/// no run whose PyPy 8 ends all run the Python pickler and unpickler is a regression.
fn pypy_8_is_judged_by_the_python_pickler_rules_of_pypy_3_9() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    explore(d, &["3.12", "pypy"], "100")?;
    let report = run_on(d, &["3.12", "pypy", "pypy8"])?;
    let pypy8 = |r: &serde_json::Value, key: &str| {
        r[key]
            .as_str()
            .is_some_and(|p| p.starts_with("pypy-3.11") || p.starts_with("pypy-8"))
    };
    let python_only = |r: &serde_json::Value| {
        let p = &r["params"];
        let dump_py = !pypy8(r, "dump_python") || p["pickler"] != "c";
        let load_py = !pypy8(r, "load_python") || p["unpickler"] != "c";
        dump_py && load_py && (pypy8(r, "dump_python") || pypy8(r, "load_python"))
    };
    let all = runs(&report);
    let judged: Vec<&serde_json::Value> = all
        .iter()
        .filter(|r| python_only(r) && r["verdict"] == "xfail" && pypy8(r, "dump_python"))
        .collect();
    check(
        !judged.is_empty(),
        "no run of PyPy 8's Python pickler was expected to fail as PyPy 3.9's did",
    )?;
    let wrong: Vec<String> = all
        .iter()
        .filter(|r| python_only(r) && r["verdict"] == "regression")
        .map(|r| {
            format!(
                "{} {} {} -> {}: {} {}",
                r["case"],
                r["params"],
                r["dump_python"],
                r["load_python"],
                r["outcome"],
                r["message"]
            )
        })
        .collect();
    check(
        wrong.is_empty(),
        format!(
            "{} regressions of PyPy 8's Python pickler and unpickler:\n{}",
            wrong.len(),
            wrong.join("\n")
        ),
    )?;
    for (file, rule) in rules(d) {
        check(
            !rule.contains("c_pickle") || rule.contains("outcome: skip"),
            format!("{file}: a rule that runs names c_pickle:\n{rule}"),
        )?;
    }
    Ok(())
}

trial!(
    default_protocol_rules_stop_where_the_default_changes,
    needs = &["3.8", "3.12", "3.14"]
);
/// Written from 3.8 and 3.14 and run on 3.12 too: a `PickleBuffer` pickled with the default
/// protocol is refused by 3.8 (its default is 4) and pickled by 3.14 (5). 3.14's rules stood
/// for every version after 3.8, so 3.12's refusal (its default is 4 as well) was a regression;
/// now 3.8's stand for the versions before 3.14, where the default is 4 as far as a `PickleBuffer`
/// goes (`dump_python: "<3.14"`), and no run is a regression.
fn default_protocol_rules_stop_where_the_default_changes() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    explore(d, &["3.8", "3.14"], "100")?;
    let report = run_on(d, &["3.8", "3.12", "3.14"])?;
    let all = runs(&report);
    let on_312 = |r: &&serde_json::Value| {
        r["params"]["protocol"] == "default"
            && r["dump_python"]
                .as_str()
                .is_some_and(|p| p.starts_with("cpython-3.12"))
    };
    let refused: Vec<&serde_json::Value> = all
        .iter()
        .filter(on_312)
        .filter(|r| r["phase"] == "dump" && r["verdict"] == "xfail")
        .collect();
    check(
        !refused.is_empty(),
        "no dump by 3.12 with the default protocol was expected to fail as 3.8's did",
    )?;
    let wrong: Vec<String> = all
        .iter()
        .filter(|r| r["verdict"] == "regression" || r["verdict"] == "fixed")
        .map(|r| {
            format!(
                "{} {} {} -> {}: {} {} {}",
                r["case"],
                r["params"],
                r["dump_python"],
                r["load_python"],
                r["verdict"],
                r["outcome"],
                r["message"]
            )
        })
        .collect();
    check(
        wrong.is_empty(),
        format!(
            "{} runs not as expected:\n{}",
            wrong.len(),
            wrong.join("\n")
        ),
    )?;
    let bounded = rules(d)
        .iter()
        .any(|(_, rule)| rule.contains("dump_python: \"<3.14\"") && rule.contains("PicklingError"));
    check(
        bounded,
        "no rule of 3.8's dumps stops where the default changes",
    )
}
