//! `crosspickle init`: a starter project in a folder (the current one by default): `cases/`
//! with one example case that passes on every interpreter (`init/example.yaml`), and the
//! GitHub Actions workflow of `docs/github-actions.yml` as `.github/workflows/crosspickle.yml`,
//! both embedded with `include_str!` so that what init writes is what the repository ships;
//! and says how to record the pickles that workflow's `recorded` job loads.
//! It never overwrites: when one of its files (or a folder on the way to one) exists as
//! something else, it names it and writes nothing (exit 2); when a write fails half-way it
//! takes back what it wrote, so a folder is left as it was or holds every file whole.

use std::path::{Path, PathBuf};

use clap::Args;

use super::failure::{Failure, EXIT_OK};
use crate::errors::Error;

/// The example case, `cases/example.yaml`.
pub const EXAMPLE: &str = include_str!("init/example.yaml");
/// The workflow, the very text of docs/github-actions.yml.
pub const WORKFLOW: &str = include_str!("../../docs/github-actions.yml");

/// What init writes: (path in the folder, text, what to tell about it).
const FILES: [(&str, &str, &str); 2] = [
    (
        "cases/example.yaml",
        EXAMPLE,
        "a first case; `crosspickle run` runs cases/ on every Python found",
    ),
    (
        ".github/workflows/crosspickle.yml",
        WORKFLOW,
        "the GitHub Actions workflow; set CROSSPICKLE_SOURCE at its top to crosspickle's git repository (git+<address>@<tag>), which its first job builds the wheel from",
    ),
];

/// What init says last: how to keep the pickles of round trips for the workflow's `recorded`
/// job.
const RECORD_HINT: &str = "to check pickles made by interpreters CI cannot set up: run `crosspickle record` where they are installed (it keeps each round trip's pickles in cases/pickles/), commit that folder, and the workflow's `recorded` job loads them on one Python\n";

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The folder to write into (it must exist)
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

pub fn init(args: &InitArgs) -> Result<i32, Failure> {
    let dir = &args.dir;
    if !dir.is_dir() {
        return Err(Error::Usage(format!(
            "{}: no such folder (crosspickle init writes into a folder that exists)",
            dir.display()
        ))
        .into());
    }
    let files: Vec<(&str, &str)> = FILES.iter().map(|(p, t, _)| (*p, *t)).collect();
    check_free(dir, &files)?;
    write_all(dir, &files, &mut |path, text| {
        crate::sys::fs::write_new(path, text.as_bytes())
    })?;
    let mut out = String::new();
    for (relative, _, what) in FILES {
        out.push_str(&format!("wrote {}: {what}\n", shown(dir, relative)));
    }
    out.push_str(RECORD_HINT);
    crate::sys::stdout::emit(&out);
    Ok(EXIT_OK)
}

/// `relative` as the user names it: as it is in the current folder, else under `dir`.
fn shown(dir: &Path, relative: &str) -> String {
    if dir == Path::new(".") {
        relative.to_string()
    } else {
        dir.join(relative).display().to_string()
    }
}

/// An error naming every file that exists already, or every folder on the way to one that
/// exists and is not a folder.
fn check_free(dir: &Path, files: &[(&str, &str)]) -> Result<(), Error> {
    let mut taken = Vec::new();
    for (relative, _) in files {
        let mut at = PathBuf::new();
        let parts: Vec<_> = Path::new(relative).components().collect();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            let Ok(meta) = dir.join(&at).symlink_metadata() else {
                break;
            };
            let last = i + 1 == parts.len();
            if last || !meta.is_dir() {
                let name = shown(dir, &at.to_string_lossy());
                if !taken.contains(&name) {
                    taken.push(name);
                }
                break;
            }
        }
    }
    if taken.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "{} exist{} already: crosspickle init never overwrites; nothing was written (move {} away to write the starter files)",
        taken.join(", "),
        if taken.len() == 1 { "s" } else { "" },
        if taken.len() == 1 { "it" } else { "them" },
    )))
}

