//! `crosspickle record`: run the dumps of the selected round trips on every producer selected
//! and keep what each made in the folder of recorded pickles ([`crate::record`]), adding to
//! what is there and never changing it; `--prune` removes what no case refers to.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use super::args::{IsolationArg, PythonOptions};
use super::failure::Failure;
use super::settings::{Given, Settings};
use crate::case::Case;
use crate::env::EnvOptions;
use crate::errors::Error;
use crate::python::Interpreter;
use crate::record::{file_for, protocol_of, Entry, Folder, Producer};
use crate::run::{dump_only, ExecuteOptions, Plan};
use crate::select::Keyword;

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Case files or folders [default: cases, or none with --corpus]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Also the round trips of the corpus shipped inside crosspickle
    #[arg(long)]
    pub corpus: bool,
    #[command(flatten)]
    pub pythons: PythonOptions,
    /// Only these interpreters produce pickles (narrows --python's selection)
    #[arg(long = "dump-python", value_name = "REQUEST")]
    pub dump_python: Vec<String>,
    /// Only the cases whose name (with params), path or tags match this expression, as pytest's -k
    #[arg(short = 'k', value_name = "EXPRESSION")]
    pub keyword: Option<String>,
    /// Only the cases with this tag (repeatable: any of them)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// The folder of recorded pickles [default: cases/pickles]
    #[arg(long, value_name = "DIR")]
    pub pickles: Option<PathBuf>,
    /// Remove the recorded pickles no loaded case refers to (a case, params or packages that
    /// are gone), and every file no entry names
    #[arg(long)]
    pub prune: bool,
    /// Run no Python: check the folder against its manifest (digests, files it does not name,
    /// its format, paths outside it) and the cases (entries of a case, params or packages that
    /// are gone); exit 2 when it is refused, 1 when entries are stale
    #[arg(long, conflicts_with = "prune")]
    pub check: bool,
    /// Time limit of each dump in seconds, instead of the cases' own
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Python processes at once, 1 to 1024 [default: the number of cores]
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// How each dump gets a fresh interpreter (as `run`'s --isolation)
    #[arg(long, value_name = "HOW", value_enum)]
    pub isolation: Option<IsolationArg>,
    /// Install the cases' `requires` without an index: only from the installer's cache and --find-links
    #[arg(long)]
    pub offline: bool,
    /// A folder or URL of distributions for `requires`, passed to the installer (repeatable)
    #[arg(long = "find-links", value_name = "DIR")]
    pub find_links: Vec<String>,
}

