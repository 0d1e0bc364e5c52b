//! `crosspickle merge`: one [`Results`] from the JSON results of many jobs, possibly from
//! different machines.
//!
//! - Interpreters are the union by label and platform (the first input's facts win: a label
//!   names the same implementation, version and build everywhere). One label on two platforms
//!   or machines (a Linux and a macOS job each say `cpython-3.12.0`) is two interpreters: each
//!   gets its platform in its label, `cpython-3.12.0+linux-x86_64` and
//!   `cpython-3.12.0+darwin-arm64`, in its runs too ([`tell_platforms_apart`]). An interpreter
//!   whose platform is not recorded (results of older versions) keeps its label.
//! - Cases are the union by id (the first input's title, path, tags and links win).
//! - Runs are the union by (case, params by identity, interpreter label, producer label for a
//!   round trip).
//!   The same run seen again with the same verdict, outcome, exception and signal is kept once
//!   (messages may differ between machines: addresses, paths). Seen with a different verdict or
//!   outcome it is a [`Conflict`]: every distinct sighting is listed with the file it came from,
//!   the run keeps the first failing record (or the first), and the merged results fail.
//!   Conflicts already in an input are carried over, and a record that such an input kept is
//!   named by the file it first came from, not by the merged file that carried it.
//! - Shards of a `--partition` run must all be there, each once, of one partitioning
//!   ([`check_shards`]); the merge of them is a whole run, with no `partition` of its own.
//! - The merge is partial when an input is. Its duration is the longest input's: the jobs of
//!   a CI matrix run side by side, so the merged results took as long as the slowest of them
//!   (and a file merged with itself takes its own time, not twice it).

use std::collections::HashMap;

use super::{Conflict, Results, RunRecord, Sighting};
use crate::case::OutcomeKind;
use crate::errors::Error;
use crate::verdict::Verdict;

/// Do the shards among `inputs` make whole runs (see [`crate::partition::check_complete`])?
/// A shard missing, given twice or of another partitioning is bad input (exit status 2):
/// merged, they would pass for a whole run that they are not.
pub fn check_shards(inputs: &[(String, Results)]) -> Result<(), Error> {
    let described: Vec<(&str, Option<&crate::partition::Shard>, Vec<&str>)> = inputs
        .iter()
        .map(|(name, r)| {
            (
                name.as_str(),
                r.partition.as_ref(),
                r.interpreters.iter().map(|i| i.label.as_str()).collect(),
            )
        })
        .collect();
    crate::partition::check_complete(&described).map_err(|p| Error::Usage(p.to_string()))
}

/// Read every file; an unreadable one is an error (exit status 2).
pub fn read_all(paths: &[std::path::PathBuf]) -> Result<Vec<(String, Results)>, Error> {
    paths
        .iter()
        .map(|path| Ok((path.display().to_string(), super::wire::read(path)?)))
        .collect()
}

type Key = (String, String, String, Option<String>);

fn key(r: &RunRecord) -> Key {
    (
        r.case.clone(),
        r.params.to_string(),
        r.python.clone(),
        r.dump_python.clone(),
    )
}

/// What makes two records of the same run disagree.
fn signature(r: &RunRecord) -> (Verdict, Option<OutcomeKind>, Option<&str>, Option<&str>) {
    let o = r.observed.as_ref();
    (
        r.verdict,
        o.map(|o| o.outcome),
        o.and_then(|o| o.exception.as_deref()),
        o.and_then(|o| o.signal.as_deref()),
    )
}

