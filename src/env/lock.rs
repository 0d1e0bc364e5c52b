//! Exclusive file locks between crosspickle processes (advisory `flock`, released when the
//! holder exits, even by a crash), so that one environment is made by one process at a time.

use std::fs::{File, OpenOptions};
use std::path::Path;

use fs4::fs_std::FileExt;

/// Held while alive; dropping it releases the lock.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Wait for the exclusive lock on `path` (made if missing), without blocking the runtime.
pub async fn acquire(path: &Path) -> Result<Lock, String> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || acquire_blocking(&path))
        .await
        .map_err(|e| format!("waiting for a lock: {e}"))?
}

pub fn acquire_blocking(path: &Path) -> Result<Lock, String> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open the lock file {}: {e}", path.display()))?;
    FileExt::lock_exclusive(&file).map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    Ok(Lock { _file: file })
}

/// The lock on `path` if nobody holds it now.
pub fn try_acquire(path: &Path) -> Option<Lock> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .ok()?;
    match FileExt::try_lock_exclusive(&file) {
        Ok(true) => Some(Lock { _file: file }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_excludes_others_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = acquire_blocking(&path).unwrap();
        assert!(try_acquire(&path).is_none());
        drop(held);
        assert!(try_acquire(&path).is_some());
    }
}