pub async fn record(args: RecordArgs) -> Result<i32, Failure> {
    let settings = Settings::resolve(Given {
        paths: &args.paths,
        corpus: args.corpus,
        jobs: args.jobs,
        cache_dir: args.pythons.cache_dir.as_deref(),
        timeout: args.timeout,
        find_links: &args.find_links,
        probe_timeout: args.pythons.probe_timeout,
        verbose: false,
    })?;
    if args.check {
        return check(args.pickles.as_deref(), &settings);
    }
    let dir = args
        .pickles
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::record::DEFAULT_FOLDER));
    // Checked before anything runs: a folder that is refused is not added to.
    let mut folder = Folder::open(&dir)?.unwrap_or(Folder {
        dir: dir.clone(),
        entries: Vec::new(),
    });
    let all: Vec<Arc<Case>> = settings.load_cases()?.into_iter().map(Arc::new).collect();
    let keyword = args.keyword.as_deref().map(Keyword::parse).transpose()?;
    let cases: Vec<Arc<Case>> = all
        .iter()
        .filter(|c| c.is_round_trip())
        .filter(|c| args.tags.is_empty() || c.tags.iter().any(|t| args.tags.contains(t)))
        .cloned()
        .collect();
    let interpreters: Vec<Arc<Interpreter>> =
        super::interpreters::for_running(&args.pythons, &settings, None)
            .await?
            .into_iter()
            .map(Arc::new)
            .collect();
    let producers = super::interpreters::narrow(&interpreters, &args.dump_python, "--dump-python")?;
    let keep = |case: &Case, params: &crate::case::Params| {
        keyword.as_ref().is_none_or(|k| k.selects(case, params))
    };
    let plan = Plan::build(&cases, &interpreters, producers.as_deref(), None, &keep);
    if plan.runs.is_empty() {
        return Err(Error::Usage(
            "no round trip to record: select cases with `dump` and `load`".into(),
        )
        .into());
    }
    let options = ExecuteOptions {
        timeout: settings.timeout,
        environments: EnvOptions {
            cache_dir: settings.cache_dir.clone(),
            offline: args.offline,
            find_links: settings.find_links.clone(),
            jobs: settings.jobs,
            progress: None,
        },
        isolation: match args.isolation {
            Some(IsolationArg::Exec) => crate::case::Isolation::Exec,
            Some(IsolationArg::Fork) => crate::case::Isolation::Fork,
            None => crate::run::default_isolation(),
        },
        ..ExecuteOptions::new(settings.jobs)
    };
    let (cancel, interrupted) = super::interrupt::cancel_on_signals();
    let dumped = dump_only(&plan, &options, cancel)
        .await
        .map_err(|e| Failure::system("preparing the dumps", e))?;
    if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
        eprintln!("interrupted: nothing recorded");
        return Ok(super::interrupt::exit_code());
    }

    let mut known: BTreeSet<_> = folder.entries.iter().map(Entry::key).collect();
    let (mut added, mut kept, mut unchanged_differs, mut not_passed, mut failed) =
        (0, 0, Vec::new(), Vec::new(), Vec::new());
    let mut producers_seen = BTreeSet::new();
    for d in dumped {
        let run = &plan.runs[d.run];
        let producer = run.producer.as_ref().expect("a round trip's run");
        let name = crate::case::run_name(&run.case.id, &run.params, Some(&producer.label), None);
        let bytes = match d.result {
            Err(e) => {
                failed.push(format!("{name} {e}"));
                continue;
            }
            Ok((observed, None)) => {
                not_passed.push(format!("{name} {}", observed.outcome));
                continue;
            }
            Ok((_, Some(bytes))) => bytes,
        };
        let (file, sha256) = file_for(&bytes);
        let entry = Entry {
            case: run.case.id.clone(),
            params: run.params.to_string(),
            producer: Producer::of(producer),
            packages: run.packages().0,
            protocol: protocol_of(&bytes),
            crosspickle: env!("CARGO_PKG_VERSION").to_string(),
            sha256,
            file,
        };
        producers_seen.insert(entry.producer.label());
        if !known.insert(entry.key()) {
            kept += 1;
            let there = folder.entries.iter().find(|e| e.key() == entry.key());
            if there.is_some_and(|e| e.sha256 != entry.sha256) {
                unchanged_differs.push(name);
            }
            continue;
        }
        write_pickle(&folder, &entry, &bytes)?;
        folder.entries.push(entry);
        added += 1;
    }
    let mut removed = 0;
    if args.prune {
        removed = prune(&mut folder, &all)?;
    }
    write_manifest(&mut folder)?;
    eprintln!(
        "recorded {} from {} into {}: {added} new, {kept} already there{}",
        crate::report::text::count(added + kept, "pickle", "pickles"),
        crate::report::text::count(producers_seen.len(), "producer", "producers"),
        dir.display(),
        if args.prune {
            format!(", {removed} pruned")
        } else {
            String::new()
        }
    );
    if !unchanged_differs.is_empty() {
        eprintln!(
            "note: {} made other bytes than the recorded ones, which are kept (`run` with the folder reports it): {}",
            crate::report::text::count(unchanged_differs.len(), "dump", "dumps"),
            unchanged_differs.join(", ")
        );
    }
    if !not_passed.is_empty() {
        eprintln!(
            "note: {} did not pass, so nothing is recorded for them: {}",
            crate::report::text::count(not_passed.len(), "dump", "dumps"),
            not_passed.join(", ")
        );
    }
    if !failed.is_empty() {
        eprintln!(
            "error: {} could not run: {}",
            crate::report::text::count(failed.len(), "dump", "dumps"),
            failed.join("; ")
        );
        return Ok(super::failure::EXIT_SYSTEM);
    }
    Ok(super::failure::EXIT_OK)
}

/// The pickle's file in the folder, written once: a file of that name is those bytes already
/// (the folder was checked).
fn write_pickle(folder: &Folder, entry: &Entry, bytes: &[u8]) -> Result<(), Failure> {
    let path = folder.path(entry);
    std::fs::create_dir_all(&folder.dir)
        .map_err(|e| Error::io(format!("cannot make {}", folder.dir.display()), e))?;
    match crate::sys::fs::write_new(&path, bytes) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io(format!("cannot write {}", path.display()), e).into()),
    }
}

