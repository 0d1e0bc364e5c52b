//! Signal names and numbers, as the case format and the reports spell them (`SIGSEGV`): the
//! system's own numbers (they differ between Linux and macOS; Windows has no signals, and its
//! names are those its C runtime defines); and the signals that ask crosspickle to stop
//! ([`stop_requested`]).

use super::os;

/// The signals that ask crosspickle to stop: Ctrl-C (SIGINT), SIGTERM (`timeout`, `docker
/// stop`, a CI job cancelled) and SIGHUP (its terminal closed).
pub const STOP_SIGNALS: [i32; 3] = [2, 15, 1];

/// From the moment it is called (in a tokio runtime), the signals of [`STOP_SIGNALS`] no longer
/// end crosspickle: what it returns resolves to the number of the first that comes. An error
/// when they cannot be handled.
pub fn stop_requested() -> std::io::Result<impl std::future::Future<Output = i32>> {
    os::stop_requested()
}

/// The signal's name for a number: `SIGSEGV` for 11, `signal 99` for an unknown one.
pub fn name(number: i32) -> String {
    os::signal_name(number)
        .map(str::to_string)
        .unwrap_or_else(|| format!("signal {number}"))
}

/// The number of a signal name (`SIGSEGV` or `SEGV`).
pub fn number(name: &str) -> Option<i32> {
    let full = if name.starts_with("SIG") {
        name.to_string()
    } else {
        format!("SIG{name}")
    };
    os::signal_number(&full)
}

#[cfg(all(test, unix))]
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
