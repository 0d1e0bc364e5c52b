//! Atomic file writes: readers see the old file or the new one, never half of one; new files
//! that never replace one that exists; and what crosspickle asks of a file that depends on the
//! operating system (permission bits, executability, identity, symbolic links).

use std::fs::{Metadata, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::os;

/// What tells one version of a file from another: its answer is reused while these stay the
/// same (an interpreter's probe). `inode` and `device` are 0 where the system has none to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    pub size: u64,
    pub mtime_ns: i128,
    pub inode: u64,
    pub device: u64,
}

/// The identity of the file `path` names (through symbolic links).
pub fn identity(path: &Path) -> std::io::Result<FileIdentity> {
    Ok(os::identity(&std::fs::metadata(path)?))
}

/// The permission bits of a file (`0o7777` of its Unix mode; on Windows `0o444` or `0o666`
/// by its read-only flag, with `0o111` for a folder).
pub fn mode(meta: &Metadata) -> u32 {
    os::mode(meta)
}

/// How many names the file has (hard links; 1 on Windows, where std cannot tell yet).
pub fn link_count(meta: &Metadata) -> u64 {
    os::link_count(meta)
}

/// Files `options` creates get the permission bits `mode` (less the umask; no effect on
/// Windows).
pub fn create_with_mode(options: &mut OpenOptions, mode: u32) {
    os::create_with_mode(options, mode)
}

/// Give `path` the permission bits `mode` (on Windows, only whether it is read-only: when
/// `mode` lets nobody write).
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    match os::permissions(mode) {
        Some(permissions) => std::fs::set_permissions(path, permissions),
        None => {
            let mut permissions = std::fs::metadata(path)?.permissions();
            permissions.set_readonly(mode & 0o222 == 0);
            std::fs::set_permissions(path, permissions)
        }
    }
}

/// `path` is a file that can be run as a program (a mode with an execute bit on Unix; a name
/// in `PATHEXT`, `.exe` by default, on Windows).
pub fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| os::is_executable(&m, path))
}

/// A symbolic link at `link` to `target` (on Windows a file link, which needs the right to
/// make one: developer mode or an administrator).
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
    os::symlink(target.as_ref(), link.as_ref())
}

/// The error says a path went through too many symbolic links (a loop).
pub fn is_symlink_loop(e: &std::io::Error) -> bool {
    os::is_symlink_loop(e)
}

/// A path that is not valid Unicode (bytes that are no UTF-8 on Unix, a lone surrogate on
/// Windows), for tests of what refuses one.
#[cfg(test)]
pub fn non_unicode_path() -> std::path::PathBuf {
    os::non_unicode_path()
}

/// Write `bytes` to `path` through a temporary file in the same folder and a rename (the
/// folder is made when missing). The file is readable by all, as a file the shell would
/// create: reports are for sharing (CI artefacts, web pages), not private.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes, through a buffer: a large report is written as it
/// is made, never held whole in memory.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let prefix = format!(
        ".{}.",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    );
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    if let Some(permissions) = os::permissions(0o644) {
        builder.permissions(permissions);
    }
    let tmp = builder.tempfile_in(dir)?;
    let mut out = std::io::BufWriter::new(tmp);
    write(&mut out)?;
    let tmp = out.into_inner().map_err(|e| e.into_error())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Write `bytes` to a new file `path`, whole or not at all (a temporary file in the same
/// folder, then linked into place only if `path` does not exist): an error of kind
/// `AlreadyExists` when something is there, which is then left as it was. The folder must exist.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".crosspickle-new.").suffix(".tmp");
    if let Some(permissions) = os::permissions(0o644) {
        builder.permissions(permissions);
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/report.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["report.json"]);
        #[cfg(unix)]
        assert_eq!(mode(&std::fs::metadata(&path).unwrap()) & 0o777, 0o644);
    }

    #[test]
    fn a_new_file_never_replaces_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.txt");
        write_new(&path, b"first").unwrap();
        let e = write_new(&path, b"second").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["new.txt"], "no temporary file left");
    }
}
