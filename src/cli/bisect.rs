//! `crosspickle bisect` and `crosspickle bisect-step`: arguments, choosing the mode, printing
//! the step log and the boundaries. The searches themselves live in [`crate::bisect`].
//! Exit codes of `bisect`: 0 a change was found, 1 none was (or the ends could not be tested),
//! 2 bad input.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{PythonOptions, EXIT_FAILED, EXIT_OK};
use crate::bisect::commits::CommitOptions;
use crate::bisect::package::PackageOptions;
use crate::bisect::{self, OutcomeKey, Report, Step, Target};
use crate::case::Implementation;
use crate::errors::Error;
use crate::python::probe::Prober;
use crate::python::request::{select, split_requests, PythonRequest};
use crate::python::Interpreter;

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
    /// A folder of wheels or sdists for pip (`pip --find-links`; repeatable)
    #[arg(long = "find-links", value_name = "DIR", requires = "package")]
    pub find_links: Vec<PathBuf>,
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
    /// A case file, or the id of a case under PATHS
    #[arg(value_name = "CASE")]
    pub case: String,
    /// Case files or folders to find the case id in [default: cases]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// The params combination to run, `name=value,name2=value2` (needed when the case has several)
    #[arg(long, value_name = "NAME=VALUE,...")]
    pub params: Option<String>,
    /// Time limit of each run in seconds, instead of the case's own
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
}

impl TargetArgs {
    fn load(&self) -> Result<Target, Error> {
        super::check_timeout(self.timeout)?;
        let mut target = Target::load(&self.case, &self.paths, self.params.as_deref())?;
        target.timeout = self.timeout;
        Ok(target)
    }
}

pub async fn bisect(args: BisectArgs) -> Result<i32, Error> {
    let target = args.target.load()?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        })
        .max(1);
    let mut count = 0;
    let mut on_step = |step: &Step| {
        count += 1;
        println!("step {count}: {}", step.line());
    };
    println!("bisect {}", target.name());
    let report: Report = if let Some(repo) = &args.cpython {
        let cache_dir = cache_dir(&args.pythons)?;
        let options = CommitOptions {
            repo: repo.clone(),
            good: args.good.clone().expect("clap requires --good"),
            bad: args.bad.clone().expect("clap requires --bad"),
            configure: split_shell(args.configure.as_deref().unwrap_or(""))?,
            jobs,
            keep: args.keep.clone(),
            build_command: args.build_command.clone(),
            cache_dir: cache_dir.clone(),
        };
        let prober = Prober::new(
            Some(&cache_dir),
            Duration::from_secs_f64(args.pythons.probe_timeout),
            args.pythons.refresh,
        );
        let result = bisect::commits::bisect(&target, options, &prober, &mut on_step).await;
        prober.save();
        let found = result.map_err(Error::Usage)?;
        println!(
            "builds: {} this time, the other steps from the cache",
            found.builds
        );
        for e in &found.keep_errors {
            eprintln!("warning: {e}");
        }
        for (name, python) in &found.kept {
            println!("kept {name}: {} (use --python {name})", python.display());
        }
        found.report
    } else if let Some(name) = &args.package {
        let cache_dir = cache_dir(&args.pythons)?;
        let interpreters = selected(&args.pythons, false).await?;
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
            )));
        };
        let options = PackageOptions {
            name: name.clone(),
            good: args.good.clone(),
            bad: args.bad.clone(),
            versions: (!args.versions.is_empty()).then(|| args.versions.clone()),
            find_links: args
                .find_links
                .iter()
                .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
                .collect(),
            cache_dir,
        };
        bisect::package::bisect(&target, base, &options, &mut on_step)
            .await
            .map_err(Error::Usage)?
    } else {
        if args.good.is_some() || args.bad.is_some() {
            return Err(Error::Usage("--good and --bad go with --package or --cpython; interpreter mode runs every selected interpreter".into()));
        }
        let mut interpreters = selected(&args.pythons, true).await?;
        bisect::interpreters::order(&mut interpreters);
        bisect::interpreters::bisect(&target, &interpreters, jobs, &mut on_step).await
    };
    println!();
    print!("{}", report.render());
    if let Some(path) = &args.json {
        report.write_json(path)?;
    }
    Ok(if report.boundaries.is_empty() {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}

/// The interpreters `--python` selects; without it, every CPython (when `cpython_default`).
async fn selected(
    options: &PythonOptions,
    cpython_default: bool,
) -> Result<Vec<Interpreter>, Error> {
    let (discovery, prober) = super::pythons::discover_all(options).await?;
    let requests = split_requests(&options.python);
    let selection = select(&discovery, &requests, &prober).await?;
    prober.save();
    if !selection.missing.is_empty() {
        return Err(Error::MissingInterpreters {
            requests: selection.missing,
            found: "See `crosspickle pythons` for the interpreters found.".into(),
        });
    }
    let mut interpreters = selection.interpreters;
    if requests.is_empty() && cpython_default {
        interpreters.retain(|i| i.implementation == Implementation::Cpython);
    }
    if interpreters.is_empty() {
        return Err(Error::NoInterpreters(String::new()));
    }
    Ok(interpreters)
}

fn cache_dir(options: &PythonOptions) -> Result<PathBuf, Error> {
    options.cache_dir().ok_or_else(|| {
        Error::Usage("no cache folder for environments and builds: set --cache-dir, CROSSPICKLE_CACHE_DIR or HOME".into())
    })
}

/// Split `--configure` as a shell would split words: spaces separate, quotes group, `\` escapes.
fn split_shell(text: &str) -> Result<Vec<String>, Error> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    word.get_or_insert_with(String::new).push(n);
                }
            }
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(Error::Usage(format!(
            "--configure: unbalanced quote in `{text}`"
        )));
    }
    words.extend(word);
    Ok(words)
}

/// `bisect-step`: exit 0 (old outcome), 1 (changed), 125 (could not run), 128 (bad input).
pub async fn bisect_step(args: BisectStepArgs) -> i32 {
    match bisect_step_inner(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            bisect::step::EXIT_ABORT
        }
    }
}

async fn bisect_step_inner(args: BisectStepArgs) -> Result<i32, Error> {
    let target = args.target.load()?;
    let old = OutcomeKey::parse(&args.old).map_err(|e| Error::Usage(format!("--old: {e}")))?;
    let requests = split_requests(&args.pythons.python);
    let [request] = requests.as_slice() else {
        return Err(Error::Usage(
            "bisect-step runs on one interpreter: give one --python".into(),
        ));
    };
    let interpreter = match PythonRequest::parse(request)? {
        // A path (the usual case under `git bisect run`) is probed alone, without discovery.
        PythonRequest::Path(path) => match std::fs::canonicalize(&path) {
            Err(e) => Err(format!("{}: {e}", path.display())),
            Ok(exe) => {
                let cache = args.pythons.cache_dir();
                let prober = Prober::new(
                    cache.as_deref(),
                    Duration::from_secs_f64(args.pythons.probe_timeout),
                    args.pythons.refresh,
                );
                let probed = prober.probe(&exe).await;
                prober.save();
                probed.and_then(|info| {
                    crate::python::discover::interpreter_from(
                        &exe,
                        info,
                        vec!["--python".into()],
                        None,
                    )
                })
            }
        },
        _ => {
            let found = selected(&args.pythons, false).await?;
            match found.into_iter().find(|i| i.unusable.is_none()) {
                Some(i) => Ok(i),
                None => Err(format!("`{request}` is not usable")),
            }
        }
    };
    let (code, line) = bisect::step::step(&target, interpreter, &old).await;
    println!("{line}");
    Ok(code)
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
    }
}
