//! `--python` requests: a version request (`3.8`, `3.8.18`, `>=3.8,<3.11`), an implementation
//! with an optional version (`cpython3.12`, `pypy3.9`, `pypy`), a version with ABI flags for
//! debug or free-threaded builds (`3.14d`, `cpython3.15d`, `3.13t`), a path, or a pythons.toml
//! name.

use std::path::PathBuf;
use std::str::FromStr;

use super::{Implementation, Interpreter, Source};
use crate::errors::Error;
use crate::version::VersionRequest;

#[derive(Debug, Clone)]
pub enum PythonRequest {
    Version(VersionRequest),
    Implementation(Implementation, Option<VersionRequest>),
    /// A bare version followed by ABI flags as `sys.abiflags` spells them: `3.14d` (debug),
    /// `3.13t` (free-threaded), `3.14td` (both), optionally after an implementation
    /// (`cpython3.14d`). It selects the builds of that version whose flags are exactly these.
    Build {
        implementation: Option<Implementation>,
        version: VersionRequest,
        debug: bool,
        free_threaded: bool,
    },
    Path(PathBuf),
    Name(String),
}

impl PythonRequest {
    pub fn parse(text: &str) -> Result<Self, Error> {
        let t = text.trim();
        let bad = |reason: String| Error::VersionRequest {
            request: t.to_string(),
            reason,
        };
        if t.is_empty() {
            return Err(bad("empty request".into()));
        }
        if t.contains('/') || t.starts_with('.') || t.starts_with('~') {
            let path = match t.strip_prefix("~/") {
                Some(rest) => std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_default()
                    .join(rest),
                None => PathBuf::from(t),
            };
            return Ok(PythonRequest::Path(path));
        }
        for (prefix, implementation) in [
            ("cpython", Implementation::Cpython),
            ("pypy", Implementation::Pypy),
        ] {
            if let Some(rest) = t.strip_prefix(prefix) {
                let rest = rest.trim_start_matches(['-', '@']);
                if let Some(build) = Self::build(Some(implementation), rest) {
                    return build.map_err(bad);
                }
                let version = match VersionRequest::from_str(rest) {
                    _ if rest.is_empty() => None,
                    Ok(v) => Some(v),
                    // `cpython@v3.8.1`: a name (bisect --keep gives such names).
                    Err(_) if t.contains('@') => return Ok(PythonRequest::Name(t.to_string())),
                    Err(e) => return Err(bad(e)),
                };
                return Ok(PythonRequest::Implementation(implementation, version));
            }
        }
        if let Some(build) = Self::build(None, t) {
            return build.map_err(bad);
        }
        if VersionRequest::looks_like(t) {
            return VersionRequest::from_str(t)
                .map(PythonRequest::Version)
                .map_err(bad);
        }
        Ok(PythonRequest::Name(t.to_string()))
    }

    /// `3.14d` and the like: `None` when `text` is not a bare version followed by ABI flags.
    fn build(implementation: Option<Implementation>, text: &str) -> Option<Result<Self, String>> {
        let (version, flags) = ["td", "t", "d"].iter().find_map(|flags| {
            let version = text.strip_suffix(flags)?;
            let bare = version.starts_with(|c: char| c.is_ascii_digit())
                && version.ends_with(|c: char| c.is_ascii_digit())
                && version.chars().all(|c| c.is_ascii_digit() || c == '.');
            bare.then_some((version, *flags))
        })?;
        Some(
            VersionRequest::from_str(version).map(|version| PythonRequest::Build {
                implementation,
                version,
                debug: flags.contains('d'),
                free_threaded: flags.contains('t'),
            }),
        )
    }

    /// Does this request select `interpreter`? Paths are matched on the canonical executable.
    pub fn selects(&self, interpreter: &Interpreter) -> bool {
        match self {
            PythonRequest::Version(v) => v.contains(&interpreter.version),
            PythonRequest::Implementation(i, v) => {
                interpreter.implementation == *i
                    && v.as_ref().is_none_or(|v| v.contains(&interpreter.version))
            }
            PythonRequest::Build {
                implementation,
                version,
                debug,
                free_threaded,
            } => {
                implementation.is_none_or(|i| interpreter.implementation == i)
                    && version.contains(&interpreter.version)
                    && interpreter.debug == *debug
                    && interpreter.free_threaded == *free_threaded
            }
            PythonRequest::Path(p) => {
                std::fs::canonicalize(p).is_ok_and(|c| c == interpreter.executable)
            }
            PythonRequest::Name(n) => {
                interpreter.name.as_deref() == Some(n) || interpreter.label == *n
            }
        }
    }
}

