//! The run loop: executes a [`Plan`] with at most `jobs` Python processes at once, judges each
//! run, and tells reporters through [`Event`]s. It knows nothing of output formats.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, FutureExt, Shared};
use futures::stream::{self, StreamExt};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::bounce::Relay;
use super::driver::{observe, Request, RunDirs, Workspace};
use super::plan::{Disposition, Plan, PlannedRun};
use super::record::{Packages, RunRecord};
use super::server::{Forked, Lost, ServerKey, Servers};
use crate::case::{Body, Case, Expected, Isolation, OutcomeKind, Params, Phase, RunSide};
use crate::env::{EnvError, EnvOptions, Environments};
use crate::outcome::Observed;
use crate::python::Interpreter;
use crate::sys::process::{self, Exit, Finished, Output, ProcessSpec, Stdin, DEFAULT_CAPTURE};
use crate::verdict::{judge, passed_as_sometimes, Verdict};

#[derive(Debug, Clone)]
pub struct ExecuteOptions {
    /// Python processes at once.
    pub jobs: usize,
    /// Overrides every case's `timeout`.
    pub timeout: Option<f64>,
    /// Stop at the first run whose verdict fails (`-x`).
    pub exit_first: bool,
    /// Bytes kept of the head and of the tail of each output stream.
    pub capture: usize,
    /// Where and how the environments of cases with `requires` are made.
    pub environments: EnvOptions,
    /// How runs get their process, unless a case says `isolation: exec`.
    pub isolation: Isolation,
    /// How many times a run whose verdict fails is run again (`--retries`), each time in a
    /// fresh process (a round trip with a fresh dump of its own).
    pub retries: u32,
    /// How many times every run is attempted (`--repeat`; a case's `repeat` counts when
    /// larger), each time in a fresh process: the verdict is the worst attempt's.
    pub repeat: u32,
    /// The recorded pickles of recorded producers (`crosspickle record`), by (case id, params,
    /// producer label): their dumps are these files, checked against their manifest, not runs.
    pub recorded: Arc<Recorded>,
    /// For a live producer that is the interpreter of a recorded one, with the same packages:
    /// by (case id, params, live producer label), that recorded producer's label and the
    /// SHA-256 of what it recorded. A fresh dump that made other bytes is told as a notice.
    pub twins: Arc<Twins>,
}

/// Recorded pickles by (case id, params as [`Params`] names them, producer label).
pub type Recorded = BTreeMap<(String, String, String), PathBuf>;

/// By (case id, params, live producer label): the label of the recorded producer that is
/// that interpreter, and the SHA-256 it recorded.
pub type Twins = BTreeMap<(String, String, String), (String, String)>;

/// Fork servers where the platform can watch a process that is not its child (Linux's pidfd),
/// exec isolation elsewhere (on macOS too, where fork works but is not the default: see
/// `sys::process::watch_any_process_by_default`).
pub fn default_isolation() -> Isolation {
    if process::watch_any_process_by_default() {
        Isolation::Fork
    } else {
        Isolation::Exec
    }
}

impl ExecuteOptions {
    /// `jobs` processes at once, the cases' own time limits, every run to its end, the
    /// default capture, environments made without a cache folder's help.
    pub fn new(jobs: usize) -> Self {
        ExecuteOptions {
            jobs,
            timeout: None,
            exit_first: false,
            capture: DEFAULT_CAPTURE,
            environments: EnvOptions::default(),
            isolation: default_isolation(),
            retries: 0,
            repeat: 1,
            recorded: Default::default(),
            twins: Default::default(),
        }
    }
}

