//! The embedded driver (the parts of `driver/`, joined) and how a Python process is started on
//! it: the `-c`
//! program every run's interpreter starts with ([`Workspace::boot`], which loads the driver
//! compiled once per interpreter), the one-line [`Request`] that tells it what to run, the
//! folders of a run, and the reading of the result record into an [`Observed`] outcome.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::marshal::Value;
use crate::case::{python_unicode_literal, OutcomeKind, Params, Phase};
use crate::outcome::{ClassRelation, NamedCheck, Observed};
use crate::sys::fs as sysfs;
use crate::sys::process::{Exit, Finished};

/// The driver's parts, each named once: [`DRIVER_SOURCE`], [`DRIVER_PARTS`] and their texts.
macro_rules! driver_parts {
    ($($name:literal),* $(,)?) => {
        /// The driver: the files of `driver/` joined in the order of their names, one module
        /// (its protocol, what each part owns and in what order: `driver/0_protocol.py`). A
        /// part added there is added here too (a unit test checks the two agree).
        pub const DRIVER_SOURCE: &str = concat!($(include_str!(concat!("driver/", $name))),*);
        /// The names of the driver's parts, in the order [`DRIVER_SOURCE`] joins them.
        pub const DRIVER_PARTS: [&str; [$($name),*].len()] = [$($name),*];
        /// The text of each of [`DRIVER_PARTS`], in that order.
        const PART_SOURCES: [&str; [$($name),*].len()] =
            [$(include_str!(concat!("driver/", $name))),*];
    };
}

driver_parts!(
    "0_protocol.py",
    "1_serve.py",
    "2_ending.py",
    "3_run.py",
    "4_record.py",
    "5_traceback.py",
    "6_relation.py",
    "7_checks.py",
    "7_one_check.py",
    "8_compile.py",
    "8_server.py",
    "9_start.py",
);
/// The parts a run loads only when it needs them, by the name the driver's `_need` knows them
/// by (driver/0_protocol.py): the quiet ending of forked runs and the fork server's loop (a fork
/// server's), what was raised and its traceback (a run that raised), class relations (one that
/// raised and names classes), named checks (a run that uses `check`) and the compile child (a
/// run whose code has no compiled form yet): what an exec'd run that passes neither unmarshals
/// nor runs (driver/0_protocol.py says how much).
const LAZY_PARTS: [(&str, &str); 6] = [
    ("2_ending.py", "ending"),
    ("5_traceback.py", "traceback"),
    ("6_relation.py", "relation"),
    ("7_one_check.py", "check"),
    ("8_compile.py", "compile"),
    ("8_server.py", "server"),
];

/// [`LAZY_PARTS`] as the boot fallback's literal: `(name, first line, end)` each, lines of
/// [`DRIVER_SOURCE`] counted from 0.
fn lazy_literal() -> String {
    let mut line = 0;
    let mut found = Vec::new();
    for (file, text) in DRIVER_PARTS.iter().zip(PART_SOURCES) {
        let lines = text.matches('\n').count();
        if let Some((_, name)) = LAZY_PARTS.iter().find(|(f, _)| f == file) {
            found.push(format!("('{name}', {line}, {})", line + lines));
        }
        line += lines;
    }
    format!("[{}]", found.join(", "))
}
/// The `-c` program: loads the driver, compiled once per interpreter and kept marshalled
/// behind the interpreter's `sys.version` and the file's name (compiling it from source costs
/// a few milliseconds a run), and runs it. It is short because every process compiles it.
const BOOT_TEMPLATE: &str = include_str!("boot.py");
/// What the boot program runs, from a file beside the driver's source that it names, when the
/// driver's compiled form is missing or not this interpreter's: a child of its own compiles
/// it, so that this process too starts from the loaded form, as every other process does.
const BOOT_FALLBACK: &str = include_str!("boot_fallback.py");

/// The driver on disk, its compiled forms, and a folder for each run's files.
pub struct Workspace {
    root: tempfile::TempDir,
    /// Where the driver's source and its compiled forms are kept: a folder of the cache
    /// folder named by the driver's digest (kept from one crosspickle to the next), else the
    /// workspace's `code`.
    drivers: PathBuf,
    /// The runs' private files: result records and output FIFOs. In memory (`/dev/shm`) where
    /// there is such a folder: on a disk, making a FIFO costs more than the rest of what
    /// crosspickle does for a forked run.
    private: tempfile::TempDir,
    /// The driver's source, in `drivers`.
    driver: PathBuf,
    /// A copy of the driver's source in the workspace, which no `cache clean` reaches: what a
    /// boot that finds no compiled form compiles (a cache folder emptied between the check
    /// before a run and its boot leaves the run its driver).
    own_source: PathBuf,
    runs: std::sync::atomic::AtomicU64,
    spare: Spare,
    /// The lease on the cache folder ([`LEASE`]) while the workspace lives.
    _lease: Option<crate::sys::lock::Lock>,
}

