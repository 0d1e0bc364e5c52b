//! The harness end to end: discovery and requests, every outcome and verdict, params, bad case
//! files, broken interpreters, exit codes, and the limits (deep tracebacks, huge output).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::*;

const ALL: &[&str] = &[
    "2.7", "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13",
];

fn py(v: &str) -> String {
    path_str(&python(v).expect("checked by trial()"))
}

trial!(params_and_verdicts_on_3_8, needs = &["3.8"]);
fn params_and_verdicts_on_3_8() -> TestResult {
    let dir = folder(&[(
        "cases/p.yaml",
        "title: params\nparams:\n  n: [1, 2]\ncode: |\n  assert n == 1, 'n is not one'\nexpect:\n  - where: {n: 2}\n    outcome: fail\n    match: not one\n",
    )]);
    let (run, json) = run_json(dir.path(), &["--python", "3.8"]);
    run.expect_code(0)?;
    let runs = runs(&json);
    check(runs.len() == 2, format!("two runs, got {runs:?}"))?;
    check(
        runs[0]["verdict"] == "ok" && runs[1]["verdict"] == "xfail",
        format!("{runs:?}"),
    )?;
    check(
        runs[1]["exception"] == "AssertionError",
        format!("{:?}", runs[1]),
    )?;
    check(runs[1]["params"]["n"] == 2, format!("{:?}", runs[1]))?;
    check(
        runs[0]["python"]
            .as_str()
            .unwrap()
            .starts_with("cpython-3.8."),
        "label",
    )?;
    check(
        run.stdout.contains("p[n=1]") && run.stdout.contains("p[n=2]"),
        &run.stdout,
    )
}

