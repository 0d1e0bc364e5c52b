//! What every end-to-end test needs: the built binary, real interpreters (a test that needs
//! one that is missing is reported as ignored, and as a failure when CROSSPICKLE_REQUIRE_PYTHONS
//! names it), the `trial!` registration of a test where its function is written, throwaway case
//! folders, and the JSON a run wrote.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::{Failed, Trial};

pub type TestResult = Result<(), Failed>;

/// How long each trial that ran took, for the slowest ones [`print_slowest`] names at the end.
static TIMES: std::sync::Mutex<Vec<(std::time::Duration, String)>> =
    std::sync::Mutex::new(Vec::new());

/// `Trial::test`, its time kept: every trial of this binary is made by it.
pub fn timed(name: &str, test: impl FnOnce() -> TestResult + Send + 'static) -> Trial {
    let label = name.to_string();
    Trial::test(name, move || {
        let start = std::time::Instant::now();
        let result = test();
        let took = start.elapsed();
        TIMES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((took, label));
        result
    })
}

/// After the run, the `count` slowest trials on stderr, as nextest names slow tests, and every
/// trial's time in the file `CROSSPICKLE_TEST_TIMES` names (`.ci/run` prints it at its end).
pub fn print_slowest(count: usize) {
    let mut times = TIMES.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if times.is_empty() {
        return;
    }
    times.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let line = |(took, name): &(std::time::Duration, String)| {
        format!("{:>8.1}s {name}", took.as_secs_f64())
    };
    let total: f64 = times.iter().map(|t| t.0.as_secs_f64()).sum();
    eprintln!(
        "\nslowest trials ({} ran, {total:.0} s in all):",
        times.len()
    );
    for time in times.iter().take(count) {
        eprintln!("{}", line(time));
    }
    if let Some(path) = std::env::var_os("CROSSPICKLE_TEST_TIMES") {
        let text: String = times.iter().map(|t| line(t) + "\n").collect();
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("cannot write the trials' times to {path:?}: {e}");
        }
    }
}

/// A real interpreter a test needs: `2.7`, `3.6` … `3.13` from pyenv, `pypy` (Debian's pypy3),
/// `debug` (Debian's python3.11-dbg), `system` (Debian's python3.11), and the newest ones that
/// `.ci/newest-pythons.sh` installs (see [`newest_python`]): `3.14`, `3.15` (from pyenv when it
/// has them), `3.14d`, `3.15d` (their debug builds), `pypy3.11` (PyPy 7.3, no `_pickle`) and
/// `pypy8` (PyPy 8, Python 3.11 with `_pickle`), and `3.13t` (free-threaded CPython 3.13, built
/// from Debian's source package).
pub fn python(need: &str) -> Option<PathBuf> {
    let fixed = match need {
        "pypy" => Some("/usr/bin/pypy3"),
        "debug" => Some("/usr/bin/python3.11-dbg"),
        "system" => Some("/usr/bin/python3.11"),
        _ => None,
    };
    if let Some(p) = fixed {
        return Path::new(p).exists().then(|| PathBuf::from(p));
    }
    let newest_name = match need {
        "3.14d" => Some("sid-python3.14d"),
        "3.15d" => Some("sid-python3.15d"),
        "pypy3.11" => Some("trixie-pypy3.11"),
        "pypy8" => Some("sid-pypy3.11"),
        "3.13t" => Some("ft-python3.13t"),
        _ => None,
    };
    if let Some(name) = newest_name {
        return newest_python(name);
    }
    pyenv_python(need).or_else(|| match need {
        "3.14" => newest_python("sid-python3.14"),
        "3.15" => newest_python("sid-python3.15"),
        _ => None,
    })
}

/// The folder `.ci/newest-pythons.sh` installed into: `CROSSPICKLE_NEWEST_PYTHONS`, else the
/// script's default, `target/newest-pythons` of this checkout.
pub fn newest_pythons_dir() -> PathBuf {
    std::env::var_os("CROSSPICKLE_NEWEST_PYTHONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/newest-pythons"))
}

