//! pip (and uv) as crosspickle runs them, for environments and for bisect's list of a
//! package's releases alike: the installer's environment, the arguments that keep it offline
//! or point it at folders of distributions, and `python -m pip` as a process.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::sys::process::{self, Exit, Output, ProcessSpec};

/// The time one installer step may take.
pub const STEP_TIME_LIMIT: Duration = Duration::from_secs(15 * 60);

/// The caller's environment without `PYTHON*` (as for cases), pip told not to ask or nag
/// unless the user said otherwise. The user's pip configuration (pip.conf, `PIP_*`, proxies)
/// holds.
pub fn installer_env() -> Vec<(OsString, OsString)> {
    let mut env = crate::python::sanitized_env(&Default::default());
    for (k, v) in [
        ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
        ("PIP_NO_INPUT", "1"),
    ] {
        if std::env::var_os(k).is_none() {
            env.push((k.into(), v.into()));
        }
    }
    env
}

/// For uv, the pip settings given in the environment (uv reads no pip.conf) where the
/// user set no uv equivalent.
pub fn uv_env() -> Vec<(OsString, OsString)> {
    let mut env = installer_env();
    for (pip, uv) in [
        ("PIP_INDEX_URL", "UV_INDEX_URL"),
        ("PIP_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL"),
        ("PIP_FIND_LINKS", "UV_FIND_LINKS"),
    ] {
        if let (Some(value), None) = (std::env::var_os(pip), std::env::var_os(uv)) {
            let value = value
                .to_string_lossy()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(",");
            if !value.is_empty() {
                env.push((uv.into(), value.into()));
            }
        }
    }
    env
}

/// `--find-links DIR` for each folder or URL, as pip and uv take them.
pub fn find_links_args(find_links: &[String]) -> Vec<OsString> {
    find_links
        .iter()
        .flat_map(|f| ["--find-links".into(), f.into()])
        .collect()
}

/// `--no-index` when offline, then every `--find-links`, as pip takes them.
pub fn offline_args(offline: bool, find_links: &[String]) -> Vec<OsString> {
    let mut args = Vec::new();
    if offline {
        args.push("--no-index".into());
    }
    args.extend(find_links_args(find_links));
    args
}

/// `python -m pip` in the installer's environment, with the step time limit, started with
/// `flags` ([`crate::python::isolating_flags`]: no file of the caller's folder is a module).
pub fn command(python: &Path, flags: &[&str]) -> ProcessSpec {
    ProcessSpec::new(python, Some(STEP_TIME_LIMIT))
        .args(flags.iter().copied())
        .args(["-m", "pip"])
        .env(installer_env())
}

/// The (major, minor) version of `python`'s own pip, if it has one (asked in folder `cwd`).
pub async fn version(
    python: &Path,
    flags: &[&str],
    cwd: &Path,
    cancel: &CancellationToken,
) -> Option<(u64, u64)> {
    let mut spec = command(python, flags)
        .arg("--version")
        .cwd(cwd)
        .output(Output::Capture(4096));
    spec.time_limit = Some(Duration::from_secs(60));
    let finished = process::run(&spec, cancel).await.ok()?;
    if finished.exit != Exit::Code(0) {
        return None;
    }
    parse_version(&finished.stdout.text())
}

/// `pip 23.0.1 from /…/site-packages/pip (python 3.8)` → (23, 0).
fn parse_version(said: &str) -> Option<(u64, u64)> {
    let version = said.strip_prefix("pip ")?.split_whitespace().next()?;
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_versions() {
        assert_eq!(
            parse_version("pip 23.0.1 from /x/pip (python 3.8)\n"),
            Some((23, 0))
        );
        assert_eq!(parse_version("pip 9 from /x"), Some((9, 0)));
        assert_eq!(parse_version("Python 3.8"), None);
    }

    #[test]
    fn index_arguments() {
        let links = vec!["/w".to_string(), "https://example.invalid/x".to_string()];
        assert_eq!(
            offline_args(true, &links),
            [
                "--no-index",
                "--find-links",
                "/w",
                "--find-links",
                "https://example.invalid/x"
            ]
            .map(OsString::from)
        );
        assert!(offline_args(false, &[]).is_empty());
    }
}
