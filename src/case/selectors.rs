//! The selectors of case format version 2 and the values they take: a version request or a
//! list of them (any of them), an interpreter's probed features, `where` values with `not`,
//! and [`InterpreterSelector`], what a case or one side of a rule asks of an interpreter
//! (`python`, `implementation`, `implementation_version`, `features`). Each value checks itself
//! as serde reads it, so that a bad one is reported at its own line and column, quoted.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

use super::params::ParamValue;
use crate::python::{Implementation, Interpreter, Platform};
use crate::version::{PythonVersion, VersionRequest};

/// One version request or several, meaning any of them: `"3.8"`, or
/// `["<3.11.8", ">=3.12,<3.12.2"]` for a fix backported to two branches.
#[derive(Debug, Clone)]
pub struct VersionRequests(Vec<VersionRequest>);

impl VersionRequests {
    pub fn contains(&self, version: &PythonVersion) -> bool {
        self.0.iter().any(|r| r.contains(version))
    }

    /// Whether no version is in both (see [`VersionRequest::disjoint`]).
    pub fn disjoint(&self, other: &VersionRequests) -> bool {
        self.0.iter().all(|a| other.0.iter().all(|b| a.disjoint(b)))
    }
}

impl fmt::Display for VersionRequests {
    /// `3.8`, or `<3.11.8 or >=3.12,<3.12.2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&str> = self.0.iter().map(|r| r.as_str()).collect();
        f.write_str(&parts.join(" or "))
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

/// `implementation: pypy` or `[cpython, pypy]` (and the `dump_`/`load_` forms), read where
/// the value stands so that an unknown name is reported at its own line and column.
pub fn implementations<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Implementation>, D::Error> {
    d.deserialize_any(ImplementationsVisitor { in_list: false })
}

struct ImplementationsVisitor {
    in_list: bool,
}

/// One name of a list of implementations.
struct ImplementationName(Implementation);

impl<'de> Deserialize<'de> for ImplementationName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let found = d.deserialize_any(ImplementationsVisitor { in_list: true })?;
        Ok(ImplementationName(found[0]))
    }
}

impl<'de> de::Visitor<'de> for ImplementationsVisitor {
    type Value = Vec<Implementation>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.in_list {
            "`cpython` or `pypy`"
        } else {
            "`cpython`, `pypy`, or a list of them"
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<Implementation>, E> {
        Implementation::from_name(v)
            .map(|i| vec![i])
            .ok_or_else(|| {
                E::custom(format!(
                    "unknown implementation `{v}`: crosspickle knows `cpython` and `pypy`"
                ))
            })
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Implementation>, A::Error> {
        if self.in_list {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        }
        let mut all = Vec::new();
        while let Some(ImplementationName(i)) = seq.next_element()? {
            all.push(i);
        }
        if all.is_empty() {
            return Err(de::Error::custom(
                "an empty list of implementations matches no interpreter: give at least one, or leave the key out",
            ));
        }
        Ok(all)
    }
}

/// `platform: win32` or `[linux, darwin]`, read where the value stands so that an unknown
/// name is reported at its own line and column.
pub fn platforms<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Platform>, D::Error> {
    d.deserialize_any(PlatformsVisitor { in_list: false })
}

struct PlatformsVisitor {
    in_list: bool,
}

/// One name of a list of platforms.
struct PlatformName(Platform);

impl<'de> Deserialize<'de> for PlatformName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let found = d.deserialize_any(PlatformsVisitor { in_list: true })?;
        Ok(PlatformName(found[0]))
    }
}

impl<'de> de::Visitor<'de> for PlatformsVisitor {
    type Value = Vec<Platform>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.in_list {
            "`linux`, `darwin` or `win32`"
        } else {
            "`linux`, `darwin`, `win32`, or a list of them"
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<Platform>, E> {
        Platform::from_name(v).map(|p| vec![p]).ok_or_else(|| {
            E::custom(format!(
                "unknown platform `{v}`: crosspickle knows `linux`, `darwin` and `win32` (as `sys.platform` names them)"
            ))
        })
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Platform>, A::Error> {
        if self.in_list {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        }
        let mut all = Vec::new();
        while let Some(PlatformName(p)) = seq.next_element()? {
            all.push(p);
        }
        if all.is_empty() {
            return Err(de::Error::custom(
                "an empty list of platforms matches no interpreter: give at least one, or leave the key out",
            ));
        }
        Ok(all)
    }
}

/// A capability the probe finds out about an interpreter, as `features:` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    CPickle,
    Debug,
    FreeThreaded,
    GilEnabled,
}

impl Feature {
    pub fn name(self) -> &'static str {
        match self {
            Feature::CPickle => "c_pickle",
            Feature::Debug => "debug",
            Feature::FreeThreaded => "free_threaded",
            Feature::GilEnabled => "gil_enabled",
        }
    }

