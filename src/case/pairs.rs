//! Pair relations of round-trip rules: `same: [...]` and `different: [...]` over what the
//! producer and the consumer are (`implementation`, `series`, `version`, `build`), and explicit
//! `pairs: [[producer request, consumer request], ...]`; whether they hold for a pair, in
//! words, and which combinations of them (with the rule's other selectors) can never hold.

use std::fmt;

use serde::Deserialize;

use super::selectors::{Features, InterpreterSelector, VersionRequests};
use crate::python::Interpreter;

/// What `same` and `different` compare of the two interpreters of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// `cpython` or `pypy`.
    Implementation,
    /// The Python version's first two parts: 3.11.2 and 3.11.7 are of one series.
    Series,
    /// The exact Python version (`sys.version_info`): 3.11.2 and 3.11.7 differ; a debug
    /// build has its release build's version.
    Version,
    /// The build's flags: debug (`sys.gettotalrefcount`) and free-threaded
    /// (`Py_GIL_DISABLED`), both alike for `same`.
    Build,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::Implementation => "implementation",
            Relation::Series => "series",
            Relation::Version => "version",
            Relation::Build => "build",
        }
    }

    /// Whether the two interpreters are the same in this respect.
    pub fn same(self, a: &Interpreter, b: &Interpreter) -> bool {
        match self {
            Relation::Implementation => a.implementation == b.implementation,
            Relation::Series => series(a) == series(b),
            Relation::Version => a.version == b.version,
            Relation::Build => a.debug == b.debug && a.free_threaded == b.free_threaded,
        }
    }
}

fn series(i: &Interpreter) -> &[u64] {
    let release = i.version.release();
    &release[..release.len().min(2)]
}

/// A rule's relations between the two ends of a pair; empty asks nothing.
#[derive(Debug, Clone, Default)]
pub struct PairRelations {
    pub same: Vec<Relation>,
    pub different: Vec<Relation>,
    /// `[producer request, consumer request]`, any of them.
    pub pairs: Vec<(VersionRequests, VersionRequests)>,
}

impl PairRelations {
    pub fn is_empty(&self) -> bool {
        self.same.is_empty() && self.different.is_empty() && self.pairs.is_empty()
    }

    pub fn holds_for(&self, producer: &Interpreter, consumer: &Interpreter) -> bool {
        self.same.iter().all(|r| r.same(producer, consumer))
            && self.different.iter().all(|r| !r.same(producer, consumer))
            && (self.pairs.is_empty()
                || self
                    .pairs
                    .iter()
                    .any(|(d, l)| d.contains(&producer.version) && l.contains(&consumer.version)))
    }

    /// In words: `same series`, `different implementation`, `pairs 2.7 -> 3.8 or 3.8 -> 2.7`.
    pub fn describe(&self) -> Vec<String> {
        let names = |rs: &[Relation]| rs.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ");
        let mut out = Vec::new();
        if !self.same.is_empty() {
            out.push(format!("same {}", names(&self.same)));
        }
        if !self.different.is_empty() {
            out.push(format!("different {}", names(&self.different)));
        }
        if !self.pairs.is_empty() {
            let each: Vec<String> = self
                .pairs
                .iter()
                .map(|(d, l)| format!("{d} -> {l}"))
                .collect();
            out.push(format!("pairs {}", each.join(" or ")));
        }
        out
    }

    /// Why no pair can have these relations and the rule's producer (`dump`) and consumer
    /// (`load`) selectors at once, if that can be told without the interpreters: the key it is
    /// about, and the reason.
    pub fn never(
        &self,
        dump: &InterpreterSelector,
        load: &InterpreterSelector,
    ) -> Option<(&'static str, String)> {
        for r in &self.same {
            if self.different.contains(r) {
                return Some((
                    "different",
                    format!("`{}` is both in `same` and in `different`", r.name()),
                ));
            }
        }
        let same = |r| self.same.contains(&r);
        if same(Relation::Version) && self.different.contains(&Relation::Series) {
            return Some(("different", "the same version is of the same series: `same: [version]` and `different: [series]` exclude each other".into()));
        }
        for list in [&self.same, &self.different] {
            if let Some(r) = list
                .iter()
                .enumerate()
                .find_map(|(i, r)| list[..i].contains(r).then_some(r))
            {
                let key = if std::ptr::eq(list, &self.same) {
                    "same"
                } else {
                    "different"
                };
                return Some((key, format!("`{}` is named twice", r.name())));
            }
        }
        let imps_apart = !dump.implementation.is_empty()
            && !load.implementation.is_empty()
            && !dump
                .implementation
                .iter()
                .any(|i| load.implementation.contains(i));
        if same(Relation::Implementation) && imps_apart {
            return Some(("same", "`same: [implementation]`, but dump_implementation and load_implementation share none".into()));
        }
        if self.different.contains(&Relation::Implementation)
            && matches!((dump.implementation.as_slice(), load.implementation.as_slice()), ([a], [b]) if a == b)
        {
            return Some(("different", "`different: [implementation]`, but dump_implementation and load_implementation name the same one".into()));
        }
        let versions_apart =
            matches!((&dump.python, &load.python), (Some(a), Some(b)) if a.disjoint(b));
        if same(Relation::Version) && versions_apart {
            return Some((
                "same",
                "`same: [version]`, but dump_python and load_python share no version".into(),
            ));
        }
        if same(Relation::Build) && builds_apart(&dump.features, &load.features) {
            return Some(("same", "`same: [build]`, but dump_features and load_features ask for different debug or free_threaded flags".into()));
        }
        if !self.pairs.is_empty()
            && self.pairs.iter().all(|(d, l)| {
                dump.python.as_ref().is_some_and(|p| p.disjoint(d))
                    || load.python.as_ref().is_some_and(|p| p.disjoint(l))
                    || (same(Relation::Version) && d.disjoint(l))
            })
        {
            return Some(("pairs", "no pair of `pairs` is left by the rule's dump_python, load_python and same: [version]".into()));
        }
        None
    }
}

