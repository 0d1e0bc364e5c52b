//! How environments are made: where they live and where packages may come from.

use std::path::PathBuf;

/// How environments are made: where they live and where packages may come from.
#[derive(Debug, Clone, Default)]
pub struct EnvOptions {
    /// The cache folder (`--cache-dir`); environments go in its `envs/` folder.
    pub cache_dir: Option<PathBuf>,
    /// Install only from the installer's cache and `find_links` (`--offline`).
    pub offline: bool,
    /// Folders or URLs of distributions, passed to the installer (`--find-links`).
    pub find_links: Vec<String>,
    /// Environments made at once (0: one).
    pub jobs: usize,
    /// Told of each environment started and finished (none: nobody is).
    pub progress: Option<super::progress::BuildProgress>,
}
