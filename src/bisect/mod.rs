//! Bisect: where did a case's outcome change? One module per concern: the [`target`] (one
//! case with one params combination, and running it), the [`key`] of an outcome that is
//! compared, the binary [`search`] with skips, and the [`report`] every mode prints and writes
//! as JSON; then one driver per mode: [`interpreters`] across the installed interpreters,
//! [`package`] across a package's releases, [`commits`] across a CPython checkout's commits,
//! and [`step`], the test for `git bisect run`. What stops a bisect is a [`BisectError`].

pub mod commits;
pub mod interpreters;
pub mod key;
pub mod package;
pub mod report;
pub mod search;
pub mod step;
pub mod target;

use std::path::{Path, PathBuf};

pub use key::OutcomeKey;
pub use report::{Boundary, Point, Report, Step, StepState};
pub use target::Target;

use crate::sys::process::ToolError;

/// Why a bisect stopped without a report. Bad input ([`Input`](Self::Input),
/// [`Request`](Self::Request)) is the user's to fix; the others are not.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// The case, its params or the flags do not make sense.
    #[error(transparent)]
    Input(#[from] crate::errors::Error),
    /// What the user asked for is not there: a ref that is not a commit, a release pip does not
    /// know, a folder that is not a git repository.
    #[error("{0}")]
    Request(String),
    /// A tool crosspickle runs (git, pip) failed.
    #[error(transparent)]
    Tool(ToolError),
    /// Listing a package's releases gave an answer crosspickle cannot read.
    #[error("cannot list the releases of `{name}` with pip: {said}")]
    Listing { name: String, said: String },
    /// A file or folder of crosspickle's own (in the cache) cannot be made or written.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Stopped with Ctrl-C.
    #[error("interrupted")]
    Interrupted,
}

impl From<ToolError> for BisectError {
    fn from(e: ToolError) -> Self {
        if e.is_cancelled() {
            BisectError::Interrupted
        } else {
            BisectError::Tool(e)
        }
    }
}

/// Where bisect keeps its environments and builds: `<cache>/bisect`.
pub fn cache_root(cache_dir: &Path) -> PathBuf {
    cache_dir.join("bisect")
}
