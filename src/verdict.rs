//! Verdicts: what was observed against what was expected, as the format's table says.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::case::{Expected, OutcomeKind};
use crate::outcome::{ClassRelation, Observed};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// As expected, and `pass` was expected.
    Ok,
    /// As expected, something other than `pass`: the known behaviour is still there.
    Xfail,
    /// `pass` expected, something else observed.
    Regression,
    /// Something else expected, `pass` observed: the expectation is stale or upstream fixed it.
    Fixed,
    /// Expected and observed differ otherwise (outcome, exception, signal or message).
    Changed,
    /// The case does not apply to the interpreter.
    Skipped,
    /// The environment could not be made.
    EnvError,
    /// Failed, then matched its expectation when run again (`--retries`): it does not fail
    /// the run unless `--flaky-result fail`.
    Flaky,
}

impl Verdict {
    pub const ALL: [Verdict; 8] = [
        Verdict::Ok,
        Verdict::Xfail,
        Verdict::Regression,
        Verdict::Fixed,
        Verdict::Changed,
        Verdict::Skipped,
        Verdict::EnvError,
        Verdict::Flaky,
    ];

    /// How bad a verdict is, for the worst of a repeated run's attempts: a failing verdict
    /// is worse than any other, `env-error` and `regression` the worst.
    pub fn severity(self) -> u8 {
        match self {
            Verdict::Ok | Verdict::Skipped => 0,
            Verdict::Xfail => 1,
            Verdict::Flaky => 2,
            Verdict::Fixed => 3,
            Verdict::Changed => 4,
            Verdict::Regression => 5,
            Verdict::EnvError => 6,
        }
    }

    pub fn fails_run(self) -> bool {
        matches!(
            self,
            Verdict::Regression | Verdict::Fixed | Verdict::Changed | Verdict::EnvError
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Xfail => "xfail",
            Verdict::Regression => "regression",
            Verdict::Fixed => "fixed",
            Verdict::Changed => "changed",
            Verdict::Skipped => "skipped",
            Verdict::EnvError => "env-error",
            Verdict::Flaky => "flaky",
        }
    }

