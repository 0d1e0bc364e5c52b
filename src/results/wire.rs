//! The serialised form of [`Results`], format version [`FORMAT_VERSION`]: what `--json` writes
//! and `merge` reads back, also from files older crosspickles wrote.
//!
//! Its types are its own, converted from and to the model, and every field and value is spelled
//! out here: renaming an internal type, field or variant cannot change the JSON. A change of
//! this form that older readers would misread is a new format version. The fixture
//! `tests/fixtures/results-v1/fixture.json`, written by crosspickle 0.1.0, must read and write
//! back byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::{CaseInfo, Conflict, Results, RunRecord, Sighting};
use crate::case::{Expected, OutcomeKind, ParamValue, Params, Phase};
use crate::errors::Error;
use crate::outcome::Observed;
use crate::partition::{Partition, Scheme, Shard};
use crate::python::{Implementation, Interpreter, Source};
use crate::run::record::{Attempt, Packages};
use crate::run::CheckRecord;
use crate::verdict::Verdict;
use crate::version::PythonVersion;

/// The version of this form; a reader refuses a newer one.
pub const FORMAT_VERSION: u32 = 1;

/// `results` as pretty-printed JSON.
pub fn to_json(results: &Results) -> Vec<u8> {
    serde_json::to_vec_pretty(&WireResults::from(results)).expect("the wire form serializes")
}

/// Results from JSON in any format version up to [`FORMAT_VERSION`].
pub fn from_json(bytes: &[u8]) -> Result<Results, ReadError> {
    let head: Head =
        serde_json::from_slice(bytes).map_err(|e| ReadError::Invalid(e.to_string()))?;
    if head.format_version > FORMAT_VERSION {
        return Err(ReadError::Newer {
            format_version: head.format_version,
            crosspickle_version: head.crosspickle_version,
        });
    }
    let wire: WireResults =
        serde_json::from_slice(bytes).map_err(|e| ReadError::Invalid(e.to_string()))?;
    Results::try_from(wire).map_err(ReadError::Invalid)
}

/// Why JSON could not be read as results.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadError {
    /// Not results in a format this crosspickle knows.
    Invalid(String),
    /// Written in a newer format.
    Newer {
        format_version: u32,
        crosspickle_version: String,
    },
}

/// The results in the file at `path`; one that cannot be read is bad input.
pub fn read(path: &Path) -> Result<Results, Error> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    from_json(&bytes).map_err(|e| match e {
        ReadError::Invalid(e) => Error::Usage(format!(
            "{}: not a crosspickle JSON report: {e}",
            path.display()
        )),
        ReadError::Newer {
            format_version,
            crosspickle_version,
        } => Error::Usage(format!(
            "{}: written in results format {format_version} by crosspickle {crosspickle_version}; this crosspickle reads format {FORMAT_VERSION}: upgrade it",
            path.display()
        )),
    })
}

/// An interpreter's facts as the JSON report names them (the JUnit report's properties).
pub fn interpreter_fields(interpreter: &Interpreter) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(WireInterpreter::from(interpreter)) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

/// What is read first: whether the rest is a format this crosspickle knows.
#[derive(Deserialize)]
struct Head {
    format_version: u32,
    crosspickle_version: String,
}

#[derive(Serialize, Deserialize)]
struct WireResults {
    format_version: u32,
    crosspickle_version: String,
    partial: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    partial_reason: Option<String>,
    duration_s: f64,
    interpreters: Vec<WireInterpreter>,
    #[serde(default)]
    cases: BTreeMap<String, WireCase>,
    runs: Vec<WireRun>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    conflicts: Vec<WireConflict>,
    /// Written for a `--partition` run only (older readers ignore it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    partition: Option<WirePartition>,
}

/// Which shard a `--partition` run was: `{"scheme": "hash", "shard": 2, "total": 5, "units":
/// 40, "selected": 200, "selection": "<16 hex digits>"}`.
#[derive(Serialize, Deserialize)]
struct WirePartition {
    scheme: WireScheme,
    shard: u32,
    total: u32,
    units: usize,
    selected: usize,
    selection: String,
}

