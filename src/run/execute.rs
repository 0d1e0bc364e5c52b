//! The run loop: executes a [`Plan`] with at most `jobs` Python processes at once, judges each
//! run, and tells reporters through [`Event`]s. It knows nothing of output formats.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, FutureExt, Shared};
use futures::stream::{self, StreamExt};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::driver::{observe, Workspace};
use super::plan::{Disposition, Plan, PlannedRun};
use super::process::{run_process, Exit, ProcessSpec};
use crate::case::{Body, Case, Expected, Params, Phase, RunSide};
use crate::outcome::Observed;
use crate::python::Interpreter;
use crate::results::{CaseInfo, Results, RunRecord};
use crate::verdict::{judge, Verdict};

#[derive(Debug, Clone)]
pub struct ExecuteOptions {
    pub jobs: usize,
    /// Overrides every case's `timeout`.
    pub timeout: Option<f64>,
    /// Stop at the first run whose verdict fails (`-x`).
    pub exit_first: bool,
    /// Bytes kept of the head and of the tail of each output stream.
    pub capture: usize,
}

impl Default for ExecuteOptions {
    fn default() -> Self {
        ExecuteOptions {
            jobs: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            timeout: None,
            exit_first: false,
            capture: super::process::DEFAULT_CAPTURE,
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
}

const DEFAULT_TIMEOUT_S: f64 = 60.0;

#[derive(Debug, Clone)]
struct DumpResult {
    observed: Observed,
    data: PathBuf,
}

type DumpFuture = Shared<BoxFuture<'static, Arc<Result<DumpResult, String>>>>;

struct Context {
    workspace: Workspace,
    processes: Semaphore,
    cancel: CancellationToken,
    options: ExecuteOptions,
}

/// Execute `plan`. `cancel` stops it (Ctrl-C); the results then say they are partial.
pub async fn execute(
    plan: &Plan,
    options: &ExecuteOptions,
    cancel: CancellationToken,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> std::io::Result<Results> {
    let started = Instant::now();
    on_event(Event::Planned { plan });
    let ctx = Arc::new(Context {
        workspace: Workspace::new()?,
        processes: Semaphore::new(options.jobs.max(1)),
        cancel: cancel.clone(),
        options: options.clone(),
    });

    // One dump per (case, params, producer), shared by every load that reads it.
    let mut dumps: HashMap<(String, String, String), DumpFuture> = HashMap::new();
    for run in &plan.runs {
        if let (Some(producer), Disposition::Execute, Body::RoundTrip { dump, .. }) =
            (&run.producer, &run.disposition, &run.case.body)
        {
            let key = (
                run.case.id.clone(),
                run.params.to_string(),
                producer.label.clone(),
            );
            if !dumps.contains_key(&key) {
                let n = dumps.len();
                let (ctx, case, params, producer, code) = (
                    ctx.clone(),
                    run.case.clone(),
                    run.params.clone(),
                    producer.clone(),
                    dump.clone(),
                );
                let fut = async move {
                    let data = ctx.workspace.dump_file(n);
                    let r = run_python(
                        &ctx,
                        &producer,
                        &case,
                        &code,
                        &params,
                        Some((Phase::Dump, data.clone())),
                    )
                    .await
                    .map(|observed| DumpResult { observed, data });
                    Arc::new(r)
                }
                .boxed()
                .shared();
                dumps.insert(key, fut);
            }
        }
    }

    let mut slots: Vec<Option<RunRecord>> = vec![None; plan.runs.len()];
    let mut stop_reason: Option<String> = None;
    let width = options.jobs.max(1) * 4;
    let mut stream = stream::iter(plan.runs.iter())
        .map(|run| {
            let ctx = ctx.clone();
            let dump = run.producer.as_ref().and_then(|p| {
                dumps
                    .get(&(run.case.id.clone(), run.params.to_string(), p.label.clone()))
                    .cloned()
            });
            async move { (run, judge_run(&ctx, run, dump).await) }
        })
        .buffer_unordered(width);
    while let Some((run, record)) = stream.next().await {
        let Some(record) = record else { continue };
        on_event(Event::Finished {
            run,
            record: &record,
        });
        let fails = record.verdict.fails_run();
        slots[run.index] = Some(record);
        if fails && options.exit_first && stop_reason.is_none() {
            let reason = "stopped after the first failing verdict (-x)".to_string();
            on_event(Event::Stopping { reason: &reason });
            stop_reason = Some(reason);
            cancel.cancel();
        }
    }
    drop(stream);

    let mut results = Results::new();
    results.interpreters = plan.interpreters.iter().map(|i| (**i).clone()).collect();
    for run in &plan.runs {
        results
            .cases
            .entry(run.case.id.clone())
            .or_insert_with(|| CaseInfo::from(&*run.case));
    }
    let total = slots.len();
    results.runs = slots.into_iter().flatten().collect();
    if results.runs.len() < total {
        results.partial = true;
        results.partial_reason = Some(stop_reason.unwrap_or_else(|| {
            format!(
                "interrupted: {} of {} runs finished",
                results.runs.len(),
                total
            )
        }));
    }
    results.duration_s = started.elapsed().as_secs_f64();
    Ok(results)
}

/// Judge one planned run; `None` when it was cancelled before it could finish.
async fn judge_run(ctx: &Context, run: &PlannedRun, dump: Option<DumpFuture>) -> Option<RunRecord> {
    let case = &run.case;
    let record = |verdict,
                  expected: Expected,
                  observed: Option<Observed>,
                  reason: Option<String>| RunRecord {
        case: case.id.clone(),
        params: run.params.clone(),
        python: run.interpreter.label.clone(),
        dump_python: run.producer.as_ref().map(|p| p.label.clone()),
        load_python: run.producer.as_ref().map(|_| run.interpreter.label.clone()),
        verdict,
        expected,
        observed,
        dump_duration_s: None,
        reason,
    };
    let side_for = |phase: Option<Phase>| match (&run.producer, phase) {
        (Some(p), Some(Phase::Dump)) => RunSide {
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
    };
    match &run.disposition {
        Disposition::Skip(reason) => {
            let expected = case.expected_for(&run.params, side_for(None));
            return Some(record(
                Verdict::Skipped,
                expected,
                None,
                Some(reason.clone()),
            ));
        }
        Disposition::EnvError(reason) => {
            let expected = case.expected_for(&run.params, side_for(None));
            return Some(record(
                Verdict::EnvError,
                expected,
                None,
                Some(reason.clone()),
            ));
        }
        Disposition::Execute => {}
    }
    if ctx.cancel.is_cancelled() {
        return None;
    }
    let mut dump_duration_s = None;
    let result = match (&case.body, dump) {
        (Body::Code(code), _) => {
            run_python(ctx, &run.interpreter, case, code, &run.params, None).await
        }
        (Body::RoundTrip { load, .. }, Some(dump)) => {
            let dumped = dump.await;
            match &*dumped {
                Err(e) => Err(e.clone()),
                Ok(d) if d.observed.outcome != crate::case::OutcomeKind::Pass => {
                    Ok(d.observed.clone())
                }
                Ok(d) => {
                    dump_duration_s = Some(d.observed.duration_s);
                    run_python(
                        ctx,
                        &run.interpreter,
                        case,
                        load,
                        &run.params,
                        Some((Phase::Load, d.data.clone())),
                    )
                    .await
                }
            }
        }
        (Body::RoundTrip { .. }, None) => Err("internal: a round trip without its dump".into()),
    };
    match result {
        Ok(observed) => {
            let expected = case.expected_for(&run.params, side_for(observed.phase));
            let verdict = judge(&expected, &observed);
            let mut r = record(verdict, expected, Some(observed), None);
            r.dump_duration_s = dump_duration_s;
            Some(r)
        }
        Err(reason) if reason == CANCELLED => None,
        Err(reason) => {
            let expected = case.expected_for(&run.params, side_for(None));
            Some(record(Verdict::EnvError, expected, None, Some(reason)))
        }
    }
}

const CANCELLED: &str = "cancelled";

/// One Python process running `code` under the driver.
async fn run_python(
    ctx: &Context,
    interpreter: &Interpreter,
    case: &Case,
    code: &str,
    params: &Params,
    phase: Option<(Phase, PathBuf)>,
) -> Result<Observed, String> {
    let _permit = ctx
        .processes
        .acquire()
        .await
        .map_err(|_| CANCELLED.to_string())?;
    if ctx.cancel.is_cancelled() {
        return Err(CANCELLED.into());
    }
    let dir = ctx
        .workspace
        .run_dir()
        .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let file_name = match &phase {
        Some((Phase::Dump, _)) => "dump.py",
        Some((Phase::Load, _)) => "load.py",
        None => "case.py",
    };
    let case_file = dir.path().join(file_name);
    let result_file = dir.path().join(".crosspickle-result");
    std::fs::write(&case_file, code).map_err(|e| format!("cannot write the case's code: {e}"))?;
    let mut args = vec![
        ctx.workspace.driver.clone().into_os_string(),
        case_file.into_os_string(),
        result_file.clone().into_os_string(),
        params.python_literal().into(),
    ];
    if let Some((p, data)) = &phase {
        args.push(data.clone().into_os_string());
        args.push(p.to_string().into());
    }
    let timeout_s = ctx
        .options
        .timeout
        .or(case.timeout)
        .unwrap_or(DEFAULT_TIMEOUT_S);
    let spec = ProcessSpec {
        program: interpreter.executable.clone(),
        args,
        env: super::sanitized_env(&case.env),
        cwd: Some(dir.path().to_path_buf()),
        timeout: Duration::from_secs_f64(timeout_s),
        capture: ctx.options.capture,
    };
    let finished = run_process(&spec, &ctx.cancel)
        .await
        .map_err(|e| format!("cannot start {}: {e}", interpreter.executable.display()))?;
    if finished.exit == Exit::Cancelled {
        return Err(CANCELLED.into());
    }
    Ok(observe(
        &finished,
        &result_file,
        timeout_s,
        phase.map(|(p, _)| p),
    ))
}
