//! The bounce of a round trip (`relay` and `reload`, docs/case-format.md "The bounce"): what
//! a load that relays is given (its relay's code file and where the relayed pickle goes), and
//! why a pair cannot reload. The run loop (`execute.rs`) runs the legs: the relay in the
//! load's process (the driver runs it after the load's code, `run/driver/3_run.py`), the
//! reload on the producer in a fresh process.

use std::path::{Path, PathBuf};

use super::driver::{Request, Workspace};
use crate::case::RELAY_FILE;

/// The files of one relay: its code, and the pickle it leaves for the reload.
#[derive(Debug, Clone)]
pub struct Relay {
    pub code: PathBuf,
    pub data: PathBuf,
}

impl Relay {
    /// The relay of bounce number `n`, its code `code` written to a folder of its own in the
    /// workspace (out of the load's working directory, which holds its own code alone).
    pub fn make(workspace: &Workspace, n: usize, code: &str) -> std::io::Result<Relay> {
        let dir = workspace.bounce_dir(n);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(RELAY_FILE);
        std::fs::write(&path, code)?;
        Ok(Relay {
            code: path,
            data: dir.join("relayed.pickle"),
        })
    }

    /// `request` (a load's) with this relay: the driver runs its code after the load's in the
    /// same `__main__`, and writes its `data` to [`Relay::data`]. `code_cache` is where the
    /// interpreter's compiled form of the relay's code is kept.
    pub fn request(&self, request: Request, code_cache: &Path) -> std::io::Result<Request> {
        request
            .path("relay", &self.code)?
            .path("relay_data", &self.data)?
            .path("relay_cache", code_cache)
    }
}

/// Why a pair whose producer is `producer` (a recorded one: only its pickle is there) cannot
/// reload, once its load and relay passed.
pub fn recorded_reason(producer: &str) -> String {
    format!(
        "the reload runs on the producer, and {producer} is a recorded producer with no \
         interpreter to run it (its load and relay passed)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_producer_is_named_in_the_reason() {
        let reason = recorded_reason("recorded:cpython-3.12.0");
        assert!(reason.contains("recorded:cpython-3.12.0 is a recorded producer"));
        assert!(reason.contains("load and relay passed"));
    }
}
