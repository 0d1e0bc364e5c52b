//! An environment's identity: the interpreter (canonical executable and version) and the sorted
//! requirement strings, hashed into the environment's folder name, and the description written
//! into the environment once it is complete (its marker, read by `crosspickle cache list`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::case::Params;
use crate::python::Interpreter;

/// Bump when environments made before would no longer do, to leave them behind.
pub const FORMAT: u32 = 1;

/// What an environment is for; written as its marker after a successful install.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EnvMeta {
    pub format: u32,
    /// The interpreter's label when the environment was made (`cpython-3.8.18`).
    pub interpreter: String,
    pub executable: PathBuf,
    pub version: String,
    /// Sorted, without duplicates, placeholders replaced.
    pub requirements: Vec<String>,
    /// What made it: `uv`, `venv+pip`, `virtualenv+pip`. Filled in by the build.
    #[serde(default)]
    pub installer: String,
    /// Seconds since the epoch.
    #[serde(default)]
    pub created: u64,
    /// Seconds the build took.
    #[serde(default)]
    pub build_seconds: f64,
}

#[derive(Debug, Clone)]
pub struct EnvKey {
    /// 16 hex digits: the folder name.
    pub hash: String,
    pub meta: EnvMeta,
}

impl EnvKey {
    pub fn new(interpreter: &Interpreter, requirements: &[String]) -> Self {
        let mut requirements: Vec<String> = requirements.to_vec();
        requirements.sort();
        requirements.dedup();
        let mut identity = format!("crosspickle-env-{FORMAT}\0").into_bytes();
        identity.extend_from_slice(interpreter.executable.as_os_str().as_encoded_bytes());
        identity.push(0);
        identity.extend_from_slice(interpreter.version.to_string().as_bytes());
        for r in &requirements {
            identity.push(0);
            identity.extend_from_slice(r.as_bytes());
        }
        let hash = crate::sys::hash::short_hex(&identity, 16);
        EnvKey {
            hash,
            meta: EnvMeta {
                format: FORMAT,
                interpreter: interpreter.label.clone(),
                executable: interpreter.executable.clone(),
                version: interpreter.version.to_string(),
                requirements,
                installer: String::new(),
                created: 0,
                build_seconds: 0.0,
            },
        }
    }
}

/// The requirement strings with every `{name}` replaced by the value of param `name`.
pub fn resolve_requirements(requires: &[String], params: &Params) -> Vec<String> {
    requires
        .iter()
        .map(|req| {
            let mut out = req.clone();
            for (name, value) in &params.0 {
                out = out.replace(&format!("{{{name}}}"), &value.to_string());
            }
            out.trim().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::ParamValue;
    use crate::python::Implementation;

    fn interp(exe: &str, version: &str) -> Interpreter {
        let mut i = Interpreter::for_tests(Implementation::Cpython, version);
        i.label = format!("cpython-{version}");
        i.executable = exe.into();
        i
    }

    #[test]
    fn order_and_duplicates_do_not_matter_interpreter_and_versions_do() {
        let a = interp("/py/3.8/bin/python3.8", "3.8.18");
        let k1 = EnvKey::new(&a, &["b==1".into(), "a==2".into()]);
        let k2 = EnvKey::new(&a, &["a==2".into(), "b==1".into(), "a==2".into()]);
        assert_eq!(k1.hash, k2.hash);
        // Pinned: environments made by earlier releases keep their names (and stay reused).
        assert_eq!(k1.hash, "7794421848c9afd5");
        assert_eq!(k1.meta.requirements, vec!["a==2", "b==1"]);
        assert_ne!(k1.hash, EnvKey::new(&a, &["a==2".into()]).hash);
        assert_ne!(
            k1.hash,
            EnvKey::new(
                &interp("/py/3.8/bin/python3.8", "3.8.19"),
                &["a==2".into(), "b==1".into()]
            )
            .hash
        );
        assert_ne!(
            k1.hash,
            EnvKey::new(
                &interp("/other/python3.8", "3.8.18"),
                &["a==2".into(), "b==1".into()]
            )
            .hash
        );
    }

    #[test]
    fn placeholders_take_param_values() {
        let mut p = indexmap::IndexMap::new();
        p.insert("loky".to_string(), ParamValue::Str("2.8.0".into()));
        p.insert("n".to_string(), ParamValue::from(3));
        let reqs = vec![
            "loky=={loky}".to_string(),
            " cloudpickle==1.{n}.0 ; python_version < \"3.8\"".to_string(),
        ];
        assert_eq!(
            resolve_requirements(&reqs, &Params(p)),
            vec![
                "loky==2.8.0".to_string(),
                "cloudpickle==1.3.0 ; python_version < \"3.8\"".to_string()
            ]
        );
    }
}