/// The lease file of a cache folder: every crosspickle that runs cases holds it shared while
/// it may read the cache (the driver, compiled forms, environments); `cache clean` and `cache
/// prune` spare what a run needs while anyone holds it.
pub const LEASE: &str = "in-use.lock";

/// The places of one run: its working directory (where its code is written) and files in the
/// workspace's private folder, which the case is not told about: its result file and output
/// FIFOs. The private files are removed when this is dropped; the working directory too,
/// unless it holds nothing but the code's file, in which case it is kept, empty but for that
/// file, for a later run (making and removing a folder and a file is, on some disks, most of
/// what crosspickle spends on a run itself).
pub struct RunDirs {
    cwd: Option<tempfile::TempDir>,
    /// Its mode when it was made.
    cwd_mode: u32,
    /// The one file in it: the code's, once written, or the one an earlier run left when it
    /// is a folder kept for later runs.
    left: std::sync::Mutex<Option<PathBuf>>,
    stem: PathBuf,
    made: std::sync::Mutex<Vec<PathBuf>>,
    spare: Spare,
}

/// Working directories kept for later runs, with their modes when they were made and the one
/// file each holds.
type Spare = std::sync::Arc<std::sync::Mutex<Vec<(tempfile::TempDir, u32, PathBuf)>>>;

impl RunDirs {
    /// The run's working directory.
    pub fn cwd(&self) -> &Path {
        self.cwd.as_ref().expect("until dropped").path()
    }

    /// Write the code to run into file `name` of the working directory, the only file there.
    pub fn write_code(&self, name: &str, code: &str) -> std::io::Result<PathBuf> {
        use std::io::{Seek, Write};
        let path = self.cwd().join(name);
        // The file there (found as the folder was kept: it is not read again).
        let mut left = self.left.lock().unwrap();
        if let Some(old) = left.take().filter(|old| *old != path) {
            std::fs::rename(old, &path)?;
        }
        *left = Some(path.clone());
        // Rewritten in place: no file made, no block freed when the code fits where it was.
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(false);
        sysfs::create_with_mode(&mut options, 0o644);
        let mut file = options.open(&path)?;
        file.seek(std::io::SeekFrom::Start(0))?;
        file.write_all(code.as_bytes())?;
        file.set_len(code.len() as u64)?;
        Ok(path)
    }

    /// Where the driver writes its result record.
    pub fn result_file(&self) -> PathBuf {
        self.private_file("result")
    }

    /// A private file of this run, named `name` (removed with the run).
    pub fn private_file(&self, name: &str) -> PathBuf {
        let mut path = self.stem.clone().into_os_string();
        path.push(format!("-{name}"));
        let path = PathBuf::from(path);
        let mut made = self.made.lock().unwrap();
        if !made.contains(&path) {
            made.push(path.clone());
        }
        path
    }
}

/// The permission bits of `path`.
fn mode_of(path: &Path) -> std::io::Result<u32> {
    Ok(sysfs::mode(&std::fs::symlink_metadata(path)?))
}

/// A working directory a run left as it was given: a folder with the mode it was made with,
/// holding one regular file that its owner can write, with no other name. That file, if so.
fn reusable(dir: &Path, mode: u32) -> Option<PathBuf> {
    let owned = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && sysfs::mode(&m) == mode);
    let mut entries = std::fs::read_dir(dir).ok()?;
    let file = entries.next()?.ok()?.path();
    let one_file = std::fs::symlink_metadata(&file)
        .is_ok_and(|m| m.is_file() && sysfs::link_count(&m) == 1 && sysfs::mode(&m) & 0o200 != 0);
    (owned && one_file && entries.next().is_none()).then_some(file)
}

impl Drop for RunDirs {
    fn drop(&mut self) {
        for path in self.made.lock().unwrap().drain(..) {
            let _ = std::fs::remove_file(path);
        }
        if let Some(cwd) = self.cwd.take() {
            if let Some(file) = reusable(cwd.path(), self.cwd_mode) {
                self.spare.lock().unwrap().push((cwd, self.cwd_mode, file));
            }
        }
    }
}

