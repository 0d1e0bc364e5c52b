//! The case file as serde reads it: every key of format version 2 (a superset of version 1),
//! unknown keys refused, so a typo can never silently drop an expectation. The JSON Schema
//! that `crosspickle schema` prints is derived from these same types (`json_schema.rs`).

use std::collections::BTreeMap;
use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::json_schema::{Implementations, NonEmpty, Platforms};
use super::pairs::Relation;
use super::params::ParamValue;
use super::selectors::{Features, VersionRequests, WhereValue};
use crate::python::{Implementation, Platform};

/// A case file: one case (format version 2, which every version-1 file is too).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "crosspickle case",
    description = "One crosspickle case: a short Python program (or a dump and a load) with its expected outcome per interpreter. See docs/case-format.md.",
    transform = super::json_schema::case_constraints
)]
pub(super) struct RawCase {
    /// Unique in the corpus; defaults to the file stem. Names the case in reports and filters.
    #[schemars(pattern(r"^[a-z0-9][a-z0-9._-]*$"))]
    pub id: Option<String>,
    /// One line.
    #[schemars(required)]
    pub title: Option<String>,
    /// What happens and why, in prose.
    pub description: Option<String>,
    /// Upstream issues, pull requests, commits, release notes (http:// or https:// URLs).
    #[serde(default)]
    #[schemars(inner(pattern(r"^https?://")))]
    pub links: Vec<String>,
    /// Words for selection with --tag.
    #[serde(default)]
    #[schemars(inner(pattern(r"^\S+$")))]
    pub tags: Vec<String>,
    /// The Python versions the case applies to (a request or a list: any of them); on the
    /// others its runs are skipped.
    pub python: Option<VersionRequests>,
    /// The implementations the case applies to.
    #[serde(default, deserialize_with = "super::selectors::implementations")]
    #[schemars(with = "Implementations")]
    pub implementation: Vec<Implementation>,
    /// A version request on `sys.implementation.version` (PyPy's own release such as 7.3.19;
    /// for CPython its Python version) that the case applies to.
    pub implementation_version: Option<VersionRequests>,
    /// Probed capabilities the interpreter must have (true) or lack (false) for the case to
    /// apply.
    pub features: Option<Features>,
    /// PEP 508 requirements installed into a cached environment per interpreter; `{name}`
    /// stands for the value of param `name`.
    #[serde(default)]
    pub requires: Vec<String>,
    /// Round trips: requirements installed for the producer only, besides `requires` (the
    /// producer's environment holds both); `{name}` placeholders and markers as in `requires`.
    #[serde(default)]
    pub dump_requires: Vec<String>,
    /// Round trips: requirements installed for the consumer only, besides `requires` (the
    /// consumer's environment holds both); `{name}` placeholders and markers as in `requires`.
    #[serde(default)]
    pub load_requires: Vec<String>,
    /// Extra environment variables for the case's process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds each run may take (default 60).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub timeout: Option<f64>,
    /// Attempts of each run, each in a fresh process (1 to 10000; `--repeat` counts when
    /// larger): the verdict is the worst of them. For races that show one time in N.
    #[schemars(range(min = 1, max = 10000))]
    pub repeat: Option<u32>,
    /// `exec` when every run of the case needs a real interpreter start.
    pub isolation: Option<Isolation>,
    /// Modules imported before the code starts (dotted names): by a fork server before it
    /// forks, or by a started interpreter before it runs the code.
    #[serde(default)]
    #[schemars(inner(pattern(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")))]
    pub preload: Vec<String>,
    /// Param name to a non-empty list of scalar values: one run per combination, each name a
    /// global of the code. (Read for its shape only: the loader types each value from the
    /// YAML tree.)
    #[serde(default)]
    #[schemars(with = "IndexMap<String, NonEmpty<ParamValue>>")]
    #[allow(dead_code)]
    pub params: IndexMap<String, Vec<ParamValue>>,
    /// Round trips: params of the producer only (a global of `dump`, not of `load`): one run
    /// per combination, as `params`, and one dump for every combination of `load_params`.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, NonEmpty<ParamValue>>")]
    #[allow(dead_code)]
    pub dump_params: IndexMap<String, Vec<ParamValue>>,
    /// Round trips: params of the consumer only (a global of `load`, not of `dump`).
    #[serde(default)]
    #[schemars(with = "IndexMap<String, NonEmpty<ParamValue>>")]
    #[allow(dead_code)]
    pub load_params: IndexMap<String, Vec<ParamValue>>,
    /// `PYTHON_GIL` values as a dimension of the runs, like a param named `gil`: `[0, 1]` runs
    /// each combination with the GIL off and on. `gil=0` runs only on free-threaded builds
    /// (elsewhere it is skipped).
    #[schemars(length(min = 1, max = 2), inner(range(min = 0, max = 1)), extend("uniqueItems" = true))]
    pub gil: Option<Vec<u8>>,
    /// `each`: a dimension like a param named `protocol`, its values the pickle protocols 0
    /// to 5; a protocol above the highest of an interpreter (of either end of a round trip)
    /// is skipped there, with the reason.
    pub protocol: Option<Protocols>,
    /// Python source run first, in the same `__main__`, ahead of `code`, of `dump` and of
    /// `load` alike: the classes and helpers both sides of a round trip need.
    pub setup: Option<String>,
    /// Python files beside the case file (`helpers.py`), each a module every run of the case
    /// can import by its name (`import helpers`): code that several cases share.
    #[serde(default)]
    #[schemars(inner(pattern(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")), extend("uniqueItems" = true))]
    pub support: Vec<String>,
    /// Python source run as `__main__` in a fresh interpreter.
    pub code: Option<String>,
    /// A round trip: runs once per producer and must leave bytes in the global `data`.
    pub dump: Option<String>,
    /// A round trip: runs once per (producer, consumer) pair with `data` bound.
    pub load: Option<String>,
    /// The bounce (with `reload`): runs on the consumer after `load` passed, in its process
    /// and `__main__` (every global of `load`, `data` the pickle it read), and must leave the
    /// bytes of a new pickle, of what it loaded or anything else, in the global `data`.
    pub relay: Option<String>,
    /// The bounce (with `relay`): runs on the producer's interpreter and packages, in a fresh
    /// process after `setup`, with `data` bound to the relayed pickle, and checks it.
    pub reload: Option<String>,
    /// Rules tried in order: the first whose selectors all hold decides what a run must show;
    /// a run no rule selects must pass.
    #[serde(default)]
    pub expect: Vec<RawRule>,
}