/// An interpreter named in the pythons.toml that `.ci/newest-pythons.sh` wrote.
pub fn newest_python(name: &str) -> Option<PathBuf> {
    let dir = newest_pythons_dir();
    let text = std::fs::read_to_string(dir.join("pythons.toml")).ok()?;
    let table: toml::Table = toml::from_str(&text).ok()?;
    let path = dir.join(table.get("pythons")?.get(name)?.as_str()?);
    path.exists().then_some(path)
}

fn pyenv_python(need: &str) -> Option<PathBuf> {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".pyenv")
        });
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("versions"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.starts_with(&format!("{need}."))
                && name[need.len() + 1..].chars().all(|c| c.is_ascii_digit())
        })
        .collect();
    dirs.sort();
    let dir = dirs.pop()?;
    let exe = dir.join("bin").join(format!("python{need}"));
    exe.exists().then_some(exe)
}

/// Versions a machine is required to have (`CROSSPICKLE_REQUIRE_PYTHONS=2.7,3.6,…,pypy,debug`).
fn required() -> Vec<String> {
    std::env::var("CROSSPICKLE_REQUIRE_PYTHONS")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A test that needs `needs`: ignored (with the reason in its kind) when one is missing, or a
/// failure when that one is required.
pub fn trial(
    name: &str,
    needs: &[&str],
    test: impl FnOnce() -> TestResult + Send + 'static,
) -> Trial {
    let missing: Vec<String> = needs
        .iter()
        .filter(|n| python(n).is_none())
        .map(|n| n.to_string())
        .collect();
    if missing.is_empty() {
        return timed(name, test);
    }
    let required = required();
    let must: Vec<&String> = missing.iter().filter(|m| required.contains(m)).collect();
    if !must.is_empty() {
        let msg = format!("required interpreters missing: {must:?} (CROSSPICKLE_REQUIRE_PYTHONS)");
        return timed(name, move || Err(msg.clone().into()));
    }
    timed(name, test)
        .with_kind(format!("needs python {}", missing.join(", ")))
        .with_ignored_flag(true)
}

/// The two ways a run gets its process (`--isolation`).
pub const ISOLATIONS: [&str; 2] = ["exec", "fork"];

/// [`trial`] once per isolation, named `name[exec]` and `name[fork]`; the test gets the
/// isolation to pass as `--isolation`.
pub fn trials_in_both(
    name: &str,
    needs: &[&str],
    test: fn(&'static str) -> TestResult,
) -> Vec<Trial> {
    ISOLATIONS
        .iter()
        .map(|&iso| trial(&format!("{name}[{iso}]"), needs, move || test(iso)))
        .collect()
}

// A test that also needs the program `tool` on PATH: ignored (with the reason in its kind)
/// when it is missing, or a failure when `CROSSPICKLE_REQUIRE_TOOLS` (comma-separated) names
/// it, as CI does.
pub fn tool_trial(name: &str, tool: &str, needs: &[&str], test: fn() -> TestResult) -> Trial {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(tool).is_file()));
    if found {
        return trial(name, needs, test);
    }
    let required = std::env::var("CROSSPICKLE_REQUIRE_TOOLS").unwrap_or_default();
    if required.split(',').any(|t| t.trim() == tool) {
        let msg = format!("required tool missing: {tool} (CROSSPICKLE_REQUIRE_TOOLS)");
        return timed(name, move || Err(msg.clone().into()));
    }
    timed(name, test)
        .with_kind(format!("needs {tool}"))
        .with_ignored_flag(true)
}

/// One trial registered where its function is written, by [`trial!`]: `function` is its name
/// (after its module's path, so the two cannot differ) and `make` builds its trial(s).
pub struct Registered {
    pub module: &'static str,
    pub function: &'static str,
    pub make: fn(&str) -> Vec<Trial>,
}

inventory::collect!(Registered);

impl Registered {
    /// `file::function`: the module path without the test binary's own name.
    pub fn name(&self) -> String {
        let module = self.module.split_once("::").map_or("", |(_, m)| m);
        format!("{module}::{}", self.function)
    }
}

