//! The ends of a round trip by age rather than by role: the older end (the lower Python
//! version), the newer end (the higher) and either end, each selected like a producer or a
//! consumer (`older_python`, `newer_implementation`, `either_features`, …); whether a rule's
//! selectors of them hold for a pair, and in words.

use super::selectors::InterpreterSelector;
use crate::python::Interpreter;

/// A rule's `older_*`, `newer_*` and `either_*` selectors; empty asks nothing.
#[derive(Debug, Clone, Default)]
pub struct PairEnds {
    /// On the end of the lower Python version (both ends, when the versions are equal: it
    /// holds when it holds for one of them).
    pub older: InterpreterSelector,
    /// On the end of the higher Python version (both ends when equal, as `older`).
    pub newer: InterpreterSelector,
    /// On the producer or the consumer, whichever.
    pub either: InterpreterSelector,
}

impl PairEnds {
    pub fn is_empty(&self) -> bool {
        self.older.is_empty() && self.newer.is_empty() && self.either.is_empty()
    }

    /// Whether each selector holds for the pair `producer -> consumer`.
    pub fn holds_for(&self, producer: &Interpreter, consumer: &Interpreter) -> bool {
        let (older, newer): (&[&Interpreter], &[&Interpreter]) =
            match producer.version.cmp(&consumer.version) {
                std::cmp::Ordering::Less => (&[producer], &[consumer]),
                std::cmp::Ordering::Greater => (&[consumer], &[producer]),
                std::cmp::Ordering::Equal => (&[producer, consumer], &[producer, consumer]),
            };
        let any = |selector: &InterpreterSelector, ends: &[&Interpreter]| {
            selector.is_empty() || ends.iter().any(|i| selector.holds_for(i))
        };
        any(&self.older, older)
            && any(&self.newer, newer)
            && any(&self.either, &[producer, consumer])
    }

    /// In words: `older end by python <3.4`, `either end by pypy`.
    pub fn describe(&self) -> Vec<String> {
        let mut out = self.older.describe("older end");
        out.extend(self.newer.describe("newer end"));
        out.extend(self.either.describe("either end"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::Implementation;

    fn at(version: &str, implementation: Implementation) -> Interpreter {
        Interpreter::for_tests(implementation, version)
    }

    fn python(request: &str) -> InterpreterSelector {
        InterpreterSelector {
            python: Some(
                serde_json::from_value(serde_json::json!(request)).expect("a version request"),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn older_and_newer_go_by_version_whichever_end_dumps() {
        let old = at("2.7.18", Implementation::Cpython);
        let new = at("3.12.1", Implementation::Cpython);
        let older = PairEnds {
            older: python("<3"),
            ..Default::default()
        };
        assert!(older.holds_for(&old, &new) && older.holds_for(&new, &old));
        let newer = PairEnds {
            newer: python("<3"),
            ..Default::default()
        };
        assert!(!newer.holds_for(&old, &new) && !newer.holds_for(&new, &old));
        let both_new = at("3.13.0", Implementation::Cpython);
        assert!(!older.holds_for(&new, &both_new));
        assert_eq!(older.describe(), ["older end by python <3"]);
    }

    #[test]
    fn either_holds_for_one_end_and_equal_versions_are_both_ends() {
        let pypy = at("3.9.18", Implementation::Pypy);
        let cpython = at("3.9.18", Implementation::Cpython);
        let either = PairEnds {
            either: InterpreterSelector {
                implementation: vec![Implementation::Pypy],
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(either.holds_for(&pypy, &cpython) && either.holds_for(&cpython, &pypy));
        assert!(!either.holds_for(&cpython, &cpython));
        let older_pypy = PairEnds {
            older: either.either.clone(),
            ..Default::default()
        };
        assert!(older_pypy.holds_for(&cpython, &pypy));
        assert!(PairEnds::default().holds_for(&cpython, &pypy));
        assert!(PairEnds::default().is_empty() && !older_pypy.is_empty());
    }
}