/// What reporters hear about.
#[derive(Debug)]
pub enum Event<'a> {
    /// Before anything runs.
    Planned { plan: &'a Plan },
    /// A run was judged (executed, skipped or failed to set up).
    Finished {
        run: &'a PlannedRun,
        record: &'a RunRecord,
    },
    /// The run stops early; runs still going are killed and not reported.
    Stopping { reason: &'a str },
    /// Something the user should know that is not a run's verdict (a fork server was lost and
    /// its runs run again).
    Notice { text: &'a str },
}

/// Why a run has no outcome.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunFailure {
    /// Stopped (Ctrl-C, `-x`) before it finished: it is not reported.
    #[error("cancelled")]
    Cancelled,
    /// Its process could not be set up: the run gets `env-error` with this reason.
    #[error(transparent)]
    Setup(#[from] SetupError),
}

/// What kept a run's process from starting.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SetupError {
    /// Its environment (`requires`) could not be made.
    #[error(transparent)]
    Environment(EnvError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("internal: a round trip without its dump")]
    NoDump,
}

impl From<EnvError> for RunFailure {
    fn from(e: EnvError) -> Self {
        match e {
            EnvError::Cancelled => RunFailure::Cancelled,
            e => RunFailure::Setup(SetupError::Environment(e)),
        }
    }
}

fn setup_io(context: String) -> impl FnOnce(std::io::Error) -> RunFailure {
    move |e| {
        RunFailure::Setup(SetupError::Io {
            context,
            source: Arc::new(e),
        })
    }
}

const DEFAULT_TIMEOUT_S: f64 = 60.0;

#[derive(Debug, Clone)]
struct DumpResult {
    observed: Observed,
    data: PathBuf,
}

type DumpFuture = Shared<BoxFuture<'static, Arc<Result<DumpResult, RunFailure>>>>;
/// (case id, params, producer label): one dump, shared by every load that reads it.
type DumpKey = (String, String, String);

fn dump_key(run: &PlannedRun, producer: &Interpreter) -> DumpKey {
    // The producer's params only: one dump serves every combination of `load_params`.
    let params = run.case.side_params(&run.params, Some(Phase::Dump));
    (
        run.case.id.clone(),
        params.to_string(),
        producer.label.clone(),
    )
}

/// The key of a recorded producer's pickle (and of its live twin): every param of the run.
fn recorded_key(run: &PlannedRun, producer: &Interpreter) -> DumpKey {
    (
        run.case.id.clone(),
        run.params.to_string(),
        producer.label.clone(),
    )
}

struct Context {
    workspace: Workspace,
    servers: Servers,
    /// Notes for the user gathered as runs go: fork servers lost, runs run again.
    notices: std::sync::Mutex<Vec<String>>,
    processes: Semaphore,
    cancel: CancellationToken,
    options: ExecuteOptions,
    environments: Environments,
    /// How each (program, case `env`) is started, made for its first run.
    starts: std::sync::Mutex<HashMap<StartOf, Arc<Start>>>,
    /// Dumps made so far: each has a file of its own.
    dumps_made: std::sync::atomic::AtomicUsize,
}

/// A program, a case `env` (with its run's `PYTHON_GIL`) and a case `preload`.
type StartOf = (PathBuf, BTreeMap<String, String>, Vec<String>);

/// How the interpreter of every run of one program with one case `env` and `preload` is
/// started (the fork servers' key: program, `-c` boot program, environment, modules imported
/// first), and its digest, which with a case's code names the compiled form of that code.
struct Start {
    key: ServerKey,
    digest: String,
}

impl Context {
    /// The [`Start`] of `program` for `case`'s runs of `params`, made once for all the runs
    /// that share it.
    fn start_for(
        &self,
        program: PathBuf,
        case: &Case,
        params: &Params,
    ) -> std::io::Result<Arc<Start>> {
        let mut starts = self.starts.lock().unwrap();
        let slot = (program, case.env_for(params), case.preload.clone());
        if let Some(start) = starts.get(&slot) {
            return Ok(start.clone());
        }
        let key = ServerKey {
            args: self.workspace.boot(&slot.0)?,
            program: slot.0.clone(),
            env: crate::python::sanitized_env(&slot.1),
            preload: slot.2.clone(),
        };
        // Named as every crosspickle names it, so that compiled forms are kept across them.
        let kept = ServerKey {
            args: self.workspace.boot_as_kept(&slot.0)?,
            ..key.clone()
        };
        let digest = crate::sys::hash::short_hex(&kept.identity(), 32);
        let start = Arc::new(Start { key, digest });
        starts.insert(slot, start.clone());
        Ok(start)
    }
}

/// What an execution leaves: a record per planned run, in plan order (none for a run that
/// was cancelled before it finished), why it stopped early, if it did, and how long it took.
#[derive(Debug)]
pub struct Executed {
    pub records: Vec<Option<RunRecord>>,
    pub stop_reason: Option<String>,
    pub duration_s: f64,
}

/// Execute `plan`. `cancel` stops it (Ctrl-C); the runs it stops have no record.
pub async fn execute(
    plan: &Plan,
    options: &ExecuteOptions,
    cancel: CancellationToken,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> std::io::Result<Executed> {
    let started = Instant::now();
    on_event(Event::Planned { plan });
    let ctx = context(options, &cancel)?;
    let dumps = dumps(plan, &ctx);
    let mut slots: Vec<Option<RunRecord>> = vec![None; plan.runs.len()];
    let mut stop_reason: Option<String> = None;
    // The runs that need no environment first, all of them, then those that do: the
    // standard library's results come before any environment is made, as soon as they can.
    let (plain, packaged): (Vec<&PlannedRun>, Vec<&PlannedRun>) = plan
        .runs
        .iter()
        .partition(|run| run.environments().is_empty());
    for runs in [plain, packaged] {
        let mut stream = stream::iter(runs)
            .map(|run| {
                let ctx = ctx.clone();
                let dump = run
                    .producer
                    .as_ref()
                    .and_then(|p| dumps.get(&dump_key(run, p)).cloned());
                async move { (run, judge_repeated(&ctx, run, dump).await) }
            })
            .buffer_unordered(options.jobs.max(1) * 4);
        while let Some((run, record)) = stream.next().await {
            let notices = std::mem::take(&mut *ctx.notices.lock().unwrap());
            for text in notices {
                on_event(Event::Notice { text: &text });
            }
            let Some(record) = record else { continue };
            on_event(Event::Finished {
                run,
                record: &record,
            });
            let fails = record.fails();
            slots[run.index] = Some(record);
            if fails && options.exit_first && stop_reason.is_none() {
                let reason = "stopped after the first failing verdict (-x)".to_string();
                on_event(Event::Stopping { reason: &reason });
                stop_reason = Some(reason);
                cancel.cancel();
            }
        }
        if cancel.is_cancelled() {
            break;
        }
    }
    let duration_s = started.elapsed().as_secs_f64();
    ctx.servers.shutdown().await;
    Ok(Executed {
        records: slots,
        stop_reason,
        duration_s,
    })
}

/// The context every run of one execution shares.
fn context(options: &ExecuteOptions, cancel: &CancellationToken) -> std::io::Result<Arc<Context>> {
    let workspace = Workspace::new(options.environments.cache_dir.as_deref())?;
    let servers = Servers::new(
        workspace.servers_dir(),
        super::server::max_alive(options.jobs.max(1)),
    );
    Ok(Arc::new(Context {
        workspace,
        servers,
        notices: Default::default(),
        processes: Semaphore::new(options.jobs.max(1)),
        starts: Default::default(),
        dumps_made: Default::default(),
        cancel: cancel.clone(),
        options: options.clone(),
        environments: Environments::new(options.environments.clone()),
    }))
}

/// What the dump of one (case, params, producer) made, for `crosspickle record`: `run` is the
/// first planned run that reads it; `bytes` is the pickle of a dump that passed.
#[derive(Debug)]
pub struct Dumped {
    pub run: usize,
    pub result: Result<(Observed, Option<Vec<u8>>), RunFailure>,
}

/// Run only the dumps of `plan`'s round trips to execute, each once per (case, params,
/// producer), and return what each made, in plan order (none of the loads runs). `cancel`
/// stops it: the dumps it stops are left out.
pub async fn dump_only(
    plan: &Plan,
    options: &ExecuteOptions,
    cancel: CancellationToken,
) -> std::io::Result<Vec<Dumped>> {
    let ctx = context(options, &cancel)?;
    let dumps = dumps(plan, &ctx);
    let mut seen = std::collections::HashSet::new();
    let firsts: Vec<(usize, DumpFuture)> = plan
        .runs
        .iter()
        .filter_map(|run| {
            let producer = run.producer.as_ref()?;
            let dump = dumps.get(&dump_key(run, producer))?.clone();
            // One entry per run's params (a dump serves every combination of `load_params`,
            // and each is recorded with its own).
            seen.insert(recorded_key(run, producer))
                .then_some((run.index, dump))
        })
        .collect();
    let mut out: Vec<Dumped> = stream::iter(firsts)
        .map(|(run, dump)| async move {
            let result = match &*dump.await {
                Err(e) => Err(e.clone()),
                Ok(d) if d.observed.outcome != OutcomeKind::Pass => Ok((d.observed.clone(), None)),
                Ok(d) => match std::fs::read(&d.data) {
                    Ok(bytes) => Ok((d.observed.clone(), Some(bytes))),
                    Err(e) => Err(setup_io(format!("cannot read {}", d.data.display()))(e)),
                },
            };
            Dumped { run, result }
        })
        .buffer_unordered(options.jobs.max(1) * 4)
        .filter(|d| futures::future::ready(!matches!(d.result, Err(RunFailure::Cancelled))))
        .collect()
        .await;
    ctx.servers.shutdown().await;
    out.sort_by_key(|d| d.run);
    Ok(out)
}

/// One dump future per (case, params, producer) of the round trips to execute, started when
/// its first load awaits it.
fn dumps(plan: &Plan, ctx: &Arc<Context>) -> HashMap<DumpKey, DumpFuture> {
    let mut dumps: HashMap<DumpKey, DumpFuture> = HashMap::new();
    for run in &plan.runs {
        let (Some(producer), Disposition::Execute, Body::RoundTrip { dump, .. }) =
            (&run.producer, &run.disposition, &run.case.body)
        else {
            continue;
        };
        let key = dump_key(run, producer);
        if dumps.contains_key(&key) {
            continue;
        }
        dumps.insert(key, dump_future(ctx, run, producer, dump));
    }
    dumps
}

/// The dump of `run`'s round trip by `producer`, into a file of its own, started when first
/// awaited.
fn dump_future(
    ctx: &Arc<Context>,
    run: &PlannedRun,
    producer: &Arc<Interpreter>,
    code: &str,
) -> DumpFuture {
    let n = ctx
        .dumps_made
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let (ctx, case, params, producer, code) = (
        ctx.clone(),
        run.case.clone(),
        run.params.clone(),
        producer.clone(),
        code.to_string(),
    );
    let recorded = ctx
        .options
        .recorded
        .get(&recorded_key(run, &producer))
        .cloned();
    let fut = async move {
        if let Some(file) = recorded {
            // A recorded producer's dump: what it made then, read by the load as it is.
            let mut observed = Observed::new(OutcomeKind::Pass, 0.0);
            observed.phase = Some(Phase::Dump);
            return Arc::new(Ok(DumpResult {
                observed,
                data: file,
            }));
        }
        let data = ctx.workspace.dump_file(n);
        let phase = Some((Phase::Dump, data.clone()));
        let r = run_python(&ctx, &producer, &case, &code, &params, phase, None)
            .await
            .map(|observed| DumpResult { observed, data });
        Arc::new(r)
    };
    fut.boxed().shared()
}

/// Attempt `run` as many times as `--repeat` or its case's `repeat` say (the larger), each in
/// a fresh process: the record is the first of the worst attempts, the others are kept in it
/// in the order they ran. A repeated run is not retried (its attempts are its evidence); a
/// single attempt is, as [`judge_with_retries`] says.
async fn judge_repeated(
    ctx: &Arc<Context>,
    run: &PlannedRun,
    dump: Option<DumpFuture>,
) -> Option<RunRecord> {
    let n = ctx.options.repeat.max(run.case.repeat.unwrap_or(1)).max(1) as usize;
    if n == 1 {
        return judge_with_retries(ctx, run, dump).await;
    }
    let first = judge_run(ctx, run, dump).await?;
    if first.observed.is_none() {
        return Some(first);
    }
    let mut all = vec![first];
    while all.len() < n && !ctx.cancel.is_cancelled() {
        // Cancelled while it ran: the attempts made so far stand.
        let Some(again) = judge_run(ctx, run, fresh_dump(ctx, run)).await else {
            break;
        };
        all.push(again);
    }
    // `outcome: [pass, …]` and every attempt passed: fixed.
    if all
        .iter()
        .all(|r| passed_as_sometimes(&r.expected, r.observed.as_ref()))
    {
        for r in &mut all {
            r.verdict = Verdict::Fixed;
        }
    }
    let worst = (0..all.len())
        .rev()
        .max_by_key(|&i| all[i].shown_verdict().severity())
        .unwrap_or(0);
    let mut record = all[worst].clone();
    record.attempts = all
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != worst)
        .map(|(_, r)| r.as_attempt())
        .collect();
    Some(record)
}

/// A dump of its own for one more attempt of a round trip (none for a single run).
fn fresh_dump(ctx: &Arc<Context>, run: &PlannedRun) -> Option<DumpFuture> {
    match (&run.producer, &run.case.body) {
        (Some(p), Body::RoundTrip { dump, .. }) => Some(dump_future(ctx, run, p, dump)),
        _ => None,
    }
}

/// Judge `run`, and run it again while its verdict fails, up to `retries` times, each time in
/// a fresh process (a round trip with a dump of its own): the last attempt is the record, the
/// earlier ones are kept in it, and one that then matches its expectation is `flaky`. A run
/// that could not be set up (no observation) is not run again.
async fn judge_with_retries(
    ctx: &Arc<Context>,
    run: &PlannedRun,
    dump: Option<DumpFuture>,
) -> Option<RunRecord> {
    let mut record = settle_single(judge_run(ctx, run, dump).await?);
    let mut attempts = Vec::new();
    while attempts.len() < ctx.options.retries as usize
        && record.fails()
        && record.observed.is_some()
        && !ctx.cancel.is_cancelled()
    {
        // Cancelled while it ran again: the failing attempt stands.
        let Some(again) = judge_run(ctx, run, fresh_dump(ctx, run)).await else {
            break;
        };
        let again = settle_single(again);
        attempts.push(record.as_attempt());
        record = again;
    }
    if !attempts.is_empty()
        && matches!(record.verdict, Verdict::Ok | Verdict::Xfail)
        && !record.fails()
    {
        record.verdict = Verdict::Flaky;
    }
    super::checks::mark_flaky(&mut record.checks, attempts.iter().flat_map(|a| &a.checks));
    record.attempts = attempts;
    Some(record)
}

/// A run attempted once whose rule's outcome is a list with `pass` in it, and that passed:
/// every attempt passed, so it is `fixed`.
fn settle_single(mut record: RunRecord) -> RunRecord {
    if passed_as_sometimes(&record.expected, record.observed.as_ref()) {
        record.verdict = Verdict::Fixed;
    }
    record
}

/// The record of `run`, before its timings.
fn record(
    run: &PlannedRun,
    verdict: Verdict,
    expected: Expected,
    observed: Option<Observed>,
    reason: Option<String>,
) -> RunRecord {
    RunRecord {
        case: run.case.id.clone(),
        params: run.params.clone(),
        python: run.interpreter.label.clone(),
        dump_python: run.producer.as_ref().map(|p| p.label.clone()),
        load_python: run.producer.as_ref().map(|_| run.interpreter.label.clone()),
        verdict,
        expected,
        observed,
        dump_duration_s: None,
        attempts: Vec::new(),
        checks: Vec::new(),
        reason,
        packages: match verdict {
            Verdict::Skipped => Packages::default(),
            _ => {
                let (dump, python) = run.packages();
                Packages { dump, python }
            }
        },
    }
}

/// The interpreters whose versions the rules of `run` look at, once `phase` decided it.
fn side(run: &PlannedRun, phase: Option<Phase>) -> RunSide<'_> {
    match (&run.producer, phase) {
        (Some(p), Some(Phase::Dump | Phase::Compare | Phase::Reload)) => RunSide {
            deciding: p,
            dump: Some(p),
            load: Some(&run.interpreter),
            phase,
        },
        (Some(p), _) => RunSide {
            deciding: &run.interpreter,
            dump: Some(p),
            load: Some(&run.interpreter),
            phase,
        },
        (None, _) => RunSide::single(&run.interpreter),
    }
}

