//! What the making of environments tells its caller as it goes: each one started and each one
//! finished (made or not, and how long it took), for a progress display that the layers above
//! draw (a bar on a terminal, a line per environment otherwise). The env layer draws nothing.

use std::sync::Arc;

use super::error::EnvError;

/// One environment, started or finished.
#[derive(Debug)]
pub enum BuildEvent<'a> {
    Started {
        /// The interpreter's label.
        interpreter: &'a str,
        requirements: &'a [String],
    },
    Finished {
        interpreter: &'a str,
        requirements: &'a [String],
        result: Result<(), &'a EnvError>,
        seconds: f64,
    },
}

/// Who hears about the environments being made.
#[derive(Clone)]
pub struct BuildProgress(Arc<dyn Fn(BuildEvent<'_>) + Send + Sync>);

impl BuildProgress {
    pub fn new(f: impl Fn(BuildEvent<'_>) + Send + Sync + 'static) -> Self {
        BuildProgress(Arc::new(f))
    }

    pub fn tell(&self, event: BuildEvent<'_>) {
        (self.0)(event)
    }
}

impl std::fmt::Debug for BuildProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BuildProgress")
    }
}