    /// One character for matrices, pytest's where it has one.
    pub fn symbol(self) -> char {
        match self {
            Verdict::Ok => '.',
            Verdict::Xfail => 'x',
            Verdict::Regression => 'F',
            Verdict::Fixed => 'X',
            Verdict::Changed => 'C',
            Verdict::Skipped => 's',
            Verdict::EnvError => 'E',
            // pytest-rerunfailures' letter for a test that passed when run again.
            Verdict::Flaky => 'R',
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Does the observed outcome show what `expected` describes?
pub fn matches(expected: &Expected, observed: &Observed) -> bool {
    expected.outcome == observed.outcome
        && expected
            .exception
            .as_deref()
            .is_none_or(|want| exception_is(want, observed))
        && expected
            .instance_of
            .as_deref()
            .is_none_or(|want| instance_of(want, observed))
        && expected
            .signal
            .as_deref()
            .is_none_or(|want| observed.signal.as_deref() == Some(want))
        && expected.pattern.as_ref().is_none_or(|pattern| {
            // Python's `re` meaning, searched in the whole message, compiled when the case was
            // loaded (which refused patterns that cannot be given it).
            pattern.is_match(observed.message.as_deref().unwrap_or(""))
        })
}

/// `exception: want`: the interpreter resolved `want` to the raised class itself (so an alias
/// such as `pickle.PicklingError` for `_pickle.PicklingError` matches), or the names match.
pub fn exception_is(want: &str, observed: &Observed) -> bool {
    observed.classes.get(want) == Some(&ClassRelation::Same)
        || observed
            .exception
            .as_deref()
            .is_some_and(|got| exception_matches(want, got))
}

/// `instance_of: want`: the interpreter resolved `want` to the raised class or one of its
/// bases (what `except want:` would catch there); a name that does not name a class there does
/// not match.
pub fn instance_of(want: &str, observed: &Observed) -> bool {
    matches!(
        observed.classes.get(want),
        Some(ClassRelation::Same | ClassRelation::Subclass)
    )
}

/// A bare name matches the last dotted part; a dotted name must match whole trailing parts
/// (`pickle.UnpicklingError` does not match `_pickle.UnpicklingError`).
pub fn exception_matches(want: &str, got: &str) -> bool {
    let want: Vec<&str> = want.split('.').collect();
    let got: Vec<&str> = got.split('.').collect();
    want.len() <= got.len() && got[got.len() - want.len()..] == want[..]
}

/// The verdict for a run that happened (one attempt of it: see [`passed_as_sometimes`]).
pub fn judge(expected: &Expected, observed: &Observed) -> Verdict {
    if expected.outcome == OutcomeKind::Skip {
        // The run loop does not execute what a `skip` rule decides; should one be judged
        // anyway, it is still skipped.
        return Verdict::Skipped;
    }
    if !expected.also.is_empty() {
        return judge_sometimes(expected, observed);
    }
    if matches(expected, observed) {
        if expected.outcome == OutcomeKind::Pass {
            Verdict::Ok
        } else {
            Verdict::Xfail
        }
    } else if expected.outcome == OutcomeKind::Pass {
        Verdict::Regression
    } else if observed.outcome == OutcomeKind::Pass {
        Verdict::Fixed
    } else {
        Verdict::Changed
    }
}

/// One attempt against `outcome: [a, b, …]`: one of them, with the rule's `exception`,
/// `instance_of` and `match` holding for an `error` or `fail` and its `signal` for a `crash`,
/// is `xfail` (a `pass` too, when the list has it: whether every attempt passed is the run
/// loop's to settle, [`passed_as_sometimes`]); a `pass` the list lacks is `fixed`; anything
/// else `changed`.
fn judge_sometimes(expected: &Expected, observed: &Observed) -> Verdict {
    let listed = std::iter::once(expected.outcome)
        .chain(expected.also.iter().copied())
        .any(|k| k == observed.outcome);
    let holds = match observed.outcome {
        OutcomeKind::Error | OutcomeKind::Fail => matches(
            &Expected {
                outcome: observed.outcome,
                signal: None,
                ..expected.clone()
            },
            observed,
        ),
        OutcomeKind::Crash => expected
            .signal
            .as_deref()
            .is_none_or(|want| observed.signal.as_deref() == Some(want)),
        _ => true,
    };
    if listed && holds {
        Verdict::Xfail
    } else if observed.outcome == OutcomeKind::Pass {
        Verdict::Fixed
    } else {
        Verdict::Changed
    }
}

/// Whether this attempt passed where the rule's outcome is a list with `pass` in it: when
/// every attempt of a run did, the run is `fixed` (the race, or whatever made it vary, is
/// gone), not `xfail`.
pub fn passed_as_sometimes(expected: &Expected, observed: Option<&Observed>) -> bool {
    !expected.also.is_empty()
        && (expected.outcome == OutcomeKind::Pass || expected.also.contains(&OutcomeKind::Pass))
        && observed.is_some_and(|o| o.outcome == OutcomeKind::Pass)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(outcome: OutcomeKind, exception: Option<&str>, message: Option<&str>) -> Observed {
        Observed {
            exception: exception.map(String::from),
            message: message.map(String::from),
            ..Observed::new(outcome, 0.0)
        }
    }

    fn expected(outcome: OutcomeKind, exception: Option<&str>, pattern: Option<&str>) -> Expected {
        Expected {
            outcome,
            also: Vec::new(),
            exception: exception.map(String::from),
            instance_of: None,
            signal: None,
            pattern: pattern.map(|p| crate::case::Pattern::compile(p).unwrap()),
            reason: None,
            line: None,
        }
    }

    #[test]
    fn the_table() {
        use OutcomeKind::*;
        let pass = observed(Pass, None, None);
        let err = observed(
            Error,
            Some("_pickle.PicklingError"),
            Some("Can't pickle <lambda>"),
        );
        assert_eq!(judge(&expected(Pass, None, None), &pass), Verdict::Ok);
        assert_eq!(
            judge(
                &expected(Error, Some("PicklingError"), Some("lambda")),
                &err
            ),
            Verdict::Xfail
        );
        assert_eq!(
            judge(&expected(Pass, None, None), &err),
            Verdict::Regression
        );
        assert_eq!(judge(&expected(Error, None, None), &pass), Verdict::Fixed);
        assert_eq!(
            judge(&expected(Error, Some("TypeError"), None), &err),
            Verdict::Changed
        );
        assert_eq!(
            judge(&expected(Error, None, Some("^nope")), &err),
            Verdict::Changed
        );
        assert_eq!(judge(&expected(Fail, None, None), &err), Verdict::Changed);
    }

    #[test]
    fn a_list_of_outcomes() {
        use OutcomeKind::*;
        let sometimes = |also: Vec<OutcomeKind>, exception: Option<&str>| Expected {
            also,
            ..expected(Pass, exception, None)
        };
        let err = observed(Error, Some("RuntimeError"), Some("race"));
        let pass = observed(Pass, None, None);
        let crash = Observed {
            signal: Some("SIGSEGV".into()),
            ..observed(Crash, None, None)
        };
        let race = sometimes(vec![Error], Some("RuntimeError"));
        assert_eq!(judge(&race, &err), Verdict::Xfail);
        assert_eq!(judge(&race, &pass), Verdict::Xfail);
        assert!(passed_as_sometimes(&race, Some(&pass)));
        assert!(!passed_as_sometimes(&race, Some(&err)));
        assert_eq!(judge(&race, &crash), Verdict::Changed);
        // The exception is the error's, not asked of a pass.
        let other = observed(Error, Some("ValueError"), None);
        assert_eq!(judge(&race, &other), Verdict::Changed);
        // Without pass in the list, a pass is fixed on the spot.
        let no_pass = Expected {
            also: vec![Crash],
            ..expected(Error, None, None)
        };
        assert_eq!(judge(&no_pass, &pass), Verdict::Fixed);
        assert_eq!(judge(&no_pass, &crash), Verdict::Xfail);
        assert!(!passed_as_sometimes(&no_pass, Some(&pass)));
        let sigabrt = Expected {
            signal: Some("SIGABRT".into()),
            ..no_pass.clone()
        };
        assert_eq!(judge(&sigabrt, &crash), Verdict::Changed);
        assert_eq!(judge(&sigabrt, &err), Verdict::Xfail);
        // One outcome alone is judged as before.
        assert!(!passed_as_sometimes(
            &expected(Pass, None, None),
            Some(&pass)
        ));
    }

    #[test]
    fn classes_resolved_by_the_interpreter() {
        use OutcomeKind::*;
        let mut err = observed(Error, Some("_pickle.PicklingError"), Some("boom"));
        err.classes = [
            ("pickle.PicklingError", ClassRelation::Same),
            ("pickle.PickleError", ClassRelation::Subclass),
            ("ValueError", ClassRelation::Unrelated),
            ("nosuch.Error", ClassRelation::Missing),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let with = |exception: Option<&str>, instance: Option<&str>| Expected {
            instance_of: instance.map(String::from),
            ..expected(Error, exception, None)
        };
        // An alias names the same class; textual matching stays for the rest.
        assert!(matches(&with(Some("pickle.PicklingError"), None), &err));
        assert!(matches(&with(Some("PicklingError"), None), &err));
        assert!(!matches(&with(Some("pickle.PickleError"), None), &err));
        // instance_of: the class or a base, never a name that does not resolve.
        assert!(matches(&with(None, Some("pickle.PickleError")), &err));
        assert!(matches(&with(None, Some("pickle.PicklingError")), &err));
        assert!(!matches(&with(None, Some("ValueError")), &err));
        assert!(!matches(&with(None, Some("nosuch.Error")), &err));
        assert!(!matches(&with(None, Some("_pickle.PicklingError")), &err));
        assert_eq!(
            judge(
                &with(Some("pickle.PicklingError"), Some("pickle.PickleError")),
                &err
            ),
            Verdict::Xfail
        );
        let skip = expected(Skip, None, None);
        assert_eq!(judge(&skip, &err), Verdict::Skipped);
    }

    #[test]
    fn exception_names() {
        assert!(exception_matches("PicklingError", "_pickle.PicklingError"));
        assert!(exception_matches(
            "_pickle.PicklingError",
            "_pickle.PicklingError"
        ));
        assert!(!exception_matches(
            "pickle.PicklingError",
            "_pickle.PicklingError"
        ));
        assert!(!exception_matches("Error", "PicklingError"));
        assert!(exception_matches("ValueError", "ValueError"));
    }

    #[test]
    fn failing_verdicts() {
        let failing: Vec<_> = Verdict::ALL.iter().filter(|v| v.fails_run()).collect();
        assert_eq!(
            failing,
            [
                &Verdict::Regression,
                &Verdict::Fixed,
                &Verdict::Changed,
                &Verdict::EnvError
            ]
        );
    }
}
