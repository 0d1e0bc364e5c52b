//! Building only the extension modules a case needs (a "lean" build): whether a CPython source
//! tree allows it, the make targets and setup.py wrapper that do it, which modules a built
//! prefix holds, and which of the modules the case was seen to miss it should have had.
//!
//! A lean build is the interpreter (`make python pybuilddir.txt oldsharedmods`: the core and
//! the modules the Setup files build) and, of the extension modules setup.py builds, only the
//! wanted ones: make's own `sharedmods` recipe runs setup.py through a wrapper that counts
//! every other module as disabled (setup.py's `DISABLED_MODULE_LIST`), so each module is built
//! exactly as a full build builds it. The prefix then carries a `sitecustomize` that records
//! every import no finder could satisfy; a recorded name that setup.py could have built but was
//! not asked to is a module the case needs: the commit is built again with it and the case
//! runs again, until nothing the case imports is missing.

use std::collections::BTreeSet;
use std::path::Path;

/// The wrapper make runs instead of setup.py.
pub const SETUP_WRAPPER: &str = include_str!("setup_wrapper.py");
/// The `sitecustomize` of a lean prefix: records the imports nothing could satisfy.
pub const WATCH: &str = include_str!("sitecustomize.py");

/// Where a prefix keeps which extension modules it holds.
pub const MODULES_FILE: &str = ".crosspickle-modules";
/// Where a lean prefix's `sitecustomize` records the imports nothing could satisfy.
pub const NOT_FOUND_FILE: &str = ".crosspickle-not-found";
/// The wrapper's file in the build folder, and the report it writes there.
pub const WRAPPER_FILE: &str = ".crosspickle-setup.py";
pub const REPORT_FILE: &str = ".crosspickle-setup-report";

/// The make targets of a lean build before setup.py: the interpreter, the sysconfig data the
/// built interpreter and setup.py read, and the modules the Setup files build as shared.
pub const CORE_TARGETS: [&str; 3] = ["python", "pybuilddir.txt", "oldsharedmods"];

/// Whether the source tree at `src` can be built lean: its setup.py consults
/// `DISABLED_MODULE_LIST` and has a `main()`, and make's `sharedmods` recipe runs it with
/// `$(PYTHON_FOR_BUILD)` (CPython 3 up to 3.11). Anything else is built whole.
pub fn lean_possible(src: &Path) -> bool {
    let read = |name: &str| std::fs::read_to_string(src.join(name)).unwrap_or_default();
    let setup = read("setup.py");
    let makefile = read("Makefile.pre.in");
    setup.contains("DISABLED_MODULE_LIST")
        && setup.contains("\ndef main(")
        && ["\nsharedmods:", "\noldsharedmods:", "\npybuilddir.txt:"]
            .iter()
            .all(|t| makefile.contains(t))
        && makefile.contains("$(PYTHON_FOR_BUILD) $(srcdir)/setup.py")
}

/// make's `PYTHON_FOR_BUILD` with the wrapper inserted before setup.py's path, from the
/// configured Makefile's own value (`./$(BUILDPYTHON) -E`); `None` when it has none, or when
/// its default goal is not the plain `build_all` (`--enable-optimizations` makes it
/// `profile-opt`, a build the lean targets would not reproduce).
pub fn python_for_build(makefile: &str, wrapper: &Path) -> Option<String> {
    let goal = makefile
        .lines()
        .find_map(|l| l.strip_prefix("all:"))?
        .split_whitespace()
        .collect::<Vec<_>>();
    if goal != ["build_all"] {
        return None;
    }
    let value = makefile
        .lines()
        .find_map(|l| l.strip_prefix("PYTHON_FOR_BUILD="))?
        .trim();
    (!value.is_empty()).then(|| format!("PYTHON_FOR_BUILD={value} {}", wrapper.display()))
}

/// The module names the wrapper's report lists as known to setup.py (`None`: no report, so
/// setup.py never got as far as choosing its modules).
pub fn parse_report(text: &str) -> Option<BTreeSet<String>> {
    let line = text.lines().find_map(|l| l.strip_prefix("known "))?;
    Some(line.split_whitespace().map(str::to_string).collect())
}

/// The extension modules a built prefix holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Built {
    /// Every module the build could make (a full build, and prefixes without the file).
    All,
    /// A lean build: the modules setup.py knew, those it was asked to build, and those of them
    /// it failed to build (absent, as from a full build of the same commit).
    Lean {
        known: BTreeSet<String>,
        built: BTreeSet<String>,
        failed: BTreeSet<String>,
    },
}

