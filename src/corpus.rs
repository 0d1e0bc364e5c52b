//! The corpus shipped inside the binary, and the cases a command works on: `cases/` as it was
//! at build time (every file, embedded by `build.rs`), loaded from memory with `--corpus`, each
//! case's path shown as `corpus:` and its path in crosspickle's source tree
//! (`corpus:cases/protocols/highest-protocol.yaml`) in reports, `-k` and `list`. Nothing is written to disk for it: a case runs from its text
//! (the runner writes the code to a fresh file anyway), and `requires` environments are keyed
//! by interpreter and requirements, not by where the case came from.
//!
//! With `--corpus` the corpus comes first, then the cases of the paths given (`cases/` is the
//! default only when neither is asked for). Ids stay as the corpus has them, not namespaced, so
//! `-k`, `bisect CASE` and docs/corpus.md name the same case with or without `--corpus`. A
//! case of the paths with a corpus id is the same case when its text is the same bytes (the
//! corpus's own `cases/` folder given with `--corpus`), kept once; otherwise it is an error,
//! naming both, that says to give it another id.

use std::path::{Path, PathBuf};

use crate::case::{find_case_files, load_cases, parse_case, Case};
use crate::errors::{CaseError, Error};

include!(concat!(env!("OUT_DIR"), "/corpus.rs"));

/// How the path of an embedded file starts: `corpus:` and the folder it was embedded from (the
/// file's stem stays the case's default id, also for a file at the top of `cases/`).
pub const PREFIX: &str = "corpus:cases/";

/// The folder below `cases/` that holds the pickles recorded from the corpus's round trips
/// (`crosspickle record cases/roundtrip cases/thirdparty -k "not cloudpickle" --pickles
/// cases/corpus-pickles` on every interpreter of crosspickle's CI machine; docs/record.md
/// says why not cloudpickle's): embedded with the cases, read by `run --corpus`. Not
/// `cases/pickles`, which `run cases` would read in crosspickle's own checkout.
pub const PICKLES: &str = "corpus-pickles";

/// Every embedded file: its path below `cases/` (`/`-separated) and its bytes, sorted by path.
pub fn files() -> &'static [(&'static str, &'static [u8])] {
    FILES
}

/// The path an embedded file is shown under: `corpus:cases/protocols/x.yaml`.
pub fn display_path(relative: &str) -> PathBuf {
    PathBuf::from(format!("{PREFIX}{relative}"))
}

/// Every case of the corpus, loaded from memory.
pub fn cases() -> Result<Vec<Case>, Error> {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    for (relative, bytes) in FILES {
        if !is_case_file(relative) {
            continue;
        }
        let path = display_path(relative);
        let loaded = std::str::from_utf8(bytes)
            .map_err(|e| {
                vec![CaseError {
                    path: path.clone(),
                    location: None,
                    message: format!("not UTF-8: {e}"),
                }]
            })
            .and_then(|text| parse_case(&path, text));
        match loaded {
            Ok(case) => cases.push(case),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(Error::Cases(errors))
    }
}

/// Is the case file at `path` the corpus's own: shown as `corpus:…`, or a file on disk whose
/// bytes are those of the embedded file its path ends with (`cases/x/y.yaml` in a checkout of
/// crosspickle, run from there)?
pub fn is_shipped(path: &Path) -> bool {
    if path.starts_with(PREFIX) {
        return true;
    }
    let Some(text) = path.to_str().map(|p| p.replace('\\', "/")) else {
        return false;
    };
    FILES.iter().any(|(relative, bytes)| {
        text.ends_with(&format!("cases/{relative}"))
            && std::fs::read(path).is_ok_and(|on_disk| on_disk == *bytes)
    })
}

/// The recorded pickles of the corpus, as a folder `run` can open: written once under
/// `cache_dir/corpus-pickles/<the manifest's digest>/` (written in a folder beside it, then
/// renamed), then checked as any folder of recorded pickles.
/// None when this build embeds none.
pub fn pickles_in(cache_dir: &Path) -> Result<Option<PathBuf>, Error> {
    let prefix = format!("{PICKLES}/");
    let files: Vec<(&str, &[u8])> = FILES
        .iter()
        .filter_map(|(r, bytes)| Some((r.strip_prefix(&prefix)?, *bytes)))
        .collect();
    let Some((_, manifest)) = files
        .iter()
        .find(|(name, _)| *name == crate::record::MANIFEST)
    else {
        return Ok(None);
    };
    let dir = cache_dir
        .join(PICKLES)
        .join(crate::sys::hash::short_hex(manifest, 16));
    if dir.join(crate::record::MANIFEST).is_file() {
        return Ok(Some(dir));
    }
    let io = |e| {
        Error::io(
            format!("cannot write the corpus's pickles to {}", dir.display()),
            e,
        )
    };
    // Written in a folder of its own, then renamed whole: an interrupted write leaves no
    // partial folder for the next run to refuse.
    let parent = cache_dir.join(PICKLES);
    std::fs::create_dir_all(&parent).map_err(io)?;
    let staging = tempfile::Builder::new()
        .prefix(".writing-")
        .tempdir_in(&parent)
        .map_err(io)?;
    for (name, bytes) in &files {
        std::fs::write(staging.path().join(name), bytes).map_err(io)?;
    }
    let written = staging.keep();
    if let Err(e) = std::fs::rename(&written, &dir) {
        let _ = std::fs::remove_dir_all(&written);
        if !dir.join(crate::record::MANIFEST).is_file() {
            return Err(io(e));
        }
        // Another run wrote it meanwhile.
    }
    Ok(Some(dir))
}

/// The embedded text of a corpus case's path (`corpus:…`), if it is one.
fn embedded(path: &Path) -> Option<&'static [u8]> {
    let relative = path.to_str()?.strip_prefix(PREFIX)?;
    FILES
        .iter()
        .find(|(r, _)| *r == relative)
        .map(|(_, bytes)| *bytes)
}

