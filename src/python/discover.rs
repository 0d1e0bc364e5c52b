//! Finding interpreters: ordered sources (pythons.toml, PATH, pyenv, uv, conda) give
//! candidates; each executable is resolved, de-duplicated, probed once, and kept as an
//! [`Interpreter`] or listed as [`Unusable`] with its reason.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use super::config::PythonsConfig;
use super::native;
use super::probe::{ProbeError, ProbeInfo, Prober};
use super::{Implementation, Interpreter, Source, Unusable};
use crate::version::PythonVersion;

/// A path some source suggests.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub path: PathBuf,
    pub source: Source,
    pub name: Option<String>,
}

/// What discovery found.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Usable interpreters, ordered by implementation, version and label.
    pub interpreters: Vec<Interpreter>,
    pub unusable: Vec<Unusable>,
}

/// Every candidate of every enabled source, in source order.
pub fn candidates(config: &PythonsConfig) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (name, path) in &config.named {
        let path = if path.components().count() == 1 && !path.is_absolute() {
            which::which(path).unwrap_or_else(|_| path.clone())
        } else {
            path.clone()
        };
        out.push(Candidate {
            path,
            source: Source::PythonsToml,
            name: Some(name.clone()),
        });
    }
    let home =
        std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from);
    if config.sources.on(Source::Path) {
        path_candidates(&mut out);
    }
    if config.sources.on(Source::Pyenv) {
        let pyenv_root = std::env::var_os("PYENV_ROOT").map(PathBuf::from);
        let versions = if cfg!(windows) {
            native::pyenv_win_versions(pyenv_root.as_deref(), home.as_deref())
        } else {
            pyenv_root
                .or_else(|| home.as_ref().map(|h| h.join(".pyenv")))
                .map(|root| root.join("versions"))
        };
        if let Some(versions) = versions {
            install_dirs(&versions, Source::Pyenv, &mut out);
        }
    }
    if config.sources.on(Source::Uv) {
        let root = std::env::var_os("UV_PYTHON_INSTALL_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_DATA_HOME")
                    .map(PathBuf::from)
                    .or_else(|| home.as_ref().map(|h| h.join(".local/share")))
                    .map(|d| d.join("uv/python"))
            });
        // ... and crosspickle's own installs, made by `--download-python`.
        for root in root.iter().chain(&config.downloads) {
            install_dirs(root, Source::Uv, &mut out);
        }
    }
    if config.sources.on(Source::Conda) {
        conda_candidates(home.as_deref(), &mut out);
    }
    native_candidates(config, &mut out);
    out
}

/// The sources of one system: python.org's and Homebrew's on macOS, the py launcher's on
/// Windows (see [`native`]).
fn native_candidates(config: &PythonsConfig, out: &mut Vec<Candidate>) {
    let mut add = |paths: Vec<PathBuf>, source: Source| {
        out.extend(paths.into_iter().map(|path| Candidate {
            path,
            source,
            name: None,
        }));
    };
    if cfg!(target_os = "macos") && config.sources.on(Source::PythonOrg) {
        let frameworks = Path::new("/Library/Frameworks/Python.framework/Versions");
        add(native::framework_builds(frameworks), Source::PythonOrg);
    }
    if cfg!(target_os = "macos") && config.sources.on(Source::Homebrew) {
        let prefix = std::env::var_os("HOMEBREW_PREFIX").map(PathBuf::from);
        for bin in native::homebrew_bins(prefix.as_deref()) {
            add(python_names_in(&bin), Source::Homebrew);
        }
    }
    if cfg!(windows) && config.sources.on(Source::PyLauncher) {
        if let Some(listed) = crate::sys::process::output_blocking("py", &["-0p"]) {
            add(native::py_launcher_list(&listed), Source::PyLauncher);
        }
    }
}

/// The interpreters of folder `dir`, by name (`python3`, `python3.12`), sorted.
fn python_names_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_python_name(n))
        .collect();
    names.sort();
    names.into_iter().map(|n| dir.join(n)).collect()
}

