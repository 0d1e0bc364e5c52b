//! Interpreter mode: run the target on every selected interpreter, ordered by version, and
//! report every place the outcome changes between neighbours (not only the first: a patch
//! release can revert a change). Interpreters the case does not apply to are skipped. CPython
//! and PyPy are walked apart (CPython first): a difference between the two is not a change.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{BisectError, Boundary, OutcomeKey, Point, Report, Step, StepState, Target};
use crate::python::Interpreter;

/// Order interpreters as the search walks them: by implementation, version, then label.
pub fn order(interpreters: &mut [Interpreter]) {
    interpreters.sort_by(|a, b| {
        (a.implementation, &a.version, &a.label).cmp(&(b.implementation, &b.version, &b.label))
    });
}

pub async fn bisect(
    target: &Target,
    interpreters: &[Interpreter],
    jobs: usize,
    on_step: &mut dyn FnMut(&Step),
    cancel: &CancellationToken,
) -> Result<Report, BisectError> {
    let started = Instant::now();
    let results = target.run_on_many(interpreters, jobs, cancel).await;
    if cancel.is_cancelled() {
        return Err(BisectError::Interrupted);
    }
    let mut steps = Vec::new();
    for (interpreter, result) in interpreters.iter().zip(results) {
        let step = match result {
            Ok(observed) => Step::tested(
                interpreter.label.clone(),
                Some(interpreter.label.clone()),
                observed,
                StepState::Tested,
            ),
            Err(reason) => Step::skipped(
                interpreter.label.clone(),
                Some(interpreter.label.clone()),
                reason,
            ),
        };
        on_step(&step);
        steps.push(step);
    }
    let mut boundaries = Vec::new();
    let mut start = 0;
    while start < steps.len() {
        let end = (start..interpreters.len())
            .find(|&i| interpreters[i].implementation != interpreters[start].implementation)
            .unwrap_or(interpreters.len());
        boundaries.extend(self::boundaries(&steps[start..end]));
        start = end;
    }
    let tested = steps.iter().filter(|s| s.outcome.is_some()).count();
    let conclusion = if tested < 2 {
        format!(
            "{tested} interpreter{} could run the case: nothing to compare",
            if tested == 1 { "" } else { "s" }
        )
    } else if boundaries.is_empty() {
        let outcome = steps
            .iter()
            .find_map(|s| s.outcome.clone())
            .expect("a tested step");
        format!("the outcome is the same on all {tested} interpreters that ran it: {outcome}")
    } else {
        format!("the outcome changes across {tested} interpreters")
    };
    Ok(Report {
        mode: "interpreters",
        case: target.case.id.clone(),
        params: target.params.clone(),
        subject: None,
        side: None,
        python: None,
        candidates: interpreters.iter().map(|i| i.label.clone()).collect(),
        steps,
        boundaries,
        conclusion,
        left_out: None,
        builds: None,
        duration_s: started.elapsed().as_secs_f64(),
    })
}

/// Every change of outcome between tested neighbours, skipped steps between them listed.
pub fn boundaries(steps: &[Step]) -> Vec<Boundary> {
    let mut out = Vec::new();
    let mut previous: Option<(&str, &OutcomeKey)> = None;
    let mut untested: Vec<String> = Vec::new();
    for step in steps {
        let Some(outcome) = &step.outcome else {
            if previous.is_some() {
                untested.push(step.label.clone());
            }
            continue;
        };
        if let Some((label, old)) = previous {
            if old != outcome {
                out.push(Boundary {
                    last_old: Point {
                        label: label.to_string(),
                        outcome: old.clone(),
                        subject: None,
                    },
                    first_new: Point {
                        label: step.label.clone(),
                        outcome: outcome.clone(),
                        subject: None,
                    },
                    untested: std::mem::take(&mut untested),
                });
            }
        }
        untested.clear();
        previous = Some((&step.label, outcome));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(label: &str, outcome: Option<&str>) -> Step {
        let mut s = Step::skipped(label.into(), None, "n/a".into());
        if let Some(o) = outcome {
            s.state = StepState::Tested;
            s.outcome = Some(OutcomeKey::parse(o).unwrap());
        }
        s
    }

    #[test]
    fn every_change_and_the_gaps() {
        let steps = vec![
            step("3.7", Some("pass")),
            step("3.8", Some("fail:AssertionError")),
            step("3.9", None),
            step("3.10", Some("pass")),
            step("3.11", Some("pass")),
        ];
        let b = boundaries(&steps);
        assert_eq!(b.len(), 2);
        assert_eq!(
            (b[0].last_old.label.as_str(), b[0].first_new.label.as_str()),
            ("3.7", "3.8")
        );
        assert_eq!(
            (b[1].last_old.label.as_str(), b[1].first_new.label.as_str()),
            ("3.8", "3.10")
        );
        assert_eq!(b[1].untested, vec!["3.9".to_string()]);
    }
}
