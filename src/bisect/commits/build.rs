//! Building one commit of commit mode: check it out in the source folder crosspickle owns,
//! build it in the one reused build folder (configure and make, or the repository's build
//! script), and keep the result as an install-like prefix per commit; remember the commits that
//! do not build. Every command goes through the process runner: git with its time limit, the
//! build itself without one (Ctrl-C stops it).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use super::git;
use crate::sys::process::{self, ProcessSpec, ToolError};

#[derive(Debug, Clone)]
pub struct CommitOptions {
    /// The user's CPython checkout.
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    /// Arguments for `configure`, split as a shell would.
    pub configure: Vec<String>,
    pub jobs: usize,
    /// `REF` or `REF=NAME`: built interpreters to register by name afterwards.
    pub keep: Vec<String>,
    /// A shell command that builds instead of configure and make (the build-script protocol).
    pub build_command: Option<String>,
    pub cache_dir: PathBuf,
}

/// Why a commit has no interpreter.
#[derive(Debug)]
pub enum BuildFailure {
    /// Stopped with Ctrl-C: nothing is remembered about the commit.
    Interrupted,
    /// It does not build (or cannot be checked out): why.
    Failed(String),
}

impl From<ToolError> for BuildFailure {
    fn from(e: ToolError) -> Self {
        if e.is_cancelled() {
            BuildFailure::Interrupted
        } else {
            BuildFailure::Failed(e.to_string())
        }
    }
}

fn failed(message: String) -> BuildFailure {
    BuildFailure::Failed(message)
}

/// The folders of one checkout's builds.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
    pub src: PathBuf,
    pub build: PathBuf,
}

impl Workspace {
    pub fn for_repo(cache_dir: &Path, repo: &Path) -> Workspace {
        let canonical = std::fs::canonicalize(repo).unwrap_or_else(|_| repo.to_path_buf());
        let id = crate::sys::hash::short_hex(canonical.as_os_str().as_encoded_bytes(), 12);
        let root = crate::bisect::cache_root(cache_dir)
            .join("cpython")
            .join(id);
        Workspace {
            src: root.join("src"),
            build: root.join("build"),
            root,
        }
    }

    fn prefix(&self, key: &str) -> PathBuf {
        self.root.join("builds").join(key)
    }

    fn failed(&self, key: &str) -> PathBuf {
        self.root.join("failed").join(key)
    }

    fn log(&self, key: &str) -> PathBuf {
        self.root.join("logs").join(format!("{key}.log"))
    }

    fn stamp(&self) -> PathBuf {
        self.build.join(".crosspickle-built")
    }
}

/// Builds commits and remembers what it built.
pub struct Builder {
    pub options: CommitOptions,
    pub workspace: Workspace,
    /// How many builds ran (not taken from the cache) in this bisect.
    pub builds: usize,
    cancel: CancellationToken,
}

const READY: &str = ".crosspickle-ready";

impl Builder {
    pub fn new(options: CommitOptions, cancel: CancellationToken) -> Builder {
        let workspace = Workspace::for_repo(&options.cache_dir, &options.repo);
        Builder {
            options,
            workspace,
            builds: 0,
            cancel,
        }
    }

    /// The cache key of a commit's build: its hash, and a hash of how it is built.
    fn key(&self, commit: &str) -> String {
        if self.options.configure.is_empty() && self.options.build_command.is_none() {
            commit.to_string()
        } else {
            let how = format!(
                "{:?}\n{:?}",
                self.options.configure, self.options.build_command
            );
            format!(
                "{commit}-{}",
                crate::sys::hash::short_hex(how.as_bytes(), 8)
            )
        }
    }

