//! Building one commit of commit mode: check it out in the source folder crosspickle owns,
//! build it in the one reused build folder (configure and make, or the repository's build
//! script), and keep the result as an install-like prefix per commit; remember the commits that
//! do not build. CPython's own build goes through the compiler cache when there is one
//! ([`ccache`](super::ccache)), reuses configure's results ([`configure`](super::configure))
//! and builds only the extension modules the case needs when the tree allows it
//! ([`modules`](super::modules)). Every command goes through the process runner: git with its
//! time limit, the build itself without one (Ctrl-C stops it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use super::ccache::{self, CompilerCache};
use super::configure;
use super::git;
use super::modules::{self, Built};
use super::store::{self, READY};
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
        let root = store::checkouts_dir(cache_dir).join(id);
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
        self.build.join(store::BUILT)
    }
}

/// Builds commits and remembers what it built.
pub struct Builder {
    pub options: CommitOptions,
    pub workspace: Workspace,
    /// How many builds ran (not taken from the cache) in this bisect.
    pub builds: usize,
    /// The extension modules the case was seen to need; lean builds build these.
    pub wanted: BTreeSet<String>,
    /// The compiler cache, once looked for (`Some(None)`: there is none).
    compiler_cache: Option<Option<CompilerCache>>,
    /// The keys built in this bisect (whose logs were started afresh).
    logged: std::collections::HashSet<String>,
    cancel: CancellationToken,
}

/// A built interpreter.
#[derive(Debug, Clone)]
pub struct BuiltPython {
    pub python: PathBuf,
    pub prefix: PathBuf,
    /// Taken from the cache, not built now.
    pub cached: bool,
    /// The extension modules it holds.
    pub modules: Built,
}

impl BuiltPython {
    /// The modules a run missed that this build could have had, from what the prefix's watch
    /// recorded since [`BuiltPython::watch`].
    pub fn missing_modules(&self) -> BTreeSet<String> {
        let record = std::fs::read_to_string(self.prefix.join(modules::NOT_FOUND_FILE));
        self.modules.missing(&record.unwrap_or_default())
    }

    /// Start watching afresh: forget the imports recorded so far (the probe's).
    pub fn watch(&self) {
        let _ = std::fs::remove_file(self.prefix.join(modules::NOT_FOUND_FILE));
    }
}

impl Builder {
    pub fn new(options: CommitOptions, cancel: CancellationToken) -> Builder {
        let workspace = Workspace::for_repo(&options.cache_dir, &options.repo);
        Builder {
            options,
            workspace,
            builds: 0,
            wanted: BTreeSet::new(),
            compiler_cache: None,
            logged: Default::default(),
            cancel,
        }
    }

