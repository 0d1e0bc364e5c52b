//! The environments folder of the cache: `envs/<hash>/` complete environments (each with its
//! marker, written last), `envs/<hash>.lock` their locks, `envs/.tmp-<hash>-*` builds under way
//! or left by a crash, `tools/` what crosspickle installed for itself (virtualenv for 2.7).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::key::EnvMeta;

/// Written into an environment after a successful install; its presence makes it complete.
pub const MARKER: &str = "crosspickle-env.json";
/// Touched each time a process first uses an environment.
const LAST_USED: &str = ".crosspickle-last-used";
pub const TMP_PREFIX: &str = ".tmp-";

/// The python of the environment in `dir`.
pub fn python_in(dir: &Path) -> PathBuf {
    dir.join("bin").join("python")
}

pub fn envs_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join("envs")
}

pub fn tools_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join("tools")
}

/// Complete: its marker is there (written last) and so is its python (a folder whose python
/// was removed is made again).
pub fn is_ready(dir: &Path) -> bool {
    dir.join(MARKER).is_file() && python_in(dir).exists()
}

pub fn touch_last_used(dir: &Path) {
    let _ = std::fs::write(dir.join(LAST_USED), b"");
}

/// Remove what failed or crashed builds of `hash` left (the caller holds its lock).
pub fn remove_leftovers(envs: &Path, hash: &str) {
    let prefix = format!("{TMP_PREFIX}{hash}-");
    if let Ok(entries) = std::fs::read_dir(envs) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    // A folder without a marker is not an environment (made by hand, or half removed).
    let dir = envs.join(hash);
    if dir.exists() && !is_ready(&dir) {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// One environment in the cache, for `crosspickle cache list`.
#[derive(Debug, Clone, Serialize)]
pub struct StoredEnv {
    pub hash: String,
    pub path: PathBuf,
    #[serde(flatten)]
    pub meta: EnvMeta,
    pub size_bytes: u64,
    /// Seconds since the epoch.
    pub last_used: Option<u64>,
}

/// Every complete environment in `cache_dir`, most recently used first.
pub fn list(cache_dir: &Path) -> Vec<StoredEnv> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(envs_dir(cache_dir)) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        let Some(meta) = std::fs::read(path.join(MARKER))
            .ok()
            .and_then(|b| serde_json::from_slice::<EnvMeta>(&b).ok())
        else {
            continue;
        };
        let last_used = last_used(&path)
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        out.push(StoredEnv {
            hash: name,
            size_bytes: size_of(&path),
            path,
            meta,
            last_used,
        });
    }
    out.sort_by(|a, b| b.last_used.cmp(&a.last_used).then(a.hash.cmp(&b.hash)));
    out
}

/// Bytes of the files under `path`, symbolic links not followed.
pub fn size_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|rd| rd.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
}

/// What `clean` or `prune` removed.
#[derive(Debug, Default, Serialize)]
pub struct Cleaned {
    pub environments: usize,
    /// Folders that were no complete environment: builds under way or left behind, and
    /// environments whose interpreter is gone.
    pub unusable: usize,
    pub bytes: u64,
}

/// Remove every environment, build leftover and tool of `cache_dir`. An environment being made
/// right now (its lock held) is left alone.
pub fn clean(cache_dir: &Path) -> std::io::Result<Cleaned> {
    let mut cleaned = remove_envs(cache_dir, |_| true)?;
    let tools = tools_dir(cache_dir);
    if tools.exists() {
        cleaned.bytes += size_of(&tools);
        remove_dir(&tools)?;
    }
    Ok(cleaned)
}

/// Remove the environments of `cache_dir` that no process has used since `before`, those
/// whose interpreter is gone, and what failed or crashed builds left. An environment being
/// made right now (its lock held) is left alone, and so are crosspickle's tools.
pub fn prune(cache_dir: &Path, before: SystemTime) -> std::io::Result<Cleaned> {
    remove_envs(cache_dir, |path| {
        !is_ready(path) || last_used(path).is_none_or(|used| used < before)
    })
}

/// When a process last used the environment in `dir` (when it was made, if none has since).
fn last_used(dir: &Path) -> Option<SystemTime> {
    [LAST_USED, MARKER].iter().find_map(|f| {
        std::fs::metadata(dir.join(f))
            .and_then(|m| m.modified())
            .ok()
    })
}

/// Remove the folders of the environments folder that `doomed` picks (given each folder: an
/// environment, complete or not, or a build under way or left behind), those whose lock
/// another process holds excepted, and every half-removed one.
fn remove_envs(cache_dir: &Path, doomed: impl Fn(&Path) -> bool) -> std::io::Result<Cleaned> {
    let mut cleaned = Cleaned::default();
    let envs = envs_dir(cache_dir);
    let Ok(entries) = std::fs::read_dir(&envs) else {
        return Ok(cleaned);
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if !path.is_dir() {
            continue;
        }
        if name.starts_with(".trash-") {
            remove_dir(&path)?;
            continue;
        }
        if !doomed(&path) {
            continue;
        }
        let hash = name
            .strip_prefix(TMP_PREFIX)
            .and_then(|r| r.split('-').next())
            .unwrap_or(&name)
            .to_string();
        let Some(_lock) = crate::sys::lock::try_acquire(&envs.join(format!("{hash}.lock"))) else {
            continue;
        };
        cleaned.bytes += size_of(&path);
        if is_ready(&path) {
            cleaned.environments += 1;
        } else {
            cleaned.unusable += 1;
        }
        // Lock files stay: removing one while another process waits on it would let two
        // processes hold "the" lock at once.
        remove_dir(&path)?;
    }
    Ok(cleaned)
}

/// Rename out of the way first, so nobody ever sees a half-removed environment as complete.
fn remove_dir(path: &Path) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    let trash = parent.join(format!(
        ".trash-{}-{}",
        std::process::id(),
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    match std::fs::rename(path, &trash) {
        Ok(()) => std::fs::remove_dir_all(&trash),
        Err(_) => std::fs::remove_dir_all(path),
    }
}
