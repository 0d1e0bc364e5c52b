//! Commit mode: binary search over the first-parent commits between a good and a bad ref of a
//! CPython git checkout. The user's checkout is never touched: candidates are checked out in a
//! source folder crosspickle owns (a `git clone --shared` of it), built out of tree into ONE
//! build folder reused between steps (incremental `make`), and each built interpreter is kept
//! per commit so that a repeated bisect builds nothing. A commit that does not build is
//! skipped, and remembered as such.
//!
//! Layout, under `<cache>/bisect/cpython/<hash of the checkout's path>/`:
//! `src/` the source folder, `build/` the build folder, `builds/<key>/` one install-like prefix
//! per built commit (`bin/python`, `lib/pythonX.Y/`, `lib/pythonX.Y/lib-dynload/`),
//! `failed/<key>` why a commit did not build, `logs/<key>.log` its build log.
//!
//! A repository holding `crosspickle-build.sh` at the candidate commit (or `--build-command`)
//! is built by that script instead of configure and make: it runs with the build folder as its
//! working directory and `CROSSPICKLE_SRC`, `CROSSPICKLE_BUILD`, `CROSSPICKLE_PREFIX`,
//! `CROSSPICKLE_JOBS` and `CROSSPICKLE_CONFIGURE` set, and must leave an interpreter at
//! `$CROSSPICKLE_PREFIX/bin/python`.
//!
//! CPython 3.8's build compares file times to the second, so a file checked out in the same
//! second as the previous build finished can look older than its stale object: each checkout
//! waits until the previous build is over a second old, and the extension modules built from
//! changed files are removed so that they are built again.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use tokio::process::Command;

use super::{run_on, search_range, seconds, Report, Step, StepState, Target, Tester};
use crate::python::probe::Prober;

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

/// One candidate commit.
#[derive(Debug, Clone)]
pub struct Commit {
    pub hash: String,
    pub subject: String,
}

impl Commit {
    pub fn label(&self) -> String {
        self.hash[..12.min(self.hash.len())].to_string()
    }
}

fn git(repo: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(repo);
    cmd.env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    cmd
}

async fn git_out(repo: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = git(repo);
    cmd.args(args);
    super::output_of(&mut cmd, &format!("git {}", args.join(" ")))
        .await
        .map(|s| s.trim_end().to_string())
}

/// The full hash of a ref.
pub async fn resolve(repo: &Path, reference: &str) -> Result<String, String> {
    git_out(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{reference}^{{commit}}"),
        ],
    )
    .await
    .map_err(|_| format!("`{reference}` is not a commit in {}", repo.display()))
}

/// `good`, then the first-parent commits after it up to `bad`, oldest first, with subjects.
pub async fn first_parent_range(repo: &Path, good: &str, bad: &str) -> Result<Vec<Commit>, String> {
    let good_hash = resolve(repo, good).await?;
    let bad_hash = resolve(repo, bad).await?;
    let mut check = git(repo);
    check.args(["merge-base", "--is-ancestor", &good_hash, &bad_hash]);
    let is_ancestor = check
        .status()
        .await
        .map_err(|e| format!("cannot run git: {e}"))?
        .success();
    if !is_ancestor {
        return Err(format!(
            "the good ref `{good}` is not an ancestor of the bad ref `{bad}`"
        ));
    }
    let mut commits = vec![Commit {
        hash: good_hash.clone(),
        subject: git_out(repo, &["log", "-1", "--format=%s", &good_hash]).await?,
    }];
    let log = git_out(
        repo,
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H %s",
            &format!("{good_hash}..{bad_hash}"),
        ],
    )
    .await?;
    for line in log.lines().filter(|l| !l.is_empty()) {
        let (hash, subject) = line.split_once(' ').unwrap_or((line, ""));
        commits.push(Commit {
            hash: hash.to_string(),
            subject: subject.to_string(),
        });
    }
    Ok(commits)
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
        let root = super::cache_root(cache_dir)
            .join("cpython")
            .join(&super::short_hash(&canonical.display().to_string())[..12]);
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
}

const READY: &str = ".crosspickle-ready";

impl Builder {
    pub fn new(options: CommitOptions) -> Builder {
        let workspace = Workspace::for_repo(&options.cache_dir, &options.repo);
        Builder {
            options,
            workspace,
            builds: 0,
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
            format!("{commit}-{}", &super::short_hash(&how)[..8])
        }
    }

