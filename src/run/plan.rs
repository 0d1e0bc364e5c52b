//! The plan: every (case, params, interpreter) the run will judge, or every (case, params,
//! producer, consumer) for a round trip, each marked to execute, skip, or fail to set up.

use std::sync::Arc;

use crate::case::{run_name, Case, Expected, Params, Phase};
use crate::python::Interpreter;

/// What will happen to one planned run.
#[derive(Debug, Clone)]
pub enum Disposition {
    Execute,
    /// The case does not apply to the interpreter (or to one end of the pair).
    Skip(String),
    /// A `skip` rule decides the run: not executed, skipped with the rule's reason.
    SkipRule(Expected),
    EnvError(String),
}

#[derive(Debug, Clone)]
pub struct PlannedRun {
    /// Position in the plan: results are reported in this order.
    pub index: usize,
    pub case: Arc<Case>,
    pub params: Params,
    /// The interpreter of a plain run; the consumer of a round trip.
    pub interpreter: Arc<Interpreter>,
    /// The producer of a round trip.
    pub producer: Option<Arc<Interpreter>>,
    pub disposition: Disposition,
}

impl PlannedRun {
    /// Each interpreter the run starts, with the phase it runs: the producer's dump and the
    /// consumer's load of a round trip, or the one interpreter of a plain run.
    pub fn sides(&self) -> Vec<(&Interpreter, Option<Phase>)> {
        match &self.producer {
            Some(p) => vec![
                (&**p, Some(Phase::Dump)),
                (&*self.interpreter, Some(Phase::Load)),
            ],
            None => vec![(&*self.interpreter, None)],
        }
    }

    /// The environments this run needs, if it is executed: (interpreter, requirements with
    /// placeholders replaced) for each side whose case asks for packages.
    pub fn environments(&self) -> Vec<(&Interpreter, Vec<String>)> {
        if !matches!(self.disposition, Disposition::Execute) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (interpreter, phase) in self.sides() {
            if interpreter.is_recorded() {
                // Its dump is a recorded file: nothing of its runs.
                continue;
            }
            let requires = self.case.requires_for(phase);
            if !requires.is_empty() {
                let requirements = crate::env::resolve_requirements(&requires, &self.params);
                out.push((interpreter, requirements));
            }
        }
        out
    }

    /// The packages each side's environment is made from (requirements with placeholders
    /// replaced): the producer's and the consumer's of a round trip, the interpreter's of a
    /// plain run (as the consumer's); empty where the case asks for none.
    pub fn packages(&self) -> (Vec<String>, Vec<String>) {
        let of =
            |phase| crate::env::resolve_requirements(&self.case.requires_for(phase), &self.params);
        match &self.producer {
            Some(_) => (of(Some(Phase::Dump)), of(Some(Phase::Load))),
            None => (Vec::new(), of(None)),
        }
    }

    /// `id[params]`, and ` producer -> consumer` for a round trip (see [`run_name`]).
    pub fn name(&self) -> String {
        run_name(
            &self.case.id,
            &self.params,
            self.producer.as_deref().map(|p| p.label.as_str()),
            Some(&self.interpreter.label),
        )
    }
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub interpreters: Vec<Arc<Interpreter>>,
    pub runs: Vec<PlannedRun>,
}

impl Plan {
    /// Every case × params × interpreter (× producer, for round trips), in that order.
    /// `producers` narrows the producing side of round trips, `consumers` the loading side;
    /// both default to all `interpreters`.
    pub fn build(
        cases: &[Arc<Case>],
        interpreters: &[Arc<Interpreter>],
        producers: Option<&[Arc<Interpreter>]>,
        consumers: Option<&[Arc<Interpreter>]>,
        keep: &dyn Fn(&Case, &Params) -> bool,
    ) -> Plan {
        let mut runs = Vec::new();
        for case in cases {
            for params in case
                .param_combinations()
                .into_iter()
                .filter(|p| keep(case, p))
            {
                if case.is_round_trip() {
                    for producer in producers.unwrap_or(interpreters) {
                        for consumer in consumers.unwrap_or(interpreters) {
                            let broken = [producer, consumer].iter().find_map(|i| {
                                i.unusable
                                    .as_ref()
                                    .map(|u| format!("interpreter {} unusable: {u}", i.label))
                            });
                            let skip_reason = |i: &Interpreter| {
                                case.skip_reason(i)
                                    .or_else(|| case.gil_skip_reason(&params, i))
                                    .or_else(|| case.protocol_skip_reason(&params, i))
                            };
                            let skip = skip_reason(producer)
                                .map(|r| format!("producer {}: {r}", producer.label))
                                .or_else(|| {
                                    skip_reason(consumer)
                                        .map(|r| format!("consumer {}: {r}", consumer.label))
                                });
                            let rule = || case.skip_rule(&params, Some(producer), consumer);
                            runs.push(PlannedRun {
                                index: runs.len(),
                                case: case.clone(),
                                params: params.clone(),
                                interpreter: consumer.clone(),
                                producer: Some(producer.clone()),
                                disposition: match (broken, skip) {
                                    (Some(b), _) => Disposition::EnvError(b),
                                    (None, Some(s)) => Disposition::Skip(s),
                                    (None, None) => match rule() {
                                        Some(rule) => Disposition::SkipRule(rule),
                                        None => Disposition::Execute,
                                    },
                                },
                            });
                        }
                    }
                } else {
                    for interpreter in interpreters {
                        let skip = case
                            .skip_reason(interpreter)
                            .or_else(|| case.gil_skip_reason(&params, interpreter))
                            .or_else(|| case.protocol_skip_reason(&params, interpreter));
                        let disposition = match (&interpreter.unusable, skip) {
                            (Some(broken), _) => {
                                Disposition::EnvError(format!("interpreter unusable: {broken}"))
                            }
                            (None, Some(skip)) => Disposition::Skip(skip),
                            (None, None) => match case.skip_rule(&params, None, interpreter) {
                                Some(rule) => Disposition::SkipRule(rule),
                                None => Disposition::Execute,
                            },
                        };
                        runs.push(PlannedRun {
                            index: runs.len(),
                            case: case.clone(),
                            params: params.clone(),
                            interpreter: interpreter.clone(),
                            producer: None,
                            disposition,
                        });
                    }
                }
            }
        }
        Plan {
            interpreters: interpreters.to_vec(),
            runs,
        }
    }

    /// The environments the runs to execute need, for cases with `requires` (or a side's):
    /// (interpreter, requirements with placeholders replaced), for both sides of a round trip,
    /// each side with its own.
    pub fn environments(&self) -> Vec<(&Interpreter, Vec<String>)> {
        self.runs
            .iter()
            .flat_map(PlannedRun::environments)
            .collect()
    }
}
