//! `explore --values` with Hypothesis strategies as builders: a builder that returns a strategy
//! has its values drawn from it, the same for the same seed; where Hypothesis is not installed
//! (3.8: the requirement's marker leaves it out) the builder is reported unavailable, not a
//! finding. Hypothesis is installed by `--requires` (uv and the package index): ignored, saying
//! so, without them.

use libtest_mimic::Trial;

use crate::support::*;

const BUFFERS: &str = "import pickle


def buffers():
    from hypothesis import strategies as st
    return st.binary(min_size=1, max_size=4).map(pickle.PickleBuffer)
";

const HYPOTHESIS: &str = "hypothesis==6.170.15; python_version >= \"3.11\"";

/// Needs 3.8, 3.12, 3.13, uv and the package index (uv resolves Hypothesis for 3.12).
fn index_trial(name: &str, test: fn() -> TestResult) -> Trial {
    crate::download::index_trial(name, &["3.8", "3.12", "3.13"], "hypothesis==6.170.15", test)
}

trial!(strategies_as_builders, by = index_trial);
/// A strategy of `PickleBuffer`s, drawn on 3.12 and 3.13: they refuse it below protocol 5 in
/// other words (`message-differs PicklingError`, python/cpython gh-122311), the same values
/// drawn on both (compared), and again in a second run with the same seed; 3.8 has no
/// Hypothesis: `buffers()` unavailable there, not a finding. The case file passes with
/// `crosspickle run` on 3.12 and 3.13 (one combination of its params checked).
fn strategies_as_builders() -> TestResult {
    let dir = folder(&[("buffers.py", BUFFERS)]);
    let d = dir.path();
    let path = crate::download::path_with_uv();
    let explore = |json: &str, out: &str| {
        let mut args = vec!["explore".to_string()];
        args.extend(args_on(
            &["3.8", "3.12", "3.13"],
            &[
                "--values",
                "buffers.py",
                "--count",
                "3",
                "--requires",
                HYPOTHESIS,
                "--json",
                json,
                "--out",
                out,
                "-j",
                "2",
            ],
        ));
        Run::from(
            crosspickle(d)
                .env("PATH", &path)
                .args(&args)
                .output()
                .expect("crosspickle runs"),
        )
    };
    let run = explore("a.json", "out");
    run.expect_code(1)?;
    let report = json_at(&d.join("a.json"));
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let Some(message) = findings
        .iter()
        .find(|f| f["oracle"] == "message-differs" && f["observed"] == "PicklingError")
    else {
        return check(false, format!("no message-differs: {}", run.stdout));
    };
    check(
        message["value"]
            .as_str()
            .is_some_and(|v| v.starts_with("value = drawn(") && v.contains(".buffers(), 0, ")),
        format!("a value drawn from the strategy: {message:#}"),
    )?;
    check(
        message["reference"]
            .as_str()
            .is_some_and(|r| r.starts_with("[\"bytes\",\"") && r.len() > "[\"bytes\",\"\"]".len()),
        format!("what was drawn: a buffer of bytes: {message:#}"),
    )?;
    check(
        report["not_comparable"] == 0,
        format!("3.12 and 3.13 drew the same values: {report:#}"),
    )?;
    let unavailable = report["unavailable"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    check(
        unavailable.len() == 1
            && unavailable[0]["builder"] == "buffers"
            && unavailable[0]["python"]
                .as_str()
                .is_some_and(|p| p.starts_with("cpython-3.8"))
            && unavailable[0]["error"]
                .as_str()
                .is_some_and(|e| e.contains("hypothesis"))
            && unavailable[0]["values"] == 3,
        format!("buffers() unavailable on 3.8: {unavailable:#?}"),
    )?;
    check(
        run.stdout.contains("buffers() on cpython-3.8"),
        format!("the summary says so: {}", run.stdout),
    )?;
    check(
        !findings.iter().any(|f| {
            f["producers"].to_string().contains("3.8") || f["consumers"].to_string().contains("3.8")
        }),
        format!("3.8 in no finding: {findings:#?}"),
    )?;
    // The same seed draws the same values.
    explore("b.json", "again").expect_code(1)?;
    let again = json_at(&d.join("b.json"));
    let references = |r: &serde_json::Value| -> Vec<serde_json::Value> {
        r["findings"]
            .as_array()
            .map(|f| f.iter().map(|f| f["reference"].clone()).collect())
            .unwrap_or_default()
    };
    check(
        references(&report) == references(&again),
        format!(
            "the same values: {:?} then {:?}",
            references(&report),
            references(&again)
        ),
    )?;
    // The case file: one combination of protocol and pickler, each run importing Hypothesis
    // (every combination seen, 48 runs, took 28 s).
    let id = std::path::Path::new(message["case_file"].as_str().unwrap_or(""))
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(&["3.12", "3.13"], &["out", "-k", &id]));
    let (ran, results) = run_json(d, &run_args);
    ran.expect_code(0)?;
    let verdicts: Vec<serde_json::Value> = runs(&results)
        .iter()
        .map(|r| r["verdict"].clone())
        .collect();
    check(
        !verdicts.is_empty() && verdicts.len() <= 4 && verdicts.iter().all(|v| v == "xfail"),
        format!("the case expects what explore saw, in one run per pair at most: {verdicts:?}"),
    )
}
