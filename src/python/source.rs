//! Where an interpreter was found ([`Source`]): the one table of the sources, their names and
//! the `[discovery]` keys of pythons.toml that switch the ones discovery walks.

use std::fmt;

/// Declares [`Source`] from its table: each source's variant and name, and for the sources
/// discovery walks (in the order it walks them), the `[discovery]` key that switches each.
macro_rules! sources {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal $([discovery = $key:literal])?, )*) => {
        /// Where an interpreter was found, spelled as reports and `crosspickle pythons` show it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Source {
            $( $(#[$doc])* $variant, )*
        }

        impl Source {
            /// Every source.
            pub const ALL: &[Source] = &[$(Source::$variant,)*];
            /// Their names, in the same order.
            pub const NAMES: &[&str] = &[$($name,)*];
            /// The sources discovery walks after pythons.toml's names, in that order, each with
            /// the `[discovery]` key that switches it.
            pub const WALKED: &[(Source, &str)] = &[$($((Source::$variant, $key),)?)*];
            /// Those keys, in the same order.
            pub const DISCOVERY_KEYS: &[&str] = &[$($($key,)?)*];

            pub fn as_str(&self) -> &'static str {
                match self {
                    $(Source::$variant => $name,)*
                }
            }

            /// The `[discovery]` key of pythons.toml that switches this source, if it has one.
            pub fn discovery_key(&self) -> Option<&'static str> {
                match self {
                    $($(Source::$variant => Some($key),)?)*
                    _ => None,
                }
            }
        }
    };
}

sources! {
    /// A name in pythons.toml (or one `bisect --keep` gave).
    PythonsToml = "pythons.toml",
    Path = "PATH" [discovery = "path"],
    Pyenv = "pyenv" [discovery = "pyenv"],
    Uv = "uv" [discovery = "uv"],
    Conda = "conda" [discovery = "conda"],
    /// macOS: python.org's framework builds.
    PythonOrg = "python.org" [discovery = "python_org"],
    /// macOS: Homebrew's `bin` folders.
    Homebrew = "homebrew" [discovery = "homebrew"],
    /// Windows: what the py launcher lists (`py -0p`, the PEP 514 registry entries).
    PyLauncher = "py" [discovery = "py"],
    /// A path given to `--python` that discovery had not found.
    Request = "--python",
    /// An interpreter built by `bisect --cpython`.
    Bisect = "bisect",
}

impl Source {
    /// The source a report names (`pyenv`, `PATH`…), if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Source::ALL.iter().copied().find(|s| s.as_str() == name)
    }

    /// The source `[discovery]` switches with `key`, if it is one.
    pub fn from_discovery_key(key: &str) -> Option<Self> {
        Source::WALKED
            .iter()
            .find(|(_, k)| *k == key)
            .map(|(source, _)| *source)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A list of sources joins as their names: `sources.join(", ")` (two sources are equal as
/// their names are, as `Borrow` asks).
impl std::borrow::Borrow<str> for Source {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl serde::Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Source::from_name(&name)
            .ok_or_else(|| serde::de::Error::unknown_variant(&name, Source::NAMES))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys_are_one_table() {
        assert_eq!(Source::ALL.len(), Source::NAMES.len());
        for &s in Source::ALL {
            assert_eq!(Source::from_name(s.as_str()), Some(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Source>(&json).unwrap(), s);
        }
        for (&(s, key), &k) in Source::WALKED.iter().zip(Source::DISCOVERY_KEYS) {
            assert_eq!(
                (Source::from_discovery_key(key), s.discovery_key()),
                (Some(s), Some(k))
            );
        }
        assert_eq!(Source::from_name("PATH"), Some(Source::Path));
        assert_eq!(Source::from_discovery_key("path"), Some(Source::Path));
        assert_eq!(Source::from_discovery_key("pythons.toml"), None);
        assert!(serde_json::from_str::<Source>("\"nowhere\"").is_err());
    }
}