fn is_python_name(name: &str) -> bool {
    let rest = if let Some(r) = name.strip_prefix("python") {
        r
    } else if let Some(r) = name.strip_prefix("pypy") {
        r
    } else {
        return false;
    };
    // python, python3, python3.12, python2.7, pypy3.10, and a version with ABI flags:
    // python3.13t (free-threaded), python3.15d (debug), python3.14td (both).
    let rest = ["td", "t", "d"]
        .iter()
        .find_map(|flags| {
            rest.strip_suffix(flags)
                .filter(|r| r.ends_with(|c: char| c.is_ascii_digit()))
        })
        .unwrap_or(rest);
    rest.is_empty()
        || rest
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn path_candidates(out: &mut Vec<Candidate>) {
    let Some(path) = std::env::var_os("PATH") else {
        return;
    };
    for dir in std::env::split_paths(&path) {
        // pyenv's shims select one version by pyenv's settings; the pyenv source sees them all.
        if dir.ends_with("shims")
            && dir
                .parent()
                .is_some_and(|p| p.ends_with(".pyenv") || p.join("versions").is_dir())
        {
            continue;
        }
        for path in python_names_in(&dir) {
            out.push(Candidate {
                path,
                source: Source::Path,
                name: None,
            });
        }
    }
}

/// `<root>/<install>/bin/python3` (or python, pypy3) for each install folder.
fn install_dirs(root: &Path, source: Source, out: &mut Vec<Candidate>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let bin = dir.join("bin");
        let exe = ["python3", "python", "pypy3", "pypy", "python2"]
            .iter()
            .map(|n| bin.join(n))
            .find(|p| p.exists())
            .or_else(|| versioned_python(&bin))
            // Windows installs (pyenv-win, uv) have `python.exe` at their top.
            .or_else(|| cfg!(windows).then(|| native::windows_exe(&dir)).flatten());
        if let Some(exe) = exe {
            out.push(Candidate {
                path: exe,
                source,
                name: None,
            });
        }
    }
}

/// The first versioned interpreter name in `bin` (`python3.15d`, `pypy3.11`), for an install
/// whose folder has no plain `python3` (a debug-only build).
fn versioned_python(bin: &Path) -> Option<PathBuf> {
    let mut names: Vec<String> = std::fs::read_dir(bin)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_python_name(n))
        .collect();
    names.sort();
    names.first().map(|n| bin.join(n))
}

fn conda_candidates(home: Option<&Path>, out: &mut Vec<Candidate>) {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("CONDA_PREFIX") {
        prefixes.push(PathBuf::from(p));
    }
    if let Some(home) = home {
        if let Ok(text) = std::fs::read_to_string(home.join(".conda/environments.txt")) {
            prefixes.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(PathBuf::from),
            );
        }
        for base in [
            "miniconda3",
            "anaconda3",
            "miniforge3",
            "mambaforge",
            "micromamba",
        ] {
            let root = home.join(base);
            prefixes.push(root.clone());
            if let Ok(envs) = std::fs::read_dir(root.join("envs")) {
                prefixes.extend(envs.filter_map(|e| e.ok()).map(|e| e.path()));
            }
        }
    }
    for base in ["/opt/conda", "/opt/miniconda3"] {
        prefixes.push(PathBuf::from(base));
    }
    for prefix in prefixes {
        let exe = if cfg!(windows) {
            prefix.join("python.exe")
        } else {
            prefix.join("bin/python")
        };
        if exe.exists() {
            out.push(Candidate {
                path: exe,
                source: Source::Conda,
                name: None,
            });
        }
    }
}

