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

use super::Source;
use crate::errors::Error;

/// `[discovery]`: which of the sources discovery walks ([`Source::WALKED`], with their keys)
/// are switched off. Every source is on unless a file switches it off.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sources {
    off: Vec<Source>,
}

impl Sources {
    /// Whether discovery walks `source`.
    pub fn on(&self, source: Source) -> bool {
        !self.off.contains(&source)
    }

    /// Switch `source` on or off.
    pub fn set(&mut self, source: Source, on: bool) {
        self.off.retain(|s| *s != source);
        if !on {
            self.off.push(source);
        }
    }

    /// Off where either is off (several files as one).
    fn and(&mut self, other: &Sources) {
        for &source in &other.off {
            self.set(source, false);
        }
    }
}

impl<'de> Deserialize<'de> for Sources {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Switches;
        impl<'de> serde::de::Visitor<'de> for Switches {
            type Value = Sources;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("struct Sources")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Sources, A::Error> {
                let mut sources = Sources::default();
                while let Some(Key(source)) = map.next_key()? {
                    sources.set(source, map.next_value()?);
                }
                Ok(sources)
            }
        }
        d.deserialize_struct("Sources", Source::DISCOVERY_KEYS, Switches)
    }
}

/// A `[discovery]` key, read as serde reads a field's name (so that an unknown one is
/// reported at the key).
struct Key(Source);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = Key;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("field identifier")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Key, E> {
                Source::from_discovery_key(key)
                    .map(Key)
                    .ok_or_else(|| E::unknown_field(key, Source::DISCOVERY_KEYS))
            }
        }
        d.deserialize_identifier(Name)
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
    /// crosspickle's own folder of uv-installed interpreters (`--download-python`), which the
    /// uv source searches besides uv's.
    pub downloads: Option<PathBuf>,
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
            downloads: None,
        })
    }
}

impl PythonsConfig {
    /// Several files as one (`--pythons-toml A --pythons-toml B`): the names of every file, a
    /// discovery source on only when no file switches it off. A name that two files give
    /// different paths is an error naming both files.
    pub fn load_all(paths: &[PathBuf]) -> Result<Self, Error> {
        let mut merged = PythonsConfig::default();
        let mut origin: IndexMap<String, PathBuf> = IndexMap::new();
        for path in paths {
            let config = PythonsConfig::load(path)?;
            merged.file.get_or_insert_with(|| path.clone());
            merged.sources.and(&config.sources);
            for (name, python) in config.named {
                match merged.named.get(&name) {
                    Some(existing) if *existing != python => {
                        return Err(Error::Config {
                            path: path.clone(),
                            message: format!(
                                "`{name}` is {} here but {} in {}; give one of them another name",
                                python.display(),
                                existing.display(),
                                origin[&name].display()
                            ),
                        })
                    }
                    Some(_) => {}
                    None => {
                        origin.insert(name.clone(), path.clone());
                        merged.named.insert(name, python);
                    }
                }
            }
        }
        Ok(merged)
    }
}

/// The file, in the cache folder, where `bisect --keep` names the interpreters it built; it has
/// the `[pythons]` table of pythons.toml, and discovery reads it after pythons.toml.
pub fn kept_file(cache_dir: &Path) -> PathBuf {
    cache_dir.join("kept-pythons.toml")
}

impl PythonsConfig {
    /// Add the kept interpreters of `cache_dir` whose names pythons.toml does not use.
    pub fn add_kept(&mut self, cache_dir: &Path) {
        let file = kept_file(cache_dir);
        if !file.is_file() {
            return;
        }
        match PythonsConfig::load(&file) {
            Ok(kept) => {
                for (name, path) in kept.named {
                    self.named.entry(name).or_insert(path);
                }
            }
            Err(e) => eprintln!("warning: ignoring kept interpreters: {e}"),
        }
    }
}