impl Workspace {
    /// A new workspace; the driver's compiled forms are kept in `cache_dir` when there is one
    /// that can be written.
    pub fn new(cache_dir: Option<&Path>) -> std::io::Result<Self> {
        let root = tempfile::Builder::new().prefix("crosspickle-").tempdir()?;
        for dir in ["dumps", "servers"] {
            std::fs::create_dir(root.path().join(dir))?;
        }
        // Taken before the driver is written: a `cache clean` under way is waited for.
        let lease = cache_dir
            .filter(|dir| std::fs::create_dir_all(dir).is_ok())
            .and_then(|dir| crate::sys::lock::share_blocking(&dir.join(LEASE)).ok());
        let code = root.path().join("code");
        std::fs::create_dir(&code)?;
        let own_source = code.join("crosspickle_driver.py");
        std::fs::write(&own_source, DRIVER_SOURCE)?;
        let (drivers, driver) = match cache_dir.and_then(|dir| kept_driver(dir).ok()) {
            Some(kept) => kept,
            None => (code, own_source.clone()),
        };
        let private = tempfile::Builder::new()
            .prefix("crosspickle-")
            .tempdir_in("/dev/shm")
            .or_else(|_| tempfile::Builder::new().tempdir_in(root.path()))?;
        Ok(Workspace {
            root,
            drivers,
            private,
            driver,
            own_source,
            runs: 0.into(),
            spare: Default::default(),
            _lease: lease,
        })
    }

    /// Write the driver's source again if it is gone (a cache removed by hand, or cleaned by a
    /// crosspickle that knows no lease): the next boot compiles it from there.
    fn keep_driver(&self) -> std::io::Result<()> {
        if self.driver.is_file() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.drivers)?;
        crate::sys::fs::write_atomic(&self.driver, DRIVER_SOURCE.as_bytes())
    }

    /// The places of a new run: a working directory that is new, or that an earlier run left
    /// as it was given (see [`RunDirs`]).
    pub fn run_dirs(&self) -> std::io::Result<RunDirs> {
        self.keep_driver()?;
        let n = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let spare = self.spare.lock().unwrap().pop();
        let (cwd, cwd_mode, left) = match spare {
            Some((cwd, mode, file)) => (cwd, mode, Some(file)),
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("run-")
                    .tempdir_in(self.root.path())?;
                let mode = mode_of(dir.path())?;
                (dir, mode, None)
            }
        };
        Ok(RunDirs {
            cwd: Some(cwd),
            cwd_mode,
            left: left.into(),
            stem: self.private.path().join(n.to_string()),
            made: Default::default(),
            spare: self.spare.clone(),
        })
    }

    /// Where an interpreter started as `start_digest` names it (its program, arguments and
    /// environment) keeps its compiled form of `code` (see the driver's `_compile`): with the
    /// driver's, kept from one crosspickle to the next when there is a cache folder.
    pub fn code_cache(&self, start_digest: &str, code: &str) -> PathBuf {
        let mut bytes = start_digest.as_bytes().to_vec();
        bytes.push(0);
        bytes.extend_from_slice(code.as_bytes());
        let name = crate::sys::hash::short_hex(&bytes, 24);
        self.drivers.join(format!("{name}.case"))
    }

    /// The folder of bounce number `n` (docs/case-format.md, "The bounce"): its relay's code
    /// (in a folder named `run-…`, as a run's code is, so that reports name the case file's
    /// lines for its lines) and the relayed pickle its reload reads. Made by its caller.
    pub fn bounce_dir(&self, n: usize) -> PathBuf {
        self.root.path().join("bounces").join(format!("run-{n}"))
    }

    /// Where the pickle of dump number `n` is kept for the loads that read it.
    pub fn dump_file(&self, n: usize) -> PathBuf {
        self.root.path().join("dumps").join(format!("{n}.pickle"))
    }

    /// The working directory of fork servers (their children change to their own).
    pub fn servers_dir(&self) -> PathBuf {
        self.root.path().join("servers")
    }

    /// The arguments every Python process of a run starts with, for `program`: its boot
    /// program, compiled (`PYC FALLBACK`) once the first process of this interpreter binary
    /// has written it, else as text (`-c BOOT FALLBACK`). The driver's code object is cached
    /// per program, behind the `sys.version` of the interpreter that made it (a code object
    /// is only good for that interpreter).
    pub fn boot(&self, program: &Path) -> std::io::Result<Vec<OsString>> {
        self.boot_compiling(program, &self.own_source, true)
    }

    /// The same boot program as every crosspickle with this cache folder writes it (its
    /// fallback naming the kept driver's source, not this workspace's copy, and always as
    /// text): what names the compiled forms of cases, which are kept from one crosspickle to
    /// the next.
    pub fn boot_as_kept(&self, program: &Path) -> std::io::Result<Vec<OsString>> {
        self.boot_compiling(program, &self.driver, false)
    }

    /// The boot program that compiles `source` when it finds no compiled form: its fallback
    /// is a file beside `source`, written here, which the boot program is given as its
    /// argument (every process compiles the boot program's text, and the fallback as a string
    /// literal in it was a tenth of a trivial exec'd run's instructions over `python -c pass`
    /// on 3.12). The fallback also compiles the boot program into a .pyc named by the
    /// interpreter's binary ([`binary_stamp`]); `compiled`: run that .pyc where it is there
    /// (parsing and compiling the text was 2.1 M instructions of a run's 49 M on 3.12).
    fn boot_compiling(
        &self,
        program: &Path,
        source: &Path,
        compiled: bool,
    ) -> std::io::Result<Vec<OsString>> {
        let key = crate::sys::hash::short_hex(program.as_os_str().as_encoded_bytes(), 16);
        let name = format!("{key}.bin");
        let cache = python_path_literal(&self.drivers.join(&name))?;
        let boot = BOOT_TEMPLATE
            .replace("@CACHE@", &cache)
            .replace("@NAME@", &name);
        let boot_source = self.drivers.join(format!("{key}-boot.py"));
        write_if_changed(&boot_source, &boot)?;
        let pyc =
            binary_stamp(program).map(|stamp| self.drivers.join(format!("{key}-{stamp}.pyc")));
        let fallback = BOOT_FALLBACK
            .replace("@CACHE@", &cache)
            .replace("@SOURCE@", &python_path_literal(source)?)
            .replace("@BOOT_SOURCE@", &python_path_literal(&boot_source)?)
            .replace("@LAZY@", &lazy_literal())
            .replace(
                "@BOOT_PYC@",
                &match &pyc {
                    Some(pyc) => python_path_literal(pyc)?,
                    None => "None".to_string(),
                },
            );
        let dir = source.parent().unwrap_or(Path::new("."));
        let fallback_file = dir.join(format!("{key}-fallback.py"));
        write_if_changed(&fallback_file, &fallback)?;
        let mut args: Vec<OsString> = match pyc.filter(|p| compiled && p.is_file()) {
            Some(pyc) => vec![pyc.into()],
            None => vec!["-c".into(), boot.into()],
        };
        args.push(fallback_file.into());
        Ok(args)
    }
}

