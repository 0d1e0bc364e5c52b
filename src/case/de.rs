//! serde's `Deserializer` over the positioned YAML tree (`yaml.rs`), so the case's raw types
//! (`schema.rs`) are read from the tree already built, not from the text a second time. It
//! types scalars as serde_norway does (YAML 1.2's core schema, `!!tag`s, `!name` for an enum
//! variant) and words its errors the same way: the path of the value (`expect[0].python: `),
//! the message, and the line and column of the innermost node the error is about.

use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Expected, IntoDeserializer, Visitor};
use serde::de::{Unexpected, Unexpected as U};

use super::yaml::{Kind, Node, Pos, Scalar};

const NULL: &str = "tag:yaml.org,2002:null";
const BOOL: &str = "tag:yaml.org,2002:bool";
const INT: &str = "tag:yaml.org,2002:int";
const FLOAT: &str = "tag:yaml.org,2002:float";

/// Read a `T` from `node`.
pub(super) fn from_node<T: DeserializeOwned>(node: &Node) -> Result<T, DeError> {
    T::deserialize(De {
        node,
        path: Path::Root,
        in_enum: None,
    })
}

/// A value the tree cannot give the type: the message (with its path) and where.
#[derive(Debug)]
pub(super) struct DeError {
    pub at: Option<Pos>,
    pub message: String,
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            at: None,
            message: msg.to_string(),
        }
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(unknown("field", field, expected))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(unknown("variant", variant, expected))
    }
}

/// An unknown key or value: the nearest known one when one is near (`did you mean`), else
/// every known one.
fn unknown(what: &str, given: &str, known: &[&str]) -> String {
    match nearest(given, known) {
        Some(near) => format!("unknown {what} `{given}`: did you mean `{near}`?"),
        // serde's own words.
        None => match known {
            [] => format!("unknown {what} `{given}`, there are no {what}s"),
            [one] => format!("unknown {what} `{given}`, expected `{one}`"),
            [a, b] => format!("unknown {what} `{given}`, expected `{a}` or `{b}`"),
            _ => {
                let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                format!(
                    "unknown {what} `{given}`, expected one of {}",
                    list.join(", ")
                )
            }
        },
    }
}

/// The known name nearest to `given`, when it is near enough to be a typo of it.
fn nearest<'k>(given: &str, known: &[&'k str]) -> Option<&'k str> {
    let given = given.to_lowercase();
    known
        .iter()
        .map(|k| {
            let distance = strsim::damerau_levenshtein(&given, &k.to_lowercase());
            let similar = strsim::jaro_winkler(&given, &k.to_lowercase());
            (k, distance, similar)
        })
        // A typo: a letter or two off (a third of the name at most), or the same name with
        // its words run together or cut short.
        .filter(|(k, distance, similar)| {
            *distance <= 2.max(k.len() / 3) && *distance < k.len() || *similar >= 0.9
        })
        .min_by(|a, b| a.1.cmp(&b.1).then(b.2.total_cmp(&a.2)))
        .map(|(k, ..)| *k)
}

/// The first node an error passes through names its place: its position and path.
fn fix(mut err: DeError, node: &Node, path: Path) -> DeError {
    if err.at.is_none() {
        err.at = Some(node.origin);
        let path = path.to_string();
        if path != "." {
            err.message = format!("{path}: {}", err.message);
        }
    }
    err
}

/// Where a value stands in the document: `expect[0].python`.
#[derive(Clone, Copy)]
enum Path<'p> {
    Root,
    Seq { parent: &'p Path<'p>, index: usize },
    Map { parent: &'p Path<'p>, key: &'p str },
    Unknown { parent: &'p Path<'p> },
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parent = |f: &mut fmt::Formatter<'_>, p: &Path| match p {
            Path::Root => Ok(()),
            p => write!(f, "{p}."),
        };
        match self {
            Path::Root => f.write_str("."),
            Path::Seq { parent, index } => write!(f, "{parent}[{index}]"),
            Path::Map { parent: p, key } => {
                parent(f, p)?;
                f.write_str(key)
            }
            Path::Unknown { parent: p } => {
                parent(f, p)?;
                f.write_str("?")
            }
        }
    }
}

