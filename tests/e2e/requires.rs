//! `requires` end to end, hermetic: tiny wheels written by the test, installed with `--offline
//! --find-links`, into environments in a throwaway cache folder per test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::Trial;

use crate::support::*;

/// A test that needs uv (on PATH, or named by CROSSPICKLE_TEST_UV as .ci/run does, so that the
/// other tests keep exercising pip): ignored, with the reason, without it; a failure when
/// CROSSPICKLE_TEST_UV names one that is not there.
fn uv_trial(name: &str, test: fn() -> TestResult) -> Trial {
    if which_uv().is_some() && python("3.8").is_some() {
        crate::support::timed(name, test)
    } else {
        crate::support::timed(name, test)
            .with_kind("needs uv on PATH and python 3.8")
            .with_ignored_flag(true)
    }
}

fn which_uv() -> Option<PathBuf> {
    if let Some(uv) = std::env::var_os("CROSSPICKLE_TEST_UV").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(uv));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("uv"))
        .find(|p| p.is_file())
}

/// Writes `<name>-<version>-py2.py3-none-any.whl` into `dir`: one module whose `__version__`
/// is `version`. Built with the standard library's zipfile, so no build backend or index.
const WHEEL_WRITER: &str = r#"
import base64, hashlib, os, sys, zipfile
out, name, version = sys.argv[1], sys.argv[2], sys.argv[3]
files = [
    (name + ".py", "__version__ = %r\n" % version),
    ("%s-%s.dist-info/METADATA" % (name, version),
     "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)),
    ("%s-%s.dist-info/WHEEL" % (name, version),
     "Wheel-Version: 1.0\nGenerator: crosspickle-tests\nRoot-Is-Purelib: true\nTag: py2-none-any\nTag: py3-none-any\n"),
]
record = "%s-%s.dist-info/RECORD" % (name, version)
lines = []
path = os.path.join(out, "%s-%s-py2.py3-none-any.whl" % (name, version))
with zipfile.ZipFile(path, "w") as z:
    for arc, text in files:
        data = text.encode("utf-8")
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append("%s,sha256=%s,%d" % (arc, digest, len(data)))
        z.writestr(arc, data)
    lines.append(record + ",,")
    z.writestr(record, "\n".join(lines) + "\n")
"#;

/// A folder of wheels: each (name, version).
pub(crate) fn wheels(
    python: &Path,
    dists: &[(&str, &str)],
) -> Result<tempfile::TempDir, libtest_mimic::Failed> {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, version) in dists {
        let out = Command::new(python)
            .args(["-c", WHEEL_WRITER])
            .arg(dir.path())
            .args([name, version])
            .output()
            .expect("python runs");
        check(
            out.status.success(),
            format!("writing a wheel: {}", String::from_utf8_lossy(&out.stderr)),
        )?;
    }
    Ok(dir)
}

/// A throwaway cache folder, seeded with the shared probe answers so that tests do not probe
/// every interpreter again (environments are made afresh in it).
pub(crate) fn cache() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let probes = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("probe-cache")
        .join("interpreters.json");
    let _ = std::fs::copy(probes, dir.path().join("interpreters.json"));
    dir
}

/// `crosspickle` args for a run with this cache and wheels, offline.
pub(crate) fn args<'a>(cache: &'a Path, links: &'a Path, python: &'a str) -> Vec<String> {
    vec![
        "--cache-dir".into(),
        path_str(cache),
        "--offline".into(),
        "--find-links".into(),
        path_str(links),
        "--python".into(),
        python.into(),
    ]
}

fn run(dir: &Path, args: &[String]) -> (Run, serde_json::Value) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_json(dir, &args)
}

