//! configure's results, reused across the commits of one build folder. make runs configure
//! again whenever the script is newer than `config.status`, and a bisect that jumps between
//! far-apart commits checks different versions of it out, one after the other: each jump would
//! run every one of configure's tests again (over a minute). But configure's results depend
//! only on the script, its arguments and the machine, so `config.status` (which holds them all)
//! is remembered per (script, arguments) in `build/.crosspickle-configs/`; when a commit's
//! script was configured before in this folder, its `config.status` is put back and run, which
//! writes the Makefile, pyconfig.h and the rest from that commit's own templates in a second,
//! and make finds the configuration up to date. A script seen for the first time is run by
//! make as before, and its `config.status` remembered afterwards.

use std::path::Path;

/// The remembered configurations, in the build folder.
const MEMO_DIR: &str = ".crosspickle-configs";
/// Which configuration the build folder's `config.status` is.
const CURRENT: &str = ".crosspickle-configured";

/// The key of a configuration: the configure script at `src` and the arguments.
pub fn key(src: &Path, args: &[String]) -> Option<String> {
    let mut bytes = std::fs::read(src.join("configure")).ok()?;
    bytes.push(0);
    bytes.extend(args.join("\n").as_bytes());
    Some(crate::sys::hash::short_hex(&bytes, 16))
}

/// Put the remembered `config.status` of configuration `key` in place, if the build folder's
/// is another one and `key` was seen before: `true` when the caller must now run it.
pub fn restore(build: &Path, key: &str) -> std::io::Result<bool> {
    let current = std::fs::read_to_string(build.join(CURRENT)).unwrap_or_default();
    let memo = build.join(MEMO_DIR).join(key);
    if current.trim() == key || !memo.is_file() {
        return Ok(false);
    }
    let _ = std::fs::remove_file(build.join(CURRENT));
    std::fs::copy(&memo, build.join("config.status"))?;
    Ok(true)
}

/// After a build: the `config.status` that is in place is configuration `key`'s when it is
/// newer than the configure script (make ran configure, or it was just put back); remember it.
pub fn remember(src: &Path, build: &Path, key: &str) -> std::io::Result<()> {
    let status = build.join("config.status");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified());
    let (Ok(made), Ok(script)) = (modified(&status), modified(&src.join("configure"))) else {
        return Ok(());
    };
    if made < script {
        return Ok(());
    }
    let memo = build.join(MEMO_DIR).join(key);
    if !memo.is_file() {
        let bytes = std::fs::read(&status)?;
        crate::sys::fs::write_atomic(&memo, &bytes)?;
    }
    std::fs::write(build.join(CURRENT), key)
}

/// Forget which configuration is in place (after `config.status` failed to run).
pub fn forget(build: &Path) {
    let _ = std::fs::remove_file(build.join(CURRENT));
    let _ = std::fs::remove_file(build.join("config.status"));
}

// Commit bisects build CPython with its configure and make, on Unix only (not run on Windows).
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn set_mtime(path: &Path, t: SystemTime) {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(t).unwrap();
    }

    #[test]
    fn the_key_is_the_script_and_the_arguments() {
        let src = tempfile::tempdir().unwrap();
        assert_eq!(key(src.path(), &[]), None, "no configure script");
        std::fs::write(src.path().join("configure"), "#!/bin/sh\necho 1\n").unwrap();
        let a = key(src.path(), &[]).unwrap();
        assert_eq!(key(src.path(), &[]).unwrap(), a);
        assert_ne!(key(src.path(), &["--with-pydebug".into()]).unwrap(), a);
        std::fs::write(src.path().join("configure"), "#!/bin/sh\necho 2\n").unwrap();
        assert_ne!(key(src.path(), &[]).unwrap(), a);
    }

    #[test]
    fn a_configuration_seen_before_is_put_back() {
        let src = tempfile::tempdir().unwrap();
        let build = tempfile::tempdir().unwrap();
        let (src, build) = (src.path(), build.path());
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::write(src.join("configure"), "one").unwrap();
        set_mtime(&src.join("configure"), old);
        std::fs::write(build.join("config.status"), "status of one").unwrap();
        let one = key(src, &[]).unwrap();
        remember(src, build, &one).unwrap();
        assert!(!restore(build, &one).unwrap(), "already in place");

        // The script changes: make runs configure, and the new status is remembered.
        std::fs::write(src.join("configure"), "two").unwrap();
        let two = key(src, &[]).unwrap();
        assert!(
            !restore(build, &two).unwrap(),
            "never seen: make runs configure"
        );
        std::fs::write(build.join("config.status"), "status of two").unwrap();
        remember(src, build, &two).unwrap();

        // Back to the first script: its status is put back.
        std::fs::write(src.join("configure"), "one").unwrap();
        assert!(restore(build, &one).unwrap());
        assert_eq!(
            std::fs::read_to_string(build.join("config.status")).unwrap(),
            "status of one"
        );
        remember(src, build, &one).unwrap();
        assert!(!restore(build, &one).unwrap());
        assert!(restore(build, &two).unwrap());
    }

    #[test]
    fn a_status_older_than_the_script_is_not_remembered() {
        let src = tempfile::tempdir().unwrap();
        let build = tempfile::tempdir().unwrap();
        let (src, build) = (src.path(), build.path());
        std::fs::write(build.join("config.status"), "stale").unwrap();
        set_mtime(
            &build.join("config.status"),
            SystemTime::now() - Duration::from_secs(60),
        );
        std::fs::write(src.join("configure"), "new").unwrap();
        let k = key(src, &[]).unwrap();
        remember(src, build, &k).unwrap();
        assert!(!build.join(MEMO_DIR).join(&k).exists());
        forget(build);
        assert!(!build.join("config.status").exists());
    }
}
