//! The git commands of commit mode, each through the process runner with a time limit: find
//! the candidate commits of the user's checkout, and drive the source folder crosspickle owns.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::bisect::BisectError;
use crate::sys::process::{self, Exit, ProcessSpec, ToolError};

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

/// What one git command may take: a local clone or a log is a matter of seconds.
const GIT_TIME_LIMIT: Duration = Duration::from_secs(10 * 60);

/// `git`, away from any git variables that would point it elsewhere.
pub fn command() -> ProcessSpec {
    ProcessSpec::new("git", Some(GIT_TIME_LIMIT))
        .remove_env("GIT_DIR")
        .remove_env("GIT_WORK_TREE")
        .remove_env("GIT_INDEX_FILE")
}

/// `git -C repo`.
pub fn git(repo: &Path) -> ProcessSpec {
    command().arg("-C").arg(repo)
}

/// What `git -C repo ARGS` prints, without its trailing newline.
pub async fn out(
    repo: &Path,
    args: &[&str],
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let what = format!("git {}", args.join(" "));
    process::output(&git(repo).args(args), &what, cancel)
        .await
        .map(|s| s.trim_end().to_string())
}

/// `repo` is a git repository (a failing `git` is the user's folder; a missing one is not).
pub async fn check_repository(repo: &Path, cancel: &CancellationToken) -> Result<(), BisectError> {
    match out(repo, &["rev-parse", "--git-dir"], cancel).await {
        Ok(_) => Ok(()),
        Err(ToolError::Failed { .. }) => Err(BisectError::Request(format!(
            "{} is not a git repository",
            repo.display()
        ))),
        Err(e) => Err(e.into()),
    }
}

/// The full hash of a ref.
pub async fn resolve(
    repo: &Path,
    reference: &str,
    cancel: &CancellationToken,
) -> Result<String, BisectError> {
    let commit = format!("{reference}^{{commit}}");
    match out(repo, &["rev-parse", "--verify", "--quiet", &commit], cancel).await {
        Ok(hash) => Ok(hash),
        Err(ToolError::Failed { .. }) => Err(BisectError::Request(format!(
            "`{reference}` is not a commit in {}",
            repo.display()
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `good`, then the first-parent commits after it up to `bad`, oldest first, with subjects.
pub async fn first_parent_range(
    repo: &Path,
    good: &str,
    bad: &str,
    cancel: &CancellationToken,
) -> Result<Vec<Commit>, BisectError> {
    let good_hash = resolve(repo, good, cancel).await?;
    let bad_hash = resolve(repo, bad, cancel).await?;
    let check = git(repo).args(["merge-base", "--is-ancestor", &good_hash, &bad_hash]);
    let what = "git merge-base --is-ancestor";
    let finished = process::run(&check, cancel)
        .await
        .map_err(|source| ToolError::Start {
            what: what.to_string(),
            source,
        })?;
    match finished.exit {
        Exit::Code(0) => {}
        Exit::Code(1) => {
            return Err(BisectError::Request(format!(
                "the good ref `{good}` is not an ancestor of the bad ref `{bad}`"
            )))
        }
        Exit::Cancelled => return Err(BisectError::Interrupted),
        other => {
            return Err(BisectError::Tool(ToolError::Failed {
                what: what.to_string(),
                status: other.describe(),
                said: process::said(&finished),
            }))
        }
    }
    let subject = out(repo, &["log", "-1", "--format=%s", &good_hash], cancel).await?;
    let mut commits = vec![Commit {
        hash: good_hash.clone(),
        subject,
    }];
    let range = format!("{good_hash}..{bad_hash}");
    let log = out(
        repo,
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H %s",
            &range,
        ],
        cancel,
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
