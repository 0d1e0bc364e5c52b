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
    /// Print what each interpreter (each pair of a round trip) is expected to show and the
    /// rule that decides it, without running anything (implied by --python and --json)
    #[arg(long)]
    pub expected: bool,
    /// Print the expected matrix as JSON
    #[arg(long)]
    pub json: bool,
    /// With --expected: the folder of recorded pickles whose producers are shown beside the
    /// live ones [default: cases/pickles, when it is there; with --corpus and no path, the
    /// corpus's own]
    #[arg(long, value_name = "DIR")]
    pub pickles: Option<PathBuf>,
    #[command(flatten)]
    pub pythons: PythonOptions,
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
    /// Run one shard of the selected cases: `hash:M/N` (by a hash of each case's name with
    /// params: stable when cases are added) or `slice:M/N` (round-robin), shard M of N counted
    /// from 1; every run of a case with one param combination (all its round trips) is in one
    /// shard. `crosspickle merge` joins the shards' JSON
    #[arg(long, value_name = "SCHEME:M/N", value_parser = crate::partition::Partition::parse)]
    pub partition: Option<crate::partition::Partition>,
    /// Run a run whose verdict fails again, in a fresh process, up to N times (0 to 100); one
    /// that then matches its expectation is `flaky` [default: 0]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub retries: Option<u32>,
    /// Run every selected run N times, each in a fresh process (1 to 10000; a case's own
    /// `repeat` counts when larger): its verdict is the worst of them and reports count what
    /// the attempts did (`7/20 crash`). A repeated run is not retried [default: 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub repeat: Option<u32>,
    #[command(flatten)]
    pub flaky: FlakyOptions,
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
    /// Quieter: no matrix and no details of runs, only the short summary of the failing runs
    /// and the summary line (as pytest's -q with --tb=no)
    #[arg(short = 'q', long = "quiet", conflicts_with = "verbose")]
    pub quiet: bool,
    /// List the N slowest runs at the end (0: every run)
    #[arg(long, value_name = "N")]
    pub durations: Option<usize>,
    /// Run only what failed (or was flaky) in the last runs made from this folder, kept in the
    /// cache folder; everything selected when there is no such run (as pytest's --lf)
    #[arg(long = "last-failed", visible_alias = "lf")]
    pub last_failed: bool,
    /// The folder of recorded pickles (`crosspickle record`): each producer recorded there is a
    /// producer of the round trips beside the live ones, labelled `recorded:cpython-2.7.18`
    /// [default: cases/pickles, when it is there; with --corpus and no path, the corpus's own]
    #[arg(long, value_name = "DIR")]
    pub pickles: Option<PathBuf>,
    #[command(flatten)]
    pub reports: ReportOptions,
    /// Install the cases' `requires` without an index: only from the installer's cache and --find-links
    #[arg(long)]
    pub offline: bool,
    /// A folder or URL of distributions for `requires`, passed to the installer (repeatable)
    #[arg(long = "find-links", value_name = "DIR")]
    pub find_links: Vec<String>,
}

/// Whether a flaky run (failed, then as expected when run again) fails the run.
#[derive(Debug, Args, Clone)]
pub struct FlakyOptions {
    /// `pass`: a flaky run does not fail the run (as cargo-nextest's default); `fail`: it does
    #[arg(long, value_name = "RESULT", value_enum, default_value_t = FlakyResult::Pass)]
    pub flaky_result: FlakyResult,
}

/// `--flaky-result`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FlakyResult {
    Pass,
    Fail,
}

impl FlakyOptions {
    /// Do `results` fail: a failing verdict, a conflict, or, with `--flaky-result fail`, a
    /// flaky run?
    pub fn failed(&self, results: &crate::results::Results) -> bool {
        results.failed()
            || (self.flaky_result == FlakyResult::Fail
                && results
                    .runs
                    .iter()
                    .any(|r| r.verdict == crate::verdict::Verdict::Flaky))
    }
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
    /// `--json FILE`, `--junit-xml FILE`…: one flag per [`crate::report::FORMATS`].
    #[command(flatten)]
    pub files: ReportFlags,
    /// Colour: auto (not with NO_COLOR or off a terminal), always, never
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// GitHub Actions annotations of the failing cases, on the lines of their files: auto
    /// (when GITHUB_ACTIONS is true), always, never
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = AnnotationsChoice::Auto)]
    pub github_annotations: AnnotationsChoice,
    /// The terminal's matrix shows only the rows with a failing run (the report files keep
    /// every row)
    #[arg(long)]
    pub failures_only: bool,
}

