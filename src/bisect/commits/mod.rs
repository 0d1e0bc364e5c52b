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
//! `failed/<key>` why a commit did not build, `logs/<key>.log` its build log. The compiler
//! cache is `<cache>/bisect/ccache/`.
//!
//! What makes a cold bisect fast: the compiler cache ([`ccache`]) shares objects between
//! far-apart commits, configure's results are reused per configure script ([`configure`]),
//! and a step builds the interpreter with only the extension modules the case imports
//! ([`modules`]): it runs the case, and when the case tried to import a module the build
//! could have had, builds it and runs again (the learned modules are built at once in later
//! steps). `--keep` builds are whole.
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
//!
//! The git commands are [`git`]'s; building a commit is [`build`]'s; what `crosspickle cache`
//! sees of the layout is [`store`]'s.

pub mod build;
pub mod ccache;
pub mod configure;
pub mod git;
pub mod modules;
pub mod store;

use std::path::PathBuf;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

pub use self::build::CommitOptions;
pub use self::git::Commit;

use self::build::{BuildFailure, Builder, BuiltPython};
use self::modules::Built;
use super::report::seconds;
use super::search::{search_range, Tester};
use super::{BisectError, Report, Step, StepState, Target};
use crate::python::probe::Prober;
use crate::python::{Interpreter, Source};

struct CommitTester<'a> {
    target: &'a Target,
    builder: &'a mut Builder,
    commits: &'a [Commit],
    prober: &'a Prober,
    cancel: &'a CancellationToken,
}

impl CommitTester<'_> {
    /// The interpreter built from `commit` (with the modules the case is known to need), or
    /// why there is none.
    async fn interpreter(
        &mut self,
        commit: &Commit,
    ) -> Result<Result<(Interpreter, BuiltPython), String>, BisectError> {
        let built = match self.builder.python_for(&commit.hash, false).await {
            Ok(built) => built,
            Err(BuildFailure::Interrupted) => return Err(BisectError::Interrupted),
            Err(BuildFailure::Failed(r)) => return Ok(Err(format!("does not build: {r}"))),
        };
        let python = &built.python;
        let interpreter = match self.prober.probe(python).await {
            Err(r) => Err(format!("the built interpreter does not work: {r}")),
            Ok(info) => {
                crate::python::discover::interpreter_from(python, info, vec![Source::Bisect], None)
                    .map_err(|r| r.to_string())
            }
        };
        Ok(interpreter.map(|mut interpreter| {
            interpreter.label = format!("{}@{}", interpreter.label, commit.label());
            (interpreter, built)
        }))
    }
}

/// How many times one step may build again for modules its runs showed missing (each time
/// adds at least one; a commit's setup.py knows fewer than this many).
const MAX_ROUNDS: usize = 200;

