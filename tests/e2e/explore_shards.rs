//! `crosspickle explore --partition M/N` and `crosspickle merge` of its reports: two shards of
//! a fixed seed and count, merged, report the findings of the unsharded run and write the same
//! case files byte for byte; reports that are not one run's shards are refused (exit 2).

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::*;

const PYTHONS: &[&str] = &["2.7", "3.12"];

fn explore(dir: &Path, name: &str, extra: &[&str]) -> Run {
    let mut args = vec!["explore".to_string()];
    let json = format!("{name}.json");
    args.extend(args_on(
        PYTHONS,
        &[
            "--seed", "5", "--count", "30", "-j", "2", "--out", name, "--json", &json,
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

/// Exit 0 or 1: explored, with or without findings.
trait Explored {
    fn expect_found(&self) -> TestResult;
}

impl Explored for Run {
    fn expect_found(&self) -> TestResult {
        match self.code {
            0 | 1 => Ok(()),
            _ => self.expect_code(1),
        }
    }
}

fn merge(dir: &Path, args: &[&str]) -> Run {
    Run::from(
        crosspickle(dir)
            .arg("merge")
            .args(args)
            .output()
            .expect("crosspickle runs"),
    )
}

/// Every file of a folder, by name.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, std::fs::read(e.path()).unwrap())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A report's findings without where their case file was written.
fn findings(report: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut all = report["findings"].as_array().cloned().unwrap_or_default();
    for f in &mut all {
        f["case_file"] = serde_json::Value::Null;
    }
    all
}

trial!(sharded_and_merged_is_the_whole_run, needs = PYTHONS);
fn sharded_and_merged_is_the_whole_run() -> TestResult {
    let dir = folder(&[("pass.yaml", "title: passes\ncode: pass\n")]);
    let d = dir.path();
    explore(d, "whole", &[]).expect_code(1)?;
    explore(d, "one", &["--partition", "1/2"]).expect_found()?;
    explore(d, "two", &["--partition", "2/2"]).expect_found()?;
    let whole = json_at(&d.join("whole.json"));
    let (one, two) = (json_at(&d.join("one.json")), json_at(&d.join("two.json")));
    check(
        one["values"] == 15 && two["values"] == 15,
        "each shard explores half of the 30 value numbers",
    )?;
    // The shards found something each, and one signature at least in both: the merge has
    // something to deduplicate.
    let signatures = |r: &serde_json::Value| -> std::collections::BTreeSet<String> {
        findings(r)
            .iter()
            .filter_map(|f| f["signature"].as_str().map(str::to_string))
            .collect()
    };
    check(
        signatures(&one).intersection(&signatures(&two)).count() > 0,
        format!(
            "a finding in both shards: {:?} / {:?}",
            signatures(&one),
            signatures(&two)
        ),
    )?;
    let merged = merge(
        d,
        &[
            "two.json",
            "one.json",
            "--json",
            "merged.json",
            "--out",
            "merged",
        ],
    );
    merged.expect_code(1)?;
    let report = json_at(&d.join("merged.json"));
    check(report["values"] == 30, "the merged run has 30 values")?;
    check(
        findings(&report) == findings(&whole),
        format!(
            "the merged findings are the whole run's:\n{:#?}\n---\n{:#?}",
            findings(&report),
            findings(&whole)
        ),
    )?;
    check(
        report["stability"] == whole["stability"],
        "the merged stability groups are the whole run's",
    )?;
    let (written, expected) = (files(&d.join("merged")), files(&d.join("whole")));
    check(
        !expected.is_empty() && written == expected,
        format!(
            "the merged case files are the whole run's: {:?} / {:?}",
            written.keys(),
            expected.keys()
        ),
    )?;
    check(
        merged.stdout.contains(&format!(
            "merged 2 explore shards: 30 values on 2 interpreters, {} findings",
            // The case files, not the support file beside them.
            expected.keys().filter(|k| k.ends_with(".yaml")).count()
        )),
        format!("the summary: {}", merged.stdout),
    )?;

    // Not one run's shards: refused, saying why, and nothing written.
    // Shard 2 of another seed (its report, as it would be, but for the seed).
    let mut other = two.clone();
    other["seed"] = serde_json::json!(6);
    std::fs::write(d.join("other.json"), other.to_string()).unwrap();
    let refused = merge(d, &["one.json", "other.json", "--json", "bad.json"]);
    refused.expect_code(2)?;
    check(
        refused.stderr.contains("seeds differ (6 and 5)"),
        format!("says the seeds differ: {}", refused.stderr),
    )?;
    check(!d.join("bad.json").exists(), "nothing written")?;
    let refused = merge(d, &["one.json"]);
    refused.expect_code(2)?;
    check(
        refused.stderr.contains("shard 2/2 missing"),
        format!("names the missing shard: {}", refused.stderr),
    )?;
    let mut old = two.clone();
    old["explore"] = serde_json::json!(1);
    std::fs::write(d.join("old.json"), old.to_string()).unwrap();
    let refused = merge(d, &["one.json", "old.json"]);
    refused.expect_code(2)?;
    check(
        refused.stderr.contains("format version 1"),
        format!("names the version: {}", refused.stderr),
    )?;
    // A run's results and an explore report.
    let results = Run::from(
        crosspickle(d)
            .args(args_on(&["3.12"], &["pass.yaml", "--json", "run.json"]))
            .output()
            .expect("runs"),
    );
    check(
        d.join("run.json").exists(),
        format!("the run wrote its results: {}", results.stderr),
    )?;
    let refused = merge(d, &["run.json", "one.json"]);
    refused.expect_code(2)?;
    check(
        refused
            .stderr
            .contains("run.json is not a report of `crosspickle explore --json`"),
        format!("says which is which: {}", refused.stderr),
    )?;
    // --partition spelt wrong.
    let bad = explore(d, "bad", &["--partition", "3/2"]);
    bad.expect_code(2)?;
    check(
        bad.stderr.contains("--partition `3/2`"),
        format!("names the value: {}", bad.stderr),
    )
}