#[derive(Serialize, Deserialize)]
struct WireInterpreter {
    label: String,
    version: String,
    implementation: WireImplementation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    implementation_version: Option<String>,
    executable: String,
    debug: bool,
    free_threaded: bool,
    /// Absent (older versions, or what the build implies): the GIL is on exactly when the
    /// build has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gil_enabled: Option<bool>,
    c_pickle: Option<String>,
    /// Written when true only, so that results of older versions write back unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    c_pickle_used: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pickle_highest_protocol: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pickle_default_protocol: Option<u32>,
    /// `sys.platform` and `platform.machine()`; absent in results of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    platform: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    machine: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unusable: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct WireCase {
    title: String,
    path: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    links: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct WireRun {
    case: String,
    params: IndexMap<String, WireParam>,
    python: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dump_python: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    load_python: Option<String>,
    verdict: WireVerdict,
    expected: WireExpected,
    /// Inline in the run's object; absent for a run that did not execute.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    observed: Option<WireObserved>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dump_duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// `--retries`: the attempts before this one, oldest first (written when there are some).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    attempts: Vec<WireAttempt>,
    /// A plain run's packages (`requires`, params put in), written when it had some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    packages: Vec<String>,
    /// A round trip's producer's packages (`requires` and `dump_requires`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dump_packages: Vec<String>,
    /// A round trip's consumer's packages (`requires` and `load_requires`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    load_packages: Vec<String>,
    /// The named checks the run's code made, each judged (written when there are some).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    checks: Vec<WireCheck>,
}

/// A named check of a run (`check(name)`): its name, verdict, expectation and what it showed
/// (`skip` with the code's reason as its message for a check skipped inside the run).
#[derive(Serialize, Deserialize)]
struct WireCheck {
    name: String,
    verdict: WireVerdict,
    expected: WireExpected,
    outcome: WireOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exception: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    traceback: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phase: Option<WirePhase>,
}

impl From<&CheckRecord> for WireCheck {
    fn from(c: &CheckRecord) -> Self {
        WireCheck {
            name: c.name.clone(),
            verdict: c.verdict.into(),
            expected: WireExpected::from(&c.expected),
            outcome: c.observed.outcome.into(),
            exception: c.observed.exception.clone(),
            message: c.observed.message.clone(),
            traceback: c.observed.traceback.clone(),
            phase: c.observed.phase.map(WirePhase::from),
        }
    }
}

impl From<WireCheck> for CheckRecord {
    fn from(w: WireCheck) -> Self {
        let mut observed = Observed::new(w.outcome.into(), 0.0);
        observed.exception = w.exception;
        observed.message = w.message;
        observed.traceback = w.traceback;
        observed.phase = w.phase.map(Phase::from);
        CheckRecord {
            name: w.name,
            verdict: w.verdict.into(),
            expected: w.expected.into(),
            observed,
        }
    }
}

/// An earlier attempt of a run tried again: its verdict, expectation and observation, as a run's.
#[derive(Serialize, Deserialize)]
struct WireAttempt {
    verdict: WireVerdict,
    expected: WireExpected,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    observed: Option<WireObserved>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dump_duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// The named checks that attempt's code made, each judged (written when there are some).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    checks: Vec<WireCheck>,
}

/// A param value: a JSON scalar of its type, or, for what a JSON number cannot hold exactly,
/// `{"float": "nan"}` (`"inf"`, `"-inf"`) and `{"int": "<decimal digits>"}` (integers outside
/// 64-bit signed ones). Files written before these existed hold `null` for a non-finite float.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum WireParam {
    Null(()),
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Exact(WireExact),
}

/// A param value a JSON number cannot hold, spelt out.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
enum WireExact {
    #[serde(rename = "float")]
    Float(String),
    #[serde(rename = "int")]
    Int(String),
}

/// What a run must show, in the stable JSON form (`list --json` writes its cells with it too).
#[derive(Serialize, Deserialize)]
pub struct WireExpected {
    outcome: WireOutcome,
    /// `outcome: [pass, error]`: the whole list (`outcome` is its first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    any_of: Vec<WireOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exception: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instance_of: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// The line of the case file that says this (the rule's, or `code:`'s for the implicit
    /// `pass`); older files lack it, and readers that do not know it ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
}