    /// The built interpreter of `commit`, building it if needed; `Ok((python, cached))`.
    pub async fn python_for(&mut self, commit: &str) -> Result<(PathBuf, bool), BuildFailure> {
        let key = self.key(commit);
        let prefix = self.workspace.prefix(&key);
        let python = prefix.join("bin").join("python");
        if prefix.join(READY).is_file() && python.exists() {
            return Ok((python, true));
        }
        let failed_file = self.workspace.failed(&key);
        if let Ok(reason) = std::fs::read_to_string(&failed_file) {
            return Err(failed(format!(
                "did not build before (remove {} to try again): {reason}",
                failed_file.display()
            )));
        }
        for dir in ["builds", "failed", "logs"].map(|d| self.workspace.root.join(d)) {
            std::fs::create_dir_all(&dir)
                .map_err(|e| failed(format!("cannot make {}: {e}", dir.display())))?;
        }
        self.builds += 1;
        let log = self.workspace.log(&key);
        let _ = std::fs::remove_file(&log);
        // A checkout that fails is this machine's problem, not the commit's: not remembered.
        self.checkout(commit, &log).await.map_err(|r| match r {
            BuildFailure::Failed(r) => failed(format!("cannot check the commit out: {r}")),
            interrupted => interrupted,
        })?;
        let result = self.build(commit, &prefix, &log).await;
        let _ = std::fs::write(self.workspace.stamp(), commit);
        match result {
            Ok(()) => Ok((python, false)),
            Err(BuildFailure::Failed(reason)) => {
                let _ = std::fs::write(&failed_file, &reason);
                Err(BuildFailure::Failed(reason))
            }
            Err(interrupted) => Err(interrupted),
        }
    }

    async fn build(&self, commit: &str, prefix: &Path, log: &Path) -> Result<(), BuildFailure> {
        let ws = &self.workspace;
        std::fs::create_dir_all(&ws.build)
            .map_err(|e| failed(format!("cannot make {}: {e}", ws.build.display())))?;
        let parent = prefix.parent().expect("a builds folder");
        let scratch = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempdir_in(parent)
            .map_err(|e| failed(format!("cannot make a folder in {}: {e}", parent.display())))?;
        let script = ws.src.join("crosspickle-build.sh");
        let command = match &self.options.build_command {
            Some(c) => Some(c.clone()),
            None if script.is_file() => Some(format!("sh '{}'", script.display())),
            None => None,
        };
        match command {
            Some(command) => {
                let spec = ProcessSpec::new("sh", None)
                    .arg("-c")
                    .arg(&command)
                    .cwd(&ws.build)
                    .set_env("CROSSPICKLE_SRC", &ws.src)
                    .set_env("CROSSPICKLE_BUILD", &ws.build)
                    .set_env("CROSSPICKLE_PREFIX", scratch.path())
                    .set_env("CROSSPICKLE_JOBS", self.options.jobs.to_string())
                    .set_env("CROSSPICKLE_CONFIGURE", self.options.configure.join(" "));
                process::logged(&spec, &command, log, &self.cancel).await?;
            }
            None => self.configure_and_make(scratch.path(), log).await?,
        }
        let python = scratch.path().join("bin").join("python");
        if !python.exists() {
            return Err(failed(format!(
                "the build left no interpreter at {}",
                python.display()
            )));
        }
        std::fs::write(scratch.path().join(READY), commit)
            .map_err(|e| failed(format!("cannot write {}: {e}", prefix.display())))?;
        let built = scratch.keep();
        let _ = std::fs::remove_dir_all(prefix);
        std::fs::rename(&built, prefix).map_err(|e| {
            let _ = std::fs::remove_dir_all(&built);
            failed(format!(
                "cannot move the build to {}: {e}",
                prefix.display()
            ))
        })
    }

