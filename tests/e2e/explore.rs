//! `crosspickle explore` end to end on three interpreters: it finds differences this project's
//! corpus documents (2.7's 8-bit str that Python 3 cannot load without an encoding, a value
//! 2.7 cannot pickle at all), every case file it writes passes with `crosspickle run` on the
//! same interpreters and fails once a rule is changed, the same seed gives the same files byte
//! for byte, and a baseline hides what an earlier run found.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::*;

const PYTHONS: &[&str] = &["2.7", "3.12", "pypy"];

fn explore(dir: &Path, out: &str, json: &str, count: &str, extra: &[&str]) -> Run {
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(
        PYTHONS,
        &[
            "--seed", "1", "--count", count, "--out", out, "--json", json,
        ],
    ));
    args.extend(extra.iter().map(|a| a.to_string()));
    Run::from(
        crosspickle(dir)
            .args(&args)
            .output()
            .expect("crosspickle runs"),
    )
}

fn run_args(folder: &str) -> Vec<String> {
    let mut args = vec!["run".to_string()];
    args.extend(args_on(PYTHONS, &[folder]));
    args
}

/// Every file of a folder, by name.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

trial!(finds_writes_and_repeats, needs = PYTHONS);
fn finds_writes_and_repeats() -> TestResult {
    let dir = folder(&[]);
    let d = dir.path();
    let first = explore(d, "one", "one.json", "40", &[]);
    first.expect_code(1)?;
    let report = json_at(&d.join("one.json"));
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let has = |oracle: &str, observed: &str, producer: &str| {
        findings.iter().any(|f| {
            f["oracle"] == oracle
                && f["observed"] == observed
                && f["producers"].as_array().is_some_and(|p| {
                    p.iter()
                        .any(|p| p.as_str().is_some_and(|p| p.starts_with(producer)))
                })
        })
    };
    check(
        has("load-differs", "UnicodeDecodeError", "cpython-2.7"),
        format!("no 2.7 pickle that Python 3 cannot decode among {findings:#?}"),
    )?;
    check(
        has("dump-differs", "TypeError", "cpython-2.7"),
        "no value that 2.7 cannot pickle (Ellipsis)",
    )?;
    check(report["values"] == 40, "40 values explored")?;
    check(
        report["values_per_second"]
            .as_f64()
            .is_some_and(|v| v > 0.0),
        "values per second reported",
    )?;
    check(
        first.stdout.contains("values/s") && first.stdout.contains("findings"),
        format!("summary: {}", first.stdout),
    )?;
    let written = files(&d.join("one"));
    check(
        written.len() == findings.len() && !written.is_empty(),
        format!("one case file per finding: {:?}", written.keys()),
    )?;

    // Committed as they are, the cases pass on the same interpreters.
    let (run, results) = run_json(d, &run_args("one"));
    run.expect_code(0)?;
    let verdicts: Vec<String> = runs(&results)
        .iter()
        .map(|r| r["verdict"].as_str().unwrap_or("").to_string())
        .collect();
    check(
        verdicts.iter().any(|v| v == "xfail"),
        "the cases expect the differences they found",
    )?;

    // One rule changed: the case fails.
    let (name, text) = written
        .iter()
        .find(|(n, _)| n.starts_with("explore-load-differs"))
        .expect("a load-differs case");
    let text = String::from_utf8(text.clone()).unwrap();
    let changed = text.replacen(
        "outcome: error\n    exception: \"UnicodeDecodeError\"",
        "outcome: pass",
        1,
    );
    check(changed != text, "a rule to change")?;
    std::fs::create_dir_all(d.join("changed")).unwrap();
    std::fs::write(d.join("changed").join(name), changed).unwrap();
    let (run, _) = run_json(d, &run_args("changed"));
    run.expect_code(1)?;

    // The same seed: the same files, byte for byte.
    explore(d, "two", "two.json", "40", &[]).expect_code(1)?;
    check(
        files(&d.join("two")) == written,
        "the same seed wrote other files",
    )?;

    // A baseline hides what the first run found: fewer values find nothing new.
    let third = explore(d, "three", "three.json", "20", &["--baseline", "one.json"]);
    third.expect_code(0)?;
    check(
        files(&d.join("three")).is_empty(),
        "no case file for known findings",
    )?;
    check(
        json_at(&d.join("three.json"))["hidden_by_baseline"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "hidden findings counted",
    )?;
    Ok(())
}

trial!(bad_input);
fn bad_input() -> TestResult {
    let dir = folder(&[("bad.json", "{\"findings\": 3}")]);
    let run = Run::from(
        crosspickle(dir.path())
            .args([
                "explore",
                "--pythons-toml",
                "/dev/null",
                "--baseline",
                "bad.json",
            ])
            .output()
            .expect("runs"),
    );
    run.expect_code(2)?;
    check(
        run.stderr.contains("bad.json") && run.stderr.contains("findings"),
        format!("says what is wrong: {}", run.stderr),
    )?;
    let run = Run::from(
        crosspickle(dir.path())
            .args(["explore", "--pythons-toml", "/dev/null", "--time", "0"])
            .output()
            .expect("runs"),
    );
    run.expect_code(2)?;
    check(
        run.stderr.contains("--time"),
        format!("names the flag: {}", run.stderr),
    )
}
