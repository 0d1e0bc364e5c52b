//! Making one environment: in a temporary folder next to its final place, then renamed into
//! place once its requirements are installed and its marker written (the caller holds the
//! environment's lock).
//!
//! The installer: `uv` (the one beside crosspickle's executable, which its wheel brings, else
//! PATH's) when the interpreter is 3.6 or later (`uv venv`, then `uv pip install`); otherwise `python -m venv` and the environment's own pip; for Python 2,
//! virtualenv (below 20.22, the last to make 2.7 environments), which crosspickle installs once
//! per 2.x interpreter into `tools/` with that interpreter's own pip.
//! `CROSSPICKLE_INSTALLER=pip` or `=uv` forces one. The user's installer configuration
//! (pip.conf, `PIP_*` variables, proxies) is left as it is; `--offline` adds `--no-index`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use tokio_util::sync::CancellationToken;

use super::error::EnvError;
use super::key::EnvKey;
use super::options::EnvOptions;
use super::pip::{self, installer_env, offline_args, uv_env};
use super::store::{self, python_in, MARKER, TMP_PREFIX};
use crate::python::Interpreter;
use crate::sys::process::{self, Exit, Output, ProcessSpec};

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
    pub fn choose(interpreter: &Interpreter) -> Result<Installer, EnvError> {
        let forced = std::env::var("CROSSPICKLE_INSTALLER").unwrap_or_default();
        let py2 = interpreter
            .version
            .release()
            .first()
            .is_some_and(|&m| m < 3);
        let uv = crate::python::download::bundled_or_path_uv;
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
                return Err(EnvError::Installer(
                    "CROSSPICKLE_INSTALLER=uv: uv cannot make Python 2 environments".into(),
                ))
            }
            "uv" => {
                return uv().map(Installer::Uv).ok_or_else(|| {
                    EnvError::Installer(
                        "CROSSPICKLE_INSTALLER=uv but uv is neither beside crosspickle nor on PATH"
                            .into(),
                    )
                })
            }
            other => {
                return Err(EnvError::Installer(format!(
                    "CROSSPICKLE_INSTALLER={other}: use `auto`, `pip` or `uv`"
                )))
            }
        }
        if py2 {
            return Ok(Installer::VirtualenvPip);
        }
        // uv makes environments for 3.6 and later (0.13 made and filled 3.6's and 3.7's; it
        // refuses 2.7, which has no `-I`).
        let release = interpreter.version.release();
        let uv_supports = release.first() > Some(&3)
            || (release.first() == Some(&3) && release.get(1) >= Some(&6));
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
) -> Result<(), EnvError> {
    let started = Instant::now();
    let installer = Installer::choose(interpreter)?;
    let envs = dest
        .parent()
        .expect("an environment lives in the envs folder");
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{TMP_PREFIX}{}-", key.hash))
        .tempdir_in(envs)
        .map_err(|e| {
            io(
                format!("cannot make a temporary folder in {}", envs.display()),
                e,
            )
        })?;
    let venv = tmp.path();
    let python = python_in(venv);
    // Every step runs here, an empty folder of crosspickle's, isolated (`-I`, or `-E -s` on
    // Python 2): no `pip.py` or `venv.py` of the caller's folder stands in for the installer.
    let neutral = tempfile::Builder::new()
        .prefix(".work-")
        .tempdir_in(envs)
        .map_err(|e| {
            io(
                format!("cannot make a temporary folder in {}", envs.display()),
                e,
            )
        })?;
    let major = interpreter.version.release().first().copied().unwrap_or(3);
    let steps = Steps {
        options,
        cancel,
        label: &interpreter.label,
        flags: crate::python::isolating_flags(major),
        cwd: neutral.path(),
    };
    let requirements = &key.meta.requirements;
    match &installer {
        Installer::Uv(uv) => steps.uv(uv, interpreter, venv, requirements).await?,
        Installer::VenvPip
            if pip::version(&interpreter.executable, steps.flags, steps.cwd, cancel).await
                >= Some((22, 3)) =>
        {
            steps.outside_pip(interpreter, venv, requirements).await?
        }
        Installer::VenvPip => {
            let venv_step = ProcessSpec::new(&interpreter.executable, Some(pip::STEP_TIME_LIMIT))
                .args(steps.flags.iter().copied())
                .args(["-m", "venv"])
                .arg(venv)
                .env(installer_env());
            steps.run("python -m venv", venv_step).await?;
            steps.pip_install(&python, requirements).await?;
        }
        Installer::VirtualenvPip => {
            steps.virtualenv(cache_dir, interpreter, venv).await?;
            steps.pip_install(&python, requirements).await?;
        }
    }
    if !python.exists() {
        return Err(EnvError::NoPython {
            installer: installer.name(),
            python,
        });
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
        .map_err(|e| io("cannot write the marker".into(), e))?;
    std::fs::rename(venv, dest).map_err(|e| {
        io(
            format!("cannot move the environment into {}", dest.display()),
            e,
        )
    })?;
    // Renamed away: dropping `tmp` finds nothing to remove.
    Ok(())
}

fn io(context: String, source: std::io::Error) -> EnvError {
    EnvError::Io {
        context,
        source: Arc::new(source),
    }
}

struct Steps<'a> {
    options: &'a EnvOptions,
    cancel: &'a CancellationToken,
    label: &'a str,
    /// What every Python step starts with ([`crate::python::isolating_flags`]).
    flags: &'static [&'static str],
    /// The empty folder every step runs in.
    cwd: &'a Path,
}