/// Judge one planned run; `None` when it was cancelled before it could finish.
async fn judge_run(ctx: &Context, run: &PlannedRun, dump: Option<DumpFuture>) -> Option<RunRecord> {
    let unrun = |verdict, reason: &str| {
        let expected = run.case.expected_for(&run.params, side(run, None));
        record(run, verdict, expected, None, Some(reason.to_string()))
    };
    let skipped_by = |rule: &Expected| {
        let reason = rule.reason.clone();
        record(run, Verdict::Skipped, rule.clone(), None, reason)
    };
    match &run.disposition {
        Disposition::Skip(reason) => return Some(unrun(Verdict::Skipped, reason)),
        Disposition::SkipRule(rule) => return Some(skipped_by(rule)),
        Disposition::EnvError(reason) => return Some(unrun(Verdict::EnvError, reason)),
        Disposition::Execute => {}
    }
    if ctx.cancel.is_cancelled() {
        return None;
    }
    match observe_run(ctx, run, dump).await {
        Ok(Observation::SkippedByRule(rule)) => Some(skipped_by(&rule)),
        Ok(Observation::Skipped(reason)) => Some(unrun(Verdict::Skipped, &reason)),
        Ok(Observation::Ran(mut observed, dump_duration_s)) => {
            let checks = std::mem::take(&mut observed.checks);
            let expected = run
                .case
                .expected_for(&run.params, side(run, observed.phase));
            if expected.outcome == OutcomeKind::Skip {
                // A round trip whose dump decided it, where the dump phase's rule is a skip.
                return Some(skipped_by(&expected));
            }
            let verdict = judge(&expected, &observed);
            if verdict.fails_run() && observed.outcome == OutcomeKind::Crash {
                let deciding = side(run, observed.phase).deciding;
                if let Some(why) = broken_interpreter(ctx, deciding).await {
                    return Some(unrun(Verdict::EnvError, &why));
                }
            }
            let mut r = record(run, verdict, expected, Some(observed.for_storage()), None);
            r.dump_duration_s = dump_duration_s;
            r.checks =
                super::checks::judge_checks(&run.case, &run.params, |p| side(run, p), checks);
            Some(r)
        }
        Err(RunFailure::Cancelled) => None,
        Err(RunFailure::Setup(e)) => Some(unrun(Verdict::EnvError, &e.to_string())),
    }
}

