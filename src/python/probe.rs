//! Asking an interpreter about itself: one embedded script (`probe.py`, for 2.7 and every 3.x)
//! run once per executable, isolated from the caller's folder and environment (`-I`, or `-E -s`
//! where there is no `-I`, in an empty working directory: no `pickle.py` or `json.py` of the
//! user's can answer for the interpreter), its answer cached and keyed by the executable's
//! metadata and the probe's identity (its script and how it is started).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::sys::process::{self, Exit, Output, ProcessSpec};

const PROBE_SCRIPT: &str = include_str!("probe.py");
const MARKER: &str = "CROSSPICKLE-PROBE ";
/// Bump when the probe's answer changes shape, to leave old cache entries behind (3: the
/// probe is isolated; the answers of older crosspickles, which ran it in the caller's folder,
/// may be a user's file's and are probed again; 4: `gil_enabled`; 5: `machine`).
const CACHE_VERSION: u32 = 5;
/// How the probe is started, best first: isolated mode (3.4 and later), else no `PYTHON*`
/// variable and no user site-packages (2.7, which has no `-I`). Either way it runs in an empty
/// working directory, so the `''` that `-c` puts first on `sys.path` holds nothing.
const ISOLATIONS: [&[&str]; 2] = [&["-I"], &["-E", "-s"]];

/// Why a candidate is not a usable interpreter (listed as unusable with this reason).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot stat {}: {source}", path.display())]
    Stat {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("not executable")]
    NotExecutable,
    #[error("cannot run it: {0}")]
    Start(#[source] Arc<std::io::Error>),
    #[error("the probe did not answer within {0:.0?}")]
    TimedOut(Duration),
    /// `stderr`: the last lines it printed, ready to append (`: …`, or empty).
    #[error("the probe died on {signal}{stderr}")]
    Died { signal: String, stderr: String },
    /// A Python that failed (its last line says why), or a program that is no Python at all:
    /// then what it printed is only shown with `detail` (`-v`).
    #[error("{}", exited(*.code, .stderr, .detail.as_deref()))]
    Exited {
        code: i32,
        /// The last lines it printed (` | `-joined).
        stderr: String,
        /// Shown with the reason when the prober is verbose.
        detail: Option<String>,
    },
    #[error("the probe printed nothing: not a Python interpreter?")]
    Silent,
    #[error("the probe's answer is not Python's: `{0}`")]
    NotPython(String),
    #[error("the probe's answer is garbled: {0}")]
    Garbled(#[source] Arc<serde_json::Error>),
    #[error("unsupported implementation `{0}` (crosspickle knows cpython and pypy)")]
    Unsupported(String),
}

/// What the probe reports.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeInfo {
    pub implementation: String,
    pub version_info: (u64, u64, u64, String, u64),
    pub version: String,
    pub implementation_version: Option<String>,
    /// `sys.implementation.version` as five fields (PyPy's own release; CPython's version).
    #[serde(default)]
    pub implementation_version_info: Option<(u64, u64, u64, String, u64)>,
    pub executable: Option<PathBuf>,
    pub prefix: String,
    pub debug: bool,
    pub free_threaded: bool,
    /// `sys._is_gil_enabled()` where it exists, else `!free_threaded`. Required: an answer
    /// without it (a cache entry of an older crosspickle) is probed again.
    pub gil_enabled: bool,
    pub c_pickle: Option<String>,
    /// `_pickle` imports and pickle's Pickler, Unpickler, dump(s) and load(s) are its objects.
    #[serde(default)]
    pub c_pickle_used: bool,
    pub pickle_highest_protocol: Option<u32>,
    pub pickle_default_protocol: Option<u32>,
    /// `sys.platform`.
    pub platform: String,
    /// `platform.machine()`. Required: an answer without it (of an older crosspickle) is
    /// probed again.
    pub machine: String,
}

/// The executable's identity: its answer is reused while these stay the same.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Key {
    size: u64,
    mtime_ns: i128,
    inode: u64,
    device: u64,
}

