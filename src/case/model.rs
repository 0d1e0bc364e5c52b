//! A loaded case as the engine sees it ([`Case`], its [`Rule`]s and their [`Expected`]), and
//! the questions the runner asks of it: does it apply to this interpreter, which rule decides
//! this run ([`Case::expected_for`]), is that rule a `skip`, which class names must the
//! interpreter resolve.

use super::ends::PairEnds;
use super::pairs::PairRelations;
use super::params::{self, run_name, ParamValue, Params};
use super::pyre::Pattern;
use super::schema::{Isolation, OutcomeKind, Phase};
use super::selectors::{InterpreterSelector, WhereValue};
use super::yaml;
use std::collections::BTreeMap;
use std::path::PathBuf;

use indexmap::IndexMap;
use serde::Serialize;

use crate::python::Interpreter;

/// One loaded, validated case.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub path: PathBuf,
    /// Where `id:`'s value stands (the file's first key when the id is the file's name): a
    /// duplicate id is reported there.
    pub id_at: (usize, usize),
    pub title: String,
    pub description: Option<String>,
    pub links: Vec<String>,
    pub tags: Vec<String>,
    /// `python`, `implementation`, `implementation_version`, `features`: the interpreters the
    /// case applies to (both ends of a round trip).
    pub applies_to: InterpreterSelector,
    /// `requires`: what every environment of the case holds (both sides of a round trip).
    pub requires: Vec<String>,
    /// `dump_requires`, `load_requires`: what a round trip's producer, or its consumer, holds
    /// besides `requires` (empty for a case with `code`).
    pub dump_requires: Vec<String>,
    pub load_requires: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub timeout: Option<f64>,
    /// `repeat`: attempts of each run (the larger of this and `--repeat`).
    pub repeat: Option<u32>,
    /// `isolation: exec`: every run of the case starts an interpreter of its own, whatever the
    /// command line says; `fork` (or nothing): the command line decides.
    pub isolation: Option<Isolation>,
    /// `preload`: modules every run imports before its code, in this order (a fork server
    /// imports them once, before it forks).
    pub preload: Vec<String>,
    /// `support`: the Python files beside the case file that every run can import (their
    /// folder is put on `sys.path`), as absolute paths.
    pub support: Vec<PathBuf>,
    pub params: IndexMap<String, Vec<ParamValue>>,
    /// `protocol: each`: the param `protocol` is the pickle protocol, skipped where an
    /// interpreter's highest is below it.
    pub protocol_each: bool,
    /// `dump_params`, `load_params`: the names of the params only the producer, or only the
    /// consumer, of a round trip sees (each also a param of the run, in `params`).
    pub side_params: (Vec<String>, Vec<String>),
    /// `gil`: the last param, `gil`, is the `PYTHON_GIL` of each run's processes (0 or 1).
    pub gil: bool,
    pub body: Body,
    pub expect: Vec<Rule>,
    /// The lines of `code:` (or `dump:`) and of `load:`: where the implicit `pass` of a run
    /// that no rule decides is written (reports point there).
    pub body_lines: (Option<usize>, Option<usize>),
    /// The lines of the file where the first line of `code` (or `dump`) and of `load` stands,
    /// when each line of the code is a line of the file (a literal block `|`, or one line):
    /// reports name the file's line for a line of the code (`cases/x.yaml:14`).
    pub code_starts: (Option<usize>, Option<usize>),
    /// Where `setup:` stands ahead of the code in every program a run writes.
    pub setup_lines: SetupLines,
    /// `relay` and `reload`: a round trip's bounce, if it has one.
    pub bounce: Option<super::bounce::Bounce>,
    /// The file's text, as read: the HTML report shows it beside a failing run.
    pub source: std::sync::Arc<str>,
    /// Every version range the file gives (`python`, `expect[n].python`, `dump_python`,
    /// `load_python`), where it stands: for what is said of them once interpreters are known.
    pub ranges: Vec<RangeAt>,
}

/// A version range of a case file and its place: `field` names it as messages do
/// (`python[1]`, `expect[2].dump_python`); `of_rule` is false for the case's own `python`.
#[derive(Debug, Clone)]
pub struct RangeAt {
    pub field: String,
    pub request: crate::version::VersionRequest,
    pub at: yaml::Pos,
    pub of_rule: bool,
}

