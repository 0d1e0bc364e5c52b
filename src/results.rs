//! The results of a run as data: every interpreter and every run record, enough to rebuild any
//! report later. This is what `--json` writes and what `merge` reads back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::case::{Case, Expected, Params, Phase};
use crate::outcome::Observed;
use crate::python::Interpreter;
use crate::verdict::Verdict;

pub const FORMAT_VERSION: u32 = 1;

/// One run: a case with one param combination on one interpreter (or one producer/consumer
/// pair of a round trip), what was expected and what happened.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub case: String,
    pub params: Params,
    /// The interpreter's label (for a round trip, the consumer's).
    pub python: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dump_python: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_python: Option<String>,
    pub verdict: Verdict,
    pub expected: Expected,
    /// What happened; none for a skipped run or an environment that could not be made.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
    /// For a round trip whose load ran: how long the dump that made its pickle took (the dump
    /// runs once per producer, shared by its pairs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dump_duration_s: Option<f64>,
    /// Why it was skipped, or why its environment could not be made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RunRecord {
    /// `id[params]`, and ` producer -> consumer` for a round trip.
    pub fn name(&self) -> String {
        let mut name = if self.params.is_empty() {
            self.case.clone()
        } else {
            format!("{}[{}]", self.case, self.params)
        };
        if let (Some(d), Some(l)) = (&self.dump_python, &self.load_python) {
            name.push_str(&format!(" {d} -> {l}"));
        }
        name
    }

    pub fn phase(&self) -> Option<Phase> {
        self.observed.as_ref().and_then(|o| o.phase)
    }

    /// `regression: expected pass, got error: ValueError: …`
    pub fn explanation(&self) -> String {
        let expected = describe_expected(&self.expected);
        match (&self.observed, &self.reason) {
            (Some(o), _) => format!("expected {expected}, got {}", o.summary()),
            (None, Some(r)) => r.clone(),
            (None, None) => format!("expected {expected}"),
        }
    }
}

pub fn describe_expected(e: &Expected) -> String {
    let mut s = crate::outcome::head(e.outcome, e.signal.as_deref(), e.exception.as_deref());
    if let Some(m) = &e.pattern {
        s.push_str(&format!(" matching /{m}/"));
    }
    s
}

/// What reports say about a case besides its runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseInfo {
    pub title: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    pub format_version: u32,
    pub crosspickle_version: String,
    /// True when the run was interrupted or stopped early (`-x`): not every planned run is here.
    pub partial: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_reason: Option<String>,
    pub duration_s: f64,
    pub interpreters: Vec<Interpreter>,
    #[serde(default)]
    pub cases: BTreeMap<String, CaseInfo>,
    pub runs: Vec<RunRecord>,
    /// Runs that `merge` saw more than once with different verdicts or outcomes (see
    /// [`Conflict`]); empty for a single run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<Conflict>,
}

/// The same run (case, params, interpreter label, and producer for a round trip) reported by
/// several merged inputs with different verdicts or outcomes. `runs` keeps one record for it,
/// the first failing one (or the first one when none fails); a conflict fails the merged
/// results whatever that record's verdict.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Conflict {
    pub case: String,
    pub params: Params,
    pub python: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dump_python: Option<String>,
    /// Every distinct observation, in the order the inputs were given.
    pub seen: Vec<Sighting>,
}

/// One input's view of a conflicting run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sighting {
    /// The file it came from.
    pub source: String,
    pub verdict: Verdict,
    /// `error: ValueError: boom`, or the reason of a skipped run.
    pub summary: String,
}

impl Conflict {
    /// `case[params]`, with ` producer ->` for a round trip (the consumer is `python`).
    pub fn name(&self) -> String {
        let mut name = self.case.clone();
        if !self.params.is_empty() {
            name = format!("{name}[{}]", self.params);
        }
        if let Some(d) = &self.dump_python {
            name = format!("{name} {d} ->");
        }
        name
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
            format_version: FORMAT_VERSION,
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
