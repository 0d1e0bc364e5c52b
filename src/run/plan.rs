//! The plan: every (case, params, interpreter) the run will judge, or every (case, params,
//! producer, consumer) for a round trip, each marked to execute, skip, or fail to set up.

use std::sync::Arc;

use crate::case::{run_name, Case, Expected, OutcomeKind, Params, Phase, RunSide};
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

    /// The run that holds a live producer's fresh dump against its recorded twin's bytes
    /// ([`Plan::add_comparisons`]): its "consumer" is the recorded producer.
    pub fn is_comparison(&self) -> bool {
        self.producer.is_some() && self.interpreter.is_recorded()
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

/// Why `case` with `params` does not run on `interpreter`: the case does not apply to it, its
/// `gil` value needs another build, or its protocol is above the interpreter's highest.
fn skip_reason(case: &Case, params: &Params, interpreter: &Interpreter) -> Option<String> {
    case.skip_reason(interpreter)
        .or_else(|| case.gil_skip_reason(params, interpreter))
        .or_else(|| case.protocol_skip_reason(params, interpreter))
}

/// The comparison of `pair`'s producer's dump with what `twin` recorded: executed where the
/// producer runs and the case applies to it, unless a `phase: compare` rule skips it.
fn comparison(pair: &PlannedRun, twin: Arc<Interpreter>) -> PlannedRun {
    let producer = pair.producer.clone().expect("a pair of a round trip");
    let (case, params) = (&pair.case, &pair.params);
    let skip = skip_reason(case, params, &producer);
    let rule = case.expected_for(params, RunSide::pair(&producer, &twin, Phase::Compare));
    let disposition = match (&producer.unusable, skip) {
        (Some(u), _) => {
            Disposition::EnvError(format!("interpreter {} unusable: {u}", producer.label))
        }
        (None, Some(s)) => Disposition::Skip(format!("producer {}: {s}", producer.label)),
        (None, None) if rule.outcome == OutcomeKind::Skip => Disposition::SkipRule(rule),
        (None, None) => Disposition::Execute,
    };
    PlannedRun {
        index: pair.index,
        case: case.clone(),
        params: params.clone(),
        interpreter: twin,
        producer: Some(producer),
        disposition,
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
                            let skip = skip_reason(case, &params, producer)
                                .map(|r| format!("producer {}: {r}", producer.label))
                                .or_else(|| {
                                    skip_reason(case, &params, consumer)
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
                        let skip = skip_reason(case, &params, interpreter);
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

    /// Beside the pairs of each live producer that a recorded producer has a twin of (`twins`:
    /// by case id, params and live label, the recorded producer's label), one run that holds
    /// its fresh dump against the recorded bytes: `producer -> recorded:…`, phase `compare`,
    /// placed after that producer's last pair. The recorded producer must be in the plan.
    pub fn add_comparisons(&mut self, twins: &super::Twins) {
        let recorded: Vec<Arc<Interpreter>> = self
            .runs
            .iter()
            .filter_map(|r| r.producer.clone().filter(|p| p.is_recorded()))
            .collect();
        let key = |run: &PlannedRun| {
            let producer = run.producer.as_ref()?;
            let key = (
                run.case.id.clone(),
                run.params.to_string(),
                producer.label.clone(),
            );
            (!producer.is_recorded()).then_some(key)
        };
        let mut last = std::collections::HashMap::new();
        for (i, run) in self.runs.iter().enumerate() {
            if let Some(k) = key(run) {
                last.insert(k, i);
            }
        }
        let mut runs = Vec::with_capacity(self.runs.len());
        for (i, run) in std::mem::take(&mut self.runs).into_iter().enumerate() {
            let comparison = key(&run)
                .filter(|k| last.get(k) == Some(&i))
                .and_then(|k| twins.get(&k))
                .and_then(|(label, _)| recorded.iter().find(|r| &r.label == label))
                .map(|twin| comparison(&run, twin.clone()));
            runs.push(run);
            runs.extend(comparison);
        }
        for (index, run) in runs.iter_mut().enumerate() {
            run.index = index;
        }
        self.runs = runs;
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
