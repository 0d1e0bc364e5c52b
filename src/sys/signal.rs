//! Signal names and numbers, as the case format and the reports spell them (`SIGSEGV`), and
//! the signals that ask crosspickle to stop ([`stop_requested`]).

use std::str::FromStr;

/// The signals that ask crosspickle to stop: Ctrl-C (SIGINT), SIGTERM (`timeout`, `docker
/// stop`, a CI job cancelled) and SIGHUP (its terminal closed).
pub const STOP_SIGNALS: [i32; 3] = [2, 15, 1];

/// From the moment it is called (in a tokio runtime), the signals of [`STOP_SIGNALS`] no longer
/// end crosspickle: what it returns resolves to the number of the first that comes. An error
/// when they cannot be handled.
pub fn stop_requested() -> std::io::Result<impl std::future::Future<Output = i32>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => 2,
            _ = term.recv() => 15,
            _ = hup.recv() => 1,
        }
    })
}

/// The signal's name for a number: `SIGSEGV` for 11, `signal 99` for an unknown one.
pub fn name(number: i32) -> String {
    nix::sys::signal::Signal::try_from(number)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {number}"))
}

/// The number of a signal name (`SIGSEGV` or `SEGV`).
pub fn number(name: &str) -> Option<i32> {
    let full = if name.starts_with("SIG") {
        name.to_string()
    } else {
        format!("SIG{name}")
    };
    nix::sys::signal::Signal::from_str(&full)
        .ok()
        .map(|s| s as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals() {
        assert_eq!(name(11), "SIGSEGV");
        assert_eq!(name(99), "signal 99");
        assert_eq!(number("SIGABRT"), Some(6));
        assert_eq!(number("KILL"), Some(9));
        assert_eq!(number("SIGFOO"), None);
    }
}
