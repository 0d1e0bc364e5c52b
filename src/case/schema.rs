//! The case file as serde reads it: every key of format version 1, unknown keys refused, so a
//! typo can never silently drop an expectation.

use std::collections::BTreeMap;
use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize};

use super::params::ParamValue;
use crate::python::Implementation;
use crate::version::VersionRequest;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCase {
    pub id: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub links: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub python: Option<VersionRequest>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub implementation: Vec<Implementation>,
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub timeout: Option<f64>,
    pub isolation: Option<Isolation>,
    #[serde(default)]
    pub params: IndexMap<String, Vec<ParamValue>>,
    pub code: Option<String>,
    pub dump: Option<String>,
    pub load: Option<String>,
    #[serde(default)]
    pub expect: Vec<RawRule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRule {
    pub python: Option<VersionRequest>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub implementation: Vec<Implementation>,
    #[serde(rename = "where", default)]
    pub where_: IndexMap<String, OneOrMany<ParamValue>>,
    pub dump_python: Option<VersionRequest>,
    pub load_python: Option<VersionRequest>,
    pub phase: Option<Phase>,
    pub outcome: OutcomeKind,
    pub exception: Option<String>,
    pub signal: Option<String>,
    #[serde(rename = "match")]
    pub pattern: Option<String>,
    pub reason: Option<String>,
}

/// A value or a list of them (`where: {protocol: 5}` or `{protocol: [4, 5]}`).
#[derive(Debug, Deserialize)]
#[serde(untagged, expecting = "a scalar or a list of scalars")]
pub(super) enum OneOrMany<T> {
    Many(Vec<T>),
    One(T),
}

impl<T> OneOrMany<T> {
    pub fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(t) => vec![t],
            OneOrMany::Many(v) => v,
        }
    }
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Implementation>, D::Error> {
    Ok(OneOrMany::<Implementation>::deserialize(d)?.into_vec())
}

/// What a run showed, as the format names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKind {
    Pass,
    Fail,
    Error,
    Crash,
    Timeout,
}

impl OutcomeKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            OutcomeKind::Pass => "pass",
            OutcomeKind::Fail => "fail",
            OutcomeKind::Error => "error",
            OutcomeKind::Crash => "crash",
            OutcomeKind::Timeout => "timeout",
        }
    }
}

impl fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a run's process is made: a fresh interpreter started for it (`exec`), or a child forked
/// from a server that started the interpreter the same way (`fork`, the default where the
/// platform can). A case says `exec` when it needs a real interpreter start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    Exec,
    Fork,
}

impl Isolation {
    pub fn as_str(&self) -> &'static str {
        match self {
            Isolation::Exec => "exec",
            Isolation::Fork => "fork",
        }
    }
}

/// The phase of a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Dump,
    Load,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Dump => "dump",
            Phase::Load => "load",
        })
    }
}