/// Why `interpreter` no longer starts, if it does not (its installation removed or broken
/// while the run went on): asked after a run that crashed against its expectation, so that
/// an interpreter's failure is not reported as the case's regression.
async fn broken_interpreter(ctx: &Context, interpreter: &Interpreter) -> Option<String> {
    const SAY: &str = "import sys; sys.stdout.write('ok')";
    let spec = ProcessSpec::new(&interpreter.executable, Some(Duration::from_secs(30)))
        .args(["-E", "-s", "-c", SAY])
        .env(crate::python::sanitized_env(&Default::default()))
        .cwd(ctx.workspace.servers_dir());
    let what = format!("{} -E -s -c \"{SAY}\"", interpreter.executable.display());
    match process::output(&spec, &what, &ctx.cancel).await {
        Ok(said) if said == "ok" => None,
        Ok(said) => Some(format!(
            "{} no longer runs Python, so the run's crash is not the case's: `{what}` wrote {:?}",
            interpreter.label,
            said.chars().take(80).collect::<String>()
        )),
        Err(e) if e.is_cancelled() => None,
        Err(e) => Some(format!(
            "{} no longer starts, so the run's crash is not the case's: {}",
            interpreter.label,
            e.to_string().lines().next().unwrap_or("")
        )),
    }
}

