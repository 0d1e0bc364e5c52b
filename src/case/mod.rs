//! The case format (version 1, `docs/case-format.md`): what a case file may say, checked
//! strictly on load, and the questions the runner asks of a loaded case (does it apply to
//! this interpreter, which rule decides this run).

mod load;
mod params;
mod schema;

pub use load::{find_case_files, load_cases, load_file, parse_case};
pub use params::{run_name, ParamValue, Params};
pub use schema::{Isolation, OutcomeKind, Phase};

use std::collections::BTreeMap;
use std::path::PathBuf;

use indexmap::IndexMap;
use serde::Serialize;

use crate::python::{Implementation, Interpreter};
use crate::version::VersionRequest;

/// One loaded, validated case.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub path: PathBuf,
    pub title: String,
    pub description: Option<String>,
    pub links: Vec<String>,
    pub tags: Vec<String>,
    pub python: Option<VersionRequest>,
    pub implementation: Vec<Implementation>,
    pub requires: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub timeout: Option<f64>,
    /// `isolation: exec`: every run of the case starts an interpreter of its own, whatever the
    /// command line says; `fork` (or nothing): the command line decides.
    pub isolation: Option<Isolation>,
    pub params: IndexMap<String, Vec<ParamValue>>,
    pub body: Body,
    pub expect: Vec<Rule>,
}

/// What a case runs.
#[derive(Debug, Clone)]
pub enum Body {
    Code(String),
    RoundTrip { dump: String, load: String },
}

/// One expectation rule: selectors, then what is expected where they all hold.
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<VersionRequest>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub implementation: Vec<Implementation>,
    #[serde(rename = "where", skip_serializing_if = "IndexMap::is_empty")]
    pub where_: IndexMap<String, Vec<ParamValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dump_python: Option<VersionRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_python: Option<VersionRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    #[serde(flatten)]
    pub expected: Expected,
}

/// What a run must show: an outcome and, optionally, details of it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Expected {
    pub outcome: OutcomeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Expected {
    /// What a run that no rule matches must show.
    pub fn default_pass() -> Self {
        Expected {
            outcome: OutcomeKind::Pass,
            exception: None,
            signal: None,
            pattern: None,
            reason: None,
        }
    }
}

/// The interpreters on the two sides of a round trip, or the one interpreter of a plain run.
#[derive(Debug, Clone, Copy)]
pub struct RunSide<'a> {
    /// The interpreter whose phase decided the outcome (the one of a plain run).
    pub deciding: &'a Interpreter,
    pub dump: Option<&'a Interpreter>,
    pub load: Option<&'a Interpreter>,
    pub phase: Option<Phase>,
}

impl RunSide<'_> {
    pub fn single(interpreter: &Interpreter) -> RunSide<'_> {
        RunSide {
            deciding: interpreter,
            dump: None,
            load: None,
            phase: None,
        }
    }
}

impl Case {
    pub fn is_round_trip(&self) -> bool {
        matches!(self.body, Body::RoundTrip { .. })
    }

    /// Why this case does not apply to `interpreter`, if it does not.
    pub fn skip_reason(&self, interpreter: &Interpreter) -> Option<String> {
        if let Some(req) = &self.python {
            if !req.contains(&interpreter.version) {
                return Some(format!("case applies to python {req}"));
            }
        }
        if !self.implementation.is_empty()
            && !self.implementation.contains(&interpreter.implementation)
        {
            let names: Vec<_> = self.implementation.iter().map(|i| i.as_str()).collect();
            return Some(format!("case applies to {}", names.join(", ")));
        }
        None
    }

    /// Every combination of the params, in file order (one empty combination without params).
    pub fn param_combinations(&self) -> Vec<Params> {
        params::cartesian(&self.params)
    }

    /// The rule that decides what `params` on `side` must show: the first whose selectors all
    /// hold, or the default `pass`.
    pub fn expected_for(&self, params: &Params, side: RunSide<'_>) -> Expected {
        self.expect
            .iter()
            .find(|rule| rule.selects(params, side))
            .map(|rule| rule.expected.clone())
            .unwrap_or_else(Expected::default_pass)
    }

    /// `id[protocol=5,pickler=c]`, or just `id` without params (see [`run_name`]).
    pub fn display_name(&self, params: &Params) -> String {
        run_name(&self.id, params, None, None)
    }
}

impl Rule {
    /// A rule without selectors: it decides every run that reaches it.
    pub fn selects_everything(&self) -> bool {
        self.python.is_none()
            && self.implementation.is_empty()
            && self.where_.is_empty()
            && self.dump_python.is_none()
            && self.load_python.is_none()
            && self.phase.is_none()
    }

    pub fn selects(&self, params: &Params, side: RunSide<'_>) -> bool {
        let version_ok =
            |req: &Option<VersionRequest>, interp: Option<&Interpreter>| match (req, interp) {
                (None, _) => true,
                (Some(r), Some(i)) => r.contains(&i.version),
                (Some(_), None) => false,
            };
        version_ok(&self.python, Some(side.deciding))
            && (self.implementation.is_empty()
                || self.implementation.contains(&side.deciding.implementation))
            && self
                .where_
                .iter()
                .all(|(name, values)| params.get(name).is_some_and(|v| values.contains(v)))
            && version_ok(&self.dump_python, side.dump)
            && version_ok(&self.load_python, side.load)
            && self.phase.is_none_or(|p| Some(p) == side.phase)
    }
}
