//! The environments of one crosspickle process: [`Environments::python_for`] answers the
//! python a run must use, reusing a made environment (a stat and a touch) or making it (under
//! its lock, once per process, shared by every run that needs it, a few at a time).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::future::{BoxFuture, FutureExt, Shared};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::error::EnvError;
use super::key::{self, EnvKey};
use super::options::EnvOptions;
use super::progress::BuildEvent;
use super::{build, store};
use crate::case::{Case, Params, Phase};
use crate::python::Interpreter;

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

    /// The python a run of `case` with `params` on `interpreter` in `phase` must use: the
    /// interpreter's own without requirements for that phase ([`Case::requires_for`]), else
    /// the one of its environment, made first if need be.
    pub async fn python_for(
        &self,
        interpreter: &Interpreter,
        case: &Case,
        phase: Option<Phase>,
        params: &Params,
        cancel: &CancellationToken,
    ) -> Result<PathBuf, EnvError> {
        let requires = case.requires_for(phase);
        if requires.is_empty() {
            return Ok(interpreter.executable.clone());
        }
        let requirements = key::resolve_requirements(&requires, params);
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
        return Ok(store::python_in(&dir));
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
        return Ok(store::python_in(&dir));
    }
    store::remove_leftovers(&envs, &key.hash);
    let (label, requirements) = (interpreter.label.as_str(), &key.meta.requirements);
    let tell = |event: BuildEvent<'_>| {
        if let Some(p) = &options.progress {
            p.tell(event)
        }
    };
    tell(BuildEvent::Started {
        interpreter: label,
        requirements,
    });
    let started = std::time::Instant::now();
    let built = build::build(cache_dir, options, interpreter, key, &dir, cancel).await;
    if !matches!(built, Err(EnvError::Cancelled)) {
        tell(BuildEvent::Finished {
            interpreter: label,
            requirements,
            result: built.as_ref().map(|_| ()),
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    built?;
    store::touch_last_used(&dir);
    Ok(store::python_in(&dir))
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