impl Steps<'_> {
    /// `uv venv`, then `uv pip install` into it.
    async fn uv(
        &self,
        uv: &Path,
        interpreter: &Interpreter,
        venv: &Path,
        requirements: &[String],
    ) -> Result<(), EnvError> {
        let make = ProcessSpec::new(uv, Some(pip::STEP_TIME_LIMIT))
            .args(["venv", "--python"])
            .arg(&interpreter.executable)
            .arg(venv)
            .env(uv_env());
        self.run("uv venv", make).await?;
        let mut install = ProcessSpec::new(uv, Some(pip::STEP_TIME_LIMIT))
            .args(["pip", "install", "--python"])
            .arg(python_in(venv))
            .env(uv_env());
        if self.options.offline {
            install = install.args(["--offline", "--no-index"]);
        }
        let install = install
            .args(pip::find_links_args(&self.options.find_links))
            .args(requirements);
        self.run("uv pip install", install).await
    }

    /// A venv made without pip, and the interpreter's own pip installing into it
    /// (`pip --python`, pip 22.3 and later): seconds faster than seeding pip into every
    /// environment.
    async fn outside_pip(
        &self,
        interpreter: &Interpreter,
        venv: &Path,
        requirements: &[String],
    ) -> Result<(), EnvError> {
        let make = ProcessSpec::new(&interpreter.executable, Some(pip::STEP_TIME_LIMIT))
            .args(self.flags.iter().copied())
            .args(["-m", "venv", "--without-pip"])
            .arg(venv)
            .env(installer_env());
        self.run("python -m venv", make).await?;
        let install = pip::command(&interpreter.executable, self.flags)
            .arg("--python")
            .arg(python_in(venv))
            .arg("install")
            .args(self.index_args())
            .args(requirements);
        self.run("pip install", install).await
    }

    /// A Python 2 environment made by virtualenv (installed once into `tools/`).
    async fn virtualenv(
        &self,
        cache_dir: &Path,
        interpreter: &Interpreter,
        venv: &Path,
    ) -> Result<(), EnvError> {
        let tool = virtualenv_tool(cache_dir, self, &interpreter.executable).await?;
        let app_data = store::tools_dir(cache_dir).join("virtualenv-app-data");
        // `-s`, not `-E`: virtualenv is found through PYTHONPATH.
        let make = ProcessSpec::new(&interpreter.executable, Some(pip::STEP_TIME_LIMIT))
            .args([
                "-s",
                "-m",
                "virtualenv",
                "--no-periodic-update",
                "--app-data",
            ])
            .arg(app_data)
            .arg(venv)
            .env(installer_env())
            .set_env("PYTHONPATH", tool);
        self.run("virtualenv", make).await
    }

    /// `python -m pip install` the requirements, as the user's pip is configured.
    async fn pip_install(&self, python: &Path, requirements: &[String]) -> Result<(), EnvError> {
        let install = pip::command(python, self.flags)
            .arg("install")
            .args(self.index_args())
            .args(requirements);
        self.run("pip install", install).await
    }

    fn index_args(&self) -> Vec<OsString> {
        offline_args(self.options.offline, &self.options.find_links)
    }

    /// Run one installer step; its failure is an `env-error` with the tail of what it said.
    async fn run(&self, what: &str, spec: ProcessSpec) -> Result<(), EnvError> {
        let spec = spec.cwd(self.cwd).output(Output::Capture(64 * 1024));
        let finished = process::run(&spec, self.cancel)
            .await
            .map_err(|e| EnvError::Start {
                what: what.to_string(),
                label: self.label.to_string(),
                program: spec.program.clone(),
                source: Arc::new(e),
            })?;
        let status = match finished.exit {
            Exit::Code(0) => return Ok(()),
            Exit::Cancelled => return Err(EnvError::Cancelled),
            Exit::Code(c) => format!("exit status {c}"),
            Exit::Signal(s) => crate::sys::signal::name(s),
            Exit::TimedOut => format!("no end within {} s", pip::STEP_TIME_LIMIT.as_secs()),
        };
        let said = tail(&format!(
            "{}\n{}",
            finished.stdout.text(),
            finished.stderr.text()
        ));
        Err(EnvError::Step {
            what: what.to_string(),
            label: self.label.to_string(),
            status,
            said,
        })
    }
}

