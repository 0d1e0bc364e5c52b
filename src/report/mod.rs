//! Reporters: they consume the runner's events and the final [`Results`], and know every
//! output format; the runner knows none. Every report file is written atomically.

pub mod json;
pub mod terminal;

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` through a temporary file in the same folder and a rename, so that
/// readers see the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(
            ".{}.",
            path.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        ))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