/// What a run came to: what it showed (and for a round trip whose load ran, how long its dump
/// took), or, for a round trip, the `skip` rule its load phase met once its dump had passed.
enum Observation {
    Ran(Observed, Option<f64>),
    SkippedByRule(Expected),
    /// Skipped for a reason no rule gave (a recorded producer cannot reload).
    Skipped(String),
}

/// What `run` showed. A dump that did not pass decides the round trip: its load does not run;
/// nor does a load that a `skip` rule decides.
async fn observe_run(
    ctx: &Context,
    run: &PlannedRun,
    dump: Option<DumpFuture>,
) -> Result<Observation, RunFailure> {
    let (case, params) = (&run.case, &run.params);
    match (&case.body, dump) {
        (Body::Code(code), _) => {
            let observed =
                run_python(ctx, &run.interpreter, case, code, params, None, None).await?;
            Ok(Observation::Ran(observed, None))
        }
        (Body::RoundTrip { load, .. }, Some(dump)) => {
            let dumped = dump.await;
            let d = match &*dumped {
                Err(e) => return Err(e.clone()),
                Ok(d) if d.observed.outcome != OutcomeKind::Pass => {
                    return Ok(Observation::Ran(d.observed.clone(), None))
                }
                Ok(d) => d,
            };
            if run.interpreter.is_recorded() {
                // Not a load: the live dump held against what its twin recorded.
                return Ok(Observation::Ran(
                    compare(ctx, run, d)?,
                    Some(d.observed.duration_s),
                ));
            }
            let rule = case.expected_for(params, side(run, Some(Phase::Load)));
            if rule.outcome == OutcomeKind::Skip {
                return Ok(Observation::SkippedByRule(rule));
            }
            // The bounce: the relay runs in the load's process unless a rule skips it.
            let relay_skip = (case.bounce.is_some())
                .then(|| case.expected_for(params, side(run, Some(Phase::Relay))))
                .filter(|rule| rule.outcome == OutcomeKind::Skip);
            let relay = match (&case.bounce, &relay_skip) {
                (Some(bounce), None) => {
                    let n = ctx
                        .dumps_made
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let made = Relay::make(&ctx.workspace, n, &bounce.relay);
                    Some(made.map_err(setup_io("cannot write the relay's code".into()))?)
                }
                _ => None,
            };
            let phase = Some((Phase::Load, d.data.clone()));
            let mut observed = run_python(
                ctx,
                &run.interpreter,
                case,
                load,
                params,
                phase,
                relay.as_ref(),
            )
            .await?;
            // The dump's named checks first: they are the pair's too.
            let loads = std::mem::take(&mut observed.checks);
            observed.checks = d.observed.checks.iter().cloned().chain(loads).collect();
            let dump_s = Some(d.observed.duration_s);
            match (observed.outcome, observed.phase, relay, relay_skip) {
                (OutcomeKind::Pass, Some(Phase::Load), _, Some(rule)) => {
                    Ok(Observation::SkippedByRule(rule))
                }
                (OutcomeKind::Pass, Some(Phase::Relay), Some(relay), _) => {
                    reload(ctx, run, relay, observed, dump_s).await
                }
                _ => Ok(Observation::Ran(observed, dump_s)),
            }
        }
        (Body::RoundTrip { .. }, None) => Err(SetupError::NoDump.into()),
    }
}