/// Where `setup:` stands in the programs a run writes (`case.py`, `dump.py`, `load.py`): the
/// lines it takes ahead of the code (0 without `setup`), and the line of the file that holds
/// its first line, when each line of it is a line of the file (as [`Case::code_starts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetupLines {
    pub count: usize,
    pub start: Option<usize>,
}

impl SetupLines {
    /// `setup` ahead of `code`, as a run's program: the setup ends its last line first.
    pub fn join(setup: &str, code: &str) -> String {
        match setup.ends_with('\n') || setup.is_empty() {
            true => format!("{setup}{code}"),
            false => format!("{setup}\n{code}"),
        }
    }

    /// The lines `setup` takes ahead of the code when [`SetupLines::join`]ed.
    pub fn count_of(setup: &str) -> usize {
        setup.lines().count()
    }
}

/// What a case runs.
#[derive(Debug, Clone)]
pub enum Body {
    Code(String),
    RoundTrip { dump: String, load: String },
}

/// One expectation rule: selectors, then what is expected where they all hold.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `python`, `implementation`, `implementation_version`, `features`: on the interpreter
    /// whose phase decided the outcome.
    pub on: InterpreterSelector,
    /// `dump_python`, `dump_implementation`, `dump_features`: on a round trip's producer.
    pub dump: InterpreterSelector,
    /// `load_python`, `load_implementation`, `load_features`: on a round trip's consumer.
    pub load: InterpreterSelector,
    /// `same`, `different`, `pairs`: how a round trip's producer and consumer relate.
    pub relations: PairRelations,
    /// `older_*`, `newer_*`, `either_*`: a round trip's ends by their Python versions.
    pub ends: PairEnds,
    pub where_: IndexMap<String, WhereValue>,
    pub phase: Option<Phase>,
    /// `check`: the named checks this rule decides (it decides no run).
    pub check: Option<super::check_names::CheckNames>,
    pub expected: Expected,
}

/// What a run must show: an outcome and, optionally, details of it; or `skip` and why.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Expected {
    pub outcome: OutcomeKind,
    /// `outcome: [pass, error]`: the list's other outcomes (every attempt must show one of
    /// them); empty for one outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<OutcomeKind>,
    /// The exception's type: the very class (resolved where the case ran), or the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    /// A class the exception is an instance of (resolved where the case ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_of: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// `match`, compiled when the case was loaded.
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Pattern>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The line of the file that says this: the rule's first line, or for the implicit
    /// `pass`, the line of `code:`, `dump:` or `load:` (annotations point there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl Expected {
    /// What a run that no rule matches must show.
    pub fn default_pass() -> Self {
        Expected {
            outcome: OutcomeKind::Pass,
            also: Vec::new(),
            exception: None,
            instance_of: None,
            signal: None,
            pattern: None,
            reason: None,
            line: None,
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

    /// The pair `producer -> consumer` once `phase` decided it: the producer's phase is
    /// decided on the producer, the load's on the consumer.
    pub fn pair<'a>(
        producer: &'a Interpreter,
        consumer: &'a Interpreter,
        phase: Phase,
    ) -> RunSide<'a> {
        RunSide {
            deciding: match phase {
                Phase::Dump | Phase::Compare | Phase::Reload => producer,
                Phase::Load | Phase::Relay => consumer,
            },
            dump: Some(producer),
            load: Some(consumer),
            phase: Some(phase),
        }
    }
}

impl Case {
    pub fn is_round_trip(&self) -> bool {
        matches!(self.body, Body::RoundTrip { .. })
    }

    /// The requirements (placeholders as written) of the environment a run's `phase` runs in:
    /// `requires`, then for a round trip's dump `dump_requires`, for its load `load_requires`.
    pub fn requires_for(&self, phase: Option<Phase>) -> Vec<String> {
        let own = match phase {
            Some(Phase::Dump | Phase::Compare | Phase::Reload) => &self.dump_requires,
            Some(Phase::Load | Phase::Relay) => &self.load_requires,
            None => &[][..],
        };
        self.requires.iter().chain(own).cloned().collect()
    }

    /// Whether any run of the case needs an environment of its own (`requires` or a side's).
    pub fn has_requires(&self) -> bool {
        !(self.requires.is_empty()
            && self.dump_requires.is_empty()
            && self.load_requires.is_empty())
    }

