//! Signal names and numbers, as the case format and the reports spell them (`SIGSEGV`): the
//! system's own numbers (they differ between Linux and macOS; Windows has no signals, and its
//! names are those its C runtime defines).

use super::os;

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