/// The bounce's last leg, once the load and its relay passed (`loaded`): the producer reads
/// the relayed pickle back in a fresh process, unless a rule skips it or the producer is a
/// recorded one. The run's duration is the load's process and the reload's.
async fn reload(
    ctx: &Context,
    run: &PlannedRun,
    relay: Relay,
    loaded: Observed,
    dump_s: Option<f64>,
) -> Result<Observation, RunFailure> {
    let (case, params) = (&run.case, &run.params);
    let (Some(producer), Some(bounce)) = (&run.producer, &case.bounce) else {
        return Err(SetupError::NoDump.into());
    };
    if producer.is_recorded() {
        return Ok(Observation::Skipped(super::bounce::recorded_reason(
            &producer.label,
        )));
    }
    let rule = case.expected_for(params, side(run, Some(Phase::Reload)));
    if rule.outcome == OutcomeKind::Skip {
        return Ok(Observation::SkippedByRule(rule));
    }
    let phase = Some((Phase::Reload, relay.data));
    let mut observed = run_python(ctx, producer, case, &bounce.reload, params, phase, None).await?;
    observed.duration_s += loaded.duration_s;
    // The dump's and the load's named checks before the reload's.
    let reloads = std::mem::take(&mut observed.checks);
    observed.checks = loaded.checks.into_iter().chain(reloads).collect();
    Ok(Observation::Ran(observed, dump_s))
}