/// One node being read. `in_enum`: the enum and variant tag it is the content of (`!name`).
#[derive(Clone, Copy)]
struct De<'a, 'p> {
    node: &'a Node,
    path: Path<'p>,
    in_enum: Option<(Option<&'static str>, &'a str)>,
}

/// A `!name` tag as an enum variant's name (`!` alone is the variant `!`).
fn enum_tag(tag: Option<&str>) -> Option<&str> {
    let rest = tag?.strip_prefix('!')?;
    Some(if rest.is_empty() { "!" } else { rest })
}

fn parse_null(s: &str) -> bool {
    matches!(s, "null" | "Null" | "NULL" | "~")
}

fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Leading zeros then digits: a string in YAML 1.2 (`007`).
fn zero_padded(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

/// `0x`, `0o`, `0b` digits (after an optional sign), each radix tried in turn.
fn radix_int<T>(
    s: &str,
    negative: bool,
    parse: fn(&str, u32) -> Result<T, std::num::ParseIntError>,
) -> Option<T> {
    let (sign, rest) = match s.strip_prefix('-') {
        Some(rest) if negative => ("-", rest),
        _ => ("", s.strip_prefix('+').unwrap_or(s)),
    };
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = rest.strip_prefix(prefix) {
            if digits.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(n) = parse(&format!("{sign}{digits}"), radix) {
                return Some(n);
            }
        }
    }
    None
}

fn unsigned<T>(s: &str, parse: fn(&str, u32) -> Result<T, std::num::ParseIntError>) -> Option<T> {
    if let Some(n) = radix_int(s, false, parse) {
        return Some(n);
    }
    let rest = s.strip_prefix('+').unwrap_or(s);
    if rest.starts_with(['+', '-']) || zero_padded(s) {
        return None;
    }
    parse(rest, 10).ok()
}

fn negative<T>(s: &str, parse: fn(&str, u32) -> Result<T, std::num::ParseIntError>) -> Option<T> {
    if s.starts_with("-0x") || s.starts_with("-0o") || s.starts_with("-0b") {
        if let Some(n) = radix_int(s, true, parse) {
            return Some(n);
        }
    }
    if zero_padded(s) {
        return None;
    }
    parse(s, 10).ok()
}

fn signed<T>(s: &str, parse: fn(&str, u32) -> Result<T, std::num::ParseIntError>) -> Option<T> {
    if s.strip_prefix('+')
        .is_some_and(|r| r.starts_with(['+', '-']))
    {
        return None;
    }
    if let Some(n) = radix_int(s, false, parse).or_else(|| {
        s.starts_with('-')
            .then(|| radix_int(s, true, parse))
            .flatten()
    }) {
        return Some(n);
    }
    if zero_padded(s) {
        return None;
    }
    parse(s.strip_prefix('+').unwrap_or(s), 10).ok()
}

fn parse_f64(s: &str) -> Option<f64> {
    let rest = match s.strip_prefix('+') {
        Some(r) if r.starts_with(['+', '-']) => return None,
        Some(r) => r,
        None => s,
    };
    if matches!(rest, ".inf" | ".Inf" | ".INF") {
        return Some(f64::INFINITY);
    }
    if matches!(s, "-.inf" | "-.Inf" | "-.INF") {
        return Some(f64::NEG_INFINITY);
    }
    if matches!(s, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN);
    }
    rest.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// An integer to the visitor, in the narrowest of u64, i64, u128, i128 that holds it.
fn visit_int<'de, V: Visitor<'de>>(visitor: V, s: &str) -> Result<Result<V::Value, DeError>, V> {
    if let Some(n) = unsigned(s, u64::from_str_radix) {
        return Ok(visitor.visit_u64(n));
    }
    if let Some(n) = negative(s, i64::from_str_radix) {
        return Ok(visitor.visit_i64(n));
    }
    if let Some(n) = unsigned(s, u128::from_str_radix) {
        return Ok(visitor.visit_u128(n));
    }
    if let Some(n) = negative(s, i128::from_str_radix) {
        return Ok(visitor.visit_i128(n));
    }
    Err(visitor)
}