/// One rule of `expect`: selectors (all must hold), then what is expected where they do.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::json_schema::rule_constraints)]
pub(super) struct RawRule {
    /// A version request or a list of them (any of them) on the interpreter whose phase
    /// decided the outcome.
    pub python: Option<VersionRequests>,
    /// `cpython`, `pypy`, or a list of them.
    #[serde(default, deserialize_with = "super::selectors::implementations")]
    #[schemars(with = "Implementations")]
    pub implementation: Vec<Implementation>,
    /// A version request on `sys.implementation.version` (PyPy's own release; CPython's
    /// Python version).
    pub implementation_version: Option<VersionRequests>,
    /// Probed capabilities the interpreter must have (true) or lack (false).
    pub features: Option<Features>,
    /// The operating system the run is on, as `sys.platform` names it: `linux`, `darwin`,
    /// `win32`, or a list of them.
    #[serde(default, deserialize_with = "super::selectors::platforms")]
    #[schemars(with = "Platforms")]
    pub platform: Vec<Platform>,
    /// Param name to a value, a list of values, or `{not: VALUE}` / `{not: [VALUES]}`.
    /// (Read for its shape only: the loader types each value from the YAML tree.)
    #[serde(rename = "where", default)]
    #[allow(dead_code)]
    pub where_: IndexMap<String, WhereValue>,
    /// Round trips: a version request (or a list) on the producer.
    pub dump_python: Option<VersionRequests>,
    /// Round trips: a version request (or a list) on the consumer.
    pub load_python: Option<VersionRequests>,
    /// Round trips: the producer's implementation(s).
    #[serde(default, deserialize_with = "super::selectors::implementations")]
    #[schemars(with = "Implementations")]
    pub dump_implementation: Vec<Implementation>,
    /// Round trips: the consumer's implementation(s).
    #[serde(default, deserialize_with = "super::selectors::implementations")]
    #[schemars(with = "Implementations")]
    pub load_implementation: Vec<Implementation>,
    /// Round trips: features the producer must have (true) or lack (false).
    pub dump_features: Option<Features>,
    /// Round trips: features the consumer must have (true) or lack (false).
    pub load_features: Option<Features>,
    /// Round trips: a version request (or a list) on the producer's
    /// `sys.implementation.version` (PyPy's own release; CPython's Python version).
    pub dump_implementation_version: Option<VersionRequests>,
    /// Round trips: a version request (or a list) on the consumer's
    /// `sys.implementation.version`.
    pub load_implementation_version: Option<VersionRequests>,
    /// Round trips: what the producer and the consumer must have alike (`implementation`,
    /// `series`, `version`, `build`).
    #[schemars(length(min = 1))]
    pub same: Option<Vec<Relation>>,
    /// Round trips: what the producer and the consumer must not have alike.
    #[schemars(length(min = 1))]
    pub different: Option<Vec<Relation>>,
    /// Round trips: `[producer request, consumer request]` pairs, any of them (version
    /// requests on each side's Python version).
    #[schemars(length(min = 1))]
    pub pairs: Option<Vec<(VersionRequests, VersionRequests)>>,
    /// Round trips: a version request (or a list) on the older end (the lower Python version;
    /// either end when the two are equal).
    pub older_python: Option<VersionRequests>,
    /// Round trips: a version request (or a list) on the newer end (the higher Python
    /// version; either end when the two are equal).
    pub newer_python: Option<VersionRequests>,
    /// Round trips: a version request (or a list) that the producer or the consumer meets.
    pub either_python: Option<VersionRequests>,
    /// Round trips: the older end's implementation(s).
    #[serde(default, deserialize_with = "super::selectors::implementations")]
    #[schemars(with = "Implementations")]
    pub older_implementation: Vec<Implementation>,
    /// Round trips: the newer end's implementation(s).
    #[serde(default, deserialize_with = "super::selectors::implementations")]
    #[schemars(with = "Implementations")]
    pub newer_implementation: Vec<Implementation>,
    /// Round trips: an implementation the producer or the consumer is.
    #[serde(default, deserialize_with = "super::selectors::implementations")]
    #[schemars(with = "Implementations")]
    pub either_implementation: Vec<Implementation>,
    /// Round trips: features the older end must have (true) or lack (false).
    pub older_features: Option<Features>,
    /// Round trips: features the newer end must have (true) or lack (false).
    pub newer_features: Option<Features>,
    /// Round trips: features one end at least has (true) or lacks (false), all on that end.
    pub either_features: Option<Features>,
    /// Round trips: the phase that decided the outcome; `compare` selects the runs that hold a
    /// live dump against the bytes recorded by the same interpreter (only rules naming it
    /// decide those); `relay` and `reload` the legs of a bounce (`relay`, `reload`).
    pub phase: Option<Phase>,
    /// The named checks this rule decides (`check(name)` in the code): a name or a glob (`*`,
    /// `?`), or a list of them. A rule with `check` decides those checks only, not the run.
    pub check: Option<super::check_names::CheckNames>,
    /// What the run must show, or `skip`: the run is not executed; or a list of two or more
    /// outcomes (no `skip`) when it sometimes shows one, sometimes another: every attempt
    /// must show one of them.
    #[schemars(with = "OutcomeOrList")]
    pub outcome: RuleOutcome,
    /// The exception's type: the same class (an alias names it too) or the same dotted name;
    /// a bare name matches the last part of a dotted one.
    #[schemars(pattern(r"^[^.\s]+(\.[^.\s]+)*$"))]
    pub exception: Option<String>,
    /// A class the exception must be an instance of (the class or any subclass), resolved in
    /// the interpreter that ran the case.
    #[schemars(pattern(r"^[^.\s]+(\.[^.\s]+)*$"))]
    pub instance_of: Option<String>,
    /// For `crash`: the signal's name, such as SIGSEGV.
    pub signal: Option<String>,
    /// A regular expression searched in the exception's message.
    #[serde(rename = "match")]
    pub pattern: Option<String>,
    /// Why this is expected (required with `outcome: skip`); shown in reports.
    pub reason: Option<String>,
}