/// Resolve, de-duplicate and probe candidates.
pub async fn resolve(candidates: Vec<Candidate>, prober: &Prober, jobs: usize) -> Discovery {
    // Group by canonical executable, keeping the first position each was seen at.
    let mut order: Vec<PathBuf> = Vec::new();
    let mut groups: HashMap<PathBuf, (Vec<Source>, Option<String>, PathBuf)> = HashMap::new();
    let mut unusable = Vec::new();
    for c in candidates {
        match std::fs::canonicalize(&c.path) {
            Ok(canonical) => {
                let entry = groups.entry(canonical.clone()).or_insert_with(|| {
                    order.push(canonical.clone());
                    (Vec::new(), None, c.path.clone())
                });
                if !entry.0.contains(&c.source) {
                    entry.0.push(c.source);
                }
                if entry.1.is_none() {
                    entry.1 = c.name.clone();
                }
            }
            Err(e) => unusable.push(Unusable {
                path: c.path.clone(),
                sources: vec![c.source],
                name: c.name.clone(),
                reason: if e.kind() == std::io::ErrorKind::NotFound {
                    "not found".into()
                } else {
                    e.to_string()
                },
            }),
        }
    }
    let prober = Arc::new(prober);
    let probed: Vec<(PathBuf, Result<ProbeInfo, ProbeError>)> = stream::iter(order.iter().cloned())
        .map(|exe| {
            let prober = prober.clone();
            async move {
                let r = if is_executable(&exe) {
                    prober.probe(&exe).await
                } else {
                    Err(ProbeError::NotExecutable)
                };
                (exe, r)
            }
        })
        .buffered(jobs.max(1))
        .collect()
        .await;
    let mut found: Vec<(Interpreter, Option<PathBuf>)> = Vec::new();
    for (exe, result) in probed {
        let (sources, name, _) = groups.remove(&exe).expect("grouped");
        let real = result
            .as_ref()
            .ok()
            .and_then(|info| info.executable.as_deref())
            .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.to_path_buf()));
        match result.and_then(|info| interpreter_from(&exe, info, sources.clone(), name.clone())) {
            Ok(i) => found.push((i, real)),
            Err(reason) => unusable.push(Unusable {
                path: exe,
                sources,
                name,
                reason: reason.to_string(),
            }),
        }
    }
    let mut interpreters = without_wrappers(found);
    sort_and_label(&mut interpreters);
    Discovery {
        interpreters,
        unusable,
    }
}

/// The interpreters found, each wrapper script or shim that a source found (unnamed) left out
/// when it execs an interpreter found too (the same real executable, as the probes report
/// it): the real executable is listed, with the wrapper's sources. A candidate named in
/// pythons.toml (or kept by bisect) is always listed: it may set up what it runs.
fn without_wrappers(found: Vec<(Interpreter, Option<PathBuf>)>) -> Vec<Interpreter> {
    let mut kept: Vec<(Interpreter, Option<PathBuf>)> = Vec::new();
    for (i, real) in found {
        let is_real = real.as_deref() == Some(i.executable.as_path());
        // The one this candidate is the same interpreter as: an unnamed one that is either a
        // wrapper of it or the real one, or a named one that is the real executable itself.
        let same = real.as_ref().and_then(|real| {
            kept.iter().position(|(k, r)| {
                r.as_ref() == Some(real)
                    && (i.name.is_none() || k.name.is_none())
                    && (i.name.is_none() || is_real)
                    && (k.name.is_none() || k.executable == *real)
            })
        });
        match same {
            None => kept.push((i, real)),
            Some(at) => {
                let (k, _) = &mut kept[at];
                if (is_real || i.name.is_some()) && k.name.is_none() {
                    // This one is the real executable (or named): it stays, in the other's place.
                    let mut i = i;
                    merge_found(&mut i, k);
                    *k = i;
                } else {
                    merge_found(k, &i);
                }
            }
        }
    }
    kept.into_iter().map(|(i, _)| i).collect()
}

/// `into` is kept for `other` too: their sources.
fn merge_found(into: &mut Interpreter, other: &Interpreter) {
    for s in &other.sources {
        if !into.sources.contains(s) {
            into.sources.push(*s);
        }
    }
}

