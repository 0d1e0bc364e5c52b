//! Case parameters: scalar values as YAML gives them, and their cartesian product.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// One scalar value of a param.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl ParamValue {
    /// The value as a Python literal, readable by 2.7 and 3.x alike.
    pub fn python_literal(&self) -> String {
        match self {
            ParamValue::Null => "None".into(),
            ParamValue::Bool(true) => "True".into(),
            ParamValue::Bool(false) => "False".into(),
            ParamValue::Int(i) => i.to_string(),
            ParamValue::Float(f) if f.is_nan() => "float('nan')".into(),
            ParamValue::Float(f) if f.is_infinite() => {
                if *f > 0.0 {
                    "float('inf')".into()
                } else {
                    "float('-inf')".into()
                }
            }
            ParamValue::Float(f) => format!("{f:?}"),
            ParamValue::Str(s) => python_unicode_literal(s),
        }
    }
}

/// `u"..."` with everything outside printable ASCII escaped, so that Python 2 (which reads the
/// literal as bytes) and Python 3 read the same text.
fn python_unicode_literal(s: &str) -> String {
    let mut out = String::from("u\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Null => f.write_str("null"),
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Str(s) => f.write_str(s),
        }
    }
}

impl Serialize for ParamValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ParamValue::Null => s.serialize_unit(),
            ParamValue::Bool(b) => s.serialize_bool(*b),
            ParamValue::Int(i) => s.serialize_i64(*i),
            ParamValue::Float(x) => s.serialize_f64(*x),
            ParamValue::Str(x) => s.serialize_str(x),
        }
    }
}

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ParamValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scalar (string, number, boolean or null)")
            }
            fn visit_unit<E: de::Error>(self) -> Result<ParamValue, E> {
                Ok(ParamValue::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<ParamValue, E> {
                Ok(ParamValue::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ParamValue, E> {
                Ok(ParamValue::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ParamValue, E> {
                Ok(ParamValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamValue, E> {
                i64::try_from(v)
                    .map(ParamValue::Int)
                    .map_err(|_| E::custom("integer too large"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ParamValue, E> {
                Ok(ParamValue::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ParamValue, E> {
                Ok(ParamValue::Str(v.to_string()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<ParamValue, A::Error> {
                Err(de::Error::custom("param values must be scalars, not lists"))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<ParamValue, A::Error> {
                Err(de::Error::custom("param values must be scalars, not maps"))
            }
        }
        d.deserialize_any(V)
    }
}

/// One combination of param values, in the order the case declares its params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params(pub IndexMap<String, ParamValue>);

impl Params {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.0.get(name)
    }

    /// A Python dict literal binding each name to its value.
    pub fn python_literal(&self) -> String {
        let items: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}: {}",
                    ParamValue::Str(k.clone()).python_literal(),
                    v.python_literal()
                )
            })
            .collect();
        format!("{{{}}}", items.join(", "))
    }
}

impl fmt::Display for Params {
    /// `protocol=5,pickler=c`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// How every report and message names a run: `id`, or `id[params]` with params, then for a
/// round trip ` producer -> consumer`, or ` producer ->` alone for a matrix row whose columns are
/// the consumers. Labels or short headers alike: the caller chooses how to name interpreters.
pub fn run_name(
    id: &str,
    params: &Params,
    producer: Option<&str>,
    consumer: Option<&str>,
) -> String {
    let mut name = if params.is_empty() {
        id.to_string()
    } else {
        format!("{id}[{params}]")
    };
    if let Some(producer) = producer {
        name.push_str(&format!(" {producer} ->"));
        if let Some(consumer) = consumer {
            name.push_str(&format!(" {consumer}"));
        }
    }
    name
}

/// The cartesian product of `params`, first param varying slowest.
pub fn cartesian(params: &IndexMap<String, Vec<ParamValue>>) -> Vec<Params> {
    let mut combos = vec![IndexMap::new()];
    for (name, values) in params {
        let mut next = Vec::with_capacity(combos.len() * values.len());
        for combo in &combos {
            for value in values {
                let mut c = combo.clone();
                c.insert(name.clone(), value.clone());
                next.push(c);
            }
        }
        combos = next;
    }
    combos.into_iter().map(Params).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_and_display() {
        let mut p = IndexMap::new();
        p.insert(
            "protocol".to_string(),
            vec![ParamValue::Int(2), ParamValue::Int(5)],
        );
        p.insert(
            "pickler".to_string(),
            vec![
                ParamValue::Str("c".into()),
                ParamValue::Str("python".into()),
            ],
        );
        let all = cartesian(&p);
        assert_eq!(all.len(), 4);
        assert_eq!(all[0].to_string(), "protocol=2,pickler=c");
        assert_eq!(all[3].to_string(), "protocol=5,pickler=python");
        assert_eq!(cartesian(&IndexMap::new()).len(), 1);
    }

    #[test]
    fn run_names() {
        let mut m = IndexMap::new();
        m.insert("protocol".to_string(), ParamValue::Int(5));
        m.insert("pickler".to_string(), ParamValue::Str("c".into()));
        let params = Params(m);
        let none = Params::default();
        assert_eq!(run_name("case", &none, None, None), "case");
        assert_eq!(
            run_name("case", &params, None, None),
            "case[protocol=5,pickler=c]"
        );
        assert_eq!(
            run_name("case", &params, Some("3.8.18"), Some("3.12.1")),
            "case[protocol=5,pickler=c] 3.8.18 -> 3.12.1"
        );
        assert_eq!(
            run_name("case", &none, Some("3.8.18"), None),
            "case 3.8.18 ->"
        );
        assert_eq!(run_name("case", &none, None, Some("ignored")), "case");
    }

    #[test]
    fn python_literals() {
        let mut m = IndexMap::new();
        m.insert("s".to_string(), ParamValue::Str("a\"b\\c\u{e9}".into()));
        m.insert("n".to_string(), ParamValue::Null);
        m.insert("f".to_string(), ParamValue::Float(1.5));
        m.insert("b".to_string(), ParamValue::Bool(true));
        let lit = Params(m).python_literal();
        assert_eq!(
            lit,
            r#"{u"s": u"a\"b\\c\u00e9", u"n": None, u"f": 1.5, u"b": True}"#
        );
    }
}