/// The complete environments in `cache` (folders with a marker).
pub(crate) fn envs(cache: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(cache.join("envs"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("crosspickle-env.json").is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Anything a build left behind: `.tmp-*` folders.
fn leftovers(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache.join("envs"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

fn verdicts(json: &serde_json::Value) -> Vec<String> {
    runs(json)
        .iter()
        .map(|r| format!("{}[{}]={}", r["case"], r["params"], r["verdict"]))
        .collect()
}

const TINY_CASE: &str = r#"title: tinypkg from its environment
requires: ["tinypkg==1.0"]
code: |
  import sys, tinypkg
  assert tinypkg.__version__ == "1.0", tinypkg.__version__
  assert tinypkg.__file__.startswith(sys.prefix), (tinypkg.__file__, sys.prefix)
  assert sys.prefix != sys.base_prefix, "not in a virtual environment"
"#;

/// A folder nobody can write into, root included (who ignores its mode): `chattr +i` for root,
/// mode 0555 otherwise. Made writable again when dropped, so that it can be removed.
struct Unwritable<'a>(&'a Path);

impl<'a> Unwritable<'a> {
    fn new(dir: &'a Path) -> Result<Self, String> {
        use std::os::unix::fs::PermissionsExt;
        let made = if rustix::process::geteuid().is_root() {
            Command::new("chattr")
                .arg("+i")
                .arg(dir)
                .status()
                .map(|s| s.success())
        } else {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).map(|_| true)
        };
        let guard = Unwritable(dir);
        let probe = dir.join("probe");
        if !matches!(made, Ok(true)) || std::fs::write(&probe, "").is_ok() {
            let _ = std::fs::remove_file(&probe);
            return Err(format!(
                "cannot make {} unwritable here (chattr +i as root, mode 0555 otherwise): {made:?}",
                dir.display()
            ));
        }
        Ok(guard)
    }
}

impl Drop for Unwritable<'_> {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if rustix::process::geteuid().is_root() {
            let _ = Command::new("chattr").arg("-i").arg(self.0).status();
        }
        let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(0o755));
    }
}

trial!(a_cache_folder_that_cannot_be_written, needs = &["3.8"]);
/// A cache folder that cannot be written (a read-only mount, another user's): the runs that
/// need no environment run (probes and compiled forms are not kept), those that need one are
/// env-errors naming the folder, and `cache list` still answers.
fn a_cache_folder_that_cannot_be_written() -> TestResult {
    let (links, cache, dir) = tiny_and_plain(&[])?;
    let _unwritable = Unwritable::new(cache.path())?;
    let (run, json) = run(dir.path(), &args(cache.path(), links.path(), "3.8"));
    run.expect_code(3)?;
    check(!run.stderr.contains("panicked"), &run.stderr)?;
    // docs/requires.md says the exit code this run had.
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/requires.md"))?;
    let section = doc
        .split("### A cache folder that cannot be written")
        .nth(1)
        .and_then(|s| s.split("\n#").next())
        .unwrap_or("");
    check(
        section
            .replace('\n', " ")
            .contains(&format!("the exit code is {}", run.code)),
        section,
    )?;
    let plain = find_run(&json, "plain", "cpython-3.8").ok_or(format!("{json}"))?;
    check(plain["verdict"] == "ok", format!("{plain}"))?;
    let tiny = find_run(&json, "tiny", "cpython-3.8").ok_or(format!("{json}"))?;
    let reason = tiny["reason"].as_str().unwrap_or_default();
    check(
        tiny["verdict"] == "env-error"
            && reason.contains("cannot make the folder")
            && reason.contains(&path_str(&cache.path().join("envs"))),
        format!("{tiny}"),
    )?;
    let list = cache_command(dir.path(), cache.path(), &["list"]);
    list.expect_code(0)?;
    check(envs(cache.path()).is_empty(), "no environment was made")
}

