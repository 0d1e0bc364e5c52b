//! The embedded driver (`driver.py`): written once per crosspickle run, invoked once per Python
//! process; and the reading of what it reports into an [`Observed`] outcome.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::case::{OutcomeKind, Phase};
use crate::outcome::{ClassRelation, Observed};
use crate::sys::process::{Exit, Finished};

pub const DRIVER_SOURCE: &str = include_str!("driver.py");

/// The driver on disk, and a folder for each run's files.
pub struct Workspace {
    root: tempfile::TempDir,
    pub driver: PathBuf,
}

impl Workspace {
    pub fn new() -> std::io::Result<Self> {
        let root = tempfile::Builder::new().prefix("crosspickle-").tempdir()?;
        let driver = root.path().join("crosspickle_driver.py");
        std::fs::write(&driver, DRIVER_SOURCE)?;
        std::fs::create_dir(root.path().join("dumps"))?;
        Ok(Workspace { root, driver })
    }

    /// A new, empty folder for one process: its working directory and its files.
    pub fn run_dir(&self) -> std::io::Result<tempfile::TempDir> {
        tempfile::Builder::new()
            .prefix("run-")
            .tempdir_in(self.root.path())
    }

    /// Where the pickle of dump number `n` is kept for the loads that read it.
    pub fn dump_file(&self, n: usize) -> PathBuf {
        self.root.path().join("dumps").join(format!("{n}.pickle"))
    }
}

/// What the driver wrote, if it got that far.
#[derive(Debug, Default, PartialEq)]
pub struct DriverReport {
    pub outcome: Option<String>,
    pub exception: Option<String>,
    pub message: Option<String>,
    pub traceback: Option<String>,
    /// `name relation` lines: how the raised class stands to each class name asked about.
    pub classes: Option<String>,
}

/// Parse the driver's length-prefixed record; `None` if it is missing or cut short.
pub fn parse_report(bytes: &[u8]) -> Option<DriverReport> {
    let rest = bytes.strip_prefix(b"crosspickle-result 1\n")?;
    let mut report = DriverReport::default();
    let mut rest = rest;
    while !rest.is_empty() {
        let nl = rest.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&rest[..nl]).ok()?;
        let (name, len) = header.split_once(' ')?;
        let len: usize = len.parse().ok()?;
        let start = nl + 1;
        // The file is in the case's reach: a forged length must not overflow.
        let end = start.checked_add(len)?;
        let value = rest.get(start..end)?;
        let value = String::from_utf8_lossy(value).into_owned();
        match name {
            "outcome" => report.outcome = Some(value),
            "exception" => report.exception = Some(value),
            "message" => report.message = Some(value),
            "traceback" => report.traceback = Some(value),
            "classes" => report.classes = Some(value),
            _ => {}
        }
        rest = rest.get(end.checked_add(1)?..)?;
    }
    report.outcome.is_some().then_some(report)
}

/// Read the report at `result_file` and decide the outcome of a finished process.
pub fn observe(
    finished: &Finished,
    result_file: &Path,
    timeout_s: f64,
    phase: Option<Phase>,
) -> Observed {
    let report = std::fs::read(result_file)
        .ok()
        .and_then(|b| parse_report(&b));
    let mut observed = Observed {
        stdout: finished.stdout.text(),
        stderr: finished.stderr.text(),
        phase,
        ..Observed::new(OutcomeKind::Crash, finished.duration.as_secs_f64())
    };
    match finished.exit {
        Exit::TimedOut | Exit::Cancelled => {
            observed.outcome = OutcomeKind::Timeout;
            observed.message = Some(format!(
                "still running after {timeout_s}s: killed with every process it started"
            ));
        }
        Exit::Signal(sig) => {
            // Killed by a signal, even after reporting (a crash at shutdown is still a crash).
            let name = crate::sys::signal::name(sig);
            observed.message = Some(
                fatal_error_line(&observed.stderr).unwrap_or_else(|| format!("killed by {name}")),
            );
            observed.signal = Some(name);
            if let Some(r) = report {
                observed.classes = classes(r.classes.as_deref());
                observed.exception = r.exception;
                observed.traceback = r.traceback;
            }
        }
        Exit::Code(code) => {
            observed.exit_code = Some(code);
            match report {
                Some(r) => {
                    observed.outcome = match r.outcome.as_deref() {
                        Some("pass") => OutcomeKind::Pass,
                        Some("fail") => OutcomeKind::Fail,
                        _ => OutcomeKind::Error,
                    };
                    observed.classes = classes(r.classes.as_deref());
                    observed.exception = r.exception;
                    observed.message = r.message;
                    observed.traceback = r.traceback;
                }
                None => {
                    observed.message = Some(match fatal_error_line(&observed.stderr) {
                        Some(line) => format!("{line} (exit status {code})"),
                        None => format!("the process ended without reporting (exit status {code})"),
                    });
                }
            }
        }
    }
    observed
}

/// The driver's `classes` field: a `name relation` line per class name it resolved.
fn classes(field: Option<&str>) -> BTreeMap<String, ClassRelation> {
    field
        .unwrap_or("")
        .lines()
        .filter_map(|line| {
            let (name, word) = line.split_once(' ')?;
            Some((name.to_string(), ClassRelation::parse(word)?))
        })
        .collect()
}

/// `Fatal Python error: Segmentation fault`, as faulthandler or the interpreter prints it.
fn fatal_error_line(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .find(|l| l.starts_with("Fatal Python error"))
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        let bytes = b"crosspickle-result 1\noutcome 5\nerror\nexception 10\nValueError\nmessage 5\na\nb\xffc\n";
        let r = parse_report(bytes).unwrap();
        assert_eq!(r.outcome.as_deref(), Some("error"));
        assert_eq!(r.exception.as_deref(), Some("ValueError"));
        assert_eq!(r.message.as_deref(), Some("a\nb\u{fffd}c"));
        assert!(parse_report(b"crosspickle-result 1\noutcome 50\nerr").is_none());
        assert!(parse_report(b"garbage").is_none());
        let forged = format!("crosspickle-result 1\noutcome {}\npass\n", usize::MAX);
        assert!(parse_report(forged.as_bytes()).is_none());
        let field = "pickle.PicklingError same\nValueError unrelated\nbogus line";
        let bytes = format!(
            "crosspickle-result 1\noutcome 5\nerror\nclasses {}\n{field}\n",
            field.len()
        );
        let r = parse_report(bytes.as_bytes()).unwrap();
        let c = classes(r.classes.as_deref());
        assert_eq!(c["pickle.PicklingError"], ClassRelation::Same);
        assert_eq!(c["ValueError"], ClassRelation::Unrelated);
        assert_eq!(c.len(), 2);
    }
}