/// Whether two sides' features ask for different debug or free-threaded flags.
fn builds_apart(a: &Option<Features>, b: &Option<Features>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return false;
    };
    (a.debug.is_some() && b.debug.is_some() && a.debug != b.debug)
        || (a.free_threaded.is_some()
            && b.free_threaded.is_some()
            && a.free_threaded != b.free_threaded)
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::Implementation;

    fn interpreter(implementation: Implementation, version: &str, debug: bool) -> Interpreter {
        let mut i = Interpreter::for_tests(implementation, version);
        i.debug = debug;
        i
    }

    fn read(text: &str) -> PairRelations {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(default)]
            same: Vec<Relation>,
            #[serde(default)]
            different: Vec<Relation>,
            #[serde(default)]
            pairs: Vec<(VersionRequests, VersionRequests)>,
        }
        let raw: Raw = serde_norway::from_str(text).unwrap();
        PairRelations {
            same: raw.same,
            different: raw.different,
            pairs: raw.pairs,
        }
    }

    #[test]
    fn relations_hold_as_named() {
        let c3112 = interpreter(Implementation::Cpython, "3.11.2", false);
        let c3112d = interpreter(Implementation::Cpython, "3.11.2", true);
        let c3117 = interpreter(Implementation::Cpython, "3.11.7", false);
        let c39 = interpreter(Implementation::Cpython, "3.9.18", false);
        let p39 = interpreter(Implementation::Pypy, "3.9.16", false);
        let c27 = interpreter(Implementation::Cpython, "2.7.18", false);
        let series = read("same: [series]");
        assert!(series.holds_for(&c3112, &c3117) && series.holds_for(&c39, &p39));
        assert!(!series.holds_for(&c39, &c3112));
        let build = read("same: [version]\ndifferent: [build]");
        assert!(build.holds_for(&c3112, &c3112d) && !build.holds_for(&c3112, &c3112));
        let other = read("same: [series]\ndifferent: [implementation]");
        assert!(other.holds_for(&p39, &c39) && !other.holds_for(&c3112, &c3117));
        let pairs = read("pairs: [['2.7', '>=3'], ['3.9', '2.7']]");
        assert!(pairs.holds_for(&c27, &c39) && pairs.holds_for(&c39, &c27));
        assert!(!pairs.holds_for(&c3112, &c27) && !pairs.holds_for(&c27, &c27));
        assert_eq!(
            read("same: [series]\ndifferent: [implementation]\npairs: [['2.7', '3.8']]").describe(),
            vec![
                "same series",
                "different implementation",
                "pairs 2.7 -> 3.8"
            ]
        );
    }

    #[test]
    fn relations_that_never_hold() {
        let none = InterpreterSelector::default();
        let never = |text: &str| read(text).never(&none, &none).map(|(k, _)| k);
        assert_eq!(
            never("same: [build]\ndifferent: [build]"),
            Some("different")
        );
        assert_eq!(never("same: [series, series]"), Some("same"));
        assert_eq!(
            never("same: [version]\ndifferent: [series]"),
            Some("different")
        );
        assert_eq!(never("same: [series]\ndifferent: [version]"), None);
        let old: InterpreterSelector = InterpreterSelector {
            python: serde_norway::from_str("'<3'").ok(),
            ..Default::default()
        };
        let new: InterpreterSelector = InterpreterSelector {
            python: serde_norway::from_str("'>=3'").ok(),
            ..Default::default()
        };
        let version = read("same: [version]");
        assert!(version.never(&old, &new).is_some());
        assert!(read("same: [series]").never(&old, &new).is_none());
        let pairs = read("pairs: [['2.7', '3.8'], ['3.8', '2.7']]");
        assert!(pairs.never(&old, &none).is_none());
        assert_eq!(pairs.never(&new, &new).map(|(k, _)| k), Some("pairs"));
    }
}
