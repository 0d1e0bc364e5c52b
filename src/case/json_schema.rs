//! The JSON Schema of the case format, derived from the very types the loader reads
//! (`schema.rs`, `selectors.rs`), so that the two cannot drift: the schemas of the value types
//! with their own deserializers, and the constraints between keys that a derive cannot say
//! (`code` or `dump` and `load`; `reason` with `outcome: skip`; what goes with which outcome).
//! It describes the structure; what needs the whole case (a `where` naming a param that does not
//! exist, an invalid regular expression) is left to the loader.

use std::borrow::Cow;
use std::marker::PhantomData;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::params::ParamValue;
use super::selectors::{VersionRequests, WhereValue};
use crate::python::Implementation;

/// A list with at least one item (params' values), for the schema only.
pub struct NonEmpty<T>(PhantomData<T>);

impl<T: JsonSchema> JsonSchema for NonEmpty<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("NonEmptyListOf{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "items": generator.subschema_for::<T>(),
            "minItems": 1
        })
    }
}

impl JsonSchema for ParamValue {
    fn schema_name() -> Cow<'static, str> {
        "ParamValue".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A scalar: string, number, boolean or null.",
            "type": ["string", "number", "boolean", "null"]
        })
    }
}

impl JsonSchema for Implementation {
    fn schema_name() -> Cow<'static, str> {
        "Implementation".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // The loader takes the names in any case (`PyPy`); editors offer the enum.
        json_schema!({
            "anyOf": [
                { "type": "string", "enum": ["cpython", "pypy"] },
                { "type": "string", "pattern": "^([cC][pP][yY][tT][hH][oO][nN]|[pP][yY][pP][yY])$" }
            ]
        })
    }
}

/// `implementation: pypy` or `[cpython, pypy]`, for the schema only (the loader reads it with
/// `selectors::implementations`).
pub struct Implementations;

impl JsonSchema for Implementations {
    fn schema_name() -> Cow<'static, str> {
        "Implementations".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let one = generator.subschema_for::<Implementation>();
        json_schema!({
            "description": "`cpython`, `pypy`, or a list of them.",
            "anyOf": [one.clone(), { "type": "array", "items": one, "minItems": 1 }]
        })
    }
}

/// `platform: win32` or `[linux, darwin]`, for the schema only (the loader reads it with
/// `selectors::platforms`).
pub struct Platforms;

impl JsonSchema for Platforms {
    fn schema_name() -> Cow<'static, str> {
        "Platforms".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let one = json_schema!({ "type": "string", "enum": ["linux", "darwin", "win32"] });
        json_schema!({
            "description": "`linux`, `darwin`, `win32` (as `sys.platform` names them), or a list of them.",
            "anyOf": [one.clone(), { "type": "array", "items": one, "minItems": 1 }]
        })
    }
}

impl JsonSchema for VersionRequests {
    fn schema_name() -> Cow<'static, str> {
        "VersionRequests".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let one = json_schema!({
            "description": "A PEP 440 specifier set (\">=3.8,<3.8.2\") or a bare version naming a series (\"3.8\") or a release (\"3.8.1\"), in quotes.",
            "type": "string",
            "minLength": 1
        });
        json_schema!({
            "description": "A version request, or a list of them meaning any of them.",
            "anyOf": [
                one.clone(),
                { "type": "array", "items": one, "minItems": 1 }
            ]
        })
    }
}