/// The merged results. `inputs` are (source name, results) in the order given.
pub fn merge(mut inputs: Vec<(String, Results)>) -> Results {
    tell_platforms_apart(&mut inputs);
    let mut merged = Results::new();
    let mut partial_reasons = Vec::new();
    // Per run: every distinct record with its source.
    let mut order: Vec<Key> = Vec::new();
    let mut seen: HashMap<Key, Vec<(String, RunRecord)>> = HashMap::new();
    let mut carried: Vec<Conflict> = Vec::new();
    for (source, results) in inputs {
        merged.duration_s = merged.duration_s.max(results.duration_s);
        if results.partial {
            partial_reasons.push(format!(
                "{source}: {}",
                results.partial_reason.as_deref().unwrap_or("partial")
            ));
        }
        for i in results.interpreters {
            if !merged.interpreters.iter().any(|m| m.label == i.label) {
                merged.interpreters.push(i);
            }
        }
        for (id, info) in results.cases {
            merged.cases.entry(id).or_insert(info);
        }
        for r in results.runs {
            let origin = origin(&results.conflicts, &r)
                .unwrap_or(&source)
                .to_string();
            let k = key(&r);
            let records = seen.entry(k.clone()).or_insert_with(|| {
                order.push(k);
                Vec::new()
            });
            if !records
                .iter()
                .any(|(_, known)| signature(known) == signature(&r))
            {
                records.push((origin, r));
            }
        }
        carried.extend(results.conflicts);
    }
    for k in order {
        let records = seen.remove(&k).expect("every key has records");
        let kept = records
            .iter()
            .position(|(_, r)| r.verdict.fails_run())
            .unwrap_or(0);
        let carried_conflict = carried
            .iter()
            .position(|c| conflict_key(c) == k)
            .map(|i| carried.remove(i));
        merged
            .conflicts
            .extend(conflict(carried_conflict, &records));
        merged.runs.push(
            records
                .into_iter()
                .nth(kept)
                .expect("kept is an index of records")
                .1,
        );
    }
    // Conflicts about runs no input has any more (cannot happen with files crosspickle wrote,
    // but never drop one).
    merged.conflicts.extend(carried);
    if !partial_reasons.is_empty() {
        merged.partial = true;
        merged.partial_reason = Some(format!(
            "merged from partial results ({})",
            partial_reasons.join("; ")
        ));
    }
    merged.sort_runs();
    merged
}

/// Give the platform in the label of every interpreter whose label the inputs use on more than
/// one platform or machine (recorded ones: an interpreter of older results, with none, is left
/// as it is), in the interpreters and the runs of its input alike.
fn tell_platforms_apart(inputs: &mut [(String, Results)]) {
    let mut platforms: HashMap<String, Vec<(&str, &str)>> = HashMap::new();
    for (_, results) in inputs.iter() {
        for i in &results.interpreters {
            if let Some(p) = i.platform.as_deref() {
                let seen = platforms.entry(i.label.clone()).or_default();
                let this = (p, i.machine.as_deref().unwrap_or(""));
                if !seen.contains(&this) {
                    seen.push(this);
                }
            }
        }
    }
    let shared: Vec<String> = platforms
        .into_iter()
        .filter(|(_, seen)| seen.len() > 1)
        .map(|(label, _)| label)
        .collect();
    for (_, results) in inputs.iter_mut() {
        let mut renamed: HashMap<String, String> = HashMap::new();
        for i in &mut results.interpreters {
            if !shared.contains(&i.label) {
                continue;
            }
            // Against no host at all: the tag names the platform and the machine.
            if let Some(tag) = i.platform_tag(("", "")) {
                let label = format!("{}+{tag}", i.label);
                renamed.insert(std::mem::replace(&mut i.label, label.clone()), label);
            }
        }
        if renamed.is_empty() {
            continue;
        }
        let runs = results.runs.iter_mut().flat_map(|r| {
            std::iter::once(&mut r.python)
                .chain(r.dump_python.as_mut())
                .chain(r.load_python.as_mut())
        });
        let conflicts = results
            .conflicts
            .iter_mut()
            .flat_map(|c| std::iter::once(&mut c.python).chain(c.dump_python.as_mut()));
        for label in runs.chain(conflicts) {
            if let Some(new) = renamed.get(label.as_str()) {
                *label = new.clone();
            }
        }
    }
}

