//! The selectors of case format version 2 and the values they take: a version request or a
//! list of them (any of them), an interpreter's probed features, `where` values with `not`,
//! and [`InterpreterSelector`], what a case or one side of a rule asks of an interpreter
//! (`python`, `implementation`, `implementation_version`, `features`). Each value checks itself
//! as serde reads it, so that a bad one is reported at its own line and column, quoted.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use super::params::ParamValue;
use crate::python::{Implementation, Interpreter};
use crate::version::{PythonVersion, VersionRequest};

/// One version request or several, meaning any of them: `"3.8"`, or
/// `["<3.11.8", ">=3.12,<3.12.2"]` for a fix backported to two branches.
#[derive(Debug, Clone)]
pub struct VersionRequests(Vec<VersionRequest>);

impl VersionRequests {
    pub fn contains(&self, version: &PythonVersion) -> bool {
        self.0.iter().any(|r| r.contains(version))
    }

    pub fn requests(&self) -> &[VersionRequest] {
        &self.0
    }
}

impl fmt::Display for VersionRequests {
    /// `3.8`, or `<3.11.8 or >=3.12,<3.12.2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&str> = self.0.iter().map(|r| r.as_str()).collect();
        f.write_str(&parts.join(" or "))
    }
}

impl Serialize for VersionRequests {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for VersionRequests {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = VersionRequests;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a version request in quotes (\"3.8\", \">=3.8,<3.8.2\") or a list of them",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VersionRequests, E> {
                VersionRequest::from_str(v)
                    .map(|r| VersionRequests(vec![r]))
                    .map_err(|e| E::custom(format!("invalid version request `{v}`: {e}")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<VersionRequests, E> {
                let d = de::value::F64Deserializer::<E>::new(v);
                VersionRequest::deserialize(d).map(|r| VersionRequests(vec![r]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<VersionRequests, E> {
                let d = de::value::I64Deserializer::<E>::new(v);
                VersionRequest::deserialize(d).map(|r| VersionRequests(vec![r]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<VersionRequests, E> {
                let d = de::value::U64Deserializer::<E>::new(v);
                VersionRequest::deserialize(d).map(|r| VersionRequests(vec![r]))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<VersionRequests, A::Error> {
                let mut all = Vec::new();
                while let Some(r) = seq.next_element::<VersionRequest>()? {
                    all.push(r);
                }
                if all.is_empty() {
                    return Err(de::Error::custom(
                        "an empty list of version requests matches no interpreter: give at least one, or leave the key out",
                    ));
                }
                Ok(VersionRequests(all))
            }
        }
        d.deserialize_any(V)
    }
}

/// A capability the probe finds out about an interpreter, as `features:` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    CPickle,
    Debug,
    FreeThreaded,
}

impl Feature {
    pub fn name(self) -> &'static str {
        match self {
            Feature::CPickle => "c_pickle",
            Feature::Debug => "debug",
            Feature::FreeThreaded => "free_threaded",
        }
    }

    /// What the probe found on `interpreter`.
    pub fn of(self, interpreter: &Interpreter) -> bool {
        match self {
            Feature::CPickle => interpreter.c_pickle_used,
            Feature::Debug => interpreter.debug,
            Feature::FreeThreaded => interpreter.free_threaded,
        }
    }
}

/// `features: {c_pickle: true, debug: false}`: each named feature must be as given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Features {
    /// The C pickler and unpickler are there and are what the pickle module hands out: `_pickle`
    /// imports and `pickle.Pickler`, `Unpickler`, `dump`, `dumps`, `load` and `loads` are its
    /// objects. True on CPython 3 and PyPy 8; false on 2.7 (its `pickle.Pickler` is the Python
    /// class even with cPickle there) and on PyPy 7.3 (no `_pickle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_pickle: Option<bool>,
    /// A debug build (`sys.gettotalrefcount` exists), such as Debian's python3.11-dbg.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
    /// A free-threaded build (`Py_GIL_DISABLED`), such as python3.13t.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_threaded: Option<bool>,
}

impl Features {
    /// The features named, each with the value asked for.
    pub fn asked(&self) -> Vec<(Feature, bool)> {
        [
            (Feature::CPickle, self.c_pickle),
            (Feature::Debug, self.debug),
            (Feature::FreeThreaded, self.free_threaded),
        ]
        .into_iter()
        .filter_map(|(f, v)| v.map(|v| (f, v)))
        .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.asked().is_empty()
    }

    pub fn hold_for(&self, interpreter: &Interpreter) -> bool {
        self.asked()
            .into_iter()
            .all(|(f, want)| f.of(interpreter) == want)
    }

    /// Whether no interpreter can have both `self` and `other`.
    pub fn contradict(&self, other: &Features) -> bool {
        self.asked()
            .into_iter()
            .any(|(f, v)| other.asked().contains(&(f, !v)))
    }
}

impl fmt::Display for Features {
    /// `c_pickle, not debug`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .asked()
            .into_iter()
            .map(|(feature, v)| {
                if v {
                    feature.name().to_string()
                } else {
                    format!("not {}", feature.name())
                }
            })
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// What a `where` entry selects: some values of a param, or all but some (`{not: c}`).
#[derive(Debug, Clone, PartialEq)]
pub enum WhereValue {
    AnyOf(Vec<ParamValue>),
    NoneOf(Vec<ParamValue>),
}

impl WhereValue {
    /// The values named, whichever way.
    pub fn values(&self) -> &[ParamValue] {
        match self {
            WhereValue::AnyOf(v) | WhereValue::NoneOf(v) => v,
        }
    }

    pub fn selects(&self, value: &ParamValue) -> bool {
        match self {
            WhereValue::AnyOf(v) => v.contains(value),
            WhereValue::NoneOf(v) => !v.contains(value),
        }
    }
}

impl Serialize for WhereValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let one_or_many = |v: &Vec<ParamValue>| match v.as_slice() {
            [one] => serde_json::to_value(one),
            many => serde_json::to_value(many),
        };
        match self {
            WhereValue::AnyOf(v) => one_or_many(v)
                .map_err(serde::ser::Error::custom)?
                .serialize(s),
            WhereValue::NoneOf(v) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("not", &one_or_many(v).map_err(serde::ser::Error::custom)?)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for WhereValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_norway::Value::deserialize(d)?;
        let shown = quote(&value);
        let expecting = "a `where` value is a param's value, a list of them, or `{not: VALUE}` / `{not: [VALUES]}`";
        let scalars = |v: serde_norway::Value| -> Result<Vec<ParamValue>, String> {
            match v {
                serde_norway::Value::Sequence(items) => items
                    .into_iter()
                    .map(|i| {
                        let shown = quote(&i);
                        ParamValue::deserialize(i).map_err(|e| format!("`{shown}`: {e}"))
                    })
                    .collect(),
                other => {
                    let shown = quote(&other);
                    ParamValue::deserialize(other)
                        .map(|p| vec![p])
                        .map_err(|e| format!("`{shown}`: {e}"))
                }
            }
        };
        match value {
            serde_norway::Value::Mapping(map) => {
                let mut entries = map.into_iter();
                match (entries.next(), entries.next()) {
                    (Some((serde_norway::Value::String(key), inner)), None) if key == "not" => {
                        scalars(inner)
                            .map(WhereValue::NoneOf)
                            .map_err(|e| de::Error::custom(format!("{expecting}; {e}")))
                    }
                    _ => Err(de::Error::custom(format!("{expecting}, not `{shown}`"))),
                }
            }
            serde_norway::Value::Tagged(_) => {
                Err(de::Error::custom(format!("{expecting}, not `{shown}`")))
            }
            other => scalars(other)
                .map(WhereValue::AnyOf)
                .map_err(|e| de::Error::custom(format!("{expecting}; {e}"))),
        }
    }
}

/// A YAML value as a short flow-style text for messages: `{nto: 5}` shows as `{"nto":5}`.
fn quote(value: &serde_norway::Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| format!("{value:?}"));
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// What a case, or one side of a rule, asks of an interpreter; empty asks nothing.
#[derive(Debug, Clone, Default)]
pub struct InterpreterSelector {
    pub python: Option<VersionRequests>,
    pub implementation: Vec<Implementation>,
    /// On `sys.implementation.version`: PyPy's own release, CPython's Python version.
    pub implementation_version: Option<VersionRequests>,
    pub features: Option<Features>,
}

impl InterpreterSelector {
    pub fn is_empty(&self) -> bool {
        self.python.is_none()
            && self.implementation.is_empty()
            && self.implementation_version.is_none()
            && self.features.as_ref().is_none_or(Features::is_empty)
    }

    pub fn holds_for(&self, interpreter: &Interpreter) -> bool {
        self.mismatch(interpreter).is_none()
    }

    /// The first thing `interpreter` does not have, in words: `python >=3.8`, `pypy`,
    /// `implementation_version <8`, `features c_pickle`.
    pub fn mismatch(&self, interpreter: &Interpreter) -> Option<String> {
        if let Some(req) = &self.python {
            if !req.contains(&interpreter.version) {
                return Some(format!("python {req}"));
            }
        }
        if !self.implementation.is_empty()
            && !self.implementation.contains(&interpreter.implementation)
        {
            let names: Vec<_> = self.implementation.iter().map(|i| i.as_str()).collect();
            return Some(names.join(", "));
        }
        if let Some(req) = &self.implementation_version {
            let holds = interpreter
                .implementation_release()
                .is_some_and(|v| req.contains(&v));
            if !holds {
                return Some(format!("implementation_version {req}"));
            }
        }
        if let Some(features) = &self.features {
            if !features.hold_for(interpreter) {
                return Some(format!("features {features}"));
            }
        }
        None
    }

    /// Each selector in words, prefixed for the side it is on (`dumped by ` …).
    pub fn describe(&self, side: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = &self.python {
            out.push(format!("{side}python {p}"));
        }
        if !self.implementation.is_empty() {
            let names: Vec<_> = self.implementation.iter().map(|i| i.as_str()).collect();
            out.push(format!("{side}{}", names.join("/")));
        }
        if let Some(v) = &self.implementation_version {
            out.push(format!("{side}implementation_version {v}"));
        }
        if let Some(f) = self.features.as_ref().filter(|f| !f.is_empty()) {
            out.push(format!("{side}{f}"));
        }
        out
    }

    /// Whether no interpreter can satisfy both (different implementations or contradicting
    /// features); `false` when that cannot be told without the interpreters.
    pub fn excludes(&self, other: &InterpreterSelector) -> bool {
        let implementations_apart = !self.implementation.is_empty()
            && !other.implementation.is_empty()
            && !self
                .implementation
                .iter()
                .any(|i| other.implementation.contains(i));
        let features_apart = match (&self.features, &other.features) {
            (Some(a), Some(b)) => a.contradict(b),
            _ => false,
        };
        implementations_apart || features_apart
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn where_value(text: &str) -> Result<WhereValue, String> {
        serde_norway::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn where_values() {
        let c = ParamValue::Str("c".into());
        let py = ParamValue::Str("python".into());
        assert_eq!(
            where_value("c").unwrap(),
            WhereValue::AnyOf(vec![c.clone()])
        );
        assert_eq!(
            where_value("[c, python]").unwrap(),
            WhereValue::AnyOf(vec![c.clone(), py.clone()])
        );
        let not = where_value("{not: c}").unwrap();
        assert_eq!(not, WhereValue::NoneOf(vec![c.clone()]));
        assert!(!not.selects(&c) && not.selects(&py));
        assert_eq!(
            where_value("{not: [1, 2]}").unwrap(),
            WhereValue::NoneOf(vec![ParamValue::Int(1), ParamValue::Int(2)])
        );
        let e = where_value("{nto: c}").unwrap_err();
        assert!(e.contains("not `{\"nto\":\"c\"}`"), "{e}");
        let e = where_value("{not: {a: 1}}").unwrap_err();
        assert!(e.contains("`{\"a\":1}`") && e.contains("not maps"), "{e}");
        let e = where_value("[1, [2]]").unwrap_err();
        assert!(e.contains("`[2]`"), "{e}");
    }

    #[test]
    fn version_request_lists() {
        let r: VersionRequests = serde_norway::from_str("['<3.11.8', '>=3.12,<3.12.2']").unwrap();
        let v = |s| PythonVersion::parse(s).unwrap();
        assert!(r.contains(&v("3.11.7")));
        assert!(!r.contains(&v("3.11.8")));
        assert!(r.contains(&v("3.12.1")));
        assert!(!r.contains(&v("3.12.2")));
        assert_eq!(r.to_string(), "<3.11.8 or >=3.12,<3.12.2");
        let one: VersionRequests = serde_norway::from_str("'3.8'").unwrap();
        assert_eq!(serde_json::to_string(&one).unwrap(), "\"3.8\"");
        let e = serde_norway::from_str::<VersionRequests>("[]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty list"), "{e}");
        let e = serde_norway::from_str::<VersionRequests>("['3.8', 3.10]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("put it in quotes"), "{e}");
        let e = serde_norway::from_str::<VersionRequests>("3.10")
            .unwrap_err()
            .to_string();
        assert!(e.contains("put it in quotes"), "{e}");
    }

    #[test]
    fn features_read_and_contradict() {
        let f: Features = serde_norway::from_str("{c_pickle: true, debug: false}").unwrap();
        assert_eq!(f.to_string(), "c_pickle, not debug");
        let g: Features = serde_norway::from_str("{c_pickle: false}").unwrap();
        assert!(f.contradict(&g) && g.contradict(&f));
        assert!(!f.contradict(&Features::default()));
        let e = serde_norway::from_str::<Features>("{cpickle: true}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `cpickle`"), "{e}");
        let e = serde_norway::from_str::<Features>("{debug: yes}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"yes\""), "{e}");
    }
}
