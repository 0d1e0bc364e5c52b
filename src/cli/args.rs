//! The arguments several commands share (where interpreters come from, which reports to
//! write) and those of `run`, `pythons` and `list`; each command's own are with the command.

use std::path::PathBuf;

use clap::Args;

use super::settings::{ColorChoice, Given, Settings};
use crate::errors::Error;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Case files or folders [default: cases, or none with --corpus]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// The corpus shipped inside crosspickle, before PATHS (alone when no PATHS are given)
    #[arg(long)]
    pub corpus: bool,
    /// Print Markdown (as docs/corpus.md is made)
    #[arg(long)]
    pub markdown: bool,
    /// Only the cases whose name (with params), path or tags match this expression, as pytest's -k
    #[arg(short = 'k', value_name = "EXPRESSION")]
    pub keyword: Option<String>,
    /// Only the cases with this tag (repeatable: any of them)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
}

/// Where interpreters come from and which ones to use.
#[derive(Debug, Args, Clone)]
pub struct PythonOptions {
    /// Interpreters to use: `3.8`, `3.8.18`, `>=3.8,<3.11`, `cpython3.12`, `pypy3.9`, a version
    /// with ABI flags for debug or free-threaded builds (`3.14d`, `cpython3.15d`, `3.13t`), a
    /// path, or a name from pythons.toml. Repeatable, and comma-separated. Default: every one found.
    #[arg(short = 'p', long = "python", value_name = "REQUEST")]
    pub python: Vec<String>,
    /// A request that matches nothing is a warning, not an error (ignored when CI is set)
    #[arg(long)]
    pub skip_missing: bool,
    /// The pythons.toml to read; repeatable: the names of every file, a discovery source off
    /// when one file switches it off [default: ./pythons.toml when there is one]
    #[arg(long, value_name = "FILE", env = "CROSSPICKLE_PYTHONS_TOML")]
    pub pythons_toml: Vec<PathBuf>,
    /// Where probe answers and environments are cached
    /// [default: $XDG_CACHE_HOME/crosspickle or ~/.cache/crosspickle]
    #[arg(long, value_name = "DIR", env = "CROSSPICKLE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Probe every interpreter again instead of trusting the cache
    #[arg(long)]
    pub refresh: bool,
    /// Seconds an interpreter has to answer the probe [default: 20]
    #[arg(long, value_name = "SECONDS", hide = true)]
    pub probe_timeout: Option<f64>,
    /// Install requested interpreters with `uv python install` into the cache folder: never,
    /// auto (a --python request nothing found matches), always (every request uv can serve,
    /// even one found)
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = DownloadPython::Never, env = "CROSSPICKLE_DOWNLOAD_PYTHON")]
    pub download_python: DownloadPython,
}

/// `--download-python`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DownloadPython {
    /// Use what is installed
    Never,
    /// Install a request that nothing found matches
    Auto,
    /// Install every request uv can serve, also one that something found matches
    Always,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Case files or folders [default: cases, or none with --corpus]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Also run the corpus shipped inside crosspickle, before PATHS (alone when no PATHS are given)
    #[arg(long)]
    pub corpus: bool,
    #[command(flatten)]
    pub pythons: PythonOptions,
    /// Round trips: only these interpreters produce pickles (narrows --python's selection)
    #[arg(long = "dump-python", value_name = "REQUEST")]
    pub dump_python: Vec<String>,
    /// Round trips: only these interpreters load pickles (narrows --python's selection)
    #[arg(long = "load-python", value_name = "REQUEST")]
    pub load_python: Vec<String>,
    /// Only the cases whose name (with params), path or tags match this expression, as pytest's -k
    #[arg(short = 'k', value_name = "EXPRESSION")]
    pub keyword: Option<String>,
    /// Only the cases with this tag (repeatable: any of them)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Stop at the first run whose verdict fails
    #[arg(short = 'x', long = "exitfirst")]
    pub exit_first: bool,
    /// Time limit of each run in seconds, instead of the cases' own
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Python processes at once, 1 to 1024 [default: the number of cores]
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// How each run gets a fresh interpreter: forked from a server per interpreter, or started
    /// for the run alone (a case's `isolation: exec` always starts one) [default: fork where
    /// the platform can watch a forked run (Linux), else exec]
    #[arg(long, value_name = "HOW", value_enum)]
    pub isolation: Option<IsolationArg>,
    /// Show every run as it finishes
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    #[command(flatten)]
    pub reports: ReportOptions,
    /// Install the cases' `requires` without an index: only from the installer's cache and --find-links
    #[arg(long)]
    pub offline: bool,
    /// A folder or URL of distributions for `requires`, passed to the installer (repeatable)
    #[arg(long = "find-links", value_name = "DIR")]
    pub find_links: Vec<String>,
}

