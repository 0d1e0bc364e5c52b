//! What CPython bisects keep in the cache folder, seen from `crosspickle cache`: how much it
//! is ([`summary`]), what no bisect has used for a while ([`prune`]), and all of it but the
//! interpreters named with `--keep` ([`clean`]). The layout is the one [`super`] describes:
//! `<cache>/bisect/cpython/<checkout>/` with `src/`, `build/`, `builds/<key>/`, `failed/<key>`
//! and `logs/<key>.log`, and the compiler cache `<cache>/bisect/ccache/`.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::env::store::size_of;

/// Written last into a built interpreter's prefix: the build is complete.
pub const READY: &str = ".crosspickle-ready";
/// Touched in a built interpreter's prefix each time a bisect uses it again.
const LAST_USED: &str = ".crosspickle-last-used";
/// Written into the build folder after each build (the commit built last).
pub const BUILT: &str = ".crosspickle-built";

/// The folder of the checkouts' folders.
pub fn checkouts_dir(cache_dir: &Path) -> PathBuf {
    crate::bisect::cache_root(cache_dir).join("cpython")
}

/// The compiler cache's folder.
pub fn compiler_cache_dir(cache_dir: &Path) -> PathBuf {
    crate::bisect::cache_root(cache_dir).join("ccache")
}

/// Say that the built interpreter in `prefix` was used now.
pub fn touch(prefix: &Path) {
    let _ = std::fs::write(prefix.join(LAST_USED), b"");
}

/// How much CPython bisects keep.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Summary {
    /// Checkouts bisected (each with its clone, build folder and built interpreters).
    pub checkouts: usize,
    /// Built interpreters, kept ones included.
    pub builds: usize,
    /// Built interpreters named with `--keep`.
    pub kept: usize,
    /// Bytes of all of it but the compiler cache.
    pub bytes: u64,
    pub compiler_cache_bytes: u64,
}

/// What [`prune`] or [`clean`] removed, and how many built interpreters named with `--keep`
/// it left.
#[derive(Debug, Default)]
pub struct Removed {
    pub builds: usize,
    pub bytes: u64,
    pub kept: usize,
}

/// How much CPython bisects keep in `cache_dir`; `None` when they keep nothing.
pub fn summary(cache_dir: &Path) -> Option<Summary> {
    let root = crate::bisect::cache_root(cache_dir);
    if !root.is_dir() {
        return None;
    }
    let kept = kept_pythons(cache_dir);
    let mut summary = Summary {
        compiler_cache_bytes: size_of(&compiler_cache_dir(cache_dir)),
        ..Summary::default()
    };
    for checkout in children(&checkouts_dir(cache_dir)) {
        summary.checkouts += 1;
        summary.bytes += size_of(&checkout);
        for prefix in children(&checkout.join("builds")) {
            summary.builds += 1;
            summary.kept += usize::from(is_kept(&prefix, &kept));
        }
    }
    Some(summary)
}

/// Remove what no bisect has used since `before`: built interpreters (those named with
/// `--keep` excepted) with their failure notes and logs, and a checkout's clone and build
/// folder when nothing was built there since (a checkout left with nothing goes whole).
pub fn prune(cache_dir: &Path, before: SystemTime) -> std::io::Result<Removed> {
    remove_from_checkouts(cache_dir, |path| last_used(path).is_none_or(|t| t < before))
}

/// Remove everything CPython bisects keep but the interpreters named with `--keep`: clones,
/// build folders, other built interpreters, notes, logs and the compiler cache.
pub fn clean(cache_dir: &Path) -> std::io::Result<Removed> {
    let mut removed = remove_from_checkouts(cache_dir, |_| true)?;
    let ccache = compiler_cache_dir(cache_dir);
    if ccache.exists() {
        removed.bytes += size_of(&ccache);
        std::fs::remove_dir_all(&ccache)?;
    }
    let root = crate::bisect::cache_root(cache_dir);
    let _ = std::fs::remove_dir(checkouts_dir(cache_dir));
    let _ = std::fs::remove_dir(&root);
    Ok(removed)
}

/// In each checkout's folder: remove what `stale` picks of its built interpreters (but those
/// named with `--keep`), failure notes and logs, and its clone with its build folder; then the
/// folder itself if nothing is left in it.
fn remove_from_checkouts(
    cache_dir: &Path,
    stale: impl Fn(&Path) -> bool,
) -> std::io::Result<Removed> {
    let kept = kept_pythons(cache_dir);
    let mut removed = Removed::default();
    let mut remove = |path: &Path| -> std::io::Result<()> {
        removed.bytes += size_of(path);
        if path.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        }
    };
    let (mut builds, mut kept_builds) = (0, 0);
    for checkout in children(&checkouts_dir(cache_dir)) {
        for prefix in children(&checkout.join("builds")) {
            if is_kept(&prefix, &kept) {
                kept_builds += 1;
            } else if stale(&prefix) {
                remove(&prefix)?;
                builds += 1;
            }
        }
        for notes in ["failed", "logs"] {
            for note in children(&checkout.join(notes)) {
                if stale(&note) {
                    remove(&note)?;
                }
            }
        }
        // The clone serves only the build folder.
        if stale(&checkout.join("build")) {
            for dir in ["build", "src"] {
                if checkout.join(dir).exists() {
                    remove(&checkout.join(dir))?;
                }
            }
        }
        for dir in ["builds", "failed", "logs", ""] {
            // Only when empty.
            let _ = std::fs::remove_dir(checkout.join(dir));
        }
    }
    removed.builds = builds;
    removed.kept = kept_builds;
    Ok(removed)
}

/// When a bisect last used `path`: a built interpreter's prefix (built, or used again), the
/// build folder (built in), or a note (written).
fn last_used(path: &Path) -> Option<SystemTime> {
    [LAST_USED, READY, BUILT]
        .iter()
        .map(|name| path.join(name))
        .chain(std::iter::once(path.to_path_buf()))
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .max()
}

/// The interpreters kept with `--keep` (their pythons' paths).
fn kept_pythons(cache_dir: &Path) -> Vec<PathBuf> {
    let file = crate::python::config::kept_file(cache_dir);
    match crate::python::config::PythonsConfig::load(&file) {
        Ok(config) => config.named.into_values().collect(),
        Err(_) => Vec::new(),
    }
}

fn is_kept(prefix: &Path, kept: &[PathBuf]) -> bool {
    kept.iter().any(|python| python.starts_with(prefix))
}

/// The entries of `dir`, sorted; none when it cannot be read.
fn children(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}
