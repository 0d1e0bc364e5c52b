//! A rule's `check`: the named checks of a run (`check(name)` in the case's code) it decides,
//! by name or by a glob (`*` any run of characters, `?` one character; nothing else is
//! special), one or a list of them ([`CheckNames`]). A rule with `check` decides those checks
//! only, never a run; a check no such rule names is expected to pass.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

/// `check: NAME` or `check: [NAME, …]`: names or globs, any of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum CheckNames {
    One(#[schemars(length(min = 1))] String),
    Any(#[schemars(length(min = 1))] Vec<String>),
}

impl CheckNames {
    /// The names or globs, as written.
    pub fn patterns(&self) -> &[String] {
        match self {
            CheckNames::One(one) => std::slice::from_ref(one),
            CheckNames::Any(any) => any,
        }
    }

    /// Whether `name` is one of these names, or matches one of these globs.
    pub fn matches(&self, name: &str) -> bool {
        self.patterns().iter().any(|p| glob_matches(p, name))
    }
}

/// What a value that is no name says it should be: the names are text, and YAML reads a plain
/// `3` or `true` as another type.
const EXPECTING: &str = "a check's name, a string (quote a name that YAML reads as another \
                         type: `check: \"3\"`), or a list of them";

/// Read where the value stands, so that a value of another type is reported at its own line
/// and column, with the value and what to write instead (an empty list or a blank name is the
/// loader's to refuse, with its own words).
impl<'de> Deserialize<'de> for CheckNames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Names;
        impl<'de> de::Visitor<'de> for Names {
            type Value = CheckNames;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTING)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CheckNames, E> {
                Ok(CheckNames::One(v.to_string()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<CheckNames, A::Error> {
                let mut all = Vec::new();
                while let Some(Name(name)) = seq.next_element::<Name>()? {
                    all.push(name);
                }
                Ok(CheckNames::Any(all))
            }
        }
        d.deserialize_any(Names)
    }
}

/// One name of a list of them.
struct Name(String);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct One;
        impl<'de> de::Visitor<'de> for One {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a check's name, a string (quote a name that YAML reads as another type: `\"3\"`)",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Name, E> {
                Ok(Name(v.to_string()))
            }
        }
        d.deserialize_any(One)
    }
}

/// `*` any run of characters (none too), `?` one character, anything else itself.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // The classic two-pointer match with the last `*` to fall back to.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_a_shell_does_without_brackets() {
        for (pattern, name, want) in [
            ("frozenset", "frozenset", true),
            ("frozenset", "frozensets", false),
            ("frozen*", "frozenset", true),
            ("*set", "frozenset", true),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("*b*b", "abxbyb", true),
            ("*b*b", "abxby", false),
            ("p[1]", "p[1]", true),
            ("p[1]", "p1", false),
            ("é*", "élan", true),
        ] {
            assert_eq!(glob_matches(pattern, name), want, "{pattern} ~ {name}");
        }
        let any = CheckNames::Any(vec!["a".into(), "b*".into()]);
        assert!(any.matches("a") && any.matches("bc") && !any.matches("c"));
    }
}