trial!(env_made_once_then_reused, needs = &["3.8"]);
fn env_made_once_then_reused() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = wheels(&py, &[("tinypkg", "1.0")])?;
    let cache = cache();
    let dir = folder(&[("cases/tiny.yaml", TINY_CASE)]);
    let args = args(cache.path(), links.path(), "3.8");
    let (first, json) = run(dir.path(), &args);
    first.expect_code(0)?;
    check(
        first.stderr.contains("making 1 environment"),
        format!("the cold run says so: {}", first.stderr),
    )?;
    check(
        runs(&json)[0]["verdict"] == "ok",
        format!("{:?}", runs(&json)),
    )?;
    let made = envs(cache.path());
    check(made.len() == 1, format!("one environment, got {made:?}"))?;
    let marker = made[0].join("crosspickle-env.json");
    let mtime = std::fs::metadata(&marker).unwrap().modified().unwrap();

    // Warm: no installer. The wheel folder is gone, so any install would fail; the marker is
    // untouched, and the run is about as fast as one without requires.
    drop(links);
    std::thread::sleep(Duration::from_millis(20));
    let started = Instant::now();
    let (second, json) = run(dir.path(), &args);
    let warm = started.elapsed();
    second.expect_code(0)?;
    check(
        !second.stderr.contains("making"),
        format!("the warm run makes nothing: {}", second.stderr),
    )?;
    check(
        runs(&json)[0]["verdict"] == "ok",
        format!("{:?}", runs(&json)),
    )?;
    check(
        std::fs::metadata(&marker).unwrap().modified().unwrap() == mtime,
        "the marker was rewritten",
    )?;
    check(envs(cache.path()) == made, "a second environment appeared")?;
    check(
        leftovers(cache.path()).is_empty(),
        format!("leftovers: {:?}", leftovers(cache.path())),
    )?;
    check(
        warm < Duration::from_secs(10),
        format!("warm run took {warm:?}"),
    )
}

trial!(two_processes_make_one_env, needs = &["3.8"]);
fn two_processes_make_one_env() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = wheels(&py, &[("tinypkg", "1.0")])?;
    let cache = cache();
    let dir = folder(&[("cases/tiny.yaml", TINY_CASE)]);
    let args = args(cache.path(), links.path(), "3.8");
    let spawn = |n: usize| {
        crosspickle(dir.path())
            .args(&args)
            .arg("--json")
            .arg(dir.path().join(format!("r{n}.json")))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("crosspickle starts")
    };
    let (a, b) = (spawn(1), spawn(2));
    for (n, child) in [(1, a), (2, b)] {
        let out = Run::from(child.wait_with_output().unwrap());
        out.expect_code(0)?;
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(format!("r{n}.json"))).unwrap())
                .unwrap();
        check(
            runs(&json)[0]["verdict"] == "ok",
            format!("process {n}: {:?}", runs(&json)),
        )?;
    }
    let made = envs(cache.path());
    check(made.len() == 1, format!("one environment, got {made:?}"))?;
    check(
        leftovers(cache.path()).is_empty(),
        format!("leftovers: {:?}", leftovers(cache.path())),
    )
}

/// tinypkg's wheel for 3.8, a cache folder, and a folder of cases: tinypkg's, one that needs
/// nothing, and `more`.
type Setup = (tempfile::TempDir, tempfile::TempDir, tempfile::TempDir);
fn tiny_and_plain(more: &[(&str, &str)]) -> Result<Setup, libtest_mimic::Failed> {
    let py = python("3.8").expect("3.8");
    let links = wheels(&py, &[("tinypkg", "1.0")])?;
    let mut files = vec![
        ("cases/tiny.yaml", TINY_CASE),
        ("cases/plain.yaml", "title: no requires\ncode: pass\n"),
    ];
    files.extend_from_slice(more);
    Ok((links, cache(), folder(&files)))
}

trial!(install_failure_is_env_error, needs = &["3.8"]);
fn install_failure_is_env_error() -> TestResult {
    let (links, cache, dir) = tiny_and_plain(&[(
        "cases/missing.yaml",
        "title: needs what does not exist\nrequires: [\"crosspickle-no-such-package==1.0\"]\nparams:\n  n: [1, 2]\ncode: pass\n",
    )])?;
    let (run, json) = run(dir.path(), &args(cache.path(), links.path(), "3.8"));
    run.expect_code(3)?;
    let all = runs(&json);
    check(all.len() == 4, format!("four runs: {:?}", verdicts(&json)))?;
    for r in &all {
        let want = if r["case"] == "missing" {
            "env-error"
        } else {
            "ok"
        };
        check(
            r["verdict"] == want,
            format!("{}: {} (wanted {want})", r["case"], r["verdict"]),
        )?;
    }
    let missing = find_run(&json, "missing", "cpython-3.8").unwrap();
    let reason = missing["reason"].as_str().unwrap_or_default();
    check(
        reason.contains("pip install failed") || reason.contains("uv pip install failed"),
        format!("the reason names the step: {reason}"),
    )?;
    check(
        reason.contains("crosspickle-no-such-package"),
        format!("the installer's message: {reason}"),
    )?;
    check(
        run.stdout.contains("crosspickle-no-such-package"),
        format!("the terminal shows it:\n{}", run.stdout),
    )?;
    check(
        envs(cache.path()).len() == 1,
        "only tinypkg's environment exists",
    )?;
    check(
        leftovers(cache.path()).is_empty(),
        format!("leftovers: {:?}", leftovers(cache.path())),
    )
}

