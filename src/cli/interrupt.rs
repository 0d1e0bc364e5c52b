//! Ctrl-C, for the commands that run processes: it cancels a token, which stops every process
//! they started (each in its own process group, out of the terminal's reach).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

/// A token cancelled by Ctrl-C, and whether that happened (rather than `-x`).
pub fn cancel_on_ctrl_c() -> (CancellationToken, Arc<AtomicBool>) {
    let cancel = CancellationToken::new();
    let interrupted = Arc::new(AtomicBool::new(false));
    let (token, flag) = (cancel.clone(), interrupted.clone());
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::SeqCst);
            token.cancel();
        }
    });
    (cancel, interrupted)
}
