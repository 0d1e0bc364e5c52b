//! Recorded pickles: the folder `crosspickle record` writes and `run` reads (`cases/pickles/`
//! unless `--pickles DIR`), its versioned manifest, and the checks that make it safe to load:
//! every file is named by the SHA-256 of its bytes and named by the manifest, nothing else is
//! in the folder, and the manifest's format is one this crosspickle reads. A recorded pickle
//! is a dump a round trip made on a producer that need not be installed any more: its facts
//! (implementation, version, build, platform) stand for it as an interpreter labelled
//! `recorded:cpython-2.7.18`, which the case's rules select as they select live ones.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::errors::Error;
use crate::python::{Implementation, Interpreter};
use crate::version::PythonVersion;

/// The folder's default place, relative to where crosspickle runs.
pub const DEFAULT_FOLDER: &str = "cases/pickles";
/// The manifest's file name in the folder.
pub const MANIFEST: &str = "manifest.json";
/// What the manifest's `format` says it is.
pub const FORMAT: &str = "crosspickle-pickles";
/// The manifest format this crosspickle writes and the newest it reads.
pub const VERSION: u64 = 1;
/// How a recorded producer's label begins.
pub const PREFIX: &str = "recorded:";

/// What made a recorded pickle: the facts of its interpreter that rules select on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Producer {
    pub implementation: Implementation,
    pub version: PythonVersion,
    /// PyPy's own release (`7.3.11`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation_version: Option<String>,
    pub debug: bool,
    pub free_threaded: bool,
    pub gil_enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_pickle: Option<String>,
    pub c_pickle_used: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pickle_highest_protocol: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pickle_default_protocol: Option<u32>,
    /// `sys.platform`, `platform.machine()`.
    pub platform: Option<String>,
    pub machine: Option<String>,
}

impl Producer {
    pub fn of(i: &Interpreter) -> Self {
        Producer {
            implementation: i.implementation,
            version: i.version.clone(),
            implementation_version: i.implementation_version.clone(),
            debug: i.debug,
            free_threaded: i.free_threaded,
            gil_enabled: i.gil_enabled,
            c_pickle: i.c_pickle.clone(),
            c_pickle_used: i.c_pickle_used,
            pickle_highest_protocol: i.pickle_highest_protocol,
            pickle_default_protocol: i.pickle_default_protocol,
            platform: i.platform.clone(),
            machine: i.machine.clone(),
        }
    }

    /// The interpreter that stands for it in a run: its facts, no executable, labelled
    /// `recorded:` and the label a live one with these facts has on this machine.
    pub fn interpreter(&self) -> Interpreter {
        let mut i = Interpreter {
            label: String::new(),
            version: self.version.clone(),
            implementation: self.implementation,
            implementation_version: self.implementation_version.clone(),
            executable: PathBuf::new(),
            debug: self.debug,
            free_threaded: self.free_threaded,
            gil_enabled: self.gil_enabled,
            c_pickle: self.c_pickle.clone(),
            c_pickle_used: self.c_pickle_used,
            pickle_highest_protocol: self.pickle_highest_protocol,
            pickle_default_protocol: self.pickle_default_protocol,
            platform: self.platform.clone(),
            machine: self.machine.clone(),
            name: None,
            sources: Vec::new(),
            unusable: None,
        };
        i.label = format!("{PREFIX}{}", i.own_label());
        i
    }

    pub fn label(&self) -> String {
        self.interpreter().label
    }
}

/// One recorded pickle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The case's id.
    pub case: String,
    /// Its param combination as runs name it (`protocol=5,pickler=c`; empty without params).
    pub params: String,
    pub producer: Producer,
    /// The producer's packages: its requirements with the params put in (`requires`, then
    /// `dump_requires`), empty where the case asks for none.
    pub packages: Vec<String>,
    /// The pickle protocol its first opcode names (none for protocols 0 and 1, which have no
    /// `PROTO` opcode).
    pub protocol: Option<u32>,
    /// The crosspickle that recorded it.
    pub crosspickle: String,
    /// The SHA-256 of the file's bytes, in hex.
    pub sha256: String,
    /// Its file in the folder: `<sha256>.pickle`.
    pub file: String,
}