    /// The built interpreter of `commit`, building it if needed; `Ok((python, cached))`.
    pub async fn python_for(&mut self, commit: &str) -> Result<(PathBuf, bool), String> {
        let key = self.key(commit);
        let prefix = self.workspace.prefix(&key);
        let python = prefix.join("bin").join("python");
        if prefix.join(READY).is_file() && python.exists() {
            return Ok((python, true));
        }
        let failed = self.workspace.failed(&key);
        if let Ok(reason) = std::fs::read_to_string(&failed) {
            return Err(format!(
                "did not build before (remove {} to try again): {reason}",
                failed.display()
            ));
        }
        for dir in [
            &self.workspace.root.join("builds"),
            &self.workspace.root.join("failed"),
            &self.workspace.root.join("logs"),
        ] {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        }
        self.builds += 1;
        let log = self.workspace.log(&key);
        let _ = std::fs::remove_file(&log);
        // A checkout that fails is this machine's problem, not the commit's: not remembered.
        self.checkout(commit, &log)
            .await
            .map_err(|r| format!("cannot check the commit out: {r}"))?;
        let result = self.build(commit, &prefix, &log).await;
        let _ = std::fs::write(self.workspace.stamp(), commit);
        match result {
            Ok(()) => Ok((python, false)),
            Err(reason) => {
                let _ = std::fs::write(&failed, &reason);
                Err(reason)
            }
        }
    }

    async fn build(&self, commit: &str, prefix: &Path, log: &Path) -> Result<(), String> {
        let ws = &self.workspace;
        std::fs::create_dir_all(&ws.build)
            .map_err(|e| format!("cannot make {}: {e}", ws.build.display()))?;
        let parent = prefix.parent().expect("a builds folder");
        let scratch = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempdir_in(parent)
            .map_err(|e| format!("cannot make a folder in {}: {e}", parent.display()))?;
        let script = ws.src.join("crosspickle-build.sh");
        let command = match &self.options.build_command {
            Some(c) => Some(c.clone()),
            None if script.is_file() => Some(format!("sh '{}'", script.display())),
            None => None,
        };
        match command {
            Some(command) => {
                let mut cmd = Command::new("sh");
                cmd.arg("-c").arg(&command).current_dir(&ws.build);
                cmd.env("CROSSPICKLE_SRC", &ws.src)
                    .env("CROSSPICKLE_BUILD", &ws.build)
                    .env("CROSSPICKLE_PREFIX", scratch.path())
                    .env("CROSSPICKLE_JOBS", self.options.jobs.to_string())
                    .env("CROSSPICKLE_CONFIGURE", self.options.configure.join(" "));
                super::run_logged(&mut cmd, &command, log).await?;
            }
            None => self.configure_and_make(scratch.path(), log).await?,
        }
        let python = scratch.path().join("bin").join("python");
        if !python.exists() {
            return Err(format!(
                "the build left no interpreter at {}",
                python.display()
            ));
        }
        std::fs::write(scratch.path().join(READY), commit)
            .map_err(|e| format!("cannot write {}: {e}", prefix.display()))?;
        let built = scratch.keep();
        let _ = std::fs::remove_dir_all(prefix);
        std::fs::rename(&built, prefix).map_err(|e| {
            let _ = std::fs::remove_dir_all(&built);
            format!("cannot move the build to {}: {e}", prefix.display())
        })
    }

    /// Check `commit` out in the source folder, so that every file it changes is newer, to the
    /// second, than anything the previous build made.
    async fn checkout(&self, commit: &str, log: &Path) -> Result<(), String> {
        let ws = &self.workspace;
        if !ws.src.join(".git").exists() {
            let _ = std::fs::remove_dir_all(&ws.src);
            std::fs::create_dir_all(&ws.root)
                .map_err(|e| format!("cannot make {}: {e}", ws.root.display()))?;
            let mut clone = Command::new("git");
            clone
                .args(["clone", "--quiet", "--shared", "--no-checkout"])
                .arg(&self.options.repo)
                .arg(&ws.src);
            super::run_logged(&mut clone, "git clone --shared", log).await?;
        }
        let previous = git_out(&ws.src, &["rev-parse", "--verify", "--quiet", "HEAD"])
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
        let mut checkout = git(&ws.src);
        checkout.args(["checkout", "--quiet", "--force", "--detach", commit]);
        super::run_logged(&mut checkout, &format!("git checkout {commit}"), log).await?;
        let mut clean = git(&ws.src);
        clean.args(["clean", "-fdxq"]);
        super::run_logged(&mut clean, "git clean -fdx", log).await?;
        if let Some(previous) = previous.filter(|p| p != commit) {
            let changed = git_out(&ws.src, &["diff", "--name-only", &previous, commit])
                .await
                .unwrap_or_default();
            remove_stale_extensions(&ws.build, changed.lines());
        }
        Ok(())
    }