/// The file a record first came from, when its input is itself a merge that saw it in a
/// conflict: the sighting with the record's verdict and summary.
fn origin<'a>(conflicts: &'a [Conflict], r: &RunRecord) -> Option<&'a str> {
    let summary = r.summary();
    conflicts
        .iter()
        .filter(|c| c.concerns(r))
        .flat_map(|c| &c.seen)
        .find(|s| s.verdict == r.verdict && s.summary == summary)
        .map(|s| s.source.as_str())
}

fn conflict_key(c: &Conflict) -> Key {
    (
        c.case.clone(),
        c.params.to_string(),
        c.python.clone(),
        c.dump_python.clone(),
    )
}

/// The conflict about one run: the one an input carried, with every distinct record of this
/// merge added when there are several.
fn conflict(carried: Option<Conflict>, records: &[(String, RunRecord)]) -> Option<Conflict> {
    let mut conflict = carried;
    if records.len() > 1 {
        let c = conflict.get_or_insert_with(|| {
            let r = &records[0].1;
            Conflict {
                case: r.case.clone(),
                params: r.params.clone(),
                python: r.python.clone(),
                dump_python: r.dump_python.clone(),
                seen: Vec::new(),
            }
        });
        for (source, r) in records {
            let sighting = Sighting {
                source: source.clone(),
                verdict: r.verdict,
                summary: r.summary(),
            };
            if !c.seen.contains(&sighting) {
                c.seen.push(sighting);
            }
        }
    }
    conflict
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Observed;
    use crate::python::{Implementation, Interpreter};

    fn record(
        case: &str,
        python: &str,
        verdict: Verdict,
        outcome: OutcomeKind,
        exception: Option<&str>,
    ) -> RunRecord {
        RunRecord {
            observed: Some(Observed {
                exception: exception.map(String::from),
                message: Some(format!("at {python}")),
                ..Observed::new(outcome, 0.5)
            }),
            ..RunRecord::for_tests(case, python, verdict)
        }
    }

    fn results(runs: Vec<RunRecord>) -> Results {
        let mut r = Results::new();
        r.duration_s = 1.0;
        r.runs = runs;
        r
    }

    #[test]
    fn union_of_runs_and_duplicates_kept_once() {
        let a = results(vec![record(
            "c",
            "cpython-3.8.18",
            Verdict::Ok,
            OutcomeKind::Pass,
            None,
        )]);
        let b = results(vec![
            record("c", "cpython-3.12.1", Verdict::Ok, OutcomeKind::Pass, None),
            record("c", "cpython-3.8.18", Verdict::Ok, OutcomeKind::Pass, None),
        ]);
        let m = merge(vec![("a.json".into(), a), ("b.json".into(), b)]);
        assert_eq!(m.runs.len(), 2);
        assert!(m.conflicts.is_empty());
        assert!(!m.failed());
        assert_eq!(m.duration_s, 1.0, "the longest input's");
    }

    #[test]
    fn one_label_on_three_platforms_is_three_interpreters() {
        let on = |platform: Option<&str>, machine: Option<&str>, verdict| {
            let mut r = results(vec![record(
                "c",
                "cpython-3.12.1",
                verdict,
                OutcomeKind::Pass,
                None,
            )]);
            let mut i = Interpreter::for_tests(Implementation::Cpython, "3.12.1");
            i.label = "cpython-3.12.1".into();
            i.platform = platform.map(String::from);
            i.machine = machine.map(String::from);
            r.interpreters.push(i);
            r
        };
        let inputs = vec![
            (
                "l.json".into(),
                on(Some("linux"), Some("x86_64"), Verdict::Ok),
            ),
            (
                "m.json".into(),
                on(Some("darwin"), Some("arm64"), Verdict::Regression),
            ),
            (
                "w.json".into(),
                on(Some("win32"), Some("AMD64"), Verdict::Ok),
            ),
            (
                "l2.json".into(),
                on(Some("linux"), Some("x86_64"), Verdict::Ok),
            ),
        ];
        let m = merge(inputs);
        let labels: Vec<&str> = m.interpreters.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "cpython-3.12.1+linux-x86_64",
                "cpython-3.12.1+darwin-arm64",
                "cpython-3.12.1+win32-AMD64"
            ]
        );
        let runs: Vec<(&str, Verdict)> = m
            .runs
            .iter()
            .map(|r| (r.python.as_str(), r.verdict))
            .collect();
        assert_eq!(runs.len(), 3, "{runs:?}");
        assert!(runs.contains(&("cpython-3.12.1+darwin-arm64", Verdict::Regression)));
        assert!(m.conflicts.is_empty(), "{:?}", m.conflicts);
        // Results of older versions, with no platform, merge by label as before.
        let old = merge(vec![
            ("a.json".into(), on(None, None, Verdict::Ok)),
            ("b.json".into(), on(None, None, Verdict::Ok)),
            (
                "c.json".into(),
                on(Some("linux"), Some("x86_64"), Verdict::Ok),
            ),
        ]);
        assert_eq!(old.interpreters.len(), 1);
        assert_eq!(old.interpreters[0].label, "cpython-3.12.1");
        assert_eq!(old.runs.len(), 1);
    }

    #[test]
    fn differing_outcomes_are_a_conflict_keeping_the_failing_record() {
        let a = results(vec![record(
            "c",
            "cpython-3.8.18",
            Verdict::Ok,
            OutcomeKind::Pass,
            None,
        )]);
        let b = results(vec![record(
            "c",
            "cpython-3.8.18",
            Verdict::Regression,
            OutcomeKind::Error,
            Some("ValueError"),
        )]);
        let m = merge(vec![("a.json".into(), a), ("b.json".into(), b)]);
        assert_eq!(m.runs.len(), 1);
        assert_eq!(m.runs[0].verdict, Verdict::Regression);
        assert_eq!(m.conflicts.len(), 1);
        let seen: Vec<_> = m.conflicts[0]
            .seen
            .iter()
            .map(|s| (s.source.as_str(), s.verdict))
            .collect();
        assert_eq!(
            seen,
            [("a.json", Verdict::Ok), ("b.json", Verdict::Regression)]
        );
        assert!(m.failed());
        // Merging the merge again keeps the conflict.
        let again = merge(vec![("m.json".into(), m.clone())]);
        assert_eq!(again.conflicts.len(), 1);
        assert_eq!(again.conflicts[0].seen.len(), 2);
        // With a third file, each side is named by the file it came from: the record the
        // merge kept came from b.json, not from m.json.
        let c = results(vec![record(
            "c",
            "cpython-3.8.18",
            Verdict::Ok,
            OutcomeKind::Pass,
            None,
        )]);
        let third = merge(vec![("m.json".into(), m), ("c.json".into(), c)]);
        let seen: Vec<_> = third.conflicts[0]
            .seen
            .iter()
            .map(|s| (s.source.as_str(), s.verdict))
            .collect();
        assert_eq!(
            seen,
            [
                ("a.json", Verdict::Ok),
                ("b.json", Verdict::Regression),
                ("c.json", Verdict::Ok)
            ]
        );
    }

    #[test]
    fn passing_but_different_verdicts_still_conflict() {
        let a = results(vec![record(
            "c",
            "pypy-3.9.18",
            Verdict::Ok,
            OutcomeKind::Pass,
            None,
        )]);
        let b = results(vec![record(
            "c",
            "pypy-3.9.18",
            Verdict::Skipped,
            OutcomeKind::Pass,
            None,
        )]);
        let m = merge(vec![("a".into(), a), ("b".into(), b)]);
        assert_eq!(m.conflicts.len(), 1);
        assert!(m.failed());
    }

    #[test]
    fn partial_inputs_make_a_partial_merge() {
        let mut a = results(vec![]);
        a.partial = true;
        a.partial_reason = Some("interrupted (Ctrl-C) after 1 of 4 runs".into());
        let m = merge(vec![
            ("a.json".into(), a),
            ("b.json".into(), results(vec![])),
        ]);
        assert!(m.partial);
        assert!(m.partial_reason.unwrap().contains("a.json: interrupted"));
    }
}
