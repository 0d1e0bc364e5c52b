//! A rule's `check`: the named checks of a run (`check(name)` in the case's code) it decides,
//! by name or by a glob (`*` any run of characters, `?` one character; nothing else is
//! special), one or a list of them ([`CheckNames`]). A rule with `check` decides those checks
//! only, never a run; a check no such rule names is expected to pass.

use serde::{Deserialize, Serialize};

/// `check: NAME` or `check: [NAME, …]`: names or globs, any of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