impl Entry {
    /// What one recorded pickle is of: case, params, producer label and packages. A folder
    /// holds one entry per key.
    pub fn key(&self) -> (String, String, String, Vec<String>) {
        (
            self.case.clone(),
            self.params.clone(),
            self.producer.label(),
            self.packages.clone(),
        )
    }
}

/// The protocol a pickle's first opcode (`PROTO n`) names.
pub fn protocol_of(bytes: &[u8]) -> Option<u32> {
    match bytes {
        [0x80, n, ..] => Some(u32::from(*n)),
        _ => None,
    }
}

/// The file name of a pickle with these bytes, and its digest.
pub fn file_for(bytes: &[u8]) -> (String, String) {
    let sha = crate::sys::hash::short_hex(bytes, 64);
    (format!("{sha}.pickle"), sha)
}

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    version: u64,
    pickles: Vec<Entry>,
}

/// A folder of recorded pickles whose every file was checked against its manifest.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    pub dir: PathBuf,
    /// In the manifest's order: case, params, producer label, packages.
    pub entries: Vec<Entry>,
}

impl Folder {
    /// The folder at `dir`, every file checked (none when it does not exist, or holds nothing):
    /// a manifest of another or a newer format, a file it does not name, a file whose bytes
    /// are not the digest it names, a path that is not a plain file name of the folder, or a
    /// link, is refused with its name, and no file of the folder is loaded.
    pub fn open(dir: &Path) -> Result<Option<Folder>, Error> {
        let listing = match std::fs::read_dir(dir) {
            Ok(listing) => listing,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("cannot read {}", dir.display()), e)),
        };
        let mut present = BTreeSet::new();
        for item in listing {
            let item = item.map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?;
            present.insert(item.file_name());
        }
        if present.is_empty() {
            return Ok(None);
        }
        let manifest_path = dir.join(MANIFEST);
        if !present.contains(std::ffi::OsStr::new(MANIFEST)) {
            return Err(refused(
                dir,
                format!("a folder of recorded pickles without its {MANIFEST}: record into an empty folder, or name another with --pickles"),
            ));
        }
        plain_file(&manifest_path)?;
        let text = std::fs::read_to_string(&manifest_path)
            .map_err(|e| Error::io(format!("cannot read {}", manifest_path.display()), e))?;
        let entries = parse(&manifest_path, &text)?;
        let mut named = BTreeSet::new();
        named.insert(std::ffi::OsString::from(MANIFEST));
        let mut keys = BTreeSet::new();
        for entry in &entries {
            let path = dir.join(&entry.file);
            let outside = entry.file.is_empty()
                || entry.file.contains(['/', '\\', ':'])
                || entry.file == "."
                || entry.file == ".."
                || Path::new(&entry.file).is_absolute();
            if outside {
                return Err(refused(
                    &manifest_path,
                    format!(
                        "the recorded pickle of {} names the path {:?}, which is not a file of the folder: each is named `<sha256>.pickle` beside the manifest",
                        describe(entry),
                        entry.file
                    ),
                ));
            }
            if entry.file != format!("{}.pickle", entry.sha256) {
                return Err(refused(
                    &manifest_path,
                    format!(
                        "the recorded pickle of {} is named {:?}, not after its digest {}.pickle",
                        describe(entry),
                        entry.file,
                        entry.sha256
                    ),
                ));
            }
            if !keys.insert(entry.key()) {
                return Err(refused(
                    &manifest_path,
                    format!("{} is recorded twice", describe(entry)),
                ));
            }
            plain_file(&path)?;
            let bytes = std::fs::read(&path)
                .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
            let (_, sha) = file_for(&bytes);
            if sha != entry.sha256 {
                return Err(refused(
                    &path,
                    format!(
                        "its SHA-256 is {sha}, not the {} the manifest gives for {}: the file was changed after it was recorded; record it again (crosspickle record --prune) or restore it",
                        entry.sha256,
                        describe(entry)
                    ),
                ));
            }
            named.insert(std::ffi::OsString::from(&entry.file));
        }
        if let Some(foreign) = present.iter().find(|p| !named.contains(*p)) {
            return Err(refused(
                &dir.join(foreign),
                "a file the manifest of recorded pickles does not name, never loaded: remove it (the folder holds only what `crosspickle record` writes)".to_string(),
            ));
        }
        Ok(Some(Folder {
            dir: dir.to_path_buf(),
            entries,
        }))
    }

    /// The path of an entry's file.
    pub fn path(&self, entry: &Entry) -> PathBuf {
        self.dir.join(&entry.file)
    }

    /// The manifest's text: the entries sorted by case, params, producer and packages, so that
    /// the same entries always give the same bytes.
    pub fn manifest_text(&mut self) -> String {
        self.entries.sort_by_cached_key(|e| e.key());
        let manifest = Manifest {
            format: FORMAT.to_string(),
            version: VERSION,
            pickles: self.entries.clone(),
        };
        serde_json::to_string_pretty(&manifest).expect("the manifest serialises") + "\n"
    }
}