trial!(discovery_finds_every_pyenv_python, needs = ALL);
fn discovery_finds_every_pyenv_python() -> TestResult {
    let dir = folder(&[]);
    let out = crosspickle(dir.path())
        .args(["pythons", "--json", "--refresh"])
        .output()
        .unwrap();
    let run = Run::from(out);
    run.expect_code(0)?;
    let value: serde_json::Value = serde_json::from_str(&run.stdout).map_err(|e| e.to_string())?;
    let found = value["interpreters"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for v in ALL {
        let exe = std::fs::canonicalize(python(v).unwrap()).unwrap();
        let i = found
            .iter()
            .find(|i| i["executable"] == path_str(&exe))
            .ok_or(format!(
                "{v} ({}) not discovered: {}",
                exe.display(),
                run.stdout
            ))?;
        check(
            i["version"].as_str().unwrap().starts_with(&format!("{v}.")),
            format!("{i}"),
        )?;
        check(i["implementation"] == "cpython", format!("{i}"))?;
        check(
            i["sources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s == "pyenv"),
            format!("{i}"),
        )?;
        let accel = if *v == "2.7" { "cPickle" } else { "_pickle" };
        check(i["c_pickle"] == accel, format!("{i}"))?;
        // The feature `c_pickle`: pickle hands out _pickle's objects (not on 2.7).
        check(i["c_pickle_used"] == (*v != "2.7"), format!("{i}"))?;
        check(
            i["debug"] == false && i["free_threaded"] == false,
            format!("{i}"),
        )?;
    }
    // Each executable once, whatever the number of sources that found it.
    let mut exes: Vec<&str> = found
        .iter()
        .map(|i| i["executable"].as_str().unwrap())
        .collect();
    let n = exes.len();
    exes.dedup();
    exes.sort();
    exes.dedup();
    check(
        exes.len() == n,
        "interpreters are de-duplicated by canonical executable",
    )?;
    // The cache answers the second time: no probe runs, so it is fast.
    let start = Instant::now();
    let out = crosspickle(dir.path())
        .args(["pythons", "--json"])
        .output()
        .unwrap();
    check(out.status.success(), "second listing")?;
    check(
        start.elapsed() < Duration::from_millis(1500),
        format!("cached listing took {:?}", start.elapsed()),
    )?;
    if let Some(dbg) = python("debug") {
        let cfg = format!("[pythons]\ndbg = \"{}\"\n", dbg.display());
        let dir = folder(&[("pythons.toml", &cfg)]);
        let out = Run::from(
            crosspickle(dir.path())
                .args(["pythons", "--json", "--python", "dbg"])
                .output()
                .unwrap(),
        );
        out.expect_code(0)?;
        check(
            out.stdout.contains("\"debug\": true") && out.stdout.contains("+debug"),
            &out.stdout,
        )?;
    }
    Ok(())
}

trial!(uv_and_conda_sources, needs = &["3.9", "3.12"]);
/// uv's managed installs and conda environments, laid out as those tools lay them out, their
/// pythons being links to real interpreters.
fn uv_and_conda_sources() -> TestResult {
    let dir = folder(&[("cases/a.yaml", "title: a\ncode: pass\n")]);
    let home = dir.path().join("home");
    let uv_bin = home.join(".local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu/bin");
    let conda_env = home.join("envs/pickles");
    std::fs::create_dir_all(&uv_bin).unwrap();
    std::fs::create_dir_all(conda_env.join("bin")).unwrap();
    std::os::unix::fs::symlink(python("3.12").unwrap(), uv_bin.join("python3")).unwrap();
    std::os::unix::fs::symlink(python("3.9").unwrap(), conda_env.join("bin/python")).unwrap();
    std::fs::create_dir_all(home.join(".conda")).unwrap();
    std::fs::write(
        home.join(".conda/environments.txt"),
        format!("{}\n", conda_env.display()),
    )
    .unwrap();
    let mut cmd = crosspickle(dir.path());
    cmd.args(["pythons", "--json", "--pythons-toml"])
        .arg(dir.path().join("only-uv-conda.toml"))
        .env("HOME", &home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("UV_PYTHON_INSTALL_DIR")
        .env_remove("CONDA_PREFIX")
        .env("PATH", "/usr/bin:/bin")
        .env("PYENV_ROOT", dir.path().join("no-pyenv"));
    std::fs::write(
        dir.path().join("only-uv-conda.toml"),
        "[discovery]\npath = false\npyenv = false\n",
    )
    .unwrap();
    let run = Run::from(cmd.output().unwrap());
    run.expect_code(0)?;
    let value: serde_json::Value = serde_json::from_str(&run.stdout).map_err(|e| e.to_string())?;
    let found = value["interpreters"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let source_of = |v: &str| {
        found
            .iter()
            .find(|i| i["version"].as_str().unwrap().starts_with(v))
            .map(|i| i["sources"].to_string())
    };
    check(
        found.len() == 2,
        format!("two interpreters: {}", run.stdout),
    )?;
    check(
        source_of("3.12.").is_some_and(|s| s.contains("uv")),
        &run.stdout,
    )?;
    check(
        source_of("3.9.").is_some_and(|s| s.contains("conda")),
        &run.stdout,
    )
}

fn labels(json: &serde_json::Value) -> Vec<String> {
    json["interpreters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

trial!(
    requests_select_interpreters,
    needs = &["3.8", "3.9", "3.12", "3.13"]
);
fn requests_select_interpreters() -> TestResult {
    let dir = folder(&[("cases/a.yaml", "title: a\ncode: pass\n")]);
    let cases: [(&[&str], &[&str]); 5] = [
        (&["--python", "3.8"], &["cpython-3.8."]),
        (&["--python", "3.8,3.9"], &["cpython-3.8.", "cpython-3.9."]),
        (
            &["-p", "3.8", "-p", "cpython3.12"],
            &["cpython-3.8.", "cpython-3.12."],
        ),
        (
            &["--python", ">=3.12,<3.14"],
            &["cpython-3.12.", "cpython-3.13."],
        ),
        (&["--python", "3.13.0"], &["cpython-3.13.0"]),
    ];
    for (args, want) in cases {
        let mut full = vec!["--pythons-toml", "/dev/null"];
        full.extend_from_slice(args);
        let (run, json) = run_json(dir.path(), &full);
        run.expect_code(0)?;
        let got: Vec<String> = labels(&json)
            .into_iter()
            .filter(|l| l.starts_with("cpython"))
            .collect();
        check(got.len() == want.len(), format!("{args:?}: {got:?}"))?;
        for (g, w) in got.iter().zip(want) {
            check(g.starts_with(w), format!("{args:?}: {got:?}"))?;
        }
    }
    // A path, and a pythons.toml name.
    let cfg = format!("[pythons]\nmine = \"{}\"\n", py("3.9"));
    std::fs::write(dir.path().join("pythons.toml"), cfg).unwrap();
    let (run, json) = run_json(dir.path(), &["--python", &py("3.12"), "--python", "mine"]);
    run.expect_code(0)?;
    let got = labels(&json);
    check(
        got.len() == 2 && got[0].starts_with("cpython-3.9.") && got[1].starts_with("cpython-3.12."),
        format!("{got:?}"),
    )
}

trial!(missing_request_is_an_error, needs = &["3.8"]);
fn missing_request_is_an_error() -> TestResult {
    let dir = folder(&[("cases/a.yaml", "title: a\ncode: pass\n")]);
    let (run, _) = run_json(dir.path(), &["--python", "3.8", "--python", "3.99"]);
    run.expect_code(2)?;
    check(
        run.stderr.contains("no interpreter matches `3.99`") && run.stderr.contains("cpython-3.8."),
        &run.stderr,
    )?;
    let (run, json) = run_json(
        dir.path(),
        &["--python", "3.8", "--python", "3.99", "--skip-missing"],
    );
    run.expect_code(0)?;
    check(
        run.stderr
            .contains("warning: no interpreter matches `3.99`"),
        &run.stderr,
    )?;
    check(labels(&json).len() == 1, "only 3.8 ran")?;
    let json_path = dir.path().join("ci.json");
    let out = crosspickle(dir.path())
        .args([
            "--python",
            "3.8",
            "--python",
            "3.99",
            "--skip-missing",
            "--json",
        ])
        .arg(&json_path)
        .env("CI", "true")
        .output()
        .unwrap();
    Run::from(out).expect_code(2)
}

const OUTCOMES: &str = r#"title: outcomes
params:
  kind: [pass, exit0, fail, error, syntax, exit3, segv, abort, osexit, atexit-osexit, flush-fails]
code: |
  import atexit, os, signal, sys
  if kind == "pass":
      pass
  elif kind == "exit0":
      sys.exit(0)
  elif kind == "fail":
      assert 1 == 2, "one is not two"
  elif kind == "error":
      import pickle
      pickle.dumps(lambda: 0)
  elif kind == "syntax":
      exec(compile("def (", "inner", "exec"))
  elif kind == "exit3":
      sys.exit(3)
  elif kind == "segv":
      os.kill(os.getpid(), signal.SIGSEGV)
  elif kind == "abort":
      os.abort()
  elif kind == "osexit":
      os._exit(0)
  elif kind == "atexit-osexit":
      atexit.register(os._exit, 4)
  elif kind == "flush-fails":
      # What is left to flush at shutdown cannot be written: Python 3 ends with status 120.
      sys.stdout = open("/dev/full", "w")
      sys.stdout.write("x")
expect:
  - where: {kind: fail}
    outcome: fail
    exception: AssertionError
    match: one is not two
  - where: {kind: error}
    outcome: error
    exception: PicklingError
  - where: {kind: syntax}
    outcome: error
    exception: SyntaxError
  - where: {kind: exit3}
    outcome: error
    exception: SystemExit
    match: "^3$"
  - where: {kind: segv}
    outcome: crash
    signal: SIGSEGV
  - where: {kind: abort}
    outcome: crash
    signal: SIGABRT
  - where: {kind: osexit}
    outcome: crash
  - where: {kind: atexit-osexit}
    outcome: crash
  - where: {kind: flush-fails}
    python: "<3"
    outcome: pass
  - where: {kind: flush-fails}
    outcome: crash
"#;

fn check_outcomes(version: &str, iso: &str) -> TestResult {
    let dir = folder(&[("cases/outcomes.yaml", OUTCOMES)]);
    let (run, json) = run_json(dir.path(), &args_on(&[version], &["--isolation", iso]));
    run.expect_code(0)?;
    let runs = runs(&json);
    check(runs.len() == 11, format!("{runs:?}"))?;
    for r in &runs {
        let kind = &r["params"]["kind"];
        let want =
            if kind == "pass" || kind == "exit0" || (kind == "flush-fails" && version == "2.7") {
                "ok"
            } else {
                "xfail"
            };
        check(r["verdict"] == want, format!("{r}"))?;
    }
    let of = |kind: &str| runs.iter().find(|r| r["params"]["kind"] == kind).unwrap();
    // Field `field` of the run of `kind` holds `text`.
    let holds = |kind: &str, field: &str, text: &str| {
        let r = of(kind);
        check(
            r[field].as_str().unwrap_or("").contains(text),
            format!("{r}"),
        )
    };
    if version != "2.7" {
        // faulthandler's traceback of the crash is kept.
        holds("segv", "stderr", "Fatal Python error")?;
    }
    holds("error", "traceback", "cases/outcomes.yaml\", line ")?;
    check(
        of("error")["duration_s"].as_f64().unwrap() > 0.0,
        "duration",
    )?;
    holds("osexit", "message", "without reporting")?;
    // The code ran to its end, then an atexit handler ended the process with status 4.
    check(of("atexit-osexit")["exit_code"] == 4, "exit status 4")?;
    holds(
        "atexit-osexit",
        "message",
        "ended with status 4 after its code had run",
    )
}

trial!(every_outcome, needs = &["3.12"], both);
fn every_outcome(iso: &'static str) -> TestResult {
    check_outcomes("3.12", iso)
}

trial!(every_outcome_on_2_7, needs = &["2.7"], both);
fn every_outcome_on_2_7(iso: &'static str) -> TestResult {
    check_outcomes("2.7", iso)
}

trial!(every_verdict_and_exit_code, needs = &["3.11"]);
fn every_verdict_and_exit_code() -> TestResult {
    let expected_pass = "title: t\ncode: raise ValueError('boom')\n";
    let cases = [
        ("ok", "title: t\ncode: pass\n", 0),
        ("xfail", "title: t\ncode: raise ValueError('boom')\nexpect:\n  - outcome: error\n    exception: ValueError\n    match: bo+m\n    reason: known\n", 0),
        ("regression", expected_pass, 1),
        ("fixed", "title: t\ncode: pass\nexpect:\n  - outcome: error\n    exception: ValueError\n", 1),
        ("changed", "title: t\ncode: raise ValueError('boom')\nexpect:\n  - outcome: error\n    exception: TypeError\n", 1),
        ("changed", "title: t\ncode: raise ValueError('boom')\nexpect:\n  - outcome: error\n    match: '^bang'\n", 1),
        ("changed", "title: t\ncode: raise ValueError('boom')\nexpect:\n  - outcome: fail\n", 1),
        ("skipped", "title: t\npython: '<3'\ncode: pass\n", 0),
        ("skipped", "title: t\nimplementation: pypy\ncode: pass\n", 0),
    ];
    for (verdict, text, code) in cases {
        let dir = folder(&[("cases/v.yaml", text)]);
        let (run, json) = run_json(
            dir.path(),
            &["--pythons-toml", "/dev/null", "--python", &py("3.11")],
        );
        run.expect_code(code)?;
        let r = &runs(&json)[0];
        check(
            r["verdict"] == verdict,
            format!("wanted {verdict}: {r}\n{}", run.stdout),
        )?;
        check(r["expected"]["outcome"].is_string(), format!("{r}"))?;
        if code == 1 {
            check(
                run.stdout.contains(&verdict.to_uppercase()) && run.stdout.contains("expected:"),
                &run.stdout,
            )?;
        }
    }
    // The first matching rule decides.
    let text = "title: t\ncode: raise ValueError('x')\nexpect:\n  - python: '<3'\n    outcome: pass\n  - python: '>=3.11'\n    outcome: error\n    exception: ValueError\n  - outcome: pass\n";
    let dir = folder(&[("cases/v.yaml", text)]);
    let (run, json) = run_json(
        dir.path(),
        &["--pythons-toml", "/dev/null", "--python", &py("3.11")],
    );
    run.expect_code(0)?;
    check(runs(&json)[0]["verdict"] == "xfail", format!("{json}"))?;
    // env-error: an interpreter asked for by path that cannot run.
    let dir = folder(&[
        ("cases/v.yaml", "title: t\ncode: pass\n"),
        ("broken/python3", "#!/bin/sh\necho nope >&2\nexit 3\n"),
    ]);
    make_executable(&dir.path().join("broken/python3"));
    let (run, json) = run_json(
        dir.path(),
        &[
            "--pythons-toml",
            "/dev/null",
            "--python",
            &py("3.11"),
            "--python",
            "./broken/python3",
        ],
    );
    run.expect_code(3)?;
    let env_error = runs(&json)
        .into_iter()
        .find(|r| r["verdict"] == "env-error")
        .ok_or(format!("{json}"))?;
    check(
        env_error["reason"]
            .as_str()
            .unwrap()
            .contains("exited with status 3"),
        format!("{env_error}"),
    )
}

fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn pid_alive(pid: i32) -> bool {
    // A zombie is dead for our purpose.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

trial!(timeout_kills_grandchildren, needs = &["3.11"], both);
fn timeout_kills_grandchildren(iso: &'static str) -> TestResult {
    let text = r#"title: hangs
timeout: 30
code: |
  import subprocess, sys, time
  child = subprocess.Popen([sys.executable, "-c",
      "import subprocess, sys, time; g = subprocess.Popen(['sleep', '300']); open('grandchild.pid', 'w').write(str(g.pid)); time.sleep(300)"])
  open("child.pid", "w").write(str(child.pid))
  import os, shutil
  time.sleep(1)
  shutil.copy("child.pid", os.environ["PIDS"] + "/child.pid")
  shutil.copy("grandchild.pid", os.environ["PIDS"] + "/grandchild.pid")
  time.sleep(300)
env:
  PIDS: PLACEHOLDER
expect:
  - outcome: timeout
"#;
    let pids = tempfile::tempdir().unwrap();
    let text = text.replace("PLACEHOLDER", &path_str(pids.path()));
    let dir = folder(&[("cases/hang.yaml", &text)]);
    let start = Instant::now();
    let (run, json) = run_json(
        dir.path(),
        &args_on(&["3.11"], &["--timeout", "3", "--isolation", iso]),
    );
    run.expect_code(0)?;
    check(
        start.elapsed() < Duration::from_secs(10),
        format!("took {:?}", start.elapsed()),
    )?;
    check(runs(&json)[0]["verdict"] == "xfail", format!("{json}"))?;
    check(runs(&json)[0]["outcome"] == "timeout", format!("{json}"))?;
    std::thread::sleep(Duration::from_millis(300));
    for name in ["child.pid", "grandchild.pid"] {
        let pid: i32 = std::fs::read_to_string(pids.path().join(name))
            .map_err(|e| format!("{name}: {e}"))?
            .trim()
            .parse()
            .unwrap();
        check(
            !pid_alive(pid),
            format!("{name} {pid} still alive after the timeout"),
        )?;
    }
    Ok(())
}

trial!(deep_recursion_reported_fast, needs = &["3.13"], both);
fn deep_recursion_reported_fast(iso: &'static str) -> TestResult {
    let text = "title: deep\ncode: |\n  import sys\n  sys.setrecursionlimit(200000)\n  def f(n):\n      return f(n + 1)\n  f(0)\nexpect:\n  - outcome: error\n    exception: RecursionError\n";
    let dir = folder(&[("cases/deep.yaml", text)]);
    let start = Instant::now();
    let (run, json) = run_json(dir.path(), &args_on(&["3.13"], &["--isolation", iso]));
    let took = start.elapsed();
    run.expect_code(0)?;
    let r = &runs(&json)[0];
    check(r["verdict"] == "xfail", format!("{r}"))?;
    let tb = r["traceback"].as_str().unwrap();
    check(
        tb.contains("frames omitted") && tb.len() < 20_000,
        format!("traceback of {} bytes", tb.len()),
    )?;
    let omitted: u64 = tb
        .split("[... ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    check(omitted > 100_000, format!("{omitted} frames omitted"))?;
    check(took < Duration::from_secs(10), format!("took {took:?}"))
}

trial!(
    output_held_by_a_process_that_left_the_group_is_kept,
    needs = &["3.12"],
    both
);
/// A case that leaves a process running in a session of its own, holding its stdout and
/// stderr: the run's output is kept, with a line saying that reading it stopped, and each run
/// is waited on for 2 s at most. crosspickle at 933db37 lost all of the output and waited 4 s a
/// run (stdout, then stderr).
fn output_held_by_a_process_that_left_the_group_is_kept(iso: &'static str) -> TestResult {
    let case = "title: t\nparams:\n  n: [1, 2]\ncode: |\n  import subprocess, sys\n  p = subprocess.Popen(['sleep', '60'], start_new_session=True)\n  print('left', p.pid)\n  sys.stderr.write('to stderr\\n')\n";
    let dir = folder(&[("cases/leaves.yaml", case)]);
    let start = Instant::now();
    let (run, json) = run_json_within(
        dir.path(),
        &args_on(&["3.12"], &["--isolation", iso, "-j", "1"]),
        Duration::from_secs(60),
    )?;
    let took = start.elapsed();
    let runs = runs(&json);
    // The sleepers are not crosspickle's to end (they left the run's group): the test ends them.
    for r in &runs {
        let out = r["stdout"].as_str().unwrap_or("");
        if let Some(pid) = out
            .strip_prefix("left ")
            .and_then(|s| s.split_whitespace().next())
        {
            let _ = std::process::Command::new("kill").arg(pid).status();
        }
    }
    run.expect_code(0)?;
    check(runs.len() == 2, format!("{json}"))?;
    let note = "a process that left its group (a session of its own) still holds this stream";
    for r in &runs {
        let (out, err) = (
            r["stdout"].as_str().unwrap_or(""),
            r["stderr"].as_str().unwrap_or(""),
        );
        check(
            r["verdict"] == "ok"
                && out.starts_with("left ")
                && out.contains(note)
                && err.starts_with("to stderr\n")
                && err.contains(note),
            format!("{r}"),
        )?;
    }
    check(
        took < Duration::from_secs(7),
        format!("2 runs took {took:?}: each was waited on for more than 2 s"),
    )
}

trial!(huge_output_memory_bounded, needs = &["3.11"], both);
fn huge_output_memory_bounded(iso: &'static str) -> TestResult {
    let text = "title: loud\ncode: |\n  import sys\n  chunk = 'x' * 1023 + '\\n'\n  for _ in range(100 * 1024):\n      sys.stdout.write(chunk)\n  sys.stdout.write('THE END\\n')\n";
    let dir = folder(&[("cases/loud.yaml", text)]);
    let json_path = dir.path().join("r.json");
    let mut child = crosspickle(dir.path())
        .args(args_on(&["3.11"], &["--isolation", iso, "--json"]))
        .arg(&json_path)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut peak_kb = 0u64;
    loop {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", child.id())) {
            if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
                let kb: u64 = line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse()
                    .unwrap_or(0);
                peak_kb = peak_kb.max(kb);
            }
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let r = &runs(&json)[0];
    check(r["verdict"] == "ok", format!("{}", r["verdict"]))?;
    let stdout = r["stdout"].as_str().unwrap();
    check(
        stdout.contains("THE END") && stdout.contains("bytes omitted") && stdout.len() < 100_000,
        format!("{} bytes kept", stdout.len()),
    )?;
    check(
        peak_kb > 0 && peak_kb < 60 * 1024,
        format!("crosspickle peaked at {peak_kb} kB for 100 MB of output"),
    )
}

trial!(
    broken_interpreters_listed_and_run_goes_on,
    needs = &["3.11"]
);
fn broken_interpreters_listed_and_run_goes_on() -> TestResult {
    let dir = folder(&[
        ("cases/a.yaml", "title: a\ncode: pass\n"),
        ("fake/hangs", "#!/bin/sh\nsleep 100\n"),
        ("fake/garbage", "#!/bin/sh\necho 'this is not python'\n"),
        ("fake/dies", "#!/bin/sh\nkill -SEGV $$\n"),
        (
            "fake/fails",
            "#!/bin/sh\necho 'error: broken install' >&2\nexit 1\n",
        ),
    ]);
    for f in ["hangs", "garbage", "dies", "fails"] {
        make_executable(&dir.path().join("fake").join(f));
    }
    let cfg = format!(
        "[discovery]\npath = false\npyenv = false\nuv = false\nconda = false\n[pythons]\nhangs = \"fake/hangs\"\ngarbage = \"fake/garbage\"\ndies = \"fake/dies\"\nfails = \"fake/fails\"\nabsent = \"/nonexistent/python\"\ngood = \"{}\"\n",
        py("3.11")
    );
    std::fs::write(dir.path().join("pythons.toml"), cfg).unwrap();
    let start = Instant::now();
    let out = Run::from(
        crosspickle(dir.path())
            .args(["pythons", "--probe-timeout", "2"])
            .output()
            .unwrap(),
    );
    out.expect_code(0)?;
    check(
        start.elapsed() < Duration::from_secs(8),
        format!("probing took {:?}", start.elapsed()),
    )?;
    for (name, reason) in [
        ("hangs", "did not answer"),
        ("garbage", "not Python's: `this is not python`"),
        ("dies", "SIGSEGV"),
        (
            "fails",
            "not a Python interpreter (the probe exited with status 1",
        ),
        ("absent", "not found"),
    ] {
        let line = out
            .stdout
            .lines()
            .find(|l| l.contains(&format!("({name})")))
            .ok_or(format!("{name} not listed:\n{}", out.stdout))?;
        check(line.contains(reason), format!("{name}: {line}"))?;
    }
    // The run goes on with the good one, warning about none of the named broken ones by default.
    let (run, json) = run_json(dir.path(), &["--probe-timeout", "2"]);
    run.expect_code(0)?;
    check(labels(&json).len() == 1, format!("{:?}", labels(&json)))?;
    // Asked for by name, a broken one is an env-error.
    let (run, json) = run_json(
        dir.path(),
        &[
            "--probe-timeout",
            "2",
            "--python",
            "good",
            "--python",
            "garbage",
        ],
    );
    run.expect_code(3)?;
    check(
        runs(&json)
            .iter()
            .any(|r| r["verdict"] == "env-error" && r["python"] == "garbage"),
        format!("{json}"),
    )
}

trial!(interpreter_that_breaks_during_runs, needs = &["3.11"], both);
fn interpreter_that_breaks_during_runs(iso: &'static str) -> TestResult {
    // Answers the probe like the real interpreter, then misbehaves when running cases (in both
    // isolations: a fork server that cannot start falls back to exec isolation).
    let real = py("3.11");
    let dir = folder(&[
        ("cases/a.yaml", "title: a\ncode: pass\n"),
        ("fake/garbage", &format!("#!/bin/sh\ncase \"$*\" in *'interpreter probe'*) exec {real} \"$@\";; esac\necho 'garbage'\nexit 0\n")),
        ("fake/hangs", &format!("#!/bin/sh\ncase \"$*\" in *'interpreter probe'*) exec {real} \"$@\";; esac\nsleep 300\n")),
        ("fake/signal", &format!("#!/bin/sh\ncase \"$*\" in *'interpreter probe'*) exec {real} \"$@\";; esac\nkill -KILL $$\n")),
    ]);
    for f in ["garbage", "hangs", "signal"] {
        make_executable(&dir.path().join("fake").join(f));
    }
    // One that no longer runs Python (garbage, signal) is a tooling failure, not the case's
    // crash: env-error and exit 3; one that hangs is the case's timeout.
    for (fake, verdict, outcome, detail, code) in [
        ("garbage", "env-error", "", "no longer runs Python", 3),
        ("hangs", "regression", "timeout", "still running", 1),
        ("signal", "env-error", "", "no longer starts", 3),
    ] {
        let path = dir.path().join("fake").join(fake);
        let (run, json) = run_json(
            dir.path(),
            &[
                "--pythons-toml",
                "/dev/null",
                "--python",
                &path_str(&path),
                "--timeout",
                "2",
                "--isolation",
                iso,
            ],
        );
        run.expect_code(code)?;
        let r = &runs(&json)[0];
        check(
            r["verdict"] == verdict && (outcome.is_empty() || r["outcome"] == outcome),
            format!("{fake}: {r}"),
        )?;
        check(r.to_string().contains(detail), format!("{fake}: {r}"))?;
    }
    Ok(())
}

trial!(execution_rules, needs = &["2.7", "3.6", "3.13"], both);
fn execution_rules(iso: &'static str) -> TestResult {
    let text = r#"title: rules
params:
  word: [héllo]
  flag: [true]
  none: [null]
  ratio: [0.5]
env:
  MY_VAR: "42"
code: |
  import os, sys, pickle
  assert __name__ == "__main__"
  class K(object):
      pass
  assert pickle.loads(pickle.dumps(K())).__class__.__module__ == "__main__"
  assert os.environ.get("PYTHONHASHSEED") == "0", os.environ.get("PYTHONHASHSEED")
  assert os.environ.get("MY_VAR") == "42"
  assert "PYTHONPATH" not in os.environ and "PYTHONSTARTUP" not in os.environ
  assert os.path.abspath(os.getcwd()) == os.path.dirname(os.path.abspath(__file__))
  assert sys.stdin.read() == ""
  import stat
  assert stat.S_ISCHR(os.fstat(0).st_mode), "stdin is /dev/null"
  assert stat.S_ISFIFO(os.fstat(1).st_mode) and stat.S_ISFIFO(os.fstat(2).st_mode)
  assert os.getsid(0) == os.getpid() and os.getpgid(0) == os.getpid(), "own session and group"
  assert sys.argv == [__file__] and sys.path[0] == os.path.dirname(__file__)
  assert os.open(os.devnull, os.O_RDONLY) == 3, "the case's first file is fd 3"
  assert word == u"h\u00e9llo", repr(word)
  assert flag is True and none is None and ratio == 0.5
  if sys.version_info >= (3, 3):
      import faulthandler
      assert faulthandler.is_enabled()
  open("scratch.txt", "w").write("x")
"#;
    let dir = folder(&[("cases/rules.yaml", text)]);
    let (run, json) = {
        let json_path = dir.path().join("r.json");
        let out = crosspickle(dir.path())
            .args(args_on(
                &["2.7", "3.6", "3.13"],
                &["--isolation", iso, "--json"],
            ))
            .arg(&json_path)
            .env("PYTHONPATH", "/nonexistent")
            .env("PYTHONSTARTUP", "/nonexistent/startup.py")
            .output()
            .unwrap();
        (
            Run::from(out),
            serde_json::from_slice::<serde_json::Value>(&std::fs::read(&json_path).unwrap())
                .unwrap(),
        )
    };
    run.expect_code(0)?;
    check(
        runs(&json).len() == 3 && runs(&json).iter().all(|r| r["verdict"] == "ok"),
        format!("{json}"),
    )
}

trial!(selection_flags, needs = &["3.11"]);
fn selection_flags() -> TestResult {
    let dir = folder(&[
        (
            "cases/a/alpha.yaml",
            "title: a\ntags: [one]\nparams:\n  p: [x, y]\ncode: pass\n",
        ),
        (
            "cases/b/beta.yaml",
            "title: b\ntags: [two]\ncode: raise ValueError('b')\n",
        ),
        (
            "cases/b/gamma.yml",
            "title: g\ncode: raise ValueError('g')\n",
        ),
    ]);
    let exe = py("3.11");
    let base = ["--pythons-toml", "/dev/null", "--python", exe.as_str()];
    let names = |json: &serde_json::Value| -> Vec<String> {
        runs(json)
            .iter()
            .map(|r| {
                format!(
                    "{}{}",
                    r["case"].as_str().unwrap(),
                    r["params"].get("p").and_then(|p| p.as_str()).unwrap_or("")
                )
            })
            .collect()
    };
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        run_json(dir.path(), &a)
    };
    let (run, json) = with(&["-k", "alpha and not p=y"]);
    run.expect_code(0)?;
    check(names(&json) == ["alphax"], format!("{:?}", names(&json)))?;
    let (_, json) = with(&["--tag", "two"]);
    check(names(&json) == ["beta"], format!("{:?}", names(&json)))?;
    let (run, json) = with(&["-k", "beta or gamma", "-j", "1", "-x"]);
    run.expect_code(1)?;
    check(
        json["partial"] == true && runs(&json).len() == 1,
        format!("{json}"),
    )?;
    check(run.stderr.contains("-x"), &run.stderr)?;
    let (run, _) = with(&["-k", "nothing-matches"]);
    run.expect_code(2)?;
    check(run.stderr.contains("selects no case"), &run.stderr)?;
    let (run, _) = with(&["-v", "-k", "alpha"]);
    check(
        run.stdout.lines().filter(|l| l.starts_with("ok")).count() == 2,
        &run.stdout,
    )?;
    let (run, _) = with(&["cases/b/gamma.yml"]);
    run.expect_code(1)?;
    check(
        run.stdout.contains("gamma") && !run.stdout.contains("alpha"),
        &run.stdout,
    )
}

trial!(interrupt_writes_partial_results, needs = &["3.11"]);
fn interrupt_writes_partial_results() -> TestResult {
    let dir = folder(&[
        ("cases/fast.yaml", "title: fast\ncode: pass\n"),
        (
            "cases/slow.yaml",
            "title: slow\ncode: |\n  import time\n  time.sleep(60)\n",
        ),
    ]);
    let json_path = dir.path().join("r.json");
    let child = crosspickle(dir.path())
        .args([
            "--pythons-toml",
            "/dev/null",
            "--python",
            &py("3.11"),
            "-j",
            "2",
            "--json",
        ])
        .arg(&json_path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let run = Run::from(out);
    run.expect_code(130)?;
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).map_err(|e| e.to_string())?).unwrap();
    check(json["partial"] == true, format!("{json}"))?;
    check(
        json["partial_reason"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        format!("{json}"),
    )?;
    check(
        runs(&json).len() == 1 && runs(&json)[0]["case"] == "fast",
        format!("{json}"),
    )?;
    check(run.stdout.contains("PARTIAL"), &run.stdout)
}

trial!(seed_cases_on_every_interpreter, needs = ALL);
fn seed_cases_on_every_interpreter() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args = vec!["--pythons-toml".to_string(), "/dev/null".to_string()];
    for v in ALL.iter().chain(["pypy", "debug", "system"].iter()) {
        if let Some(p) = python(v) {
            args.push("--python".into());
            args.push(path_str(&p));
        }
    }
    for case in [
        "cases/gc/reducer-override-cycle.yaml",
        "cases/customisation/dispatch-table-class-attribute.yaml",
        "cases/customisation/dispatch-table-descriptor-set.yaml",
    ] {
        args.push(path_str(&root.join(case)));
    }
    let dir = folder(&[]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (run, json) = run_json(dir.path(), &a);
    run.expect_code(0)?;
    let find = |case: &str, pickler: Option<&str>, label: &str| {
        runs(&json)
            .into_iter()
            .find(|r| {
                r["case"] == case
                    && r["python"].as_str().unwrap().starts_with(label)
                    && pickler.is_none_or(|p| r["params"]["pickler"] == p)
            })
            .unwrap_or_default()
    };
    check(
        find("reducer-override-cycle", Some("c"), "cpython-3.7.")["verdict"] == "xfail",
        "3.7: hook absent",
    )?;
    check(
        find("reducer-override-cycle", Some("c"), "cpython-3.8.")["verdict"] == "ok",
        "3.8.18: fixed",
    )?;
    check(
        find("reducer-override-cycle", Some("c"), "cpython-2.7.")["verdict"] == "skipped",
        "2.7 skipped",
    )?;
    let shadow = find("dispatch-table-class-attribute", Some("c"), "cpython-3.13.");
    check(
        shadow["verdict"] == "xfail" && shadow["outcome"] == "fail",
        format!("{shadow}"),
    )?;
    check(
        find(
            "dispatch-table-class-attribute",
            Some("python"),
            "cpython-3.6.",
        )["verdict"]
            == "ok",
        "pure-Python honours it",
    )?;
    check(
        find("dispatch-table-descriptor-set", None, "cpython-3.12.")["verdict"] == "ok",
        "workaround",
    )
}

trial!(bad_case_files_are_clear_errors);
fn bad_case_files_are_clear_errors() -> TestResult {
    let cases = [
        ("typo.yaml", "title: t\ncode: pass\nexpect:\n  - outcome: fail\n    mach: x\n", "typo.yaml:5:5: expect[0]: unknown field `mach`"),
        ("where.yaml", "title: t\nparams:\n  p: [1]\ncode: pass\nexpect:\n  - where: {q: 1}\n    outcome: fail\n", "where.yaml:6:13: expect[0].where names param `q`"),
        ("yaml.yaml", "title: [unclosed\ncode: pass\n", "yaml.yaml:"),
        ("list.yaml", "- a\n- b\n", "list.yaml:1:1"),
        ("BadName.yaml", "title: t\ncode: pass\n", "not a valid id"),
        ("binary.yaml", "title: t\ncode: \"\\0\"\nexpect: 3\n", "binary.yaml:3:9"),
    ];
    for (file, text, want) in cases {
        let dir = folder(&[(&format!("cases/{file}"), text)]);
        let out = Run::from(
            crosspickle(dir.path())
                .args(["--pythons-toml", "/dev/null"])
                .output()
                .unwrap(),
        );
        out.expect_code(2)?;
        check(
            out.stderr.contains(want),
            format!("{file}: wanted `{want}` in:\n{}", out.stderr),
        )?;
        check(!out.stderr.contains("panicked"), &out.stderr)?;
    }
    let dir = folder(&[
        ("cases/a.yaml", "id: same\ntitle: a\ncode: pass\n"),
        ("cases/b.yaml", "id: same\ntitle: b\ncode: pass\n"),
    ]);
    let out = Run::from(crosspickle(dir.path()).output().unwrap());
    out.expect_code(2)?;
    check(out.stderr.contains("duplicate id `same`"), &out.stderr)?;
    // No cases/ and nothing named: what to do instead (--corpus, init).
    let dir = folder(&[]);
    let out = Run::from(crosspickle(dir.path()).output().unwrap());
    out.expect_code(2)?;
    check(
        out.stderr.contains("no `cases/` folder here")
            && out.stderr.contains("--corpus")
            && out.stderr.contains("crosspickle init"),
        &out.stderr,
    )?;
    let out = Run::from(crosspickle(dir.path()).arg("mine").output().unwrap());
    out.expect_code(2)?;
    check(
        out.stderr.contains("mine: no such file or folder"),
        &out.stderr,
    )?;
    let out = Run::from(
        crosspickle(dir.path())
            .args(["--no-such-flag"])
            .output()
            .unwrap(),
    );
    out.expect_code(2)
}

trial!(version_numbers_must_be_quoted);
fn version_numbers_must_be_quoted() -> TestResult {
    let dir = folder(&[(
        "cases/v.yaml",
        "title: t\ncode: pass\nexpect:\n  - python: 3.10\n    outcome: fail\n",
    )]);
    let out = Run::from(crosspickle(dir.path()).output().unwrap());
    out.expect_code(2)?;
    check(
        out.stderr.contains("v.yaml:4:") && out.stderr.contains("put it in quotes"),
        &out.stderr,
    )
}
