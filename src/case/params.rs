//! Case parameters: scalar values with their identity (typed as YAML types them, integers of
//! any size), the names that tell every value apart in reports, and their cartesian product.

use std::fmt;

use indexmap::IndexMap;
use num_bigint::BigInt;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::yaml::Scalar;

/// One scalar value of a param, with its identity: `5`, `"5"`, `5.0` and `true` are four
/// values; so are `0.0` and `-0.0`; `.nan` is one value equal to itself; integers have any
/// size. Each has a [`name`](ParamValue::name) that no other value has.
#[derive(Debug, Clone)]
pub enum ParamValue {
    Null,
    Bool(bool),
    Int(BigInt),
    Float(f64),
    Str(String),
}

impl PartialEq for ParamValue {
    fn eq(&self, other: &Self) -> bool {
        use ParamValue::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            // Identity, not IEEE equality: NaN is itself, 0.0 and -0.0 are two values.
            (Float(a), Float(b)) => float_bits(*a) == float_bits(*b),
            (Str(a), Str(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for ParamValue {}

impl std::hash::Hash for ParamValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            ParamValue::Null => {}
            ParamValue::Bool(b) => b.hash(state),
            ParamValue::Int(i) => i.hash(state),
            ParamValue::Float(f) => float_bits(*f).hash(state),
            ParamValue::Str(s) => s.hash(state),
        }
    }
}

/// A float's bits, every NaN the same.
fn float_bits(f: f64) -> u64 {
    if f.is_nan() {
        f64::NAN.to_bits()
    } else {
        f.to_bits()
    }
}

impl From<i64> for ParamValue {
    fn from(i: i64) -> Self {
        ParamValue::Int(BigInt::from(i))
    }
}

/// The words a bare string name may not be (any case): they name other values.
const RESERVED_WORDS: [&str; 5] = ["none", "true", "false", "inf", "nan"];

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
            ParamValue::Float(f) => python_float_repr(*f),
            ParamValue::Str(s) => python_unicode_literal(s),
        }
    }

    /// How run names write the value, different for every distinct value: Python's `repr`
    /// (`None`, `True`, `5`, `5.0`, `-0.0`, `nan`, `-inf`, `'5'`), except that a string that
    /// reads as a word (`c`, `app.db`, `list_int`: ASCII letters, digits, `_`, `.`, `-`,
    /// starting with a letter or `_`, and not `None`, `True`, `False`, `inf` or `nan` in any
    /// case) is written bare.
    pub fn name(&self) -> String {
        match self {
            ParamValue::Null => "None".into(),
            ParamValue::Bool(true) => "True".into(),
            ParamValue::Bool(false) => "False".into(),
            ParamValue::Int(i) => i.to_string(),
            ParamValue::Float(f) => python_float_repr(*f),
            ParamValue::Str(s) if is_bare_word(s) => s.clone(),
            ParamValue::Str(s) => python_str_repr(s),
        }
    }

    /// The value of a YAML scalar, as YAML 1.2's core schema (and serde_norway) types it,
    /// with integers of any size: unquoted `5` is an integer, `5.0`, `.inf`, `-.inf`, `.nan`
    /// floats, `true`/`false` booleans, `null`/`~`/nothing null, quoted or block text a string,
    /// as are plain words; `!!str`, `!!int`, `!!float`, `!!bool` and `!!null` force a type.
    pub fn from_yaml(scalar: &Scalar) -> Result<ParamValue, String> {
        const CORE: &str = "tag:yaml.org,2002:";
        let text = scalar.text.as_str();
        let want = |what: &str| format!("`{text}` is not {what}");
        match scalar.tag.as_deref() {
            None if !scalar.plain => Ok(ParamValue::Str(text.to_string())),
            None => resolve_plain(text),
            Some(tag) => match tag.strip_prefix(CORE) {
                Some("str") => Ok(ParamValue::Str(text.to_string())),
                Some("int") => parse_int(text)
                    .map(ParamValue::Int)
                    .ok_or_else(|| want("an integer")),
                Some("float") => match parse_float(text) {
                    Some(Ok(f)) => Ok(ParamValue::Float(f)),
                    Some(Err(e)) => Err(e),
                    None => parse_int(text)
                        .and_then(|i| i.to_string().parse::<f64>().ok())
                        .filter(|f| f.is_finite())
                        .map(ParamValue::Float)
                        .ok_or_else(|| want("a float")),
                },
                Some("bool") => parse_bool(text)
                    .map(ParamValue::Bool)
                    .ok_or_else(|| want("a boolean")),
                Some("null") => parse_null(text)
                    .then_some(ParamValue::Null)
                    .ok_or_else(|| want("null")),
                _ => Err(format!(
                    "the tag `{tag}` is not one a param value can have (use !!str, !!int, !!float, !!bool or !!null)"
                )),
            },
        }
    }
}