/// The entries of a manifest's text, its format and version checked first.
fn parse(path: &Path, text: &str) -> Result<Vec<Entry>, Error> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        refused(
            path,
            format!(
                "not a manifest of recorded pickles: {e} (line {}, column {})",
                e.line(),
                e.column()
            ),
        )
    })?;
    let format = value.get("format").and_then(|f| f.as_str());
    if format != Some(FORMAT) {
        return Err(refused(
            path,
            format!(
                "its `format` is {}, not \"{FORMAT}\": not a manifest of recorded pickles",
                value
                    .get("format")
                    .map(|f| f.to_string())
                    .unwrap_or_else(|| "missing".into())
            ),
        ));
    }
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v > VERSION => {
            return Err(refused(
                path,
                format!("manifest format version {v} is newer than this crosspickle reads ({VERSION}): use the crosspickle that recorded it, or a newer one"),
            ))
        }
        Some(v) if v >= 1 => {}
        other => {
            return Err(refused(
                path,
                format!(
                    "its `version` is {}, not a format version (1 to {VERSION})",
                    other.map(|v| v.to_string()).unwrap_or_else(|| "missing".into())
                ),
            ))
        }
    }
    let manifest: Manifest = serde_json::from_str(text).map_err(|e| {
        refused(
            path,
            format!("{e} (line {}, column {})", e.line(), e.column()),
        )
    })?;
    Ok(manifest.pickles)
}

/// A plain file, not a link (which could name a file outside the folder), nor a folder.
fn plain_file(path: &Path) -> Result<(), Error> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| {
        refused(
            path,
            format!("named by the manifest, but cannot be read: {e}"),
        )
    })?;
    if !meta.file_type().is_file() {
        return Err(refused(
            path,
            "not a plain file (a link or a folder): a recorded pickle is a file of the folder itself".into(),
        ));
    }
    Ok(())
}

fn refused(path: &Path, message: String) -> Error {
    Error::Config {
        path: path.to_path_buf(),
        message: format!("refused: {message}"),
    }
}

/// `case[params] by recorded:cpython-3.12.1`.
pub fn describe(entry: &Entry) -> String {
    let params = if entry.params.is_empty() {
        String::new()
    } else {
        format!("[{}]", entry.params)
    };
    format!("{}{params} by {}", entry.case, entry.producer.label())
}

/// The recorded pickles `folder` holds for the producers it names: for each producer label,
/// its interpreter and its entries by (case, params, packages).
pub type ByProducer = BTreeMap<String, (Interpreter, Vec<Entry>)>;