/// A plain scalar typed by its text: null, bool, int, float, else a string.
fn visit_plain<'de, V: Visitor<'de>>(visitor: V, s: &str) -> Result<V::Value, DeError> {
    if s.is_empty() || parse_null(s) {
        return visitor.visit_unit();
    }
    if let Some(b) = parse_bool(s) {
        return visitor.visit_bool(b);
    }
    let visitor = match visit_int(visitor, s) {
        Ok(result) => return result,
        Err(visitor) => visitor,
    };
    if !zero_padded(s) {
        if let Some(f) = parse_f64(s) {
            return visitor.visit_f64(f);
        }
    }
    visitor.visit_str(s)
}

/// A scalar typed by its tag, or by its text when plain and untagged.
fn visit_scalar<'de, V: Visitor<'de>>(
    visitor: V,
    scalar: &Scalar,
    tagged: bool,
) -> Result<V::Value, DeError> {
    let s = scalar.text.as_str();
    match scalar.tag.as_deref().filter(|_| !tagged) {
        Some(BOOL) => match parse_bool(s) {
            Some(b) => visitor.visit_bool(b),
            None => Err(de::Error::invalid_value(U::Str(s), &"a boolean")),
        },
        Some(INT) => match visit_int(visitor, s) {
            Ok(result) => result,
            Err(_) => Err(de::Error::invalid_value(U::Str(s), &"an integer")),
        },
        Some(FLOAT) => match parse_f64(s) {
            Some(f) => visitor.visit_f64(f),
            None => Err(de::Error::invalid_value(U::Str(s), &"a float")),
        },
        Some(NULL) => match parse_null(s) {
            true => visitor.visit_unit(),
            false => Err(de::Error::invalid_value(U::Str(s), &"null")),
        },
        Some(tag) if tag.starts_with('!') && scalar.plain => visit_plain(visitor, s),
        None if scalar.plain => visit_plain(visitor, s),
        _ => visitor.visit_str(s),
    }
}

/// serde's "invalid type" error for `node`, typed as `visit_scalar` would.
fn invalid_type(node: &Node, exp: &dyn Expected) -> DeError {
    enum Void {}
    struct Invalid<'e>(&'e dyn Expected);
    impl<'de> Visitor<'de> for Invalid<'_> {
        type Value = Void;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            self.0.fmt(f)
        }
    }
    match &node.kind {
        Kind::Scalar(s) => match visit_scalar(Invalid(exp), s, false) {
            Ok(void) => match void {},
            Err(e) => e,
        },
        Kind::Seq(_) => de::Error::invalid_type(Unexpected::Seq, exp),
        Kind::Map(_) => de::Error::invalid_type(Unexpected::Map, exp),
    }
}

impl<'a, 'p> De<'a, 'p> {
    fn tagged(&self) -> bool {
        self.in_enum.is_some()
    }

