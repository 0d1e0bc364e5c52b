//! Environments for cases with `requires`: one virtual environment per (interpreter, resolved
//! requirement set) in the cache folder, made once and reused by every later run and process.
//!
//! The runner calls [`Environments::python_for`] before each run; it answers the interpreter
//! itself for a case without `requires`, and otherwise the python of the environment, making it
//! first when needed (once per process, shared by every run that needs it, a few at a time).
//! How an environment is made is [`build`]'s business, with [`pip`]'s arguments and
//! environment; its name and identity [`key`]'s; what is in the cache folder, for
//! `crosspickle cache`, [`store`]'s. Why one could not be made is an [`EnvError`].

pub mod build;
pub mod key;
pub mod pip;
pub mod store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::{BoxFuture, FutureExt, Shared};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::case::{Case, Params};
use crate::python::Interpreter;

pub use key::{EnvKey, EnvMeta};

/// How environments are made: where they live and where packages may come from.
#[derive(Debug, Clone, Default)]
pub struct EnvOptions {
    /// The cache folder (`--cache-dir`); environments go in its `envs/` folder.
    pub cache_dir: Option<PathBuf>,
    /// Install only from the installer's cache and `find_links` (`--offline`).
    pub offline: bool,
    /// Folders or URLs of distributions, passed to the installer (`--find-links`).
    pub find_links: Vec<String>,
    /// Environments made at once (0: one).
    pub jobs: usize,
}

/// Why a run has no environment. Shared by every run waiting on the same environment, hence
/// `Clone` (the I/O errors behind an `Arc`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum EnvError {
    /// The run was stopped while its environment was being made.
    #[error("cancelled")]
    Cancelled,
    #[error(
        "no cache folder to keep environments in: pass --cache-dir or set CROSSPICKLE_CACHE_DIR"
    )]
    NoCacheFolder,
    /// `CROSSPICKLE_INSTALLER` asks for what cannot be.
    #[error("{0}")]
    Installer(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error(transparent)]
    Lock(Arc<crate::sys::lock::LockError>),
    #[error("{what} for {label}: cannot start {}: {source}", program.display())]
    Start {
        what: String,
        label: String,
        program: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    /// An installer step failed: the last lines of what it said.
    #[error("{what} failed for {label} ({status}):\n{said}")]
    Step {
        what: String,
        label: String,
        status: String,
        said: String,
    },
    #[error("{installer} made no {}", python.display())]
    NoPython {
        installer: &'static str,
        python: PathBuf,
    },
    /// A failure, and what to do about it.
    #[error("{source}\n  {hint}")]
    Hint {
        #[source]
        source: Box<EnvError>,
        hint: String,
    },
}

type Pending = Shared<BoxFuture<'static, Result<PathBuf, EnvError>>>;

/// The environments of one crosspickle process.
pub struct Environments {
    options: EnvOptions,
    builds: Arc<Semaphore>,
    pending: Mutex<HashMap<String, Pending>>,
}