impl Built {
    /// As kept in [`MODULES_FILE`]: `all`, or `lean`, then `known ...`, `built ...` and
    /// `failed ...`.
    pub fn render(&self) -> String {
        match self {
            Built::All => "all\n".to_string(),
            Built::Lean {
                known,
                built,
                failed,
            } => format!(
                "lean\nknown {}\nbuilt {}\nfailed {}\n",
                join(known),
                join(built),
                join(failed)
            ),
        }
    }

    pub fn parse(text: &str) -> Option<Built> {
        let mut lines = text.lines();
        match lines.next()? {
            "all" => Some(Built::All),
            "lean" => {
                let mut known = None;
                let mut built = None;
                let mut failed = BTreeSet::new();
                for line in lines {
                    let (name, rest) = line.split_once(' ').unwrap_or((line, ""));
                    let set = rest.split_whitespace().map(str::to_string).collect();
                    match name {
                        "known" => known = Some(set),
                        "built" => built = Some(set),
                        "failed" => failed = set,
                        _ => {}
                    }
                }
                Some(Built::Lean {
                    known: known?,
                    built: built?,
                    failed,
                })
            }
            _ => None,
        }
    }

    /// What the prefix at `prefix` holds: a prefix without the file (built by an earlier
    /// crosspickle, or a build script's) holds everything; an unreadable file, nothing known.
    pub fn read(prefix: &Path) -> Option<Built> {
        match std::fs::read_to_string(prefix.join(MODULES_FILE)) {
            Ok(text) => Built::parse(&text),
            Err(_) => Some(Built::All),
        }
    }

    /// Whether a case that needs `wanted` can run on this prefix as on a full build: every
    /// wanted module this commit knows was built.
    pub fn serves(&self, wanted: &BTreeSet<String>) -> bool {
        match self {
            Built::All => true,
            Built::Lean { known, built, .. } => wanted
                .iter()
                .all(|m| !known.contains(m) || built.contains(m)),
        }
    }

    /// The modules a run missed that this build could have had: the imports nothing could
    /// satisfy (one name a line, as the watch records them) that setup.py knew and did not
    /// build. A dotted name counts by each of its leading parts too (`a.b` also as `a`).
    pub fn missing(&self, not_found: &str) -> BTreeSet<String> {
        let Built::Lean { known, built, .. } = self else {
            return BTreeSet::new();
        };
        let mut missing = BTreeSet::new();
        for name in not_found.lines().map(str::trim).filter(|n| !n.is_empty()) {
            let mut prefix = String::new();
            for part in name.split('.') {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(part);
                if known.contains(&prefix) && !built.contains(&prefix) {
                    missing.insert(prefix.clone());
                }
            }
        }
        missing
    }
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(" ")
}

/// Whether a file of the build's extension-module folder belongs in a prefix holding `built`:
/// everything but the extension modules (the sysconfig data), and the modules built.
pub fn keep_in_prefix(file_name: &str, built: &Built) -> bool {
    let Built::Lean { built, .. } = built else {
        return true;
    };
    match module_of(file_name) {
        Some(module) => built.contains(module),
        None => true,
    }
}