/// Write every file (each one whole, through `write`), making the folders on the way; on the
/// first failure remove what was written and the folders made, and name the file.
fn write_all(
    dir: &Path,
    files: &[(&str, &str)],
    write: &mut dyn FnMut(&Path, &str) -> std::io::Result<()>,
) -> Result<(), Error> {
    let mut made_dirs: Vec<PathBuf> = Vec::new();
    let mut written: Vec<PathBuf> = Vec::new();
    for (relative, text) in files {
        let path = dir.join(relative);
        let result = make_parents(dir, relative, &mut made_dirs).and_then(|()| write(&path, text));
        if let Err(e) = result {
            for file in written.iter().rev() {
                let _ = std::fs::remove_file(file);
            }
            for folder in made_dirs.iter().rev() {
                let _ = std::fs::remove_dir(folder);
            }
            let name = shown(dir, relative);
            return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::Usage(format!(
                    "{name} exists already: crosspickle init never overwrites; nothing was written"
                ))
            } else {
                Error::io(format!("writing {name} (nothing was written)"), e)
            });
        }
        written.push(path);
    }
    Ok(())
}

/// Make the missing folders between `dir` and the file `relative`, noting each one made.
fn make_parents(dir: &Path, relative: &str, made: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut at = dir.to_path_buf();
    let Some(parent) = Path::new(relative).parent() else {
        return Ok(());
    };
    for part in parent.components() {
        at.push(part);
        if !at.is_dir() {
            std::fs::create_dir(&at)?;
            made.push(at.clone());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                // With `/` between parts on every system.
                let parts: Vec<_> = p.strip_prefix(dir).unwrap().iter().collect();
                out.push(
                    parts
                        .join(std::ffi::OsStr::new("/"))
                        .to_string_lossy()
                        .into_owned(),
                );
                if p.is_dir() {
                    stack.push(p);
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn a_failed_write_takes_back_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("cases")).unwrap();
        std::fs::write(dir.path().join("cases/mine.yaml"), "mine").unwrap();
        let files = [("cases/a.yaml", "a"), ("x/y/b.yaml", "b"), ("c.yaml", "c")];
        let mut calls = 0;
        let e = write_all(dir.path(), &files, &mut |path, text| {
            calls += 1;
            if calls == 3 {
                Err(std::io::Error::other("disk full"))
            } else {
                std::fs::write(path, text)
            }
        })
        .unwrap_err();
        assert_eq!(calls, 3);
        assert!(
            e.to_string()
                .ends_with("c.yaml (nothing was written): disk full"),
            "{e}"
        );
        // The folder that was there stays with its file; what init made is gone.
        assert_eq!(tree(dir.path()), ["cases", "cases/mine.yaml"]);
    }

    #[test]
    fn existing_files_and_folders_in_the_way_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let files = [("cases/a.yaml", "a"), (".github/workflows/w.yml", "w")];
        assert!(check_free(dir.path(), &files).is_ok());
        std::fs::create_dir(dir.path().join("cases")).unwrap();
        assert!(check_free(dir.path(), &files).is_ok(), "a folder is fine");
        std::fs::write(dir.path().join("cases/a.yaml"), "").unwrap();
        std::fs::write(dir.path().join(".github"), "").unwrap();
        let e = check_free(dir.path(), &files).unwrap_err().to_string();
        let a = dir.path().join("cases").join("a.yaml");
        let github = dir.path().join(".github");
        assert!(
            e.starts_with(&format!(
                "{}, {} exist already: crosspickle init never overwrites; nothing was written",
                a.display(),
                github.display()
            )),
            "{e}"
        );
    }

    #[test]
    fn the_workflow_is_the_documented_one() {
        let docs = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/github-actions.yml"),
        )
        .unwrap();
        assert_eq!(WORKFLOW, docs);
        let case = crate::case::parse_case(Path::new("cases/example.yaml"), EXAMPLE).unwrap();
        assert_eq!(case.id, "example");
        assert!(
            crate::corpus::cases()
                .unwrap()
                .iter()
                .all(|c| c.id != case.id),
            "the example's id is free in the corpus, so `run --corpus cases` works after init"
        );
    }
}
