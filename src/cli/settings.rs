//! The command line's values resolved once: every default (the `cases/` folder unless
//! `--corpus` is given, the number of jobs, the cache folder) and every check of a value
//! (time limits, the number of jobs) is made here, and the commands read the one
//! [`Settings`] value. A value that would make a conversion fail later (a time limit of
//! 1e20 s, `-j 0`) is bad input here, exit 2.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::ValueEnum;

use crate::case::Case;
use crate::errors::Error;

/// Where cases are looked for when no path is given.
pub const DEFAULT_CASES: &str = "cases";

/// The most Python processes at once (`-j`).
pub const MAX_JOBS: usize = 1024;

/// How long an interpreter has to answer the probe, unless `--probe-timeout` says otherwise.
pub const DEFAULT_PROBE_TIMEOUT_S: f64 = 20.0;

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
    pub probe_timeout: Option<f64>,
    /// `-v`: say more (what a candidate that is no interpreter printed, ...).
    pub verbose: bool,
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
    /// How long an interpreter has to answer the probe.
    pub probe_timeout: Duration,
    /// `-v`.
    pub verbose: bool,
}

impl Settings {
    pub fn resolve(given: Given<'_>) -> Result<Settings, Error> {
        if let Some(t) = given.timeout {
            seconds("--timeout", t)?;
        }
        let probe_timeout = seconds(
            "--probe-timeout",
            given.probe_timeout.unwrap_or(DEFAULT_PROBE_TIMEOUT_S),
        )?;
        let jobs = match given.jobs {
            None => crate::sys::cores().clamp(1, MAX_JOBS),
            Some(0) => {
                return Err(Error::Usage(
                    "-j 0: give the number of Python processes at once, at least 1 (leave -j out for one per core)".into(),
                ))
            }
            Some(n) if n > MAX_JOBS => {
                return Err(Error::Usage(format!(
                    "-j {n} is more processes at once than crosspickle starts: at most {MAX_JOBS}"
                )))
            }
            Some(n) => n,
        };
        Ok(Settings {
            paths: if given.paths.is_empty() && !given.corpus {
                vec![PathBuf::from(DEFAULT_CASES)]
            } else {
                given.paths.to_vec()
            },
            corpus: given.corpus,
            default_paths: given.paths.is_empty() && !given.corpus,
            jobs,
            // Absolute: what is kept in it names its own files (`bisect --keep` writes the
            // paths of kept interpreters), and those names must hold from any folder.
            cache_dir: given
                .cache_dir
                .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf()))
                .or_else(default_cache_dir),
            timeout: given.timeout,
            find_links: given.find_links.iter().map(|f| absolute_link(f)).collect(),
            probe_timeout,
            verbose: given.verbose,
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

/// A time limit given as `flag`: a positive number of seconds, at most a week (what a
/// [`Duration`] and the clocks can hold, with room to spare).
pub fn seconds(flag: &str, value: f64) -> Result<Duration, Error> {
    let max = crate::case::MAX_TIMEOUT_S;
    let shown = crate::case::python_float_repr(value);
    if !(value.is_finite() && value > 0.0) {
        return Err(Error::Usage(format!(
            "{flag} must be a positive number of seconds, not {shown}"
        )));
    }
    if value > max {
        return Err(Error::Usage(format!(
            "{flag} {shown} is too long: at most {max} seconds (a week)"
        )));
    }
    Ok(Duration::from_secs_f64(value))
}

/// `$XDG_CACHE_HOME/crosspickle` (a relative XDG_CACHE_HOME is ignored, as the XDG base
/// directory specification says), else `~/.cache/crosspickle`.
fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|v| v.is_absolute())
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
            probe_timeout: None,
            verbose: false,
        })
        .unwrap();
        assert_eq!(
            (
                s.paths.as_slice(),
                s.jobs,
                s.cache_dir.as_deref(),
                s.timeout
            ),
            // `/c` is absolute on Unix; on Windows it gets the current drive.
            (
                &given[..],
                3,
                Some(std::path::absolute("/c").unwrap().as_path()),
                Some(1.5)
            )
        );
        assert!(s.corpus, "--corpus with paths: both");
        let relative = Settings::resolve(Given {
            cache_dir: Some(Path::new("cache")),
            ..Given::default()
        })
        .unwrap();
        assert_eq!(
            relative.cache_dir,
            Some(std::env::current_dir().unwrap().join("cache")),
            "a relative cache folder is made absolute"
        );
        assert_eq!(s.find_links, ["https://example.invalid/w"]);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = Settings::resolve(Given {
                timeout: Some(bad),
                ..Given::default()
            })
            .unwrap_err();
            assert!(e.to_string().starts_with("--timeout must be"), "{e}");
        }
        for (timeout, probe) in [(Some(1e20), None), (None, Some(-1.0)), (None, Some(1e300))] {
            let e = Settings::resolve(Given {
                timeout,
                probe_timeout: probe,
                ..Given::default()
            })
            .unwrap_err();
            assert!(e.to_string().contains("timeout"), "{e}");
        }
        for (jobs, error) in [(0, "-j 0"), (1_000_000, "at most 1024")] {
            let e = Settings::resolve(Given {
                jobs: Some(jobs),
                ..Given::default()
            })
            .unwrap_err();
            assert!(e.to_string().contains(error), "{e}");
        }
    }
}