/// Every trial registered with [`trial!`] in any file, sorted by name.
pub fn registered() -> Vec<Trial> {
    let mut all: Vec<&Registered> = inventory::iter::<Registered>.into_iter().collect();
    all.sort_by_key(|r| r.name());
    all.iter().flat_map(|r| (r.make)(&r.name())).collect()
}

/// Registers the test function written below it as a trial named `file::function`:
/// - `trial!(f);` — no interpreter needed (`f: fn() -> TestResult`);
/// - `trial!(f, needs = &["3.8", "pypy"]);` — [`trial`]: ignored with the reason when one is
///   missing, a failure when `CROSSPICKLE_REQUIRE_PYTHONS` names it;
/// - `trial!(f, needs = &["3.12"], tool = "xmllint");` — [`tool_trial`];
/// - `trial!(f, needs = &["3.12"], both);` — [`trials_in_both`]: `f[exec]` and `f[fork]`,
///   `f: fn(&'static str) -> TestResult` gets the isolation;
/// - `trial!(f, by = |name, test| my_gate(name, test));` — a file's own gate, any
///   `fn(&str, fn() -> TestResult) -> Trial`;
/// - `trial!(f, generated);` — `f: fn() -> Vec<Trial>` makes several trials with their names.
macro_rules! register_trial {
    (@at $f:ident, $make:expr) => {
        ::inventory::submit! {
            $crate::support::Registered {
                module: module_path!(),
                function: stringify!($f),
                make: $make,
            }
        }
    };
    ($f:ident) => {
        $crate::support::trial!($f, needs = &[]);
    };
    ($f:ident, needs = $needs:expr) => {
        $crate::support::trial!(@at $f, |name| vec![$crate::support::trial(name, $needs, $f)]);
    };
    ($f:ident, needs = $needs:expr, tool = $tool:expr) => {
        $crate::support::trial!(@at $f, |name| {
            vec![$crate::support::tool_trial(name, $tool, $needs, $f)]
        });
    };
    ($f:ident, needs = $needs:expr, both) => {
        $crate::support::trial!(@at $f, |name| $crate::support::trials_in_both(name, $needs, $f));
    };
    ($f:ident, by = $gate:expr) => {
        $crate::support::trial!(@at $f, |name| {
            let gate: fn(&str, fn() -> $crate::support::TestResult) -> ::libtest_mimic::Trial =
                $gate;
            vec![gate(name, $f)]
        });
    };
    ($f:ident, generated) => {
        $crate::support::trial!(@at $f, |_| $f());
    };
}
// Named apart so that `use support::trial` brings in both the function and the macro.
pub(crate) use register_trial as trial;

/// The driver as crosspickle runs it: the parts of `src/run/driver/` joined in the order of
/// their names (`run/driver.rs`'s `DRIVER_SOURCE`).
pub fn driver_source() -> std::io::Result<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run/driver");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    parts.retain(|p| p.extension().is_some_and(|e| e == "py"));
    parts.sort();
    parts.iter().map(std::fs::read_to_string).collect()
}

/// The binary under test: the one this build made, or `CROSSPICKLE_E2E_BIN` (to run the
/// tests against another build, such as an older release, to see which of them it fails).
pub fn bin() -> PathBuf {
    std::env::var_os("CROSSPICKLE_E2E_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_crosspickle")))
}

/// The crosspickle binary with a test's environment: its own probe cache, no CI variable (nor
/// GitHub's),
/// no colour, and a pythons.toml that turns discovery off unless a test asks for it.
pub fn crosspickle(dir: &Path) -> Command {
    let mut cmd = Command::new(bin());
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe-cache");
    cmd.current_dir(dir)
        .env("CROSSPICKLE_CACHE_DIR", cache)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("CROSSPICKLE_PYTHONS_TOML")
        .env("NO_COLOR", "1");
    cmd
}

/// A throwaway folder holding `files` (path, text).
pub fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub fn expect_code(&self, code: i32) -> TestResult {
        if self.code == code {
            Ok(())
        } else {
            Err(format!(
                "exit code {} (wanted {code})\n--- stdout\n{}\n--- stderr\n{}",
                self.code, self.stdout, self.stderr
            )
            .into())
        }
    }
}

