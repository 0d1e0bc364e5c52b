//! What the scripts of `crosspickle repro` (`repro.rs`, `repro_bounce.rs`) are made of and run
//! by: Python text literals that read the same on 2.7 and 3, and one script run on one
//! interpreter with its output bounded and its time limited.

use std::time::Duration;

use crate::case::ParamValue;
use crate::python::Interpreter;

/// A Python text literal that reads the same on 2.7 and 3 (`u'...'`, escaped).
pub(super) fn python_text(s: &str) -> String {
    ParamValue::Str(s.to_string()).python_literal()
}

/// The output of `python script args…` in `dir` (stdout, then stderr when it is not empty),
/// run as crosspickle runs every process (`sys::process`): its group killed at the time limit,
/// its output bounded.
pub(super) async fn run_script(
    python: &Interpreter,
    script: &std::path::Path,
    args: &[&str],
    dir: &std::path::Path,
    limit: Duration,
) -> String {
    use crate::sys::process::{self, Exit, Output, ProcessSpec};
    let never = tokio_util::sync::CancellationToken::new();
    let spec = ProcessSpec::new(&python.executable, Some(limit))
        .arg(script)
        .args(args)
        .cwd(dir)
        .remove_env("PYTHONPATH")
        .remove_env("PYTHONHOME")
        .set_env("PYTHONHASHSEED", "0")
        .output(Output::Capture(REPRO_OUTPUT));
    match process::run(&spec, &never).await {
        Ok(done) if done.exit == Exit::TimedOut => {
            format!("no answer within {} s\n", limit.as_secs_f64())
        }
        Ok(done) => {
            let mut text = done.stdout.text();
            let err = done.stderr.text();
            if !err.trim().is_empty() {
                text.push_str(&err);
            }
            text
        }
        Err(e) => format!("could not start: {e}\n"),
    }
}

/// Bytes kept of each stream of the script's run, at its start and at its end.
const REPRO_OUTPUT: usize = 64 * 1024;