/// A comparison run (`producer -> recorded:…`, see [`crate::run::Plan::add_comparisons`]):
/// `pass` when the producer's fresh dump `d` is the bytes its recorded twin made, `fail` with
/// both digests when the dump changed in place.
fn compare(ctx: &Context, run: &PlannedRun, d: &DumpResult) -> Result<Observed, RunFailure> {
    let producer = run.producer.as_ref().expect("a comparison has a producer");
    let key = recorded_key(run, producer);
    let Some((label, sha)) = ctx.options.twins.get(&key) else {
        return Err(SetupError::NoDump.into());
    };
    let bytes =
        std::fs::read(&d.data).map_err(setup_io(format!("cannot read {}", d.data.display())))?;
    let fresh = crate::sys::hash::short_hex(&bytes, 64);
    let mut observed = Observed::new(OutcomeKind::Pass, 0.0);
    observed.phase = Some(Phase::Compare);
    if &fresh != sha {
        observed.outcome = OutcomeKind::Fail;
        observed.message = Some(format!(
            "the dump on {} made other bytes (SHA-256 {fresh}, {} bytes) than {label} recorded (SHA-256 {sha}): the dump changed in place",
            producer.label,
            bytes.len()
        ));
    }
    Ok(observed)
}

/// One Python process running `code` under the driver: forked from a server, or started for
/// it alone (exec isolation).
async fn run_python(
    ctx: &Context,
    interpreter: &Interpreter,
    case: &Case,
    code: &str,
    params: &Params,
    phase: Option<(Phase, PathBuf)>,
    relay: Option<&Relay>,
) -> Result<Observed, RunFailure> {
    let program = ctx
        .environments
        .python_for(
            interpreter,
            case,
            phase.as_ref().map(|(p, _)| *p),
            params,
            &ctx.cancel,
        )
        .await?;
    let permit = ctx
        .processes
        .acquire()
        .await
        .map_err(|_| RunFailure::Cancelled)?;
    if ctx.cancel.is_cancelled() {
        return Err(RunFailure::Cancelled);
    }
    let prepared = prepare(ctx, program, case, code, params, &phase, relay)?;
    let start = Instant::now();
    let phase = phase.map(|(p, _)| p);
    let isolation = match case.isolation {
        Some(Isolation::Exec) => Isolation::Exec,
        _ => ctx.options.isolation,
    };
    let (finished, result_file) = match isolation {
        Isolation::Exec => (exec(ctx, &prepared).await?, prepared.dirs.result_file()),
        Isolation::Fork => match forked(ctx, interpreter, case, params, &prepared).await? {
            Ok(ran) => ran,
            Err(lost) => {
                let mut observed = Observed::new(OutcomeKind::Crash, start.elapsed().as_secs_f64());
                observed.message = Some(format!(
                    "{lost} while it ran, also when run again alone: the case kills or \
                     stops the process that started it"
                ));
                observed.phase = phase;
                return Ok(observed);
            }
        },
    };
    // Its process (and every process it started) is gone: the next run may start.
    drop(permit);
    if finished.exit == Exit::Cancelled {
        return Err(RunFailure::Cancelled);
    }
    Ok(observe(&finished, &result_file, prepared.timeout_s, phase))
}

/// What a run's process is started with, made once the run has its process slot.
struct Prepared {
    dirs: RunDirs,
    request: Request,
    start: Arc<Start>,
    timeout_s: f64,
}

impl Prepared {
    fn time_limit(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s)
    }
}