impl JsonSchema for WhereValue {
    fn schema_name() -> Cow<'static, str> {
        "WhereValue".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let scalar = generator.subschema_for::<ParamValue>();
        let values = json_schema!({
            "anyOf": [scalar.clone(), { "type": "array", "items": scalar }]
        });
        json_schema!({
            "description": "A param's value, a list of them, or {not: VALUE} / {not: [VALUES]}.",
            "anyOf": [
                values.clone(),
                {
                    "type": "object",
                    "properties": { "not": values },
                    "required": ["not"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// The finishing touches of the generated schema: a key is there with a value or not there at
/// all (the derive would also allow `null` for every optional key, which no case means to
/// write, and which would let `code: null` count as `code`); descriptions read as one
/// paragraph each, not as the doc comments' lines.
pub fn tidy(schema: &mut serde_json::Value) {
    use serde_json::Value;
    fn no_null(property: &mut Value) {
        let Some(map) = property.as_object_mut() else {
            return;
        };
        if let Some(Value::Array(types)) = map.get_mut("type") {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let only = types[0].clone();
                map.insert("type".into(), only);
            }
        }
        if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
            branches.retain(|b| b.get("type") != Some(&Value::from("null")));
            if branches.len() == 1 {
                let only = branches.remove(0);
                map.remove("anyOf");
                if let Value::Object(inner) = only {
                    map.extend(inner);
                }
            }
        }
    }
    fn unwrap_descriptions(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(d)) = map.get_mut("description") {
                    *d = d
                        .split("\n\n")
                        .map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
                        .collect::<Vec<_>>()
                        .join("\n\n");
                }
                map.values_mut().for_each(unwrap_descriptions);
            }
            Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
            _ => {}
        }
    }
    let objects = ["", "/$defs/RawRule", "/$defs/Features"];
    for pointer in objects {
        if let Some(Value::Object(props)) = schema.pointer_mut(&format!("{pointer}/properties")) {
            props.values_mut().for_each(no_null);
        }
    }
    unwrap_descriptions(schema);
}

/// What the loader says of a whole case that a derive cannot: `code`, or `dump` and `load`;
/// `relay` and `reload` together, in a round trip; round-trip selectors only in round trips;
/// a one-line title.
pub fn case_constraints(schema: &mut Schema) {
    let round_trip_only = [
        "dump_python",
        "load_python",
        "dump_implementation",
        "load_implementation",
        "dump_features",
        "load_features",
        "older_python",
        "newer_python",
        "either_python",
        "older_implementation",
        "newer_implementation",
        "either_implementation",
        "older_features",
        "newer_features",
        "either_features",
        "phase",
    ]
    .map(|k| json_schema!({ "required": [k] }));
    schema.insert(
        "oneOf".into(),
        serde_json::json!([{ "required": ["code"] }, { "required": ["dump", "load"] }]),
    );
    schema.insert(
        "dependentRequired".into(),
        serde_json::json!({
            "dump": ["load"],
            "load": ["dump"],
            "relay": ["reload", "dump", "load"],
            "reload": ["relay", "dump", "load"]
        }),
    );
    schema.insert("if".into(), serde_json::json!({ "required": ["code"] }));
    schema.insert(
        "then".into(),
        serde_json::json!({
            "properties": {
                "expect": { "items": { "not": { "anyOf": round_trip_only } } }
            },
            "not": { "anyOf": [
                { "required": ["dump_requires"] },
                { "required": ["load_requires"] },
                { "required": ["dump_params"] },
                { "required": ["load_params"] },
                { "required": ["relay"] },
                { "required": ["reload"] }
            ] }
        }),
    );
    if let Some(title) = schema
        .get_mut("properties")
        .and_then(|p| p.get_mut("title"))
        .and_then(|t| t.as_object_mut())
    {
        title.insert(
            "pattern".into(),
            serde_json::json!(r"^\s*[^\n]*\S[^\n]*\s*$"),
        );
    }
}

/// What the loader says of one rule that a derive cannot: `skip` needs a `reason` and takes no
/// exception, message or signal; `pass` and `timeout` raise nothing to match; `signal` goes
/// with `crash`, alone or in a list.
pub fn rule_constraints(schema: &mut Schema) {
    let any_of = |keys: &[&str]| serde_json::json!({ "anyOf": keys.iter().map(|k| serde_json::json!({ "required": [k] })).collect::<Vec<_>>() });
    let when = |outcomes: &[&str]| serde_json::json!({ "properties": { "outcome": { "enum": outcomes } }, "required": ["outcome"] });
    schema.insert(
        "allOf".into(),
        serde_json::json!([
            {
                "if": when(&["skip"]),
                "then": {
                    "required": ["reason"],
                    "properties": { "reason": { "pattern": "\\S" } },
                    "not": any_of(&["exception", "instance_of", "match", "signal"])
                }
            },
            {
                "if": when(&["pass", "timeout"]),
                "then": { "not": any_of(&["exception", "instance_of", "match"]) }
            },
            {
                "if": { "required": ["signal"] },
                "then": {
                    "required": ["outcome"],
                    "properties": { "outcome": { "anyOf": [
                        { "const": "crash" },
                        { "type": "array", "contains": { "const": "crash" } }
                    ] } }
                }
            }
        ]),
    );
}
