//! What a bisect tells: each [`Step`] as it happens, the [`Boundary`]s found, and the
//! [`Report`] every mode prints and writes as JSON.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::key::OutcomeKey;
use crate::case::Params;
use crate::errors::Error;
use crate::outcome::Observed;

/// How a step turned out, relative to the outcome at the old end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepState {
    /// The old outcome.
    Old,
    /// Any other outcome.
    New,
    /// Could not be tested: no interpreter, no install, no build, or the case does not apply.
    Skip,
    /// Interpreter mode: every tested step is shown; there is no old or new there.
    Tested,
}

/// One step of the log.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The version, release or commit.
    pub label: String,
    /// The interpreter that ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    pub state: StepState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<OutcomeKey>,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened around it: `built in 21 s`, `environment cached`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
}

impl Step {
    pub fn tested(
        label: String,
        python: Option<String>,
        observed: Observed,
        state: StepState,
    ) -> Step {
        Step {
            label,
            python,
            state,
            outcome: Some(OutcomeKey::of(&observed)),
            reason: None,
            notes: Vec::new(),
            observed: Some(observed),
        }
    }

    pub fn skipped(label: String, python: Option<String>, reason: String) -> Step {
        Step {
            label,
            python,
            state: StepState::Skip,
            outcome: None,
            reason: Some(reason),
            notes: Vec::new(),
            observed: None,
        }
    }

    /// One line of the step log.
    pub fn line(&self) -> String {
        let what = match (&self.state, &self.observed, &self.reason) {
            (StepState::Skip, _, Some(r)) => format!("skip: {}", first_line(r)),
            (_, Some(o), _) => o.summary(),
            _ => String::new(),
        };
        let state = match self.state {
            StepState::Old => " [old]",
            StepState::New => " [new]",
            _ => "",
        };
        let notes = if self.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.notes.join("; "))
        };
        format!("{}{state}: {what}{notes}", self.label)
    }
}

pub(super) fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    line.chars().take(400).collect()
}

/// One side of a boundary.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub label: String,
    pub outcome: OutcomeKey,
    /// The commit's subject, in commit mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// Where the outcome changed: the last version with the old outcome, the first with the new.
#[derive(Debug, Clone, Serialize)]
pub struct Boundary {
    pub last_old: Point,
    pub first_new: Point,
    /// Versions or commits between them that could not be tested: the change is at one of
    /// them or at `first_new`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub untested: Vec<String>,
}

impl Boundary {
    pub fn describe(&self) -> String {
        let with_subject = |p: &Point| match &p.subject {
            Some(s) => format!("{} \"{s}\"", p.label),
            None => p.label.clone(),
        };
        let mut s = format!(
            "{} -> {}: {} -> {}\n  last with the old outcome: {}\n  first with the new outcome: {}",
            self.last_old.label,
            self.first_new.label,
            self.last_old.outcome,
            self.first_new.outcome,
            with_subject(&self.last_old),
            with_subject(&self.first_new)
        );
        if !self.untested.is_empty() {
            s.push_str(&format!(
                "\n  could not test {} between them: the change is at one of them or at {}",
                self.untested.join(", "),
                self.first_new.label
            ));
        }
        s
    }
}

/// Releases a package bisect did not try, and why.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    pub releases: Vec<String>,
    pub why: String,
}

/// A bisect's result: what every mode prints and writes with `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `interpreters`, `package` or `commits`.
    pub mode: &'static str,
    pub case: String,
    pub params: Params,
    /// The package, or the CPython checkout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Package mode on a round trip: the side whose releases were bisected (`dump` or
    /// `load`; the other side held what the case gives it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    /// The interpreter of package mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// Every version or commit in the range, in order (package mode: those that can install
    /// on the interpreter).
    pub candidates: Vec<String>,
    /// The steps in the order they ran.
    pub steps: Vec<Step>,
    /// In order of the candidates; package mode lists the change that flips the outcome (into
    /// the newest release's) first, then the others in order.
    pub boundaries: Vec<Boundary>,
    /// One sentence: what was found, or why nothing was.
    pub conclusion: String,
    /// Package mode: releases between the ends that were not candidates, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
    /// Commit mode: how many builds ran (the other steps came from the cache).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builds: Option<usize>,
    pub duration_s: f64,
}

impl Report {
    /// The human summary printed after the step log.
    pub fn render(&self) -> String {
        let mut s = String::new();
        if self.boundaries.is_empty() {
            s.push_str(&format!("{}\n", self.conclusion));
        } else {
            let n = self.boundaries.len();
            let order = match (self.mode, n) {
                ("package", 2..) => ", the flip first",
                _ => "",
            };
            s.push_str(&format!(
                "{} ({n} change{}{order}):\n",
                self.conclusion,
                if n == 1 { "" } else { "s" }
            ));
            for b in &self.boundaries {
                s.push_str(&format!("{}\n", b.describe()));
            }
        }
        if let Some(left) = &self.left_out {
            let n = left.releases.len();
            s.push_str(&format!(
                "{n} release{} left out: {}: {}\n",
                if n == 1 { "" } else { "s" },
                left.releases.join(", "),
                left.why
            ));
        }
        s
    }

    /// Write the report as JSON to the file the user named (`--json`).
    pub fn write_json(&self, path: &Path) -> Result<(), Error> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a report serializes");
        bytes.push(b'\n');
        crate::sys::fs::write_atomic(path, &bytes)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }
}

/// Seconds as the step log shows them.
pub fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}