trial!(param_placeholder_one_env_per_value, needs = &["3.8"]);
fn param_placeholder_one_env_per_value() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = wheels(&py, &[("tinypkg", "1.0"), ("tinypkg", "2.0")])?;
    let cache = cache();
    let case = "title: one environment per version\nparams:\n  v: [\"1.0\", \"2.0\"]\nrequires: [\"tinypkg=={v}\"]\n\
                code: |\n  import tinypkg\n  assert tinypkg.__version__ == v, (tinypkg.__version__, v)\n";
    let dir = folder(&[("cases/pv.yaml", case)]);
    let (run, json) = run(dir.path(), &args(cache.path(), links.path(), "3.8"));
    run.expect_code(0)?;
    check(
        verdicts(&json)
            .iter()
            .filter(|v| v.ends_with("=\"ok\""))
            .count()
            == 2,
        format!("{:?}", verdicts(&json)),
    )?;
    let made = envs(cache.path());
    check(made.len() == 2, format!("two environments, got {made:?}"))?;
    let reqs: Vec<String> = made
        .iter()
        .map(|e| std::fs::read_to_string(e.join("crosspickle-env.json")).unwrap())
        .collect();
    check(
        reqs.iter().any(|m| m.contains("tinypkg==1.0"))
            && reqs.iter().any(|m| m.contains("tinypkg==2.0")),
        format!("{reqs:?}"),
    )
}

trial!(markers_and_old_pips, needs = &["3.6", "3.13", "pypy"]);
fn markers_and_old_pips() -> TestResult {
    let py = python("3.13").expect("3.13");
    let links = wheels(&py, &[("tinypkg", "1.0"), ("tinypkg", "2.0")])?;
    let cache = cache();
    let case = r#"title: markers choose per interpreter
requires:
  - "tinypkg==1.0; python_version < '3.7'"
  - "tinypkg==2.0; python_version >= '3.7'"
code: |
  import sys, tinypkg
  want = "1.0" if sys.version_info < (3, 7) else "2.0"
  assert tinypkg.__version__ == want, (tinypkg.__version__, want)
"#;
    let dir = folder(&[("cases/m.yaml", case)]);
    let (run, json) = run(
        dir.path(),
        &args(cache.path(), links.path(), "3.6,3.13,pypy"),
    );
    run.expect_code(0)?;
    check(
        runs(&json).len() == 3 && runs(&json).iter().all(|r| r["verdict"] == "ok"),
        format!("{:?}", verdicts(&json)),
    )?;
    check(
        envs(cache.path()).len() == 3,
        "one environment per interpreter",
    )
}

