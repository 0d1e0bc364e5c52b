//! `crosspickle explore`: its arguments, the progress bar, the summary, the case files in
//! `--out`, the `--json` report and the `--baseline` that hides known findings. The engine
//! is [`crate::explore`]. Exit codes: 0 no new finding, 1 new findings, 2 bad input (also
//! `--out`, `--json` or `--baseline` that cannot be used, said before exploring), 3 a
//! tooling failure (a worker that cannot start, named), 130 / 143 / 129 stopped by a signal,
//! with what was found so far reported and written.

use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value as Json};

use super::args::PythonOptions;
use super::failure::{Failure, EXIT_FAILED, EXIT_OK};
use super::settings::{seconds, Given, Settings};
use crate::bisect::BisectError;
use crate::env::EnvOptions;
use crate::errors::Error;
use crate::explore::observe::Outcome;
use crate::explore::oracle::Oracle;
use crate::explore::sides::Requires;
use crate::explore::value::Vocabulary;
use crate::explore::{self, Options, Progress, Report, Reported};
use crate::python::Interpreter;

#[derive(Debug, Args)]
pub struct ExploreArgs {
    #[command(flatten)]
    pub pythons: PythonOptions,
    /// The seed of the values: the same seed gives the same values, findings and files
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Stop after this many values [default: 200 without --time]
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Stop after this many seconds (the batch under way is finished, within a tenth more)
    #[arg(long, value_name = "SECONDS")]
    pub time: Option<f64>,
    /// At most this many nodes in a value
    #[arg(long, value_name = "N", default_value_t = 12)]
    pub max_size: usize,
    /// Core values only: no datetime, Decimal, Fraction, uuid, collections
    #[arg(long)]
    pub no_stdlib: bool,
    /// Write each finding as a case file into this folder
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write every finding (and the stability information) as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// A JSON report of an earlier run: its findings are not reported again
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Values per batch (one request to each interpreter's worker per batch)
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub batch: usize,
    /// Seconds one dump or load may take before it counts as a hang
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub task_timeout: f64,
    /// List every stability group in the summary (by default: their count and the largest
    /// few; the --json report has them all either way)
    #[arg(long)]
    pub all_groups: bool,
    /// Python processes at once [default: the number of cores]
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// The user's own values: every top-level function of FILE.py that takes no argument is a
    /// builder, and each value is one builder's result, in turn, instead of a generated value
    #[arg(long, value_name = "FILE.py")]
    pub values: Option<PathBuf>,
    /// Explore shard M of N: the value numbers i with i % N == M - 1 (with --count C, those
    /// below C); `crosspickle merge` joins the shards' --json reports
    #[arg(long, value_name = "M/N")]
    pub partition: Option<String>,
    /// Write the values of this seed (and --count, --max-size, --no-stdlib, --partition) as
    /// JSON lines to FILE and explore nothing: for benches/explore.sh's floor
    #[arg(long, value_name = "FILE", hide = true)]
    pub emit_values: Option<PathBuf>,
    /// Byte streams instead of values: generated from a grammar of opcodes and mutated from
    /// real pickles, loaded by every C and Python unpickler and pickletools.dis under limits
    /// of time and memory (docs/explore.md, "Byte streams")
    #[arg(long)]
    pub streams: bool,
    /// With --streams: these streams (one a line, in hex) instead of generated ones
    #[arg(long, value_name = "FILE", requires = "streams")]
    pub stream_file: Option<PathBuf>,
    /// With --streams: MiB one load may allocate beyond what its worker holds
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    pub load_memory: u64,
    /// A package both sides hold (a PEP 508 requirement, repeatable): every worker runs in an
    /// environment of its interpreter with it, made as for a case's `requires`
    #[arg(long = "requires", value_name = "REQ")]
    pub requires: Vec<String>,
    /// A package the producers hold besides --requires (repeatable): the pickles are written
    /// in an environment with it
    #[arg(long = "dump-requires", value_name = "REQ")]
    pub dump_requires: Vec<String>,
    /// A package the consumers hold besides --requires (repeatable): the pickles are loaded in
    /// an environment with it
    #[arg(long = "load-requires", value_name = "REQ")]
    pub load_requires: Vec<String>,
    /// Make the environments without an index: only from the installer's cache and
    /// --find-links
    #[arg(long)]
    pub offline: bool,
    /// A folder or URL of distributions for the environments (repeatable)
    #[arg(long = "find-links", value_name = "DIR")]
    pub find_links: Vec<String>,
}

pub async fn explore(args: ExploreArgs) -> Result<i32, Failure> {
    let settings = Settings::resolve(Given {
        paths: &[],
        corpus: false,
        jobs: args.jobs,
        cache_dir: args.pythons.cache_dir.as_deref(),
        timeout: None,
        find_links: &args.find_links,
        probe_timeout: args.pythons.probe_timeout,
        verbose: false,
    })?;
    let options = options(&args, &settings)?;
    if let Some(path) = &args.emit_values {
        return emit_values(&options, path);
    }
    let known = match &args.baseline {
        Some(path) => baseline(path)?,
        None => BTreeSet::new(),
    };
    usable_outputs(&args)?;
    let pythons = super::interpreters::for_running(&args.pythons, &settings, None).await?;
    let (cancel, _) = super::interrupt::cancel_on_signals();
    let (pythons, loaders) = sides(&pythons, &args, &settings, &options, &cancel).await?;
    let options = Options { loaders, ..options };
    let bar = progress_bar(options.count);
    let started = std::time::Instant::now();
    let cpu_before = cpu_ticks();
    let report = explore::explore(&pythons, &options, &cancel, &mut |p| match p {
        Progress::Values(n, found) => {
            bar.set_position(n);
            bar.set_message(format!("{found} findings"));
        }
        Progress::Shrinking(what) => bar.set_message(format!(
            "shrinking {}",
            what.split(" producers").next().unwrap_or("")
        )),
    })
    .await
    .map_err(|e| Failure::system("exploring", std::io::Error::other(e)))?;
    bar.finish_and_clear();
    let elapsed = started.elapsed().as_secs_f64();
    let own_cpu = cpu_share(cpu_before, cpu_ticks());
    let (new, hidden): (Vec<&Reported>, Vec<&Reported>) = report
        .findings
        .iter()
        .partition(|r| !known.contains(&r.signature));
    let files = match &args.out {
        Some(dir) => write_cases(dir, &new)?,
        None => vec![None; new.len()],
    };
    if let Some(path) = &args.json {
        let doc = json_report(
            &args,
            &pythons,
            &report,
            &new,
            &files,
            hidden.len(),
            elapsed,
        );
        crate::sys::fs::write_atomic_with(path, |out| {
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            out.write_all(b"\n")
        })
        .map_err(|e| Error::Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    crate::sys::stdout::emit(&summary(
        &pythons,
        &report,
        &new,
        &files,
        hidden.len(),
        elapsed,
        own_cpu,
    ));
    crate::sys::stdout::emit(&stability_lines(
        &pythons,
        &report.stability,
        args.all_groups,
    ));
    Ok(exit_code(report.interrupted, !new.is_empty()))
}

/// Explore's exit code, of values and of streams alike: an interrupted run's, else 1 when it
/// found something new, else 0.
pub(super) fn exit_code(interrupted: bool, found: bool) -> i32 {
    if interrupted {
        super::interrupt::exit_code()
    } else if found {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

fn options(args: &ExploreArgs, settings: &Settings) -> Result<Options, Error> {
    let time = args.time.map(|t| seconds("--time", t)).transpose()?;
    seconds("--task-timeout", args.task_timeout)?;
    if args.max_size == 0 || args.batch == 0 {
        return Err(Error::Usage(
            "--max-size and --batch must be at least 1".into(),
        ));
    }
    Ok(Options {
        seed: args.seed,
        count: args.count.or(if time.is_some() { None } else { Some(200) }),
        time,
        vocabulary: Vocabulary {
            max_size: args.max_size,
            stdlib: !args.no_stdlib,
            py36: true,
        },
        builders: args.values.as_deref().map(builders).transpose()?,
        batch: args.batch,
        task_limit: args.task_timeout,
        jobs: settings.jobs,
        shrinks_per_kind: 2,
        shard: args.partition.as_deref().map(shard).transpose()?,
        requires: requires(args)?,
        loaders: None,
    })
}

/// `--requires`, `--dump-requires`, `--load-requires`, checked.
fn requires(args: &ExploreArgs) -> Result<Requires, Error> {
    let requires = Requires {
        all: args.requires.clone(),
        dump: args.dump_requires.clone(),
        load: args.load_requires.clone(),
    };
    requires.check().map_err(Error::Usage)?;
    Ok(requires)
}

/// Each side's interpreters: the selection with each executable the python of its
/// environment of the producers' packages (where there are any), and, where the consumers'
/// packages differ, the same for the consumers (the loaders). The environments are made (or
/// reused) first, as `run` makes those of `requires`; one that cannot be is a tooling failure
/// naming the interpreter and the installer's last words.
async fn sides(
    pythons: &[Interpreter],
    args: &ExploreArgs,
    settings: &Settings,
    options: &Options,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(Vec<Interpreter>, Option<Vec<Interpreter>>), Failure> {
    let requires = &options.requires;
    let env = EnvOptions {
        cache_dir: settings.cache_dir.clone(),
        offline: args.offline,
        find_links: settings.find_links.clone(),
        jobs: settings.jobs,
        progress: None,
    };
    let (dump, load) = (requires.dump_side(), requires.load_side());
    let mut wanted: Vec<(&Interpreter, Vec<String>)> = Vec::new();
    for p in pythons {
        if !dump.is_empty() {
            wanted.push((p, dump.clone()));
        }
        if requires.split() && !load.is_empty() {
            wanted.push((p, load.clone()));
        }
    }
    let to_make = crate::env::missing(wanted.iter().cloned(), &env);
    if !to_make.is_empty() {
        eprintln!(
            "note: making {} for the packages of each side; later runs reuse them",
            crate::report::text::count(to_make.len(), "environment", "environments")
        );
    }
    let in_env = |reqs: Vec<String>| {
        let env = &env;
        async move {
            let mut out = Vec::new();
            for p in pythons {
                if reqs.is_empty() {
                    out.push(p.clone());
                    continue;
                }
                let python = crate::env::python_with(env, p, &reqs, cancel)
                    .await
                    .map_err(|e| {
                        if cancel.is_cancelled() {
                            return Failure::Bisect(BisectError::Interrupted);
                        }
                        Failure::system(
                            format!(
                                "making the environment of {} on {}",
                                reqs.join(" "),
                                p.label
                            ),
                            std::io::Error::other(e.to_string()),
                        )
                    })?;
                out.push(Interpreter {
                    executable: python,
                    ..p.clone()
                });
            }
            Ok::<_, Failure>(out)
        }
    };
    let producers = in_env(dump).await?;
    let loaders = if requires.split() {
        Some(in_env(load).await?)
    } else {
        None
    };
    Ok((producers, loaders))
}

/// `--emit-values FILE`: every value of the run (`{"index": i, "source": "..."}`, one a line),
/// written and nothing explored.
fn emit_values(options: &Options, path: &Path) -> Result<i32, Failure> {
    let mut text = String::new();
    for i in 0..options.values_in(options.count.unwrap_or(200)) {
        let index = options.index_of(i);
        let value = crate::explore::value::generate(options.seed, index, &options.vocabulary);
        text.push_str(&json!({"index": index, "source": value.source()}).to_string());
        text.push('\n');
    }
    crate::sys::fs::write_atomic(path, text.as_bytes())
        .map_err(|e| Error::Usage(format!("--emit-values {}: {e}", path.display())))?;
    Ok(EXIT_OK)
}

/// `--partition M/N` (or `slice:M/N`, as `run` spells it): (M, N). Value numbers are dealt
/// round-robin, so `hash:` is refused.
fn shard(text: &str) -> Result<(u64, u64), Error> {
    let spelled = if text.contains(':') {
        text.to_string()
    } else {
        format!("slice:{text}")
    };
    let p = crate::partition::Partition::parse(&spelled).map_err(|e| {
        Error::Usage(
            e.replace("give hash:M/N or slice:M/N", "give M/N")
                .replace(&format!("`{spelled}`"), &format!("`{text}`")),
        )
    })?;
    if p.scheme != crate::partition::Scheme::Slice {
        return Err(Error::Usage(format!(
            "--partition `{text}`: explore deals value numbers round-robin; give M/N, shard M of N counted from 1"
        )));
    }
    Ok((u64::from(p.shard), u64::from(p.total)))
}

/// The builders of `--values FILE.py`: each top-level `def NAME():` (no argument), in the
/// file's order; the file by its absolute path. A file without one is refused.
fn builders(file: &std::path::Path) -> Result<(String, Vec<String>), Error> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::io(format!("cannot read --values {}", file.display()), e))?;
    let names: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("def "))
        .filter_map(|l| {
            let (name, rest) = l.split_once('(')?;
            let name = name.trim();
            (rest.trim_start().starts_with(')')
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .then(|| name.to_string())
        })
        .collect();
    if names.is_empty() {
        return Err(Error::Usage(format!(
            "--values {}: no builder in it: write top-level functions that take no argument and return a value (`def point():`)",
            file.display()
        )));
    }
    let absolute = std::fs::canonicalize(file)
        .map_err(|e| Error::io(format!("cannot read --values {}", file.display()), e))?;
    Ok((absolute.display().to_string(), names))
}

/// The signatures of a JSON report's findings.
fn baseline(path: &Path) -> Result<BTreeSet<String>, Error> {
    let bad = |why: String| {
        Error::Usage(format!(
            "--baseline {}: {why}; give the file an earlier `crosspickle explore --json` wrote",
            path.display()
        ))
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let doc: Json = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let findings = doc
        .get("findings")
        .and_then(Json::as_array)
        .ok_or_else(|| bad("no `findings` list".into()))?;
    match doc.get("explore") {
        Some(v) if v.as_u64() == Some(FORMAT) => {}
        Some(v) => {
            return Err(bad(format!(
                "it is explore's report format version {v}, this crosspickle reads version {FORMAT} (write it again with this crosspickle, or use the crosspickle that wrote it)"
            )))
        }
        None => return Err(bad("no `explore` format version".into())),
    }
    findings
        .iter()
        .map(|f| {
            f.get("signature")
                .and_then(Json::as_str)
                .map(str::to_string)
                .ok_or_else(|| bad("a finding without a `signature`".into()))
        })
        .collect()
}

/// The version of the `--json` report (its `explore` key), which `--baseline` reads.
pub const FORMAT: u64 = 5;

/// `--out` and `--json`, checked before exploring, so that neither fails after the whole run.
pub(super) fn usable_outputs(args: &ExploreArgs) -> Result<(), Error> {
    if let Some(dir) = &args.out {
        usable_folder(dir)?;
    }
    if let Some(path) = &args.json {
        usable_file(path, "--json")?;
    }
    Ok(())
}

/// `--out DIR`: made now, so that a folder that cannot be is said before exploring.
fn usable_folder(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::Usage(format!(
            "--out {}: cannot make this folder ({e}); give a folder (new or existing) for the case files",
            dir.display()
        ))
    })?;
    usable_file(&dir.join(".crosspickle-check"), "--out")
}

/// A file can be written at `path`: not a folder, and its folder takes a new file.
fn usable_file(path: &Path, flag: &str) -> Result<(), Error> {
    let bad = |why: String| {
        Error::Usage(format!(
            "{flag} {}: {why}; give a path crosspickle can write",
            path.display()
        ))
    };
    if path.is_dir() && flag == "--json" {
        return Err(bad("it is a folder".into()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".crosspickle-")
        .tempfile_in(parent)
        .map(drop)
        .map_err(|e| bad(format!("cannot write into {} ({e})", parent.display())))
}

pub(super) fn progress_bar(count: Option<u64>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(count, ProgressDrawTarget::stderr());
    let template = if count.is_some() {
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} values {msg}"
    } else {
        "{spinner} [{elapsed_precise}] {pos} values {msg}"
    };
    bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

/// The case file name of a finding: its oracle and a hash of its signature.
fn file_name(r: &Reported) -> String {
    case_file_name(r.finding.oracle.as_str(), &r.signature)
}

/// The name of a finding's case file, from its oracle and signature: the same in a run and in
/// a merge of its shards.
pub(super) fn case_file_name(oracle: &str, signature: &str) -> String {
    format!(
        "explore-{oracle}-{}.yaml",
        crate::sys::hash::short_hex(signature.as_bytes(), 10)
    )
}

/// The case files, and the support file they import beside them; each case read back by the
/// loader before it is saved (a case it refuses is crosspickle's fault: exit 3).
fn write_cases(dir: &Path, found: &[&Reported]) -> Result<Vec<Option<PathBuf>>, Failure> {
    let cannot = |path: &Path, e: std::io::Error| {
        Failure::from(Error::Usage(format!(
            "cannot write {}: {e}",
            path.display()
        )))
    };
    std::fs::create_dir_all(dir).map_err(|e| cannot(dir, e))?;
    if !found.is_empty() {
        let support = dir.join(explore::case::SUPPORT_FILE);
        crate::sys::fs::write_atomic(&support, explore::case::support_text().as_bytes())
            .map_err(|e| cannot(&support, e))?;
    }
    found
        .iter()
        .map(|r| {
            let path = dir.join(file_name(r));
            if let Err(errors) = crate::case::parse_case(&path, &r.case) {
                let why: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                return Err(Failure::system(
                    "writing a case file",
                    std::io::Error::other(format!(
                        "the case written for `{}` does not load: {}",
                        r.signature,
                        why.join("; ")
                    )),
                ));
            }
            crate::sys::fs::write_atomic(&path, r.case.as_bytes()).map_err(|e| cannot(&path, e))?;
            Ok(Some(path))
        })
        .collect()
}

/// Each debug build that ran the C pickler only, with the release build that ran the Python
/// pickler for it ([`explore::observe::release_twin`]), by their labels.
fn c_pickler_only(pythons: &[Interpreter]) -> Vec<(&str, &str)> {
    (0..pythons.len())
        .filter_map(|p| {
            let r = explore::observe::release_twin(pythons, p)?;
            Some((pythons[p].label.as_str(), pythons[r].label.as_str()))
        })
        .collect()
}

fn labels(pythons: &[Interpreter], set: &BTreeSet<usize>) -> Vec<String> {
    set.iter().map(|&i| pythons[i].label.clone()).collect()
}

fn outcome_json(o: &Outcome) -> Json {
    match o {
        Outcome::Ok(..) => json!({"outcome": "ok"}),
        Outcome::Error(t, m, _) => json!({"outcome": "error", "exception": t, "message": m}),
        Outcome::Hang => json!({"outcome": "hang"}),
        Outcome::Crash(why) => json!({"outcome": "crash", "message": why}),
    }
}

/// A protocol in the JSON report: its number, or `"default"` for the dumps that named none,
/// `"oob"` for protocol 5 with the buffers out of band.
fn protocol_json(protocol: u32) -> Json {
    use crate::explore::observe::{protocol_text, DEFAULT_PROTOCOL, OOB_PROTOCOL};
    if protocol == DEFAULT_PROTOCOL || protocol == OOB_PROTOCOL {
        json!(protocol_text(protocol))
    } else {
        json!(protocol)
    }
}

fn finding_json(pythons: &[Interpreter], r: &Reported, file: &Option<PathBuf>) -> Json {
    let f = &r.finding;
    let obs = &r.observation;
    let dumps: Vec<Json> = obs
        .dumps
        .iter()
        .filter(|((_, p, k), _)| *p == f.protocol && *k == f.pickler)
        .map(|((i, ..), o)| json!({"producer": pythons[*i].label, "result": outcome_json(o)}))
        .collect();
    let reference = crate::explore::oracle::reference(obs);
    let mut loads: Vec<_> = obs
        .each_load()
        .filter(|((_, p, k, _, u), _)| {
            // An unpickler-parity finding names no unpickler: both are shown.
            let parity = f.oracle == Oracle::UnpicklerParity;
            *p == f.protocol && *k == f.pickler && (parity || Some(*u) == f.unpickler)
        })
        .collect();
    loads.sort_by_key(|(key, _)| *key);
    let loads: Vec<Json> = loads
        .into_iter()
        .map(|((i, _, _, c, u), o)| {
            let result = match o {
                Outcome::Ok(canon, _) if Some(&**canon) == reference => {
                    json!({"outcome": "ok"})
                }
                Outcome::Ok(canon, _) => json!({"outcome": "value differs", "loaded": &**canon}),
                other => outcome_json(other),
            };
            json!({"producer": pythons[i].label, "consumer": pythons[c].label, "unpickler": u.as_str(), "result": result})
        })
        .collect();
    json!({
        "signature": r.signature,
        "oracle": f.oracle.as_str(),
        "protocol": protocol_json(f.protocol),
        "pickler": f.pickler.as_str(),
        "unpickler": f.unpickler.map(|u| u.as_str()),
        "observed": f.observed,
        "cause": f.cause,
        "sites": r.group.iter().flat_map(|g| g.sites.iter()).collect::<BTreeSet<_>>(),
        "detail": f.detail,
        "producers": labels(pythons, &f.producers),
        "consumers": labels(pythons, &f.consumers),
        "protocols": r.params.seen.protocols.iter().map(|&p| protocol_json(p)).collect::<Vec<_>>(),
        "picklers": r.params.seen.picklers.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "unpicklers": r.params.seen.unpicklers.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "case_params": {
            "protocols": r.params.case.protocols.iter().map(|&p| protocol_json(p)).collect::<Vec<_>>(),
            "picklers": r.params.case.picklers.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
            "unpicklers": r.params.case.unpicklers.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        },
        "group": r.group.iter().map(|g| json!({
            "protocol": protocol_json(g.protocol),
            "pickler": g.pickler.as_str(),
            "unpickler": g.unpickler.map(|u| u.as_str()),
            "producers": labels(pythons, &g.producers),
            "consumers": labels(pythons, &g.consumers),
        })).collect::<Vec<_>>(),
        "shape": r.value.type_path(),
        "value": r.value.source(),
        "reference": reference,
        "index": r.index,
        "occurrences": r.occurrences,
        "case_file": file.as_ref().map(|p| p.display().to_string()),
        "case": r.case,
        "keys": r.keys,
        "dumps": dumps,
        "loads": loads,
    })
}

/// The JSON report: its head, then its stability groups, each made as it is written. A long
/// run's groups are most of the report (20 MB of the 22 MB of 600 s on 19 interpreters): made
/// whole first, as values of `serde_json`, they were most of explore's peak memory.
struct JsonReport<'a> {
    head: Json,
    pythons: &'a [Interpreter],
    stability: &'a [explore::StabilityReport],
}

impl serde::Serialize for JsonReport<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let head = self.head.as_object().into_iter().flatten();
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in head {
            map.serialize_entry(key, value)?;
        }
        let pythons = self.pythons;
        let groups = self.stability.iter().map(|s| {
            json!({
                "protocol": s.stability.protocol,
                "pickler": s.stability.pickler.as_str(),
                "groups": s.stability.groups.iter().map(|(set, hex)| json!({"producers": labels(pythons, set), "bytes": hex})).collect::<Vec<_>>(),
                "value": s.source,
                "index": s.index,
                "occurrences": s.occurrences,
            })
        });
        map.serialize_entry("stability", &Lazy(std::cell::Cell::new(Some(groups))))?;
        map.end()
    }
}

/// A sequence serialized as its items are made (once).
struct Lazy<I>(std::cell::Cell<Option<I>>);

impl<I: Iterator<Item = Json>> serde::Serialize for Lazy<I> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.take().into_iter().flatten())
    }
}

