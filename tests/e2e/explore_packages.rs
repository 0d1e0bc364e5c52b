//! `crosspickle explore --values` with each side's packages (`--dump-requires`,
//! `--load-requires`), against the package index: the user's builders of NumPy arrays, pickled
//! with NumPy 2.0.2 and loaded with NumPy 1.26.4 on 3.12, show numpy#28340 (protocol 5 names
//! `numpy._core.numeric`, which 1.26.4's stub lacks; in band and with the arrays' buffers out
//! of band alike) and nothing else; the case file it writes
//! passes with `crosspickle run`. The environments are those of the corpus's NumPy case (same
//! interpreter and requirements), so a suite that ran one makes them once. Ignored, saying so,
//! without uv or when the index cannot be reached.

use libtest_mimic::Trial;
use serde_json::Value;

use crate::support::*;

const ARRAYS: &str = "import numpy


class Holder(object):
    def __init__(self, values):
        self.values = values


def ints():
    return numpy.arange(3)


def grid():
    return numpy.zeros((2, 3), dtype=numpy.int32)


def held():
    return Holder(numpy.arange(4))
";

/// Needs 3.12, uv (CROSSPICKLE_TEST_UV, or on PATH) and the package index: asked of uv, which
/// resolves NumPy 1.26.4 for 3.12 or says why not.
fn index_trial(name: &str, test: fn() -> TestResult) -> Trial {
    crate::download::index_trial(name, &["3.12"], "numpy==1.26.4", test)
}

trial!(numpy2_pickles_on_numpy1_from_the_builders, by = index_trial);
/// The builders alone find numpy#28340: every builder's protocol-5 pickle fails to load with
/// `No module named 'numpy._core.numeric'`, protocols 0 to 4 load (the builders' own class
/// among them, whose module the consumers' workers import from the file's folder), and the
/// case file passes on 3.12 with its two environments.
fn numpy2_pickles_on_numpy1_from_the_builders() -> TestResult {
    let dir = folder(&[("arrays.py", ARRAYS)]);
    let d = dir.path();
    let path = crate::download::path_with_uv();
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(
        &["3.12"],
        &[
            "--values",
            "arrays.py",
            "--count",
            "3",
            "--dump-requires",
            "numpy==2.0.2",
            "--load-requires",
            "numpy==1.26.4",
            "--json",
            "r.json",
            "--out",
            "out",
            "-j",
            "2",
        ],
    ));
    let run = Run::from(
        crosspickle(d)
            .env("PATH", &path)
            .args(&args)
            .output()
            .expect("crosspickle runs"),
    );
    run.expect_code(1)?;
    let report = json_at(&d.join("r.json"));
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let shown: Vec<String> = findings
        .iter()
        .map(|f| format!("{} {} {}", f["oracle"], f["observed"], f["protocols"]))
        .collect();
    check(
        shown == [r#""load-differs" "ModuleNotFoundError" [5,"oob"]"#],
        format!(
            "one finding, protocol 5's, in band and out of band: {shown:?}\n{}",
            run.stdout
        ),
    )?;
    let found = &findings[0];
    check(
        found["detail"] == "ModuleNotFoundError: No module named 'numpy._core.numeric'"
            && found["occurrences"] == 3,
        format!("numpy._core.numeric, for all three builders: {found:#}"),
    )?;
    let case = std::fs::read_to_string(d.join(found["case_file"].as_str().unwrap_or("")))
        .unwrap_or_default();
    check(
        case.contains(
            "dump_requires:\n  - \"numpy==2.0.2\"\nload_requires:\n  - \"numpy==1.26.4\"\n",
        ),
        format!("the case holds each side's packages: {case}"),
    )?;
    let mut run_args = vec!["run".to_string()];
    run_args.extend(args_on(&["3.12"], &["out"]));
    let (run, results) = run_json(d, &run_args);
    run.expect_code(0)?;
    let verdicts: Vec<Value> = runs(&results)
        .iter()
        .map(|r| r["verdict"].clone())
        .collect();
    check(
        verdicts.len() == 1 && verdicts.iter().all(|v| v == "xfail"),
        format!(
            "the one run (protocol 5, the Python pickler and unpickler) an expected failure: {verdicts:?}\n{}",
            run.stdout
        ),
    )
}
