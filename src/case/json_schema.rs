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
        json_schema!({ "type": "string", "enum": ["cpython", "pypy"] })
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

/// What the loader says of a whole case that a derive cannot: `code`, or `dump` and `load`;
/// round-trip selectors only in round trips; a one-line title.
pub fn case_constraints(schema: &mut Schema) {
    let round_trip_only = [
        "dump_python",
        "load_python",
        "dump_implementation",
        "load_implementation",
        "dump_features",
        "load_features",
        "phase",
    ]
    .map(|k| json_schema!({ "required": [k] }));
    schema.insert(
        "oneOf".into(),
        serde_json::json!([{ "required": ["code"] }, { "required": ["dump", "load"] }]),
    );
    schema.insert(
        "dependentRequired".into(),
        serde_json::json!({ "dump": ["load"], "load": ["dump"] }),
    );
    schema.insert("if".into(), serde_json::json!({ "required": ["code"] }));
    schema.insert(
        "then".into(),
        serde_json::json!({
            "properties": {
                "expect": { "items": { "not": { "anyOf": round_trip_only } } }
            }
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
/// with `crash`.
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
                    "not": any_of(&["exception", "instance_of", "match", "signal"])
                }
            },
            {
                "if": when(&["pass", "timeout"]),
                "then": { "not": any_of(&["exception", "instance_of", "match"]) }
            },
            {
                "if": { "required": ["signal"] },
                "then": when(&["crash"])
            }
        ]),
    );
}

#[cfg(test)]
mod tests {
    use super::super::schema::case_schema;

    #[test]
    fn the_schema_names_every_key_of_the_loader() {
        let schema = case_schema();
        let props = schema["properties"].as_object().unwrap();
        for key in [
            "id",
            "title",
            "python",
            "implementation",
            "implementation_version",
            "features",
            "params",
            "code",
            "dump",
            "load",
            "expect",
        ] {
            assert!(props.contains_key(key), "{key}");
        }
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], serde_json::json!(["title"]));
        let rule = &schema["$defs"]["RawRule"];
        assert_eq!(rule["additionalProperties"], false);
        for key in [
            "where",
            "instance_of",
            "dump_features",
            "load_implementation",
        ] {
            assert!(rule["properties"].get(key).is_some(), "{key}");
        }
        let outcomes = schema["$defs"]["OutcomeKind"].to_string();
        assert!(outcomes.contains("skip"), "{outcomes}");
    }
}