/// `--isolation`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IsolationArg {
    /// A fresh interpreter started for every run
    Exec,
    /// A child forked for every run from a server that started the interpreter
    Fork,
}

#[derive(Debug, Args)]
pub struct PythonsArgs {
    #[command(flatten)]
    pub pythons: PythonOptions,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
    /// Say what each unusable candidate printed when probed
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
}

/// The reports a run or a merge writes, and the terminal's colour.
#[derive(Debug, Args, Clone)]
pub struct ReportOptions {
    /// Write the results as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write JUnit XML to FILE (one testsuite per interpreter), for CI systems
    #[arg(long, value_name = "FILE")]
    pub junit_xml: Option<PathBuf>,
    /// Write a Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML page to FILE
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Colour: auto (not with NO_COLOR or off a terminal), always, never
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

impl ReportOptions {
    /// The report files asked for; two options naming the same file are refused (one report
    /// would silently overwrite the other).
    pub fn files(&self) -> Result<crate::report::ReportFiles, Error> {
        let named = [
            ("--json", &self.json),
            ("--junit-xml", &self.junit_xml),
            ("--markdown", &self.markdown),
            ("--html", &self.html),
        ];
        let mut seen: Vec<(&str, &PathBuf, PathBuf)> = Vec::new();
        for (flag, path) in named {
            let Some(path) = path else { continue };
            let identity = file_identity(path);
            if let Some((other, other_path, _)) = seen.iter().find(|(_, _, id)| *id == identity) {
                return Err(Error::Usage(format!(
                    "{other} {} and {flag} {} name the same file: one report would overwrite the other; give each its own file",
                    other_path.display(),
                    path.display()
                )));
            }
            seen.push((flag, path, identity));
        }
        Ok(crate::report::ReportFiles {
            json: self.json.clone(),
            junit_xml: self.junit_xml.clone(),
            markdown: self.markdown.clone(),
            html: self.html.clone(),
        })
    }
}

/// What a path names, however it is spelt: absolute, `.` and `..` resolved, symbolic links
/// of the folders (and of the file, when it exists) followed.
fn file_identity(path: &std::path::Path) -> PathBuf {
    use std::path::Component;
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut normal = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    match (normal.parent(), normal.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or(normal.clone()),
        _ => normal,
    }
}

impl PythonOptions {
    /// The pythons.toml files asked for, else `./pythons.toml` when there is one.
    pub fn config(&self) -> Result<crate::python::config::PythonsConfig, Error> {
        match self.pythons_toml.as_slice() {
            [] => {
                let default = PathBuf::from("pythons.toml");
                if default.is_file() {
                    crate::python::config::PythonsConfig::load(&default)
                } else {
                    Ok(Default::default())
                }
            }
            files => crate::python::config::PythonsConfig::load_all(files),
        }
    }
}

impl RunArgs {
    pub fn settings(&self) -> Result<Settings, Error> {
        Settings::resolve(Given {
            paths: &self.paths,
            corpus: self.corpus,
            jobs: self.jobs,
            cache_dir: self.pythons.cache_dir.as_deref(),
            timeout: self.timeout,
            find_links: &self.find_links,
            probe_timeout: self.pythons.probe_timeout,
            verbose: self.verbose,
        })
    }
}