    /// Why this case does not apply to `interpreter`, if it does not.
    pub fn skip_reason(&self, interpreter: &Interpreter) -> Option<String> {
        self.applies_to
            .mismatch(interpreter)
            .map(|m| format!("case applies to {m}"))
    }

    /// The environment variables `params`' runs get on top of the caller's: `env`, and
    /// `PYTHON_GIL` when the case has the `gil` dimension.
    pub fn env_for(&self, params: &Params) -> BTreeMap<String, String> {
        let mut env = self.env.clone();
        if let (true, Some(ParamValue::Int(gil))) = (self.gil, params.get("gil")) {
            env.insert("PYTHON_GIL".into(), gil.to_string());
        }
        env
    }

    /// Why `params` cannot run on `interpreter`: `gil=0` (`PYTHON_GIL=0`) on a build that has
    /// a GIL, which refuses to start without it (3.13 and later) or ignores the variable.
    pub fn gil_skip_reason(&self, params: &Params, interpreter: &Interpreter) -> Option<String> {
        let off = matches!(params.get("gil"), Some(ParamValue::Int(g)) if *g == 0.into());
        (self.gil && off && !interpreter.free_threaded)
            .then(|| "gil=0 (PYTHON_GIL=0) needs a free-threaded build".to_string())
    }

    /// The params of `params` that the code of `phase` sees: all but `load_params` for a
    /// round trip's dump (and its reload), all but `dump_params` for its load (and its relay),
    /// all for a plain run.
    pub fn side_params(&self, params: &Params, phase: Option<Phase>) -> Params {
        let other = match phase {
            Some(Phase::Dump | Phase::Reload) => &self.side_params.1,
            Some(Phase::Load | Phase::Relay) => &self.side_params.0,
            None | Some(Phase::Compare) => return params.clone(),
        };
        Params(
            params
                .0
                .iter()
                .filter(|(name, _)| !other.contains(name))
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect(),
        )
    }

    /// Why `params` cannot run on `interpreter`: with `protocol: each`, a `protocol` above the
    /// highest its pickle has (`pickle.HIGHEST_PROTOCOL`, as the probe found it).
    pub fn protocol_skip_reason(
        &self,
        params: &Params,
        interpreter: &Interpreter,
    ) -> Option<String> {
        let Some(ParamValue::Int(protocol)) = params.get("protocol").filter(|_| self.protocol_each)
        else {
            return None;
        };
        let highest = interpreter.pickle_highest_protocol?;
        (*protocol > highest.into())
            .then(|| format!("protocol {protocol} is above the highest of its pickle ({highest})"))
    }

