//! The results of a run as data: every interpreter and every run record, enough to rebuild any
//! report later. The model is here; its serialised form, what `--json` writes and `merge`
//! reads back, is [`wire`] (with the format version); [`merge`] unites the results of many
//! jobs. [`pythons`] is the stable form of `crosspickle pythons --json`.

pub mod code_lines;
pub mod merge;
pub mod pythons;
pub mod wire;

use std::collections::BTreeMap;

use crate::case::{run_name, Case, Params};
use crate::python::Interpreter;
use crate::run::{Executed, Plan};
use crate::verdict::Verdict;

pub use crate::run::RunRecord;

pub use wire::FORMAT_VERSION;

/// What reports say about a case besides its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseInfo {
    pub title: String,
    pub path: String,
    pub tags: Vec<String>,
    pub links: Vec<String>,
    /// The case file's text, for the HTML report's code beside a failing run: known to the
    /// run that read it, not kept in the JSON (a merge's report shows none).
    pub source: Option<std::sync::Arc<str>>,
    /// Where the code stands in the file ([`Case::code_starts`]).
    pub code_starts: (Option<usize>, Option<usize>),
    /// Where `setup` stands ahead of the code ([`Case::setup_lines`]).
    pub setup_lines: crate::case::SetupLines,
    /// Where `relay` and `reload` stand in the file (`Bounce::starts`).
    pub bounce_starts: (Option<usize>, Option<usize>),
}

impl From<&Case> for CaseInfo {
    fn from(case: &Case) -> Self {
        CaseInfo {
            title: case.title.clone(),
            path: case.path.display().to_string(),
            tags: case.tags.clone(),
            links: case.links.clone(),
            source: Some(case.source.clone()),
            code_starts: case.code_starts,
            setup_lines: case.setup_lines,
            bounce_starts: case.bounce.as_ref().map_or((None, None), |b| b.starts),
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
    /// Which shard of a `--partition` run these results are; none for a whole run (and for a
    /// merge of every shard).
    pub partition: Option<crate::partition::Shard>,
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
            partition: None,
        }
    }

    /// The results of an executed `plan`, its finished runs in plan order; partial when some
    /// did not finish.
    pub fn from_run(plan: &Plan, executed: Executed) -> Self {
        let mut results = Results::new();
        results.interpreters = plan.interpreters.iter().map(|i| (**i).clone()).collect();
        for run in &plan.runs {
            results
                .cases
                .entry(run.case.id.clone())
                .or_insert_with(|| CaseInfo::from(&*run.case));
        }
        let total = executed.records.len();
        results.runs = executed.records.into_iter().flatten().collect();
        for run in &mut results.runs {
            if let Some(info) = results.cases.get(&run.case) {
                code_lines::CodeLines {
                    path: &info.path,
                    starts: info.code_starts,
                    setup: info.setup_lines,
                    bounce: info.bounce_starts,
                }
                .apply(run);
            }
        }
        if results.runs.len() < total {
            results.partial = true;
            results.partial_reason = Some(executed.stop_reason.unwrap_or_else(|| {
                format!(
                    "interrupted: {} of {} runs finished",
                    results.runs.len(),
                    total
                )
            }));
        }
        results.duration_s = executed.duration_s;
        results
    }

    pub fn failed(&self) -> bool {
        self.runs.iter().any(RunRecord::fails) || !self.conflicts.is_empty()
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

    /// The named checks of every run counted per verdict, in the order of [`Verdict::ALL`],
    /// zero counts left out (empty when no run made a check).
    pub fn check_counts(&self) -> Vec<(Verdict, usize)> {
        let checks = || self.runs.iter().flat_map(|r| &r.checks);
        Verdict::ALL
            .iter()
            .map(|v| (*v, checks().filter(|c| c.verdict == *v).count()))
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