/// The JSON Schema of a case file (draft 2020-12), as `crosspickle schema` prints it.
pub fn case_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<RawCase>().to_value();
    super::json_schema::tidy(&mut schema);
    schema
}

/// What a run showed, as the format names it; `skip` is only ever expected: a run a `skip`
/// rule decides is not executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKind {
    Pass,
    Fail,
    Error,
    Crash,
    Timeout,
    Skip,
}

impl OutcomeKind {
    /// Every outcome; their names are [`OutcomeKind::as_str`]'s (serde's too: a test pins it).
    pub const ALL: &[OutcomeKind] = &[
        OutcomeKind::Pass,
        OutcomeKind::Fail,
        OutcomeKind::Error,
        OutcomeKind::Crash,
        OutcomeKind::Timeout,
        OutcomeKind::Skip,
    ];

    /// The outcome named `name` (`pass`, `error`…), if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        OutcomeKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == name)
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            OutcomeKind::Pass => "pass",
            OutcomeKind::Fail => "fail",
            OutcomeKind::Error => "error",
            OutcomeKind::Crash => "crash",
            OutcomeKind::Timeout => "timeout",
            OutcomeKind::Skip => "skip",
        }
    }
}

impl fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `outcome:` as written: one outcome, or a list of two or more (`[pass, error]`).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleOutcome {
    /// The first (or only) one.
    pub first: OutcomeKind,
    /// The others of a list, in its order.
    pub also: Vec<OutcomeKind>,
}