fn is_case_file(relative: &str) -> bool {
    relative.ends_with(".yaml") || relative.ends_with(".yml")
}

/// The cases a command works on: with `corpus`, the corpus's, then those under `paths` (which
/// may then be empty); without, those under `paths`.
pub fn load(paths: &[PathBuf], corpus: bool) -> Result<Vec<Case>, Error> {
    if !corpus {
        return load_cases(&find_case_files(paths)?);
    }
    let on_disk = if paths.is_empty() {
        Vec::new()
    } else {
        load_cases(&find_case_files(paths)?)?
    };
    let mut cases = self::cases()?;
    let mut errors = Vec::new();
    for case in on_disk {
        let Some(twin) = cases.iter().find(|c| c.id == case.id) else {
            cases.push(case);
            continue;
        };
        let text = std::fs::read(&case.path).unwrap_or_default();
        if embedded(&twin.path) == Some(&text[..]) {
            continue;
        }
        errors.push(CaseError {
            location: id_key(&text),
            message: format!(
                "id `{}` is also the id of {} in the corpus that --corpus adds: give this case another id (an `id:` key or another file name), or leave out --corpus",
                case.id,
                twin.path.display()
            ),
            path: case.path,
        });
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(Error::Cases(errors))
    }
}

/// Line and column of a top-level `id:` key, when the file has one (else the id is the file's
/// name and there is no place in the file to point at).
fn id_key(text: &[u8]) -> Option<(usize, usize)> {
    String::from_utf8_lossy(text)
        .lines()
        .position(|l| l.starts_with("id:"))
        .map(|i| (i + 1, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of `cases/`, read from the disk by a walk of its own.
    fn on_disk(dir: &Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            if name.starts_with('.') {
                continue;
            }
            let relative = format!("{prefix}{name}");
            if entry.path().is_dir() {
                on_disk(&entry.path(), &format!("{relative}/"), out);
            } else {
                out.push((relative, std::fs::read(entry.path()).unwrap()));
            }
        }
    }

    #[test]
    fn the_embedded_copy_is_cases_byte_for_byte() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
        let mut disk = Vec::new();
        on_disk(&root, "", &mut disk);
        disk.sort();
        let embedded: Vec<(String, Vec<u8>)> = files()
            .iter()
            .map(|(r, b)| (r.to_string(), b.to_vec()))
            .collect();
        let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&embedded),
            names(&disk),
            "the files differ (a build after the change re-embeds cases/)"
        );
        for ((relative, bytes), (_, want)) in embedded.iter().zip(&disk) {
            assert!(
                bytes == want,
                "{relative}: the embedded bytes differ from cases/{relative}"
            );
        }
        assert!(disk.len() >= 40, "{} files in cases/", disk.len());
    }

    #[test]
    fn the_corpus_loads_with_its_paths_and_ids() {
        let cases = cases().unwrap();
        let yaml = files().iter().filter(|(r, _)| is_case_file(r)).count();
        assert_eq!(cases.len(), yaml);
        let case = cases
            .iter()
            .find(|c| c.id == "highest-protocol")
            .expect("the corpus has highest-protocol");
        assert_eq!(
            case.path,
            Path::new("corpus:cases/protocols/highest-protocol.yaml")
        );
        // A file at the top of cases/ has its stem as id too.
        let top = parse_case(&display_path("top.yaml"), "title: t\ncode: pass\n").unwrap();
        assert_eq!(top.id, "top");
        assert_eq!(
            embedded(&case.path),
            Some(
                &std::fs::read(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("cases/protocols/highest-protocol.yaml")
                )
                .unwrap()[..]
            )
        );
    }

    #[test]
    fn paths_and_corpus_combine() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine.yaml");
        std::fs::write(&mine, "title: mine\ncode: pass\n").unwrap();
        let paths = [mine.clone()];
        let corpus = cases().unwrap().len();
        assert_eq!(load(&paths, false).unwrap().len(), 1);
        assert_eq!(load(&[], true).unwrap().len(), corpus);
        let both = load(&paths, true).unwrap();
        assert_eq!(both.len(), corpus + 1);
        assert_eq!(both.last().unwrap().id, "mine");

        // The corpus's own file given again is the same case, kept once.
        let same = dir.path().join("highest-protocol.yaml");
        std::fs::write(
            &same,
            embedded(Path::new("corpus:cases/protocols/highest-protocol.yaml")).unwrap(),
        )
        .unwrap();
        assert_eq!(load(&[same], true).unwrap().len(), corpus);

        // Another case with a corpus id is an error naming both, at its `id:`.
        let clash = dir.path().join("clash.yaml");
        std::fs::write(&clash, "title: t\nid: highest-protocol\ncode: pass\n").unwrap();
        let e = load(std::slice::from_ref(&clash), true)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("{}:2:1: id `highest-protocol` is also the id of corpus:cases/protocols/highest-protocol.yaml", clash.display())),
            "{e}"
        );
        // Without --corpus there is nothing to clash with.
        assert_eq!(load(&[clash], false).unwrap().len(), 1);
    }
}
