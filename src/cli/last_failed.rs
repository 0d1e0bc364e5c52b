//! `--last-failed` (`--lf`), as pytest's: the failing runs of the runs made from a folder, kept
//! in the cache folder (`last-failed/<digest of the folder>.json`), and the plan narrowed to
//! them.
//!
//! After every run the record is updated as pytest's cache is: the runs this run made leave
//! it, those of them whose verdict failed (or that were flaky) enter it, and failures of runs
//! this run did not make stay. With `--lf`, the plan keeps the runs of the record; when the
//! record is empty, missing or holds none of the selected runs, everything selected runs, and
//! a note says so (pytest's default, `--last-failed-no-failures all`).
//!
//! Runs made side by side from one folder (two shards, say) may end together: the record is
//! read, merged and replaced under a lock beside it (`<digest>.lock`), so the one that ends
//! second reads what the first wrote and both runs' failures stay.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::results::{Results, RunRecord};
use crate::run::{Plan, PlannedRun};
use crate::verdict::Verdict;

/// One run: case, params as reports name them, interpreter label, producer label.
type Key = (String, String, String, Option<String>);

#[derive(Serialize, Deserialize, Default)]
struct Record {
    /// The folder the runs were made from, for whoever reads the file.
    folder: String,
    failed: Vec<RunKey>,
}

#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RunKey {
    case: String,
    params: String,
    python: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dump_python: Option<String>,
}

impl RunKey {
    fn key(&self) -> Key {
        (
            self.case.clone(),
            self.params.clone(),
            self.python.clone(),
            self.dump_python.clone(),
        )
    }
}

fn of_record(r: &RunRecord) -> RunKey {
    RunKey {
        case: r.case.clone(),
        params: r.params.to_string(),
        python: r.python.clone(),
        dump_python: r.dump_python.clone(),
    }
}

fn of_planned(r: &PlannedRun) -> Key {
    (
        r.case.id.clone(),
        r.params.to_string(),
        r.interpreter.label.clone(),
        r.producer.as_ref().map(|p| p.label.clone()),
    )
}

/// The record's file for the current folder; none without a cache folder.
fn file(cache_dir: Option<&Path>) -> Option<PathBuf> {
    let here = std::env::current_dir().ok()?;
    let here = std::fs::canonicalize(&here).unwrap_or(here);
    let digest = crate::sys::hash::short_hex(here.as_os_str().as_encoded_bytes(), 16);
    Some(
        cache_dir?
            .join("last-failed")
            .join(format!("{digest}.json")),
    )
}

fn read(path: &Path) -> Option<Record> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// `--lf`: keep the runs of `plan` that failed last time, or all of them (with a note) when
/// there are none to keep.
pub fn narrow(plan: &mut Plan, cache_dir: Option<&Path>) {
    let failed: BTreeSet<Key> = file(cache_dir)
        .and_then(|f| read(&f))
        .map(|r| r.failed.iter().map(RunKey::key).collect())
        .unwrap_or_default();
    let kept = plan
        .runs
        .iter()
        .filter(|r| failed.contains(&of_planned(r)))
        .count();
    if kept == 0 {
        eprintln!(
            "note: --last-failed: {}; running all {} selected runs",
            if failed.is_empty() {
                "no failing run recorded from this folder".to_string()
            } else {
                format!(
                    "none of the {} failing runs recorded from this folder is selected",
                    failed.len()
                )
            },
            plan.runs.len()
        );
        return;
    }
    eprintln!(
        "note: --last-failed: running the {kept} of {} selected runs that failed last time",
        plan.runs.len()
    );
    plan.runs.retain(|r| failed.contains(&of_planned(r)));
    for (i, r) in plan.runs.iter_mut().enumerate() {
        r.index = i;
    }
}

/// The failing runs known before, less those `results` ran, with those of them that failed
/// or were flaky.
fn updated(old: Vec<RunKey>, results: &Results) -> Vec<RunKey> {
    let ran: BTreeSet<Key> = results.runs.iter().map(|r| of_record(r).key()).collect();
    let mut failed: BTreeSet<RunKey> = old
        .into_iter()
        .filter(|k| !ran.contains(&k.key()))
        .collect();
    failed.extend(
        results
            .runs
            .iter()
            .filter(|r| r.fails() || r.verdict == Verdict::Flaky)
            .map(of_record),
    );
    failed.into_iter().collect()
}

/// Update the record of this folder with `results` (see the module's doc), under its lock: read,
/// merged and replaced whole while no other crosspickle does the same. A record that cannot be
/// written is a warning: the run's verdicts do not depend on it.
pub fn remember(results: &Results, cache_dir: Option<&Path>) {
    let Some(path) = file(cache_dir) else { return };
    if let Some(parent) = path.parent() {
        // A folder that cannot be made is said below, when the record cannot be written.
        let _ = std::fs::create_dir_all(parent);
    }
    let _lock = match crate::sys::lock::acquire_blocking(&path.with_extension("lock")) {
        Ok(lock) => Some(lock),
        Err(e) => {
            eprintln!(
                "warning: --last-failed: {e}; the record is updated without it (a run ending at the same time may undo this one's update)"
            );
            None
        }
    };
    let old = read(&path).map(|r| r.failed).unwrap_or_default();
    let record = Record {
        folder: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        failed: updated(old, results),
    };
    let bytes = serde_json::to_vec_pretty(&record).expect("the record serializes");
    let written = path
        .parent()
        .map(std::fs::create_dir_all)
        .unwrap_or(Ok(()))
        .and_then(|_| crate::sys::fs::write_atomic(&path, &bytes));
    if let Err(e) = written {
        eprintln!(
            "warning: cannot keep the failing runs for --last-failed in {}: {e}",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(case: &str, python: &str, verdict: Verdict) -> RunRecord {
        RunRecord::for_tests(case, python, verdict)
    }

    #[test]
    fn what_ran_replaces_what_was_known_and_the_rest_stays() {
        let mut first = Results::new();
        first.runs = vec![
            record("a", "cpython-3.12.1", Verdict::Regression),
            record("b", "cpython-3.12.1", Verdict::Changed),
            record("c", "cpython-3.12.1", Verdict::Ok),
        ];
        let known = updated(Vec::new(), &first);
        let names = |k: &[RunKey]| k.iter().map(|k| k.case.clone()).collect::<Vec<_>>();
        assert_eq!(names(&known), ["a", "b"]);
        // Only a and c ran again (-k): a passes and leaves, c is flaky and enters, b stays.
        let mut second = Results::new();
        second.runs = vec![
            record("a", "cpython-3.12.1", Verdict::Ok),
            record("c", "cpython-3.12.1", Verdict::Flaky),
            record("a", "pypy-3.9.18", Verdict::Xfail),
        ];
        assert_eq!(names(&updated(known, &second)), ["b", "c"]);
    }
}
