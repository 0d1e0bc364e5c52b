//! The newest interpreters (`.ci/newest-pythons.sh`: CPython 3.14, 3.15, their debug builds,
//! PyPy 3.11 with and without `_pickle`): their pythons.toml, their names on PATH and in pyenv
//! and uv layouts, the requests that select them (`3.15d`, `cpython3.14d`, `pypy3.11`), and
//! several `--pythons-toml` files at once.

use std::path::Path;

use crate::support::*;

fn py(v: &str) -> String {
    path_str(&python(v).expect("checked by trial()"))
}

fn interpreters(json: &serde_json::Value) -> Vec<serde_json::Value> {
    json["interpreters"].as_array().cloned().unwrap_or_default()
}

/// `crosspickle pythons --json` with `args`, discovery limited as `env` says.
fn pythons_json(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> Result<serde_json::Value, libtest_mimic::Failed> {
    let mut cmd = crosspickle(dir);
    cmd.args(["pythons", "--json"]).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = Run::from(cmd.output().unwrap());
    run.expect_code(0)?;
    serde_json::from_str(&run.stdout).map_err(|e| format!("{e}: {}", run.stdout).into())
}

trial!(
    pythons_toml_lists_every_newest_interpreter,
    needs = NEWEST_PYTHONS
);
/// The pythons.toml the install script wrote lists each interpreter as usable, labelled by
/// version, debug build and implementation, with the right pickle accelerator.
fn pythons_toml_lists_every_newest_interpreter() -> TestResult {
    let dir = folder(&[]);
    let toml = newest_pythons_dir().join("pythons.toml");
    let value = pythons_json(
        dir.path(),
        &["--pythons-toml", &path_str(&toml), "--python", "sid-python3.14,sid-python3.14d,sid-python3.15,sid-python3.15d,sid-pypy3.11,trixie-pypy3.11"],
        &[],
    )?;
    let found = interpreters(&value);
    let by_name = |n: &str| found.iter().find(|i| i["name"] == n).cloned();
    let want = [
        ("sid-python3.14", "cpython-3.14.", false, "_pickle"),
        ("sid-python3.14d", "cpython-3.14.", true, "_pickle"),
        ("sid-python3.15", "cpython-3.15.", false, "_pickle"),
        ("sid-python3.15d", "cpython-3.15.", true, "_pickle"),
        ("sid-pypy3.11", "pypy-3.11.", false, "_pickle"),
    ];
    for (name, label, debug, accel) in want {
        let i = by_name(name).ok_or(format!("{name} not listed: {value}"))?;
        let l = i["label"].as_str().unwrap_or_default();
        check(
            l.starts_with(label) && l.ends_with("+debug") == debug,
            format!("{name}: {i}"),
        )?;
        check(
            i["debug"] == debug && i["c_pickle"] == accel,
            format!("{name}: {i}"),
        )?;
        check(i.get("unusable").is_none(), format!("{name}: {i}"))?;
    }
    let old = by_name("trixie-pypy3.11").ok_or(format!("trixie-pypy3.11 not listed: {value}"))?;
    check(
        old["label"]
            .as_str()
            .unwrap_or_default()
            .starts_with("pypy-3.11.")
            && old["c_pickle"].is_null()
            && old["implementation_version"]
                .as_str()
                .is_some_and(|v| v.starts_with("7.3.")),
        format!("PyPy 7.3 has no _pickle: {old}"),
    )?;
    let new = by_name("sid-pypy3.11").unwrap();
    check(
        new["implementation_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("8.")),
        format!("PyPy 8: {new}"),
    )?;
    // 3.14 made protocol 5 the default (gh-118830); the probe reports it.
    check(
        by_name("sid-python3.14").unwrap()["pickle_default_protocol"] == 5,
        format!("{value}"),
    )
}

trial!(
    debug_names_on_path_pyenv_and_uv,
    needs = &["3.15", "3.15d", "3.14d"]
);
/// `python3.15d` on PATH, a debug-only pyenv install and a uv debug install are found and
/// labelled as debug builds; `--python 3.15d` and `cpython3.15d` select the debug build only,
/// `3.15` both.
fn debug_names_on_path_pyenv_and_uv() -> TestResult {
    let dir = folder(&[("cases/a.yaml", "title: a\ncode: |\n  import sys\n  assert hasattr(sys, 'gettotalrefcount') == (sys.abiflags == 'd')\n")]);
    let bin = dir.path().join("bin");
    let pyenv = dir.path().join("pyenv");
    let uv = dir.path().join("uv");
    let pyenv_bin = pyenv.join("versions/3.15-debug/bin");
    let uv_bin = uv.join("cpython-3.14.10+debug-linux-x86_64-gnu/bin");
    for d in [&bin, &pyenv_bin, &uv_bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    let link =
        |target: &str, at: &Path| std::os::unix::fs::symlink(python(target).unwrap(), at).unwrap();
    link("3.15d", &bin.join("python3.15d"));
    link("3.15", &bin.join("python3.15"));
    link("3.15d", &pyenv_bin.join("python3.15d"));
    link("3.14d", &uv_bin.join("python3.14d"));
    let none = dir.path().join("none");
    let only_path = [
        ("PATH", bin.as_path()),
        ("PYENV_ROOT", none.as_path()),
        ("UV_PYTHON_INSTALL_DIR", none.as_path()),
        ("HOME", none.as_path()),
    ];
    let cfg = dir.path().join("conda-off.toml");
    std::fs::write(&cfg, "[discovery]\nconda = false\n").unwrap();
    let cfg = path_str(&cfg);

    let value = pythons_json(dir.path(), &["--pythons-toml", &cfg], &only_path)?;
    let found = interpreters(&value);
    let labels: Vec<&str> = found.iter().map(|i| i["label"].as_str().unwrap()).collect();
    check(
        labels.len() == 2
            && labels[0].starts_with("cpython-3.15.")
            && !labels[0].ends_with("+debug")
            && labels[1].starts_with("cpython-3.15.")
            && labels[1].ends_with("+debug"),
        format!("PATH: {labels:?}"),
    )?;
    for (request, debug_only) in [("3.15d", true), ("cpython3.15d", true), ("3.15", false)] {
        let value = pythons_json(
            dir.path(),
            &["--pythons-toml", &cfg, "--python", request],
            &only_path,
        )?;
        let got: Vec<bool> = interpreters(&value)
            .iter()
            .map(|i| i["debug"] == true)
            .collect();
        let want = if debug_only {
            vec![true]
        } else {
            vec![false, true]
        };
        check(got == want, format!("--python {request}: {value}"))?;
    }
    // A request for a debug build of a version that has none matches nothing: an error.
    let run = Run::from(
        crosspickle(dir.path())
            .args(["pythons", "--pythons-toml", &cfg, "--python", "3.15t"])
            .envs(only_path)
            .env("CI", "1")
            .output()
            .unwrap(),
    );
    check(
        run.stderr.contains("3.15t"),
        format!("3.15t: {}", run.stderr),
    )?;

    // pyenv and uv layouts whose only interpreter is the debug one.
    let empty = dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let installs = [
        ("PATH", empty.as_path()),
        ("PYENV_ROOT", pyenv.as_path()),
        ("UV_PYTHON_INSTALL_DIR", uv.as_path()),
        ("HOME", none.as_path()),
    ];
    let value = pythons_json(dir.path(), &["--pythons-toml", &cfg], &installs)?;
    let found = interpreters(&value);
    let source = |v: &str| {
        found
            .iter()
            .find(|i| i["version"].as_str().unwrap().starts_with(v))
            .map(|i| (i["sources"].to_string(), i["debug"] == true))
    };
    check(
        source("3.15.").is_some_and(|(s, d)| s.contains("pyenv") && d),
        format!("pyenv debug install: {value}"),
    )?;
    check(
        source("3.14.").is_some_and(|(s, d)| s.contains("uv") && d),
        format!("uv debug install: {value}"),
    )?;
    // The runs happen on the debug build, which the case itself checks (sys.abiflags).
    let mut cmd = crosspickle(dir.path());
    cmd.args([
        "cases",
        "--pythons-toml",
        &cfg,
        "--python",
        "3.15d,3.14d",
        "--json",
    ])
    .arg(dir.path().join("r.json"))
    .envs(installs);
    let run = Run::from(cmd.output().unwrap());
    run.expect_code(0)?;
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    let verdicts: Vec<String> = runs(&json)
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["python"].as_str().unwrap(),
                r["verdict"].as_str().unwrap()
            )
        })
        .collect();
    check(
        verdicts.len() == 2 && verdicts.iter().all(|v| v.contains("+debug ok")),
        format!("{verdicts:?}"),
    )
}