impl RuleOutcome {
    pub fn all(&self) -> impl Iterator<Item = OutcomeKind> + '_ {
        std::iter::once(self.first).chain(self.also.iter().copied())
    }

    pub fn has(&self, kind: OutcomeKind) -> bool {
        self.all().any(|k| k == kind)
    }

    /// Every outcome it names raises no exception (`pass`, `timeout`).
    pub fn raises_nothing(&self) -> bool {
        self.all()
            .all(|k| matches!(k, OutcomeKind::Pass | OutcomeKind::Timeout))
    }
}

/// True when it is this one outcome alone.
impl PartialEq<OutcomeKind> for RuleOutcome {
    fn eq(&self, other: &OutcomeKind) -> bool {
        self.also.is_empty() && self.first == *other
    }
}

impl fmt::Display for RuleOutcome {
    /// `error`, or `[pass, error]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.also.is_empty() {
            return write!(f, "{}", self.first);
        }
        let names: Vec<&str> = self.all().map(|k| k.as_str()).collect();
        write!(f, "[{}]", names.join(", "))
    }
}

impl<'de> Deserialize<'de> for RuleOutcome {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RuleOutcomeVisitor)
    }
}

struct RuleOutcomeVisitor;

impl<'de> serde::de::Visitor<'de> for RuleOutcomeVisitor {
    type Value = RuleOutcome;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an outcome (`pass`, `fail`, `error`, `crash`, `timeout`, `skip`) or a list of two or more")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RuleOutcome, E> {
        let first = OutcomeKind::deserialize(serde::de::value::StrDeserializer::<E>::new(s))?;
        Ok(RuleOutcome {
            first,
            also: Vec::new(),
        })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RuleOutcome, A::Error> {
        use serde::de::Error;
        let mut all: Vec<OutcomeKind> = Vec::new();
        while let Some(kind) = seq.next_element::<OutcomeKind>()? {
            if kind == OutcomeKind::Skip {
                return Err(A::Error::custom("`skip` cannot be in a list of outcomes: a skipped run is not executed, give `outcome: skip` alone"));
            }
            if all.contains(&kind) {
                return Err(A::Error::custom(format!(
                    "`{kind}` is twice in the list of outcomes"
                )));
            }
            all.push(kind);
        }
        if all.len() < 2 {
            return Err(A::Error::custom("a list of outcomes needs two or more (every attempt must show one of them); for one, give it alone: `outcome: pass`"));
        }
        let first = all.remove(0);
        Ok(RuleOutcome { first, also: all })
    }
}

/// One outcome, or a list of two or more, none twice and no `skip`.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum OutcomeOrList {
    One(OutcomeKind),
    Any(#[schemars(length(min = 2))] Vec<OutcomeKind>),
}

/// `protocol: each`: every pickle protocol, each where the interpreters have it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocols {
    Each,
}

/// The protocols `protocol: each` runs: 0 to the highest any Python has (5, since 3.8).
pub const PROTOCOLS: std::ops::RangeInclusive<u32> = 0..=5;

/// How a run's process is made: a fresh interpreter started for it (`exec`), or a child forked
/// from a server that started the interpreter the same way (`fork`, the default where the
/// platform can). A case says `exec` when it needs a real interpreter start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// An interpreter started for every run.
    Exec,
    /// A child forked from a server per interpreter (the default where the platform can).
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Dump,
    Load,
    // A live producer's dump held against the bytes a recorded producer with its facts and
    // packages made (docs/record.md): `fail` when they differ, the dump changed in place. (A
    // comment, not a doc comment: the schema keeps the phases one plain enum.)
    Compare,
    // The bounce: the consumer's relay (after its load, in its process) and the producer's
    // reload of the relayed pickle (docs/case-format.md, "The bounce").
    Relay,
    Reload,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Dump => "dump",
            Phase::Load => "load",
            Phase::Compare => "compare",
            Phase::Relay => "relay",
            Phase::Reload => "reload",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_names_are_one_list() {
        for &k in OutcomeKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
            assert_eq!(OutcomeKind::from_name(k.as_str()), Some(k));
        }
        assert_eq!(OutcomeKind::from_name("Pass"), None);
    }

    #[test]
    fn the_schema_names_every_key_of_the_loader() {
        let schema = case_schema();
        let props = schema["properties"].as_object().unwrap();
        for key in [
            "id",
            "title",
            "python",
            "implementation",
            "implementation_version",
            "features",
            "params",
            "code",
            "dump",
            "load",
            "expect",
        ] {
            assert!(props.contains_key(key), "{key}");
        }
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], serde_json::json!(["title"]));
        let rule = &schema["$defs"]["RawRule"];
        assert_eq!(rule["additionalProperties"], false);
        for key in [
            "where",
            "instance_of",
            "dump_features",
            "load_implementation",
        ] {
            assert!(rule["properties"].get(key).is_some(), "{key}");
        }
        let outcomes = schema["$defs"]["OutcomeKind"].to_string();
        assert!(outcomes.contains("skip"), "{outcomes}");
    }
}