#[derive(Serialize, Deserialize)]
struct WireObserved {
    outcome: WireOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exception: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    traceback: Option<String>,
    #[serde(default)]
    stdout: String,
    #[serde(default)]
    stderr: String,
    duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phase: Option<WirePhase>,
}

#[derive(Serialize, Deserialize)]
struct WireConflict {
    case: String,
    params: IndexMap<String, WireParam>,
    python: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dump_python: Option<String>,
    seen: Vec<WireSighting>,
}

#[derive(Serialize, Deserialize)]
struct WireSighting {
    source: String,
    verdict: WireVerdict,
    summary: String,
}

/// Two-way conversions between a model enum and its wire enum, every value named on both
/// sides so that neither can change without the other.
macro_rules! wire_enum {
    ($wire:ident <-> $model:ident { $($name:literal: $w:ident = $m:ident),+ $(,)? }) => {
        #[derive(Clone, Copy, Serialize, Deserialize)]
        enum $wire {
            $(#[serde(rename = $name)] $w),+
        }
        impl From<$model> for $wire {
            fn from(m: $model) -> Self {
                match m {
                    $($model::$m => $wire::$w),+
                }
            }
        }
        impl From<$wire> for $model {
            fn from(w: $wire) -> Self {
                match w {
                    $($wire::$w => $model::$m),+
                }
            }
        }
    };
}

wire_enum!(WireVerdict <-> Verdict {
    "ok": Ok = Ok,
    "xfail": Xfail = Xfail,
    "regression": Regression = Regression,
    "fixed": Fixed = Fixed,
    "changed": Changed = Changed,
    "skipped": Skipped = Skipped,
    "env-error": EnvError = EnvError,
    "flaky": Flaky = Flaky,
});

wire_enum!(WireOutcome <-> OutcomeKind {
    "pass": Pass = Pass,
    "fail": Fail = Fail,
    "error": Error = Error,
    "crash": Crash = Crash,
    "timeout": Timeout = Timeout,
    "skip": Skip = Skip,
});

wire_enum!(WireScheme <-> Scheme {
    "hash": Hash = Hash,
    "slice": Slice = Slice,
});

wire_enum!(WirePhase <-> Phase {
    "dump": Dump = Dump,
    "load": Load = Load,
    "compare": Compare = Compare,
    "relay": Relay = Relay,
    "reload": Reload = Reload,
});

wire_enum!(WireImplementation <-> Implementation {
    "cpython": Cpython = Cpython,
    "pypy": Pypy = Pypy,
});

impl From<&Results> for WireResults {
    fn from(r: &Results) -> Self {
        WireResults {
            format_version: FORMAT_VERSION,
            crosspickle_version: r.crosspickle_version.clone(),
            partial: r.partial,
            partial_reason: r.partial_reason.clone(),
            duration_s: r.duration_s,
            interpreters: r.interpreters.iter().map(WireInterpreter::from).collect(),
            cases: r
                .cases
                .iter()
                .map(|(id, c)| (id.clone(), WireCase::from(c)))
                .collect(),
            runs: r.runs.iter().map(WireRun::from).collect(),
            conflicts: r.conflicts.iter().map(WireConflict::from).collect(),
            partition: r.partition.as_ref().map(|s| WirePartition {
                scheme: s.partition.scheme.into(),
                shard: s.partition.shard,
                total: s.partition.total,
                units: s.units,
                selected: s.selected,
                selection: s.selection.clone(),
            }),
        }
    }
}

impl TryFrom<WireResults> for Results {
    type Error = String;

    fn try_from(w: WireResults) -> Result<Self, String> {
        Ok(Results {
            crosspickle_version: w.crosspickle_version,
            partial: w.partial,
            partial_reason: w.partial_reason,
            duration_s: w.duration_s,
            interpreters: w
                .interpreters
                .into_iter()
                .map(Interpreter::try_from)
                .collect::<Result<_, _>>()?,
            cases: w
                .cases
                .into_iter()
                .map(|(id, c)| (id, CaseInfo::from(c)))
                .collect(),
            runs: w
                .runs
                .into_iter()
                .map(RunRecord::try_from)
                .collect::<Result<_, _>>()?,
            conflicts: w
                .conflicts
                .into_iter()
                .map(Conflict::try_from)
                .collect::<Result<_, _>>()?,
            partition: w.partition.map(Shard::try_from).transpose()?,
        })
    }
}

impl TryFrom<WirePartition> for Shard {
    type Error = String;

    fn try_from(w: WirePartition) -> Result<Self, String> {
        if w.total == 0 || w.shard == 0 || w.shard > w.total {
            return Err(format!(
                "partition: shard {} of {} is not a shard (from 1 to the number of shards)",
                w.shard, w.total
            ));
        }
        Ok(Shard {
            partition: Partition {
                scheme: w.scheme.into(),
                shard: w.shard,
                total: w.total,
            },
            units: w.units,
            selected: w.selected,
            selection: w.selection,
        })
    }
}

impl From<&Interpreter> for WireInterpreter {
    fn from(i: &Interpreter) -> Self {
        WireInterpreter {
            label: i.label.clone(),
            version: i.version.to_string(),
            implementation: i.implementation.into(),
            implementation_version: i.implementation_version.clone(),
            executable: i.executable.to_string_lossy().into_owned(),
            debug: i.debug,
            free_threaded: i.free_threaded,
            // Written only when it is not what the build implies (a free-threaded build with
            // its GIL on, or a GIL build without), so that older results write back unchanged.
            gil_enabled: (i.gil_enabled == i.free_threaded).then_some(i.gil_enabled),
            c_pickle: i.c_pickle.clone(),
            c_pickle_used: i.c_pickle_used,
            pickle_highest_protocol: i.pickle_highest_protocol,
            pickle_default_protocol: i.pickle_default_protocol,
            platform: i.platform.clone(),
            machine: i.machine.clone(),
            name: i.name.clone(),
            sources: i.sources.iter().map(|s| s.as_str().to_string()).collect(),
            unusable: i.unusable.clone(),
        }
    }
}

impl TryFrom<WireInterpreter> for Interpreter {
    type Error = String;

    fn try_from(w: WireInterpreter) -> Result<Self, String> {
        let version = PythonVersion::parse(&w.version)
            .ok_or_else(|| format!("interpreter {}: invalid version `{}`", w.label, w.version))?;
        let sources = w
            .sources
            .iter()
            .map(|s| {
                Source::from_name(s)
                    .ok_or_else(|| format!("interpreter {}: unknown source `{s}`", w.label))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Interpreter {
            label: w.label,
            version,
            implementation: w.implementation.into(),
            implementation_version: w.implementation_version,
            executable: PathBuf::from(w.executable),
            debug: w.debug,
            free_threaded: w.free_threaded,
            gil_enabled: w.gil_enabled.unwrap_or(!w.free_threaded),
            c_pickle: w.c_pickle,
            c_pickle_used: w.c_pickle_used,
            pickle_highest_protocol: w.pickle_highest_protocol,
            pickle_default_protocol: w.pickle_default_protocol,
            platform: w.platform,
            machine: w.machine,
            name: w.name,
            sources,
            unusable: w.unusable,
        })
    }
}

impl From<&CaseInfo> for WireCase {
    fn from(c: &CaseInfo) -> Self {
        WireCase {
            title: c.title.clone(),
            path: c.path.clone(),
            tags: c.tags.clone(),
            links: c.links.clone(),
        }
    }
}

impl From<WireCase> for CaseInfo {
    fn from(w: WireCase) -> Self {
        CaseInfo {
            title: w.title,
            path: w.path,
            tags: w.tags,
            links: w.links,
            source: None,
            code_starts: (None, None),
            setup_lines: Default::default(),
            bounce_starts: (None, None),
        }
    }
}

fn wire_params(p: &Params) -> IndexMap<String, WireParam> {
    p.0.iter()
        .map(|(k, v)| {
            let w = match v {
                ParamValue::Null => WireParam::Null(()),
                ParamValue::Bool(b) => WireParam::Bool(*b),
                ParamValue::Int(i) => match i64::try_from(i) {
                    Ok(i) => WireParam::Int(i),
                    Err(_) => WireParam::Exact(WireExact::Int(i.to_string())),
                },
                ParamValue::Float(f) if f.is_finite() => WireParam::Float(*f),
                ParamValue::Float(f) => {
                    WireParam::Exact(WireExact::Float(crate::case::python_float_repr(*f)))
                }
                ParamValue::Str(s) => WireParam::Str(s.clone()),
            };
            (k.clone(), w)
        })
        .collect()
}

fn model_params(w: IndexMap<String, WireParam>) -> Result<Params, String> {
    let params = w
        .into_iter()
        .map(|(k, v)| {
            let m = match v {
                WireParam::Null(()) => ParamValue::Null,
                WireParam::Bool(b) => ParamValue::Bool(b),
                WireParam::Int(i) => ParamValue::from(i),
                WireParam::Float(f) => ParamValue::Float(f),
                WireParam::Str(s) => ParamValue::Str(s),
                WireParam::Exact(WireExact::Float(f)) => ParamValue::Float(match f.as_str() {
                    "nan" => f64::NAN,
                    "inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    _ => {
                        return Err(format!(
                            "param `{k}`: `{{\"float\": \"{f}\"}}` is none of nan, inf, -inf"
                        ))
                    }
                }),
                WireParam::Exact(WireExact::Int(i)) => i
                    .parse::<num_bigint::BigInt>()
                    .ok()
                    .filter(|_| i.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
                    .map(ParamValue::Int)
                    .ok_or_else(|| {
                        format!("param `{k}`: `{{\"int\": \"{i}\"}}` is not an integer")
                    })?,
            };
            Ok((k, m))
        })
        .collect::<Result<_, String>>()?;
    Ok(Params(params))
}

impl From<&RunRecord> for WireRun {
    fn from(r: &RunRecord) -> Self {
        WireRun {
            case: r.case.clone(),
            params: wire_params(&r.params),
            python: r.python.clone(),
            dump_python: r.dump_python.clone(),
            load_python: r.load_python.clone(),
            verdict: r.verdict.into(),
            expected: WireExpected::from(&r.expected),
            observed: r.observed.as_ref().map(WireObserved::from),
            dump_duration_s: r.dump_duration_s,
            reason: r.reason.clone(),
            attempts: r
                .attempts
                .iter()
                .map(|a| WireAttempt {
                    verdict: a.verdict.into(),
                    expected: WireExpected::from(&a.expected),
                    observed: a.observed.as_ref().map(WireObserved::from),
                    dump_duration_s: a.dump_duration_s,
                    reason: a.reason.clone(),
                    checks: a.checks.iter().map(WireCheck::from).collect(),
                })
                .collect(),
            packages: match r.dump_python {
                None => r.packages.python.clone(),
                Some(_) => Vec::new(),
            },
            dump_packages: r.packages.dump.clone(),
            load_packages: match r.dump_python {
                Some(_) => r.packages.python.clone(),
                None => Vec::new(),
            },
            checks: r.checks.iter().map(WireCheck::from).collect(),
        }
    }
}

impl TryFrom<WireRun> for RunRecord {
    type Error = String;

    fn try_from(w: WireRun) -> Result<Self, String> {
        let round_trip = w.dump_python.is_some();
        Ok(RunRecord {
            case: w.case,
            params: model_params(w.params)?,
            python: w.python,
            dump_python: w.dump_python,
            load_python: w.load_python,
            verdict: w.verdict.into(),
            expected: w.expected.into(),
            observed: w.observed.map(Observed::from),
            dump_duration_s: w.dump_duration_s,
            reason: w.reason,
            attempts: w
                .attempts
                .into_iter()
                .map(|a| Attempt {
                    verdict: a.verdict.into(),
                    expected: a.expected.into(),
                    observed: a.observed.map(Observed::from),
                    dump_duration_s: a.dump_duration_s,
                    reason: a.reason,
                    checks: a.checks.into_iter().map(CheckRecord::from).collect(),
                })
                .collect(),
            packages: Packages {
                dump: w.dump_packages,
                python: if round_trip {
                    w.load_packages
                } else {
                    w.packages
                },
            },
            checks: w.checks.into_iter().map(CheckRecord::from).collect(),
        })
    }
}

impl From<&Expected> for WireExpected {
    fn from(e: &Expected) -> Self {
        WireExpected {
            outcome: e.outcome.into(),
            any_of: if e.also.is_empty() {
                Vec::new()
            } else {
                std::iter::once(e.outcome)
                    .chain(e.also.iter().copied())
                    .map(Into::into)
                    .collect()
            },
            exception: e.exception.clone(),
            instance_of: e.instance_of.clone(),
            signal: e.signal.clone(),
            pattern: e.pattern.as_ref().map(|p| p.as_str().to_string()),
            reason: e.reason.clone(),
            line: e.line,
        }
    }
}

impl From<WireExpected> for Expected {
    fn from(w: WireExpected) -> Self {
        Expected {
            outcome: w.outcome.into(),
            also: w.any_of.into_iter().skip(1).map(Into::into).collect(),
            exception: w.exception,
            instance_of: w.instance_of,
            signal: w.signal,
            pattern: w.pattern.map(crate::case::Pattern::lazy),
            reason: w.reason,
            line: w.line,
        }
    }
}

impl From<&Observed> for WireObserved {
    fn from(o: &Observed) -> Self {
        WireObserved {
            outcome: o.outcome.into(),
            exception: o.exception.clone(),
            message: o.message.clone(),
            signal: o.signal.clone(),
            exit_code: o.exit_code,
            traceback: o.traceback.clone(),
            stdout: o.stdout.clone(),
            stderr: o.stderr.clone(),
            duration_s: o.duration_s,
            phase: o.phase.map(WirePhase::from),
        }
    }
}

impl From<WireObserved> for Observed {
    fn from(w: WireObserved) -> Self {
        Observed {
            outcome: w.outcome.into(),
            exception: w.exception,
            message: w.message,
            signal: w.signal,
            exit_code: w.exit_code,
            traceback: w.traceback,
            stdout: w.stdout,
            stderr: w.stderr,
            duration_s: w.duration_s,
            phase: w.phase.map(Phase::from),
            // Not in the wire form: the verdict it helped to reach is.
            classes: Default::default(),
            // The run's, judged: `checks` of the run's object.
            checks: Vec::new(),
        }
    }
}

impl From<&Conflict> for WireConflict {
    fn from(c: &Conflict) -> Self {
        WireConflict {
            case: c.case.clone(),
            params: wire_params(&c.params),
            python: c.python.clone(),
            dump_python: c.dump_python.clone(),
            seen: c
                .seen
                .iter()
                .map(|s| WireSighting {
                    source: s.source.clone(),
                    verdict: s.verdict.into(),
                    summary: s.summary.clone(),
                })
                .collect(),
        }
    }
}

impl TryFrom<WireConflict> for Conflict {
    type Error = String;

    fn try_from(w: WireConflict) -> Result<Self, String> {
        Ok(Conflict {
            case: w.case,
            params: model_params(w.params)?,
            python: w.python,
            dump_python: w.dump_python,
            seen: w
                .seen
                .into_iter()
                .map(|s| Sighting {
                    source: s.source,
                    verdict: s.verdict.into(),
                    summary: s.summary,
                })
                .collect(),
        })
    }
}

/// `expected` in its stable JSON form, for a `#[serde(serialize_with)]` of an optional field.
pub fn serialize_expected<S: serde::Serializer>(
    expected: &Option<Expected>,
    s: S,
) -> Result<S::Ok, S::Error> {
    expected.as_ref().map(WireExpected::from).serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by crosspickle 0.1.0's release build (see its README).
    const FIXTURE: &str = include_str!("../../tests/fixtures/results-v1/fixture.json");

    fn fixture() -> Results {
        from_json(FIXTURE.as_bytes()).expect("the fixture reads")
    }

    #[test]
    fn reads_what_0_1_0_wrote_and_writes_it_back_byte_for_byte() {
        let results = fixture();
        assert_eq!(String::from_utf8(to_json(&results)).unwrap(), FIXTURE);
    }

    #[test]
    fn the_fixture_holds_every_kind_of_record() {
        let r = fixture();
        assert!(r.partial);
        assert_eq!(
            r.partial_reason.as_deref(),
            Some("interrupted (Ctrl-C) after 25 of 27 runs")
        );
        assert_eq!(r.interpreters.len(), 3);
        assert_eq!(r.interpreters[0].version.to_string(), "2.7.18");
        assert_eq!(r.interpreters[0].implementation, Implementation::Cpython);
        assert!(r.interpreters[2].unusable.is_some());
        assert_eq!(r.runs.len(), 25);
        let counts: Vec<(Verdict, usize)> = r.counts();
        assert_eq!(
            counts,
            [
                (Verdict::Ok, 4),
                (Verdict::Xfail, 6),
                (Verdict::Regression, 2),
                (Verdict::Skipped, 2),
                (Verdict::EnvError, 11),
            ]
        );
        let find = |name: &str, python: &str| {
            r.runs
                .iter()
                .find(|run| run.name() == name && run.python == python)
                .unwrap_or_else(|| panic!("no run {name} on {python}"))
        };
        let pair = find(
            "default-protocol-py3-to-py2 cpython-3.12.1 -> cpython-2.7.18",
            "cpython-2.7.18",
        );
        let observed = pair.observed.as_ref().unwrap();
        assert_eq!(pair.verdict, Verdict::Xfail);
        assert_eq!(observed.phase, Some(Phase::Load));
        assert_eq!(observed.exception.as_deref(), Some("ValueError"));
        assert!(pair.dump_duration_s.is_some());
        assert_eq!(
            pair.expected.pattern.as_ref().map(|p| p.as_str()),
            Some("^unsupported pickle protocol: 4$")
        );
        let failed = find("prints-then-fails", "cpython-3.12.1");
        let observed = failed.observed.as_ref().unwrap();
        assert_eq!(failed.verdict, Verdict::Regression);
        assert!(observed
            .traceback
            .as_deref()
            .unwrap()
            .contains("ValueError: boom"));
        assert_eq!(
            (observed.stdout.as_str(), observed.stderr.as_str()),
            ("to stdout\n", "to stderr\n")
        );
        let crash = find("crashes-by-signal", "cpython-3.12.1");
        assert_eq!(
            crash.observed.as_ref().unwrap().signal.as_deref(),
            Some("SIGABRT")
        );
        let exit = find("exits-without-reporting", "cpython-2.7.18");
        assert_eq!(exit.observed.as_ref().unwrap().exit_code, Some(3));
        let skipped = find(
            "dispatch-table-class-attribute[pickler=c]",
            "cpython-2.7.18",
        );
        assert_eq!(skipped.verdict, Verdict::Skipped);
        assert!(skipped.observed.is_none());
        assert_eq!(
            skipped.params.get("pickler"),
            Some(&ParamValue::Str("c".into()))
        );
        assert_eq!(
            skipped.reason.as_deref(),
            Some("case applies to python >=3")
        );
        assert_eq!(
            r.cases["default-protocol-py3-to-py2"].links.len(),
            3,
            "case links"
        );
    }

    #[test]
    fn merge_reads_the_fixture_and_keeps_its_records() {
        let input = fixture();
        let merged = super::super::merge::merge(vec![("fixture.json".into(), input.clone())]);
        let mut sorted = input.clone();
        sorted.sort_runs();
        assert_eq!(merged.runs, sorted.runs);
        assert_eq!(merged.interpreters, input.interpreters);
        assert_eq!(merged.cases, input.cases);
        assert!(merged.conflicts.is_empty());
        assert!(merged.partial);
        // And as JSON, the records are the fixture's.
        let fixture: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        let written: serde_json::Value = serde_json::from_slice(&to_json(&merged)).unwrap();
        let key = |v: &serde_json::Value| v.to_string();
        let mut want: Vec<String> = fixture["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(key)
            .collect();
        let mut got: Vec<String> = written["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(key)
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want);
        assert_eq!(written["interpreters"], fixture["interpreters"]);
        assert_eq!(written["cases"], fixture["cases"]);
    }

    #[test]
    fn newer_formats_and_other_json_are_refused() {
        let newer = r#"{"format_version": 2, "crosspickle_version": "9.0.0", "something": "else"}"#;
        assert_eq!(
            from_json(newer.as_bytes()),
            Err(ReadError::Newer {
                format_version: 2,
                crosspickle_version: "9.0.0".into()
            })
        );
        assert!(matches!(
            from_json(br#"{"hello": 1}"#),
            Err(ReadError::Invalid(e)) if e.contains("format_version")
        ));
        let bad_version = FIXTURE.replacen("\"version\": \"2.7.18\"", "\"version\": \"two\"", 1);
        assert!(matches!(
            from_json(bad_version.as_bytes()),
            Err(ReadError::Invalid(e)) if e.contains("invalid version `two`")
        ));
    }

    #[test]
    fn a_shard_is_written_and_read_back_and_a_bad_one_refused() {
        let mut r = fixture();
        let (_, shard) = Partition::parse("hash:2/5")
            .unwrap()
            .select(&["a".to_string(), "b[n=1]".to_string()]);
        r.partition = Some(shard.clone());
        let json = to_json(&r);
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value["partition"]["scheme"], "hash");
        assert_eq!(value["partition"]["shard"], 2);
        assert_eq!(value["partition"]["total"], 5);
        assert_eq!(value["partition"]["selected"], 2);
        assert_eq!(from_json(&json).unwrap().partition, Some(shard));
        let bad = String::from_utf8(json)
            .unwrap()
            .replace("\"shard\": 2", "\"shard\": 6");
        assert!(matches!(
            from_json(bad.as_bytes()),
            Err(ReadError::Invalid(e)) if e.contains("shard 6 of 5")
        ));
    }

    #[test]
    fn param_values_keep_their_json_types() {
        let mut p = IndexMap::new();
        for (k, v) in [
            ("null", ParamValue::Null),
            ("bool", ParamValue::Bool(true)),
            ("int", ParamValue::from(-5)),
            ("float", ParamValue::Float(2.0)),
            ("str", ParamValue::Str("5".into())),
        ] {
            p.insert(k.to_string(), v);
        }
        let params = Params(p);
        let json = serde_json::to_string(&wire_params(&params)).unwrap();
        assert_eq!(
            json,
            r#"{"null":null,"bool":true,"int":-5,"float":2.0,"str":"5"}"#
        );
        let back: IndexMap<String, WireParam> = serde_json::from_str(&json).unwrap();
        assert_eq!(model_params(back).unwrap(), params);
    }

    #[test]
    fn param_values_json_cannot_hold_are_spelt_out_and_read_back() {
        let big: num_bigint::BigInt = "-1267650600228229401496703205376".parse().unwrap();
        let mut p = IndexMap::new();
        for (k, v) in [
            ("nan", ParamValue::Float(f64::NAN)),
            ("inf", ParamValue::Float(f64::INFINITY)),
            ("ninf", ParamValue::Float(f64::NEG_INFINITY)),
            ("nzero", ParamValue::Float(-0.0)),
            ("big", ParamValue::Int(big)),
            ("u64", ParamValue::Int(u64::MAX.into())),
            ("null", ParamValue::Null),
        ] {
            p.insert(k.to_string(), v);
        }
        let params = Params(p);
        let json = serde_json::to_string(&wire_params(&params)).unwrap();
        assert_eq!(
            json,
            r#"{"nan":{"float":"nan"},"inf":{"float":"inf"},"ninf":{"float":"-inf"},"nzero":-0.0,"big":{"int":"-1267650600228229401496703205376"},"u64":{"int":"18446744073709551615"},"null":null}"#
        );
        let back: IndexMap<String, WireParam> = serde_json::from_str(&json).unwrap();
        assert_eq!(model_params(back).unwrap(), params);
        for bad in [r#"{"x":{"float":"NaN!"}}"#, r#"{"x":{"int":"1e5"}}"#] {
            let back: IndexMap<String, WireParam> = serde_json::from_str(bad).unwrap();
            assert!(model_params(back).is_err(), "{bad}");
        }
        assert!(
            serde_json::from_str::<IndexMap<String, WireParam>>(r#"{"x":{"other":"1"}}"#).is_err()
        );
    }
}
