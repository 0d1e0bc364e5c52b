//! `--json FILE`: the [`Results`] in their serialised form ([`crate::results::wire`]), enough
//! to rebuild any report later (and what `merge` reads).

use std::path::Path;

use crate::errors::Error;
use crate::results::{wire, Results};

pub fn write(path: &Path, results: &Results) -> Result<(), Error> {
    crate::sys::fs::write_atomic(path, &wire::to_json(results))
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}