impl Folder {
    pub fn by_producer(&self) -> ByProducer {
        let mut out: ByProducer = BTreeMap::new();
        for entry in &self.entries {
            let label = entry.producer.label();
            out.entry(label)
                .or_insert_with(|| (entry.producer.interpreter(), Vec::new()))
                .1
                .push(entry.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn producer() -> Producer {
        Producer::of(&Interpreter::for_tests(Implementation::Cpython, "2.7.18"))
    }

    fn entry(bytes: &[u8]) -> Entry {
        let (file, sha256) = file_for(bytes);
        Entry {
            case: "c".into(),
            params: "protocol=2".into(),
            producer: producer(),
            packages: vec![],
            protocol: protocol_of(bytes),
            crosspickle: "0".into(),
            sha256,
            file,
        }
    }

    fn folder_with(entries: Vec<(Entry, &[u8])>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut folder = Folder {
            dir: dir.path().into(),
            entries: entries.iter().map(|(e, _)| e.clone()).collect(),
        };
        for (e, bytes) in &entries {
            std::fs::write(dir.path().join(&e.file), bytes).unwrap();
        }
        std::fs::write(dir.path().join(MANIFEST), folder.manifest_text()).unwrap();
        dir
    }

    #[test]
    fn the_protocol_is_the_first_opcode_s() {
        assert_eq!(protocol_of(b"\x80\x05K\x01."), Some(5));
        assert_eq!(protocol_of(b"I1\n."), None);
        assert_eq!(protocol_of(b""), None);
    }

    #[test]
    fn a_folder_reads_back_what_was_written() {
        let bytes: &[u8] = b"\x80\x02K\x01.";
        let dir = folder_with(vec![(entry(bytes), bytes)]);
        let folder = Folder::open(dir.path()).unwrap().unwrap();
        assert_eq!(folder.entries, vec![entry(bytes)]);
        assert_eq!(
            folder.entries[0].producer.label(),
            "recorded:cpython-2.7.18"
        );
        assert!(Folder::open(&dir.path().join("none")).unwrap().is_none());
    }

    #[test]
    fn each_kind_of_bad_folder_is_refused_by_name() {
        let bytes: &[u8] = b"\x80\x02K\x01.";
        let refusal = |dir: &tempfile::TempDir| Folder::open(dir.path()).unwrap_err().to_string();

        let dir = folder_with(vec![(entry(bytes), bytes)]);
        std::fs::write(dir.path().join(&entry(bytes).file), b"\x80\x02K\x02.").unwrap();
        let e = refusal(&dir);
        assert!(
            e.contains(&entry(bytes).file) && e.contains("SHA-256"),
            "{e}"
        );

        let dir = folder_with(vec![(entry(bytes), bytes)]);
        std::fs::write(dir.path().join("extra.pickle"), b"x").unwrap();
        let e = refusal(&dir);
        assert!(
            e.contains("extra.pickle") && e.contains("does not name"),
            "{e}"
        );

        let dir = folder_with(vec![(entry(bytes), bytes)]);
        let text = std::fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
        std::fs::write(
            dir.path().join(MANIFEST),
            text.replace("\"version\": 1", "\"version\": 2"),
        )
        .unwrap();
        let e = refusal(&dir);
        assert!(
            e.contains(MANIFEST) && e.contains("version 2 is newer"),
            "{e}"
        );

        let mut outside = entry(bytes);
        outside.file = "../x.pickle".into();
        let dir = folder_with(vec![(entry(bytes), bytes)]);
        let mut folder = Folder {
            dir: dir.path().into(),
            entries: vec![outside],
        };
        std::fs::write(dir.path().join(MANIFEST), folder.manifest_text()).unwrap();
        let e = refusal(&dir);
        assert!(
            e.contains("\"../x.pickle\"") && e.contains("not a file of the folder"),
            "{e}"
        );
    }
}
