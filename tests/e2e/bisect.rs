//! `crosspickle bisect` end to end, hermetic: real interpreters for interpreter mode, a folder
//! of wheels made here for package mode (pip with no index), a git repository made here whose
//! "build" script makes a wrapper around a real Python for commit mode, and the exit codes of
//! `bisect-step`. Each test has its own cache folder.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::*;

const FLIP: &str = "title: fails on 3.8 and 3.9 only\npython: \">=3.7\"\ncode: |\n  import sys\n  assert sys.version_info[:2] not in ((3, 8), (3, 9)), 'broken on 3.8 and 3.9'\n";

/// Run `crosspickle ARGS --json FILE` in `dir` with `cache` as its cache folder and `env` on top.
pub fn bisect_json(dir: &Path, cache: &Path, env: &[(&str, &str)], args: &[&str]) -> (Run, Value) {
    let json = dir.join("bisect.json");
    let _ = std::fs::remove_file(&json);
    let mut cmd = crosspickle(dir);
    cmd.env("CROSSPICKLE_CACHE_DIR", cache)
        .args(args)
        .arg("--json")
        .arg(&json);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("crosspickle runs");
    (Run::from(out), json_at(&json))
}

pub fn boundaries(report: &Value) -> Vec<Value> {
    report["boundaries"].as_array().cloned().unwrap_or_default()
}

pub fn steps(report: &Value) -> Vec<Value> {
    report["steps"].as_array().cloned().unwrap_or_default()
}

fn label(point: &Value) -> String {
    point["label"].as_str().unwrap_or("").to_string()
}

trial!(
    interpreters_every_boundary,
    needs = &["3.6", "3.7", "3.8", "3.9", "3.10"]
);
fn interpreters_every_boundary() -> TestResult {
    let dir = folder(&[("cases/flip.yaml", FLIP)]);
    let cache = tempfile::tempdir()?;
    let (run, report) = bisect_json(
        dir.path(),
        cache.path(),
        &[],
        &[
            "bisect",
            "flip",
            "--python",
            "cpython3.6,cpython3.7,cpython3.8,cpython3.9,cpython3.10",
        ],
    );
    run.expect_code(0)?;
    let b = boundaries(&report);
    check(
        b.len() == 2,
        format!(
            "two boundaries (the change and its revert), got {b:?}\n{}",
            run.stdout
        ),
    )?;
    check(
        label(&b[0]["last_old"]).starts_with("cpython-3.7.")
            && label(&b[0]["first_new"]).starts_with("cpython-3.8."),
        format!("first boundary 3.7 -> 3.8: {:?}", b[0]),
    )?;
    check(
        b[0]["last_old"]["outcome"]["outcome"] == "pass",
        format!("{:?}", b[0]),
    )?;
    check(
        b[0]["first_new"]["outcome"]["outcome"] == "fail"
            && b[0]["first_new"]["outcome"]["exception"] == "AssertionError",
        format!("{:?}", b[0]),
    )?;
    check(
        label(&b[1]["last_old"]).starts_with("cpython-3.9.")
            && label(&b[1]["first_new"]).starts_with("cpython-3.10."),
        format!("second boundary 3.9 -> 3.10: {:?}", b[1]),
    )?;
    check(
        b[1]["first_new"]["outcome"]["outcome"] == "pass",
        format!("{:?}", b[1]),
    )?;
    // 3.6 is outside the case's `python`: a skipped step, not a boundary.
    let s = steps(&report);
    check(s.len() == 5, format!("five steps, got {}", s.len()))?;
    check(
        s[0]["state"] == "skip" && label(&s[0]).starts_with("cpython-3.6."),
        format!("3.6 skipped: {:?}", s[0]),
    )?;
    check(
        run.stdout.contains("step 3: cpython-3.8.") && run.stdout.contains("fail: AssertionError"),
        run.stdout.clone(),
    )?;
    check(
        run.stdout
            .contains("last with the old outcome: cpython-3.9."),
        run.stdout.clone(),
    )
}

