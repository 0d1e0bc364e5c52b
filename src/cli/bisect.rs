//! `crosspickle bisect` and `crosspickle bisect-step`: arguments, choosing the mode, printing
//! the step log and the boundaries. The searches themselves live in [`crate::bisect`].
//! Exit codes of `bisect`: 0 a change was found, 1 none was (or the ends could not be tested),
//! 2 bad input, 3 a tool (git, pip) or the cache failed, 130 interrupted.

use std::path::PathBuf;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::args::PythonOptions;
use super::failure::{Failure, EXIT_FAILED, EXIT_OK};
use super::interrupt::cancel_on_signals;
use super::settings::{Given, Settings};
use crate::bisect::commits::CommitOptions;
use crate::bisect::package::PackageOptions;
use crate::bisect::{self, OutcomeKey, Report, Step, Target};
use crate::case::Phase;
use crate::errors::Error;
use crate::python::request::{split_requests, PythonRequest};
use crate::python::{Implementation, Interpreter, Source};
use crate::sys::stdout::emit;

#[derive(Debug, Args)]
pub struct BisectArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub pythons: PythonOptions,
    /// Bisect the releases of this package on one interpreter (--python)
    #[arg(long, value_name = "NAME", conflicts_with = "cpython")]
    pub package: Option<String>,
    /// The release or ref with the old outcome [package default: the oldest release]
    #[arg(long, value_name = "VERSION|REF")]
    pub good: Option<String>,
    /// The release or ref with the new outcome [package default: the newest release]
    #[arg(long, value_name = "VERSION|REF")]
    pub bad: Option<String>,
    /// The releases to consider, instead of asking pip (comma-separated)
    #[arg(
        long,
        value_name = "V1,V2,...",
        value_delimiter = ',',
        requires = "package"
    )]
    pub versions: Vec<String>,
    /// A round trip's side whose package releases are bisected: `load` (the consumer's, the
    /// producer's packages as the case gives them) or `dump` (the reverse)
    #[arg(long, value_name = "SIDE", value_parser = ["load", "dump"], requires = "package")]
    pub side: Option<String>,
    /// A folder of wheels or sdists for pip (`pip --find-links`; repeatable)
    #[arg(long = "find-links", value_name = "DIR", requires = "package")]
    pub find_links: Vec<String>,
    /// Bisect the first-parent commits of this CPython git checkout (needs --good and --bad)
    #[arg(long, value_name = "DIR", requires_all = ["good", "bad"])]
    pub cpython: Option<PathBuf>,
    /// Arguments for CPython's configure, as one string
    #[arg(
        long,
        value_name = "ARGS",
        allow_hyphen_values = true,
        requires = "cpython"
    )]
    pub configure: Option<String>,
    /// make -j for builds; Python processes at once in interpreter mode [default: the number of cores]
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// After a commit bisect, keep the build of REF and name it (default name: cpython@REF) for --python
    #[arg(long, value_name = "REF[=NAME]", requires = "cpython")]
    pub keep: Vec<String>,
    /// Build each commit with this shell command instead of configure and make (see docs/bisect.md)
    #[arg(long, value_name = "COMMAND", hide = true, requires = "cpython")]
    pub build_command: Option<String>,
    /// Write the steps and boundaries as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BisectStepArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub pythons: PythonOptions,
    /// The outcome that counts as old ("good"): pass, fail, error, crash or timeout, with an
    /// optional exception type, e.g. `error:PicklingError`
    #[arg(long, value_name = "OUTCOME")]
    pub old: String,
}

/// The case a bisect or a bisect step runs, and how.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// A case file, or the id of a case under PATHS or in the corpus (--corpus)
    #[arg(value_name = "CASE")]
    pub case: String,
    /// Case files or folders to find the case id in [default: cases, or none with --corpus]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Find the case id in the corpus shipped inside crosspickle too
    #[arg(long)]
    pub corpus: bool,
    /// The params combination to run, `name=value,name2=value2` (needed when the case has several)
    #[arg(long, value_name = "NAME=VALUE,...")]
    pub params: Option<String>,
    /// Time limit of each run in seconds, instead of the case's own
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
}

