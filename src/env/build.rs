//! Making one environment: in a temporary folder next to its final place, then renamed into
//! place once its requirements are installed and its marker written (the caller holds the
//! environment's lock).
//!
//! The installer: `uv` when it is on PATH and the interpreter is 3.8 or later (`uv venv`, then
//! `uv pip install`); otherwise `python -m venv` and the environment's own pip; for Python 2,
//! virtualenv (below 20.22, the last to make 2.7 environments), which crosspickle installs once
//! per 2.x interpreter into `tools/` with that interpreter's own pip.
//! `CROSSPICKLE_INSTALLER=pip` or `=uv` forces one. The user's installer configuration
//! (pip.conf, `PIP_*` variables, proxies) is left as it is; `--offline` adds `--no-index`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use tokio_util::sync::CancellationToken;

use super::key::EnvKey;
use super::store::{self, MARKER, TMP_PREFIX};
use super::{EnvFailure, EnvOptions};
use crate::python::Interpreter;
use crate::run::process::{run_process, Exit, ProcessSpec};

/// The time one installer step may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// The virtualenv that still makes Python 2.7 environments.
const VIRTUALENV_FOR_PY2: &str = "virtualenv<20.22";
/// Lines of the installer's output kept in an `env-error` reason.
const TAIL_LINES: usize = 12;

/// Which tool makes the environment.
#[derive(Debug, Clone, PartialEq)]
pub enum Installer {
    Uv(PathBuf),
    VenvPip,
    VirtualenvPip,
}

impl Installer {
    pub fn choose(interpreter: &Interpreter) -> Result<Installer, String> {
        let forced = std::env::var("CROSSPICKLE_INSTALLER").unwrap_or_default();
        let py2 = interpreter
            .version
            .release()
            .first()
            .is_some_and(|&m| m < 3);
        let uv = || which::which("uv").ok();
        match forced.as_str() {
            "" | "auto" => {}
            "pip" => {
                return Ok(if py2 {
                    Installer::VirtualenvPip
                } else {
                    Installer::VenvPip
                })
            }
            "uv" if py2 => {
                return Err("CROSSPICKLE_INSTALLER=uv: uv cannot make Python 2 environments".into())
            }
            "uv" => {
                return uv()
                    .map(Installer::Uv)
                    .ok_or_else(|| "CROSSPICKLE_INSTALLER=uv but uv is not on PATH".into())
            }
            other => {
                return Err(format!(
                    "CROSSPICKLE_INSTALLER={other}: use `auto`, `pip` or `uv`"
                ))
            }
        }
        if py2 {
            return Ok(Installer::VirtualenvPip);
        }
        let release = interpreter.version.release();
        let uv_supports = release.first() > Some(&3)
            || (release.first() == Some(&3) && release.get(1) >= Some(&8));
        Ok(match uv().filter(|_| uv_supports) {
            Some(path) => Installer::Uv(path),
            None => Installer::VenvPip,
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Installer::Uv(_) => "uv",
            Installer::VenvPip => "venv+pip",
            Installer::VirtualenvPip => "virtualenv+pip",
        }
    }
}

/// Make the environment of `key` at `dest`.
pub async fn build(
    cache_dir: &Path,
    options: &EnvOptions,
    interpreter: &Interpreter,
    key: &EnvKey,
    dest: &Path,
    cancel: &CancellationToken,
) -> Result<(), EnvFailure> {
    let started = Instant::now();
    let installer = Installer::choose(interpreter).map_err(EnvFailure::Failed)?;
    let envs = dest
        .parent()
        .expect("an environment lives in the envs folder");
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{TMP_PREFIX}{}-", key.hash))
        .tempdir_in(envs)
        .map_err(|e| {
            failed(format!(
                "cannot make a temporary folder in {}: {e}",
                envs.display()
            ))
        })?;
    let venv = tmp.path();
    let python = super::python_in(venv);
    let steps = Steps {
        options,
        cancel,
        label: &interpreter.label,
    };
    let exe = interpreter.executable.as_os_str().to_owned();
    match &installer {
        Installer::Uv(uv) => {
            steps
                .run(
                    "uv venv",
                    uv,
                    vec!["venv".into(), "--python".into(), exe, venv.into()],
                    uv_env(),
                )
                .await?;
            let mut args: Vec<OsString> = vec![
                "pip".into(),
                "install".into(),
                "--python".into(),
                python.clone().into(),
            ];
            if options.offline {
                args.extend(["--offline".into(), "--no-index".into()]);
            }
            args.extend(find_links_args(options));
            args.extend(key.meta.requirements.iter().map(OsString::from));
            steps.run("uv pip install", uv, args, uv_env()).await?;
        }
        Installer::VenvPip if steps.pip_version(&interpreter.executable).await >= Some((22, 3)) => {
            // The interpreter's own pip installs into a venv made without one (`pip --python`,
            // pip 22.3 and later): seconds faster than seeding pip into every environment.
            let args = vec![
                "-m".into(),
                "venv".into(),
                "--without-pip".into(),
                venv.into(),
            ];
            steps
                .run(
                    "python -m venv",
                    &interpreter.executable,
                    args,
                    installer_env(),
                )
                .await?;
            let mut args: Vec<OsString> = vec![
                "-m".into(),
                "pip".into(),
                "--python".into(),
                python.clone().into(),
            ];
            args.push("install".into());
            args.extend(offline_args(options));
            args.extend(key.meta.requirements.iter().map(OsString::from));
            steps
                .run(
                    "pip install",
                    &interpreter.executable,
                    args,
                    installer_env(),
                )
                .await?;
        }
        Installer::VenvPip => {
            let args = vec!["-m".into(), "venv".into(), venv.into()];
            steps
                .run(
                    "python -m venv",
                    &interpreter.executable,
                    args,
                    installer_env(),
                )
                .await?;
            steps.pip_install(&python, &key.meta.requirements).await?;
        }
        Installer::VirtualenvPip => {
            let tool = virtualenv_tool(cache_dir, &steps, &interpreter.executable).await?;
            let app_data = store::tools_dir(cache_dir).join("virtualenv-app-data");
            let args = vec![
                "-m".into(),
                "virtualenv".into(),
                "--no-periodic-update".into(),
                "--app-data".into(),
                app_data.into(),
                venv.into(),
            ];
            let mut env = installer_env();
            env.push(("PYTHONPATH".into(), tool.into()));
            steps
                .run("virtualenv", &interpreter.executable, args, env)
                .await?;
            steps.pip_install(&python, &key.meta.requirements).await?;
        }
    }
    if !python.exists() {
        return Err(failed(format!(
            "{} made no {}",
            installer.name(),
            python.display()
        )));
    }
    let mut meta = key.meta.clone();
    meta.installer = installer.name().to_string();
    meta.created = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    meta.build_seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    let bytes = serde_json::to_vec_pretty(&meta).expect("the marker serializes");
    std::fs::write(venv.join(MARKER), bytes)
        .map_err(|e| failed(format!("cannot write the marker: {e}")))?;
    std::fs::rename(venv, dest).map_err(|e| {
        failed(format!(
            "cannot move the environment into {}: {e}",
            dest.display()
        ))
    })?;
    // Renamed away: dropping `tmp` finds nothing to remove.
    Ok(())
}

fn failed(message: String) -> EnvFailure {
    EnvFailure::Failed(message)
}

struct Steps<'a> {
    options: &'a EnvOptions,
    cancel: &'a CancellationToken,
    label: &'a str,
}