trial!(cache_list_and_clean, needs = &["3.8"]);
fn cache_list_and_clean() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = wheels(&py, &[("tinypkg", "1.0")])?;
    let cache = cache();
    let dir = folder(&[("cases/tiny.yaml", TINY_CASE)]);
    run(dir.path(), &args(cache.path(), links.path(), "3.8"))
        .0
        .expect_code(0)?;
    let cache_cmd = |args: &[&str]| cache_command(dir.path(), cache.path(), args);
    let list = cache_cmd(&["list", "--json"]);
    list.expect_code(0)?;
    let value: serde_json::Value =
        serde_json::from_str(&list.stdout).map_err(|e| format!("{e}: {}", list.stdout))?;
    let listed = value["environments"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    check(
        listed.len() == 1,
        format!("one environment listed: {value}"),
    )?;
    let env = &listed[0];
    check(
        env["interpreter"]
            .as_str()
            .is_some_and(|i| i.starts_with("cpython-3.8")),
        format!("{env}"),
    )?;
    check(
        env["requirements"] == serde_json::json!(["tinypkg==1.0"]),
        format!("{env}"),
    )?;
    check(
        env["size_bytes"].as_u64().is_some_and(|s| s > 0) && env["last_used"].is_u64(),
        format!("{env}"),
    )?;
    let table = cache_cmd(&["list"]);
    check(
        table.stdout.contains("tinypkg==1.0") && table.stdout.contains("cpython-3.8"),
        table.stdout.clone(),
    )?;

    cache_cmd(&["clean"]).expect_code(0)?;
    check(envs(cache.path()).is_empty(), "clean removes environments")?;
    check(
        cache.path().join("interpreters.json").exists(),
        "clean keeps the probe answers",
    )?;
    cache_cmd(&["clean", "--all"]).expect_code(0)?;
    check(
        !cache.path().join("interpreters.json").exists(),
        "clean --all removes the probe answers",
    )?;
    let empty = cache_cmd(&["list"]);
    check(empty.stdout.contains("none"), empty.stdout)
}

trial!(cache_prune_removes_what_is_unused, needs = &["3.8"]);
/// `cache prune`: an environment used within `--unused-for` days stays, one unused for longer
/// goes (and is made again by its next run); what a crashed build left goes, and so do the
/// compiled forms of other drivers, this one's staying.
fn cache_prune_removes_what_is_unused() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = wheels(&py, &[("tinypkg", "1.0")])?;
    let cache = cache();
    let dir = folder(&[("cases/tiny.yaml", TINY_CASE)]);
    let tiny = || run(dir.path(), &args(cache.path(), links.path(), "3.8")).0;
    tiny().expect_code(0)?;
    let cache_cmd = |args: &[&str]| cache_command(dir.path(), cache.path(), args);
    let drivers = cache.path().join("drivers");
    let ours: Vec<PathBuf> = std::fs::read_dir(&drivers)?
        .flatten()
        .map(|e| e.path())
        .collect();
    check(ours.len() == 1, format!("one driver's folder: {ours:?}"))?;
    let other = drivers.join("0123456789abcdef");
    std::fs::create_dir(&other)?;
    std::fs::write(other.join("0123.case"), vec![b'x'; 3000])?;
    // Of ours: the forms this run used stay, one unread for 40 days goes.
    let used: Vec<PathBuf> = std::fs::read_dir(&ours[0])?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "case" || e == "bin"))
        .collect();
    let unread = ours[0].join("0123456789abcdef01234567.case");
    std::fs::write(&unread, vec![b'x'; 2048])?;
    let forty_days = std::time::SystemTime::now() - Duration::from_secs(40 * 86400);
    std::fs::File::options()
        .append(true)
        .open(&unread)?
        .set_times(
            std::fs::FileTimes::new()
                .set_accessed(forty_days)
                .set_modified(forty_days),
        )?;
    let crashed = cache.path().join("envs").join(".tmp-0123456789abcdef-4242");
    std::fs::create_dir_all(crashed.join("bin"))?;
    // An environment whose interpreter is gone (its python a link to nothing).
    let orphan = cache.path().join("envs").join("fedcba9876543210");
    std::fs::create_dir_all(orphan.join("bin"))?;
    std::fs::copy(
        envs(cache.path())[0].join("crosspickle-env.json"),
        orphan.join("crosspickle-env.json"),
    )?;
    std::os::unix::fs::symlink("/nonexistent/python3.8", orphan.join("bin/python"))?;
    let list = cache_cmd(&["list"]);
    check(
        list.stdout
            .contains("3 KiB of it for other versions of crosspickle"),
        format!("list: {}", list.stdout),
    )?;

    let pruned = cache_cmd(&["prune"]);
    pruned.expect_code(0)?;
    check(
        pruned
            .stdout
            .contains("removed 0 environments unused for 30 days and 2 unusable folders (unfinished, or whose interpreter is gone)")
            && !orphan.exists()
            && pruned
                .stdout
                .contains("compiled forms unread as long (1 file, 2 KiB), and those of 1 other driver (3 KiB)"),
        format!("prune: {}", pruned.stdout),
    )?;
    check(
        !unread.exists() && !used.is_empty() && used.iter().all(|p| p.exists()),
        format!("the unread form goes, the used ones stay: {used:?}"),
    )?;
    check(
        envs(cache.path()).len() == 1,
        "the environment just used stays",
    )?;
    check(
        leftovers(cache.path()).is_empty(),
        format!("{:?}", leftovers(cache.path())),
    )?;
    check(
        !other.exists() && ours[0].is_dir(),
        "the other driver's forms go, ours stay",
    )?;

    // Last used 40 days ago: it goes, with `--unused-for 30` (the default), not with 41.
    let old = std::time::SystemTime::now() - Duration::from_secs(40 * 86400);
    let env = envs(cache.path()).remove(0);
    for name in ["crosspickle-env.json", ".crosspickle-last-used"] {
        if let Ok(f) = std::fs::File::options().append(true).open(env.join(name)) {
            f.set_modified(old)?;
        }
    }
    let kept = cache_cmd(&["prune", "--unused-for", "41"]);
    check(
        kept.stdout
            .contains("removed 0 environments unused for 41 days")
            && envs(cache.path()).len() == 1,
        format!("prune --unused-for 41: {}", kept.stdout),
    )?;
    let gone = cache_cmd(&["prune"]);
    check(
        gone.stdout
            .contains("removed 1 environment unused for 30 days")
            && envs(cache.path()).is_empty(),
        format!("prune: {}", gone.stdout),
    )?;
    tiny().expect_code(0)?;
    check(envs(cache.path()).len() == 1, "made again by its next run")
}