/// The manifest, written only when its bytes change.
fn write_manifest(folder: &mut Folder) -> Result<(), Failure> {
    let text = folder.manifest_text();
    let path = folder.dir.join(crate::record::MANIFEST);
    if std::fs::read(&path).ok().as_deref() == Some(text.as_bytes()) {
        return Ok(());
    }
    if folder.entries.is_empty() && !path.exists() {
        return Ok(());
    }
    crate::sys::fs::write_atomic(&path, text.as_bytes())
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e).into())
}

/// `record --check`: the folder checked as `run` checks it (a refusal is exit 2, naming the
/// file), then its entries against the cases: each one no case refers to any more is named,
/// and makes the exit 1. No interpreter is looked for and no Python runs.
fn check(given: Option<&std::path::Path>, settings: &Settings) -> Result<i32, Failure> {
    let folder = for_run(given, settings)?;
    let shown = match (given, &folder) {
        (Some(dir), _) => dir.display().to_string(),
        (None, Some(f)) if settings.corpus && settings.paths.is_empty() => {
            format!("the corpus's folder {}", f.dir.display())
        }
        (None, _) => crate::record::DEFAULT_FOLDER.to_string(),
    };
    let Some(folder) = folder else {
        return Err(Error::Usage(format!(
            "no recorded pickles in {shown}: nothing to check (record them with `crosspickle record`, or name the folder with --pickles)"
        ))
        .into());
    };
    let cases = settings.load_cases()?;
    let wanted = wanted(cases.iter());
    let stale: Vec<&Entry> = folder
        .entries
        .iter()
        .filter(|e| !wanted.contains(&want_key(e)))
        .collect();
    let producers: BTreeSet<String> = folder.entries.iter().map(|e| e.producer.label()).collect();
    let files: BTreeSet<&str> = folder.entries.iter().map(|e| e.file.as_str()).collect();
    let mut out = String::new();
    for e in &stale {
        let packages = if e.packages.is_empty() {
            String::new()
        } else {
            format!(" with {}", e.packages.join(", "))
        };
        out.push_str(&format!(
            "stale: {}{packages} ({}): no loaded case has this case, params and packages any more; `crosspickle record --prune` removes it\n",
            crate::record::describe(e),
            e.file
        ));
    }
    out.push_str(&format!(
        "checked {} ({}, {}) in {}: every file is the one its entry names, by its SHA-256; {}\n",
        crate::report::text::count(folder.entries.len(), "recorded pickle", "recorded pickles"),
        crate::report::text::count(files.len(), "file", "files"),
        crate::report::text::count(producers.len(), "producer", "producers"),
        shown,
        if stale.is_empty() {
            "every entry is of a loaded case".to_string()
        } else {
            format!(
                "{} of no loaded case",
                crate::report::text::count(stale.len(), "entry is", "entries are")
            )
        }
    ));
    crate::sys::stdout::emit(&out);
    Ok(if stale.is_empty() {
        super::failure::EXIT_OK
    } else {
        super::failure::EXIT_FAILED
    })
}

/// What a recorded pickle is of, as the cases give it: case id, params and producer packages.
type WantKey = (String, String, Vec<String>);

fn want_key(e: &Entry) -> WantKey {
    (e.case.clone(), e.params.clone(), e.packages.clone())
}

/// Every (case id, params, producer packages) the round trips of `cases` can record.
fn wanted<'a>(cases: impl Iterator<Item = &'a Case>) -> BTreeSet<WantKey> {
    let mut wanted = BTreeSet::new();
    for case in cases.filter(|c| c.is_round_trip()) {
        for params in case.param_combinations() {
            let packages = crate::env::resolve_requirements(
                &case.requires_for(Some(crate::case::Phase::Dump)),
                &params,
            );
            wanted.insert((case.id.clone(), params.to_string(), packages));
        }
    }
    wanted
}

/// Drop the entries no case of `cases` refers to (its id, one of its param combinations, and
/// the producer's packages those params give), then the files no entry names: how many
/// entries went.
fn prune(folder: &mut Folder, cases: &[Arc<Case>]) -> Result<usize, Failure> {
    let wanted = wanted(cases.iter().map(|c| &**c));
    let before = folder.entries.len();
    folder.entries.retain(|e| wanted.contains(&want_key(e)));
    let named: BTreeSet<&str> = folder.entries.iter().map(|e| e.file.as_str()).collect();
    let listing = match std::fs::read_dir(&folder.dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(before),
        Err(e) => return Err(Error::io(format!("cannot read {}", folder.dir.display()), e).into()),
    };
    for item in listing.flatten() {
        let name = item.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".pickle") && !named.contains(&*name) {
            let path = item.path();
            std::fs::remove_file(&path)
                .map_err(|e| Error::io(format!("cannot remove {}", path.display()), e))?;
        }
    }
    Ok(before - folder.entries.len())
}