/// Write `text` to `path` unless it holds it already.
fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read(path).ok().as_deref() != Some(text.as_bytes()) {
        crate::sys::fs::write_atomic(path, text.as_bytes())?;
    }
    Ok(())
}

/// What tells one interpreter binary from another at the same path: the size and the time of
/// the last change of the file `program` leads to. A .pyc of the boot program is named by it,
/// so that an interpreter replaced in place (another version, another magic number) never
/// starts the one its predecessor wrote. None when it cannot be read.
fn binary_stamp(program: &Path) -> Option<String> {
    let meta = std::fs::metadata(program).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!("{}-{}", meta.len(), modified.as_nanos()))
}

/// The cache folder's folder of drivers and their compiled forms, one folder per driver.
pub const DRIVERS_DIR: &str = "drivers";

/// The folder of the cache that keeps this driver's source and compiled forms, and the
/// source's path, written there if it is not there yet.
fn kept_driver(cache_dir: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    let dir = driver_dir(cache_dir);
    std::fs::create_dir_all(&dir)?;
    let driver = dir.join("crosspickle_driver.py");
    write_if_changed(&driver, DRIVER_SOURCE)?;
    Ok((dir, driver))
}

/// What names this driver's folder of the cache: the digest of what it runs.
fn driver_digest() -> String {
    // The boot program is in it too: it runs the case's code between the driver's halves.
    let mut all = DRIVER_SOURCE.as_bytes().to_vec();
    all.extend_from_slice(BOOT_FALLBACK.as_bytes());
    all.extend_from_slice(BOOT_TEMPLATE.as_bytes());
    crate::sys::hash::short_hex(&all, 16)
}

/// This driver's folder of `cache_dir`.
fn driver_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join(DRIVERS_DIR).join(driver_digest())
}

/// The folders of `cache_dir`'s `drivers/` that other drivers than this one (other versions of
/// crosspickle) keep their compiled forms in.
pub fn other_drivers(cache_dir: &Path) -> Vec<PathBuf> {
    let ours = driver_digest();
    let Ok(entries) = std::fs::read_dir(cache_dir.join(DRIVERS_DIR)) else {
        return Vec::new();
    };
    let mut others: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name() != ours.as_str() && e.path().is_dir())
        .map(|e| e.path())
        .collect();
    others.sort();
    others
}

