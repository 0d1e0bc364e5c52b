//! `crosspickle list --expected` (`-p`, `--json`): the expected matrix it prints without
//! running anything is what a real run then decides, cell by cell.

use libtest_mimic::Trial;
use serde_json::Value;

use crate::support::*;

pub fn trials() -> Vec<Trial> {
    vec![
        trial(
            "expected::corpus_matrix_is_what_a_run_decides",
            CORPUS_PYTHONS,
            corpus_matrix_is_what_a_run_decides,
        ),
        trial("expected::text_matrix", &["2.7", "3.13"], text_matrix),
    ]
}

/// The interpreters of the corpus comparison: both majors, a debug build and a PyPy.
const CORPUS_PYTHONS: &[&str] = &["2.7", "3.8", "3.13", "pypy", "debug"];

/// The key of a run in both JSONs: case, params, consumer (or interpreter), producer.
fn key(v: &Value) -> String {
    format!(
        "{} {} {} <- {}",
        v["case"].as_str().unwrap_or(""),
        v["params"],
        v["python"].as_str().unwrap_or(""),
        v["dump_python"].as_str().unwrap_or("")
    )
}

/// Checks every run of `run` against the cell `list` printed for it; returns how many runs
/// were executed and judged by a rule (the rest were skipped or could not run).
pub fn compare(listed: &Value, run: &Value) -> Result<usize, libtest_mimic::Failed> {
    let mut cells = std::collections::HashMap::new();
    for case in listed["cases"].as_array().into_iter().flatten() {
        for cell in case["runs"].as_array().into_iter().flatten() {
            let mut cell = cell.clone();
            cell["case"] = case["id"].clone();
            cells.insert(key(&cell), cell);
        }
    }
    let runs = runs(run);
    check(
        runs.len() == cells.len(),
        format!("{} runs, {} cells listed", runs.len(), cells.len()),
    )?;
    let mut judged = 0;
    for r in &runs {
        let k = key(r);
        let cell = cells
            .get(&k)
            .ok_or_else(|| format!("no cell listed for the run {k}"))?;
        let verdict = r["verdict"].as_str().unwrap_or("");
        let disposition = cell["disposition"].as_str().unwrap_or("");
        match (disposition, verdict) {
            ("skipped", v) => {
                check(
                    v == "skipped",
                    format!("{k}: listed skipped, the run says {v}"),
                )?;
                check(
                    cell["reason"] == r["reason"],
                    format!(
                        "{k}: skipped for {} (listed {})",
                        r["reason"], cell["reason"]
                    ),
                )?;
            }
            ("env-error", v) => check(v == "env-error", format!("{k}: listed env-error, ran {v}"))?,
            // An environment of `requires` that could not be made: nothing was judged.
            ("run", "env-error") => {}
            ("run", _) => {
                let by_dump = r["phase"] == "dump";
                let (rule, expected) = if by_dump {
                    ("dump_rule", &cell["dump_expected"])
                } else {
                    ("rule", &cell["expected"])
                };
                check(
                    &r["expected"] == expected,
                    format!(
                        "{k}: the run expected {} (decided in phase {}), list says {expected} (its {rule} {})",
                        r["expected"], r["phase"], cell[rule]
                    ),
                )?;
                judged += 1;
            }
            (d, _) => return Err(format!("{k}: unknown disposition {d}").into()),
        }
    }
    Ok(judged)
}

/// The whole corpus on five interpreters: `list --corpus -p … --json`, then a run of the same
/// with `--json`; every run's expectation is the cell's (of the phase that decided it), every
/// skip is listed as one, with the same reason.
fn corpus_matrix_is_what_a_run_decides() -> TestResult {
    let dir = folder(&[]);
    let mut args = python_args(CORPUS_PYTHONS);
    args.push("--corpus".into());
    let listed = crosspickle(dir.path())
        .arg("list")
        .args(&args)
        .arg("--json")
        .output()?;
    let text = Run::from(listed);
    text.expect_code(0)?;
    let listed: Value = serde_json::from_str(&text.stdout)?;
    check(
        listed["interpreters"].as_array().map_or(0, Vec::len) == CORPUS_PYTHONS.len(),
        format!("interpreters {}", listed["interpreters"]),
    )?;
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let judged = compare(&listed, &json)?;
    // Most of the corpus's runs execute: a comparison of skips alone would prove little.
    check(judged > 500, format!("only {judged} runs judged"))?;
    Ok(())
}

const ROUND_TRIP: &str = "title: t\nparams:\n  protocol: [2, 3]\ndump: |\n  import pickle\n  data = pickle.dumps(1, protocol)\nload: |\n  import pickle\n  pickle.loads(data)\nexpect:\n  - phase: dump\n    dump_python: '<3'\n    where: {protocol: 3}\n    outcome: error\n    exception: ValueError\n  - load_python: '<3'\n    where: {protocol: 3}\n    outcome: error\n    exception: ValueError\n";

/// The text form: the rules numbered, a row per producer, a column per consumer, `D/L` where
/// the dump phase's rule is another than the load's.
fn text_matrix() -> TestResult {
    let dir = folder(&[("cases/rt.yaml", ROUND_TRIP)]);
    let args = python_args(&["2.7", "3.13"]);
    let out = crosspickle(dir.path()).arg("list").args(&args).output()?;
    let out = Run::from(out);
    out.expect_code(0)?;
    let want = [
        "    1  dumped by python <3, dump phase, protocol=3: error ValueError",
        "    2  loaded by python <3, protocol=3: error ValueError",
        "    [protocol=3]",
    ];
    for line in want {
        check(
            out.stdout.contains(line),
            format!("no line {line:?} in\n{}", out.stdout),
        )?;
    }
    let rows: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.contains("[protocol=3]"))
        .collect();
    check(rows.len() >= 4, format!("{rows:?}"))?;
    check(
        rows[1].split_whitespace().collect::<Vec<_>>() == ["dump", "\\", "load", "a", "b"],
        rows[1],
    )?;
    let cells = |row: &str| {
        row.split_whitespace()
            .skip(2)
            .map(String::from)
            .collect::<Vec<_>>()
    };
    check(
        cells(rows[2]) == ["1/2", "1/."],
        format!("the 2.7 row: {}", rows[2]),
    )?;
    check(
        cells(rows[3]) == ["2", "."],
        format!("the 3.13 row: {}", rows[3]),
    )?;
    // --markdown is the catalogue: not with the matrix.
    let both = crosspickle(dir.path())
        .arg("list")
        .args(&args)
        .arg("--markdown")
        .output()?;
    let both = Run::from(both);
    both.expect_code(2)?;
    check(
        both.stderr.contains("--markdown prints the catalogue"),
        &both.stderr,
    )
}
