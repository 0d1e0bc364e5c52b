//! What surrounds a run must not change what crosspickle reports (issue 23): the caller's
//! folder, signals, a shared cache, huge merges, hostile text.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::*;

/// A folder of a project with modules of its own named as the standard library's: a
/// `pickle.py` that has no C pickler and protocol 2 at most, a `json.py` that cannot import.
const HOSTILE_FOLDER: &[(&str, &str)] = &[
    ("pickle.py", "HIGHEST_PROTOCOL = 2\nDEFAULT_PROTOCOL = 2\n"),
    (
        "json.py",
        "raise ImportError('this folder has a json.py of its own')\n",
    ),
    (
        "cases/c-pickle.yaml",
        "title: the C pickler is what pickle hands out\n\
         features: {c_pickle: true}\n\
         code: |\n  import pickle, _pickle\n  assert pickle.Pickler is _pickle.Pickler\n",
    ),
];

/// The facts the JSON report gives of the interpreter whose label starts with `prefix`.
fn facts(json: &serde_json::Value, prefix: &str) -> serde_json::Value {
    json["interpreters"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["label"].as_str().is_some_and(|l| l.starts_with(prefix)))
        .map(|i| {
            serde_json::json!({
                "c_pickle": i["c_pickle"],
                "c_pickle_used": i["c_pickle_used"],
                "pickle_highest_protocol": i["pickle_highest_protocol"],
            })
        })
        .unwrap_or(serde_json::Value::Null)
}