/// Remove the compiled forms (of the driver and of cases) that this driver keeps in
/// `cache_dir` and no process has read since `before`: the number removed and their bytes.
/// A file's last read is its access time, which most mounts (`relatime`) bring up to date at
/// least once a day; where none does (`noatime`), a form goes when it is that old, and is
/// compiled again by the next run that needs it.
pub fn prune_forms(cache_dir: &Path, before: std::time::SystemTime) -> (usize, u64) {
    let (mut removed, mut bytes) = (0, 0);
    for entry in std::fs::read_dir(driver_dir(cache_dir))
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path();
        let form = path.extension().is_some_and(|e| e == "case" || e == "bin");
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let used = [meta.accessed(), meta.modified()]
            .into_iter()
            .flatten()
            .max();
        let unread = form && meta.is_file() && used.is_some_and(|t| t < before);
        if unread && std::fs::remove_file(&path).is_ok() {
            removed += 1;
            bytes += meta.len();
        }
    }
    (removed, bytes)
}

/// What the driver is asked to run: one line, a dict of named inputs, marshalled and written in
/// hex ([`super::marshal`]; the driver ignores names it does not know, so inputs can be added;
/// the names and the requests that carry it are the driver's protocol, stated in
/// `driver/0_protocol.py`).
#[derive(Debug, Clone)]
pub struct Request {
    fields: Vec<(&'static str, Value)>,
}

impl Request {
    /// Run the code in `case` with `params` as globals, the result going to `result`.
    pub fn new(case: &Path, result: &Path, params: &Params) -> std::io::Result<Self> {
        let request = Request { fields: Vec::new() };
        let params = params
            .0
            .iter()
            .map(|(k, v)| (k.clone(), Value::Param(v.clone())))
            .collect();
        Ok(request
            .path("case", case)?
            .path("result", result)?
            .value("params", Value::Dict(params)))
    }

    /// Add a path, or replace the one of that name (which must be UTF-8: the driver reads it
    /// as text).
    pub fn path(self, name: &'static str, path: &Path) -> std::io::Result<Self> {
        Ok(self.text(name, utf8_path(path)?))
    }

    /// Add a string.
    pub fn text(self, name: &'static str, text: &str) -> Self {
        self.value(name, Value::Text(text.to_string()))
    }

    fn value(mut self, name: &'static str, value: Value) -> Self {
        self.fields.retain(|(n, _)| *n != name);
        self.fields.push((name, value));
        self
    }

    /// The request's line (without its end): the dict, marshalled, in hex.
    pub fn to_wire(&self) -> String {
        let dict = Value::Dict(
            self.fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        );
        crate::sys::hash::hex(&super::marshal::dumps(&dict))
    }
}

/// `path` as text, or why crosspickle cannot give it to the driver.
fn utf8_path(path: &Path) -> std::io::Result<&str> {
    path.to_str().ok_or_else(|| {
        std::io::Error::other(format!(
            "the path {} is not UTF-8: crosspickle's temporary folder must be",
            path.display()
        ))
    })
}

fn python_path_literal(path: &Path) -> std::io::Result<String> {
    utf8_path(path).map(python_unicode_literal)
}

/// What the driver wrote, if it got that far.
#[derive(Debug, Default, PartialEq)]
pub struct DriverReport {
    pub outcome: Option<String>,
    pub exception: Option<String>,
    pub message: Option<String>,
    pub traceback: Option<String>,
    /// `name relation` lines: how the raised class stands to each class name asked about.
    /// (The named checks, `check` fields, are read whether or not the record is whole:
    /// [`written_checks`].)
    pub classes: Option<String>,
}

/// The fields of the driver's record (`name length\n<bytes>\n` each) as far as they are
/// whole, and whether it ended with its `end` field.
fn fields(bytes: &[u8]) -> (Vec<(&str, &[u8])>, bool) {
    let Some(rest) = bytes.strip_prefix(b"crosspickle-result 1\n") else {
        return (Vec::new(), false);
    };
    fields_of(rest)
}

/// The fields of `rest`, up to an `end` field (then true) or what is not a whole field.
fn fields_of(mut rest: &[u8]) -> (Vec<(&str, &[u8])>, bool) {
    let mut found = Vec::new();
    while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
        let Some((name, len)) = std::str::from_utf8(&rest[..nl])
            .ok()
            .and_then(|h| h.split_once(' '))
        else {
            break;
        };
        let Ok(len) = len.parse::<usize>() else { break };
        let start = nl + 1;
        // The file is in the case's reach: a forged length must not overflow.
        let Some(end) = start.checked_add(len) else {
            break;
        };
        let Some(value) = rest.get(start..end) else {
            break;
        };
        if name == "end" {
            return (found, true);
        }
        found.push((name, value));
        let Some(next) = end.checked_add(1).and_then(|after| rest.get(after..)) else {
            break;
        };
        rest = next;
    }
    (found, false)
}