/// `--github-annotations`' values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AnnotationsChoice {
    /// When GITHUB_ACTIONS is `true` (as on GitHub's runners)
    Auto,
    Always,
    Never,
}

impl ReportOptions {
    /// How the terminal's matrix fits: `COLUMNS`, else the width of the terminal stdout is,
    /// else (off a terminal, as in a CI log) no limit; off a terminal names are never cut.
    /// Every row, or only the failing ones with `--failures-only` or with `CI` set.
    pub fn layout(&self) -> crate::report::terminal::Layout {
        use std::io::IsTerminal;
        let from_env = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0);
        let terminal = std::io::stdout().is_terminal();
        let width = from_env
            .or_else(|| {
                terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| w.0 as usize)
            })
            .unwrap_or(if terminal { 80 } else { usize::MAX });
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        let failures_only = match (self.failures_only, ci) {
            (true, _) => Some("--failures-only"),
            (false, true) => Some("CI is set"),
            (false, false) => None,
        };
        crate::report::terminal::Layout {
            width,
            failures_only,
            keep_names: !terminal,
        }
    }

    /// The report files asked for; two options naming the same file are refused (one report
    /// would silently overwrite the other).
    pub fn files(&self) -> Result<crate::report::ReportFiles, Error> {
        let mut seen: Vec<(&str, &PathBuf, PathBuf)> = Vec::new();
        for (format, path) in &self.files.0 .0 {
            let flag = format.flag;
            let identity = file_identity(path);
            if let Some((other, other_path, _)) = seen.iter().find(|(_, _, id)| *id == identity) {
                return Err(Error::Usage(format!(
                    "--{other} {} and --{flag} {} name the same file: one report would overwrite the other; give each its own file",
                    other_path.display(),
                    path.display()
                )));
            }
            seen.push((flag, path, identity));
        }
        Ok(self.files.0.clone())
    }
}

/// A `--FLAG FILE` option for each report format of [`crate::report::FORMATS`], made from
/// that table (so a new format needs no line here).
#[derive(Debug, Clone, Default)]
pub struct ReportFlags(pub crate::report::ReportFiles);

impl clap::Args for ReportFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        crate::report::FORMATS.iter().fold(cmd, |cmd, format| {
            cmd.arg(
                clap::Arg::new(format.flag)
                    .long(format.flag)
                    .value_name("FILE")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(format.help),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for ReportFlags {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = ReportFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        for format in crate::report::FORMATS {
            if let Some(path) = matches.get_one::<PathBuf>(format.flag) {
                let files = &mut self.0 .0;
                files.retain(|(f, _)| f.flag != format.flag);
                files.push((format, path.clone()));
            }
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use clap::{Args as _, FromArgMatches as _};

    use super::*;

    fn parse(args: &[&str]) -> Result<ReportOptions, clap::Error> {
        let cmd = ReportOptions::augment_args(clap::Command::new("t"));
        let matches = cmd.try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))?;
        ReportOptions::from_arg_matches(&matches)
    }

    #[test]
    fn a_flag_for_each_format() {
        let options = parse(&["--html", "r.html", "--json", "r.json"]).unwrap();
        let files = options.files().unwrap();
        let got: Vec<(&str, &str)> = files
            .0
            .iter()
            .map(|(f, p)| (f.flag, p.to_str().unwrap()))
            .collect();
        assert_eq!(got, [("json", "r.json"), ("html", "r.html")]);
        let every: Vec<String> = crate::report::FORMATS
            .iter()
            .flat_map(|f| [format!("--{}", f.flag), format!("{}.out", f.flag)])
            .collect();
        let every: Vec<&str> = every.iter().map(String::as_str).collect();
        let all = parse(&every).unwrap().files().unwrap();
        assert_eq!(all.0.len(), crate::report::FORMATS.len());
        let same = parse(&["--junit-xml", "x", "--markdown", "./x"]).unwrap();
        let e = same.files().unwrap_err().to_string();
        assert!(
            e.contains("--junit-xml x and --markdown ./x name the same file"),
            "{e}"
        );
        assert!(parse(&["--pdf", "x"]).is_err());
    }
}
