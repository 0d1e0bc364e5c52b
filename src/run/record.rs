//! The record of one judged run: what the run loop hands to reporters as each run finishes,
//! and what [`crate::results`] gathers into the results of a whole run.

use super::checks::CheckRecord;
use crate::case::{run_name, Expected, Params};
use crate::outcome::Observed;
use crate::verdict::Verdict;

/// One run: a case with one param combination on one interpreter (or one producer/consumer
/// pair of a round trip), what was expected and what happened.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub case: String,
    pub params: Params,
    /// The interpreter's label (for a round trip, the consumer's).
    pub python: String,
    pub dump_python: Option<String>,
    pub load_python: Option<String>,
    pub verdict: Verdict,
    pub expected: Expected,
    /// What happened; none for a skipped run or an environment that could not be made.
    pub observed: Option<Observed>,
    /// For a round trip whose load ran: how long the dump that made its pickle took (the dump
    /// runs once per producer, shared by its pairs).
    pub dump_duration_s: Option<f64>,
    /// Why it was skipped, or why its environment could not be made.
    pub reason: Option<String>,
    /// With `--retries`: the attempts before the one this record is, oldest first, each a run
    /// in a fresh process whose verdict failed (empty when the first attempt is this one).
    pub attempts: Vec<Attempt>,
    /// The packages of the environments the run had (none for a skipped run).
    pub packages: Packages,
    /// The named checks its code made (`check(name)`), each judged on its own, in the order
    /// they ended (a round trip's dump's first).
    pub checks: Vec<CheckRecord>,
}

/// The packages each side's environment was made from: requirements with the params put in,
/// `requires` first, then the side's own (`dump_requires`, `load_requires`); empty where the
/// case asks for none (the interpreter's own packages, nothing installed).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Packages {
    /// A round trip's producer's.
    pub dump: Vec<String>,
    /// The interpreter's (for a round trip, the consumer's).
    pub python: Vec<String>,
}

impl Packages {
    pub fn is_empty(&self) -> bool {
        self.dump.is_empty() && self.python.is_empty()
    }
}

/// An earlier attempt of a run that was run again (`--retries`).
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub verdict: Verdict,
    pub expected: Expected,
    pub observed: Option<Observed>,
    pub dump_duration_s: Option<f64>,
    pub reason: Option<String>,
    /// The named checks that attempt's code made, each judged, as a run's.
    pub checks: Vec<CheckRecord>,
}

impl Attempt {
    /// What happened in one line, as [`RunRecord::summary`].
    pub fn summary(&self) -> String {
        match (&self.observed, &self.reason) {
            (Some(o), _) => o.summary(),
            (None, Some(reason)) => reason.clone(),
            (None, None) => String::new(),
        }
    }
}

impl RunRecord {
    /// A run of `case` without params on `python` judged `verdict`, expected to pass, with
    /// nothing observed: what tests start from and change.
    pub fn for_tests(case: &str, python: &str, verdict: Verdict) -> Self {
        RunRecord {
            case: case.into(),
            params: Params::default(),
            python: python.into(),
            dump_python: None,
            load_python: None,
            verdict,
            expected: Expected::default_pass(),
            observed: None,
            dump_duration_s: None,
            reason: None,
            attempts: Vec::new(),
            packages: Packages::default(),
            checks: Vec::new(),
        }
    }

    /// This record as an earlier attempt of a run tried again.
    pub fn as_attempt(&self) -> Attempt {
        Attempt {
            verdict: self.verdict,
            expected: self.expected.clone(),
            observed: self.observed.clone(),
            dump_duration_s: self.dump_duration_s,
            reason: self.reason.clone(),
            checks: self.checks.clone(),
        }
    }

    /// Whether the run fails the whole run: its own verdict, or one of its checks'.
    pub fn fails(&self) -> bool {
        self.verdict.fails_run() || self.checks.iter().any(|c| c.verdict.fails_run())
    }

    /// The verdict the matrices and headings show: the run's own when it fails or no check
    /// does, else its worst check's (a run that passed with a check that regressed is shown
    /// as that regression).
    pub fn shown_verdict(&self) -> Verdict {
        if self.verdict.fails_run() {
            return self.verdict;
        }
        self.checks
            .iter()
            .map(|c| c.verdict)
            .filter(|v| v.fails_run())
            .max_by_key(|v| v.severity())
            .unwrap_or(self.verdict)
    }

    /// `id[params]`, and ` producer -> consumer` for a round trip (see [`run_name`]).
    pub fn name(&self) -> String {
        run_name(
            &self.case,
            &self.params,
            self.dump_python.as_deref(),
            self.load_python.as_deref(),
        )
    }

    /// What happened in one line (`error: ValueError: boom`), or why it did not run.
    pub fn summary(&self) -> String {
        match (&self.observed, &self.reason) {
            (Some(o), _) => o.summary(),
            (None, Some(reason)) => reason.clone(),
            (None, None) => String::new(),
        }
    }
}
