//! The compiler cache of commit mode: when `ccache` is on PATH, configure and make run with a
//! folder of links named like compilers (`cc`, `gcc`, `clang`, ...) pointing at it first on
//! PATH (ccache's "masquerade" setup). configure still finds `gcc`, so the build's recorded
//! compiler (sysconfig's `CC`) is the same as without a cache, and each compilation goes
//! through ccache, which finds the real compiler further along PATH. ccache's key is the
//! preprocessed source, the compiler and its arguments, so an object comes from the cache only
//! when compiling would give the same one: far-apart commits share every object whose source
//! did not change, even when a header changed in a way that file does not see (`PY_VERSION`).
//!
//! The cache lives in `<cache>/bisect/ccache/` unless `CCACHE_DIR` says where; `CCACHE_DISABLE=1`
//! turns it off (ccache's own switch).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::sys::process::ProcessSpec;

/// The compiler names configure and make may look for.
const COMPILERS: [&str; 6] = ["cc", "gcc", "c++", "g++", "clang", "clang++"];

/// How builds reach ccache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompilerCache {
    /// The folder of compiler-named links to ccache, put first on PATH.
    pub links: PathBuf,
    /// `CCACHE_DIR` to set (`None`: the caller's own is kept).
    pub dir: Option<PathBuf>,
}

/// ccache's path on `path` (a PATH value), if it is there.
pub fn find(path: &OsStr) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    which::which_in("ccache", Some(path), cwd).ok()
}

/// Set up the compiler cache under `root` (`<cache>/bisect/ccache`) for a build whose
/// environment is `env`: `None` when ccache is not on its PATH or the links cannot be made
/// (then builds run without a cache, as before).
pub fn prepare(root: &Path, env: &[(OsString, OsString)]) -> Option<CompilerCache> {
    let var = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let ccache = find(&var("PATH")?)?;
    let links = root.join("bin");
    std::fs::create_dir_all(&links).ok()?;
    for name in COMPILERS {
        let link = links.join(name);
        if std::fs::read_link(&link).ok().as_deref() != Some(ccache.as_path()) {
            let _ = std::fs::remove_file(&link);
            crate::sys::fs::symlink(&ccache, &link).ok()?;
        }
    }
    let dir = var("CCACHE_DIR")
        .filter(|d| !d.is_empty())
        .is_none()
        .then(|| root.join("store"));
    Some(CompilerCache { links, dir })
}

impl CompilerCache {
    /// `spec` with the links first on its PATH, and `CCACHE_DIR` set if it is ours.
    pub fn apply(&self, spec: ProcessSpec) -> ProcessSpec {
        let path = spec
            .env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let mut dirs = vec![self.links.clone()];
        dirs.extend(std::env::split_paths(&path).filter(|d| *d != self.links));
        let path = std::env::join_paths(dirs).unwrap_or(path);
        let spec = spec.set_env("PATH", path);
        match &self.dir {
            Some(dir) => spec.set_env("CCACHE_DIR", dir),
            None => spec,
        }
    }
}

// Commit bisects build CPython with its configure and make, on Unix only (not run on Windows).
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &OsStr)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), v.to_os_string()))
            .collect()
    }

    /// A folder holding an executable named `ccache`.
    fn fake_ccache() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("ccache");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        crate::sys::fs::set_mode(&exe, 0o755).unwrap();
        dir
    }

    #[test]
    fn no_ccache_on_path_means_no_cache() {
        let root = tempfile::tempdir().unwrap();
        let empty = tempfile::tempdir().unwrap();
        let e = env(&[("PATH", empty.path().as_os_str())]);
        assert_eq!(prepare(root.path(), &e), None);
        assert_eq!(prepare(root.path(), &[]), None, "no PATH at all");
    }

    #[test]
    fn links_named_like_compilers_come_first_on_path() {
        let root = tempfile::tempdir().unwrap();
        let tools = fake_ccache();
        let e = env(&[("PATH", tools.path().as_os_str())]);
        let cache = prepare(&root.path().join("ccache"), &e).expect("ccache found");
        for name in COMPILERS {
            assert_eq!(
                std::fs::read_link(cache.links.join(name)).unwrap(),
                tools.path().join("ccache")
            );
        }
        assert_eq!(cache.dir, Some(root.path().join("ccache/store")));
        // Again: the links are kept (and mended if they point elsewhere).
        std::fs::remove_file(cache.links.join("gcc")).unwrap();
        std::fs::remove_file(cache.links.join("cc")).unwrap();
        crate::sys::fs::symlink("/elsewhere", cache.links.join("cc")).unwrap();
        assert_eq!(
            prepare(&root.path().join("ccache"), &e),
            Some(cache.clone())
        );
        assert_eq!(
            std::fs::read_link(cache.links.join("cc")).unwrap(),
            tools.path().join("ccache")
        );

        let spec = cache.apply(ProcessSpec::new("make", None).env(e.clone()));
        let get = |k: &str| {
            spec.env
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        };
        let path = get("PATH").unwrap();
        let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
        assert_eq!(dirs, vec![cache.links.clone(), tools.path().to_path_buf()]);
        assert_eq!(
            get("CCACHE_DIR"),
            Some(root.path().join("ccache/store").into())
        );
        // Applied twice, the links are on PATH once.
        let twice = cache.apply(spec);
        let path = twice
            .env
            .iter()
            .find(|(n, _)| n == "PATH")
            .unwrap()
            .1
            .clone();
        assert_eq!(std::env::split_paths(&path).count(), 2);
    }

    #[test]
    fn the_users_ccache_dir_is_kept() {
        let root = tempfile::tempdir().unwrap();
        let tools = fake_ccache();
        let e = env(&[
            ("PATH", tools.path().as_os_str()),
            ("CCACHE_DIR", OsStr::new("/mine")),
        ]);
        let cache = prepare(root.path(), &e).expect("ccache found");
        assert_eq!(cache.dir, None);
        let spec = cache.apply(ProcessSpec::new("make", None).env(e));
        let dir = spec.env.iter().find(|(n, _)| n == "CCACHE_DIR").unwrap();
        assert_eq!(dir.1, OsString::from("/mine"));
    }
}