impl Steps<'_> {
    /// `python -m pip install` the requirements, as the user's pip is configured.
    async fn pip_install(&self, python: &Path, requirements: &[String]) -> Result<(), EnvFailure> {
        let mut args: Vec<OsString> = vec!["-m".into(), "pip".into(), "install".into()];
        args.extend(offline_args(self.options));
        args.extend(requirements.iter().map(OsString::from));
        self.run("pip install", python, args, installer_env()).await
    }

    /// The (major, minor) version of `python`'s own pip, if it has one.
    async fn pip_version(&self, python: &Path) -> Option<(u64, u64)> {
        let spec = ProcessSpec {
            program: python.to_path_buf(),
            args: vec!["-m".into(), "pip".into(), "--version".into()],
            env: installer_env(),
            cwd: None,
            timeout: Duration::from_secs(60),
            capture: 4096,
        };
        let finished = run_process(&spec, self.cancel).await.ok()?;
        if finished.exit != Exit::Code(0) {
            return None;
        }
        parse_pip_version(&finished.stdout.text())
    }

    /// Run one installer step; its failure is an `env-error` with the tail of what it said.
    async fn run(
        &self,
        what: &str,
        program: &Path,
        args: Vec<OsString>,
        env: Vec<(OsString, OsString)>,
    ) -> Result<(), EnvFailure> {
        let spec = ProcessSpec {
            program: program.to_path_buf(),
            args,
            env,
            cwd: None,
            timeout: STEP_TIMEOUT,
            capture: 64 * 1024,
        };
        let finished = run_process(&spec, self.cancel).await.map_err(|e| {
            failed(format!(
                "{what} for {}: cannot start {}: {e}",
                self.label,
                program.display()
            ))
        })?;
        let status = match finished.exit {
            Exit::Code(0) => return Ok(()),
            Exit::Cancelled => return Err(EnvFailure::Cancelled),
            Exit::Code(c) => format!("exit status {c}"),
            Exit::Signal(s) => crate::run::signal_name(s),
            Exit::TimedOut => format!("no end within {} s", STEP_TIMEOUT.as_secs()),
        };
        let said = tail(&format!(
            "{}\n{}",
            finished.stdout.text(),
            finished.stderr.text()
        ));
        Err(failed(format!(
            "{what} failed for {} ({status}):\n{said}",
            self.label
        )))
    }
}