    /// A plain scalar, or a literal block tagged `tag` (`!!int |`), when not an enum's content.
    fn typed_text(&self, tag: &str) -> Option<&'a str> {
        let Kind::Scalar(s) = &self.node.kind else {
            return None;
        };
        let literal_tagged = s.literal && !self.tagged() && s.tag.as_deref() == Some(tag);
        (s.plain || literal_tagged).then_some(s.text.as_str())
    }

    fn fixed<T>(self, result: Result<T, DeError>) -> Result<T, DeError> {
        result.map_err(|e| fix(e, self.node, self.path))
    }

    /// A number (or bool) typed by `parse`, else serde's invalid-type error.
    fn number<'de, V: Visitor<'de>, T>(
        self,
        visitor: V,
        tag: &str,
        parse: impl Fn(&str) -> Option<T>,
        visit: impl FnOnce(V, T) -> Result<V::Value, DeError>,
    ) -> Result<V::Value, DeError> {
        let result = match self.typed_text(tag).and_then(parse) {
            Some(n) => visit(visitor, n),
            None => Err(invalid_type(self.node, &visitor)),
        };
        self.fixed(result)
    }

    fn enum_access<'de, V: Visitor<'de>>(
        self,
        visitor: V,
        name: Option<&'static str>,
        tag: &'a str,
    ) -> Result<V::Value, DeError> {
        visitor.visit_enum(Tagged {
            de: self,
            name,
            tag,
        })
    }

    /// The items of a sequence (an empty plain scalar is an empty one), with the length check
    /// of what the visitor left unread.
    fn seq<'de, V: Visitor<'de>>(self, visitor: V, items: &'a [Node]) -> Result<V::Value, DeError> {
        let mut access = SeqAccess {
            items,
            next: 0,
            path: self.path,
        };
        let value = visitor.visit_seq(&mut access)?;
        if access.next < items.len() {
            struct Len(usize);
            impl Expected for Len {
                fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    match self.0 {
                        1 => write!(f, "sequence of 1 element"),
                        n => write!(f, "sequence of {n} elements"),
                    }
                }
            }
            return Err(de::Error::invalid_length(items.len(), &Len(access.next)));
        }
        Ok(value)
    }

    fn map<'de, V: Visitor<'de>>(
        self,
        visitor: V,
        entries: &'a [(Node, Node)],
    ) -> Result<V::Value, DeError> {
        let mut access = MapAccess {
            entries,
            next: 0,
            path: self.path,
        };
        let value = visitor.visit_map(&mut access)?;
        if access.next < entries.len() {
            struct Len(usize);
            impl Expected for Len {
                fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    match self.0 {
                        1 => write!(f, "map containing 1 entry"),
                        n => write!(f, "map containing {n} entries"),
                    }
                }
            }
            return Err(de::Error::invalid_length(entries.len(), &Len(access.next)));
        }
        Ok(value)
    }

    /// An empty plain scalar, read as an empty collection.
    fn is_empty_plain(&self) -> bool {
        matches!(&self.node.kind, Kind::Scalar(s) if s.plain && s.text.is_empty())
    }
}

macro_rules! numbers {
    ($($method:ident => $via:ident,)*) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            self.$via(visitor)
        })*
    };
}