    /// The `skip` rule that decides `params` on `interpreter` (a plain run), or on the pair
    /// `producer -> interpreter` (a round trip) whichever phase decides it, known before
    /// anything runs. A pair that only one phase's rule skips is decided after its dump.
    pub fn skip_rule(
        &self,
        params: &Params,
        producer: Option<&Interpreter>,
        interpreter: &Interpreter,
    ) -> Option<Expected> {
        let skip_of = |side: RunSide<'_>| {
            let rule = self.expect.iter().find(|rule| rule.selects(params, side))?;
            (rule.expected.outcome == OutcomeKind::Skip).then_some(rule)
        };
        let rule = match producer {
            None => skip_of(RunSide::single(interpreter))?,
            Some(producer) => {
                let dump = skip_of(RunSide::pair(producer, interpreter, Phase::Dump))?;
                let load = skip_of(RunSide::pair(producer, interpreter, Phase::Load))?;
                // Both phases skip: the rule written first says why.
                let position = |r: &Rule| self.expect.iter().position(|e| std::ptr::eq(e, r));
                if position(dump) <= position(load) {
                    dump
                } else {
                    load
                }
            }
        };
        Some(rule.expected.clone())
    }

    /// The class names the rules ask the interpreter about (`exception`, `instance_of`),
    /// each once, sorted: the driver resolves them where the case ran.
    pub fn class_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .expect
            .iter()
            .flat_map(|r| [&r.expected.exception, &r.expected.instance_of])
            .flatten()
            .cloned()
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Every combination of the params, in file order (one empty combination without params).
    pub fn param_combinations(&self) -> Vec<Params> {
        params::cartesian(&self.params)
    }

    /// The rule that decides what `params` on `side` must show: the first whose selectors all
    /// hold, or the default `pass`.
    pub fn expected_for(&self, params: &Params, side: RunSide<'_>) -> Expected {
        self.deciding_rule(params, side)
            .map(|i| self.expect[i].expected.clone())
            .unwrap_or_else(|| Expected {
                line: match side.phase {
                    Some(Phase::Load) => self.body_lines.1,
                    Some(Phase::Relay) => self.bounce.as_ref().and_then(|b| b.lines.0),
                    Some(Phase::Reload) => self.bounce.as_ref().and_then(|b| b.lines.1),
                    _ => self.body_lines.0,
                },
                ..Expected::default_pass()
            })
    }

    /// The index in `expect` of the rule that decides `params` on `side` (the first whose
    /// selectors all hold), or `None` for the default `pass`: what the run's verdict and
    /// `crosspickle list`'s expected matrix both ask.
    pub fn deciding_rule(&self, params: &Params, side: RunSide<'_>) -> Option<usize> {
        self.expect
            .iter()
            .position(|rule| rule.selects(params, side))
    }

    /// The rule that decides what the check `name` of a run of `params` on `side` must show:
    /// the first with a `check` that names it and whose other selectors hold, or `pass`.
    pub fn expected_for_check(&self, params: &Params, side: RunSide<'_>, name: &str) -> Expected {
        self.deciding_check_rule(params, side, name)
            .map(|i| self.expect[i].expected.clone())
            .unwrap_or_else(Expected::default_pass)
    }

    /// The index in `expect` of the rule that decides the check `name` (see
    /// [`Case::expected_for_check`]), `None` for the default `pass`.
    pub fn deciding_check_rule(
        &self,
        params: &Params,
        side: RunSide<'_>,
        name: &str,
    ) -> Option<usize> {
        self.expect.iter().position(|r| {
            r.check.as_ref().is_some_and(|c| c.matches(name)) && r.selects_side(params, side)
        })
    }

    /// `id[protocol=5,pickler=c]`, or just `id` without params (see [`run_name`]).
    pub fn display_name(&self, params: &Params) -> String {
        run_name(&self.id, params, None, None)
    }
}

impl Rule {
    /// A rule without selectors: it decides every run that reaches it.
    pub fn selects_everything(&self) -> bool {
        self.on.is_empty()
            && self.dump.is_empty()
            && self.load.is_empty()
            && self.relations.is_empty()
            && self.ends.is_empty()
            && self.where_.is_empty()
            && self.phase.is_none()
            && self.check.is_none()
    }

    /// Whether this rule's selectors other than `where` are empty.
    pub fn selects_by_params_only(&self) -> bool {
        self.on.is_empty()
            && self.dump.is_empty()
            && self.load.is_empty()
            && self.relations.is_empty()
            && self.ends.is_empty()
            && self.phase.is_none()
            && self.check.is_none()
    }

    /// Whether this rule decides the run of `params` on `side` (a rule with `check` decides
    /// checks only: [`Case::expected_for_check`]).
    pub fn selects(&self, params: &Params, side: RunSide<'_>) -> bool {
        self.check.is_none() && self.selects_side(params, side)
    }

    /// Whether every selector but `check` holds for `params` on `side`.
    pub fn selects_side(&self, params: &Params, side: RunSide<'_>) -> bool {
        let side_ok = |selector: &InterpreterSelector, interp: Option<&Interpreter>| match interp {
            Some(i) => selector.holds_for(i),
            None => selector.is_empty(),
        };
        self.on.holds_for(side.deciding)
            && self.selects_params(params)
            && side_ok(&self.dump, side.dump)
            && side_ok(&self.load, side.load)
            && (self.relations.is_empty()
                || matches!((side.dump, side.load), (Some(d), Some(l)) if self.relations.holds_for(d, l)))
            && (self.ends.is_empty()
                || matches!((side.dump, side.load), (Some(d), Some(l)) if self.ends.holds_for(d, l)))
            && match self.phase {
                // A comparison with recorded bytes is decided by the rules that name it only:
                // the rules written for dumps and loads say nothing of it.
                None => side.phase != Some(Phase::Compare),
                Some(p) => Some(p) == side.phase,
            }
    }

    /// Whether the `where` of this rule holds for `params`.
    pub fn selects_params(&self, params: &Params) -> bool {
        self.where_
            .iter()
            .all(|(name, values)| params.get(name).is_some_and(|v| values.selects(v)))
    }
}
