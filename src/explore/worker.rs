//! The embedded worker (`prelude.py` and `worker.py`, valid on 2.7 and every Python 3) and
//! how a batch of tasks is run through it on one interpreter: one process per batch, one
//! JSON line back per task; a task the process died or hung in is marked so
//! ([`Done::Crash`], [`Done::Hang`]) and the batch goes on without it in a new process.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::python::{sanitized_env, Interpreter};
use crate::sys::process::{self, Exit, Output, ProcessSpec, Stdin};

/// The helpers shared by the worker and the case files explore writes.
pub const PRELUDE: &str = include_str!("prelude.py");
const WORKER: &str = include_str!("worker.py");

/// What the worker says about one task.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Line {
    /// The task's index in the request.
    pub t: usize,
    /// The canonical description (of the value built, for a dump; of what loaded, for a load).
    #[serde(default)]
    pub canon: Option<String>,
    /// Building the value failed (type, message).
    #[serde(default)]
    pub build: Option<(String, String)>,
    #[serde(default)]
    pub hex: Option<String>,
    /// The pickle after `pickletools.optimize`.
    #[serde(default)]
    pub opt: Option<String>,
    #[serde(default)]
    pub err: Option<(String, String)>,
    #[serde(default)]
    pub hang: bool,
}

/// How a task ended.
#[derive(Debug, Clone)]
pub enum Done {
    Said(Line),
    /// The worker's process ended during this task, as described.
    Crash(String),
    /// The task outlived the time limit.
    Hang,
}

/// The worker script, written once into a folder of its own (its only neighbour on
/// `sys.path`).
pub struct Worker {
    dir: tempfile::TempDir,
    /// Seconds one task may take.
    pub limit: f64,
}

impl Worker {
    pub fn new(limit: f64) -> std::io::Result<Worker> {
        let dir = tempfile::Builder::new()
            .prefix("crosspickle-explore-")
            .tempdir()?;
        std::fs::write(
            dir.path().join("explore_worker.py"),
            format!("{PRELUDE}\n{WORKER}"),
        )?;
        Ok(Worker { dir, limit })
    }

    fn script(&self) -> PathBuf {
        self.dir.path().join("explore_worker.py")
    }

    fn folder(&self) -> &Path {
        self.dir.path()
    }

    /// Run `tasks` of `request` (which holds `op` and the values or blobs) on `python`; one
    /// [`Done`] per task, in order. An error when the worker cannot run at all.
    pub async fn run(
        &self,
        python: &Interpreter,
        request: &serde_json::Map<String, serde_json::Value>,
        tasks: &[serde_json::Value],
        cancel: &CancellationToken,
    ) -> Result<Vec<Done>, String> {
        let mut done: Vec<Done> = Vec::with_capacity(tasks.len());
        while done.len() < tasks.len() {
            let rest = &tasks[done.len()..];
            let mut req = request.clone();
            req.insert("tasks".into(), serde_json::Value::Array(rest.to_vec()));
            req.insert("limit".into(), self.limit.into());
            let time_limit =
                Duration::from_secs_f64(10.0 + self.limit * 2.0 + rest.len() as f64 * 0.05);
            let spec = ProcessSpec::new(&python.executable, Some(time_limit))
                .env(sanitized_env(&Default::default()))
                .arg(self.script())
                .cwd(self.folder())
                .stdin(Stdin::Bytes(serde_json::to_vec(&req).expect("JSON")))
                .output(Output::Capture(process::TOOL_OUTPUT));
            let finished = process::run(&spec, cancel)
                .await
                .map_err(|e| format!("cannot start {}: {e}", python.executable.display()))?;
            let text = finished.stdout.text();
            let before = done.len();
            for line in text.lines() {
                match serde_json::from_str::<Line>(line) {
                    Ok(l) if l.t == done.len() - before => done.push(Done::Said(l)),
                    _ => break,
                }
            }
            if done.len() == tasks.len() {
                break;
            }
            if finished.exit == Exit::Cancelled {
                return Err("interrupted".into());
            }
            if done.len() == before
                && before == 0
                && finished.exit != Exit::TimedOut
                && !matches!(finished.exit, Exit::Signal(_))
            {
                return Err(format!(
                    "the explore worker failed on {} ({}): {}",
                    python.label,
                    finished.exit.describe(),
                    finished.stderr.text().trim()
                ));
            }
            done.push(match finished.exit {
                Exit::TimedOut => Done::Hang,
                other => Done::Crash(crash_text(other, &finished.stderr.text())),
            });
        }
        Ok(done)
    }
}

/// What a crash was: the signal, or faulthandler's `Fatal Python error` line.
fn crash_text(exit: Exit, stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.starts_with("Fatal Python error"))
        .map(str::to_string)
        .unwrap_or_else(|| match exit {
            Exit::Signal(s) => format!("killed by {}", crate::sys::signal::name(s)),
            other => other.describe(),
        })
}
