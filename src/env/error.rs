//! Why an environment could not be made (or was not, the run being stopped).

use std::path::PathBuf;
use std::sync::Arc;

/// Why a run has no environment. Shared by every run waiting on the same environment, hence
/// `Clone` (the I/O errors behind an `Arc`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum EnvError {
    /// The run was stopped while its environment was being made.
    #[error("cancelled")]
    Cancelled,
    #[error(
        "no cache folder to keep environments in: pass --cache-dir or set CROSSPICKLE_CACHE_DIR"
    )]
    NoCacheFolder,
    /// `CROSSPICKLE_INSTALLER` asks for what cannot be.
    #[error("{0}")]
    Installer(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error(transparent)]
    Lock(Arc<crate::sys::lock::LockError>),
    #[error("{what} for {label}: cannot start {}: {source}", program.display())]
    Start {
        what: String,
        label: String,
        program: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    /// An installer step failed: the last lines of what it said.
    #[error("{what} failed for {label} ({status}):\n{said}")]
    Step {
        what: String,
        label: String,
        status: String,
        said: String,
    },
    #[error("{installer} made no {}", python.display())]
    NoPython {
        installer: &'static str,
        python: PathBuf,
    },
    /// A failure, and what to do about it.
    #[error("{source}\n  {hint}")]
    Hint {
        #[source]
        source: Box<EnvError>,
        hint: String,
    },
}