/// The run's folders with its code written, its request, and what its interpreter is started
/// with.
fn prepare(
    ctx: &Context,
    program: PathBuf,
    case: &Case,
    code: &str,
    params: &Params,
    phase: &Option<(Phase, PathBuf)>,
    relay: Option<&Relay>,
) -> Result<Prepared, RunFailure> {
    let request_io = || setup_io("cannot write the run's request".into());
    let dirs = ctx
        .workspace
        .run_dirs()
        .map_err(setup_io("cannot make a temporary folder".into()))?;
    let file_name = match phase {
        Some((Phase::Dump | Phase::Compare, _)) => "dump.py",
        Some((Phase::Load | Phase::Relay, _)) => "load.py",
        Some((Phase::Reload, _)) => crate::case::RELOAD_FILE,
        None => "case.py",
    };
    let case_file = dirs
        .write_code(file_name, code)
        .map_err(setup_io("cannot write the case's code".into()))?;
    // The globals of this side: a round trip's dump does not see `load_params`, nor its load
    // `dump_params`.
    let own = case.side_params(params, phase.as_ref().map(|(p, _)| *p));
    let mut request = Request::new(&case_file, &dirs.result_file(), &own).map_err(request_io())?;
    if let Some((p, data)) = phase {
        request = request
            .text("phase", &p.to_string())
            .path("data", data)
            .map_err(request_io())?;
    }
    if let Some(folder) = case.support.first().and_then(|f| f.parent()) {
        // The folder of the case's `support` files, on the run's `sys.path`.
        request = request.path("support", folder).map_err(request_io())?;
    }
    let classes = case.class_names();
    if !classes.is_empty() {
        // The class names of `exception` and `instance_of`, for the driver to resolve.
        request = request.text("classes", &classes.join(","));
    }
    let start = ctx.start_for(program, case, params).map_err(request_io())?;
    let mut request = request
        .path("code_cache", &ctx.workspace.code_cache(&start.digest, code))
        .map_err(request_io())?;
    if let (Some(relay), Some(bounce)) = (relay, &case.bounce) {
        let cache = ctx.workspace.code_cache(&start.digest, &bounce.relay);
        request = relay.request(request, &cache).map_err(request_io())?;
    }
    let timeout_s = ctx
        .options
        .timeout
        .or(case.timeout)
        .unwrap_or(DEFAULT_TIMEOUT_S);
    Ok(Prepared {
        dirs,
        request,
        start,
        timeout_s,
    })
}

/// The run forked from a fork server: how it ended and where its result is, or, when it lost
/// its server twice, why.
async fn forked(
    ctx: &Context,
    interpreter: &Interpreter,
    case: &Case,
    params: &Params,
    prepared: &Prepared,
) -> Result<Result<(Finished, PathBuf), Lost>, RunFailure> {
    let (forked, lost) = ctx
        .servers
        .run(
            &prepared.start.key,
            &prepared.dirs,
            &prepared.request,
            ctx.options.capture,
            prepared.time_limit(),
            &ctx.cancel,
        )
        .await
        .map_err(setup_io(format!(
            "cannot start {}",
            prepared.start.key.program.display()
        )))?;
    if let Some(lost) = lost {
        let name = crate::case::run_name(&case.id, params, None, None);
        let again = match forked {
            Forked::Exec => "by an interpreter started for it alone",
            _ => "alone",
        };
        ctx.notices.lock().unwrap().push(format!(
            "{name} on {}: {lost} while it ran; it was run again {again}",
            interpreter.label
        ));
    }
    Ok(match forked {
        Forked::Finished(finished, result) => Ok((finished, result)),
        Forked::Exec => Ok((exec(ctx, prepared).await?, prepared.dirs.result_file())),
        Forked::LostTwice(lost) => Err(lost),
    })
}

/// The run in an interpreter started for it alone, reading its request on stdin (the driver
/// then makes it a session of its own and gives it an empty stdin).
async fn exec(ctx: &Context, prepared: &Prepared) -> Result<Finished, RunFailure> {
    let Prepared {
        dirs,
        request,
        start,
        ..
    } = prepared;
    let key = &start.key;
    let spec = ProcessSpec::with_env(&key.program, Some(prepared.time_limit()), key.env.clone())
        .args(key.args.iter().cloned())
        .cwd(dirs.cwd())
        .stdin(Stdin::Bytes(
            format!("{}once {}\n", key.opening(true), request.to_wire()).into_bytes(),
        ))
        .makes_own_session()
        .waits_for_input()
        .output(Output::Capture(ctx.options.capture));
    process::run(&spec, &ctx.cancel)
        .await
        .map_err(setup_io(format!("cannot start {}", key.program.display())))
}