fn resolve_plain(text: &str) -> Result<ParamValue, String> {
    if parse_null(text) {
        return Ok(ParamValue::Null);
    }
    if let Some(b) = parse_bool(text) {
        return Ok(ParamValue::Bool(b));
    }
    if let Some(i) = parse_int(text) {
        return Ok(ParamValue::Int(i));
    }
    match parse_float(text) {
        Some(result) => result.map(ParamValue::Float),
        None => Ok(ParamValue::Str(text.to_string())),
    }
}

fn parse_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// An integer as serde_norway reads one, of any size: an optional sign, then `0x`, `0o` or
/// `0b` digits, or decimal digits without a leading zero (`012` is a string, as in YAML 1.2).
fn parse_int(text: &str) -> Option<BigInt> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(d) = unsigned.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = unsigned.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = unsigned.strip_prefix("0b") {
        (2, d)
    } else {
        if unsigned.len() > 1 && unsigned.starts_with('0') {
            return None;
        }
        (10, unsigned)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = BigInt::parse_bytes(digits.as_bytes(), radix)?;
    Some(if negative { -magnitude } else { magnitude })
}

/// A float as YAML 1.2's core schema writes one: `None` when `text` is not one, an error when
/// it is one that a float cannot hold (`1e400`).
fn parse_float(text: &str) -> Option<Result<f64, String>> {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let negative = text.starts_with('-');
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Some(Ok(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }));
    }
    if matches!(text, ".nan" | ".NaN" | ".NAN") {
        return Some(Ok(f64::NAN));
    }
    // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = digits(int)
        && frac.is_none_or(digits)
        && (!int.is_empty() || frac.is_some_and(|f| !f.is_empty()));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    if !(mantissa_ok && exponent_ok) || (frac.is_none() && exponent.is_none()) {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    Some(if value.is_finite() {
        Ok(value)
    } else {
        Err(format!(
            "`{text}` is too large for a float: write .inf (or -.inf), or quote it for a string"
        ))
    })
}

/// Python's `repr` of a finite or non-finite float: the shortest digits that read back as the
/// same float, positional from 1e-4 to below 1e16, else with an exponent (`1e+16`, `1.5e-07`).
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp writes an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let point = exp as usize + 1;
            if digits.len() <= point {
                format!("{sign}{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{sign}{}.{}", &digits[..point], &digits[point..])
            }
        } else {
            format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
        }
    } else {
        let rest = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!(
            "{sign}{}{rest}e{exp_sign}{:02}",
            &digits[..1],
            exp.unsigned_abs()
        )
    }
}

fn is_bare_word(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        && !RESERVED_WORDS.contains(&s.to_ascii_lowercase().as_str())
}

/// Python 3's `repr` of a string: single quotes unless the text has one and no double quote,
/// backslash escapes for the quote, the backslash and every non-printable character.
pub fn python_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// Printable as Python's `str.isprintable` sees it, near enough for names: not a control or
/// format character, not a separator other than the space, not private-use.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(u, 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F
            | 0x202A..=0x202E | 0x2060..=0x206F | 0xD800..=0xF8FF | 0xFEFF | 0xFFF9..=0xFFFB
            | 0xFFFE | 0xFFFF | 0xE0000..=0xE0FFF | 0xF0000..))
}