/// Wheels of `tinypkg`: VALUE is 1 up to 1.4 and 2 from 2.0; 1.3 is not a zip at all.
const MAKE_WHEELS: &str = r#"
import base64, hashlib, os, sys, zipfile
out = sys.argv[1]
for version, value, broken in [("1.0", 1, 0), ("1.1", 1, 0), ("1.2", 1, 0), ("1.3", 1, 1), ("1.4", 1, 0), ("2.0", 2, 0), ("2.1", 2, 0)]:
    path = os.path.join(out, "tinypkg-%s-py3-none-any.whl" % version)
    if broken:
        open(path, "wb").write(b"not a zip file")
        continue
    info = "tinypkg-%s.dist-info" % version
    files = [
        ("tinypkg/__init__.py", "VALUE = %d\n" % value),
        (info + "/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: %s\n" % version),
        (info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: crosspickle-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = []
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files:
            data = text.encode()
            z.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
        record.append(info + "/RECORD,,")
        z.writestr(info + "/RECORD", "\n".join(record) + "\n")
"#;

trial!(package_releases_with_a_broken_one, needs = &["3.8"]);
fn package_releases_with_a_broken_one() -> TestResult {
    let (dir, wheels) = with_tinypkg_wheels("title: tinypkg's value\nrequires: [\"tinypkg>=1\"]\ncode: |\n  import tinypkg\n  assert tinypkg.VALUE == 1, 'the value changed'\n")?;
    let cache = tempfile::tempdir()?;
    // No index at all: pip sees only the folder (as a user's offline configuration would say).
    let env = [("PIP_NO_INDEX", "1"), ("PIP_CONFIG_FILE", "/dev/null")];
    let wheels_arg = path_str(&wheels);
    let (run, report) = bisect_json(
        dir.path(),
        cache.path(),
        &env,
        &[
            "bisect",
            "value",
            "--package",
            "tinypkg",
            "--find-links",
            &wheels_arg,
            "--python",
            "cpython3.8",
        ],
    );
    run.expect_code(0)?;
    let b = boundaries(&report);
    check(
        b.len() == 1,
        format!("one boundary, got {b:?}\n{}", run.stdout),
    )?;
    check(
        label(&b[0]["last_old"]) == "1.4" && label(&b[0]["first_new"]) == "2.0",
        format!("1.4 -> 2.0: {:?}", b[0]),
    )?;
    check(
        b[0]["untested"].is_null(),
        format!("nothing untested at the boundary: {:?}", b[0]),
    )?;
    let s = steps(&report);
    let broken = s.iter().find(|s| s["label"] == "tinypkg==1.3");
    check(
        broken.is_some_and(|s| {
            s["state"] == "skip"
                && s["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("does not install"))
        }),
        format!("1.3 is skipped as not installable: {s:?}"),
    )?;
    check(
        report["candidates"].as_array().map(Vec::len) == Some(7),
        format!("seven releases: {:?}", report["candidates"]),
    )?;
    check(
        s.len() < 7,
        format!("a binary search, not a walk: {} steps", s.len()),
    )?;

    // --versions instead of pip's list; environments made above are reused.
    let (run, report) = bisect_json(
        dir.path(),
        cache.path(),
        &env,
        &[
            "bisect",
            "value",
            "--package",
            "tinypkg",
            "--find-links",
            &wheels_arg,
            "--python",
            "cpython3.8",
            "--versions",
            "1.0,1.2,2.1",
        ],
    );
    run.expect_code(0)?;
    let b = boundaries(&report);
    check(
        b.len() == 1 && label(&b[0]["last_old"]) == "1.2" && label(&b[0]["first_new"]) == "2.1",
        format!("{b:?}"),
    )?;
    check(
        steps(&report)
            .iter()
            .all(|s| s["notes"][0] == "environment cached"),
        format!("cached: {:?}", steps(&report)),
    )?;

    // No change between the ends: exit 1 and say so.
    let (run, report) = bisect_json(
        dir.path(),
        cache.path(),
        &env,
        &[
            "bisect",
            "value",
            "--package",
            "tinypkg",
            "--find-links",
            &wheels_arg,
            "--python",
            "cpython3.8",
            "--good",
            "1.0",
            "--bad",
            "1.4",
        ],
    );
    run.expect_code(1)?;
    check(boundaries(&report).is_empty(), format!("{report}"))?;
    check(
        report["conclusion"]
            .as_str()
            .is_some_and(|c| c.starts_with("no change")),
        format!("{}", report["conclusion"]),
    )
}

const BUILD_SCRIPT: &str = r#"#!/bin/sh
# A stand-in for configure && make: the "interpreter" is a wrapper around a real Python that
# tells the case which flavour of the sources it was built from.
set -e
cat "$CROSSPICKLE_SRC/flavour" >> "$BUILD_LOG"
if [ -e "$CROSSPICKLE_SRC/broken" ]; then echo "this commit does not build" >&2; exit 1; fi
mkdir -p "$CROSSPICKLE_PREFIX/bin"
cp "$CROSSPICKLE_SRC/flavour" "$CROSSPICKLE_PREFIX/flavour"
cat > "$CROSSPICKLE_PREFIX/bin/python" <<WRAPPER
#!/bin/sh
here=\$(dirname "\$0")
CROSSPICKLE_FLAVOUR=\$(cat "\$here/../flavour")
export CROSSPICKLE_FLAVOUR
exec "$REAL_PYTHON" "\$@"
WRAPPER
chmod +x "$CROSSPICKLE_PREFIX/bin/python"
"#;

pub fn git(repo: &Path, args: &[&str]) -> TestResult {
    let status = Command::new("git")
        .current_dir(repo)
        .args([
            "-c",
            "user.name=crosspickle",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .status()?;
    check(status.success(), format!("git {args:?}"))
}

trial!(commits_with_a_broken_build_and_the_cache, needs = &["3.8"]);
fn commits_with_a_broken_build_and_the_cache() -> TestResult {
    let real = python("3.8").expect("3.8");
    let dir = folder(&[(
        "cases/flavour.yaml",
        "title: the flavour\ncode: |\n  import os\n  assert os.environ.get('CROSSPICKLE_FLAVOUR') == 'old', 'the flavour changed'\n",
    )]);
    // c0 (tag v1.0) old; c3 does not build; c5 turns the flavour new; c6 (tag v2.0).
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo)?;
    git(&repo, &["init", "-q"])?;
    std::fs::write(repo.join("crosspickle-build.sh"), BUILD_SCRIPT)?;
    std::fs::write(repo.join("flavour"), "old\n")?;
    git(&repo, &["add", "-A"])?;
    git(&repo, &["commit", "-qm", "c0 initial"])?;
    git(&repo, &["tag", "v1.0"])?;
    for i in 1..=6 {
        match i {
            3 => std::fs::write(repo.join("broken"), "x")?,
            4 => std::fs::remove_file(repo.join("broken"))?,
            5 => std::fs::write(repo.join("flavour"), "new\n")?,
            _ => std::fs::write(repo.join("notes"), format!("{i}\n"))?,
        }
        git(&repo, &["add", "-A"])?;
        git(&repo, &["commit", "-qm", &format!("c{i} change {i}")])?;
    }
    git(&repo, &["tag", "v2.0"])?;
    let cache = tempfile::tempdir()?;
    let build_log = dir.path().join("builds.log");
    let (build_log_s, real_s) = (path_str(&build_log), path_str(&real));
    let env = [
        ("BUILD_LOG", build_log_s.as_str()),
        ("REAL_PYTHON", real_s.as_str()),
    ];
    let args = [
        "bisect",
        "flavour",
        "--cpython",
        "repo",
        "--good",
        "v1.0",
        "--bad",
        "v2.0",
        "--keep",
        "v1.0",
    ];

    let (run, report) = bisect_json(dir.path(), cache.path(), &env, &args);
    run.expect_code(0)?;
    let b = boundaries(&report);
    check(
        b.len() == 1,
        format!("one boundary, got {b:?}\n{}", run.stdout),
    )?;
    check(
        b[0]["first_new"]["subject"] == "c5 change 5"
            && b[0]["last_old"]["subject"] == "c4 change 4",
        format!("c4 -> c5: {:?}", b[0]),
    )?;
    check(
        run.stdout.contains("\"c5 change 5\""),
        format!("the result names the commit's subject:\n{}", run.stdout),
    )?;
    let s = steps(&report);
    check(
        s.iter().any(|s| {
            s["state"] == "skip"
                && s["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("does not build"))
        }),
        format!("the broken commit is skipped: {s:?}"),
    )?;
    let first_builds = std::fs::read_to_string(&build_log)?.lines().count();
    check(
        report["builds"] == first_builds as u64 && first_builds == s.len(),
        format!("one build per step: {first_builds}, {}", report["builds"]),
    )?;

    // Again: everything comes from the cache, the failed build included.
    let (run, report) = bisect_json(dir.path(), cache.path(), &env, &args);
    run.expect_code(0)?;
    check(
        report["builds"] == 0,
        format!("no build the second time: {}", report["builds"]),
    )?;
    check(
        std::fs::read_to_string(&build_log)?.lines().count() == first_builds,
        "the build script did not run again",
    )?;
    let b = boundaries(&report);
    check(
        b.len() == 1 && b[0]["first_new"]["subject"] == "c5 change 5",
        format!("{b:?}"),
    )?;

    // The kept build is an interpreter by name.
    let (run, results) = bisect_json(
        dir.path(),
        cache.path(),
        &env,
        &["run", "cases/flavour.yaml", "--python", "cpython@v1.0"],
    );
    run.expect_code(0)?;
    let runs = runs(&results);
    check(
        runs.len() == 1 && runs[0]["verdict"] == "ok",
        format!(
            "the kept v1.0 runs the case (old flavour): {runs:?}\n{}",
            run.stderr
        ),
    )
}

trial!(step_exit_codes, needs = &["3.8"]);
fn step_exit_codes() -> TestResult {
    let python = path_str(&python("3.8").expect("3.8"));
    let dir = folder(&[
        ("cases/flip.yaml", FLIP),
        (
            "cases/py2.yaml",
            "title: only on 2\npython: \"<3\"\ncode: pass\n",
        ),
    ]);
    let step = |case: &str, python: &str, old: &str| -> Run {
        Run::from(
            crosspickle(dir.path())
                .args(["bisect-step", case, "--python", python, "--old", old])
                .output()
                .expect("runs"),
        )
    };
    // On 3.8 the case fails with AssertionError.
    step("flip", &python, "fail").expect_code(0)?;
    step("flip", &python, "fail:AssertionError").expect_code(0)?;
    step("flip", &python, "pass").expect_code(1)?;
    step("flip", &python, "error:ValueError").expect_code(1)?;
    // The run cannot happen: no interpreter there, or the case does not apply to it.
    step("flip", "/nonexistent/bin/python", "pass").expect_code(125)?;
    step("py2", &python, "pass").expect_code(125)?;
    // Bad input stops `git bisect run`.
    step("flip", &python, "sideways").expect_code(128)?;
    step("no-such-case", &python, "pass").expect_code(128)
}

trial!(git_bisect_run_with_bisect_step, needs = &["3.8"]);
/// `git bisect run crosspickle bisect-step …` over a repository whose commits hold a wrapper
/// interpreter directly: the flavour turns new at c3, and git names c3.
fn git_bisect_run_with_bisect_step() -> TestResult {
    let real = path_str(&python("3.8").expect("3.8"));
    let dir = folder(&[(
        "cases/flavour.yaml",
        "title: the flavour\ncode: |\n  import os\n  assert os.environ.get('CROSSPICKLE_FLAVOUR') == 'old', 'the flavour changed'\n",
    )]);
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo)?;
    git(&repo, &["init", "-q"])?;
    let wrapper = format!(
        "#!/bin/sh\nCROSSPICKLE_FLAVOUR=$(cat \"$(dirname \"$0\")/flavour\")\nexport CROSSPICKLE_FLAVOUR\nexec '{real}' \"$@\"\n"
    );
    std::fs::write(repo.join("python"), wrapper)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(repo.join("python"), std::fs::Permissions::from_mode(0o755))?;
    let mut hashes = Vec::new();
    for i in 0..=6 {
        std::fs::write(repo.join("flavour"), if i < 3 { "old" } else { "new" })?;
        std::fs::write(repo.join("notes"), format!("{i}\n"))?;
        git(&repo, &["add", "-A"])?;
        git(&repo, &["commit", "-qm", &format!("c{i}")])?;
        let out = Command::new("git")
            .current_dir(&repo)
            .args(["rev-parse", "HEAD"])
            .output()?;
        hashes.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    git(&repo, &["bisect", "start", &hashes[6], &hashes[0]])?;
    let cases = path_str(&dir.path().join("cases"));
    let cache = tempfile::tempdir()?;
    let out = Command::new("git")
        .current_dir(&repo)
        .env("CROSSPICKLE_CACHE_DIR", cache.path())
        .args(["bisect", "run"])
        .arg(bin())
        .args([
            "bisect-step",
            "flavour",
            &cases,
            "--python",
            "./python",
            "--old",
            "pass",
        ])
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    check(
        out.status.success(),
        format!(
            "git bisect run: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
    )?;
    check(
        stdout.contains(&format!("{} is the first bad commit", hashes[3])),
        format!("git names c3 ({}):\n{stdout}", hashes[3]),
    )
}

trial!(bad_input_failed_tools_and_ctrl_c, needs = &["3.8"]);
/// Exit 2 is for bad input only (a ref that is not a commit, a folder that is not a
/// repository); a tool that fails is exit 3; Ctrl-C during a build stops the build with every
/// process it started, exits 130, and does not remember the commit as one that does not build.
fn bad_input_failed_tools_and_ctrl_c() -> TestResult {
    let real = path_str(&python("3.8").expect("3.8"));
    let dir = folder(&[("cases/flip.yaml", FLIP)]);
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo)?;
    git(&repo, &["init", "-q"])?;
    for i in 0..3 {
        std::fs::write(repo.join("notes"), format!("{i}\n"))?;
        git(&repo, &["add", "-A"])?;
        git(&repo, &["commit", "-qm", &format!("c{i}")])?;
    }
    let cache = tempfile::tempdir()?;
    let bisect = |args: &[&str]| -> Run {
        Run::from(
            crosspickle(dir.path())
                .env("CROSSPICKLE_CACHE_DIR", cache.path())
                .arg("bisect")
                .arg("flip")
                .args(args)
                .output()
                .expect("runs"),
        )
    };
    let run = bisect(&["--cpython", "repo", "--good", "v9.9", "--bad", "HEAD"]);
    run.expect_code(2)?;
    check(run.stderr.contains("`v9.9` is not a commit"), &run.stderr)?;
    let run = bisect(&["--cpython", "cases", "--good", "a", "--bad", "b"]);
    run.expect_code(2)?;
    check(run.stderr.contains("is not a git repository"), &run.stderr)?;

    // An interpreter whose pip is broken: listing the releases fails, which is not bad input.
    let broken = dir.path().join("broken-pip");
    std::fs::create_dir_all(&broken)?;
    let wrapper = format!(
        "#!/bin/sh\ncase \" $* \" in *' -m pip '*) echo 'pip is broken here' >&2; exit 1;; esac\nexec '{real}' \"$@\"\n"
    );
    std::fs::write(broken.join("python"), wrapper)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        broken.join("python"),
        std::fs::Permissions::from_mode(0o755),
    )?;
    let run = bisect(&["--package", "tinypkg", "--python", "./broken-pip/python"]);
    run.expect_code(3)?;
    check(
        run.stderr
            .contains("cannot list the releases of `tinypkg` with pip: pip is broken here"),
        &run.stderr,
    )?;

    // Ctrl-C in the middle of a build with no time limit.
    let pid_file = dir.path().join("sleep.pid");
    let build = format!("sleep 300 & echo $! > '{}'; wait", path_str(&pid_file));
    let child = crosspickle(dir.path())
        .env("CROSSPICKLE_CACHE_DIR", cache.path())
        .args([
            "bisect",
            "flip",
            "--cpython",
            "repo",
            "--good",
            "HEAD~2",
            "--bad",
            "HEAD",
        ])
        .args(["--build-command", &build])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let started = std::time::Instant::now();
    while !pid_file.exists() && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    check(pid_file.exists(), "the build started")?;
    std::thread::sleep(std::time::Duration::from_millis(200));
    let sleep_pid: i32 = std::fs::read_to_string(&pid_file)?.trim().parse()?;
    let running = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
    };
    check(running(sleep_pid), "the build's sleep runs before Ctrl-C")?;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )?;
    let interrupted = std::time::Instant::now();
    let run = Run::from(child.wait_with_output()?);
    run.expect_code(130)?;
    check(
        interrupted.elapsed() < std::time::Duration::from_secs(10),
        format!("stopped in {:?}", interrupted.elapsed()),
    )?;
    check(run.stderr.contains("interrupted"), &run.stderr)?;
    std::thread::sleep(std::time::Duration::from_millis(300));
    check(
        !running(sleep_pid),
        "the build's own process was killed with it",
    )?;
    let failed: Vec<_> = walk_files(&cache.path().join("bisect"))
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("failed")))
        .collect();
    check(
        failed.is_empty(),
        format!("an interrupted build is not a failed one: {failed:?}"),
    )
}

