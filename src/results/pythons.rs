//! The serialised form of `crosspickle pythons --json`: the interpreters found and the
//! candidates that could not be used.
//!
//! Like [`wire`](super::wire), its types are its own and every key is spelled out here, so that
//! renaming a field of [`Interpreter`] or [`Unusable`] cannot change what scripts read. Keys
//! holding nothing (`implementation_version`, `pickle_*_protocol`, `platform`, `machine`,
//! `name`, `unusable`) are left
//! out; every other key is always there. The test below pins the keys.

use serde::Serialize;

use crate::python::{Implementation, Interpreter, Source, Unusable};

/// `interpreters` and `unusable` as pretty-printed JSON, with a final newline.
pub fn to_json(interpreters: &[Interpreter], unusable: &[Unusable]) -> String {
    let listing = Listing {
        interpreters: interpreters.iter().map(Python::from).collect(),
        unusable: unusable.iter().map(Candidate::from).collect(),
    };
    serde_json::to_string_pretty(&listing).expect("the pythons form serializes") + "\n"
}

#[derive(Serialize)]
struct Listing {
    interpreters: Vec<Python>,
    unusable: Vec<Candidate>,
}

/// One interpreter (or, with `unusable`, the stand-in for one asked for that cannot be used).
#[derive(Serialize)]
struct Python {
    label: String,
    version: String,
    implementation: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    implementation_version: Option<String>,
    executable: String,
    debug: bool,
    free_threaded: bool,
    gil_enabled: bool,
    c_pickle: Option<String>,
    c_pickle_used: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pickle_highest_protocol: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pickle_default_protocol: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    platform: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    sources: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unusable: Option<String>,
}

/// A candidate that could not be used.
#[derive(Serialize)]
struct Candidate {
    path: String,
    sources: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    reason: String,
}

fn implementation(i: Implementation) -> &'static str {
    match i {
        Implementation::Cpython => "cpython",
        Implementation::Pypy => "pypy",
    }
}

fn sources(sources: &[Source]) -> Vec<&'static str> {
    sources.iter().map(Source::as_str).collect()
}

impl From<&Interpreter> for Python {
    fn from(i: &Interpreter) -> Self {
        Python {
            label: i.label.clone(),
            version: i.version.to_string(),
            implementation: implementation(i.implementation),
            implementation_version: i.implementation_version.clone(),
            executable: i.executable.to_string_lossy().into_owned(),
            debug: i.debug,
            free_threaded: i.free_threaded,
            gil_enabled: i.gil_enabled,
            c_pickle: i.c_pickle.clone(),
            c_pickle_used: i.c_pickle_used,
            pickle_highest_protocol: i.pickle_highest_protocol,
            pickle_default_protocol: i.pickle_default_protocol,
            platform: i.platform.clone(),
            machine: i.machine.clone(),
            name: i.name.clone(),
            sources: sources(&i.sources),
            unusable: i.unusable.clone(),
        }
    }
}

impl From<&Unusable> for Candidate {
    fn from(u: &Unusable) -> Self {
        Candidate {
            path: u.path.to_string_lossy().into_owned(),
            sources: sources(&u.sources),
            name: u.name.clone(),
            reason: u.reason.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::PythonVersion;

    fn keys(value: &serde_json::Value) -> Vec<&str> {
        value
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn keys_are_pinned() {
        let full = Interpreter {
            label: "pypy-3.11.13@x".into(),
            version: PythonVersion::parse("3.11.13").unwrap(),
            implementation: Implementation::Pypy,
            implementation_version: Some("7.3.20".into()),
            executable: "/opt/pypy/bin/pypy3".into(),
            debug: true,
            free_threaded: true,
            gil_enabled: false,
            c_pickle: Some("_pickle".into()),
            c_pickle_used: true,
            pickle_highest_protocol: Some(5),
            pickle_default_protocol: Some(5),
            platform: Some("linux".into()),
            machine: Some("x86_64".into()),
            name: Some("x".into()),
            sources: vec![Source::PythonsToml, Source::Path],
            unusable: Some("gone".into()),
        };
        let bare = Interpreter {
            implementation: Implementation::Cpython,
            implementation_version: None,
            c_pickle: None,
            c_pickle_used: false,
            pickle_highest_protocol: None,
            pickle_default_protocol: None,
            platform: None,
            machine: None,
            name: None,
            sources: vec![],
            unusable: None,
            ..full.clone()
        };
        let broken = Unusable {
            path: "/usr/bin/python9".into(),
            sources: vec![Source::Pyenv],
            name: None,
            reason: "no".into(),
        };
        let named = Unusable {
            name: Some("n".into()),
            ..broken.clone()
        };
        let json: serde_json::Value =
            serde_json::from_str(&to_json(&[full, bare], &[broken, named])).unwrap();
        assert_eq!(keys(&json), ["interpreters", "unusable"]);
        let pythons = &json["interpreters"];
        assert_eq!(
            keys(&pythons[0]),
            [
                "label",
                "version",
                "implementation",
                "implementation_version",
                "executable",
                "debug",
                "free_threaded",
                "gil_enabled",
                "c_pickle",
                "c_pickle_used",
                "pickle_highest_protocol",
                "pickle_default_protocol",
                "platform",
                "machine",
                "name",
                "sources",
                "unusable"
            ]
        );
        assert_eq!(pythons[0]["implementation"], "pypy");
        assert_eq!(
            pythons[0]["sources"],
            serde_json::json!(["pythons.toml", "PATH"])
        );
        assert_eq!(
            keys(&pythons[1]),
            [
                "label",
                "version",
                "implementation",
                "executable",
                "debug",
                "free_threaded",
                "gil_enabled",
                "c_pickle",
                "c_pickle_used",
                "sources"
            ]
        );
        assert_eq!(pythons[0]["gil_enabled"], false);
        assert_eq!(pythons[1]["c_pickle"], serde_json::Value::Null);
        assert_eq!(pythons[1]["c_pickle_used"], false);
        let unusable = &json["unusable"];
        assert_eq!(keys(&unusable[0]), ["path", "sources", "reason"]);
        assert_eq!(keys(&unusable[1]), ["path", "sources", "name", "reason"]);
    }
}