/// virtualenv for a Python 2 interpreter, installed once with its own pip into `tools/`.
async fn virtualenv_tool(
    cache_dir: &Path,
    steps: &Steps<'_>,
    executable: &Path,
) -> Result<PathBuf, EnvError> {
    let tools = store::tools_dir(cache_dir);
    let id = crate::sys::hash::short_hex(executable.as_os_str().as_encoded_bytes(), 12);
    let dir = tools.join(format!("virtualenv-py2-{id}"));
    let ready = dir.join("ready");
    if ready.is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&tools)
        .map_err(|e| io(format!("cannot make {}", tools.display()), e))?;
    let _lock = crate::sys::lock::acquire(&tools.join(format!("virtualenv-py2-{id}.lock")))
        .await
        .map_err(|e| EnvError::Lock(Arc::new(e)))?;
    if ready.is_file() {
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-virtualenv-")
        .tempdir_in(&tools)
        .map_err(|e| {
            io(
                format!("cannot make a temporary folder in {}", tools.display()),
                e,
            )
        })?;
    let install = pip::command(executable, steps.flags)
        .args(["install", "--target"])
        .arg(tmp.path())
        .args(steps.index_args())
        .arg(VIRTUALENV_FOR_PY2);
    let what = "installing virtualenv (for Python 2 environments)";
    match steps.run(what, install).await {
        Err(e) if steps.options.offline && !matches!(e, EnvError::Cancelled) => {
            let hint = format!(
                "Python 2 environments need `{VIRTUALENV_FOR_PY2}`, installed once into {}: run once \
                 without --offline, or put its wheels in a --find-links folder",
                tools.display()
            );
            return Err(EnvError::Hint {
                source: Box::new(e),
                hint,
            });
        }
        result => result?,
    }
    std::fs::write(tmp.path().join("ready"), b"")
        .map_err(|e| io(format!("cannot write in {}", tools.display()), e))?;
    std::fs::rename(tmp.path(), &dir)
        .map_err(|e| io(format!("cannot move virtualenv into {}", dir.display()), e))?;
    Ok(dir)
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
    fn tail_keeps_the_last_lines() {
        let text: String = (1..=20).map(|i| format!("line {i}\n\n")).collect();
        let t = tail(&text);
        assert!(t.starts_with("  ...\n  line 9\n"), "{t}");
        assert!(t.ends_with("  line 20"));
        assert_eq!(tail("only\n"), "  only");
    }
}
