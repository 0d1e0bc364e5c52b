//! Where each system's own installers put interpreters, beyond the Unix sources of
//! [`discover`](super::discover): on macOS, python.org's framework builds
//! (`/Library/Frameworks/Python.framework/Versions/*/bin`) and Homebrew's (`/opt/homebrew/bin`,
//! `/usr/local/bin`); on Windows, what the py launcher lists (`py -0p`: the PEP 514 registry
//! entries of python.org, Microsoft Store and conda installs) and pyenv-win's versions
//! (`%USERPROFILE%\.pyenv\pyenv-win\versions\*\python.exe`). Written and unit-tested on Linux;
//! never run on macOS or Windows.

use std::path::{Path, PathBuf};

/// The interpreters of `py -0p`'s output, in its order: each line is a tag (`-V:3.12`,
/// `-V:Astral/CPython3.13.0`, or the older launchers' `-3.9-64`), a `*` on the default one, and
/// the executable's path (which may hold spaces). Other lines (a heading, "No installed
/// Pythons found!") are not interpreters.
pub fn py_launcher_list(output: &str) -> Vec<PathBuf> {
    output
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line.strip_prefix('-')?;
            let (_, after_tag) = rest.split_once(char::is_whitespace)?;
            let path = after_tag.trim_start();
            let path = path.strip_prefix('*').unwrap_or(path).trim();
            let is_path = path.starts_with("\\\\")
                || path.as_bytes().get(1..3) == Some(b":\\")
                || path.starts_with('/');
            is_path.then(|| PathBuf::from(path))
        })
        .collect()
}

/// python.org's macOS framework builds under `frameworks`
/// (`/Library/Frameworks/Python.framework/Versions`): each version's `bin/python3`, newest
/// folder name last as listed (`Current` is a link to one of them and is left out).
pub fn framework_builds(frameworks: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(frameworks) else {
        return Vec::new();
    };
    let mut versions: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() != "Current")
        .map(|e| e.path())
        .collect();
    versions.sort();
    versions
        .into_iter()
        .flat_map(|v| {
            let bin = v.join("bin");
            // `python3.13t` beside `python3` in a free-threaded install.
            let mut found: Vec<PathBuf> = ["python3", "python3t"]
                .into_iter()
                .map(|n| bin.join(n))
                .filter(|p| p.exists())
                .collect();
            if let Some(name) = v.file_name().and_then(|n| n.to_str()) {
                let t = bin.join(format!("python{name}t"));
                if t.exists() && !found.contains(&t) {
                    found.push(t);
                }
            }
            found
        })
        .collect()
}

/// The folders Homebrew links its interpreters into: `/opt/homebrew/bin` (Apple silicon) and
/// `/usr/local/bin` (Intel), those of `HOMEBREW_PREFIX` first.
pub fn homebrew_bins(homebrew_prefix: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = homebrew_prefix.map(|p| p.join("bin")).into_iter().collect();
    for dir in ["/opt/homebrew/bin", "/usr/local/bin"] {
        let dir = PathBuf::from(dir);
        if !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// pyenv-win's versions folder: `%PYENV_ROOT%\versions` (pyenv-win sets PYENV_ROOT to its
/// `pyenv-win` folder) or `%USERPROFILE%\.pyenv\pyenv-win\versions`.
pub fn pyenv_win_versions(
    pyenv_root: Option<&Path>,
    user_profile: Option<&Path>,
) -> Option<PathBuf> {
    pyenv_root
        .map(Path::to_path_buf)
        .or_else(|| user_profile.map(|u| u.join(".pyenv").join("pyenv-win")))
        .map(|root| root.join("versions"))
}

/// A Windows install folder's interpreter: `python.exe` at its top (python.org, pyenv-win,
/// uv, conda) or `pypy3.exe`/`pypy.exe` (PyPy).
pub fn windows_exe(dir: &Path) -> Option<PathBuf> {
    ["python.exe", "pypy3.exe", "pypy.exe"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_launcher_lists_of_both_forms() {
        let new = " -V:3.13 *        C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python313\\python.exe\n \
            -V:3.12          C:\\Program Files\\Python312\\python.exe\n \
            -V:Astral/CPython3.13.1 C:\\Users\\me\\AppData\\Roaming\\uv\\python\\cpython-3.13.1-windows-x86_64-none\\python.exe\n \
            -V:ContinuumAnalytics/Anaconda39-64 C:\\Users\\me\\anaconda3\\python.exe\n";
        assert_eq!(
            py_launcher_list(new),
            [
                "C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python313\\python.exe",
                "C:\\Program Files\\Python312\\python.exe",
                "C:\\Users\\me\\AppData\\Roaming\\uv\\python\\cpython-3.13.1-windows-x86_64-none\\python.exe",
                "C:\\Users\\me\\anaconda3\\python.exe",
            ]
            .map(PathBuf::from)
        );
        let old = "Installed Pythons found by py Launcher for Windows\n \
            -3.9-64 *      C:\\Python39\\python.exe\n -2.7-32        C:\\Python27\\python.exe\n\n";
        assert_eq!(
            py_launcher_list(old),
            ["C:\\Python39\\python.exe", "C:\\Python27\\python.exe"].map(PathBuf::from)
        );
        assert!(py_launcher_list("No installed Pythons found!\n").is_empty());
        // A Store install is listed by its alias under WindowsApps, like any path.
        let store = " -V:3.12 *  C:\\Users\\me\\AppData\\Local\\Microsoft\\WindowsApps\\PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0\\python.exe";
        assert_eq!(py_launcher_list(store).len(), 1);
        assert!(py_launcher_list(" -V:3.12 *\n -h  help\n").is_empty());
    }

    #[test]
    fn framework_builds_and_folders() {
        let root = tempfile::tempdir().unwrap();
        for (v, names) in [
            ("3.12", &["python3"][..]),
            ("3.13", &["python3", "python3.13t"][..]),
            ("3.9", &["python3.9"][..]),
        ] {
            let bin = root.path().join(v).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            for n in names {
                std::fs::write(bin.join(n), "").unwrap();
            }
        }
        std::fs::create_dir_all(root.path().join("Current/bin")).unwrap();
        std::fs::write(root.path().join("Current/bin/python3"), "").unwrap();
        let found: Vec<String> = framework_builds(root.path())
            .iter()
            .map(|p| {
                let parts: Vec<_> = p.strip_prefix(root.path()).unwrap().iter().collect();
                parts
                    .join(std::ffi::OsStr::new("/"))
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(
            found,
            [
                "3.12/bin/python3",
                "3.13/bin/python3",
                "3.13/bin/python3.13t"
            ]
            .map(|p| Path::new(p).display().to_string())
        );
        assert!(framework_builds(&root.path().join("none")).is_empty());
        assert_eq!(
            homebrew_bins(Some(Path::new("/opt/homebrew"))),
            ["/opt/homebrew/bin", "/usr/local/bin"].map(PathBuf::from)
        );
        assert_eq!(
            pyenv_win_versions(None, Some(Path::new("C:\\Users\\me"))),
            Some(
                Path::new("C:\\Users\\me")
                    .join(".pyenv")
                    .join("pyenv-win")
                    .join("versions")
            )
        );
        assert_eq!(
            pyenv_win_versions(Some(Path::new("D:\\pw")), Some(Path::new("C:\\u"))),
            Some(Path::new("D:\\pw").join("versions"))
        );
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(windows_exe(dir.path()), None);
        std::fs::write(dir.path().join("pypy3.exe"), "").unwrap();
        assert_eq!(windows_exe(dir.path()), Some(dir.path().join("pypy3.exe")));
    }
}