fn json_report<'a>(
    args: &ExploreArgs,
    pythons: &'a [Interpreter],
    report: &'a Report,
    new: &[&Reported],
    files: &[Option<PathBuf>],
    hidden: usize,
    elapsed: f64,
) -> JsonReport<'a> {
    let head = json!({
        "explore": FORMAT,
        "interrupted": report.interrupted,
        "workers_started": report.workers_started,
        "seed": args.seed,
        "partition": args.partition.as_deref().and_then(|p| shard(p).ok()).map(|(m, n)| json!({"shard": m, "total": n})),
        "options": options_json(args),
        "values": report.values,
        "repeated": report.repeated,
        "exploring_seconds": report.exploring.as_secs_f64(),
        "shrinking_seconds": report.shrinking.as_secs_f64(),
        "shrinks": report.shrinks,
        "kinds": report.kinds,
        "seconds": elapsed,
        "values_per_second": report.values as f64 / report.exploring.as_secs_f64().max(1e-9),
        "interpreters": pythons.iter().map(|p| p.label.clone()).collect::<Vec<_>>(),
        "c_pickler_only": c_pickler_only(pythons).into_iter().collect::<BTreeMap<_, _>>(),
        "not_comparable": report.not_comparable,
        "unavailable": report.unavailable.iter().map(|((builder, p), (error, n))| json!({
            "builder": builder, "python": pythons[*p].label, "error": error, "values": n,
        })).collect::<Vec<_>>(),
        "hidden_by_baseline": hidden,
        "findings": new.iter().zip(files).map(|(r, f)| finding_json(pythons, r, f)).collect::<Vec<_>>(),
    });
    JsonReport {
        head,
        pythons,
        stability: &report.stability,
    }
}

