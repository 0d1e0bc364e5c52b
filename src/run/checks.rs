//! The named checks of a run (`check(name)` in the case's code, the driver's `7_checks.py`),
//! each judged on its own ([`CheckRecord`]): against the first rule whose `check` names it and
//! whose other selectors hold for the run, else against `pass`. A check skipped inside the
//! run is `skipped` whatever its rule says, its reason the one the code gave. A check of a run
//! tried again (`--retries`) that failed in an earlier attempt and is as expected in the last
//! is `flaky` ([`mark_flaky`]).

use crate::case::{Case, Expected, OutcomeKind, Params, Phase, RunSide};
use crate::outcome::{NamedCheck, Observed};
use crate::verdict::{judge, Verdict};

/// One named check of a run, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRecord {
    pub name: String,
    pub verdict: Verdict,
    pub expected: Expected,
    /// What it showed (`skip` for a check skipped inside the run, its reason the message);
    /// its phase is the round trip's phase that made it.
    pub observed: Observed,
}

impl CheckRecord {
    /// What happened in one line (`fail: AssertionError: 1 != 2`, `skip: no frozendict`).
    pub fn summary(&self) -> String {
        self.observed.summary()
    }

    /// Why it was skipped: the reason the code gave, else the rule's.
    pub fn skip_reason(&self) -> Option<String> {
        (self.verdict == Verdict::Skipped)
            .then(|| {
                self.observed
                    .message
                    .clone()
                    .filter(|m| !m.is_empty())
                    .or_else(|| self.expected.reason.clone())
            })
            .flatten()
    }
}

/// Judge each of `checks`, made by the run of `case` with `params`; `side` gives the
/// interpreters the rules look at for the phase that made a check.
pub fn judge_checks<'a>(
    case: &Case,
    params: &Params,
    side: impl Fn(Option<Phase>) -> RunSide<'a>,
    checks: Vec<NamedCheck>,
) -> Vec<CheckRecord> {
    checks
        .into_iter()
        .map(|check| {
            let observed = check.observed.for_storage();
            let mut expected = case.expected_for_check(params, side(observed.phase), &check.name);
            if expected.line.is_none() {
                expected.line = match observed.phase {
                    Some(Phase::Load) => case.body_lines.1,
                    _ => case.body_lines.0,
                };
            }
            let verdict = match observed.outcome {
                OutcomeKind::Skip => Verdict::Skipped,
                _ => judge(&expected, &observed),
            };
            CheckRecord {
                name: check.name,
                verdict,
                expected,
                observed,
            }
        })
        .collect()
}

/// The checks of a run's last attempt (`checks`) that are as expected (`ok`, `xfail`) where the
/// same check (its name, made in the same phase) failed in one of the earlier attempts (`earlier`,
/// their checks together): each becomes `flaky`, as a run that failed then passed does.
pub fn mark_flaky<'a>(
    checks: &mut [CheckRecord],
    earlier: impl Iterator<Item = &'a CheckRecord> + Clone,
) {
    for check in checks
        .iter_mut()
        .filter(|c| matches!(c.verdict, Verdict::Ok | Verdict::Xfail))
    {
        let failed_before = earlier.clone().any(|earlier| {
            earlier.name == check.name
                && earlier.observed.phase == check.observed.phase
                && earlier.verdict.fails_run()
        });
        if failed_before {
            check.verdict = Verdict::Flaky;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, verdict: Verdict) -> CheckRecord {
        CheckRecord {
            name: name.into(),
            verdict,
            expected: Expected::default_pass(),
            observed: Observed::new(OutcomeKind::Pass, 0.0),
        }
    }

    #[test]
    fn a_check_that_failed_before_and_passes_now_is_flaky() {
        let earlier = [
            check("a", Verdict::Regression),
            check("b", Verdict::Ok),
            check("c", Verdict::Changed),
        ];
        let mut last = vec![
            check("a", Verdict::Ok),
            check("b", Verdict::Ok),
            check("c", Verdict::Regression),
            check("d", Verdict::Ok),
        ];
        mark_flaky(&mut last, earlier.iter());
        let verdicts: Vec<Verdict> = last.iter().map(|c| c.verdict).collect();
        assert_eq!(
            verdicts,
            [
                Verdict::Flaky,
                Verdict::Ok,
                Verdict::Regression,
                Verdict::Ok
            ]
        );
    }
}