/// The folder of recorded pickles a run reads, checked: `--pickles DIR` (which must be there),
/// else with `--corpus` and no path the corpus's own (see [`crate::corpus::pickles_in`]), else
/// `cases/pickles` when it is there.
pub(super) fn for_run(
    given: Option<&std::path::Path>,
    settings: &Settings,
) -> Result<Option<Folder>, Error> {
    if let (None, true, true, Some(cache)) = (
        given,
        settings.corpus,
        settings.paths.is_empty(),
        settings.cache_dir.as_deref(),
    ) {
        return match crate::corpus::pickles_in(cache)? {
            Some(dir) => Folder::open(&dir),
            None => Ok(None),
        };
    }
    // Absolute: the loads that read its files run in folders of their own.
    let given = given
        .map(std::path::absolute)
        .transpose()
        .map_err(|e| Error::io("cannot resolve --pickles", e))?;
    let given = given.as_deref();
    match given {
        Some(dir) => match Folder::open(dir)? {
            Some(folder) => Ok(Some(folder)),
            None if dir.is_dir() => Ok(None),
            None => Err(Error::MissingPath(dir.to_path_buf())),
        },
        None => match std::path::absolute(crate::record::DEFAULT_FOLDER) {
            Ok(dir) => Folder::open(&dir),
            Err(e) => Err(Error::io(
                "cannot resolve the folder of recorded pickles",
                e,
            )),
        },
    }
}

/// The recorded producers of `folder`, in the order of their labels.
pub(super) fn producers(folder: &Option<Folder>) -> Vec<Arc<Interpreter>> {
    folder
        .iter()
        .flat_map(|f| f.by_producer().into_values())
        .map(|(i, _)| Arc::new(i))
        .collect()
}

/// The recorded entry of a planned round trip whose producer is recorded: the one of its
/// case, params, producer and the packages the case now gives the producer.
fn entry_of<'a>(folder: &'a Folder, run: &crate::run::PlannedRun) -> Option<&'a Entry> {
    let producer = run.producer.as_ref()?;
    let params = run.params.to_string();
    let packages = run.packages().0;
    folder.entries.iter().find(|e| {
        e.case == run.case.id
            && e.params == params
            && e.packages == packages
            && e.producer.label() == producer.label
    })
}

/// Drop the planned runs of a recorded producer that recorded no pickle for them (another case,
/// params, or packages the case no longer gives), and number the rest again.
pub(super) fn keep_recorded_runs(plan: &mut Plan, folder: &Option<Folder>) {
    let Some(folder) = folder else { return };
    plan.runs.retain(|run| match &run.producer {
        Some(p) if p.is_recorded() => entry_of(folder, run).is_some(),
        _ => true,
    });
    for (index, run) in plan.runs.iter_mut().enumerate() {
        run.index = index;
    }
}

/// The files of the recorded dumps `plan` reads, by (case id, params, producer label).
pub(super) fn files_of(plan: &Plan, folder: &Option<Folder>) -> crate::run::Recorded {
    let mut out = crate::run::Recorded::new();
    let Some(folder) = folder else { return out };
    for run in &plan.runs {
        if let (Some(p), Some(entry)) = (&run.producer, entry_of(folder, run)) {
            out.insert(
                (run.case.id.clone(), run.params.to_string(), p.label.clone()),
                folder.path(entry),
            );
        }
    }
    out
}

/// For each live producer of `plan`'s round trips that is a recorded producer's interpreter
/// (the same facts) with the same packages for a case and params: by (case id, params, live
/// label), the recorded producer's label and the digest it recorded.
pub(super) fn twins_of(plan: &Plan, folder: &Option<Folder>) -> crate::run::Twins {
    let mut out = crate::run::Twins::new();
    let Some(folder) = folder else { return out };
    for run in &plan.runs {
        let Some(p) = run.producer.as_ref().filter(|p| !p.is_recorded()) else {
            continue;
        };
        let (params, packages, facts) = (run.params.to_string(), run.packages().0, Producer::of(p));
        if let Some(e) = folder.entries.iter().find(|e| {
            e.case == run.case.id
                && e.params == params
                && e.packages == packages
                && e.producer == facts
        }) {
            out.insert(
                (run.case.id.clone(), params, p.label.clone()),
                (e.producer.label(), e.sha256.clone()),
            );
        }
    }
    out
}