    /// CPython's own build: configure once per build folder (again when the arguments
    /// change), `make`, then an install-like prefix assembled from the build.
    async fn configure_and_make(&self, prefix: &Path, log: &Path) -> Result<(), String> {
        let ws = &self.workspace;
        let configure = ws.src.join("configure");
        if !configure.is_file() {
            return Err(format!(
                "{} has no configure script: not a CPython checkout (or add crosspickle-build.sh)",
                self.options.repo.display()
            ));
        }
        let args_file = ws.build.join(".crosspickle-configure");
        let args = self.options.configure.join("\n");
        let configured = ws.build.join("Makefile").is_file()
            && std::fs::read_to_string(&args_file).ok().as_deref() == Some(&args);
        if !configured {
            let _ = std::fs::remove_dir_all(&ws.build);
            std::fs::create_dir_all(&ws.build)
                .map_err(|e| format!("cannot make {}: {e}", ws.build.display()))?;
            let mut cmd = Command::new(&configure);
            cmd.args(&self.options.configure).current_dir(&ws.build);
            super::run_logged(
                &mut cmd,
                &format!("configure {}", self.options.configure.join(" ")),
                log,
            )
            .await?;
            std::fs::write(&args_file, &args)
                .map_err(|e| format!("cannot write {}: {e}", args_file.display()))?;
        }
        let mut make = Command::new("make");
        make.arg(format!("-j{}", self.options.jobs.max(1)))
            .current_dir(&ws.build);
        super::run_logged(&mut make, "make", log).await?;
        assemble_prefix(&ws.src, &ws.build, prefix).await
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
async fn assemble_prefix(src: &Path, build: &Path, prefix: &Path) -> Result<(), String> {
    let built = build.join("python");
    if !built.is_file() {
        return Err("make left no `python` in the build folder".into());
    }
    let mut ask = Command::new(&built);
    ask.args([
        "-E",
        "-S",
        "-c",
        "import sys; print('%d.%d' % sys.version_info[:2])",
    ])
    .current_dir(build);
    let version = super::output_of(&mut ask, "python -c 'print version'")
        .await?
        .trim()
        .to_string();
    let lib = prefix.join("lib").join(format!("python{version}"));
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    std::fs::copy(&built, bin.join("python")).map_err(|e| format!("cannot copy python: {e}"))?;
    let _ = std::os::unix::fs::symlink("python", bin.join(format!("python{version}")));
    let _ = std::os::unix::fs::symlink("python", bin.join("python3"));
    copy_tree(&src.join("Lib"), &lib).map_err(|e| format!("cannot copy Lib: {e}"))?;
    std::fs::create_dir_all(lib.join("site-packages")).map_err(|e| e.to_string())?;
    let dynload = lib.join("lib-dynload");
    std::fs::create_dir_all(&dynload).map_err(|e| e.to_string())?;
    let builddir = std::fs::read_to_string(build.join("pybuilddir.txt"))
        .map_err(|e| format!("cannot read pybuilddir.txt: {e}"))?;
    copy_tree(&build.join(builddir.trim()), &dynload)
        .map_err(|e| format!("cannot copy the extension modules: {e}"))?;
    for entry in std::fs::read_dir(build)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok())
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("libpython") && name.contains(".so") {
            std::fs::copy(entry.path(), prefix.join("lib").join(&name))
                .map_err(|e| format!("cannot copy {name}: {e}"))?;
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

struct CommitTester<'a> {
    target: &'a Target,
    builder: &'a mut Builder,
    commits: &'a [Commit],
    prober: &'a Prober,
}

impl CommitTester<'_> {
    async fn interpreter(
        &mut self,
        commit: &Commit,
    ) -> Result<(crate::python::Interpreter, String), String> {
        let started = Instant::now();
        let (python, cached) = self
            .builder
            .python_for(&commit.hash)
            .await
            .map_err(|r| format!("does not build: {r}"))?;
        let note = if cached {
            "build cached".to_string()
        } else {
            format!("built in {}", seconds(started.elapsed()))
        };
        let info = self
            .prober
            .probe(&python)
            .await
            .map_err(|r| format!("the built interpreter does not work: {r}"))?;
        let mut interpreter =
            crate::python::discover::interpreter_from(&python, info, vec!["bisect".into()], None)?;
        interpreter.label = format!("{}@{}", interpreter.label, commit.label());
        Ok((interpreter, note))
    }
}

impl Tester for CommitTester<'_> {
    async fn test(&mut self, index: usize) -> Step {
        let commit = self.commits[index].clone();
        let (interpreter, note) = match self.interpreter(&commit).await {
            Ok(x) => x,
            Err(reason) => return Step::skipped(commit.label(), None, reason),
        };
        let python = Some(interpreter.label.clone());
        let mut step = match run_on(self.target, &interpreter).await {
            Ok(observed) => Step::tested(commit.label(), python, observed, StepState::Tested),
            Err(reason) => Step::skipped(commit.label(), python, reason),
        };
        step.notes.push(note);
        step.notes.push(commit.subject.clone());
        step
    }
}

