//! The results of a run as data: every interpreter and every run record, enough to rebuild any
//! report later. The model is here; its serialised form, what `--json` writes and `merge`
//! reads back, is [`wire`] (with the format version); [`merge`] unites the results of many
//! jobs.

pub mod merge;
pub mod wire;

use std::collections::BTreeMap;

use crate::case::{run_name, Case, Expected, Params};
use crate::outcome::Observed;
use crate::python::Interpreter;
use crate::verdict::Verdict;

pub use wire::FORMAT_VERSION;

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
}

impl RunRecord {
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

/// What reports say about a case besides its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseInfo {
    pub title: String,
    pub path: String,
    pub tags: Vec<String>,
    pub links: Vec<String>,
}

impl From<&Case> for CaseInfo {
    fn from(case: &Case) -> Self {
        CaseInfo {
            title: case.title.clone(),
            path: case.path.display().to_string(),
            tags: case.tags.clone(),
            links: case.links.clone(),
        }
    }
}

/// A whole run's results.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// The crosspickle that made them.
    pub crosspickle_version: String,
    /// True when the run was interrupted or stopped early (`-x`): not every planned run is here.
    pub partial: bool,
    pub partial_reason: Option<String>,
    pub duration_s: f64,
    pub interpreters: Vec<Interpreter>,
    pub cases: BTreeMap<String, CaseInfo>,
    pub runs: Vec<RunRecord>,
    /// Runs that `merge` saw more than once with different verdicts or outcomes (see
    /// [`Conflict`]); empty for a single run.
    pub conflicts: Vec<Conflict>,
}

/// The same run (case, params, interpreter label, and producer for a round trip) reported by
/// several merged inputs with different verdicts or outcomes. `runs` keeps one record for it,
/// the first failing one (or the first one when none fails); a conflict fails the merged
/// results whatever that record's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub case: String,
    pub params: Params,
    pub python: String,
    pub dump_python: Option<String>,
    /// Every distinct observation, in the order the inputs were given.
    pub seen: Vec<Sighting>,
}

/// One input's view of a conflicting run.
#[derive(Debug, Clone, PartialEq)]
pub struct Sighting {
    /// The file it came from.
    pub source: String,
    pub verdict: Verdict,
    /// `error: ValueError: boom`, or the reason of a skipped run.
    pub summary: String,
}

impl Conflict {
    /// `case[params]`, with ` producer ->` for a round trip (the consumer is `python`; see
    /// [`run_name`]).
    pub fn name(&self) -> String {
        run_name(&self.case, &self.params, self.dump_python.as_deref(), None)
    }

    /// Does this conflict concern `run`?
    pub fn concerns(&self, run: &RunRecord) -> bool {
        self.case == run.case
            && self.params == run.params
            && self.python == run.python
            && self.dump_python == run.dump_python
    }

    /// `regression in a.json (error: ValueError: boom); ok in b.json (pass)`
    pub fn describe(&self) -> String {
        let seen: Vec<String> = self
            .seen
            .iter()
            .map(|s| format!("{} in {} ({})", s.verdict, s.source, s.summary))
            .collect();
        seen.join("; ")
    }
}

impl Results {
    pub fn new() -> Self {
        Results {
            crosspickle_version: env!("CARGO_PKG_VERSION").to_string(),
            partial: false,
            partial_reason: None,
            duration_s: 0.0,
            interpreters: Vec::new(),
            cases: BTreeMap::new(),
            runs: Vec::new(),
            conflicts: Vec::new(),
        }
    }

    pub fn failed(&self) -> bool {
        self.runs.iter().any(|r| r.verdict.fails_run()) || !self.conflicts.is_empty()
    }

    /// The conflict `merge` found about `run`, if any.
    pub fn conflict_for(&self, run: &RunRecord) -> Option<&Conflict> {
        self.conflicts.iter().find(|c| c.concerns(run))
    }

    /// The counts joined with `, `, each as `show` writes it (`no runs` when there are none).
    pub fn counts_text(&self, show: impl Fn(Verdict, usize) -> String) -> String {
        let counts: Vec<String> = self.counts().into_iter().map(|(v, n)| show(v, n)).collect();
        if counts.is_empty() {
            "no runs".to_string()
        } else {
            counts.join(", ")
        }
    }

    /// Counts per verdict, in the order of [`Verdict::ALL`], zero counts left out.
    pub fn counts(&self) -> Vec<(Verdict, usize)> {
        Verdict::ALL
            .iter()
            .map(|v| (*v, self.runs.iter().filter(|r| r.verdict == *v).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Runs in a stable order: case, params as written, then interpreter order.
    pub fn sort_runs(&mut self) {
        let order: BTreeMap<&str, usize> = self
            .interpreters
            .iter()
            .enumerate()
            .map(|(i, p)| (p.label.as_str(), i))
            .collect();
        let key = |r: &RunRecord| {
            (
                r.case.clone(),
                r.params.to_string(),
                r.dump_python
                    .as_deref()
                    .map(|d| order.get(d).copied().unwrap_or(usize::MAX)),
                order.get(r.python.as_str()).copied().unwrap_or(usize::MAX),
            )
        };
        self.runs.sort_by_cached_key(key);
    }
}

impl Default for Results {
    fn default() -> Self {
        Self::new()
    }
}
