//! File locks between crosspickle processes (advisory `flock`, released when the holder exits,
//! even by a crash): exclusive, so that one environment is made by one process at a time, and
//! shared ([`share_blocking`]), a lease that many hold at once and that an exclusive lock waits
//! for or, tried, finds taken.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use fs4::fs_std::FileExt;

/// Held while alive; dropping it releases the lock.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Why a lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot open the lock file {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot lock {}: {source}", path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("waiting for a lock: {0}")]
    Wait(#[source] tokio::task::JoinError),
}

/// Wait for the exclusive lock on `path` (made if missing), without blocking the runtime.
pub async fn acquire(path: &Path) -> Result<Lock, LockError> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || acquire_blocking(&path))
        .await
        .map_err(LockError::Wait)?
}

pub fn acquire_blocking(path: &Path) -> Result<Lock, LockError> {
    let file = open(path).map_err(|source| LockError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    FileExt::lock_exclusive(&file).map_err(|source| LockError::Lock {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Lock { _file: file })
}

/// A shared lock on `path` (made if missing): held with others' shared locks, never with an
/// exclusive one (this waits for that to be released).
pub fn share_blocking(path: &Path) -> Result<Lock, LockError> {
    let file = open(path).map_err(|source| LockError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    FileExt::lock_shared(&file).map_err(|source| LockError::Lock {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Lock { _file: file })
}

/// The lock on `path` if nobody holds it now.
pub fn try_acquire(path: &Path) -> Option<Lock> {
    let file = open(path).ok()?;
    match FileExt::try_lock_exclusive(&file) {
        Ok(true) => Some(Lock { _file: file }),
        _ => None,
    }
}

fn open(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
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
        let (a, b) = (
            share_blocking(&path).unwrap(),
            share_blocking(&path).unwrap(),
        );
        assert!(
            try_acquire(&path).is_none(),
            "a lease excludes an exclusive lock"
        );
        drop((a, b));
        assert!(try_acquire(&path).is_some());
        let e = acquire_blocking(&dir.path().join("no/such/folder/x.lock")).unwrap_err();
        assert!(
            e.to_string().starts_with("cannot open the lock file "),
            "{e}"
        );
    }
}
