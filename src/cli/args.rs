//! The arguments several commands share (where interpreters come from, which reports to
//! write) and those of `run`, `pythons` and `list`; each command's own are with the command.

use std::path::PathBuf;

use clap::Args;

use super::settings::{ColorChoice, Given, Settings};
use crate::errors::Error;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Case files or folders [default: cases]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Print Markdown (as docs/corpus.md is made)
    #[arg(long)]
    pub markdown: bool,
}

/// Where interpreters come from and which ones to use.
#[derive(Debug, Args, Clone)]
pub struct PythonOptions {
    /// Interpreters to use: `3.8`, `3.8.18`, `>=3.8,<3.11`, `cpython3.12`, `pypy3.9`, a path, or
    /// a name from pythons.toml. Repeatable, and comma-separated. Default: every one found.
    #[arg(short = 'p', long = "python", value_name = "REQUEST")]
    pub python: Vec<String>,
    /// A request that matches nothing is a warning, not an error (ignored when CI is set)
    #[arg(long)]
    pub skip_missing: bool,
    /// The pythons.toml to read [default: ./pythons.toml when there is one]
    #[arg(long, value_name = "FILE", env = "CROSSPICKLE_PYTHONS_TOML")]
    pub pythons_toml: Option<PathBuf>,
    /// Where probe answers and environments are cached
    /// [default: $XDG_CACHE_HOME/crosspickle or ~/.cache/crosspickle]
    #[arg(long, value_name = "DIR", env = "CROSSPICKLE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Probe every interpreter again instead of trusting the cache
    #[arg(long)]
    pub refresh: bool,
    /// Seconds an interpreter has to answer the probe
    #[arg(long, value_name = "SECONDS", default_value_t = 20.0, hide = true)]
    pub probe_timeout: f64,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Case files or folders [default: cases]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
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
    /// Python processes at once [default: the number of cores]
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
    /// The report files asked for.
    pub fn files(&self) -> crate::report::ReportFiles {
        crate::report::ReportFiles {
            json: self.json.clone(),
            junit_xml: self.junit_xml.clone(),
            markdown: self.markdown.clone(),
            html: self.html.clone(),
        }
    }
}

impl PythonOptions {
    /// The pythons.toml asked for, else `./pythons.toml` when there is one.
    pub fn config(&self) -> Result<crate::python::config::PythonsConfig, Error> {
        match &self.pythons_toml {
            Some(path) => crate::python::config::PythonsConfig::load(path),
            None => {
                let default = PathBuf::from("pythons.toml");
                if default.is_file() {
                    crate::python::config::PythonsConfig::load(&default)
                } else {
                    Ok(Default::default())
                }
            }
        }
    }
}

impl RunArgs {
    pub fn settings(&self) -> Result<Settings, Error> {
        Settings::resolve(Given {
            paths: &self.paths,
            jobs: self.jobs,
            cache_dir: self.pythons.cache_dir.as_deref(),
            timeout: self.timeout,
            find_links: &self.find_links,
        })
    }
}
