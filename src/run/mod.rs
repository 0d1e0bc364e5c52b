//! Running cases: the [`plan`] of runs, one [`process`] per run with the embedded [`driver`],
//! and the [`execute`] loop that runs them concurrently and emits events for reporters.

pub mod driver;
pub mod execute;
pub mod plan;
pub mod process;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::str::FromStr;

pub use execute::{execute, Event, ExecuteOptions};
pub use plan::{Plan, PlannedRun};

/// The signal's name for a number: `SIGSEGV` for 11.
pub fn signal_name(number: i32) -> String {
    nix::sys::signal::Signal::try_from(number)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {number}"))
}

/// The number of a signal name (`SIGSEGV` or `SEGV`).
pub fn signal_number(name: &str) -> Option<i32> {
    let full = if name.starts_with("SIG") {
        name.to_string()
    } else {
        format!("SIG{name}")
    };
    nix::sys::signal::Signal::from_str(&full)
        .ok()
        .map(|s| s as i32)
}

/// The environment of every Python process crosspickle starts: the caller's without any
/// `PYTHON*` variable (PYTHONPATH, PYTHONHOME, PYTHONSTARTUP and the like change what an
/// interpreter does before the case starts), with a fixed hash seed, no bytecode files and
/// faulthandler on; then `extra` (a case's `env`) on top.
pub fn sanitized_env(extra: &BTreeMap<String, String>) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            !k.starts_with("PYTHON") && k != "__PYVENV_LAUNCHER__"
        })
        .collect();
    for (k, v) in [
        ("PYTHONHASHSEED", "0"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTHONFAULTHANDLER", "1"),
    ] {
        env.insert(k.into(), v.into());
    }
    for (k, v) in extra {
        env.insert(k.into(), v.into());
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals() {
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(signal_number("SIGABRT"), Some(6));
        assert_eq!(signal_number("KILL"), Some(9));
        assert_eq!(signal_number("SIGFOO"), None);
    }
}