    /// Check `commit` out in the source folder, so that every file it changes is newer, to the
    /// second, than anything the previous build made.
    async fn checkout(&self, commit: &str, log: &Path) -> Result<(), BuildFailure> {
        let (ws, cancel) = (&self.workspace, &self.cancel);
        if !ws.src.join(".git").exists() {
            let _ = std::fs::remove_dir_all(&ws.src);
            std::fs::create_dir_all(&ws.root)
                .map_err(|e| failed(format!("cannot make {}: {e}", ws.root.display())))?;
            let clone = git::command()
                .args(["clone", "--quiet", "--shared", "--no-checkout"])
                .arg(&self.options.repo)
                .arg(&ws.src);
            process::logged(&clone, "git clone --shared", log, cancel).await?;
        }
        let previous = git::out(
            &ws.src,
            &["rev-parse", "--verify", "--quiet", "HEAD"],
            cancel,
        )
        .await
        .ok();
        // Anything the previous build wrote must be over a second old before files change.
        if let Ok(built) = std::fs::metadata(ws.stamp()).and_then(|m| m.modified()) {
            let since = SystemTime::now()
                .duration_since(built)
                .unwrap_or(Duration::ZERO);
            let wait = Duration::from_millis(1100).saturating_sub(since);
            tokio::time::sleep(wait).await;
        }
        let checkout =
            git::git(&ws.src).args(["checkout", "--quiet", "--force", "--detach", commit]);
        process::logged(&checkout, &format!("git checkout {commit}"), log, cancel).await?;
        let clean = git::git(&ws.src).args(["clean", "-fdxq"]);
        process::logged(&clean, "git clean -fdx", log, cancel).await?;
        if let Some(previous) = previous.filter(|p| p != commit) {
            let changed = git::out(&ws.src, &["diff", "--name-only", &previous, commit], cancel)
                .await
                .unwrap_or_default();
            remove_stale_extensions(&ws.build, changed.lines());
        }
        Ok(())
    }

    /// CPython's own build: configure once per build folder (again when the arguments
    /// change), `make`, then an install-like prefix assembled from the build.
    async fn configure_and_make(&self, prefix: &Path, log: &Path) -> Result<(), BuildFailure> {
        let ws = &self.workspace;
        let configure = ws.src.join("configure");
        if !configure.is_file() {
            return Err(failed(format!(
                "{} has no configure script: not a CPython checkout (or add crosspickle-build.sh)",
                self.options.repo.display()
            )));
        }
        let args_file = ws.build.join(".crosspickle-configure");
        let args = self.options.configure.join("\n");
        let configured = ws.build.join("Makefile").is_file()
            && std::fs::read_to_string(&args_file).ok().as_deref() == Some(&args);
        if !configured {
            let _ = std::fs::remove_dir_all(&ws.build);
            std::fs::create_dir_all(&ws.build)
                .map_err(|e| failed(format!("cannot make {}: {e}", ws.build.display())))?;
            let spec = ProcessSpec::new(&configure, None)
                .args(&self.options.configure)
                .cwd(&ws.build);
            let what = format!("configure {}", self.options.configure.join(" "));
            process::logged(&spec, &what, log, &self.cancel).await?;
            std::fs::write(&args_file, &args)
                .map_err(|e| failed(format!("cannot write {}: {e}", args_file.display())))?;
        }
        let make = ProcessSpec::new("make", None)
            .arg(format!("-j{}", self.options.jobs.max(1)))
            .cwd(&ws.build);
        process::logged(&make, "make", log, &self.cancel).await?;
        assemble_prefix(&ws.src, &ws.build, prefix, &self.cancel).await
    }
}