fn is_executable(path: &Path) -> bool {
    crate::sys::fs::is_executable(path)
}

pub fn interpreter_from(
    exe: &Path,
    info: ProbeInfo,
    sources: Vec<Source>,
    name: Option<String>,
) -> Result<Interpreter, ProbeError> {
    let implementation = Implementation::from_name(&info.implementation)
        .ok_or_else(|| ProbeError::Unsupported(info.implementation.clone()))?;
    let (major, minor, micro, level, serial) = &info.version_info;
    let version = PythonVersion::from_version_info(*major, *minor, *micro, level, *serial);
    let mut interpreter = Interpreter {
        label: String::new(),
        version,
        implementation,
        implementation_version: match (implementation, &info.implementation_version_info) {
            (Implementation::Pypy, Some((major, minor, micro, level, serial))) => Some(
                PythonVersion::from_version_info(*major, *minor, *micro, level, *serial)
                    .to_string(),
            ),
            _ => info.implementation_version,
        },
        executable: exe.to_path_buf(),
        debug: info.debug,
        free_threaded: info.free_threaded,
        gil_enabled: info.gil_enabled,
        c_pickle: info.c_pickle,
        c_pickle_used: info.c_pickle_used,
        pickle_highest_protocol: info.pickle_highest_protocol,
        pickle_default_protocol: info.pickle_default_protocol,
        platform: Some(crate::python::platform::normal(&info.platform)),
        machine: Some(info.machine),
        name,
        sources,
        unusable: None,
    };
    interpreter.label = interpreter.own_label();
    Ok(interpreter)
}

/// Order by implementation and version, and make labels unique: a second interpreter with the
/// same label gets `@name` (its pythons.toml name) or `@<install folder>`.
pub fn sort_and_label(interpreters: &mut [Interpreter]) {
    interpreters.sort_by(|a, b| {
        (
            a.implementation,
            &a.version,
            a.free_threaded,
            a.debug,
            &a.executable,
        )
            .cmp(&(
                b.implementation,
                &b.version,
                b.free_threaded,
                b.debug,
                &b.executable,
            ))
    });
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for i in interpreters.iter() {
        *counts.entry(i.own_label()).or_default() += 1;
    }
    let mut taken = std::collections::HashSet::new();
    for i in interpreters.iter_mut() {
        let base = i.own_label();
        let mut label = base.clone();
        if counts[&base] > 1 {
            let suffix = i
                .name
                .clone()
                .unwrap_or_else(|| install_name(&i.executable));
            label = format!("{base}@{suffix}");
        }
        let mut n = 2;
        let unique_base = label.clone();
        while !taken.insert(label.clone()) {
            label = format!("{unique_base}-{n}");
            n += 1;
        }
        i.label = label;
    }
}

/// `/root/.pyenv/versions/3.8.18/bin/python3.8` -> `3.8.18`; `/usr/bin/python3.11` -> `usr`.
fn install_name(exe: &Path) -> String {
    let parent = exe.parent();
    let dir = if parent.is_some_and(|p| p.ends_with("bin")) {
        parent.and_then(Path::parent)
    } else {
        parent
    };
    dir.and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "python".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_names() {
        for ok in [
            "python",
            "python3",
            "python3.12",
            "python3.13t",
            "python2.7",
            "pypy3",
            "pypy3.10",
            "pypy",
            "python3.14d",
            "python3.15d",
            "python3.14td",
            "pypy3.11",
        ] {
            assert!(is_python_name(ok), "{ok}");
        }
        for no in [
            "python3-config",
            "python3.15d-config",
            "pythond",
            "python3.d",
            "python3.14dt",
            "python3.14x",
            "python3.11-dbg-config",
            "pythonw",
            "python3.x",
            "pip3",
            "python3.12-config",
        ] {
            assert!(!is_python_name(no), "{no}");
        }
    }
}