impl Environments {
    pub fn new(options: EnvOptions) -> Self {
        let builds = Arc::new(Semaphore::new(options.jobs.max(1)));
        Environments {
            options,
            builds,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// The python a run of `case` with `params` on `interpreter` must use: the interpreter's
    /// own without `requires`, else the one of its environment, made first if need be.
    pub async fn python_for(
        &self,
        interpreter: &Interpreter,
        case: &Case,
        params: &Params,
        cancel: &CancellationToken,
    ) -> Result<PathBuf, EnvError> {
        if case.requires.is_empty() {
            return Ok(interpreter.executable.clone());
        }
        let requirements = resolve_requirements(&case.requires, params);
        let key = EnvKey::new(interpreter, &requirements);
        let pending = {
            let mut pending = self.pending.lock().expect("no panics while locked");
            pending
                .entry(key.hash.clone())
                .or_insert_with(|| {
                    let (options, builds, cancel) =
                        (self.options.clone(), self.builds.clone(), cancel.clone());
                    let interpreter = interpreter.clone();
                    async move { ensure(&options, &builds, &interpreter, &key, &cancel).await }
                        .boxed()
                        .shared()
                })
                .clone()
        };
        pending.await
    }
}

/// The python of the environment holding `requirements` (placeholders already replaced) for
/// `interpreter`, made if need be: for callers outside the run loop, such as bisect.
pub async fn python_with(
    options: &EnvOptions,
    interpreter: &Interpreter,
    requirements: &[String],
    cancel: &CancellationToken,
) -> Result<PathBuf, EnvError> {
    let key = EnvKey::new(interpreter, requirements);
    ensure(options, &Semaphore::new(1), interpreter, &key, cancel).await
}

/// Whether the environment holding `requirements` for `interpreter` is made already.
pub fn is_made(options: &EnvOptions, interpreter: &Interpreter, requirements: &[String]) -> bool {
    options.cache_dir.as_ref().is_some_and(|cache_dir| {
        let key = EnvKey::new(interpreter, requirements);
        store::is_ready(&store::envs_dir(cache_dir).join(key.hash))
    })
}

/// The environment of `key`, reused when it is there, else made (under its lock).
async fn ensure(
    options: &EnvOptions,
    builds: &Semaphore,
    interpreter: &Interpreter,
    key: &EnvKey,
    cancel: &CancellationToken,
) -> Result<PathBuf, EnvError> {
    let Some(cache_dir) = &options.cache_dir else {
        return Err(EnvError::NoCacheFolder);
    };
    let envs = store::envs_dir(cache_dir);
    let dir = envs.join(&key.hash);
    // The warm path: no lock, no installer; one stat and a touch.
    if store::is_ready(&dir) {
        store::touch_last_used(&dir);
        return Ok(python_in(&dir));
    }
    let _permit = builds.acquire().await.map_err(|_| EnvError::Cancelled)?;
    if cancel.is_cancelled() {
        return Err(EnvError::Cancelled);
    }
    std::fs::create_dir_all(&envs).map_err(|e| EnvError::Io {
        context: format!("cannot make the folder {}", envs.display()),
        source: Arc::new(e),
    })?;
    let _lock = crate::sys::lock::acquire(&envs.join(format!("{}.lock", key.hash)))
        .await
        .map_err(|e| EnvError::Lock(Arc::new(e)))?;
    // Another process may have made it while we waited for the lock.
    if store::is_ready(&dir) {
        store::touch_last_used(&dir);
        return Ok(python_in(&dir));
    }
    store::remove_leftovers(&envs, &key.hash);
    build::build(cache_dir, options, interpreter, key, &dir, cancel).await?;
    store::touch_last_used(&dir);
    Ok(python_in(&dir))
}

/// Of the environments `wanted` (interpreter, requirements with placeholders replaced), those
/// not made yet: (interpreter label, sorted requirements), each once. Read before a run to
/// tell the user why the first one is slow.
pub fn missing<'a>(
    wanted: impl IntoIterator<Item = (&'a Interpreter, Vec<String>)>,
    options: &EnvOptions,
) -> Vec<(String, Vec<String>)> {
    let Some(cache_dir) = &options.cache_dir else {
        return Vec::new();
    };
    let envs = store::envs_dir(cache_dir);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (interpreter, requirements) in wanted {
        let key = EnvKey::new(interpreter, &requirements);
        if seen.insert(key.hash.clone()) && !store::is_ready(&envs.join(&key.hash)) {
            out.push((interpreter.label.clone(), key.meta.requirements));
        }
    }
    out
}

/// The python of the environment in `dir`.
pub fn python_in(dir: &Path) -> PathBuf {
    dir.join("bin").join("python")
}

/// The requirement strings with every `{name}` replaced by the value of param `name`.
pub fn resolve_requirements(requires: &[String], params: &Params) -> Vec<String> {
    requires
        .iter()
        .map(|req| {
            let mut out = req.clone();
            for (name, value) in &params.0 {
                out = out.replace(&format!("{{{name}}}"), &value.to_string());
            }
            out.trim().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::ParamValue;

    #[test]
    fn placeholders_take_param_values() {
        let mut p = indexmap::IndexMap::new();
        p.insert("loky".to_string(), ParamValue::Str("2.8.0".into()));
        p.insert("n".to_string(), ParamValue::Int(3));
        let reqs = vec![
            "loky=={loky}".to_string(),
            " cloudpickle==1.{n}.0 ; python_version < \"3.8\"".to_string(),
        ];
        assert_eq!(
            resolve_requirements(&reqs, &Params(p)),
            vec![
                "loky==2.8.0".to_string(),
                "cloudpickle==1.3.0 ; python_version < \"3.8\"".to_string()
            ]
        );
    }
}