/// What must be the same in every shard of one partitioned run (merge refuses shards that
/// differ in it): what decides the values and how long the run goes.
fn options_json(args: &ExploreArgs) -> Json {
    json!({
        "count": args.count,
        "time": args.time,
        "max_size": args.max_size,
        "no_stdlib": args.no_stdlib,
        "values": args.values.as_ref().map(|p| p.display().to_string()),
    })
}

fn summary(
    pythons: &[Interpreter],
    report: &Report,
    new: &[&Reported],
    files: &[Option<PathBuf>],
    hidden: usize,
    elapsed: f64,
    own_cpu: Option<f64>,
) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let rate = report.values as f64 / report.exploring.as_secs_f64().max(1e-9);
    let cpu = own_cpu.map_or(String::new(), |c| {
        format!("; explore's own CPU {:.1}%", c * 100.0)
    });
    let _ = writeln!(
        out,
        "explored {} values on {} interpreters in {elapsed:.1} s: {rate:.1} values/s, shrinking {:.1} s{cpu}",
        report.values,
        pythons.len(),
        report.shrinking.as_secs_f64()
    );
    if report.repeated > 0 {
        let _ = writeln!(
            out,
            "{} of the values were drawn before in this run: not observed again, their first observation stands for them",
            report.repeated
        );
    }
    let twins = c_pickler_only(pythons);
    if !twins.is_empty() {
        let twins: Vec<String> = twins.iter().map(|(d, r)| format!("{d} (as {r})")).collect();
        let _ = writeln!(
            out,
            "debug builds ran the C pickler only, their release builds' pickle.py standing for theirs: {}",
            twins.join(", ")
        );
    }
    if report.interrupted {
        let _ = writeln!(
            out,
            "interrupted by {}: what was found so far (the batch under way was dropped)",
            super::interrupt::what()
        );
    }
    let hidden = if hidden > 0 {
        format!(" ({hidden} known, hidden by the baseline)")
    } else {
        String::new()
    };
    let _ = writeln!(out, "{} findings{hidden}", new.len());
    for (r, file) in new.iter().zip(files) {
        let f = &r.finding;
        let names = |ps: &[crate::explore::observe::Pickler]| {
            ps.iter().map(|p| p.as_str()).collect::<Vec<_>>().join("/")
        };
        let mut how = format!(
            "protocol {} {}",
            r.params
                .seen
                .protocols
                .iter()
                .map(|&p| crate::explore::observe::protocol_text(p))
                .collect::<Vec<_>>()
                .join(","),
            names(&r.params.seen.picklers)
        );
        if !r.params.seen.unpicklers.is_empty() {
            how.push_str(&format!("->{}", names(&r.params.seen.unpicklers)));
        }
        let producers: BTreeSet<usize> = r
            .group
            .iter()
            .flat_map(|g| g.producers.iter().copied())
            .collect();
        let consumers: BTreeSet<usize> = r
            .group
            .iter()
            .flat_map(|g| g.consumers.iter().copied())
            .collect();
        let consumers = if consumers.is_empty() {
            String::new()
        } else {
            format!(" -> {}", labels(pythons, &consumers).join(","))
        };
        let _ = writeln!(
            out,
            "  {:13} {:18} {:28} {:20} {}{consumers}  (x{})",
            f.oracle.as_str(),
            f.cause,
            how,
            r.value.type_path(),
            labels(pythons, &producers).join(","),
            r.occurrences
        );
        if let Some(file) = file {
            let _ = writeln!(out, "      {}", file.display());
        }
    }
    if let Some(dir) = files.iter().flatten().next().and_then(|f| f.parent()) {
        let all: Vec<&str> = pythons.iter().map(|p| p.label.as_str()).collect();
        let _ = writeln!(
            out,
            "the case files in {} import {} beside them; their rules were checked on {} only: widen them (version ranges, implementations) and run them on more interpreters before committing",
            dir.display(),
            explore::case::SUPPORT_FILE,
            all.join(", ")
        );
    }
    if !report.unavailable.is_empty() {
        let _ = writeln!(
            out,
            "builders unavailable on some interpreters (their values neither dumped nor loaded there; not findings):"
        );
        for ((builder, p), (error, n)) in &report.unavailable {
            let error: String = error
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect();
            let _ = writeln!(
                out,
                "  {builder}() on {} (x{n}): {error}",
                pythons[*p].label
            );
        }
    }
    if report.not_comparable > 0 {
        let _ = writeln!(out, "{} values built differently on different interpreters were not compared after loading, such as:\n{}", report.not_comparable, report.not_comparable_example.as_deref().unwrap_or("").trim_end());
    }
    out
}