/// What a commit bisect found, and how many builds it ran.
pub struct CommitReport {
    pub report: Report,
    pub builds: usize,
    /// `--keep` refs that could not be built.
    pub keep_errors: Vec<String>,
    /// Names registered with `--keep`, and their interpreters.
    pub kept: Vec<(String, PathBuf)>,
}

pub async fn bisect(
    target: &Target,
    options: CommitOptions,
    prober: &Prober,
    on_step: &mut dyn FnMut(&Step),
) -> Result<CommitReport, String> {
    let started = Instant::now();
    if git_out(&options.repo, &["rev-parse", "--git-dir"])
        .await
        .is_err()
    {
        return Err(format!(
            "{} is not a git repository",
            options.repo.display()
        ));
    }
    let commits = first_parent_range(&options.repo, &options.good, &options.bad).await?;
    let labels: Vec<String> = commits.iter().map(Commit::label).collect();
    let mut builder = Builder::new(options.clone());
    let found = {
        let mut tester = CommitTester {
            target,
            builder: &mut builder,
            commits: &commits,
            prober,
        };
        search_range(&labels, &mut tester, on_step).await
    };
    let mut boundaries: Vec<_> = found.boundary.into_iter().collect();
    for b in &mut boundaries {
        for point in [&mut b.last_old, &mut b.first_new] {
            point.subject = commits
                .iter()
                .find(|c| c.label() == point.label)
                .map(|c| c.subject.clone());
        }
    }
    let mut kept = Vec::new();
    let mut keep_errors = Vec::new();
    for spec in &options.keep {
        let (reference, name) = match spec.split_once('=') {
            Some((r, n)) => (r.trim().to_string(), n.trim().to_string()),
            None => (spec.trim().to_string(), format!("cpython@{}", spec.trim())),
        };
        let hash = resolve(&options.repo, &reference).await?;
        match builder.python_for(&hash).await {
            Ok((python, _)) => {
                crate::python::config::register_kept(&options.cache_dir, &name, &python)
                    .map_err(|e| format!("--keep {reference}: {e}"))?;
                kept.push((name, python));
            }
            Err(reason) => {
                keep_errors.push(format!("--keep {reference}: does not build: {reason}"))
            }
        }
    }
    let report = Report {
        mode: "commits",
        case: target.case.id.clone(),
        params: target.params.clone(),
        subject: Some(options.repo.display().to_string()),
        python: None,
        candidates: labels,
        steps: found.steps,
        boundaries,
        conclusion: found.conclusion,
        builds: Some(builder.builds),
        duration_s: started.elapsed().as_secs_f64(),
    };
    Ok(CommitReport {
        report,
        keep_errors,
        builds: builder.builds,
        kept,
    })
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