impl<'de, 'a, 'p> de::Deserializer<'de> for De<'a, 'p> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let tag = match self.tagged() {
            true => None,
            false => enum_tag(match &self.node.kind {
                Kind::Scalar(s) => s.tag.as_deref(),
                _ => self.node.tag.as_deref(),
            }),
        };
        let result = match (&self.node.kind, tag) {
            (_, Some(tag)) => self.enum_access(visitor, None, tag),
            (Kind::Scalar(s), None) => visit_scalar(visitor, s, self.tagged()),
            (Kind::Seq(items), None) => self.seq(visitor, items),
            (Kind::Map(entries), None) => self.map(visitor, entries),
        };
        self.fixed(result)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.number(visitor, BOOL, parse_bool, |v, b| v.visit_bool(b))
    }

    numbers! {
        deserialize_i8 => deserialize_i64,
        deserialize_i16 => deserialize_i64,
        deserialize_i32 => deserialize_i64,
        deserialize_u8 => deserialize_u64,
        deserialize_u16 => deserialize_u64,
        deserialize_u32 => deserialize_u64,
        deserialize_f32 => deserialize_f64,
        deserialize_char => deserialize_str,
        deserialize_string => deserialize_str,
        deserialize_identifier => deserialize_str,
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.number(
            visitor,
            INT,
            |s| signed(s, i64::from_str_radix),
            |v, n| v.visit_i64(n),
        )
    }

    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.number(
            visitor,
            INT,
            |s| signed(s, i128::from_str_radix),
            |v, n| v.visit_i128(n),
        )
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.number(
            visitor,
            INT,
            |s| unsigned(s, u64::from_str_radix),
            |v, n| v.visit_u64(n),
        )
    }

    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.number(
            visitor,
            INT,
            |s| unsigned(s, u128::from_str_radix),
            |v, n| v.visit_u128(n),
        )
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.number(visitor, FLOAT, parse_f64, |v, f| v.visit_f64(f))
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let result = match &self.node.kind {
            Kind::Scalar(s) => visitor.visit_str(&s.text),
            _ => Err(invalid_type(self.node, &visitor)),
        };
        self.fixed(result)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, DeError> {
        Err(de::Error::custom(
            "serialization and deserialization of bytes in YAML is not implemented",
        ))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    /// `null`, `~` and nothing are `None`; anything else is `Some`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let is_some = match &self.node.kind {
            Kind::Scalar(s) if !s.plain => true,
            Kind::Scalar(s) => match s.tag.as_deref().filter(|_| !self.tagged()) {
                Some(NULL) if parse_null(&s.text) => false,
                Some(NULL) => return Err(de::Error::invalid_value(U::Str(&s.text), &"null")),
                Some(_) => true,
                None => !s.text.is_empty() && !parse_null(&s.text),
            },
            _ => true,
        };
        if is_some {
            visitor.visit_some(self)
        } else {
            visitor.visit_none()
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let result = match &self.node.kind {
            Kind::Scalar(s) => {
                let is_null = match s.tag.as_deref().filter(|_| !self.tagged()) {
                    _ if !s.plain => false,
                    Some(tag) => tag == NULL && parse_null(&s.text),
                    None => s.text.is_empty() || parse_null(&s.text),
                };
                if is_null {
                    visitor.visit_unit()
                } else {
                    Err(de::Error::invalid_value(U::Str(&s.text), &"null"))
                }
            }
            _ => Err(invalid_type(self.node, &visitor)),
        };
        self.fixed(result)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let result = match &self.node.kind {
            Kind::Seq(items) => self.seq(visitor, items),
            _ if self.is_empty_plain() => self.seq(visitor, &[]),
            _ => Err(invalid_type(self.node, &visitor)),
        };
        self.fixed(result)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let result = match &self.node.kind {
            Kind::Map(entries) => self.map(visitor, entries),
            _ if self.is_empty_plain() => self.map(visitor, &[]),
            _ => Err(invalid_type(self.node, &visitor)),
        };
        self.fixed(result)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_map(visitor)
    }

    /// A scalar names a unit variant; `!variant value` any variant.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let result = if let Some((enum_name, tag)) = self.in_enum {
            match &self.node.kind {
                Kind::Scalar(s) if !s.text.is_empty() => visitor.visit_enum(Unit(self)),
                _ => Err(de::Error::custom(match enum_name {
                    Some(name) => format!(
                        "deserializing nested enum in {name}::{tag} from YAML is not supported yet"
                    ),
                    None => format!(
                        "deserializing nested enum in !{tag} from YAML is not supported yet"
                    ),
                })),
            }
        } else {
            let tag = match &self.node.kind {
                Kind::Scalar(s) => s.tag.as_deref(),
                _ => self.node.tag.as_deref(),
            };
            match (enum_tag(tag), &self.node.kind) {
                (Some(tag), _) => return self.enum_access(visitor, Some(name), tag),
                (None, Kind::Scalar(_)) => visitor.visit_enum(Unit(self)),
                (None, Kind::Seq(_)) => Err(de::Error::invalid_type(
                    U::Seq,
                    &"a YAML tag starting with '!'",
                )),
                (None, Kind::Map(_)) => Err(de::Error::invalid_type(
                    U::Map,
                    &"a YAML tag starting with '!'",
                )),
            }
        };
        self.fixed(result)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

struct SeqAccess<'a, 'p> {
    items: &'a [Node],
    next: usize,
    path: Path<'p>,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'_, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(node) = self.items.get(self.next) else {
            return Ok(None);
        };
        let index = self.next;
        self.next += 1;
        let de = De {
            node,
            path: Path::Seq {
                parent: &self.path,
                index,
            },
            in_enum: None,
        };
        seed.deserialize(de).map(Some)
    }
}

struct MapAccess<'a, 'p> {
    entries: &'a [(Node, Node)],
    next: usize,
    path: Path<'p>,
}

impl<'de> de::MapAccess<'de> for MapAccess<'_, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some((key, _)) = self.entries.get(self.next) else {
            return Ok(None);
        };
        let de = De {
            node: key,
            path: self.path,
            in_enum: None,
        };
        seed.deserialize(de).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let (key, value) = &self.entries[self.next];
        self.next += 1;
        let path = match key.scalar() {
            Some(s) => Path::Map {
                parent: &self.path,
                key: &s.text,
            },
            None => Path::Unknown { parent: &self.path },
        };
        seed.deserialize(De {
            node: value,
            path,
            in_enum: None,
        })
    }
}

/// An enum variant named by a `!tag`; the node is its content.
struct Tagged<'a, 'p> {
    de: De<'a, 'p>,
    name: Option<&'static str>,
    tag: &'a str,
}