/// Stability groups the summary lists without `--all-groups`: the most frequent.
const GROUPS_SHOWN: usize = 3;

/// The summary's stability lines: every group with `all`, else (when there are more than
/// [`GROUPS_SHOWN`]) their count and the most frequent, so that a long run's hundreds of
/// groups do not fill the summary.
fn stability_lines(
    pythons: &[Interpreter],
    stability: &[explore::StabilityReport],
    all: bool,
) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if stability.is_empty() {
        return out;
    }
    let mut shown: Vec<&explore::StabilityReport> = stability.iter().collect();
    let summarised = !all && shown.len() > GROUPS_SHOWN;
    if summarised {
        let _ = writeln!(
            out,
            "stability (information, not a failure): bytes that differ between producers in {} ways (protocol, pickler, who wrote which); the {GROUPS_SHOWN} most frequent:",
            stability.len()
        );
        // The most frequent first; among equals, the order of the report (stable sort).
        shown.sort_by_key(|s| std::cmp::Reverse(s.occurrences));
        shown.truncate(GROUPS_SHOWN);
    } else {
        let _ = writeln!(
            out,
            "stability (information, not a failure): bytes that differ between producers"
        );
    }
    for s in shown {
        let groups: Vec<String> = s
            .stability
            .groups
            .iter()
            .map(|(set, _)| format!("[{}]", labels(pythons, set).join(",")))
            .collect();
        let _ = writeln!(
            out,
            "  protocol {} {:2} {} (x{})",
            s.stability.protocol,
            s.stability.pickler.as_str(),
            groups.join(" "),
            s.occurrences
        );
    }
    if summarised {
        let _ = writeln!(
            out,
            "  and {} more (--all-groups lists them all; --json keeps them all)",
            stability.len() - GROUPS_SHOWN
        );
    }
    out
}