    /// The compiler cache for CPython's builds, set up on first use.
    fn compiler_cache(&mut self) -> Option<CompilerCache> {
        if self.compiler_cache.is_none() {
            let env: Vec<_> = std::env::vars_os().collect();
            let root = store::compiler_cache_dir(&self.options.cache_dir);
            self.compiler_cache = Some(ccache::prepare(&root, &env));
        }
        self.compiler_cache.clone().flatten()
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

    /// The built interpreter of `commit`, building it if needed. `all_modules`: with every
    /// extension module (for an interpreter kept for later use); otherwise a cached or lean
    /// build that holds the [`wanted`](Self::wanted) modules will do, and a lean build made
    /// now holds those and the ones the cached build held (another case's).
    pub async fn python_for(
        &mut self,
        commit: &str,
        all_modules: bool,
    ) -> Result<BuiltPython, BuildFailure> {
        let key = self.key(commit);
        let prefix = self.workspace.prefix(&key);
        let python = prefix.join("bin").join("python");
        let mut want = (!all_modules).then(|| self.wanted.clone());
        if prefix.join(READY).is_file() && python.exists() {
            if let Some(built) = Built::read(&prefix) {
                if let (Some(want), Built::Lean { built, .. }) = (&mut want, &built) {
                    want.extend(built.iter().cloned());
                }
                let enough = match &built {
                    Built::All => true,
                    lean => !all_modules && lean.serves(&self.wanted),
                };
                if enough {
                    store::touch(&prefix);
                    return Ok(BuiltPython {
                        python,
                        prefix,
                        cached: true,
                        modules: built,
                    });
                }
            }
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
        // One log per commit and bisect: building again for more modules adds to it.
        if self.logged.insert(key.clone()) {
            let _ = std::fs::remove_file(&log);
        }
        // A checkout that fails is this machine's problem, not the commit's: not remembered.
        self.checkout(commit, &log).await.map_err(|r| match r {
            BuildFailure::Failed(r) => failed(format!("cannot check the commit out: {r}")),
            interrupted => interrupted,
        })?;
        let result = self.build(commit, &prefix, &log, want.as_ref()).await;
        let _ = std::fs::write(self.workspace.stamp(), commit);
        match result {
            Ok(modules) => Ok(BuiltPython {
                python,
                prefix,
                cached: false,
                modules,
            }),
            Err(BuildFailure::Failed(reason)) => {
                let _ = std::fs::write(&failed_file, &reason);
                Err(BuildFailure::Failed(reason))
            }
            Err(interrupted) => Err(interrupted),
        }
    }

    async fn build(
        &mut self,
        commit: &str,
        prefix: &Path,
        log: &Path,
        want: Option<&BTreeSet<String>>,
    ) -> Result<Built, BuildFailure> {
        let ws = &self.workspace.clone();
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
        let built = match command {
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
                Built::All
            }
            None => self.configure_and_make(scratch.path(), log, want).await?,
        };
        let python = scratch.path().join("bin").join("python");
        if !python.exists() {
            return Err(failed(format!(
                "the build left no interpreter at {}",
                python.display()
            )));
        }
        let write = |name: &str, text: &str| {
            std::fs::write(scratch.path().join(name), text)
                .map_err(|e| failed(format!("cannot write {}: {e}", prefix.display())))
        };
        write(modules::MODULES_FILE, &built.render())?;
        write(READY, commit)?;
        let kept = scratch.keep();
        let _ = std::fs::remove_dir_all(prefix);
        std::fs::rename(&kept, prefix).map_err(|e| {
            let _ = std::fs::remove_dir_all(&kept);
            failed(format!(
                "cannot move the build to {}: {e}",
                prefix.display()
            ))
        })?;
        Ok(built)
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
        // Anything the previous build wrote must be over a second old before files change
        // (nothing changes when the commit is the one checked out).
        let same = previous.as_deref() == Some(commit);
        if let Some(built) = std::fs::metadata(ws.stamp())
            .and_then(|m| m.modified())
            .ok()
            .filter(|_| !same)
        {
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
    /// change), `make`, then an install-like prefix assembled from the build. A lean build
    /// (when `want` names modules, and the tree allows it) makes the interpreter and, of the
    /// extension modules, only those.
    async fn configure_and_make(
        &mut self,
        prefix: &Path,
        log: &Path,
        want: Option<&BTreeSet<String>>,
    ) -> Result<Built, BuildFailure> {
        let ws = self.workspace.clone();
        let configure = ws.src.join("configure");
        if !configure.is_file() {
            return Err(failed(format!(
                "{} has no configure script: not a CPython checkout (or add crosspickle-build.sh)",
                self.options.repo.display()
            )));
        }
        let cache = self.compiler_cache();
        let tool = |program: &Path| {
            let spec = ProcessSpec::new(program, None).cwd(&ws.build);
            match &cache {
                Some(cache) => cache.apply(spec),
                None => spec,
            }
        };
        let args_file = ws.build.join(".crosspickle-configure");
        let args = self.options.configure.join("\n");
        let configured = ws.build.join("Makefile").is_file()
            && std::fs::read_to_string(&args_file).ok().as_deref() == Some(&args);
        let config_key = configure::key(&ws.src, &self.options.configure);
        if !configured {
            let _ = std::fs::remove_dir_all(&ws.build);
            std::fs::create_dir_all(&ws.build)
                .map_err(|e| failed(format!("cannot make {}: {e}", ws.build.display())))?;
            let spec = tool(&configure).args(&self.options.configure);
            let what = format!("configure {}", self.options.configure.join(" "));
            process::logged(&spec, &what, log, &self.cancel).await?;
            std::fs::write(&args_file, &args)
                .map_err(|e| failed(format!("cannot write {}: {e}", args_file.display())))?;
        } else if let Some(key) = &config_key {
            // A configure script configured before in this folder: its results, put back.
            let restored = configure::restore(&ws.build, key)
                .map_err(|e| failed(format!("cannot restore config.status: {e}")))?;
            if restored {
                let spec = tool(Path::new("sh")).arg("config.status");
                let run = process::logged(&spec, "sh config.status", log, &self.cancel).await;
                if let Err(e) = run {
                    configure::forget(&ws.build);
                    if e.is_cancelled() {
                        return Err(BuildFailure::Interrupted);
                    }
                }
            }
        }
        let jobs = format!("-j{}", self.options.jobs.max(1));
        let wrapper = ws.build.join(modules::WRAPPER_FILE);
        let makefile = std::fs::read_to_string(ws.build.join("Makefile")).unwrap_or_default();
        let lean = want.filter(|_| {
            modules::lean_possible(&ws.src)
                && modules::python_for_build(&makefile, &wrapper).is_some()
        });
        let mut built = Built::All;
        if let Some(want) = lean {
            let core = tool(Path::new("make"))
                .arg(&jobs)
                .args(modules::CORE_TARGETS);
            process::logged(&core, "make (the interpreter)", log, &self.cancel).await?;
            // setup.py failing under the wrapper is no verdict on the commit: the whole
            // build decides whether it builds.
            built = match self.make_modules(want, &tool, &jobs, log).await {
                Err(BuildFailure::Failed(_)) => Built::All,
                other => other?,
            };
        }
        if built == Built::All {
            let make = tool(Path::new("make")).arg(&jobs);
            process::logged(&make, "make", log, &self.cancel).await?;
        }
        if let Some(key) = &config_key {
            let _ = configure::remember(&ws.src, &ws.build, key);
        }
        assemble_prefix(&ws.src, &ws.build, prefix, &built, &self.cancel).await?;
        Ok(built)
    }

    /// setup.py, through make's `sharedmods` and the wrapper, for the modules `want` only:
    /// what was built, or [`Built::All`] when setup.py never said which modules it knows
    /// (then the caller builds everything).
    async fn make_modules(
        &self,
        want: &BTreeSet<String>,
        tool: &dyn Fn(&Path) -> ProcessSpec,
        jobs: &str,
        log: &Path,
    ) -> Result<Built, BuildFailure> {
        let build = &self.workspace.build;
        let makefile = std::fs::read_to_string(build.join("Makefile"))
            .map_err(|e| failed(format!("cannot read the Makefile: {e}")))?;
        let wrapper = build.join(modules::WRAPPER_FILE);
        let report = build.join(modules::REPORT_FILE);
        let Some(python_for_build) = modules::python_for_build(&makefile, &wrapper) else {
            return Ok(Built::All);
        };
        std::fs::write(&wrapper, modules::SETUP_WRAPPER)
            .map_err(|e| failed(format!("cannot write {}: {e}", wrapper.display())))?;
        let _ = std::fs::remove_file(&report);
        // The wanted modules are linked again, whatever their files' times say: one that no
        // longer builds must not leave the previous commit's behind.
        if let Ok(dir) = std::fs::read_to_string(build.join("pybuilddir.txt")) {
            remove_modules(&build.join(dir.trim()), want);
        }
        let wanted: Vec<&str> = want.iter().map(String::as_str).collect();
        let make = tool(Path::new("make"))
            .arg(jobs)
            .arg("sharedmods")
            .arg(python_for_build)
            .set_env("CROSSPICKLE_MODULES", wanted.join(","))
            .set_env("CROSSPICKLE_MODULES_REPORT", &report);
        let what = format!("make sharedmods (only: {})", wanted.join(" "));
        process::logged(&make, &what, log, &self.cancel).await?;
        let text = std::fs::read_to_string(&report).unwrap_or_default();
        let Some(known) = modules::parse_report(&text) else {
            return Ok(Built::All);
        };
        let built: BTreeSet<String> = want.intersection(&known).cloned().collect();
        let dir = std::fs::read_to_string(build.join("pybuilddir.txt")).unwrap_or_default();
        let present: BTreeSet<String> = std::fs::read_dir(build.join(dir.trim()))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                modules::module_of(&name).map(str::to_string)
            })
            .collect();
        let failed = built.difference(&present).cloned().collect();
        Ok(Built::Lean {
            known,
            built,
            failed,
        })
    }
}

/// Remove the built extension modules named `names` from the folder setup.py builds them in.
fn remove_modules(dir: &Path, names: &BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if modules::module_of(&name).is_some_and(|m| names.contains(m)) {
            let _ = std::fs::remove_file(entry.path());
        }
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
    modules: &Built,
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
    let _ = crate::sys::fs::symlink("python", bin.join(format!("python{version}")));
    let _ = crate::sys::fs::symlink("python", bin.join("python3"));
    copy_tree(&src.join("Lib"), &lib).map_err(copy_error("Lib"))?;
    std::fs::create_dir_all(lib.join("site-packages")).map_err(|e| failed(e.to_string()))?;
    let dynload = lib.join("lib-dynload");
    std::fs::create_dir_all(&dynload).map_err(|e| failed(e.to_string()))?;
    let builddir = std::fs::read_to_string(build.join("pybuilddir.txt"))
        .map_err(|e| failed(format!("cannot read pybuilddir.txt: {e}")))?;
    let from = build.join(builddir.trim());
    match modules {
        Built::All => copy_tree(&from, &dynload),
        lean => copy_modules(&from, &dynload, lean),
    }
    .map_err(copy_error("the extension modules"))?;
    if let Built::Lean { .. } = modules {
        std::fs::write(lib.join("sitecustomize.py"), modules::WATCH)
            .map_err(copy_error("sitecustomize.py"))?;
    }
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

/// The build's extension-module folder into `lib-dynload`: the modules `modules` holds.
fn copy_modules(from: &Path, to: &Path, modules: &Built) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_file() && modules::keep_in_prefix(&name, modules) {
            std::fs::copy(entry.path(), to.join(&name))?;
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
            let _ = crate::sys::fs::symlink(link, &target);
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