trial!(round_trip_both_ends_in_their_envs, needs = &["3.8", "3.13"]);
fn round_trip_both_ends_in_their_envs() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = wheels(&py, &[("tinypkg", "1.0")])?;
    let cache = cache();
    let case = r#"title: both ends see the package
requires: ["tinypkg==1.0"]
dump: |
  import pickle, sys, tinypkg
  assert tinypkg.__file__.startswith(sys.prefix)
  data = pickle.dumps((tinypkg.__version__, sys.version_info[:2]), protocol=2)
load: |
  import pickle, sys, tinypkg
  assert tinypkg.__file__.startswith(sys.prefix)
  version, made_by = pickle.loads(data)
  assert version == tinypkg.__version__ == "1.0"
"#;
    let dir = folder(&[("cases/rt.yaml", case)]);
    let (run, json) = run(dir.path(), &args(cache.path(), links.path(), "3.8,3.13"));
    run.expect_code(0)?;
    check(
        runs(&json).len() == 4 && runs(&json).iter().all(|r| r["verdict"] == "ok"),
        format!("{:?}", verdicts(&json)),
    )?;
    check(
        envs(cache.path()).len() == 2,
        "one environment per interpreter, shared by dumps and loads",
    )
}

trial!(uv_when_on_path, by = uv_trial);
fn uv_when_on_path() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = wheels(&py, &[("tinypkg", "1.0")])?;
    let cache = cache();
    let uv_cache = tempfile::tempdir().expect("tempdir");
    let dir = folder(&[("cases/tiny.yaml", TINY_CASE)]);
    let uv = which_uv().expect("checked by uv_trial");
    check(uv.is_file(), format!("uv not found at {}", uv.display()))?;
    let path = std::env::join_paths(std::iter::once(uv.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = crosspickle(dir.path())
        .args(args(cache.path(), links.path(), "3.8"))
        .env("PATH", path)
        .env("CROSSPICKLE_INSTALLER", "uv")
        .env("UV_CACHE_DIR", uv_cache.path())
        .output()
        .expect("crosspickle runs");
    Run::from(out).expect_code(0)?;
    let made = envs(cache.path());
    check(made.len() == 1, format!("one environment, got {made:?}"))?;
    let meta = std::fs::read_to_string(made[0].join("crosspickle-env.json")).unwrap();
    check(meta.contains("\"installer\": \"uv\""), meta)
}

// A requirement that is an installer option (`--index-url=…`) is refused at its YAML line with
// what to do instead; nothing is installed or run.
trial!(
    a_requirement_that_is_an_option_is_refused,
    needs = &["3.12"]
);
fn a_requirement_that_is_an_option_is_refused() -> TestResult {
    let dir = folder(&[(
        "cases/option.yaml",
        "title: picks the index\nrequires:\n  - six\n  - \"--index-url=http://example.invalid/simple\"\ncode: |\n  import six\n",
    )]);
    let mut args = vec!["run".to_string(), "cases".into()];
    args.extend(python_args(&["3.12"]));
    let run = Run::from(crosspickle(dir.path()).args(&args).output().unwrap());
    run.expect_code(2)?;
    check(
        run.stderr.contains("cases/option.yaml:4:5: ")
            && run
                .stderr
                .contains("is an installer option, not a PEP 508 requirement")
            && run.stderr.contains("--find-links DIR"),
        &run.stderr,
    )
}

/// uv and Python 3.6 and 3.7 here, for the uv that comes with crosspickle.
fn uv_and_old_pythons_trial(name: &str, test: fn() -> TestResult) -> Trial {
    if which_uv().is_some() && python("3.6").is_some() && python("3.7").is_some() {
        crate::support::timed(name, test)
    } else {
        crate::support::timed(name, test)
            .with_kind("needs uv and python 3.6 and 3.7")
            .with_ignored_flag(true)
    }
}

trial!(
    the_uv_beside_crosspickle_makes_the_environments,
    by = uv_and_old_pythons_trial
);
/// crosspickle installed as its wheel installs it, with uv in the same folder (pip, pipx and
/// `uv tool install` put the wheel's dependency there) and no uv on PATH: that uv makes the
/// environments, for 3.6 and 3.7 too, and `--download-python` runs it as well (offline, asked
/// for a version uv has no download of: it only has to be found).
fn the_uv_beside_crosspickle_makes_the_environments() -> TestResult {
    let py = python("3.7").expect("3.7");
    let links = wheels(&py, &[("tinypkg", "1.0")])?;
    let cache = cache();
    let uv_cache = tempfile::tempdir()?;
    let dir = folder(&[("cases/tiny.yaml", TINY_CASE)]);
    let uv = which_uv().expect("checked by the gate");
    // The installed layout: bin/crosspickle and bin/uv (a copy of the binary under test, or a
    // hard link to it where the file system allows).
    let installed = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
    let bin_dir = installed.path().join("bin");
    std::fs::create_dir(&bin_dir)?;
    let exe = bin_dir.join("crosspickle");
    if std::fs::hard_link(bin(), &exe).is_err() {
        std::fs::copy(bin(), &exe)?;
    }
    std::os::unix::fs::symlink(&uv, bin_dir.join("uv"))?;
    // PATH without any uv.
    let path = std::env::join_paths(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|d| !d.join("uv").exists()),
    )?;
    let mut args = args(cache.path(), links.path(), "3.6");
    args.extend([
        "--python".into(),
        "3.7".into(),
        "--json".into(),
        "r.json".into(),
    ]);
    let out = Run::from(
        Command::new(&exe)
            .args(&args)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("UV_CACHE_DIR", uv_cache.path())
            .env("NO_COLOR", "1")
            .env_remove("CI")
            .env_remove("CROSSPICKLE_INSTALLER")
            .env_remove("CROSSPICKLE_UV")
            .env_remove("CROSSPICKLE_PYTHONS_TOML")
            .output()?,
    );
    out.expect_code(0)?;
    let made = envs(cache.path());
    check(made.len() == 2, format!("two environments, got {made:?}"))?;
    for env in &made {
        let meta = std::fs::read_to_string(env.join("crosspickle-env.json"))?;
        check(
            meta.contains("\"installer\": \"uv\""),
            format!("{}: {meta}", env.display()),
        )?;
    }
    let json = json_at(&dir.path().join("r.json"));
    let ok = runs(&json).iter().filter(|r| r["verdict"] == "ok").count();
    check(ok == 2, format!("{ok} ok runs of 2: {}", out.stdout))?;
    // `crosspickle cache`, alone, reports what the run left: the environments, and uv's cache
    // that they link their packages from.
    let out = Run::from(
        Command::new(&exe)
            .args(["cache", "--cache-dir"])
            .arg(cache.path())
            .env("UV_CACHE_DIR", uv_cache.path())
            .output()?,
    );
    out.expect_code(0)?;
    let want = format!(
        "uv's cache, which the environments uv made link their packages from: {}",
        path_str(uv_cache.path())
    );
    check(
        out.stdout.contains("2 environments") && out.stdout.contains(&want),
        format!(
            "`crosspickle cache`, wanted `2 environments` and `{want}`: {}",
            out.stdout
        ),
    )?;
    // --download-python finds the same uv (no request to install: it only has to find it).
    let out = Run::from(
        Command::new(&exe)
            .args(["pythons", "--download-python", "always", "--python", "3.99"])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("UV_OFFLINE", "1")
            .env("CROSSPICKLE_CACHE_DIR", cache.path())
            .env_remove("CROSSPICKLE_UV")
            .output()?,
    );
    let want = format!("installing `3.99` with {}", path_str(&bin_dir.join("uv")));
    check(
        out.stderr.contains(&want),
        format!(
            "--download-python did not find the uv beside crosspickle (`{want}`): {}",
            out.stderr
        ),
    )
}

