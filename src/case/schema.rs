//! The case file as serde reads it: every key of format version 1, unknown keys refused, so a
//! typo can never silently drop an expectation.

use std::collections::BTreeMap;
use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize};

use super::params::ParamValue;
use crate::python::Implementation;
use crate::version::VersionRequest;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCase {
    pub id: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub links: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub python: Option<VersionRequest>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub implementation: Vec<Implementation>,
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub timeout: Option<f64>,
    /// Read for its shape only: the loader types each value from the YAML tree.
    #[serde(default)]
    #[allow(dead_code)]
    pub params: IndexMap<String, Vec<ParamValue>>,
    pub code: Option<String>,
    pub dump: Option<String>,
    pub load: Option<String>,
    #[serde(default)]
    pub expect: Vec<RawRule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRule {
    pub python: Option<VersionRequest>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub implementation: Vec<Implementation>,
    /// Read for its shape only: the loader types each value from the YAML tree.
    #[serde(rename = "where", default)]
    #[allow(dead_code)]
    pub where_: IndexMap<String, OneOrMany<ParamValue>>,
    pub dump_python: Option<VersionRequest>,
    pub load_python: Option<VersionRequest>,
    pub phase: Option<Phase>,
    pub outcome: OutcomeKind,
    pub exception: Option<String>,
    pub signal: Option<String>,
    #[serde(rename = "match")]
    pub pattern: Option<String>,
    pub reason: Option<String>,
}

/// A value or a list of them (`where: {protocol: 5}` or `{protocol: [4, 5]}`). Read by hand,
/// not as an untagged enum: an error in a value then points at that value and quotes it
/// (`unknown variant `jython``), instead of at the mapping that holds it.
#[derive(Debug)]
pub(super) enum OneOrMany<T> {
    Many(Vec<T>),
    One(T),
}

impl<T> OneOrMany<T> {
    pub fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(t) => vec![t],
            OneOrMany::Many(v) => v,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{
            BoolDeserializer, F64Deserializer, I64Deserializer, MapAccessDeserializer,
            SeqAccessDeserializer, StrDeserializer, U64Deserializer, UnitDeserializer,
        };
        use serde::de::{Error, MapAccess, SeqAccess, Visitor};
        use std::marker::PhantomData;

        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scalar or a list of scalars")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::<T>::deserialize(SeqAccessDeserializer::new(seq)).map(OneOrMany::Many)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(OneOrMany::One)
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(StrDeserializer::<E>::new(v)).map(OneOrMany::One)
            }
            fn visit_bool<E: Error>(self, v: bool) -> Result<Self::Value, E> {
                T::deserialize(BoolDeserializer::<E>::new(v)).map(OneOrMany::One)
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(I64Deserializer::<E>::new(v)).map(OneOrMany::One)
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(U64Deserializer::<E>::new(v)).map(OneOrMany::One)
            }
            fn visit_i128<E: Error>(self, v: i128) -> Result<Self::Value, E> {
                T::deserialize(serde::de::value::I128Deserializer::<E>::new(v)).map(OneOrMany::One)
            }
            fn visit_u128<E: Error>(self, v: u128) -> Result<Self::Value, E> {
                T::deserialize(serde::de::value::U128Deserializer::<E>::new(v)).map(OneOrMany::One)
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(F64Deserializer::<E>::new(v)).map(OneOrMany::One)
            }
            fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
                T::deserialize(UnitDeserializer::<E>::new()).map(OneOrMany::One)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Implementation>, D::Error> {
    Ok(OneOrMany::<Implementation>::deserialize(d)?.into_vec())
}

/// What a run showed, as the format names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKind {
    Pass,
    Fail,
    Error,
    Crash,
    Timeout,
}

impl OutcomeKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            OutcomeKind::Pass => "pass",
            OutcomeKind::Fail => "fail",
            OutcomeKind::Error => "error",
            OutcomeKind::Crash => "crash",
            OutcomeKind::Timeout => "timeout",
        }
    }
}

impl fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The phase of a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Dump,
    Load,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Dump => "dump",
            Phase::Load => "load",
        })
    }
}
