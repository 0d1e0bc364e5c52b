//! `--download-python`, offline and end to end: an interpreter of this machine packed as uv's
//! archives are (python-build-standalone's `install_only` layout: one `python/` folder), listed
//! in a local downloads JSON (`UV_PYTHON_DOWNLOADS_JSON_URL`), installed by the real uv into
//! crosspickle's cache, and used by a run; and the messages for what uv cannot install.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use libtest_mimic::Trial;

use crate::support::*;

/// uv as .ci/run gives it (CROSSPICKLE_TEST_UV), else on PATH.
pub fn which_uv() -> Option<PathBuf> {
    if let Some(uv) = std::env::var_os("CROSSPICKLE_TEST_UV").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(uv));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("uv"))
        .find(|p| p.is_file())
}

/// A trial that needs uv and the package index: ignored, saying which, when uv is missing or
/// cannot resolve `requirement` for 3.12 (asked only where 3.12 is there to run the trial).
pub fn index_trial(
    name: &str,
    needs: &[&str],
    requirement: &str,
    test: fn() -> TestResult,
) -> Trial {
    let Some(uv) = which_uv() else {
        return trial(name, needs, test)
            .with_kind("needs uv (CROSSPICKLE_TEST_UV, or on PATH)")
            .with_ignored_flag(true);
    };
    let reachable = || -> Option<bool> {
        let mut child = Command::new(&uv)
            .args(["pip", "compile", "-", "--python-version", "3.12", "--quiet"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        use std::io::Write;
        child
            .stdin
            .take()?
            .write_all(format!("{requirement}\n").as_bytes())
            .ok()?;
        Some(child.wait().ok()?.success())
    };
    if python("3.12").is_some() && reachable() != Some(true) {
        return trial(name, needs, test)
            .with_kind(format!(
                "needs the package index (uv could not resolve {requirement})"
            ))
            .with_ignored_flag(true);
    }
    trial(name, needs, test)
}

/// PATH with uv's folder first, as a user who installed uv has it.
pub fn path_with_uv() -> std::ffi::OsString {
    let uv = which_uv().expect("the gate found uv");
    std::env::join_paths(
        std::iter::once(uv.parent().expect("a folder").to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .expect("PATH")
}

fn uv_trial(name: &str, needs: &[&str], test: fn() -> TestResult) -> Trial {
    if which_uv().is_some() {
        return trial(name, needs, test);
    }
    crate::support::timed(name, test)
        .with_kind("needs uv (CROSSPICKLE_TEST_UV, or on PATH)")
        .with_ignored_flag(true)
}

/// Packs the install folder argv[1] as `python/...` into the tar.gz argv[2], leaving out the
/// test suite, caches, static libraries and what the cases do not use; with patchelf (argv[3],
/// when given) the executable finds its libpython in `$ORIGIN/../lib`, as the standalone
/// builds do, so the installed copy uses nothing of the original folder.
pub const PACK: &str = r#"
import os, shutil, subprocess, sys, tarfile, tempfile
root, out = sys.argv[1], sys.argv[2]
patchelf = sys.argv[3] if len(sys.argv) > 3 else None
skip = {"test", "__pycache__", "site-packages", "idlelib", "tkinter", "lib2to3", "ensurepip"}
exe = "python%d.%d" % sys.version_info[:2]
patched = None
if patchelf:
    patched = os.path.join(tempfile.mkdtemp(), exe)
    shutil.copy2(os.path.join(root, "bin", exe), patched)
    subprocess.check_call([patchelf, "--set-rpath", "$ORIGIN/../lib", patched])
def keep(info):
    parts = info.name.split("/")
    if any(p in skip for p in parts) or info.name.endswith(".a"):
        return None
    if patched and info.name == "python/bin/" + exe:
        return None
    return info
with tarfile.open(out, "w:gz", compresslevel=1) as tar:
    tar.add(root, arcname="python", filter=keep)
    if patched:
        tar.add(patched, arcname="python/bin/" + exe)
print("%d %d %d" % sys.version_info[:3])
"#;

/// The environment of a crosspickle that must not find the machine's interpreters: a home,
/// pyenv root and PATH of its own (discovery's PATH, pyenv and conda sources are also off in
/// only-uv.toml), its own cache, and uv offline with the local downloads list.
fn isolated(dir: &Path, request: &str, uv: Option<&Path>) -> Command {
    let mut cmd = crosspickle(dir);
    std::fs::create_dir_all(dir.join("home")).unwrap();
    std::fs::create_dir_all(dir.join("empty-bin")).unwrap();
    cmd.env("HOME", dir.join("home"))
        .env("PYENV_ROOT", dir.join("no-pyenv"))
        .env("PATH", dir.join("empty-bin"))
        .env("CROSSPICKLE_CACHE_DIR", dir.join("cache"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("UV_PYTHON_INSTALL_DIR")
        .env_remove("CONDA_PREFIX")
        .env("UV_CACHE_DIR", dir.join("uv-cache"))
        .env("UV_NO_CONFIG", "1")
        .env("UV_OFFLINE", "1")
        .env(
            "UV_PYTHON_DOWNLOADS_JSON_URL",
            format!("file://{}", dir.join("downloads.json").display()),
        )
        .args(["run", "--pythons-toml", "only-uv.toml", "--python", request]);
    match uv {
        Some(uv) => cmd.env("CROSSPICKLE_UV", uv),
        None => cmd.env_remove("CROSSPICKLE_UV"),
    };
    cmd
}

/// The downloads list uv reads: one CPython for this platform, at `archive`.
pub fn downloads_json(version: &str, archive: &Path, sha256: &str) -> String {
    let v: Vec<&str> = version.split(' ').collect();
    let key = format!("cpython-{}.{}.{}-linux-x86_64-gnu", v[0], v[1], v[2]);
    serde_json::json!({
        key: {
            "name": "cpython",
            "arch": {"family": "x86_64", "variant": null},
            "os": "linux",
            "libc": "gnu",
            "major": v[0].parse::<u64>().unwrap(),
            "minor": v[1].parse::<u64>().unwrap(),
            "patch": v[2].parse::<u64>().unwrap(),
            "prerelease": "",
            "url": format!("file://{}", archive.display()),
            "sha256": sha256,
            "variant": null,
            "build": "20240107",
        }
    })
    .to_string()
}

pub fn sha256_of(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

trial!(
    auto_installs_a_missing_request_with_uv_offline,
    by = |name, test| uv_trial(name, &["3.12"], test)
);
fn auto_installs_a_missing_request_with_uv_offline() -> TestResult {
    let uv = which_uv().expect("uv");
    let python = python("3.12").unwrap();
    let install = python
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .to_path_buf();
    let dir = folder(&[
        (
            "cases/hello.yaml",
            include_str!("../../src/cli/init/example.yaml"),
        ),
        (
            "only-uv.toml",
            "[discovery]\npath = false\npyenv = false\nconda = false\n",
        ),
    ]);
    let d = dir.path();
    let archive = d.join("cpython-3.12-install_only.tar.gz");
    let mut pack = Command::new(&python);
    pack.arg("-c").arg(PACK).arg(&install).arg(&archive);
    if let Ok(patchelf) = which::which("patchelf") {
        pack.arg(patchelf);
    }
    let packed = pack.output().unwrap();
    check(packed.status.success(), format!("packing: {packed:?}"))?;
    let version = String::from_utf8_lossy(&packed.stdout).trim().to_string();
    let dotted = version.replace(' ', ".");

    // Without --download-python, nothing matches 3.12 here: the request is absent.
    let run = Run::from(isolated(d, "3.12", Some(&uv)).output().unwrap());
    run.expect_code(2)?;
    check(
        run.stderr.contains("no interpreter matches `3.12`"),
        format!("3.12 is found without downloading:\n{}", run.stderr),
    )?;

    // An archive whose sha256 is not the list's: uv refuses it, a tooling failure (exit 3).
    let wrong = "0".repeat(64);
    std::fs::write(
        d.join("downloads.json"),
        downloads_json(&version, &archive, &wrong),
    )
    .unwrap();
    let run = Run::from(
        isolated(d, "3.12", Some(&uv))
            .args(["--download-python", "auto"])
            .output()
            .unwrap(),
    );
    run.expect_code(3)?;
    check(
        run.stderr.contains("uv python install 3.12") && run.stderr.contains("Hash mismatch"),
        format!("uv's refusal is not told:\n{}", run.stderr),
    )?;

    // The right sha256: uv installs it into the cache's pythons/, and the case runs on it.
    let sha = sha256_of(&archive);
    std::fs::write(
        d.join("downloads.json"),
        downloads_json(&version, &archive, &sha),
    )
    .unwrap();
    let json = d.join("results.json");
    let run = Run::from(
        isolated(d, "3.12", Some(&uv))
            .args(["--download-python", "auto", "--json"])
            .arg(&json)
            .output()
            .unwrap(),
    );
    run.expect_code(0)?;
    let downloads = std::fs::canonicalize(d.join("cache/pythons")).unwrap();
    let value = json_at(&json);
    let interpreters = value["interpreters"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    check(
        interpreters.len() == 1,
        format!("interpreters: {interpreters:?}"),
    )?;
    let exe = PathBuf::from(interpreters[0]["executable"].as_str().unwrap_or_default());
    check(
        exe.starts_with(&downloads) && interpreters[0]["label"] == format!("cpython-{dotted}"),
        format!("not the installed interpreter: {:?}", interpreters[0]),
    )?;
    check(
        interpreters[0]["sources"] == serde_json::json!(["uv"]),
        format!("sources: {}", interpreters[0]["sources"]),
    )?;
    let results = runs(&value);
    check(
        results.len() == 3 && results.iter().all(|r| r["verdict"] == "ok"),
        format!("runs: {results:?}"),
    )?;
    check(
        run.stderr.contains(&format!(
            "note: installed cpython-{dotted} at {}",
            exe.display()
        )),
        format!("the install is not told:\n{}", run.stderr),
    )?;
    // Nothing linked onto the user's PATH (uv's default is ~/.local/bin).
    check(
        !d.join("home/.local/bin").exists(),
        "uv linked executables into ~/.local/bin",
    )?;
    // The installed copy runs from its own folder.
    let prefix = Command::new(&exe)
        .args(["-c", "import sys; print(sys.prefix)"])
        .output()
        .unwrap();
    let prefix = String::from_utf8_lossy(&prefix.stdout).trim().to_string();
    check(
        Path::new(&prefix).starts_with(&downloads),
        format!("sys.prefix of the installed copy: {prefix}"),
    )?;

    // Then it is found like any uv interpreter: with no uv at all, and without the flag.
    let run = Run::from(
        isolated(d, "3.12", None)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap(),
    );
    run.expect_code(0)?;
    let again = json_at(&json);
    check(
        again["interpreters"][0]["executable"] == interpreters[0]["executable"],
        format!("not found again: {}", again["interpreters"]),
    )?;

    // `always`, with the pyenv source on and pyenv's 3.12 found: uv is asked all the same
    // (it has it already), and 3.12 selects both, labelled apart.
    std::fs::write(
        d.join("only-uv.toml"),
        "[discovery]\npath = false\nconda = false\n",
    )
    .unwrap();
    let pyenv_root = install.parent().and_then(Path::parent).unwrap();
    let run = Run::from(
        isolated(d, "3.12", Some(&uv))
            .env("PYENV_ROOT", pyenv_root)
            .args(["--download-python", "always", "--json"])
            .arg(&json)
            .output()
            .unwrap(),
    );
    run.expect_code(0)?;
    let both = json_at(&json);
    let executables: Vec<PathBuf> = both["interpreters"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|i| PathBuf::from(i["executable"].as_str().unwrap_or_default()))
        .collect();
    check(
        executables.len() == 2
            && executables.contains(&exe)
            && executables.contains(&std::fs::canonicalize(&python).unwrap()),
        format!("always: {executables:?}\n{}", run.stderr),
    )?;
    check(
        run.stderr
            .contains("note: --download-python always: installing `3.12`"),
        format!("always did not ask uv:\n{}", run.stderr),
    )
}

trial!(requests_uv_cannot_install_say_what_to_use);
fn requests_uv_cannot_install_say_what_to_use() -> TestResult {
    let dir = folder(&[
        (
            "cases/hello.yaml",
            include_str!("../../src/cli/init/example.yaml"),
        ),
        (
            "only-uv.toml",
            "[discovery]\npath = false\npyenv = false\nconda = false\n",
        ),
    ]);
    let d = dir.path();
    for (request, says) in [
        ("2.7", "uv installs Python 3.8 and newer, not `2.7`: install it with pyenv (`pyenv install 2.7`)"),
        ("3.6", "pyenv install 3.6"),
        ("./nowhere/python3", "`./nowhere/python3` is a path, and uv installs versions, not files"),
        ("debian-dbg", "`debian-dbg` is a name (of pythons.toml, or a label)"),
    ] {
        let mut cmd = isolated(d, request, None);
        cmd.args(["--download-python", "auto"]);
        let run = Run::from(cmd.output().unwrap());
        run.expect_code(2)?;
        check(
            run.stderr.contains(&format!(
                "no interpreter matches `{request}`, and --download-python cannot install it: "
            )) && run.stderr.contains(says),
            format!("--python {request}:\n{}", run.stderr),
        )?;
    }
    // A request uv could install, and no uv: say so and how to get it.
    let run = Run::from(
        isolated(d, "3.12", None)
            .args(["--download-python", "auto"])
            .output()
            .unwrap(),
    );
    run.expect_code(2)?;
    check(
        run.stderr
            .contains("--download-python auto: installing `3.12` needs uv, and uv is neither beside crosspickle nor on PATH")
            && run.stderr.contains("CROSSPICKLE_UV"),
        format!("no uv:\n{}", run.stderr),
    )?;
    // ... and none where CROSSPICKLE_UV points.
    let run = Run::from(
        isolated(d, "3.12", Some(&d.join("no-uv")))
            .args(["--download-python", "always"])
            .output()
            .unwrap(),
    );
    run.expect_code(2)?;
    check(
        run.stderr.contains("CROSSPICKLE_UV=") && run.stderr.contains("names no file"),
        format!("CROSSPICKLE_UV naming nothing:\n{}", run.stderr),
    )
}

// uv's install gives nothing usable (a uv that installs nothing): the message does not advise
// `--download-python auto`, the flag already given, but says what to do instead.
trial!(an_install_that_gives_nothing_does_not_advise_the_flag_given);
fn an_install_that_gives_nothing_does_not_advise_the_flag_given() -> TestResult {
    let dir = folder(&[
        (
            "cases/hello.yaml",
            include_str!("../../src/cli/init/example.yaml"),
        ),
        (
            "only-uv.toml",
            "[discovery]\npath = false\npyenv = false\nconda = false\n",
        ),
        ("fake-uv", "#!/bin/sh\nexit 0\n"),
    ]);
    let d = dir.path();
    make_executable(&d.join("fake-uv"));
    let mut cmd = isolated(d, "3.12", Some(&d.join("fake-uv")));
    cmd.args(["--download-python", "auto"]);
    let run = Run::from(cmd.output().unwrap());
    run.expect_code(2)?;
    check(
        run.stderr.contains("no interpreter matches `3.12`")
            && !run
                .stderr
                .contains("`--download-python auto` to have uv install it")
            && run.stderr.contains(
                "--download-python had uv install it, and that gave no usable interpreter",
            )
            && run.stderr.contains("pyenv install"),
        &run.stderr,
    )
}

// A uv that fails after saying 50 MB on stderr: the tooling failure (exit 3) quotes the
// bounded tail of what it said, its last line among it, with the count of what was left out.
trial!(a_failing_uv_is_quoted_by_a_bounded_tail);
fn a_failing_uv_is_quoted_by_a_bounded_tail() -> TestResult {
    let dir = folder(&[
        (
            "cases/hello.yaml",
            include_str!("../../src/cli/init/example.yaml"),
        ),
        (
            "only-uv.toml",
            "[discovery]\npath = false\npyenv = false\nconda = false\n",
        ),
        (
            "loud-uv",
            "#!/bin/sh\n/usr/bin/yes 'uv: downloading, downloading' | /usr/bin/head -c 50000000 >&2\necho 'error: the last thing uv said' >&2\nexit 2\n",
        ),
    ]);
    let d = dir.path();
    make_executable(&d.join("loud-uv"));
    let mut cmd = isolated(d, "3.12", Some(&d.join("loud-uv")));
    cmd.args(["--download-python", "auto"]);
    let run = Run::from(cmd.output()?);
    run.expect_code(3)?;
    let head: String = run.stderr.chars().take(2000).collect();
    check(
        run.stderr.len() < 16 * 1024,
        format!(
            "{} bytes of stderr (at most 16 KiB):\n{head}",
            run.stderr.len()
        ),
    )?;
    let shown = run.stderr.matches("uv: downloading").count();
    check(
        run.stderr.contains("error: the last thing uv said")
            && run.stderr.contains(" bytes before these left out …]")
            && shown > 10,
        format!(
            "the tail of what uv said, {shown} of its lines:\n{}",
            run.stderr
        ),
    )
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