/// CPU ticks of this process and of its waited-for children (Linux; None elsewhere).
fn cpu_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<u64> = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .skip(11)
        .take(4)
        .filter_map(|f| f.parse().ok())
        .collect();
    (fields.len() == 4).then(|| (fields[0] + fields[1], fields[2] + fields[3]))
}

/// The share of the CPU time spent between the two readings that was crosspickle's own.
fn cpu_share(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<f64> {
    let ((s0, c0), (s1, c1)) = (before?, after?);
    let (own, children) = (s1.saturating_sub(s0) as f64, c1.saturating_sub(c0) as f64);
    (own + children > 0.0).then(|| own / (own + children))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::observe::Pickler;
    use crate::explore::oracle::Stability;
    use crate::explore::StabilityReport;
    use crate::python::Implementation;

    fn groups(n: u64) -> (Vec<Interpreter>, Vec<StabilityReport>) {
        let mut a = Interpreter::for_tests(Implementation::Cpython, "2.7.18");
        a.label = "old".into();
        let mut b = Interpreter::for_tests(Implementation::Cpython, "3.12.1");
        b.label = "new".into();
        let reports = (0..n)
            .map(|i| StabilityReport {
                stability: Stability {
                    protocol: i as u32,
                    pickler: Pickler::C,
                    groups: vec![
                        (BTreeSet::from([0]), "80".into()),
                        (BTreeSet::from([1]), "81".into()),
                    ],
                },
                source: "value = None\n".into(),
                index: i,
                occurrences: i + 1,
            })
            .collect();
        (vec![a, b], reports)
    }

    #[test]
    fn few_groups_are_all_listed() {
        let (pythons, reports) = groups(3);
        let text = stability_lines(&pythons, &reports, false);
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(text.contains("  protocol 0 c  [old] [new] (x1)"), "{text}");
        assert_eq!(stability_lines(&pythons, &[], false), "");
    }

    #[test]
    fn many_groups_are_summarised_unless_all() {
        let (pythons, reports) = groups(10);
        let text = stability_lines(&pythons, &reports, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].contains("in 10 ways"), "{text}");
        // The most frequent first.
        assert!(
            lines[1].contains("protocol 9 ") && lines[1].ends_with("(x10)"),
            "{text}"
        );
        assert!(lines[3].contains("protocol 7 "), "{text}");
        assert!(lines[4].contains("and 7 more"), "{text}");
        let all = stability_lines(&pythons, &reports, true);
        assert_eq!(all.lines().count(), 11, "{all}");
    }
}
