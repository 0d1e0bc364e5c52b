//! The environment of every Python process crosspickle starts: cases, probes and installers.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// The caller's environment without any `PYTHON*` variable (PYTHONPATH, PYTHONHOME,
/// PYTHONSTARTUP and the like change what an interpreter does before the case starts), with a
/// fixed hash seed, no bytecode files and faulthandler on; then `extra` (a case's `env`) on top.
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

/// The flags that keep a Python process crosspickle starts for itself (an installer, a probe)
/// from the caller's site: isolated mode (`-I`, 3.4 and later), or, on Python 2, which has no
/// `-I`, no `PYTHON*` variable and no user site-packages (`-E -s`). With a working directory
/// of crosspickle's, no file of the user's folder can then stand in for a module.
pub fn isolating_flags(major: u64) -> &'static [&'static str] {
    if major >= 3 {
        &["-I"]
    } else {
        &["-E", "-s"]
    }
}
