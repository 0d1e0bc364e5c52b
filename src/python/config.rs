//! `pythons.toml`: named interpreters and switches for each discovery source.
//!
//! ```toml
//! [discovery]          # every source is on unless switched off
//! path = true
//! pyenv = true
//! uv = true
//! conda = true
//!
//! [pythons]
//! pypy = "/usr/bin/pypy3"                       # a name and a path
//! dbg = { path = "/usr/bin/python3.11-dbg" }    # the same, as a table
//! ```

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Deserialize;

use crate::errors::Error;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sources {
    #[serde(default = "yes")]
    pub path: bool,
    #[serde(default = "yes")]
    pub pyenv: bool,
    #[serde(default = "yes")]
    pub uv: bool,
    #[serde(default = "yes")]
    pub conda: bool,
}

fn yes() -> bool {
    true
}

impl Default for Sources {
    fn default() -> Self {
        Sources {
            path: true,
            pyenv: true,
            uv: true,
            conda: true,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Entry {
    Path(PathBuf),
    Table(EntryTable),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryTable {
    path: PathBuf,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    discovery: Sources,
    #[serde(default)]
    pythons: IndexMap<String, Entry>,
}

/// The loaded configuration (defaults when there is no file).
#[derive(Debug, Clone, Default)]
pub struct PythonsConfig {
    pub file: Option<PathBuf>,
    pub sources: Sources,
    /// Named interpreters, paths resolved against the file's folder.
    pub named: IndexMap<String, PathBuf>,
}

impl PythonsConfig {
    pub fn load(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: format!("cannot read: {e}"),
        })?;
        let raw: RawConfig = toml::from_str(&text).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let named = raw
            .pythons
            .into_iter()
            .map(|(name, entry)| {
                let p = match entry {
                    Entry::Path(p) => p,
                    Entry::Table(t) => t.path,
                };
                (name, resolve(base, &p))
            })
            .collect();
        Ok(PythonsConfig {
            file: Some(path.to_path_buf()),
            sources: raw.discovery,
            named,
        })
    }
}

fn resolve(base: &Path, path: &Path) -> PathBuf {
    if let Ok(rest) = path.strip_prefix("~") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    if path.is_absolute() || path.components().count() == 1 && !path.to_string_lossy().contains('/')
    {
        // A bare command name (`pypy3`) is looked up on PATH later.
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_entry_forms_and_switches() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pythons.toml");
        std::fs::write(&file, "[discovery]\nconda = false\n[pythons]\na = \"/usr/bin/python3\"\nb = { path = \"rel/python\" }\n").unwrap();
        let c = PythonsConfig::load(&file).unwrap();
        assert!(!c.sources.conda && c.sources.path);
        assert_eq!(c.named["a"], PathBuf::from("/usr/bin/python3"));
        assert_eq!(c.named["b"], dir.path().join("rel/python"));
    }

    #[test]
    fn typos_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pythons.toml");
        std::fs::write(&file, "[discovery]\npyenvv = false\n").unwrap();
        let e = PythonsConfig::load(&file).unwrap_err().to_string();
        assert!(e.contains("pyenvv"), "{e}");
    }
}
