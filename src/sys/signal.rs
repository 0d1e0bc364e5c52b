//! Signal names and numbers, as the case format and the reports spell them (`SIGSEGV`).

use std::str::FromStr;

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