impl TargetArgs {
    /// The settings of a bisect or a step (`jobs`, `find_links`: what bisect adds).
    fn settings(
        &self,
        pythons: &PythonOptions,
        jobs: Option<usize>,
        find_links: &[String],
    ) -> Result<Settings, Error> {
        Settings::resolve(Given {
            paths: &self.paths,
            corpus: self.corpus,
            jobs,
            cache_dir: pythons.cache_dir.as_deref(),
            timeout: self.timeout,
            find_links,
            probe_timeout: pythons.probe_timeout,
            verbose: false,
        })
    }

    fn load(&self, settings: &Settings) -> Result<Target, Error> {
        if !std::path::Path::new(&self.case).is_file() {
            settings.check_default_paths()?;
        }
        let mut target = Target::load(
            &self.case,
            &settings.paths,
            settings.corpus,
            self.params.as_deref(),
        )?;
        target.timeout = settings.timeout;
        Ok(target)
    }
}

pub async fn bisect(args: BisectArgs) -> Result<i32, Failure> {
    let settings = args
        .target
        .settings(&args.pythons, args.jobs, &args.find_links)?;
    let target = args.target.load(&settings)?;
    let (cancel, _) = cancel_on_signals();
    let mut count = 0;
    let mut on_step = |step: &Step| {
        count += 1;
        emit(&format!("step {count}: {}\n", step.line()));
    };
    emit(&format!("bisect {}\n", target.name()));
    let report = if let Some(repo) = &args.cpython {
        target.refuse_round_trip()?;
        commits(&args, repo, &settings, &target, &mut on_step, &cancel).await?
    } else if let Some(name) = &args.package {
        package(&args, name, &settings, &target, &mut on_step, &cancel).await?
    } else {
        target.refuse_round_trip()?;
        if args.good.is_some() || args.bad.is_some() {
            return Err(Error::Usage("--good and --bad go with --package or --cpython; interpreter mode runs every selected interpreter".into()).into());
        }
        let only = Some(Implementation::Cpython);
        let mut interpreters =
            super::interpreters::for_running(&args.pythons, &settings, only).await?;
        bisect::interpreters::order(&mut interpreters);
        let jobs = settings.jobs;
        bisect::interpreters::bisect(&target, &interpreters, jobs, &mut on_step, &cancel).await?
    };
    emit(&format!("\n{}", report.render()));
    if let Some(path) = &args.json {
        report.write_json(path)?;
    }
    Ok(if report.boundaries.is_empty() {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}

/// Commit mode: build, search, and say what was built and kept.
async fn commits(
    args: &BisectArgs,
    repo: &std::path::Path,
    settings: &Settings,
    target: &Target,
    on_step: &mut dyn FnMut(&Step),
    cancel: &CancellationToken,
) -> Result<Report, Failure> {
    let cache_dir = settings.required_cache_dir()?.to_path_buf();
    let options = CommitOptions {
        repo: repo.to_path_buf(),
        good: args.good.clone().expect("clap requires --good"),
        bad: args.bad.clone().expect("clap requires --bad"),
        configure: split_shell(args.configure.as_deref().unwrap_or(""))?,
        jobs: settings.jobs,
        keep: args.keep.clone(),
        build_command: args.build_command.clone(),
        cache_dir,
    };
    let prober = super::interpreters::prober(&args.pythons, settings);
    let result = bisect::commits::bisect(target, options, &prober, on_step, cancel).await;
    prober.save();
    let found = result?;
    emit(&format!(
        "builds: {} this time, the other steps from the cache\n",
        found.builds
    ));
    for e in &found.keep_errors {
        eprintln!("warning: {e}");
    }
    for (name, python) in &found.kept {
        emit(&format!(
            "kept {name}: {} (use --python {name})\n",
            python.display()
        ));
    }
    Ok(found.report)
}

/// Package mode, on the one interpreter `--python` selects.
async fn package(
    args: &BisectArgs,
    name: &str,
    settings: &Settings,
    target: &Target,
    on_step: &mut dyn FnMut(&Step),
    cancel: &CancellationToken,
) -> Result<Report, Failure> {
    let cache_dir = settings.required_cache_dir()?.to_path_buf();
    let interpreters = super::interpreters::for_running(&args.pythons, settings, None).await?;
    let usable: Vec<&Interpreter> = interpreters
        .iter()
        .filter(|i| i.unusable.is_none())
        .collect();
    let [base] = usable.as_slice() else {
        return Err(Error::Usage(format!(
            "package mode runs on one interpreter: --python selects {} ({})",
            usable.len(),
            usable
                .iter()
                .map(|i| i.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    };
    let options = PackageOptions {
        name: name.to_string(),
        good: args.good.clone(),
        bad: args.bad.clone(),
        versions: (!args.versions.is_empty()).then(|| args.versions.clone()),
        find_links: settings.find_links.clone(),
        cache_dir,
        side: side(args, target)?,
    };
    Ok(bisect::package::bisect(target, base, &options, on_step, cancel).await?)
}

/// `--side` as package mode takes it: needed for a round trip, refused for a `code` case.
fn side(args: &BisectArgs, target: &Target) -> Result<Option<Phase>, Error> {
    let id = &target.case.id;
    match (target.case.is_round_trip(), args.side.as_deref()) {
        (true, Some("dump")) => Ok(Some(Phase::Dump)),
        (true, Some(_)) => Ok(Some(Phase::Load)),
        (true, None) => Err(Error::Usage(format!("case `{id}` is a round trip: say whose releases to bisect, --side load (the consumer's, the producer's packages as the case gives them) or --side dump (the producer's)"))),
        (false, Some(side)) => Err(Error::Usage(format!("--side {side} is for round trips; case `{id}` has `code`: leave --side out"))),
        (false, None) => Ok(None),
    }
}

/// Split `--configure` as a shell would split words (POSIX rules: spaces separate, quotes
/// group, `\` escapes), with `shlex`.
fn split_shell(text: &str) -> Result<Vec<String>, Error> {
    shlex::split(text).ok_or_else(|| {
        Error::Usage(format!(
            "--configure: unbalanced quote or trailing `\\` in `{text}`"
        ))
    })
}

/// `bisect-step`: exit 0 (old outcome), 1 (changed), 125 (could not run), 128 (bad input),
/// 130 (interrupted).
pub async fn bisect_step(args: BisectStepArgs) -> i32 {
    let (cancel, _) = cancel_on_signals();
    match bisect_step_inner(args, &cancel).await {
        _ if cancel.is_cancelled() => super::interrupt::exit_code(),
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            bisect::step::EXIT_ABORT
        }
    }
}

async fn bisect_step_inner(args: BisectStepArgs, cancel: &CancellationToken) -> Result<i32, Error> {
    let settings = args.target.settings(&args.pythons, None, &[])?;
    let target = args.target.load(&settings)?;
    target.refuse_round_trip()?;
    let old = OutcomeKey::parse(&args.old).map_err(|e| Error::Usage(format!("--old: {e}")))?;
    let requests = split_requests(&args.pythons.python, "--python")?;
    let [request] = requests.as_slice() else {
        return Err(Error::Usage(
            "bisect-step runs on one interpreter: give one --python".into(),
        ));
    };
    let interpreter = match PythonRequest::parse(request)? {
        // A path (the usual case under `git bisect run`) is probed alone, without discovery.
        PythonRequest::Path(path) => probe_alone(&path, &args.pythons, &settings).await,
        _ => {
            let found = super::interpreters::for_running(&args.pythons, &settings, None)
                .await
                // bisect-step prints any error and aborts the bisection alike.
                .map_err(|e| Error::Usage(e.to_string()))?;
            match found.into_iter().find(|i| i.unusable.is_none()) {
                Some(i) => Ok(i),
                None => Err(format!("`{request}` is not usable")),
            }
        }
    };
    let (code, line) = bisect::step::step(&target, interpreter, &old, cancel).await;
    emit(&format!("{line}\n"));
    Ok(code)
}

/// The interpreter at `path`, probed without discovering the others; or why it is not one.
async fn probe_alone(
    path: &std::path::Path,
    options: &PythonOptions,
    settings: &Settings,
) -> Result<Interpreter, String> {
    let exe = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let prober = super::interpreters::prober(options, settings);
    let probed = prober.probe(&exe).await;
    prober.save();
    probed
        .and_then(|info| {
            crate::python::discover::interpreter_from(&exe, info, vec![Source::Request], None)
        })
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(split_shell("").unwrap(), Vec::<String>::new());
        assert_eq!(
            split_shell("--with-pydebug  CFLAGS='-O0 -g' a\\ b \"\"").unwrap(),
            vec!["--with-pydebug", "CFLAGS=-O0 -g", "a b", ""]
        );
        assert!(split_shell("'open").is_err());
        assert!(split_shell("trailing\\").is_err());
    }
}