trial!(
    the_callers_pickle_and_json_do_not_answer_for_the_interpreter,
    needs = &["2.7", "3.12"]
);
/// From a folder with a `pickle.py` and a `json.py`, every interpreter is probed as it is (its
/// C pickler, its protocols), a case that needs the C pickler runs and passes, and a probe
/// answer cached by an older crosspickle (which ran the probe in the caller's folder) is not
/// believed.
fn the_callers_pickle_and_json_do_not_answer_for_the_interpreter() -> TestResult {
    let dir = folder(HOSTILE_FOLDER);
    let cache = tempfile::tempdir()?;
    let args = args_on(&["2.7", "3.12"], &["cases", "--cache-dir"]);
    let mut args = args;
    args.push(path_str(cache.path()));
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let modern = facts(&json, "cpython-3.12");
    let expected = serde_json::json!({
        "c_pickle": "_pickle", "c_pickle_used": true, "pickle_highest_protocol": 5,
    });
    check(
        modern == expected,
        format!("3.12 probed from the folder: {modern} (wanted {expected})"),
    )?;
    let old = facts(&json, "cpython-2.7");
    let expected_old = serde_json::json!({
        "c_pickle": "cPickle", "c_pickle_used": null, "pickle_highest_protocol": 2,
    });
    check(
        old == expected_old,
        format!("2.7 probed from the folder: {old} (wanted {expected_old})"),
    )?;
    let verdicts: Vec<(String, String)> = runs(&json)
        .iter()
        .map(|r| {
            (
                r["python"].as_str().unwrap_or("").to_string(),
                r["verdict"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    check(
        verdicts
            .iter()
            .any(|(p, v)| p.starts_with("cpython-3.12") && v == "ok"),
        format!("the C-pickler case did not run as expected on 3.12: {verdicts:?}"),
    )?;

    // An answer an older crosspickle cached from such a folder: no C pickler, protocol 2.
    let file = cache.path().join("interpreters.json");
    let mut cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&file)?)?;
    cached["version"] = 2.into();
    for entry in cached["entries"]
        .as_object_mut()
        .ok_or("no entries")?
        .values_mut()
    {
        entry.as_object_mut().ok_or("an entry")?.remove("probe");
        entry["info"]["c_pickle_used"] = false.into();
        entry["info"]["pickle_highest_protocol"] = 2.into();
    }
    std::fs::write(&file, serde_json::to_vec(&cached)?)?;
    let elsewhere = tempfile::tempdir()?;
    std::fs::create_dir_all(elsewhere.path().join("cases"))?;
    std::fs::copy(
        dir.path().join("cases/c-pickle.yaml"),
        elsewhere.path().join("cases/c-pickle.yaml"),
    )?;
    let (run, json) = run_json(elsewhere.path(), &args);
    run.expect_code(0)?;
    let again = facts(&json, "cpython-3.12");
    check(
        again == expected,
        format!("3.12 with an older crosspickle's cache: {again} (wanted {expected})"),
    )?;
    let rewritten: serde_json::Value = serde_json::from_slice(&std::fs::read(&file)?)?;
    check(
        rewritten["version"] != 2,
        "the older crosspickle's cache was kept as it was",
    )?;
    Ok(())
}

/// A folder with a case that passes and one that writes its pid to `spin.pid` and then spins
/// (its time limit a minute away), and a TMPDIR of its own.
fn spinning_folder() -> tempfile::TempDir {
    let dir = folder(&[
        ("cases/quick.yaml", "title: quick\ncode: pass\n"),
        ("tmp/.keep", ""),
    ]);
    let pid_file = dir.path().join("spin.pid");
    let spin = format!(
        "title: spins\ntimeout: 60\ncode: |\n  import os\n  f = open({:?}, 'w')\n  \
         f.write(str(os.getpid()))\n  f.close()\n  while True:\n      pass\n",
        path_str(&pid_file)
    );
    std::fs::write(dir.path().join("cases/spin.yaml"), spin).unwrap();
    std::fs::remove_file(dir.path().join("tmp/.keep")).unwrap();
    dir
}

/// crosspickle started on the spinning folder, once the spinning case has started: the child
/// and the case's pid.
fn start_spinning(
    dir: &Path,
    iso: &str,
) -> Result<(std::process::Child, i32), libtest_mimic::Failed> {
    let mut args = args_on(&["3.12"], &["cases", "--isolation", iso, "--json"]);
    args.push(path_str(&dir.join("results.json")));
    let mut child = crosspickle(dir)
        .args(&args)
        .env("TMPDIR", dir.join("tmp"))
        .stdout(std::fs::File::create(dir.join("stdout"))?)
        .stderr(std::fs::File::create(dir.join("stderr"))?)
        .spawn()?;
    let pid_file = dir.join("spin.pid");
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            std::thread::sleep(Duration::from_millis(300));
            return Ok((child, pid));
        }
        if start.elapsed() > Duration::from_secs(60) || child.try_wait()?.is_some() {
            let _ = child.kill();
            let _ = child.wait();
            let said = std::fs::read_to_string(dir.join("stderr")).unwrap_or_default();
            return Err(format!("the spinning case never started: {said}").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Process `pid` is gone (or a zombie) within `within`.
fn gone_within(pid: i32, within: Duration) -> bool {
    let start = Instant::now();
    loop {
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
            .unwrap_or(true);
        if kill(Pid::from_raw(pid), None).is_err() || zombie {
            return true;
        }
        if start.elapsed() > within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `child` ends within `within`: its exit code (a signal's death is 128 and its number).
fn ended_within(
    child: &mut std::process::Child,
    within: Duration,
) -> Result<i32, libtest_mimic::Failed> {
    use std::os::unix::process::ExitStatusExt;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status.code().unwrap_or(128 + status.signal().unwrap_or(0)));
        }
        if start.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("crosspickle did not end within {within:?}").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The entries of folder `dir`.
fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|e| e.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

trial!(sigterm_ends_the_run_as_ctrl_c_does, needs = &["3.12"], both);
fn sigterm_ends_the_run_as_ctrl_c_does(iso: &'static str) -> TestResult {
    stopped_by(iso, Signal::SIGTERM)
}

trial!(sighup_ends_the_run_as_ctrl_c_does, needs = &["3.12"], both);
fn sighup_ends_the_run_as_ctrl_c_does(iso: &'static str) -> TestResult {
    stopped_by(iso, Signal::SIGHUP)
}

/// SIGTERM or SIGHUP while a case spins: the run ends as with Ctrl-C (the spinning case ended
/// with its group, the report written and marked partial, the temporary folders removed), and
/// crosspickle exits with 128 and the signal's number.
fn stopped_by(iso: &str, signal: Signal) -> TestResult {
    let dir = spinning_folder();
    let (mut child, spinner) = start_spinning(dir.path(), iso)?;
    kill(Pid::from_raw(child.id() as i32), signal)?;
    let code = ended_within(&mut child, Duration::from_secs(20));
    let spinner_gone = gone_within(spinner, Duration::from_secs(3));
    if !spinner_gone {
        let _ = kill(Pid::from_raw(spinner), Signal::SIGKILL);
    }
    let code = code?;
    let stderr = std::fs::read_to_string(dir.path().join("stderr"))?;
    check(
        code == 128 + signal as i32,
        format!(
            "exit {code} on {signal} (wanted {}): {stderr}",
            128 + signal as i32
        ),
    )?;
    check(spinner_gone, format!("the spinning case outlived {signal}"))?;
    let json = json_at(&dir.path().join("results.json"));
    let reason = json["partial_reason"].as_str().unwrap_or_default();
    check(
        json["partial"] == true && reason.contains(signal.as_str()),
        format!(
            "the report after {signal}: partial {}, reason {reason:?}",
            json["partial"]
        ),
    )?;
    let left = entries(&dir.path().join("tmp"));
    check(left.is_empty(), format!("temporary folders left: {left:?}"))
}

trial!(
    nothing_outlives_a_killed_crosspickle,
    needs = &["3.12"],
    both
);
/// SIGKILL of crosspickle while a case spins (a run of its own, or a fork server's child):
/// the case does not outlive it by more than a few seconds.
fn nothing_outlives_a_killed_crosspickle(iso: &'static str) -> TestResult {
    let dir = spinning_folder();
    let (mut child, spinner) = start_spinning(dir.path(), iso)?;
    child.kill()?;
    child.wait()?;
    let gone = gone_within(spinner, Duration::from_secs(5));
    if !gone {
        let _ = kill(Pid::from_raw(spinner), Signal::SIGKILL);
    }
    check(
        gone,
        format!("the spinning case ({iso}) was still running 5 s after crosspickle was killed"),
    )
}

/// The pids of the processes whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<i32> {
    entries(Path::new("/proc"))
        .iter()
        .filter_map(|p| {
            let pid: i32 = p.file_name()?.to_str()?.parse().ok()?;
            let cmdline = std::fs::read(p.join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(needle)
                .then_some(pid)
        })
        .collect()
}

trial!(
    a_pip_install_does_not_outlive_a_killed_crosspickle,
    needs = &["3.12"]
);
/// SIGKILL of crosspickle while pip installs the requirements of an environment from an index
/// that never answers: pip, and the pip it starts for the environment's interpreter (`pip
/// --python`), are gone within a few seconds.
fn a_pip_install_does_not_outlive_a_killed_crosspickle() -> TestResult {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let asked_too = asked.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
            asked_too.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let name = format!("crosspickle-never-answers-{}", std::process::id());
    let dir = folder(&[(
        "cases/needs.yaml",
        &format!("title: needs a package\nrequires: [\"{name}==1.0\"]\ncode: pass\n"),
    )]);
    let mut args = args_on(&["3.12"], &["cases", "--cache-dir"]);
    args.push(path_str(&dir.path().join("cache")));
    let mut child = crosspickle(dir.path())
        .args(&args)
        .env("PIP_INDEX_URL", format!("http://127.0.0.1:{port}/simple"))
        .env("CROSSPICKLE_INSTALLER", "pip")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let start = Instant::now();
    let pips = loop {
        // Waiting for the index: pip, and the pip it started for the environment's interpreter.
        let waiting = asked.load(std::sync::atomic::Ordering::SeqCst);
        if waiting || start.elapsed() > Duration::from_secs(60) {
            break processes_with(&name);
        }
        if child.try_wait()?.is_some() {
            return Err("crosspickle ended before pip was installing".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(500));
    child.kill()?;
    child.wait()?;
    check(
        asked.load(std::sync::atomic::Ordering::SeqCst) && !pips.is_empty(),
        "pip never asked the index",
    )?;
    let left: Vec<i32> = pips
        .iter()
        .copied()
        .filter(|&pid| !gone_within(pid, Duration::from_secs(5)))
        .collect();
    for &pid in &left {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    check(
        left.is_empty(),
        format!("of pip's processes {pips:?}, {left:?} outlived crosspickle by 5 s"),
    )
}

trial!(
    cache_clean_while_another_crosspickle_runs_changes_no_verdict,
    needs = &["3.12"]
);
/// `cache clean` while another crosspickle runs (each case a run of its own, which boots from
/// the cache's driver): the runs are not touched (what they need is kept: the runs hold a lease
/// on the cache), and it is cleaned once they end; a cache whose driver is removed anyway (by
/// hand, or by a crosspickle that knows no lease) gets it back for the next run.
fn cache_clean_while_another_crosspickle_runs_changes_no_verdict() -> TestResult {
    let mut files: Vec<(String, String)> = (0..24)
        .map(|i| {
            (
                format!("cases/slow{i}.yaml"),
                format!("title: slow {i}\ncode: |\n  import time\n  time.sleep(0.3)\n"),
            )
        })
        .collect();
    files.push(("cache/.keep".into(), String::new()));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = folder(&files);
    let cache = dir.path().join("cache");
    let drivers = cache.join("drivers");
    for tamper in ["cache clean", "rm -r drivers"] {
        let mut args = args_on(
            &["3.12"],
            &["cases", "--isolation", "exec", "-j", "2", "--cache-dir"],
        );
        args.push(path_str(&cache));
        args.push("--json".into());
        args.push(path_str(&dir.path().join("results.json")));
        let mut child = crosspickle(dir.path())
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        // Once the first runs have booted from the cache's driver.
        let start = Instant::now();
        while !has_compiled_forms(&drivers) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        let cleaned = if tamper == "cache clean" {
            cache_command(dir.path(), &cache, &["clean"]).stdout
        } else {
            // As `rm -r` by hand: the run may write a compiled form into the folder while it is
            // emptied (ENOTEMPTY at its last step), so it is tried again until it is gone.
            let start = Instant::now();
            while let Err(e) = std::fs::remove_dir_all(&drivers) {
                if !drivers.exists() {
                    break;
                }
                if start.elapsed() > Duration::from_secs(10) {
                    return check(false, format!("rm -r drivers: {e}"));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            String::new()
        };
        let code = ended_within(&mut child, Duration::from_secs(120))?;
        let json = json_at(&dir.path().join("results.json"));
        let verdicts: Vec<String> = runs(&json)
            .iter()
            .map(|r| r["verdict"].as_str().unwrap_or("").to_string())
            .collect();
        let ok = verdicts.iter().filter(|v| *v == "ok").count();
        check(
            code == 0 && ok == 24,
            format!("after `{tamper}` under a run: exit {code}, {ok} of 24 ok ({verdicts:?}); clean said: {cleaned}"),
        )?;
        if tamper == "cache clean" {
            check(
                cleaned.contains("another crosspickle is running"),
                format!("clean under a run said: {cleaned}"),
            )?;
            let after = cache_command(dir.path(), &cache, &["clean"]);
            check(
                after.stdout.starts_with("removed ") && !drivers.exists(),
                format!("clean once the run ended: {}", after.stdout),
            )?;
        }
    }
    Ok(())
}

/// A folder of `drivers/` holds a compiled form of the driver.
fn has_compiled_forms(drivers: &Path) -> bool {
    entries(drivers)
        .iter()
        .flat_map(|d| entries(d))
        .any(|f| f.extension().is_some_and(|e| e == "bin"))
}

trial!(
    hostile_text_is_neutral_in_markdown_and_on_the_terminal,
    needs = &["3.12"]
);
/// An exception whose type name holds blank lines and Markdown, a message with terminal escape
/// sequences (OSC 52 clipboard, OSC 8 link, CSI), a case link with `|`, `(` and a backtick: the
/// Markdown keeps each fold and each table row whole and holds no control character, and
/// neither `run` nor `merge` prints an escape sequence that is not crosspickle's own colour,
/// with `--color always`.
fn hostile_text_is_neutral_in_markdown_and_on_the_terminal() -> TestResult {
    let case = [
        "title: hostile",
        "links: ['https://example.invalid/a|b(c)`d']",
        "code: |",
        "  class E(Exception):",
        "      pass",
        "  E.__qualname__ = 'E\\n\\n## Injected heading\\n\\n[click](https://evil.invalid) | x'",
        "  raise E('osc52 \\x1b]52;c;aGk=\\x07 link \\x1b]8;;https://evil.invalid\\x07here\\x1b]8;;\\x07 csi \\x1b[2J end')",
        "",
    ]
    .join("\n");
    let dir = folder(&[("cases/hostile.yaml", &case)]);
    let md = dir.path().join("summary.md");
    let mut args = args_on(&["3.12"], &["cases", "--color", "always", "--markdown"]);
    args.push(path_str(&md));
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(1)?;
    let markdown = std::fs::read_to_string(&md)?;
    let controls: Vec<char> = markdown
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    check(
        controls.is_empty(),
        format!("control characters in the Markdown: {controls:?}"),
    )?;
    for line in markdown
        .lines()
        .filter(|l| l.starts_with("<details><summary>"))
    {
        check(
            line.contains("</summary>"),
            format!("a fold's summary spans lines: {line}"),
        )?;
    }
    // Outside code blocks, no line of the case's text starts a line of Markdown.
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        check(
            in_code || !line.starts_with("## Injected"),
            format!("a case's text made a heading:\n{markdown}"),
        )?;
    }
    let row = markdown
        .lines()
        .find(|l| l.starts_with("| [hostile]"))
        .ok_or_else(|| format!("no matrix row for the case:\n{markdown}"))?;
    let cells = row.replace("\\|", "").matches('|').count();
    check(
        cells == 3 && row.contains("%7C") && row.contains("%28") && row.contains("%60"),
        format!("the row of a case whose link has `|`: {row}"),
    )?;
    let own_colour_only = |out: &str| {
        let mut rest = out;
        while let Some(i) = rest.find('\u{1b}') {
            rest = &rest[i + 1..];
            let sgr = rest.strip_prefix('[').is_some_and(|r| {
                let end = r.find(|c: char| !(c.is_ascii_digit() || c == ';'));
                end.is_some_and(|e| r[e..].starts_with('m'))
            });
            if !sgr {
                return false;
            }
        }
        !out.contains('\u{7}')
    };
    check(
        own_colour_only(&run.stdout) && own_colour_only(&run.stderr),
        format!("`run` printed escape sequences: {:?}", run.stdout),
    )?;
    check(
        run.stdout.contains('\u{1b}'),
        "--color always printed no colour",
    )?;
    // Labels from another machine's JSON, with an OSC 8 link in them.
    let mut hostile = json.clone();
    let evil = "cpython-3.12.1\u{1b}]8;;https://evil.invalid\u{7}x";
    for i in hostile["interpreters"]
        .as_array_mut()
        .ok_or("interpreters")?
    {
        i["label"] = evil.into();
    }
    for r in hostile["runs"].as_array_mut().ok_or("runs")? {
        r["python"] = evil.into();
    }
    let input = dir.path().join("other.json");
    std::fs::write(&input, serde_json::to_vec(&hostile)?)?;
    let merged = Run::from(
        crosspickle(dir.path())
            .arg("merge")
            .arg(&input)
            .args(["--color", "always", "--markdown"])
            .arg(dir.path().join("merged.md"))
            .output()?,
    );
    check(
        (merged.code == 1) && own_colour_only(&merged.stdout),
        format!(
            "`merge` (exit {}) printed: {:?}",
            merged.code, merged.stdout
        ),
    )?;
    let merged_md = std::fs::read_to_string(dir.path().join("merged.md"))?;
    check(
        !merged_md.contains('\u{1b}') && !merged_md.contains('\u{7}'),
        "control characters in the merged Markdown",
    )
}

trial!(
    reports_of_100000_merged_runs_keep_their_size,
    needs = &["3.12"]
);
/// 100,000 merged runs (5,000 cases on 20 interpreters, 20% failing with a long traceback):
/// JUnit under 30 MB, Markdown under 1 MiB with its matrix summarised (what was left out said),
/// HTML bounded (no details for the runs that went as expected, and the page says so).
fn reports_of_100000_merged_runs_keep_their_size() -> TestResult {
    let dir = folder(&[
        ("cases/ok.yaml", "title: fine\ncode: pass\n"),
        (
            "cases/bad.yaml",
            "title: bad\ncode: |\n  raise ValueError('boom')\n",
        ),
    ]);
    let (run, base) = run_json(dir.path(), &args_on(&["3.12"], &["cases"]));
    run.expect_code(1)?;
    let find = |verdict: &str| {
        runs(&base)
            .into_iter()
            .find(|r| r["verdict"] == verdict)
            .ok_or_else(|| format!("no {verdict} run"))
    };
    let (bad, ok) = (find("regression")?, find("ok")?);
    let interpreter = base["interpreters"][0].clone();
    let long_traceback: String = (0..30)
        .map(|k| format!("  File \"/some/long/path/module_{k}.py\", line {k}, in f{k}\n    call(argument_{k})\n"))
        .collect();
    let mut merged = base.clone();
    merged["interpreters"] = (0..20)
        .map(|i| {
            let mut x = interpreter.clone();
            x["label"] = format!("cpython-3.12.{i}").into();
            x["version"] = format!("3.12.{i}").into();
            x
        })
        .collect();
    let mut cases = serde_json::Map::new();
    let mut all = Vec::with_capacity(100_000);
    for c in 0..5000 {
        let id = format!("case-number-{c:05}-with-a-longish-name");
        cases.insert(
            id.clone(),
            serde_json::json!({"title": format!("case {c}"), "path": format!("cases/{id}.yaml"),
                               "links": [format!("https://example.org/issue/{c}")]}),
        );
        for i in 0..20 {
            let mut r = if c % 5 == 0 { bad.clone() } else { ok.clone() };
            r["case"] = id.clone().into();
            r["python"] = format!("cpython-3.12.{i}").into();
            if c % 5 == 0 {
                let tb = format!("{}{long_traceback}", r["traceback"].as_str().unwrap_or(""));
                r["traceback"] = tb.into();
                r["stderr"] = "warning: something\n".repeat(20).into();
            }
            all.push(r);
        }
    }
    merged["cases"] = cases.into();
    merged["runs"] = all.into();
    let input = dir.path().join("many.json");
    std::fs::write(&input, serde_json::to_vec(&merged)?)?;
    let (junit, md, html) = (
        dir.path().join("many.xml"),
        dir.path().join("many.md"),
        dir.path().join("many.html"),
    );
    let out = crosspickle(dir.path())
        .arg("merge")
        .arg(&input)
        .arg("--junit-xml")
        .arg(&junit)
        .arg("--markdown")
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .stdout(std::process::Stdio::null())
        .output()?;
    let code = out.status.code().unwrap_or(-1);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let (j, m, h) = (size(&junit), size(&md), size(&html));
    eprintln!("100,000 merged runs: JUnit {j} B, Markdown {m} B, HTML {h} B");
    check(code == 1, format!("merge exit {code}"))?;
    check(j > 0 && j < 30_000_000, format!("JUnit {j} bytes"))?;
    let markdown = std::fs::read_to_string(&md)?;
    check(
        m < 1024 * 1024 && markdown.contains("rows left out of this matrix"),
        format!("Markdown {m} bytes"),
    )?;
    let page = std::fs::read_to_string(&html)?;
    check(
        h < 80_000_000
            && page.contains("id=\"holds\"")
            && page.matches("<section id=\"details-cell-").count() == 20_000,
        format!("HTML {h} bytes"),
    )
}

trial!(
    an_exception_with_200000_notes_writes_a_small_json,
    needs = &["3.12"]
);
/// An exception with 200,000 notes (3.14's pickler adds one per nesting level): the JSON keeps
/// the first and the last of them and says how many it left out.
fn an_exception_with_200000_notes_writes_a_small_json() -> TestResult {
    let case = "title: notes\ncode: |\n  e = ValueError('deep')\n  e.__notes__ = ['note %d' % i for i in range(200000)]\n  raise e\n";
    let dir = folder(&[("cases/notes.yaml", case)]);
    let (run, json) = run_json(dir.path(), &args_on(&["3.12"], &["cases"]));
    run.expect_code(1)?;
    let size = std::fs::metadata(dir.path().join("results.json"))?.len();
    let traceback = runs(&json)
        .first()
        .and_then(|r| r["traceback"].as_str().map(String::from))
        .unwrap_or_default();
    check(
        size < 200_000
            && traceback.contains("note 0\n")
            && traceback.contains("note 199999\n")
            && traceback.contains("notes omitted"),
        format!(
            "{size} bytes of JSON; traceback ends {:?}",
            &traceback[traceback.len().saturating_sub(300)..]
        ),
    )
}

trial!(a_closed_stderr_keeps_exit_2);
/// An error written to a stderr whose reader is gone (`crosspickle -p 3.99 2>&1 | head -2`):
/// exit 2, as with a stderr that is open, and no panic.
fn a_closed_stderr_keeps_exit_2() -> TestResult {
    let dir = folder(&[("cases/a.yaml", "title: a\ncode: pass\n")]);
    let (read, write) = nix::unistd::pipe()?;
    drop(read);
    let out = crosspickle(dir.path())
        .args(["-p", "3.99", "--pythons-toml", "/dev/null"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::from(write))
        .output()?;
    check(
        out.status.code() == Some(2),
        format!(
            "exit {:?} with a closed stderr (wanted 2)",
            out.status.code()
        ),
    )
}

trial!(instance_of_is_shown_wherever_expected_is, needs = &["3.12"]);
/// A rule that expects `instance_of` says so in every report that says what was expected.
fn instance_of_is_shown_wherever_expected_is() -> TestResult {
    let case = "title: io\nexpect:\n  - outcome: error\n    instance_of: KeyError\ncode: |\n  raise ValueError('x')\n";
    let dir = folder(&[("cases/io.yaml", case)]);
    let mut args = args_on(&["3.12"], &["cases"]);
    for (flag, file) in [
        ("--markdown", "m.md"),
        ("--junit-xml", "j.xml"),
        ("--html", "h.html"),
    ] {
        args.push(flag.into());
        args.push(path_str(&dir.path().join(file)));
    }
    let (run, _) = run_json(dir.path(), &args);
    run.expect_code(1)?;
    check(
        run.stdout
            .contains("expected:  error: an instance of KeyError"),
        format!("terminal: {}", run.stdout),
    )?;
    for file in ["m.md", "j.xml", "h.html"] {
        let text = std::fs::read_to_string(dir.path().join(file))?;
        check(
            text.contains("an instance of KeyError"),
            format!("{file} does not say instance_of"),
        )?;
    }
    Ok(())
}

trial!(
    version_requests_that_match_nothing_or_mistype_an_operator,
    needs = &["3.12"]
);
/// A version range that can match nothing (`<3.1`, a typo for `<3.10`) is an error at its
/// line and column, in a case file and on the command line; a request with a mistyped operator
/// says so without a stray colon at its end.
fn version_requests_that_match_nothing_or_mistype_an_operator() -> TestResult {
    let case = "title: typo\nexpect:\n  - python: \">=3.8,<3.1\"\n    outcome: fail\ncode: pass\n";
    let dir = folder(&[("cases/typo.yaml", case)]);
    let (run, _) = run_json(dir.path(), &args_on(&["3.12"], &["cases"]));
    run.expect_code(2)?;
    check(
        run.stderr.contains("cases/typo.yaml:3:13: expect[0].python: invalid version request `>=3.8,<3.1`: its bounds exclude each other"),
        format!("the case file: {}", run.stderr),
    )?;
    let dir = folder(&[("cases/fine.yaml", "title: fine\ncode: pass\n")]);
    for (request, says) in [
        (">=3.8,<3.1", "its bounds exclude each other"),
        ("=3.8", "must be one of ~= == != <= >= < > ==="),
    ] {
        let out = Run::from(
            crosspickle(dir.path())
                .args(["cases", "--pythons-toml", "/dev/null", "-p", request])
                .output()?,
        );
        out.expect_code(2)?;
        let line = out.stderr.lines().next().unwrap_or("");
        check(
            line.contains(says) && !line.ends_with(':'),
            format!("-p {request}: {line}"),
        )?;
    }
    Ok(())
}

trial!(yaml_tabs_and_indentation_slips_say_what_to_do);
/// A tab in a case file's indentation, and an item key one column off: the error names the
/// slip at its line and column and says what to do.
fn yaml_tabs_and_indentation_slips_say_what_to_do() -> TestResult {
    for (text, at, says) in [
        (
            "title: t\ncode: |\n\tpass\n",
            "cases/a.yaml:3:1: ",
            "YAML indents with spaces only",
        ),
        (
            "title: t\nexpect:\n  - outcome: fail\n   reason: x\ncode: pass\n",
            "cases/a.yaml:4:4: ",
            "this line's indentation does not match the lines above",
        ),
    ] {
        let dir = folder(&[("cases/a.yaml", text)]);
        let run = Run::from(crosspickle(dir.path()).args(["list", "cases"]).output()?);
        run.expect_code(2)?;
        check(
            run.stderr.contains(at) && run.stderr.contains(says),
            format!("{text:?}: {}", run.stderr),
        )?;
    }
    Ok(())
}