/// Parse the driver's record; `None` if it is missing or cut short (no `end` field).
pub fn parse_report(bytes: &[u8]) -> Option<DriverReport> {
    let (fields, complete) = fields(bytes);
    if !complete {
        return None;
    }
    let mut report = DriverReport::default();
    for (name, value) in fields {
        let value = String::from_utf8_lossy(value).into_owned();
        match name {
            "outcome" => report.outcome = Some(value),
            "exception" => report.exception = Some(value),
            "message" => report.message = Some(value),
            "traceback" => report.traceback = Some(value),
            "classes" => report.classes = Some(value),
            _ => {}
        }
    }
    report.outcome.is_some().then_some(report)
}

/// A `check` field's record (read as bytes: its lengths count the bytes the driver wrote): its
/// name, outcome, and what it raised (`None` without a name or
/// a known outcome).
fn named_check(bytes: &[u8]) -> Option<NamedCheck> {
    let (fields, _) = fields_of(bytes);
    let mut name = None;
    let mut observed = Observed::new(OutcomeKind::Pass, 0.0);
    let mut outcome = None;
    for (key, value) in fields {
        let value = String::from_utf8_lossy(value).into_owned();
        match key {
            "name" => name = Some(value),
            "outcome" => outcome = OutcomeKind::from_name(&value),
            "exception" => observed.exception = Some(value),
            "message" => observed.message = Some(value),
            "traceback" => observed.traceback = Some(value),
            "classes" => observed.classes = classes(Some(&value)),
            // Made by the relay of a bounce, in the load's process (else by the run's code).
            "leg" if value == "relay" => observed.phase = Some(Phase::Relay),
            _ => {}
        }
    }
    observed.outcome = outcome.filter(|o| {
        matches!(
            o,
            OutcomeKind::Pass | OutcomeKind::Fail | OutcomeKind::Error | OutcomeKind::Skip
        )
    })?;
    Some(NamedCheck {
        name: name?,
        observed,
    })
}

/// The pid a run's process wrote first in its result file, once the file was open: how to
/// find a forked run whose server was lost before it said it had forked it.
pub fn report_pid(bytes: &[u8]) -> Option<u32> {
    let (fields, _) = fields(bytes);
    fields
        .into_iter()
        .find(|(name, _)| *name == "pid")
        .and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse().ok())
}

/// Read the report at `result_file` and decide the outcome of a finished process.
pub fn observe(
    finished: &Finished,
    result_file: &Path,
    timeout_s: f64,
    phase: Option<Phase>,
) -> Observed {
    let bytes = std::fs::read(result_file).ok();
    let report = bytes.as_deref().and_then(parse_report);
    // A load whose relay started (the bounce): what the process then did is the relay's.
    let relayed = bytes.as_deref().is_some_and(|b| {
        fields(b)
            .0
            .iter()
            .any(|(name, value)| *name == "leg" && *value == b"relay")
    });
    // Each named check is written as it ends: those that ended are kept however the run
    // ended (a crash, a signal, its time limit).
    let checks = bytes
        .as_deref()
        .map(|b| written_checks(b, phase))
        .unwrap_or_default();
    let phase = match phase {
        Some(Phase::Load) if relayed => Some(Phase::Relay),
        phase => phase,
    };
    let mut observed = Observed {
        stdout: finished.stdout.text(),
        stderr: finished.stderr.text(),
        phase,
        checks,
        ..Observed::new(OutcomeKind::Crash, finished.duration.as_secs_f64())
    };
    match finished.exit {
        Exit::TimedOut | Exit::Cancelled => {
            observed.outcome = OutcomeKind::Timeout;
            observed.message = Some(format!(
                "still running after {timeout_s}s: killed with every process it started"
            ));
        }
        Exit::Signal(sig) => {
            // Killed by a signal, even after reporting (a crash at shutdown is still a crash).
            let name = crate::sys::signal::name(sig);
            observed.message = Some(
                fatal_error_line(&observed.stderr).unwrap_or_else(|| format!("killed by {name}")),
            );
            observed.signal = Some(name);
            if let Some(r) = report {
                keep_raised(&mut observed, r);
            }
        }
        Exit::Code(code) => {
            observed.exit_code = Some(code);
            match report {
                Some(mut r) if code == 0 => {
                    observed.outcome = match r.outcome.as_deref() {
                        Some("pass") => OutcomeKind::Pass,
                        Some("fail") => OutcomeKind::Fail,
                        _ => OutcomeKind::Error,
                    };
                    observed.message = r.message.take();
                    keep_raised(&mut observed, r);
                }
                // The driver ends with status 0 whatever the code did (it catches what the
                // code raises, SystemExit included): another status after a report was set
                // after the code ended, by an atexit handler's os._exit() or a flush that
                // failed at shutdown (120), and the run did not end as an interpreter ends. A
                // crash at shutdown, as for a signal.
                report => {
                    observed.message = Some(match (fatal_error_line(&observed.stderr), &report) {
                        (Some(line), _) => format!("{line} (exit status {code})"),
                        (None, Some(_)) => format!(
                            "the process ended with status {code} after its code had run (in an \
                             atexit handler or at shutdown)"
                        ),
                        (None, None) => {
                            format!("the process ended without reporting (exit status {code})")
                        }
                    });
                    if let Some(r) = report {
                        keep_raised(&mut observed, r);
                    }
                }
            }
        }
    }
    observed
}