    /// What the probe found on `interpreter`.
    pub fn of(self, interpreter: &Interpreter) -> bool {
        match self {
            Feature::CPickle => interpreter.c_pickle_used,
            Feature::Debug => interpreter.debug,
            Feature::FreeThreaded => interpreter.free_threaded,
            Feature::GilEnabled => interpreter.gil_enabled,
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
    /// The GIL is on, as the probe found it (`sys._is_gil_enabled()`; before 3.13, exactly
    /// when the build is not free-threaded). False only on a free-threaded build that runs
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gil_enabled: Option<bool>,
}

impl Features {
    /// The features named, each with the value asked for.
    pub fn asked(&self) -> Vec<(Feature, bool)> {
        [
            (Feature::CPickle, self.c_pickle),
            (Feature::Debug, self.debug),
            (Feature::FreeThreaded, self.free_threaded),
            (Feature::GilEnabled, self.gil_enabled),
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
    /// `with c_pickle, without debug`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .asked()
            .into_iter()
            .map(|(feature, v)| {
                if v {
                    format!("with {}", feature.name())
                } else {
                    format!("without {}", feature.name())
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

impl<'de> Deserialize<'de> for WhereValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WhereVisitor { inside_not: false })
    }
}

/// Reads a `where` value where it stands, so that an error points at the value itself: a
/// scalar or a list (given to [`ParamValue`] to read), or, outside a `not`, `{not: ...}`.
struct WhereVisitor {
    inside_not: bool,
}

const WHERE_EXPECTING: &str = "a param's value, a list of them, or {not: VALUE} / {not: [VALUES]}";

/// Passes one scalar to [`ParamValue`]'s own reading of it.
macro_rules! scalar_to_param {
    ($($method:ident($ty:ty) => $de:ident),+ $(,)?) => {
        $(fn $method<E: de::Error>(self, v: $ty) -> Result<WhereValue, E> {
            ParamValue::deserialize(de::value::$de::<E>::new(v)).map(|p| WhereValue::AnyOf(vec![p]))
        })+
    };
}

impl<'de> de::Visitor<'de> for WhereVisitor {
    type Value = WhereValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(WHERE_EXPECTING)
    }

    scalar_to_param! {
        visit_bool(bool) => BoolDeserializer,
        visit_i64(i64) => I64Deserializer,
        visit_u64(u64) => U64Deserializer,
        visit_i128(i128) => I128Deserializer,
        visit_u128(u128) => U128Deserializer,
        visit_f64(f64) => F64Deserializer,
        visit_str(&str) => StrDeserializer,
    }

    fn visit_unit<E: de::Error>(self) -> Result<WhereValue, E> {
        ParamValue::deserialize(de::value::UnitDeserializer::<E>::new())
            .map(|p| WhereValue::AnyOf(vec![p]))
    }

    fn visit_none<E: de::Error>(self) -> Result<WhereValue, E> {
        self.visit_unit()
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<WhereValue, A::Error> {
        let mut values = Vec::new();
        while let Some(v) = seq.next_element::<ParamValue>()? {
            values.push(v);
        }
        Ok(WhereValue::AnyOf(values))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<WhereValue, A::Error> {
        if self.inside_not {
            return Err(de::Error::custom(
                "`not` takes a param's value or a list of them, not a map",
            ));
        }
        let key: Option<String> = map.next_key()?;
        match key.as_deref() {
            Some("not") => {}
            Some(other) => {
                return Err(de::Error::custom(format!(
                    "a `where` value is {WHERE_EXPECTING}, not a map with `{other}`"
                )))
            }
            None => {
                return Err(de::Error::custom(format!(
                    "a `where` value is {WHERE_EXPECTING}, not an empty map"
                )))
            }
        }
        let excluded = map.next_value_seed(NotSeed)?;
        if let Some(extra) = map.next_key::<String>()? {
            return Err(de::Error::custom(format!(
                "`{{not: ...}}` takes nothing else, not `{extra}`"
            )));
        }
        Ok(WhereValue::NoneOf(excluded))
    }
}

/// The values under `not`.
struct NotSeed;

impl<'de> de::DeserializeSeed<'de> for NotSeed {
    type Value = Vec<ParamValue>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<ParamValue>, D::Error> {
        match d.deserialize_any(WhereVisitor { inside_not: true })? {
            WhereValue::AnyOf(values) | WhereValue::NoneOf(values) => Ok(values),
        }
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
    /// The operating systems (`sys.platform`) it runs on: a rule's `platform`.
    pub platform: Vec<Platform>,
}

impl InterpreterSelector {
    pub fn is_empty(&self) -> bool {
        self.python.is_none()
            && self.implementation.is_empty()
            && self.platform.is_empty()
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
                return Some(format!("interpreters {features}"));
            }
        }
        if !self.platform.is_empty()
            && !interpreter
                .platform()
                .is_some_and(|p| self.platform.contains(&p))
        {
            return Some(format!("platform {}", platform_names(&self.platform)));
        }
        None
    }

    /// Each selector in words, for the side it is on (`dumped`, `loaded`, or `""` for the
    /// interpreter that decided): `dumped by python <3`, `loaded by pypy`, `with c_pickle`.
    pub fn describe(&self, side: &str) -> Vec<String> {
        let by = if side.is_empty() {
            String::new()
        } else {
            format!("{side} by ")
        };
        let mut out = Vec::new();
        if let Some(p) = &self.python {
            out.push(format!("{by}python {p}"));
        }
        if !self.implementation.is_empty() {
            let names: Vec<_> = self.implementation.iter().map(|i| i.as_str()).collect();
            out.push(format!("{by}{}", names.join("/")));
        }
        if let Some(v) = &self.implementation_version {
            out.push(format!("{by}implementation_version {v}"));
        }
        if let Some(f) = self.features.as_ref().filter(|f| !f.is_empty()) {
            if side.is_empty() {
                out.push(f.to_string());
            } else {
                out.push(format!("{side} {f}"));
            }
        }
        if !self.platform.is_empty() {
            out.push(format!("on {}", platform_names(&self.platform)));
        }
        out
    }

    /// Whether no interpreter can satisfy both (version requests that share no version,
    /// different implementations, contradicting features); `false` when that cannot be told
    /// without the interpreters.
    pub fn excludes(&self, other: &InterpreterSelector) -> bool {
        let versions_apart = |a: &Option<VersionRequests>, b: &Option<VersionRequests>| match (a, b)
        {
            (Some(a), Some(b)) => a.disjoint(b),
            _ => false,
        };
        if versions_apart(&self.python, &other.python)
            || versions_apart(&self.implementation_version, &other.implementation_version)
        {
            return true;
        }
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
        let platforms_apart = !self.platform.is_empty()
            && !other.platform.is_empty()
            && !self.platform.iter().any(|p| other.platform.contains(p));
        implementations_apart || features_apart || platforms_apart
    }
}

/// `win32`, `linux/darwin`.
fn platform_names(platforms: &[Platform]) -> String {
    let names: Vec<&str> = platforms.iter().map(|p| p.as_str()).collect();
    names.join("/")
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
            WhereValue::NoneOf(vec![ParamValue::Int(1.into()), ParamValue::Int(2.into())])
        );
        let e = where_value("{nto: c}").unwrap_err();
        assert!(e.contains("not a map with `nto`"), "{e}");
        let e = where_value("{not: {a: 1}}").unwrap_err();
        assert!(
            e.contains("`not` takes a param's value or a list of them, not a map"),
            "{e}"
        );
        let e = where_value("{not: 1, also: 2}").unwrap_err();
        assert!(e.contains("not `also`"), "{e}");
        let e = where_value("[1, [2]]").unwrap_err();
        assert!(e.contains("not lists"), "{e}");
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
        assert_eq!(one.to_string(), "3.8");
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
    fn implementations_name_themselves() {
        let read = |text: &str| {
            implementations(serde_norway::Deserializer::from_str(text)).map_err(|e| e.to_string())
        };
        assert_eq!(read("pypy").unwrap(), vec![Implementation::Pypy]);
        assert_eq!(
            read("[cpython, PyPy]").unwrap(),
            vec![Implementation::Cpython, Implementation::Pypy]
        );
        let e = read("jython").unwrap_err();
        assert!(e.contains("unknown implementation `jython`"), "{e}");
        let e = read("[pypy, [cpython]]").unwrap_err();
        assert!(e.contains("invalid type: sequence"), "{e}");
        assert!(read("[]").unwrap_err().contains("empty list"));
        assert!(read("3").unwrap_err().contains("invalid type: integer `3`"));
    }

    #[test]
    fn platforms_name_themselves_and_select() {
        let read = |text: &str| {
            platforms(serde_norway::Deserializer::from_str(text)).map_err(|e| e.to_string())
        };
        assert_eq!(read("win32").unwrap(), vec![Platform::Win32]);
        assert_eq!(
            read("[linux, darwin]").unwrap(),
            vec![Platform::Linux, Platform::Darwin]
        );
        let e = read("windows").unwrap_err();
        assert!(e.contains("unknown platform `windows`"), "{e}");
        assert!(read("[]").unwrap_err().contains("empty list"));
        assert!(read("[linux, [win32]]").unwrap_err().contains("sequence"));
        let on = |platforms: Vec<Platform>| InterpreterSelector {
            platform: platforms,
            ..Default::default()
        };
        let mut i = Interpreter::for_tests(Implementation::Cpython, "3.12.1");
        i.platform = Some("win32".into());
        assert!(on(vec![Platform::Win32]).holds_for(&i));
        assert_eq!(
            on(vec![Platform::Linux, Platform::Darwin])
                .mismatch(&i)
                .as_deref(),
            Some("platform linux/darwin")
        );
        assert!(on(vec![Platform::Linux]).excludes(&on(vec![Platform::Win32])));
        assert!(!on(vec![Platform::Linux]).excludes(&on(vec![Platform::Linux, Platform::Win32])));
        assert_eq!(on(vec![Platform::Win32]).describe(""), ["on win32"]);
        // Unrecorded (results of older versions, a stand-in): the host's.
        i.platform = None;
        let host = Platform::from_name(crate::python::platform::host_platform());
        assert_eq!(i.platform(), host);
    }

    #[test]
    fn features_read_and_contradict() {
        let f: Features = serde_norway::from_str("{c_pickle: true, debug: false}").unwrap();
        assert_eq!(f.to_string(), "with c_pickle, without debug");
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