// Requirements are parsed as PEP 508: one that is not is refused at its YAML line with
// pep508's reason, and one that becomes invalid once a param is put in is refused at its line
// too, naming the param value that breaks it; nothing is installed or run (exit 2). Extras,
// versions, markers and URLs pass, with params put in.
trial!(
    requirements_are_pep_508_before_and_after_params,
    needs = &["3.12"]
);
fn requirements_are_pep_508_before_and_after_params() -> TestResult {
    let dir = folder(&[
        (
            "bad/broken.yaml",
            "title: broken requirements\nrequires:\n  - six\n  - \"six==\"\n  - \"tinypkg=={v}\"\nparams:\n  v: [\"1.0\", \"1.0; python_version >\"]\ncode: |\n  pass\n",
        ),
        (
            "good/fine.yaml",
            "title: fine requirements\nrequires:\n  - \"six[extra]>=1.0,<2; python_version >= '3'\"\n  - \"tinypkg=={v}\"\n  - \"pkg @ file:///tmp/pkg-1.0-py3-none-any.whl\"\nparams:\n  v: [\"1.0\", \"2.0.post1\"]\ncode: |\n  pass\n",
        ),
    ]);
    let mut args = vec!["run".to_string(), "bad".into()];
    args.extend(python_args(&["3.12"]));
    let run = Run::from(crosspickle(dir.path()).args(&args).output()?);
    run.expect_code(2)?;
    let lines: Vec<&str> = run.stderr.lines().collect();
    check(
        lines.iter().any(|l| {
            l.contains("bad/broken.yaml:4:5: ")
                && l.contains("\"six==\" in `requires` is not a PEP 508 requirement (")
        }),
        format!("six== refused at line 4:\n{}", run.stderr),
    )?;
    check(
        lines.iter().any(|l| {
            l.contains("bad/broken.yaml:5:5: ")
                && l.contains("\"tinypkg=={v}\" in `requires` becomes \"tinypkg==1.0; python_version >\" with v=")
                && l.contains("1.0; python_version >")
                && l.contains("which is not a PEP 508 requirement")
        }),
        format!("the param value that breaks tinypkg=={{v}} named at line 5:\n{}", run.stderr),
    )?;
    check(
        !run.stderr.contains("bad/broken.yaml:3:"),
        format!("six is fine:\n{}", run.stderr),
    )?;
    let list = Run::from(crosspickle(dir.path()).args(["list", "good"]).output()?);
    list.expect_code(0)?;
    check(
        list.stdout.contains("fine requirements"),
        format!(
            "extras, markers, params and URLs pass:\n{}{}",
            list.stdout, list.stderr
        ),
    )
}