/// Name `python` in the kept interpreters of `cache_dir` (replacing an entry of that name).
pub fn register_kept(cache_dir: &Path, name: &str, python: &Path) -> Result<(), Error> {
    let file = kept_file(cache_dir);
    let mut table: toml::Table = match std::fs::read_to_string(&file) {
        Ok(text) => toml::from_str(&text).map_err(|e| Error::Config {
            path: file.clone(),
            message: e.to_string(),
        })?,
        Err(_) => toml::Table::new(),
    };
    let pythons = table
        .entry("pythons")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let toml::Value::Table(pythons) = pythons else {
        return Err(Error::Config {
            path: file,
            message: "`pythons` is not a table".into(),
        });
    };
    pythons.insert(
        name.to_string(),
        toml::Value::String(python.display().to_string()),
    );
    let text = format!(
        "# Interpreters kept by `crosspickle bisect --keep`; usable with --python NAME.\n{}",
        toml::to_string(&table).expect("a table serializes")
    );
    crate::sys::fs::write_atomic(&file, text.as_bytes())
        .map_err(|e| Error::io(format!("writing {}", file.display()), e))
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
    #[allow(clippy::join_absolute_paths)] // On purpose: a root path keeps the folder's drive.
    fn both_entry_forms_and_switches() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pythons.toml");
        std::fs::write(&file, "[discovery]\nconda = false\n[pythons]\na = \"/usr/bin/python3\"\nb = { path = \"rel/python\" }\n").unwrap();
        let c = PythonsConfig::load(&file).unwrap();
        assert!(!c.sources.on(Source::Conda) && c.sources.on(Source::Path));
        // `/usr/bin/python3` is absolute on Unix; on Windows it is on the file's drive.
        assert_eq!(c.named["a"], dir.path().join("/usr/bin/python3"));
        assert_eq!(c.named["b"], dir.path().join("rel/python"));
    }

    #[test]
    #[allow(clippy::join_absolute_paths)] // On purpose: a root path keeps the folder's drive.
    fn kept_interpreters() {
        let dir = tempfile::tempdir().unwrap();
        register_kept(dir.path(), "cpython@v3.8.1", Path::new("/x/bin/python")).unwrap();
        register_kept(dir.path(), "other", Path::new("/y/bin/python")).unwrap();
        let mut c = PythonsConfig::default();
        c.named.insert("other".into(), PathBuf::from("/mine"));
        c.add_kept(dir.path());
        assert_eq!(c.named["cpython@v3.8.1"], dir.path().join("/x/bin/python"));
        assert_eq!(c.named["other"], PathBuf::from("/mine"));
    }

    #[test]
    fn several_files_merge() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.toml");
        let b = dir.path().join("b/pythons.toml");
        std::fs::create_dir_all(b.parent().unwrap()).unwrap();
        std::fs::write(
            &a,
            "[discovery]\nconda = false\n[pythons]\nx = \"/usr/bin/python3\"\nboth = \"/p\"\n",
        )
        .unwrap();
        std::fs::write(
            &b,
            "[discovery]\nuv = false\n[pythons]\ny = \"rel/python\"\nboth = \"/p\"\n",
        )
        .unwrap();
        let c = PythonsConfig::load_all(&[a.clone(), b.clone()]).unwrap();
        assert!(!c.sources.on(Source::Conda) && !c.sources.on(Source::Uv));
        assert!(c.sources.on(Source::Path) && c.sources.on(Source::Pyenv));
        assert_eq!(c.named.keys().collect::<Vec<_>>(), ["x", "both", "y"]);
        // Relative paths stay relative to their own file.
        assert_eq!(c.named["y"], dir.path().join("b/rel/python"));
        assert_eq!(c.file.as_deref(), Some(a.as_path()));

        std::fs::write(&b, "[pythons]\nboth = \"/elsewhere\"\n").unwrap();
        let e = PythonsConfig::load_all(&[a.clone(), b.clone()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`both`") && e.contains("/elsewhere") && e.contains("a.toml"),
            "{e}"
        );
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
