//! `--json FILE`: the [`Results`](crate::results::Results) as JSON, enough to rebuild any
//! report later (and what `merge` reads).

use std::path::Path;

use crate::errors::Error;
use crate::results::Results;

pub fn write(path: &Path, results: &Results) -> Result<(), Error> {
    let bytes = serde_json::to_vec_pretty(results).expect("results serialize");
    crate::sys::fs::write_atomic(path, &bytes)
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

pub fn read(path: &Path) -> Result<Results, Error> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        Error::Usage(format!(
            "{}: not a crosspickle JSON report: {e}",
            path.display()
        ))
    })
}
