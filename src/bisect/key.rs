//! Outcome keys: what bisect compares between two candidates, the outcome and the exception's
//! type (not its message, not the case's expectations), and how `--old` spells one.

use std::fmt;

use serde::Serialize;

use crate::case::OutcomeKind;
use crate::outcome::Observed;

/// What bisect compares: the outcome and the exception's type (not its message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutcomeKey {
    pub outcome: OutcomeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
}

impl OutcomeKey {
    pub fn of(observed: &Observed) -> Self {
        OutcomeKey {
            outcome: observed.outcome,
            exception: observed.exception.clone(),
        }
    }

    /// `pass`, `fail`, `error`, `error:ValueError`, `fail:AssertionError`, `crash`, `timeout`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (kind, exception) = match text.split_once(':') {
            Some((k, e)) => (
                k.trim(),
                Some(e.trim().to_string()).filter(|e| !e.is_empty()),
            ),
            None => (text.trim(), None),
        };
        // Every outcome a run can show: `skip` is only ever expected.
        let shown = || OutcomeKind::ALL.iter().filter(|k| **k != OutcomeKind::Skip);
        let Some(outcome) = OutcomeKind::from_name(kind).filter(|k| *k != OutcomeKind::Skip) else {
            let names: Vec<&str> = shown().map(OutcomeKind::as_str).collect();
            return Err(format!(
                "unknown outcome `{kind}`: one of {}, optionally with :ExceptionType",
                names.join(", ")
            ));
        };
        Ok(OutcomeKey { outcome, exception })
    }

    /// Does `observed` show this outcome? A key without an exception matches any exception; a
    /// bare exception name matches the last dotted part, as in `expect` rules.
    pub fn holds_for(&self, observed: &Observed) -> bool {
        self.outcome == observed.outcome
            && self.exception.as_deref().is_none_or(|want| {
                observed
                    .exception
                    .as_deref()
                    .is_some_and(|got| crate::verdict::exception_matches(want, got))
            })
    }
}

impl fmt::Display for OutcomeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.exception {
            Some(e) => write!(f, "{}: {e}", self.outcome),
            None => write!(f, "{}", self.outcome),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_keys() {
        let k = OutcomeKey::parse("error:PicklingError").unwrap();
        assert_eq!(k.outcome, OutcomeKind::Error);
        assert_eq!(k.exception.as_deref(), Some("PicklingError"));
        assert_eq!(OutcomeKey::parse("fail").unwrap().to_string(), "fail");
        assert_eq!(
            OutcomeKey::parse("boom").unwrap_err(),
            "unknown outcome `boom`: one of pass, fail, error, crash, timeout, optionally with :ExceptionType"
        );
        assert!(OutcomeKey::parse("skip").is_err());
        let observed = Observed {
            exception: Some("_pickle.PicklingError".into()),
            ..Observed::new(OutcomeKind::Error, 0.0)
        };
        assert!(k.holds_for(&observed));
        assert!(OutcomeKey::parse("error").unwrap().holds_for(&observed));
        assert!(!OutcomeKey::parse("error:ValueError")
            .unwrap()
            .holds_for(&observed));
        assert_eq!(
            OutcomeKey::of(&observed).to_string(),
            "error: _pickle.PicklingError"
        );
    }
}