/// The named checks a run's record holds, whole or cut short, in the order they ended: each
/// with the phase that made it (`phase`, or the relay's for those after a load's relay
/// started).
fn written_checks(bytes: &[u8], phase: Option<Phase>) -> Vec<NamedCheck> {
    let mut leg = phase;
    let mut checks = Vec::new();
    for (name, value) in fields(bytes).0 {
        match name {
            "leg" if value == b"relay" => leg = Some(Phase::Relay),
            "check" => checks.extend(named_check(value).map(|mut check| {
                check.observed.phase = leg;
                check
            })),
            _ => {}
        }
    }
    checks
}

/// What the report says the code raised: its exception, traceback and class relations.
fn keep_raised(observed: &mut Observed, r: DriverReport) {
    observed.classes = classes(r.classes.as_deref());
    observed.exception = r.exception;
    observed.traceback = r.traceback;
}

/// The driver's `classes` field: a `name relation` line per class name it resolved.
fn classes(field: Option<&str>) -> BTreeMap<String, ClassRelation> {
    field
        .unwrap_or("")
        .lines()
        .filter_map(|line| {
            let (name, word) = line.split_once(' ')?;
            Some((name.to_string(), ClassRelation::parse(word)?))
        })
        .collect()
}

/// `Fatal Python error: Segmentation fault`, as faulthandler or the interpreter prints it.
fn fatal_error_line(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .find(|l| l.starts_with("Fatal Python error"))
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_is_every_part_of_its_folder_in_order() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run/driver");
        let mut found: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".py"))
            .collect();
        found.sort();
        assert_eq!(
            found, DRIVER_PARTS,
            "the parts of {dir:?} and DRIVER_PARTS differ"
        );
        let joined: String = DRIVER_PARTS
            .iter()
            .map(|part| std::fs::read_to_string(dir.join(part)).unwrap())
            .collect();
        assert_eq!(
            joined, DRIVER_SOURCE,
            "DRIVER_SOURCE joins other files than DRIVER_PARTS"
        );
        assert!(DRIVER_SOURCE.ends_with("_request = _serve()\n"));
        assert_eq!(PART_SOURCES.concat(), DRIVER_SOURCE);
    }

    #[test]
    fn the_lazy_parts_are_named_by_their_lines() {
        // Each part ends with a line's end, so that the lines of one are its own.
        assert!(PART_SOURCES.iter().all(|p| p.ends_with('\n')));
        let lines: Vec<&str> = DRIVER_SOURCE.split('\n').collect();
        let literal = lazy_literal();
        for (file, name) in LAZY_PARTS {
            let at = DRIVER_PARTS.iter().position(|f| *f == file).unwrap();
            let text = PART_SOURCES[at];
            let start = literal.find(&format!("('{name}', ")).unwrap();
            let numbers: Vec<usize> = literal[start..]
                .split(')')
                .next()
                .unwrap()
                .split(", ")
                .skip(1)
                .map(|n| n.parse().unwrap())
                .collect();
            assert_eq!(
                lines[numbers[0]..numbers[1]].join("\n") + "\n",
                text,
                "{file}"
            );
        }
    }

    #[test]
    fn a_request_is_one_line_of_marshal_in_hex() {
        let params = Params::default();
        let r = Request::new(
            Path::new("/t/run-1/case.py"),
            Path::new("/t/p/1-result"),
            &params,
        )
        .unwrap()
        .text("phase", "lo\"ad\n\u{e9}\\")
        .path("cwd", Path::new("/t/run 1"))
        .unwrap();
        let wire = r.to_wire();
        assert!(wire.bytes().all(|b| b.is_ascii_hexdigit()));
        let text = |s: &str| Value::Text(s.into());
        let dict = Value::Dict(vec![
            ("case".into(), text("/t/run-1/case.py")),
            ("result".into(), text("/t/p/1-result")),
            ("params".into(), Value::Dict(vec![])),
            ("phase".into(), text("lo\"ad\n\u{e9}\\")),
            ("cwd".into(), text("/t/run 1")),
        ]);
        assert_eq!(
            wire,
            crate::sys::hash::hex(&super::super::marshal::dumps(&dict))
        );
        let bad = crate::sys::fs::non_unicode_path();
        assert!(Request::new(&bad, &bad, &params).is_err());
    }

    #[test]
    fn reports_round_trip() {
        let bytes = b"crosspickle-result 1\noutcome 5\nerror\nexception 10\nValueError\nmessage 5\na\nb\xffc\nfuture 2\nxy\nend 0\n\n";
        let r = parse_report(bytes).unwrap();
        assert_eq!(r.outcome.as_deref(), Some("error"));
        assert_eq!(r.exception.as_deref(), Some("ValueError"));
        assert_eq!(r.message.as_deref(), Some("a\nb\u{fffd}c"));
        assert!(parse_report(b"crosspickle-result 1\noutcome 50\nerr").is_none());
        let started = b"crosspickle-result 1\npid 4\n1234\nout";
        assert_eq!(report_pid(started), Some(1234));
        assert!(parse_report(started).is_none());
        assert_eq!(report_pid(b"garbage"), None);
        // Without its end line, a record was cut short.
        assert!(parse_report(b"crosspickle-result 1\noutcome 4\npass\n").is_none());
        assert!(parse_report(b"garbage").is_none());
        let forged = format!(
            "crosspickle-result 1\noutcome {}\npass\nend 0\n\n",
            usize::MAX
        );
        assert!(parse_report(forged.as_bytes()).is_none());
        let field = "pickle.PicklingError same\nValueError unrelated\nbogus line";
        let bytes = format!(
            "crosspickle-result 1\noutcome 5\nerror\nclasses {}\n{field}\nend 0\n\n",
            field.len()
        );
        let r = parse_report(bytes.as_bytes()).unwrap();
        let c = classes(r.classes.as_deref());
        assert_eq!(c["pickle.PicklingError"], ClassRelation::Same);
        assert_eq!(c["ValueError"], ClassRelation::Unrelated);
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn checks_that_ended_are_kept_when_the_run_is_cut_short() {
        let check = |name: &str, outcome: &str| {
            let inner = format!(
                "name {}\n{name}\noutcome {}\n{outcome}\n",
                name.len(),
                outcome.len()
            );
            format!("check {}\n{inner}\n", inner.len())
        };
        // Two checks of the load, the relay's start, a check of the relay, then a kill.
        let record = format!(
            "crosspickle-result 1\npid 2\n42\n{}{}leg 5\nrelay\n{}",
            check("a", "pass"),
            check("b", "fail"),
            check("c", "skip")
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("result");
        std::fs::write(&file, &record).unwrap();
        let killed = Finished {
            exit: Exit::Signal(9),
            stdout: Default::default(),
            stderr: Default::default(),
            duration: std::time::Duration::from_millis(5),
        };
        let observed = observe(&killed, &file, 1.0, Some(Phase::Load));
        assert_eq!(observed.outcome, OutcomeKind::Crash);
        assert_eq!(observed.phase, Some(Phase::Relay));
        let seen: Vec<_> = observed
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.observed.outcome, c.observed.phase))
            .collect();
        assert_eq!(
            seen,
            [
                ("a", OutcomeKind::Pass, Some(Phase::Load)),
                ("b", OutcomeKind::Fail, Some(Phase::Load)),
                ("c", OutcomeKind::Skip, Some(Phase::Relay)),
            ]
        );
        // A check cut short in the middle of its field is not one.
        let cut = &record[..record.len() - 3];
        assert_eq!(written_checks(cut.as_bytes(), None).len(), 2);
    }

    #[test]
    fn a_status_other_than_0_after_the_report_is_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("result");
        let record = "crosspickle-result 1\noutcome 5\nerror\nexception 10\nValueError\nend 0\n\n";
        std::fs::write(&file, record).unwrap();
        let ended = |exit| Finished {
            exit,
            stdout: Default::default(),
            stderr: Default::default(),
            duration: std::time::Duration::from_millis(5),
        };
        let reported = observe(&ended(Exit::Code(0)), &file, 1.0, None);
        assert_eq!(reported.outcome, OutcomeKind::Error);
        let observed = observe(&ended(Exit::Code(120)), &file, 1.0, None);
        assert_eq!(observed.outcome, OutcomeKind::Crash);
        assert_eq!(observed.exit_code, Some(120));
        assert_eq!(observed.exception.as_deref(), Some("ValueError"));
        let message = observed.message.unwrap();
        assert!(
            message.contains("ended with status 120 after its code had run"),
            "{message}"
        );
    }
}