/// Split `--python` values (of the option `flag`) on commas, keeping specifier sets whole:
/// `3.8,3.9` is two requests, `>=3.8,<3.11` is one, `>=3.8,<3.11,pypy` is two. An empty
/// request (`--python ''`, `--python ','`, `3.8,`) is refused: it would select nothing, and
/// leaving the option out already means every interpreter.
pub fn split_requests(values: &[String], flag: &str) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = Vec::new();
    for value in values {
        if value.split(',').any(|p| p.trim().is_empty()) {
            return Err(Error::Usage(format!(
                "{flag} '{value}' holds an empty request: give a version (3.8), a path or a name, separated by commas; leave {flag} out to use every interpreter"
            )));
        }
        let mut previous_is_specifier = false;
        for piece in value.split(',').map(str::trim) {
            let is_specifier = piece.starts_with(['<', '>', '=', '!', '~']);
            if is_specifier && previous_is_specifier {
                let last = out.last_mut().expect("a previous specifier");
                last.push(',');
                last.push_str(piece);
            } else {
                out.push(piece.to_string());
            }
            previous_is_specifier = is_specifier;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitting() {
        let s = |v: &[&str]| {
            split_requests(
                &v.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
                "--python",
            )
            .unwrap()
        };
        assert_eq!(s(&["3.8,3.9"]), vec!["3.8", "3.9"]);
        assert_eq!(s(&[">=3.8,<3.11"]), vec![">=3.8,<3.11"]);
        assert_eq!(
            s(&[">=3.8,<3.11,pypy", "2.7"]),
            vec![">=3.8,<3.11", "pypy", "2.7"]
        );
        assert_eq!(s(&["3.8,>=3.11"]), vec!["3.8", ">=3.11"]);
        for empty in ["", " ", ",", "3.8,", ",3.8", "3.8,,3.9"] {
            let e = split_requests(&[empty.to_string()], "--python").unwrap_err();
            assert!(e.to_string().contains("empty request"), "{empty:?}: {e}");
        }
    }

    fn interpreter(
        implementation: Implementation,
        version: &str,
        debug: bool,
        ft: bool,
    ) -> Interpreter {
        let mut i = Interpreter::for_tests(implementation, version);
        i.debug = debug;
        i.free_threaded = ft;
        i
    }

    #[test]
    fn abi_flags_select_builds() {
        let release = interpreter(Implementation::Cpython, "3.14.10", false, false);
        let debug = interpreter(Implementation::Cpython, "3.14.10", true, false);
        let ft = interpreter(Implementation::Cpython, "3.14.10", false, true);
        let ft_debug = interpreter(Implementation::Cpython, "3.14.10", true, true);
        let other = interpreter(Implementation::Cpython, "3.15.2", true, false);
        let pypy = interpreter(Implementation::Pypy, "3.11.17", false, false);
        let all = [&release, &debug, &ft, &ft_debug, &other, &pypy];
        let chosen = |request: &str| -> Vec<usize> {
            let r = PythonRequest::parse(request).unwrap();
            (0..all.len()).filter(|&n| r.selects(all[n])).collect()
        };
        assert_eq!(chosen("3.14"), vec![0, 1, 2, 3]);
        assert_eq!(chosen("3.14d"), vec![1]);
        assert_eq!(chosen("cpython3.14d"), vec![1]);
        assert_eq!(chosen("cpython-3.14d"), vec![1]);
        assert_eq!(chosen("3.14t"), vec![2]);
        assert_eq!(chosen("3.14td"), vec![3]);
        assert_eq!(chosen("3d"), vec![1, 4]);
        assert_eq!(chosen("3.14.10d"), vec![1]);
        assert_eq!(chosen("pypy3.14d"), Vec::<usize>::new());
        assert_eq!(chosen("pypy3.11"), vec![5]);
        assert_eq!(chosen("3.15"), vec![4]);
    }

    #[test]
    fn kinds() {
        assert!(matches!(
            PythonRequest::parse("3.8").unwrap(),
            PythonRequest::Version(_)
        ));
        assert!(matches!(
            PythonRequest::parse("pypy3.9").unwrap(),
            PythonRequest::Implementation(Implementation::Pypy, Some(_))
        ));
        assert!(matches!(
            PythonRequest::parse("cpython").unwrap(),
            PythonRequest::Implementation(Implementation::Cpython, None)
        ));
        assert!(matches!(
            PythonRequest::parse("/usr/bin/python3").unwrap(),
            PythonRequest::Path(_)
        ));
        assert!(matches!(
            PythonRequest::parse("debian-dbg").unwrap(),
            PythonRequest::Name(_)
        ));
        assert!(PythonRequest::parse("3.x").is_err());
        assert!(matches!(
            PythonRequest::parse("3.15d").unwrap(),
            PythonRequest::Build {
                implementation: None,
                debug: true,
                free_threaded: false,
                ..
            }
        ));
        assert!(matches!(
            PythonRequest::parse("cpython3.14td").unwrap(),
            PythonRequest::Build {
                implementation: Some(Implementation::Cpython),
                debug: true,
                free_threaded: true,
                ..
            }
        ));
        assert!(matches!(
            PythonRequest::parse("3.13t").unwrap(),
            PythonRequest::Build {
                debug: false,
                free_threaded: true,
                ..
            }
        ));
        // Not a version with ABI flags: a name, or a version request that is an error.
        assert!(matches!(
            PythonRequest::parse("sid-python3.14d").unwrap(),
            PythonRequest::Name(_)
        ));
        assert!(PythonRequest::parse("3.14dt").is_err());
        assert!(PythonRequest::parse("cpython3.14x").is_err());
        assert!(matches!(
            PythonRequest::parse("cpython@v3.8.1").unwrap(),
            PythonRequest::Name(_)
        ));
    }
}

/// The interpreters a run uses, from the discovered ones and the user's requests.
#[derive(Debug, Default)]
pub struct Selection {
    /// Usable interpreters, plus stand-ins for requested ones that could not be used.
    pub interpreters: Vec<Interpreter>,
    /// Requests that matched nothing.
    pub missing: Vec<String>,
}

/// Select interpreters for `requests` (all usable ones when there are none). A requested path
/// that discovery did not find is probed now; a requested path or name that cannot be used
/// becomes a stand-in whose runs are `env-error`.
pub async fn select(
    discovery: &super::discover::Discovery,
    requests: &[String],
    prober: &super::probe::Prober,
) -> Result<Selection, Error> {
    let mut selection = Selection::default();
    if requests.is_empty() {
        selection.interpreters = discovery.interpreters.clone();
        return Ok(selection);
    }
    let mut chosen: Vec<Interpreter> = Vec::new();
    let push = |chosen: &mut Vec<Interpreter>, i: Interpreter| {
        if !chosen
            .iter()
            .any(|c| c.executable == i.executable && c.unusable.is_none())
        {
            chosen.push(i);
        }
    };
    for text in requests {
        let request = PythonRequest::parse(text)?;
        let found: Vec<Interpreter> = discovery
            .interpreters
            .iter()
            .filter(|i| request.selects(i))
            .cloned()
            .collect();
        if !found.is_empty() {
            found.into_iter().for_each(|i| push(&mut chosen, i));
            continue;
        }
        match &request {
            PythonRequest::Path(path) => {
                let canonical = match std::fs::canonicalize(path) {
                    Ok(c) => c,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        selection.missing.push(text.clone());
                        continue;
                    }
                    Err(e) => {
                        // A loop of symbolic links (ELOOP), a folder that cannot be read...
                        let why = if crate::sys::fs::is_symlink_loop(&e) {
                            "it is a loop of symbolic links".to_string()
                        } else {
                            e.to_string()
                        };
                        return Err(Error::Usage(format!(
                            "--python {text}: {} cannot be resolved: {why}",
                            path.display()
                        )));
                    }
                };
                let result = prober.probe(&canonical).await.and_then(|info| {
                    super::discover::interpreter_from(&canonical, info, vec![Source::Request], None)
                });
                match result {
                    Ok(i) => push(&mut chosen, i),
                    Err(reason) => chosen.push(Interpreter::stand_in(&super::Unusable {
                        path: canonical,
                        sources: vec![Source::Request],
                        name: None,
                        reason: reason.to_string(),
                    })),
                }
            }
            PythonRequest::Name(name) => match discovery
                .unusable
                .iter()
                .find(|u| u.name.as_deref() == Some(name))
            {
                Some(broken) => chosen.push(Interpreter::stand_in(broken)),
                None => selection.missing.push(text.clone()),
            },
            _ => selection.missing.push(text.clone()),
        }
    }
    let (mut usable, broken): (Vec<_>, Vec<_>) =
        chosen.into_iter().partition(|i| i.unusable.is_none());
    super::discover::sort_and_label(&mut usable);
    usable.extend(broken);
    selection.interpreters = usable;
    Ok(selection)
}
