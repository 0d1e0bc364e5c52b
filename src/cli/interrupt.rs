//! Ctrl-C, SIGTERM and SIGHUP, for the commands that run processes: any of them cancels a
//! token, which stops every process they started (each in its own process group, out of the
//! terminal's reach); the command then writes what it has, marked partial, and exits with the
//! shells' code for the signal (130, 143, 129: [`exit_code`]).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

/// The signal that stopped the command (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// A token cancelled by Ctrl-C, SIGTERM or SIGHUP, and whether that happened (rather than
/// `-x`).
pub fn cancel_on_signals() -> (CancellationToken, Arc<AtomicBool>) {
    let cancel = CancellationToken::new();
    let interrupted = Arc::new(AtomicBool::new(false));
    let (token, flag) = (cancel.clone(), interrupted.clone());
    // Registered now, not when the task first runs: a signal that comes at once is handled.
    if let Ok(stop) = crate::sys::signal::stop_requested() {
        tokio::spawn(async move {
            let signal = stop.await;
            SIGNAL.store(signal, Ordering::SeqCst);
            flag.store(true, Ordering::SeqCst);
            token.cancel();
        });
    }
    (cancel, interrupted)
}

/// The exit code of a command stopped by a signal: 128 and its number (Ctrl-C 130, SIGTERM
/// 143, SIGHUP 129).
pub fn exit_code() -> i32 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 128 + 2,
        signal => 128 + signal,
    }
}

/// What stopped it, as reports say it: `Ctrl-C`, `SIGTERM`, `SIGHUP`.
pub fn what() -> String {
    match SIGNAL.load(Ordering::SeqCst) {
        0 | 2 => "Ctrl-C".to_string(),
        signal => crate::sys::signal::name(signal),
    }
}
