//! `bisect-step`: one test for `git bisect run`. It runs the target once on one interpreter
//! and answers in `git bisect run`'s terms: 0 while the old outcome holds ("good"), 1 when it
//! changed ("bad"), 125 when the run could not happen ("skip": no interpreter, a broken build,
//! the case does not apply). Bad input exits 128, which makes `git bisect run` stop.

use tokio_util::sync::CancellationToken;

use super::{OutcomeKey, Target};
use crate::python::Interpreter;

pub const EXIT_OLD: i32 = 0;
pub const EXIT_CHANGED: i32 = 1;
pub const EXIT_SKIP: i32 = 125;
pub const EXIT_ABORT: i32 = 128;

/// The exit code and the line to print.
pub async fn step(
    target: &Target,
    interpreter: Result<Interpreter, String>,
    old: &OutcomeKey,
    cancel: &CancellationToken,
) -> (i32, String) {
    let interpreter = match interpreter {
        Ok(i) => i,
        Err(reason) => return (EXIT_SKIP, format!("skip: {reason}")),
    };
    match target.run_on(&interpreter, cancel).await {
        Err(reason) => (EXIT_SKIP, format!("skip ({}): {reason}", interpreter.label)),
        Ok(observed) if old.holds_for(&observed) => (
            EXIT_OLD,
            format!(
                "old ({}): {} still shows {old}: {}",
                interpreter.label,
                target.name(),
                observed.summary()
            ),
        ),
        Ok(observed) => (
            EXIT_CHANGED,
            format!(
                "new ({}): {} no longer shows {old}: {}",
                interpreter.label,
                target.name(),
                observed.summary()
            ),
        ),
    }
}