trial!(pypy3_11_requests, needs = &["pypy", "pypy3.11", "pypy8"]);
/// `pypy3.11` selects both PyPy 3.11s and not Debian's PyPy 3.9; `pypy` all three.
fn pypy3_11_requests() -> TestResult {
    let dir = folder(&[]);
    let toml = path_str(&newest_pythons_dir().join("pythons.toml"));
    for (request, want) in [("pypy3.11", 2), ("pypy", 3), ("pypy3.9", 1)] {
        let value = pythons_json(
            dir.path(),
            &["--pythons-toml", &toml, "--python", request],
            &[],
        )?;
        let found = interpreters(&value);
        check(
            found.len() == want
                && found.iter().all(|i| i["implementation"] == "pypy")
                && (request != "pypy3.11"
                    || found
                        .iter()
                        .all(|i| i["version"].as_str().unwrap().starts_with("3.11."))),
            format!("--python {request}: {value}"),
        )?;
    }
    Ok(())
}

trial!(several_pythons_toml_files, needs = &["3.9", "3.12"]);
/// `--pythons-toml` twice: the names of both files; a name given two paths is an error naming
/// both files.
fn several_pythons_toml_files() -> TestResult {
    let dir = folder(&[("cases/a.yaml", "title: a\ncode: pass\n")]);
    std::fs::write(
        dir.path().join("a.toml"),
        format!("[discovery]\npath = false\npyenv = false\nuv = false\nconda = false\n[pythons]\nmine = \"{}\"\n", py("3.9")),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("b")).unwrap();
    std::fs::write(
        dir.path().join("b/pythons.toml"),
        format!("[pythons]\ntheirs = \"{}\"\n", py("3.12")),
    )
    .unwrap();
    let value = pythons_json(
        dir.path(),
        &[
            "--pythons-toml",
            "a.toml",
            "--pythons-toml",
            "b/pythons.toml",
        ],
        &[],
    )?;
    let names: Vec<String> = interpreters(&value)
        .iter()
        .map(|i| {
            format!(
                "{}={}",
                i["name"].as_str().unwrap_or("?"),
                i["label"].as_str().unwrap()
            )
        })
        .collect();
    check(
        names.len() == 2
            && names[0].starts_with("mine=cpython-3.9.")
            && names[1].starts_with("theirs=cpython-3.12."),
        format!("{names:?}"),
    )?;
    let (run, json) = run_json(
        dir.path(),
        &[
            "cases",
            "--pythons-toml",
            "a.toml",
            "--pythons-toml",
            "b/pythons.toml",
            "--python",
            "mine,theirs",
        ],
    );
    run.expect_code(0)?;
    check(runs(&json).len() == 2, format!("{json}"))?;

    std::fs::write(
        dir.path().join("c.toml"),
        format!("[pythons]\nmine = \"{}\"\n", py("3.12")),
    )
    .unwrap();
    let run = Run::from(
        crosspickle(dir.path())
            .args([
                "pythons",
                "--pythons-toml",
                "a.toml",
                "--pythons-toml",
                "c.toml",
            ])
            .output()
            .unwrap(),
    );
    run.expect_code(2)?;
    check(
        run.stderr.contains("c.toml")
            && run.stderr.contains("a.toml")
            && run.stderr.contains("`mine`"),
        &run.stderr,
    )
}
