//! Each side's packages (`explore --requires`, `--dump-requires`, `--load-requires`): what
//! the producers' and the consumers' environments hold, the checks of those requirement
//! strings, and the lines that give a finding's case file the same packages. The
//! environments themselves are made by the command line (`cli/explore.rs`, through `env`);
//! the engine only runs each side's workers on the python it is given.

use std::fmt::Write;

/// The requirement strings of each side, as given (PEP 508, markers allowed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requires {
    /// `--requires`: both sides.
    pub all: Vec<String>,
    /// `--dump-requires`: the producers' besides `all`.
    pub dump: Vec<String>,
    /// `--load-requires`: the consumers' besides `all`.
    pub load: Vec<String>,
}

impl Requires {
    /// The producers' environment: `all` then `dump`.
    pub fn dump_side(&self) -> Vec<String> {
        self.all.iter().chain(&self.dump).cloned().collect()
    }

    /// The consumers' environment: `all` then `load`.
    pub fn load_side(&self) -> Vec<String> {
        self.all.iter().chain(&self.load).cloned().collect()
    }

    /// Whether the two sides hold different packages (each side then has workers of its own).
    pub fn split(&self) -> bool {
        let (mut d, mut l) = (self.dump_side(), self.load_side());
        d.sort();
        d.dedup();
        l.sort();
        l.dedup();
        d != l
    }

    /// Each string checked: not empty, and no `{name}` placeholder (explore has no params of
    /// its own to fill one with). The message names the option and the string.
    pub fn check(&self) -> Result<(), String> {
        let options = [
            ("--requires", &self.all),
            ("--dump-requires", &self.dump),
            ("--load-requires", &self.load),
        ];
        for (option, list) in options {
            for req in list {
                if req.trim().is_empty() {
                    return Err(format!(
                        "{option} \"{req}\": an empty requirement; give a PEP 508 requirement such as `numpy<2`"
                    ));
                }
                if let Some(name) = placeholder(req) {
                    return Err(format!(
                        "{option} \"{req}\": `{{{name}}}` is a placeholder for a case's param, and explore has none to fill it with; write the release itself (`numpy==1.26.4`), or explore once per release"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The case file's lines for these packages. A round trip gets the three keys as given
    /// (each side made by `crosspickle run` as explore made it); a plain case (`code`, a
    /// parity finding, seen on the producers) holds the producers' packages as `requires`.
    pub fn case_lines(&self, round_trip: bool) -> String {
        let mut out = String::new();
        let mut key = |name: &str, list: &[String]| {
            if list.is_empty() {
                return;
            }
            let _ = writeln!(out, "{name}:");
            for req in list {
                let _ = writeln!(out, "  - {}", quote(req));
            }
        };
        if round_trip {
            key("requires", &self.all);
            key("dump_requires", &self.dump);
            key("load_requires", &self.load);
        } else {
            key("requires", &self.dump_side());
        }
        out
    }

    /// `case` (a case file's text) with [`Requires::case_lines`] after its first line (the
    /// comment that says explore wrote it).
    pub fn into_case(&self, case: String, round_trip: bool) -> String {
        let lines = self.case_lines(round_trip);
        if lines.is_empty() {
            return case;
        }
        match case.split_once('\n') {
            Some((first, rest)) => format!("{first}\n{lines}{rest}"),
            None => format!("{lines}{case}"),
        }
    }
}

/// The name of the first `{name}` placeholder in `req`.
fn placeholder(req: &str) -> Option<&str> {
    let (_, after) = req.split_once('{')?;
    let (name, _) = after.split_once('}')?;
    Some(name)
}

/// A YAML double-quoted scalar.
fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requires(all: &[&str], dump: &[&str], load: &[&str]) -> Requires {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        Requires {
            all: v(all),
            dump: v(dump),
            load: v(load),
        }
    }

    #[test]
    fn each_side_is_the_shared_then_its_own() {
        let r = requires(&["attrs"], &["numpy>=2"], &["numpy<2"]);
        assert_eq!(r.dump_side(), ["attrs", "numpy>=2"]);
        assert_eq!(r.load_side(), ["attrs", "numpy<2"]);
        assert!(r.split());
        assert!(!requires(&["attrs"], &[], &[]).split());
        assert!(!requires(&[], &["a", "b"], &["b", "a", "a"]).split());
        assert!(!Requires::default().split());
    }

    #[test]
    fn placeholders_and_empty_strings_are_refused_by_option() {
        let e = requires(&[], &[], &["numpy=={numpy_release}"])
            .check()
            .unwrap_err();
        assert!(
            e.starts_with("--load-requires \"numpy=={numpy_release}\": `{numpy_release}`"),
            "{e}"
        );
        let e = requires(&[" "], &[], &[]).check().unwrap_err();
        assert!(
            e.starts_with("--requires \" \": an empty requirement"),
            "{e}"
        );
        assert!(requires(&["a; python_version < \"3.8\""], &["b>=2"], &[])
            .check()
            .is_ok());
    }

    #[test]
    fn a_case_gets_the_keys_after_its_first_line() {
        let r = requires(&[], &["numpy>=2"], &["numpy<2"]);
        let case = r.into_case("# written\ntitle: t\n".into(), true);
        assert_eq!(
            case,
            "# written\ndump_requires:\n  - \"numpy>=2\"\nload_requires:\n  - \"numpy<2\"\ntitle: t\n"
        );
        let plain = r.into_case("# written\ncode: x\n".into(), false);
        assert_eq!(plain, "# written\nrequires:\n  - \"numpy>=2\"\ncode: x\n");
        let same = Requires::default().into_case("# written\n".into(), true);
        assert_eq!(same, "# written\n");
        let marker = requires(&["a; python_version < \"3.8\""], &[], &[]);
        assert_eq!(
            marker.case_lines(true),
            "requires:\n  - \"a; python_version < \\\"3.8\\\"\"\n"
        );
    }
}