/// The module an extension module's file holds (`_pickle.cpython-38-x86_64-linux-gnu.so`:
/// `_pickle`); `None` for other files.
pub fn module_of(file_name: &str) -> Option<&str> {
    file_name
        .ends_with(".so")
        .then(|| file_name.split('.').next().unwrap_or(file_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn lean(known: &[&str], built: &[&str]) -> Built {
        Built::Lean {
            known: set(known),
            built: set(built),
            failed: BTreeSet::new(),
        }
    }

    #[test]
    fn the_record_round_trips() {
        let b = lean(&["_pickle", "_struct", "_decimal"], &["_pickle"]);
        assert_eq!(Built::parse(&b.render()), Some(b));
        assert_eq!(Built::parse("all\n"), Some(Built::All));
        assert_eq!(Built::parse("lean\nknown a\n"), None, "no built line");
        assert_eq!(Built::parse("something else"), None);
        let empty = lean(&["a"], &[]);
        assert_eq!(Built::parse(&empty.render()), Some(empty));
        let failed = Built::Lean {
            known: set(&["_json", "_pickle"]),
            built: set(&["_json", "_pickle"]),
            failed: set(&["_json"]),
        };
        assert_eq!(Built::parse(&failed.render()), Some(failed));
    }

    #[test]
    fn a_prefix_without_the_file_holds_everything() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Built::read(dir.path()), Some(Built::All));
        std::fs::write(dir.path().join(MODULES_FILE), "garbage").unwrap();
        assert_eq!(Built::read(dir.path()), None);
    }

    #[test]
    fn missing_is_what_setup_py_knew_and_did_not_build() {
        // A module asked for that failed to build is not missing: a full build lacks it too.
        let failed = Built::Lean {
            known: set(&["_json"]),
            built: set(&["_json"]),
            failed: set(&["_json"]),
        };
        assert!(failed.missing("_json\n").is_empty());
        let b = lean(
            &["_pickle", "_struct", "_decimal", "xml.parsers"],
            &["_struct"],
        );
        // `org` (pickle's Jython probe) and `sitecustomize` are not modules of this build.
        let seen = "org\n_pickle\n_struct\nsitecustomize\n_decimal\n\n_pickle\n";
        assert_eq!(b.missing(seen), set(&["_decimal", "_pickle"]));
        assert_eq!(b.missing("xml.parsers.expat\n"), set(&["xml.parsers"]));
        assert!(Built::All.missing("_pickle\n").is_empty());
    }

    #[test]
    fn serves_when_every_known_wanted_module_was_built() {
        let b = lean(&["_pickle", "_struct", "_decimal"], &["_pickle", "_struct"]);
        assert!(b.serves(&set(&["_pickle", "_struct"])));
        // A module this commit does not know (learned at another commit) asks for nothing.
        assert!(b.serves(&set(&["_pickle", "_brand_new"])));
        assert!(!b.serves(&set(&["_decimal"])));
        assert!(Built::All.serves(&set(&["_decimal"])));
    }

    #[test]
    fn only_the_built_modules_go_into_a_lean_prefix() {
        let b = lean(&["_pickle", "_struct"], &["_pickle"]);
        assert!(keep_in_prefix("_pickle.cpython-38-x86_64-linux-gnu.so", &b));
        assert!(!keep_in_prefix(
            "_struct.cpython-38-x86_64-linux-gnu.so",
            &b
        ));
        assert!(keep_in_prefix(
            "_sysconfigdata__linux_x86_64-linux-gnu.py",
            &b
        ));
        assert!(keep_in_prefix(
            "_struct.cpython-38-x86_64-linux-gnu.so",
            &Built::All
        ));
    }

    #[test]
    fn the_wrapper_goes_into_make_s_own_python_for_build() {
        let makefile =
            "BUILDPYTHON=\tpython\nPYTHON_FOR_BUILD=./$(BUILDPYTHON) -E\nX=1\nall:\t\tbuild_all\n";
        assert_eq!(
            python_for_build(makefile, Path::new("/b/.crosspickle-setup.py")).as_deref(),
            Some("PYTHON_FOR_BUILD=./$(BUILDPYTHON) -E /b/.crosspickle-setup.py")
        );
        assert_eq!(
            python_for_build("X=1\nall: build_all\n", Path::new("/w")),
            None
        );
        // --enable-optimizations: the default goal is a PGO build, which stays whole.
        let pgo = makefile.replace("build_all", "profile-opt");
        assert_eq!(python_for_build(&pgo, Path::new("/w")), None);
    }

    #[test]
    fn lean_builds_need_cpython_3_s_setup_py_and_sharedmods() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path();
        let makefile = "all: build_all\nsharedmods: $(BUILDPYTHON)\n\t$(PYTHON_FOR_BUILD) $(srcdir)/setup.py $$quiet build\noldsharedmods: $(SHAREDMODS)\npybuilddir.txt: $(BUILDPYTHON)\n";
        let setup = "import sys\nDISABLED_MODULE_LIST = []\n\ndef main():\n    pass\n";
        assert!(!lean_possible(src), "an empty folder");
        std::fs::write(src.join("Makefile.pre.in"), makefile).unwrap();
        std::fs::write(src.join("setup.py"), setup).unwrap();
        assert!(lean_possible(src), "CPython 3.8's layout");
        // CPython 2.7 spells the list in lower case.
        std::fs::write(
            src.join("setup.py"),
            setup.replace("DISABLED_MODULE_LIST", "disabled_module_list"),
        )
        .unwrap();
        assert!(!lean_possible(src));
        // CPython 3.12 has no setup.py.
        std::fs::remove_file(src.join("setup.py")).unwrap();
        assert!(!lean_possible(src));
        std::fs::write(src.join("setup.py"), setup).unwrap();
        std::fs::write(
            src.join("Makefile.pre.in"),
            makefile.replace(
                "$(PYTHON_FOR_BUILD) $(srcdir)/setup.py",
                "$(PYTHON) setup.py",
            ),
        )
        .unwrap();
        assert!(
            !lean_possible(src),
            "sharedmods runs setup.py some other way"
        );
    }

    #[test]
    fn the_report_lists_the_known_modules() {
        assert_eq!(parse_report("known _a _b\n"), Some(set(&["_a", "_b"])));
        assert_eq!(parse_report(""), None);
    }
}