/// virtualenv for a Python 2 interpreter, installed once with its own pip into `tools/`.
async fn virtualenv_tool(
    cache_dir: &Path,
    steps: &Steps<'_>,
    executable: &Path,
) -> Result<PathBuf, EnvFailure> {
    let tools = store::tools_dir(cache_dir);
    let id: String = {
        use sha2::{Digest, Sha256};
        Sha256::digest(executable.as_os_str().as_encoded_bytes())
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let dir = tools.join(format!("virtualenv-py2-{id}"));
    let ready = dir.join("ready");
    if ready.is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&tools)
        .map_err(|e| failed(format!("cannot make {}: {e}", tools.display())))?;
    let _lock = super::lock::acquire(&tools.join(format!("virtualenv-py2-{id}.lock")))
        .await
        .map_err(failed)?;
    if ready.is_file() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-virtualenv-")
        .tempdir_in(&tools)
        .map_err(|e| {
            failed(format!(
                "cannot make a temporary folder in {}: {e}",
                tools.display()
            ))
        })?;
    let mut args: Vec<OsString> = vec![
        "-m".into(),
        "pip".into(),
        "install".into(),
        "--target".into(),
        tmp.path().into(),
    ];
    args.extend(offline_args(steps.options));
    args.push(VIRTUALENV_FOR_PY2.into());
    let what = "installing virtualenv (for Python 2 environments)";
    let result = steps.run(what, executable, args, installer_env()).await;
    if let (Err(EnvFailure::Failed(message)), true) = (&result, steps.options.offline) {
        let hint = format!(
            "Python 2 environments need `{VIRTUALENV_FOR_PY2}`, installed once into {}: run once \
             without --offline, or put its wheels in a --find-links folder",
            tools.display()
        );
        return Err(failed(format!("{message}\n  {hint}")));
    }
    result?;
    std::fs::write(tmp.path().join("ready"), b"")
        .map_err(|e| failed(format!("cannot write in {}: {e}", tools.display())))?;
    std::fs::rename(tmp.path(), &dir).map_err(|e| {
        failed(format!(
            "cannot move virtualenv into {}: {e}",
            dir.display()
        ))
    })?;
    Ok(dir)
}

/// `pip 23.0.1 from /…/site-packages/pip (python 3.8)` → (23, 0).
fn parse_pip_version(said: &str) -> Option<(u64, u64)> {
    let version = said.strip_prefix("pip ")?.split_whitespace().next()?;
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
}

/// `--no-index` when offline, and every `--find-links`, as pip takes them.
fn offline_args(options: &EnvOptions) -> Vec<OsString> {
    let mut args = Vec::new();
    if options.offline {
        args.push("--no-index".into());
    }
    args.extend(find_links_args(options));
    args
}

fn find_links_args(options: &EnvOptions) -> Vec<OsString> {
    options
        .find_links
        .iter()
        .flat_map(|f| ["--find-links".into(), f.into()])
        .collect()
}

/// The caller's environment without `PYTHON*` (as for cases), pip told not to ask or nag
/// unless the user said otherwise.
fn installer_env() -> Vec<(OsString, OsString)> {
    let mut env = crate::run::sanitized_env(&Default::default());
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
fn uv_env() -> Vec<(OsString, OsString)> {
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

/// The last lines of what an installer said, without blank lines.
pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    let mut out = String::new();
    if start > 0 {
        out.push_str("  ...\n");
    }
    for l in &lines[start..] {
        let l: String = l.chars().take(400).collect();
        out.push_str("  ");
        out.push_str(&l);
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_versions() {
        assert_eq!(
            parse_pip_version("pip 23.0.1 from /x/pip (python 3.8)\n"),
            Some((23, 0))
        );
        assert_eq!(parse_pip_version("pip 9 from /x"), Some((9, 0)));
        assert_eq!(parse_pip_version("Python 3.8"), None);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let text: String = (1..=20).map(|i| format!("line {i}\n\n")).collect();
        let t = tail(&text);
        assert!(t.starts_with("  ...\n  line 9\n"), "{t}");
        assert!(t.ends_with("  line 20"));
        assert_eq!(tail("only\n"), "  only");
    }
}