/// Remove the compiled extension modules (and their objects) built from files that changed,
/// so that setup.py builds them again whatever the file times say.
fn remove_stale_extensions<'a>(build: &Path, changed: impl Iterator<Item = &'a str>) {
    let mut stems: Vec<String> = Vec::new();
    for path in changed {
        let p = Path::new(path);
        if !path.starts_with("Modules/")
            || !matches!(p.extension().and_then(|e| e.to_str()), Some("c" | "h"))
        {
            continue;
        }
        if let Some(stem) = p.file_stem().and_then(|s| s.to_str()) {
            stems.push(stem.to_string());
            if let Some(short) = stem.strip_suffix("module") {
                stems.push(short.to_string());
            }
        }
        // Headers and sources in a module's own folder (Modules/_ctypes/…) belong to it.
        if let Some(dir) = p
            .parent()
            .filter(|d| *d != Path::new("Modules"))
            .and_then(|d| d.file_name())
            .and_then(|d| d.to_str())
        {
            stems.push(dir.to_string());
        }
    }
    if stems.is_empty() {
        return;
    }
    let mut stack = vec![build.join("build")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let compiled = name.ends_with(".so") || name.ends_with(".o");
            if compiled
                && stems
                    .iter()
                    .any(|s| name.starts_with(&format!("{s}.")) || name == format!("{s}.o"))
            {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// Make `prefix` look like an installed CPython (so it finds its library from where it is,
/// wherever the cache is): `bin/python`, `lib/pythonX.Y` from the sources' `Lib`, and
/// `lib-dynload` from the build's extension modules and sysconfig data.
async fn assemble_prefix(
    src: &Path,
    build: &Path,
    prefix: &Path,
    cancel: &CancellationToken,
) -> Result<(), BuildFailure> {
    let built = build.join("python");
    if !built.is_file() {
        return Err(failed("make left no `python` in the build folder".into()));
    }
    let ask = ProcessSpec::new(&built, Some(Duration::from_secs(60)))
        .args([
            "-E",
            "-S",
            "-c",
            "import sys; print('%d.%d' % sys.version_info[:2])",
        ])
        .cwd(build);
    let version = process::output(&ask, "python -c 'print version'", cancel).await?;
    let version = version.trim();
    let lib = prefix.join("lib").join(format!("python{version}"));
    let bin = prefix.join("bin");
    let copy_error = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| failed(format!("cannot copy {what}: {e}"))
    };
    std::fs::create_dir_all(&bin).map_err(|e| failed(e.to_string()))?;
    std::fs::copy(&built, bin.join("python")).map_err(copy_error("python"))?;
    let _ = std::os::unix::fs::symlink("python", bin.join(format!("python{version}")));
    let _ = std::os::unix::fs::symlink("python", bin.join("python3"));
    copy_tree(&src.join("Lib"), &lib).map_err(copy_error("Lib"))?;
    std::fs::create_dir_all(lib.join("site-packages")).map_err(|e| failed(e.to_string()))?;
    let dynload = lib.join("lib-dynload");
    std::fs::create_dir_all(&dynload).map_err(|e| failed(e.to_string()))?;
    let builddir = std::fs::read_to_string(build.join("pybuilddir.txt"))
        .map_err(|e| failed(format!("cannot read pybuilddir.txt: {e}")))?;
    copy_tree(&build.join(builddir.trim()), &dynload)
        .map_err(copy_error("the extension modules"))?;
    for entry in std::fs::read_dir(build)
        .map_err(|e| failed(e.to_string()))?
        .filter_map(|e| e.ok())
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("libpython") && name.contains(".so") {
            std::fs::copy(entry.path(), prefix.join("lib").join(&name))
                .map_err(copy_error(&name))?;
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_tree(&entry.path(), &target)?;
            }
        } else if kind.is_symlink() {
            let link = std::fs::read_link(entry.path())?;
            let _ = std::os::unix::fs::symlink(link, &target);
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_extensions_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("build/lib.linux-x86_64-3.8");
        let tmp = dir
            .path()
            .join("build/temp.linux-x86_64-3.8/src/Modules/_ctypes");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::create_dir_all(&tmp).unwrap();
        for f in [
            "_pickle.cpython-38-x86_64-linux-gnu.so",
            "array.cpython-38-x86_64-linux-gnu.so",
            "_json.cpython-38-x86_64-linux-gnu.so",
        ] {
            std::fs::write(lib.join(f), "").unwrap();
        }
        std::fs::write(tmp.join("cfield.o"), "").unwrap();
        std::fs::write(lib.join("_ctypes.cpython-38-x86_64-linux-gnu.so"), "").unwrap();
        remove_stale_extensions(
            dir.path(),
            [
                "Modules/_pickle.c",
                "Modules/arraymodule.c",
                "Lib/pickle.py",
                "Modules/_ctypes/cfield.c",
            ]
            .into_iter(),
        );
        assert!(!lib.join("_pickle.cpython-38-x86_64-linux-gnu.so").exists());
        assert!(!lib.join("array.cpython-38-x86_64-linux-gnu.so").exists());
        assert!(!lib.join("_ctypes.cpython-38-x86_64-linux-gnu.so").exists());
        assert!(!tmp.join("cfield.o").exists());
        assert!(lib.join("_json.cpython-38-x86_64-linux-gnu.so").exists());
    }
}