/// The JSON in file `path`; null when there is none, or it does not parse.
pub fn json_at(path: &Path) -> serde_json::Value {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// Run crosspickle in `dir` with `args`, writing JSON to `dir/results.json`; returns the run and
/// the parsed JSON (null when none was written).
pub fn run_json<S: AsRef<std::ffi::OsStr>>(dir: &Path, args: &[S]) -> (Run, serde_json::Value) {
    let json = dir.join("results.json");
    let _ = std::fs::remove_file(&json);
    let out = crosspickle(dir)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("crosspickle runs");
    (Run::from(out), json_at(&json))
}

/// `run_json`, for a run that a case might stop or hang: after `limit`, crosspickle is woken
/// (SIGCONT) and killed, and that is the test's failure.
pub fn run_json_within<S: AsRef<std::ffi::OsStr>>(
    dir: &Path,
    args: &[S],
    limit: std::time::Duration,
) -> Result<(Run, serde_json::Value), libtest_mimic::Failed> {
    use nix::sys::signal::{kill, Signal};
    let json = dir.join("results.json");
    let _ = std::fs::remove_file(&json);
    let mut child = crosspickle(dir)
        .args(args)
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("crosspickle runs");
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let start = std::time::Instant::now();
    while child.try_wait()?.is_none() {
        if start.elapsed() > limit {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let _ = kill(pid, Signal::SIGCONT);
            let _ = kill(pid, Signal::SIGKILL);
            let _ = child.wait();
            return Err(format!(
                "crosspickle did not end within {limit:?} (stopped or hung: /proc/{pid}/stat {state})"
            )
            .into());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output()?;
    Ok((Run::from(out), json_at(&json)))
}

/// `crosspickle cache ARGS --cache-dir CACHE`, in `dir`.
pub fn cache_command(dir: &Path, cache: &Path, args: &[&str]) -> Run {
    Run::from(
        crosspickle(dir)
            .arg("cache")
            .args(args)
            .arg("--cache-dir")
            .arg(cache)
            .output()
            .expect("crosspickle runs"),
    )
}

/// `python_args(needs)`, then `extra`: the arguments of a run on those interpreters only.
pub fn args_on(needs: &[&str], extra: &[&str]) -> Vec<String> {
    let mut args = python_args(needs);
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// `crosspickle explore` in `dir` on `needs` with `extra`, which is to find something (exit 1):
/// the findings of its JSON report.
pub fn explore_findings(
    dir: &Path,
    needs: &[&str],
    extra: &[&str],
) -> Result<Vec<serde_json::Value>, Failed> {
    let mut args = vec!["explore".to_string()];
    args.extend(args_on(needs, extra));
    let (run, report) = run_json(dir, &args);
    run.expect_code(1)?;
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    Ok(findings)
}

/// A finding's raise sites (its `sites`, a list of texts).
pub fn sites(finding: &serde_json::Value) -> Vec<String> {
    finding["sites"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The findings of one oracle (`parity`, `message-differs`…).
pub fn of_oracle<'a>(
    findings: &'a [serde_json::Value],
    oracle: &str,
) -> Vec<&'a serde_json::Value> {
    findings.iter().filter(|f| f["oracle"] == oracle).collect()
}

/// The runs of a JSON report.
pub fn runs(value: &serde_json::Value) -> Vec<serde_json::Value> {
    value["runs"].as_array().cloned().unwrap_or_default()
}

/// The one run of a JSON report whose case and python label match.
pub fn find_run<'a>(
    value: &'a serde_json::Value,
    case: &str,
    python_prefix: &str,
) -> Option<&'a serde_json::Value> {
    value["runs"].as_array()?.iter().find(|r| {
        r["case"] == case
            && r["python"]
                .as_str()
                .is_some_and(|p| p.starts_with(python_prefix))
    })
}

pub fn check(cond: bool, what: impl std::fmt::Display) -> TestResult {
    if cond {
        Ok(())
    } else {
        Err(what.to_string().into())
    }
}

pub fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// Every interpreter of this project's machines, as `python()` names them.
pub const EVERY_PYTHON: &[&str] = &[
    "2.7", "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "pypy", "debug", "system",
];

/// The newest interpreters, which `.ci/newest-pythons.sh` installs where pyenv has none.
pub const NEWEST_PYTHONS: &[&str] = &["3.14", "3.15", "3.14d", "3.15d", "pypy3.11", "pypy8"];

/// `--python PATH` for each of `needs` found here, and no pythons.toml: exactly these.
pub fn python_args(needs: &[&str]) -> Vec<String> {
    let mut args = vec!["--pythons-toml".to_string(), "/dev/null".to_string()];
    for need in needs {
        if let Some(p) = python(need) {
            args.push("--python".into());
            args.push(path_str(&p));
        }
    }
    args
}

/// Watch the processes the tests start (this process's children), so that a test whose
/// process never ends fails instead of holding the whole run until CI's time limit: one stopped
/// (SIGSTOP, or a job-control stop) for a minute, or running for 20 minutes, is said on stderr,
/// woken and killed; the test waiting for it then fails with what it got.
pub fn start_watchdog() {
    const STOPPED: u64 = 60;
    const RUNNING: u64 = 20 * 60;
    std::thread::spawn(|| {
        let me = std::process::id().to_string();
        let mut stopped_since: std::collections::HashMap<String, std::time::Instant> =
            Default::default();
        loop {
            std::thread::sleep(std::time::Duration::from_secs(5));
            let uptime = std::fs::read_to_string("/proc/uptime")
                .ok()
                .and_then(|u| u.split('.').next()?.parse::<u64>().ok())
                .unwrap_or(0);
            let ticks = 100; // USER_HZ on Linux
            let Ok(procs) = std::fs::read_dir("/proc") else {
                return;
            };
            let mut seen = std::collections::HashSet::new();
            for entry in procs.flatten() {
                let pid = entry.file_name().to_string_lossy().into_owned();
                let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                    continue;
                };
                // After the command's closing parenthesis: state, ppid, ... starttime (22nd).
                let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
                    continue;
                };
                let fields: Vec<&str> = rest.split(' ').collect();
                if fields.get(1) != Some(&me.as_str()) {
                    continue;
                }
                seen.insert(pid.clone());
                let age = fields
                    .get(19)
                    .and_then(|t| t.parse::<u64>().ok())
                    .map_or(0, |start| uptime.saturating_sub(start / ticks));
                let stopped = fields.first() == Some(&"T");
                let since = stopped.then(|| {
                    *stopped_since
                        .entry(pid.clone())
                        .or_insert_with(std::time::Instant::now)
                });
                if !stopped {
                    stopped_since.remove(&pid);
                }
                let why = if since.is_some_and(|t| t.elapsed().as_secs() >= STOPPED) {
                    format!("stopped for {STOPPED} s")
                } else if age >= RUNNING {
                    format!("running for {} min", RUNNING / 60)
                } else {
                    continue;
                };
                let cmdline = std::fs::read(entry.path().join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                    .unwrap_or_default();
                eprintln!("e2e watchdog: killing pid {pid} ({why}): {cmdline}");
                if let Ok(n) = pid.parse::<i32>() {
                    use nix::sys::signal::{kill, Signal};
                    let pid = nix::unistd::Pid::from_raw(n);
                    let _ = kill(pid, Signal::SIGCONT);
                    let _ = kill(pid, Signal::SIGKILL);
                }
            }
            stopped_since.retain(|pid, _| seen.contains(pid));
        }
    });
}

/// For a run whose rule lists several outcomes (`outcome: [pass, error]`: a race left to the
/// scheduler, as threads/pickler-dump-race.yaml), what two runs of it must agree on: the
/// verdict, and that the outcome was one of the list. None for any other run.
pub fn sometimes(r: &serde_json::Value) -> Option<String> {
    let any_of = r["expected"]["any_of"].as_array().filter(|a| a.len() > 1)?;
    let allowed = any_of.iter().any(|o| *o == r["outcome"]);
    Some(format!(
        "{} | outcome one of {any_of:?}: {allowed}",
        r["verdict"]
    ))
}