/// `u"..."` with everything outside printable ASCII escaped, so that Python 2 (which reads the
/// literal as bytes) and Python 3 read the same text.
pub fn python_unicode_literal(s: &str) -> String {
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
    /// The raw value, as `{name}` placeholders of `requires` take it (`2.8.0`, `5`, `true`):
    /// not unique across types; run names use [`ParamValue::name`].
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
    /// The JSON form (docs/case-format.md): a JSON scalar of the same type where JSON has
    /// one, and `{"float": "nan"|"inf"|"-inf"}` or `{"int": "<decimal digits>"}` for floats
    /// JSON cannot write and integers outside 64-bit signed ones (which a reader would take
    /// for floats).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            ParamValue::Null => s.serialize_unit(),
            ParamValue::Bool(b) => s.serialize_bool(*b),
            ParamValue::Int(i) => match i64::try_from(i) {
                Ok(v) => s.serialize_i64(v),
                Err(_) => {
                    let mut map = s.serialize_map(Some(1))?;
                    map.serialize_entry("int", &i.to_string())?;
                    map.end()
                }
            },
            ParamValue::Float(x) if x.is_finite() => s.serialize_f64(*x),
            ParamValue::Float(x) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("float", &python_float_repr(*x))?;
                map.end()
            }
            ParamValue::Str(x) => s.serialize_str(x),
        }
    }
}

