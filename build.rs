//! Embeds the shipped corpus: writes `$OUT_DIR/corpus.rs`, a table of every file under `cases/`
//! (its path below `cases/`, `/`-separated, and its bytes through `include_bytes!`), sorted by
//! path, that `src/corpus.rs` includes. Names starting with `.` are left out, as the case loader
//! leaves them out (editor swap files, `.gitkeep`). Cargo reruns this script when anything under
//! `cases/` changes, a file added or removed included (`rerun-if-changed` on a folder scans it
//! all), so a new case is in the next build without touching any list.
//!
//! A build script rather than a crate for embedding folders: `include_dir` sees a new file only
//! on nightly (stable has no tracked-path API for proc macros), and `rust-embed` reads from disk
//! in debug builds unless told otherwise; this is forty lines with no dependency.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let cases = root.join("cases");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cases");
    if !cases.is_dir() {
        panic!(
            "{} is missing: the corpus is embedded from it (a package of crosspickle must keep cases/)",
            cases.display()
        );
    }
    let mut files = Vec::new();
    walk(&cases, &mut files);
    let mut table: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&cases).expect("under cases/");
            let parts: Vec<&str> = rel
                .components()
                .map(|c| {
                    c.as_os_str().to_str().unwrap_or_else(|| {
                        panic!("{}: a file name that is not UTF-8", path.display())
                    })
                })
                .collect();
            (parts.join("/"), path)
        })
        .collect();
    table.sort();
    let mut out = String::from(
        "/// Every file of `cases/` at build time: (path below `cases/`, bytes), sorted by path.\n\
         static FILES: &[(&str, &[u8])] = &[\n",
    );
    for (rel, path) in &table {
        let abs = path.to_str().expect("a UTF-8 path");
        writeln!(out, "    ({rel:?}, include_bytes!({abs:?})),").unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("corpus.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("writing {}: {e}", dest.display()));
}

/// Every file under `dir`, following symbolic links, names starting with `.` left out.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}
