//! The command line: arguments, and the wiring of load → discover → plan → execute → report.
//! Exit codes: 0 all as expected, 1 a verdict failed, 2 bad input, 130 interrupted.

mod bisect;
mod cache;
mod list;
mod merge;
mod pythons;
mod run;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::errors::Error;

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_INTERRUPTED: i32 = 130;

#[derive(Debug, Parser)]
#[command(
    name = "crosspickle",
    version,
    about = "Run pickle behaviour cases on every installed Python and compare what happened with what was expected",
    args_conflicts_with_subcommands = true,
    after_help = "Without a subcommand, `crosspickle [PATHS] [OPTIONS]` is `crosspickle run`.\nExit codes: 0 all as expected, 1 a verdict failed, 2 bad input, 130 interrupted."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Run cases (the default)
    Run(RunArgs),
    /// List the Python interpreters found, usable or not
    Pythons(PythonsArgs),
    /// List or remove the cached environments of cases with `requires`
    Cache(cache::CacheArgs),
    /// Find where a case's outcome changed: across interpreters, a package's releases, or CPython commits
    Bisect(bisect::BisectArgs),
    /// One test for `git bisect run`: exit 0 while the old outcome holds, 1 when it changed, 125 when it cannot run
    BisectStep(bisect::BisectStepArgs),
    /// Merge the JSON results of several jobs into one matrix and its reports
    Merge(merge::MergeArgs),
    /// Print the catalogue of cases: id, title, tags, links, where the behaviour differs
    List(ListArgs),
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Case files or folders [default: cases]
    #[arg(value_name = "PATHS")]
    paths: Vec<PathBuf>,
    /// Print Markdown (as docs/corpus.md is made)
    #[arg(long)]
    markdown: bool,
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

#[derive(Debug, Args)]
struct PythonsArgs {
    #[command(flatten)]
    pythons: PythonOptions,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
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
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
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
    pub fn cache_dir(&self) -> Option<PathBuf> {
        self.cache_dir.clone().or_else(default_cache_dir)
    }

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

pub fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("crosspickle"))
}

/// A `--timeout` must be a positive number of seconds.
pub fn check_timeout(timeout: Option<f64>) -> Result<(), Error> {
    match timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => Err(Error::Usage(format!(
            "--timeout must be a positive number of seconds, not {t}"
        ))),
        _ => Ok(()),
    }
}

/// Print to stdout; a closed pipe (`crosspickle list | head`) is not an error worth a panic.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// Parse the command line, run, and return the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result = runtime.block_on(async {
        match cli.command {
            Some(Command::Run(args)) => run::run(args).await,
            Some(Command::Pythons(args)) => pythons::pythons(&args.pythons, args.json).await,
            Some(Command::Cache(args)) => cache::cache(&args),
            Some(Command::Bisect(args)) => bisect::bisect(args).await,
            Some(Command::BisectStep(args)) => Ok(bisect::bisect_step(args).await),
            Some(Command::List(args)) => list::list(&args.paths, args.markdown),
            Some(Command::Merge(args)) => merge::merge(&args),
            None => run::run(cli.run).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_USAGE
        }
    }
}