impl Tester for CommitTester<'_> {
    async fn test(&mut self, index: usize) -> Result<Step, BisectError> {
        let commit = self.commits[index].clone();
        let started = Instant::now();
        let mut built_now = false;
        let mut added: Vec<String> = Vec::new();
        let mut rounds = 0;
        let (mut step, built) = loop {
            let (interpreter, built) = match self.interpreter(&commit).await? {
                Ok(x) => x,
                Err(reason) => return Ok(Step::skipped(commit.label(), None, reason)),
            };
            built_now |= !built.cached;
            let python = Some(interpreter.label.clone());
            built.watch();
            let run = self.target.run_on(&interpreter, self.cancel).await;
            if self.cancel.is_cancelled() {
                return Err(BisectError::Interrupted);
            }
            // A module the case imports and this lean build lacks: build it, run again.
            let missing = built.missing_modules();
            if !missing.is_empty() {
                rounds += 1;
                if rounds > MAX_ROUNDS {
                    let reason = format!(
                        "the case imports extension modules this build still lacks after {MAX_ROUNDS} builds: {}",
                        missing.into_iter().collect::<Vec<_>>().join(", ")
                    );
                    return Ok(Step::skipped(commit.label(), python, reason));
                }
                added.extend(missing.iter().cloned());
                self.builder.wanted.extend(missing);
                continue;
            }
            let step = match run {
                Ok(observed) => Step::tested(commit.label(), python, observed, StepState::Tested),
                Err(reason) => Step::skipped(commit.label(), python, reason),
            };
            break (step, built);
        };
        step.notes.push(if built_now {
            format!("built in {}", seconds(started.elapsed()))
        } else {
            "build cached".to_string()
        });
        if let Built::Lean {
            known,
            built,
            failed,
        } = &built.modules
        {
            let names: Vec<&str> = built.iter().map(String::as_str).collect();
            let mut note = format!(
                "{} of {} extension modules: {}",
                built.len(),
                known.len(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(" ")
                }
            );
            if !failed.is_empty() {
                let failed: Vec<&str> = failed.iter().map(String::as_str).collect();
                note.push_str(&format!(" ({} did not build)", failed.join(" ")));
            }
            step.notes.push(note);
        }
        if !added.is_empty() {
            step.notes.push(format!(
                "the case imported {}: built with it and ran again",
                added.join(" ")
            ));
        }
        step.notes.push(commit.subject.clone());
        Ok(step)
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
    cancel: &CancellationToken,
) -> Result<CommitReport, BisectError> {
    let started = Instant::now();
    git::check_repository(&options.repo, cancel).await?;
    let commits =
        git::first_parent_range(&options.repo, &options.good, &options.bad, cancel).await?;
    let labels: Vec<String> = commits.iter().map(Commit::label).collect();
    let mut builder = Builder::new(options.clone(), cancel.clone());
    let found = {
        let mut tester = CommitTester {
            target,
            builder: &mut builder,
            commits: &commits,
            prober,
            cancel,
        };
        search_range(&labels, &mut tester, on_step).await?
    };
    let mut boundaries = found.boundaries;
    for b in &mut boundaries {
        for point in [&mut b.last_old, &mut b.first_new] {
            point.subject = commits
                .iter()
                .find(|c| c.label() == point.label)
                .map(|c| c.subject.clone());
        }
    }
    let (kept, keep_errors) = keep(&options, &mut builder, cancel).await?;
    let report = Report {
        mode: "commits",
        case: target.case.id.clone(),
        params: target.params.clone(),
        subject: Some(options.repo.display().to_string()),
        side: None,
        python: None,
        candidates: labels,
        steps: found.steps,
        boundaries,
        conclusion: found.conclusion,
        left_out: None,
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

/// Build the `--keep` refs and name them in the kept interpreters: the names registered, and
/// the refs that do not build.
async fn keep(
    options: &CommitOptions,
    builder: &mut Builder,
    cancel: &CancellationToken,
) -> Result<(Vec<(String, PathBuf)>, Vec<String>), BisectError> {
    let mut kept = Vec::new();
    let mut keep_errors = Vec::new();
    for spec in &options.keep {
        let (reference, name) = match spec.split_once('=') {
            Some((r, n)) => (r.trim().to_string(), n.trim().to_string()),
            None => (spec.trim().to_string(), format!("cpython@{}", spec.trim())),
        };
        let hash = git::resolve(&options.repo, &reference, cancel).await?;
        match builder.python_for(&hash, true).await {
            Ok(BuiltPython { python, .. }) => {
                crate::python::config::register_kept(&options.cache_dir, &name, &python).map_err(
                    |e| BisectError::Io {
                        context: format!("--keep {reference}"),
                        source: Box::new(e),
                    },
                )?;
                kept.push((name, python));
            }
            Err(BuildFailure::Interrupted) => return Err(BisectError::Interrupted),
            Err(BuildFailure::Failed(reason)) => {
                keep_errors.push(format!("--keep {reference}: does not build: {reason}"))
            }
        }
    }
    Ok((kept, keep_errors))
}