/// Every file under `dir`.
fn walk_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

trial!(
    a_package_bisect_starts_at_the_cases_own_release,
    needs = &["3.8"]
);
/// With no `--good`, a package bisect starts at the oldest release the case's own params pin
/// (`tinypkg=={tinypkg}` with 1.2 and 2.1), not at the package's oldest (1.0): the releases
/// before it are neither candidates nor installed, and the change is still found.
fn a_package_bisect_starts_at_the_cases_own_release() -> TestResult {
    let (dir, wheels) = with_tinypkg_wheels("title: tinypkg's value\nparams:\n  tinypkg: [\"1.2\", \"2.1\"]\nrequires: [\"tinypkg=={tinypkg}\"]\ncode: |\n  import tinypkg\n  assert tinypkg.VALUE == 1, 'the value changed'\n")?;
    let cache = tempfile::tempdir()?;
    let env = [("PIP_NO_INDEX", "1"), ("PIP_CONFIG_FILE", "/dev/null")];
    let wheels_arg = path_str(&wheels);
    let (run, report) = bisect_json(
        dir.path(),
        cache.path(),
        &env,
        &[
            "bisect",
            "value",
            "--params",
            "tinypkg=2.1",
            "--package",
            "tinypkg",
            "--find-links",
            &wheels_arg,
            "--python",
            "cpython3.8",
        ],
    );
    run.expect_code(0)?;
    let candidates: Vec<&str> = report["candidates"]
        .as_array()
        .map(|c| c.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    check(
        candidates == ["1.2", "1.3", "1.4", "2.0", "2.1"],
        format!("from the case's 1.2 to the newest: {candidates:?}"),
    )?;
    let tried: Vec<String> = steps(&report)
        .iter()
        .map(|s| s["label"].as_str().unwrap_or("?").to_string())
        .collect();
    check(
        !tried
            .iter()
            .any(|l| l == "tinypkg==1.0" || l == "tinypkg==1.1"),
        format!("a release before the case's own was tried: {tried:?}"),
    )?;
    let b = boundaries(&report);
    check(
        b.len() == 1 && label(&b[0]["last_old"]) == "1.4" && label(&b[0]["first_new"]) == "2.0",
        format!("1.4 -> 2.0: {b:?}\n{}", run.stdout),
    )
}

trial!(
    a_package_bisect_tries_only_what_installs_here,
    needs = &["3.8"]
);
/// A real package with a real Requires-Python history, from the index pip is configured with:
/// attrs 25.4.0 and later need Python 3.9, so on 3.8 they are no candidates and the report says
/// how many were left out and why. From the case's own 25.1.0, three releases: three installs.
fn a_package_bisect_tries_only_what_installs_here() -> TestResult {
    let dir = folder(&[(
        "cases/attrs.yaml",
        "title: which attrs\nparams:\n  attrs: [\"25.1.0\"]\nrequires: [\"attrs=={attrs}\"]\ncode: |\n  from importlib.metadata import version\n  assert version('attrs') < '25.3', 'attrs ' + version('attrs')\n",
    )]);
    let cache = tempfile::tempdir()?;
    let (run, report) = bisect_json(
        dir.path(),
        cache.path(),
        &[],
        &[
            "bisect",
            "attrs",
            "--package",
            "attrs",
            "--python",
            "cpython3.8",
        ],
    );
    run.expect_code(0)?;
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let candidates = strings(&report["candidates"]);
    check(
        candidates == ["25.1.0", "25.2.0", "25.3.0"],
        format!("25.3.0 is the newest attrs for 3.8: {candidates:?}"),
    )?;
    let left = strings(&report["left_out"]["releases"]);
    check(
        ["25.4.0", "26.1.0"]
            .iter()
            .all(|r| left.iter().any(|l| l == r)),
        format!(
            "the releases that need 3.9 are left out: {}",
            report["left_out"]
        ),
    )?;
    let why = report["left_out"]["why"].as_str().unwrap_or("");
    check(
        why.contains("Requires-Python excludes cpython-3.8."),
        format!("why: {why}"),
    )?;
    let said = format!("{} releases left out: {}", left.len(), left.join(", "));
    check(
        run.stdout.contains(&said),
        format!("`{said}` in:\n{}", run.stdout),
    )?;
    check(
        steps(&report).len() == 3,
        format!("three installs: {:?}", steps(&report)),
    )?;
    let b = boundaries(&report);
    check(
        b.len() == 1
            && label(&b[0]["last_old"]) == "25.2.0"
            && label(&b[0]["first_new"]) == "25.3.0",
        format!("25.2.0 -> 25.3.0: {b:?}"),
    )?;
    // A release that cannot install here is refused as an end, with the ones that can.
    let (run, _) = bisect_json(
        dir.path(),
        cache.path(),
        &[],
        &[
            "bisect",
            "attrs",
            "--package",
            "attrs",
            "--python",
            "cpython3.8",
            "--bad",
            "25.4.0",
        ],
    );
    run.expect_code(2)?;
    check(
        run.stderr
            .contains("--bad 25.4.0: its Requires-Python excludes cpython-3.8.")
            && run.stderr.contains("25.3.0"),
        run.stderr.clone(),
    )
}

/// The case's code runs on tinypkg 1.2 and later only (an ImportError before, as a package too
/// old for the interpreter would give): two changes, 1.1 -> 1.2 and 1.4 -> 2.0.
const TOO_OLD_HERE: &str = "title: tinypkg's value\nrequires: [\"tinypkg>=1\"]\ncode: |\n  from importlib.metadata import version\n  if version('tinypkg') in ('1.0', '1.1'):\n      raise ImportError('too old for this Python')\n  import tinypkg\n  assert tinypkg.VALUE == 1, 'the value changed'\n";

trial!(a_package_bisect_lists_the_flip_first, needs = &["3.8"]);
/// Of two changes, the one that flips the outcome into the newest release's (1.4 -> 2.0, pass
/// to fail) is listed first, in the JSON, the conclusion and the summary; the earlier one
/// (1.1 -> 1.2, out of an ImportError) follows.
fn a_package_bisect_lists_the_flip_first() -> TestResult {
    let (dir, wheels) = with_tinypkg_wheels(TOO_OLD_HERE)?;
    let cache = tempfile::tempdir()?;
    let env = [("PIP_NO_INDEX", "1"), ("PIP_CONFIG_FILE", "/dev/null")];
    let wheels_arg = path_str(&wheels);
    // Four releases, four installs: 1.1 (ImportError), 1.2 and 1.4 (pass), 2.0 (fail).
    let (run, report) = bisect_json(
        dir.path(),
        cache.path(),
        &env,
        &[
            "bisect",
            "value",
            "--package",
            "tinypkg",
            "--find-links",
            &wheels_arg,
            "--python",
            "cpython3.8",
            "--versions",
            "1.1,1.2,1.4,2.0",
        ],
    );
    run.expect_code(0)?;
    let b = boundaries(&report);
    let pairs: Vec<(String, String)> = b
        .iter()
        .map(|b| (label(&b["last_old"]), label(&b["first_new"])))
        .collect();
    let want = [("1.4", "2.0"), ("1.1", "1.2")].map(|(a, b)| (a.to_string(), b.to_string()));
    check(
        pairs == want,
        format!("the flip first: {pairs:?}\n{}", run.stdout),
    )?;
    let conclusion = report["conclusion"].as_str().unwrap_or("");
    check(
        conclusion.starts_with("the outcome flipped to fail: AssertionError at 2.0 (from pass at 1.4), after 1 earlier change: at 1.2"),
        conclusion,
    )?;
    let summary = run.stdout.split("\n\n").last().unwrap_or("");
    check(summary.contains("(2 changes, the flip first):"), summary)?;
    let (flip, earlier) = (summary.find("1.4 -> 2.0"), summary.find("1.1 -> 1.2"));
    check(
        flip.is_some() && earlier.is_some() && flip < earlier,
        format!("the summary lists 1.4 -> 2.0 before 1.1 -> 1.2:\n{summary}"),
    )
}

/// A folder holding `case` as `cases/value.yaml` and tinypkg's local wheels (`MAKE_WHEELS`,
/// made by 3.8) in `wheels/`.
fn with_tinypkg_wheels(
    case: &str,
) -> Result<(tempfile::TempDir, std::path::PathBuf), libtest_mimic::Failed> {
    let python = python("3.8").expect("3.8");
    let dir = folder(&[("cases/value.yaml", case), ("make_wheels.py", MAKE_WHEELS)]);
    let wheels = dir.path().join("wheels");
    std::fs::create_dir_all(&wheels)?;
    let made = Command::new(&python)
        .arg(dir.path().join("make_wheels.py"))
        .arg(&wheels)
        .status()?;
    check(made.success(), "the wheels are made")?;
    Ok((dir, wheels))
}
