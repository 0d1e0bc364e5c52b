//! What a run showed: its [`Observed`] outcome, the details the reports need, and how the
//! raised exception's class stands to the class names the case's rules give ([`ClassRelation`],
//! answered by the interpreter that ran it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::case::{OutcomeKind, Phase};

/// How many characters of a message the reports and the JSON keep (the first and last half).
pub const STORED_MESSAGE: usize = 16384;

/// The observed side of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Observed {
    pub outcome: OutcomeKind,
    /// The exception's type, `module.QualName` (builtins without a module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// For a crash by signal: `SIGSEGV`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceback: Option<String>,
    /// Head and tail of what the process printed.
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
    pub duration_s: f64,
    /// Which phase of a round trip decided the outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// For each class name of the case's rules (`exception`, `instance_of`), how the raised
    /// exception's class stands to the class it names in the interpreter that ran the case.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub classes: BTreeMap<String, ClassRelation>,
    /// The named checks the code made (`check(name)`), in the order they ended: each an
    /// outcome of its own (`skip` for a check skipped inside the run, its reason the message),
    /// with no output, duration or checks of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<NamedCheck>,
}

/// One named check of a run, as the driver recorded it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NamedCheck {
    pub name: String,
    pub observed: Observed,
}

/// How the raised exception's class stands to a class named in a rule, as the interpreter
/// that raised it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClassRelation {
    /// The name is the raised class itself (an alias included).
    Same,
    /// The raised class is a subclass of it.
    Subclass,
    /// A class, but neither.
    Unrelated,
    /// The name does not name a class there (no such module or attribute, or not a class).
    Missing,
}

impl ClassRelation {
    /// The driver's word for it.
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "same" => Some(ClassRelation::Same),
            "subclass" => Some(ClassRelation::Subclass),
            "unrelated" => Some(ClassRelation::Unrelated),
            "missing" => Some(ClassRelation::Missing),
            _ => None,
        }
    }
}

impl Observed {
    /// An outcome with no details yet: no exception, message, signal, output or phase.
    pub fn new(outcome: OutcomeKind, duration_s: f64) -> Self {
        Observed {
            outcome,
            exception: None,
            message: None,
            signal: None,
            exit_code: None,
            traceback: None,
            stdout: String::new(),
            stderr: String::new(),
            duration_s,
            phase: None,
            classes: BTreeMap::new(),
            checks: Vec::new(),
        }
    }

    /// What is kept of a judged outcome: the message is matched whole, then cut to its first
    /// and last [`STORED_MESSAGE`]/2 characters for the reports and the JSON.
    pub fn for_storage(mut self) -> Self {
        if let Some(message) = &mut self.message {
            let count = message.chars().count();
            if count > STORED_MESSAGE {
                let half = STORED_MESSAGE / 2;
                let head: String = message.chars().take(half).collect();
                let tail: String = message.chars().skip(count - half).collect();
                *message = format!(
                    "{head}\n[... {} characters omitted ...]\n{tail}",
                    count - STORED_MESSAGE
                );
            }
        }
        self
    }

    /// One line: `error: _pickle.PicklingError: Can't pickle <lambda>` or `crash: SIGSEGV`.
    pub fn summary(&self) -> String {
        let mut s = head(
            self.outcome,
            self.signal.as_deref(),
            self.exception.as_deref(),
        );
        if let Some(m) = &self.message {
            let first = m.lines().next().unwrap_or("");
            if !first.is_empty() {
                let short: String = first.chars().take(200).collect();
                s.push_str(&format!(": {short}"));
            }
        }
        s
    }
}

pub use crate::case::head;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_for_storage_only() {
        let long = format!("{}MIDDLE{}", "a".repeat(20_000), "z".repeat(20_000));
        let observed = Observed {
            message: Some(long.clone()),
            ..Observed::new(OutcomeKind::Error, 0.0)
        };
        let stored = observed.for_storage().message.unwrap();
        assert!(stored.starts_with(&"a".repeat(8192)) && stored.ends_with(&"z".repeat(8192)));
        assert!(
            stored.contains("[... 23622 characters omitted ...]"),
            "{}",
            &stored[8000..8300]
        );
        assert!(!stored.contains("MIDDLE"));
        let short = Observed {
            message: Some("short".into()),
            ..Observed::new(OutcomeKind::Error, 0.0)
        };
        assert_eq!(short.for_storage().message.as_deref(), Some("short"));
    }
}