impl<'de, 'a, 'p> de::EnumAccess<'de> for Tagged<'a, 'p> {
    type Error = DeError;
    type Variant = De<'a, 'p>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, De<'a, 'p>), DeError> {
        let variant = seed.deserialize(self.tag.into_deserializer())?;
        let content = De {
            in_enum: Some((self.name, self.tag)),
            ..self.de
        };
        Ok((variant, content))
    }
}

impl<'de> de::VariantAccess<'de> for De<'_, '_> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        <() as de::Deserialize>::deserialize(self)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_map(self, visitor)
    }
}

/// A unit variant named by a scalar.
struct Unit<'a, 'p>(De<'a, 'p>);

impl<'de, 'a, 'p> de::EnumAccess<'de> for Unit<'a, 'p> {
    type Error = DeError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), DeError> {
        Ok((seed.deserialize(self.0)?, self))
    }
}

impl<'de> de::VariantAccess<'de> for Unit<'_, '_> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value, DeError> {
        Err(de::Error::invalid_type(U::UnitVariant, &"newtype variant"))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, DeError> {
        Err(de::Error::invalid_type(U::UnitVariant, &"tuple variant"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, DeError> {
        Err(de::Error::invalid_type(U::UnitVariant, &"struct variant"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::schema::RawCase;
    use super::super::yaml;
    use super::*;

    /// What serde_norway makes of `text`: the case, or the error's message and position.
    fn by_serde_norway(text: &str) -> Result<String, (Pos, String)> {
        match serde_norway::from_str::<RawCase>(text) {
            Ok(raw) => Ok(format!("{raw:?}")),
            Err(e) => {
                let at = e
                    .location()
                    .map(|l| yaml::position(text.as_bytes(), l.index()));
                let mut message = e.to_string();
                if let Some(cut) = message.rfind(" at line ") {
                    message.truncate(cut);
                }
                Err((at.unwrap_or((0, 0)), suggesting(&message)))
            }
        }
    }

    /// serde's "unknown field `x`, expected one of `a`, `b`" worded as the tree words it (the
    /// nearest name suggested when one is near).
    fn suggesting(message: &str) -> String {
        for what in ["field", "variant"] {
            let head = format!("unknown {what} `");
            let Some(start) = message.find(&head) else {
                continue;
            };
            let rest = &message[start + head.len()..];
            let Some(end) = rest.find('`') else { continue };
            let given = &rest[..end];
            let tail = &rest[end + 1..];
            let known: Vec<&str> = if let Some(list) = tail.strip_prefix(", expected one of ") {
                list.split(", ").map(|k| k.trim_matches('`')).collect()
            } else if let Some(some) = tail.strip_prefix(", expected ") {
                some.split(" or ").map(|k| k.trim_matches('`')).collect()
            } else if tail.starts_with(", there are no ") {
                vec![]
            } else {
                continue;
            };
            return format!("{}{}", &message[..start], unknown(what, given, &known));
        }
        message.to_string()
    }

    #[test]
    fn an_unknown_name_suggests_the_nearest() {
        let keys = [
            "title",
            "code",
            "expect",
            "exception",
            "c_pickle",
            "outcome",
        ];
        for (given, near) in [
            ("expet", "expect"),
            ("excepton", "exception"),
            ("cpickle", "c_pickle"),
            ("Title", "title"),
            ("outcom", "outcome"),
        ] {
            assert_eq!(
                unknown("field", given, &keys),
                format!("unknown field `{given}`: did you mean `{near}`?")
            );
        }
        let far = unknown("field", "bogus", &keys);
        assert!(far.contains("expected one of `title`, `code`"), "{far}");
        assert_eq!(nearest("zz", &["id"]), None);
    }

    /// What the tree makes of it (`None` when the tree refuses the text itself).
    fn by_tree(text: &str) -> Option<Result<String, (Pos, String)>> {
        let root = yaml::parse(text).ok()??;
        if !matches!(root.kind, Kind::Map(_)) {
            return None;
        }
        Some(match from_node::<RawCase>(&root) {
            Ok(raw) => Ok(format!("{raw:?}")),
            Err(e) => Err((e.at.unwrap_or((0, 0)), e.message)),
        })
    }

    const ODD: &[&str] = &[
        "[]",
        "{}",
        "3.10",
        "yes",
        "~",
        "!foo x",
        "!!int x",
        "[1, 2]",
        "{not: [1]}",
        "-1",
        "0x1F",
        "''",
        "!!str 5",
        "1e400",
        "!!bool |\n  true",
        "[a, [b]]",
        "{a: 1}",
        "null",
        "007",
        ".inf",
        "!!null x",
        "!exec",
        "!exec ~",
        "[pass, pass]",
        "[skip, fail]",
        "[pass]",
        "99999999999",
        "1.5",
        "[[a, b, c]]",
        "{x: y}",
        "!!float 3",
        "-0x10",
        "+5",
        "TRUE",
        "!pass",
        "&a [x]",
        "!!int |\n  7",
        "[!fail x, error]",
        "'3.8'",
        "[cpython, pypy, x]",
        "{c_pickle: yes}",
        "[implementation, bogus]",
        "[['<3', '>=3'], ['3.8']]",
        "\"\"",
    ];

    /// Every corpus file, and each with one value replaced by an odd one: the tree gives the
    /// same case, or the same error at the same place, as serde_norway reading the text.
    #[test]
    fn reads_as_serde_norway_reads_the_text() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts = Vec::new();
        for dir in ["cases", "tests/fixtures/bad-cases"] {
            let mut stack = vec![root.join(dir)];
            while let Some(d) = stack.pop() {
                for entry in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = entry.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|x| x == "yaml") {
                        texts.push(std::fs::read_to_string(&p).unwrap());
                    }
                }
            }
        }
        assert!(texts.len() > 80);
        let (mut compared, mut errors) = (0, 0);
        for (n, text) in texts.iter().enumerate() {
            let lines: Vec<&str> = text.lines().collect();
            let mut variants = vec![text.clone()];
            for (i, line) in lines.iter().enumerate() {
                let Some(colon) = line
                    .find(": ")
                    .or_else(|| line.ends_with(':').then(|| line.len() - 1))
                else {
                    continue;
                };
                for k in 0..2 {
                    let odd = ODD[(n * 7 + i * 3 + k * 11) % ODD.len()];
                    let mut new = lines.clone();
                    let replaced = format!("{}: {odd}", &line[..colon]);
                    new[i] = &replaced;
                    variants.push(new.join("\n"));
                }
            }
            for v in &variants {
                if let Some(tree) = by_tree(v) {
                    assert_eq!(tree, by_serde_norway(v), "{v}");
                    compared += 1;
                    errors += usize::from(tree.is_err());
                }
            }
        }
        assert!(compared > 2000 && errors > 500, "{compared} {errors}");
    }

    /// Aliases (errors point at the anchored content, as serde_norway's do), tags on
    /// collections and scalars, enums named by a tag, tuples too long.
    #[test]
    fn aliases_tags_and_lengths_read_as_serde_norway_reads_them() {
        for text in [
            "title: &t [x]\ncode: pass\ndescription: *t\n",
            "title: &t t\ncode: *t\ntimeout: *t\n",
            "title: t\ncode: pass\nexpect:\n  - &r {outcome: pass, python: 3.10}\n  - *r\n",
            "title: t\ncode: pass\nisolation: !exec\n",
            "title: t\ncode: pass\nisolation: !exec x\n",
            "title: t\ncode: pass\nisolation: !bogus\n",
            "title: t\ncode: pass\ntags: !foo [a]\n",
            "title: t\ncode: pass\npython: !foo [a]\n",
            "title: t\ncode: pass\nexpect: [!x {outcome: pass}]\n",
            "title: t\ncode: pass\nexpect:\n  - outcome: !fail\n",
            "title: t\ndump: d\nload: l\nexpect:\n  - pairs: [['<3', '>=3', '3.8']]\n    outcome: error\n",
            "title: !!str t\ncode: !!str pass\nrepeat: !!int |\n  7\n",
            "title: t\ncode: pass\nrepeat: !!null ~\ntimeout: !!null x\n",
            "title: t\ncode: pass\n? [a]\n: b\n",
        ] {
            let tree = by_tree(text).expect(text);
            assert_eq!(tree, by_serde_norway(text), "{text}");
        }
    }
}