impl<'de> Deserialize<'de> for ParamValue {
    /// What a case file may hold where a param value goes (serde checks the shape; the loader
    /// then types each value from its YAML text with [`ParamValue::from_yaml`]).
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
                Ok(ParamValue::Int(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamValue, E> {
                Ok(ParamValue::Int(v.into()))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<ParamValue, E> {
                Ok(ParamValue::Int(v.into()))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<ParamValue, E> {
                Ok(ParamValue::Int(v.into()))
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
    /// `protocol=5,pickler=c,text='5'`: each value by its [`ParamValue::name`], so two
    /// combinations have the same name only when they are the same.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{k}={}", v.name())?;
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
            vec![ParamValue::from(2), ParamValue::from(5)],
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
        m.insert("protocol".to_string(), ParamValue::from(5));
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

    fn yaml(text: &str, plain: bool, tag: Option<&str>) -> Result<ParamValue, String> {
        ParamValue::from_yaml(&Scalar {
            text: text.into(),
            plain,
            literal: false,
            tag: tag.map(|t| format!("tag:yaml.org,2002:{t}")),
        })
    }

    fn plain(text: &str) -> ParamValue {
        yaml(text, true, None).unwrap()
    }

    #[test]
    fn yaml_scalars_are_typed_as_yaml_does_with_integers_of_any_size() {
        assert_eq!(plain("5"), ParamValue::from(5));
        assert_eq!(yaml("5", false, None).unwrap(), ParamValue::Str("5".into()));
        assert_eq!(
            yaml("5", true, Some("str")).unwrap(),
            ParamValue::Str("5".into())
        );
        assert_eq!(plain("0x1F"), ParamValue::from(31));
        assert_eq!(plain("-0o17"), ParamValue::from(-15));
        assert_eq!(plain("+0b101"), ParamValue::from(5));
        assert_eq!(plain("012"), ParamValue::Str("012".into()));
        let big = "1267650600228229401496703205376"; // 2**100
        assert_eq!(plain(big).name(), big);
        assert_eq!(plain("-9223372036854775809").name(), "-9223372036854775809");
        assert_eq!(plain("18446744073709551616").name(), "18446744073709551616");
        assert_eq!(plain("1.0"), ParamValue::Float(1.0));
        assert_eq!(plain("-0.0").name(), "-0.0");
        assert_ne!(plain("-0.0"), plain("0.0"));
        assert_eq!(plain(".nan"), plain(".NaN"));
        assert_eq!(plain(".inf"), ParamValue::Float(f64::INFINITY));
        assert_eq!(plain("-.inf"), ParamValue::Float(f64::NEG_INFINITY));
        assert_eq!(plain("nan"), ParamValue::Str("nan".into()));
        assert_eq!(plain("1e5"), ParamValue::Float(1e5));
        assert_eq!(plain("1.2.3"), ParamValue::Str("1.2.3".into()));
        assert!(yaml("1e400", true, None)
            .unwrap_err()
            .contains("too large for a float"));
        assert_eq!(plain("~"), ParamValue::Null);
        assert_eq!(plain(""), ParamValue::Null);
        assert_eq!(plain("True"), ParamValue::Bool(true));
        assert_eq!(plain("yes"), ParamValue::Str("yes".into()));
        assert_eq!(
            yaml("5", true, Some("float")).unwrap(),
            ParamValue::Float(5.0)
        );
        assert!(yaml("x", true, Some("int")).is_err());
        assert!(yaml("x", true, Some("binary")).unwrap_err().contains("tag"));
    }

    #[test]
    fn names_tell_every_value_apart() {
        let values = [
            plain("5"),
            yaml("5", false, None).unwrap(),
            plain("5.0"),
            plain("true"),
            yaml("True", false, None).unwrap(),
            plain("null"),
            yaml("None", false, None).unwrap(),
            plain(".nan"),
            yaml("nan", false, None).unwrap(),
            plain(".inf"),
            plain("-.inf"),
            plain("0.0"),
            plain("-0.0"),
            plain("c"),
            yaml("a,b", false, None).unwrap(),
            yaml("it's", false, None).unwrap(),
            yaml("tab\there", false, None).unwrap(),
        ];
        let names: Vec<String> = values.iter().map(ParamValue::name).collect();
        assert_eq!(
            names,
            [
                "5",
                "'5'",
                "5.0",
                "True",
                "'True'",
                "None",
                "'None'",
                "nan",
                "'nan'",
                "inf",
                "-inf",
                "0.0",
                "-0.0",
                "c",
                "'a,b'",
                "\"it's\"",
                "'tab\\there'"
            ]
        );
        let unique: std::collections::HashSet<String> =
            names.iter().map(|n| n.to_lowercase()).collect();
        assert_eq!(
            unique.len(),
            names.len(),
            "even case-insensitively (as -k matches)"
        );
    }

    #[test]
    fn floats_are_named_as_python_repr_writes_them() {
        for (f, repr) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123.456, "123.456"),
            (-2.5e300, "-2.5e+300"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        ] {
            assert_eq!(python_float_repr(f), repr, "{f}");
        }
    }

    #[test]
    fn json_keeps_what_json_cannot_write() {
        let json = |v: ParamValue| serde_json::to_string(&v).unwrap();
        assert_eq!(json(ParamValue::Float(f64::NAN)), r#"{"float":"nan"}"#);
        assert_eq!(
            json(ParamValue::Float(f64::NEG_INFINITY)),
            r#"{"float":"-inf"}"#
        );
        assert_eq!(json(ParamValue::Float(-0.0)), "-0.0");
        assert_eq!(json(plain("-9223372036854775808")), "-9223372036854775808");
        assert_eq!(
            json(plain("9223372036854775808")),
            r#"{"int":"9223372036854775808"}"#
        );
        assert_eq!(
            json(plain("18446744073709551616")),
            r#"{"int":"18446744073709551616"}"#
        );
    }

    #[test]
    fn big_integers_reach_python_exactly() {
        let mut m = IndexMap::new();
        m.insert("n".to_string(), plain("-1267650600228229401496703205376"));
        m.insert("z".to_string(), plain("-0.0"));
        assert_eq!(
            Params(m).python_literal(),
            r#"{u"n": -1267650600228229401496703205376, u"z": -0.0}"#
        );
    }
}