impl Key {
    fn of(path: &Path) -> std::io::Result<Key> {
        let id = crate::sys::fs::identity(path)?;
        Ok(Key {
            size: id.size,
            mtime_ns: id.mtime_ns,
            inode: id.inode,
            device: id.device,
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct CacheEntry {
    key: Key,
    /// The [`probe_identity`] of the probe that answered (empty in older caches: probed again).
    #[serde(default)]
    probe: String,
    info: ProbeInfo,
}

/// What else the answer depends on besides the executable: the probe's script and the flags
/// it is started with.
fn probe_identity() -> String {
    let mut bytes = PROBE_SCRIPT.as_bytes().to_vec();
    for flags in ISOLATIONS {
        bytes.push(0);
        bytes.extend_from_slice(flags.join(" ").as_bytes());
    }
    crate::sys::hash::short_hex(&bytes, 16)
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    entries: BTreeMap<PathBuf, CacheEntry>,
}

/// Probes interpreters, with a cache file shared by all of them.
pub struct Prober {
    cache_file: Option<PathBuf>,
    pub timeout: Duration,
    refresh: bool,
    /// Failures say what the candidate printed.
    verbose: bool,
    cache: std::sync::Mutex<CacheFile>,
    dirty: std::sync::atomic::AtomicBool,
}

impl Prober {
    pub fn new(cache_dir: Option<&Path>, timeout: Duration, refresh: bool) -> Self {
        let cache_file = cache_dir.map(|d| d.join("interpreters.json"));
        let cache = cache_file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|bytes| serde_json::from_slice::<CacheFile>(&bytes).ok())
            .filter(|c| c.version == CACHE_VERSION)
            .unwrap_or(CacheFile {
                version: CACHE_VERSION,
                entries: BTreeMap::new(),
            });
        Prober {
            cache_file,
            timeout,
            refresh,
            verbose: false,
            cache: std::sync::Mutex::new(cache),
            dirty: Default::default(),
        }
    }

    /// A prober whose failures say what the candidate printed (`-v`).
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Probe the canonical executable `exe`, from the cache when its metadata is unchanged.
    pub async fn probe(&self, exe: &Path) -> Result<ProbeInfo, ProbeError> {
        let key = Key::of(exe).map_err(|e| ProbeError::Stat {
            path: exe.to_path_buf(),
            source: Arc::new(e),
        })?;
        if !self.refresh {
            let cache = self.cache.lock().unwrap();
            if let Some(entry) = cache.entries.get(exe) {
                if entry.key == key && entry.probe == probe_identity() {
                    return Ok(entry.info.clone());
                }
            }
        }
        let info = self.run_probe(exe).await?;
        let mut cache = self.cache.lock().unwrap();
        cache.entries.insert(
            exe.to_path_buf(),
            CacheEntry {
                key,
                probe: probe_identity(),
                info: info.clone(),
            },
        );
        self.dirty.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(info)
    }

    /// Run the probe isolated (`-I`); an interpreter that has no `-I` (2.7 says `Unknown
    /// option: -I`) is asked again with `-E -s`.
    async fn run_probe(&self, exe: &Path) -> Result<ProbeInfo, ProbeError> {
        let neutral = tempfile::Builder::new()
            .prefix("crosspickle-probe-")
            .tempdir()
            .map_err(|e| ProbeError::Start(Arc::new(e)))?;
        let mut finished = None;
        for flags in ISOLATIONS {
            let spec = ProcessSpec::new(exe, Some(self.timeout))
                .args(flags.iter().copied())
                .args(["-c", PROBE_SCRIPT])
                .env(crate::python::sanitized_env(&Default::default()))
                .cwd(neutral.path())
                .output(Output::Capture(16 * 1024));
            let done = process::run(&spec, &CancellationToken::new())
                .await
                .map_err(|e| ProbeError::Start(Arc::new(e)))?;
            let unknown_flag = done.exit == Exit::Code(2)
                && done
                    .stderr
                    .text()
                    .contains(&format!("nknown option: {}", flags[0]));
            finished = Some(done);
            if !unknown_flag {
                break;
            }
        }
        let finished = finished.expect("one probe ran");
        // The last three lines it printed, each cut to 300 characters, ` | `-joined.
        let last_lines = || {
            let text = finished.stderr.text();
            let last: Vec<String> = text
                .trim_end()
                .lines()
                .rev()
                .take(3)
                .map(|l| l.chars().take(300).collect())
                .collect();
            last.into_iter().rev().collect::<Vec<_>>().join(" | ")
        };
        let stderr_tail = || {
            let joined = last_lines();
            if joined.is_empty() {
                String::new()
            } else {
                format!(": {joined}")
            }
        };
        match finished.exit {
            Exit::TimedOut | Exit::Cancelled => return Err(ProbeError::TimedOut(self.timeout)),
            Exit::Signal(sig) => {
                return Err(ProbeError::Died {
                    signal: crate::sys::signal::name(sig),
                    stderr: stderr_tail(),
                })
            }
            Exit::Code(0) => {}
            Exit::Code(code) => {
                let stderr = last_lines();
                return Err(ProbeError::Exited {
                    code,
                    detail: self.verbose.then(|| stderr.clone()),
                    stderr,
                });
            }
        }
        parse_answer(&finished.stdout.text())
    }

    /// Write the cache back if anything new was learned (atomically; a failure is harmless).
    pub fn save(&self) {
        if !self.dirty.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        if let Some(file) = &self.cache_file {
            let cache = self.cache.lock().unwrap();
            if let Ok(bytes) = serde_json::to_vec_pretty(&*cache) {
                let _ = crate::sys::fs::write_atomic(file, &bytes);
            }
        }
    }
}

/// The reason of a probe that exited with `code` after printing `stderr` (its last lines): a
/// Python says what went wrong in its last line (`Fatal Python error: ...`, a traceback's
/// exception); anything else is not a Python interpreter, and what it printed (often the
/// probe's own source, which it took for a file name) is noise unless asked for.
fn exited(code: i32, stderr: &str, detail: Option<&str>) -> String {
    let last = stderr.rsplit(" | ").next().unwrap_or("");
    // `ValueError: ...`, `_pickle.UnpicklingError: ...`: the last line of a traceback.
    let exception_line = last.split_once(':').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
            && (name.ends_with("Error") || name.ends_with("Exception") || name.ends_with("Exit"))
    });
    let pythonic = exception_line
        || ["Traceback (most recent call last)", "Fatal Python error"]
            .iter()
            .any(|mark| stderr.contains(mark));
    let mut reason = if pythonic && !last.is_empty() {
        format!("the probe exited with status {code}: {last}")
    } else if detail.is_some() || stderr.is_empty() {
        format!("not a Python interpreter (the probe exited with status {code})")
    } else {
        format!("not a Python interpreter (the probe exited with status {code}; -v shows what it printed)")
    };
    if let Some(detail) = detail.filter(|d| !d.is_empty()) {
        reason.push_str(&format!("; it printed: {detail}"));
    }
    reason
}

/// The probe's answer in what it printed: the line after its marker, as JSON.
fn parse_answer(stdout: &str) -> Result<ProbeInfo, ProbeError> {
    let Some(line) = stdout.lines().find_map(|l| l.strip_prefix(MARKER)) else {
        let first: String = stdout
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(120)
            .collect();
        return Err(if first.is_empty() {
            ProbeError::Silent
        } else {
            ProbeError::NotPython(first)
        });
    };
    serde_json::from_str(line).map_err(|e| ProbeError::Garbled(Arc::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_that_are_not_the_probe_s() {
        assert_eq!(
            parse_answer("").unwrap_err().to_string(),
            "the probe printed nothing: not a Python interpreter?"
        );
        assert_eq!(
            parse_answer("hello\n").unwrap_err().to_string(),
            "the probe's answer is not Python's: `hello`"
        );
        let ls = "/usr/bin/ls: cannot access ''# crosspickle'\\''s interpreter probe: ...";
        let exited = |stderr: &str, detail: Option<&str>| {
            ProbeError::Exited {
                code: 2,
                stderr: stderr.into(),
                detail: detail.map(String::from),
            }
            .to_string()
        };
        assert_eq!(
            exited(ls, None),
            "not a Python interpreter (the probe exited with status 2; -v shows what it printed)"
        );
        assert_eq!(
            exited(ls, Some(ls)),
            format!("not a Python interpreter (the probe exited with status 2); it printed: {ls}")
        );
        assert_eq!(
            exited("Fatal Python error: init_fs_encoding | ModuleNotFoundError: No module named 'encodings'", None),
            "the probe exited with status 2: ModuleNotFoundError: No module named 'encodings'"
        );
        let garbled = parse_answer("CROSSPICKLE-PROBE {").unwrap_err();
        assert!(matches!(garbled, ProbeError::Garbled(_)));
        assert!(std::error::Error::source(&garbled).is_some());
    }
}
