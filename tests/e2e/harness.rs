//! The harness end to end: outcomes, verdicts, params, exit codes.

use libtest_mimic::Trial;

use crate::support::*;

pub fn trials() -> Vec<Trial> {
    vec![trial("harness::params_and_verdicts_on_3_8", &["3.8"], params_and_verdicts)]
}

fn params_and_verdicts() -> TestResult {
    let dir = folder(&[(
        "cases/p.yaml",
        "title: params\nparams:\n  n: [1, 2]\ncode: |\n  assert n == 1, 'n is not one'\nexpect:\n  - where: {n: 2}\n    outcome: fail\n    match: not one\n",
    )]);
    let (run, json) = run_json(dir.path(), &["--python", "3.8"]);
    run.expect_code(0)?;
    let runs = runs(&json);
    check(runs.len() == 2, format!("two runs, got {runs:?}"))?;
    check(runs[0]["verdict"] == "ok" && runs[1]["verdict"] == "xfail", format!("{runs:?}"))?;
    check(runs[1]["exception"] == "AssertionError", format!("{:?}", runs[1]))
}
