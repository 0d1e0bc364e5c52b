//! The command line's values resolved once: every default (the `cases/` folder unless
//! `--corpus` is given, the number of jobs, the cache folder) and every check of a value (the
//! time limit) is made here, and the commands read the one [`Settings`] value.

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::case::Case;
use crate::errors::Error;

/// Where cases are looked for when no path is given.
pub const DEFAULT_CASES: &str = "cases";

/// What a command was given, before defaults and checks.
#[derive(Debug, Default)]
pub struct Given<'a> {
    pub paths: &'a [PathBuf],
    /// `--corpus`: the cases shipped inside the binary, besides `paths`.
    pub corpus: bool,
    pub jobs: Option<usize>,
    pub cache_dir: Option<&'a Path>,
    pub timeout: Option<f64>,
    pub find_links: &'a [String],
}

/// A command's settings, defaults applied and values checked.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Case files or folders: as given, else `cases/` unless `--corpus` is given (then none).
    pub paths: Vec<PathBuf>,
    /// `--corpus`: the corpus shipped inside the binary comes first (see [`crate::corpus`]).
    pub corpus: bool,
    /// No path and no `--corpus` were given: `paths` is the default `cases/`.
    pub default_paths: bool,
    /// Processes at once (`-j`, at least 1; default: the number of cores).
    pub jobs: usize,
    /// The cache folder: `--cache-dir` or `CROSSPICKLE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/crosspickle` or `~/.cache/crosspickle`; none without a home.
    pub cache_dir: Option<PathBuf>,
    /// The time limit of every run in seconds (`--timeout`), a positive number.
    pub timeout: Option<f64>,
    /// `--find-links` folders made absolute (the installer may run elsewhere); URLs as given.
    pub find_links: Vec<String>,
}

impl Settings {
    pub fn resolve(given: Given<'_>) -> Result<Settings, Error> {
        if let Some(t) = given.timeout {
            if !(t.is_finite() && t > 0.0) {
                return Err(Error::Usage(format!(
                    "--timeout must be a positive number of seconds, not {t}"
                )));
            }
        }
        Ok(Settings {
            paths: if given.paths.is_empty() && !given.corpus {
                vec![PathBuf::from(DEFAULT_CASES)]
            } else {
                given.paths.to_vec()
            },
            corpus: given.corpus,
            default_paths: given.paths.is_empty() && !given.corpus,
            jobs: given.jobs.unwrap_or_else(crate::sys::cores).max(1),
            cache_dir: given
                .cache_dir
                .map(Path::to_path_buf)
                .or_else(default_cache_dir),
            timeout: given.timeout,
            find_links: given.find_links.iter().map(|f| absolute_link(f)).collect(),
        })
    }

    /// The cases to work on: the corpus's with `--corpus`, then those under the paths.
    pub fn load_cases(&self) -> Result<Vec<Case>, Error> {
        self.check_default_paths()?;
        crate::corpus::load(&self.paths, self.corpus)
    }

    /// When nothing was named and there is no `cases/` here, an error that says what to do (a
    /// newcomer's first command, in a folder of their own).
    pub fn check_default_paths(&self) -> Result<(), Error> {
        if self.default_paths && !Path::new(DEFAULT_CASES).exists() {
            return Err(Error::Usage(format!(
                "no `{DEFAULT_CASES}/` folder here to take cases from: name case files or folders, \
                 add --corpus to use the corpus shipped with crosspickle, or write a starter \
                 `{DEFAULT_CASES}/` with `crosspickle init`"
            )));
        }
        Ok(())
    }

    /// The cache folder, for the commands that cannot work without one.
    pub fn required_cache_dir(&self) -> Result<&Path, Error> {
        self.cache_dir.as_deref().ok_or_else(|| {
            Error::Usage(
                "no cache folder: pass --cache-dir or set CROSSPICKLE_CACHE_DIR (or HOME)".into(),
            )
        })
    }
}

fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("crosspickle"))
}

/// A --find-links folder made absolute; a URL (or anything that is not there) as it is.
fn absolute_link(link: &str) -> String {
    let path = Path::new(link);
    if path.exists() {
        std::path::absolute(path)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| link.to_string())
    } else {
        link.to_string()
    }
}

/// `--color`: auto (not with NO_COLOR, nor off a terminal), always, never.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// The terminal reporter's style for this choice.
    pub fn style(self) -> crate::report::terminal::Style {
        crate::report::terminal::Style::detect(match self {
            ColorChoice::Auto => None,
            ColorChoice::Always => Some(true),
            ColorChoice::Never => Some(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_checks() {
        let s = Settings::resolve(Given::default()).unwrap();
        assert_eq!(s.paths, [PathBuf::from("cases")]);
        assert_eq!(s.jobs, crate::sys::cores());
        assert_eq!(s.timeout, None);
        assert!(!s.corpus);
        let corpus_only = Settings::resolve(Given {
            corpus: true,
            ..Given::default()
        })
        .unwrap();
        assert!(corpus_only.paths.is_empty() && corpus_only.corpus);
        let given = [PathBuf::from("a.yaml")];
        let s = Settings::resolve(Given {
            paths: &given,
            corpus: true,
            jobs: Some(3),
            cache_dir: Some(Path::new("/c")),
            timeout: Some(1.5),
            find_links: &["https://example.invalid/w".to_string()],
        })
        .unwrap();
        assert_eq!(
            (
                s.paths.as_slice(),
                s.jobs,
                s.cache_dir.as_deref(),
                s.timeout
            ),
            (&given[..], 3, Some(Path::new("/c")), Some(1.5))
        );
        assert!(s.corpus, "--corpus with paths: both");
        assert_eq!(s.find_links, ["https://example.invalid/w"]);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = Settings::resolve(Given {
                timeout: Some(bad),
                ..Given::default()
            })
            .unwrap_err();
            assert!(e.to_string().starts_with("--timeout must be"), "{e}");
        }
    }
}
