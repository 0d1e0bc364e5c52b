//! What a newcomer meets around a run (issue 23): version ranges that match no interpreter of
//! the machine, environments built for minutes, a matrix wider than the terminal, a package
//! bisect that crosses several changes, tooling failures that must not pass for verdicts; and
//! (issue 34) the standard library's cases run before any environment is made.

use std::path::Path;

use crate::support::*;

/// A pythons.toml that names `pythons` (name, need) and discovers nothing else: the machine,
/// as far as crosspickle knows, is exactly these.
fn machine_of(dir: &Path, pythons: &[(&str, &str)]) -> String {
    let mut text = String::from(
        "[discovery]\npath = false\npyenv = false\nuv = false\nconda = false\n\n[pythons]\n",
    );
    for (name, need) in pythons {
        let path = python(need).expect("a trial's interpreter");
        text.push_str(&format!("{name} = {:?}\n", path.display().to_string()));
    }
    std::fs::write(dir.join("pythons.toml"), text).unwrap();
    dir.join("pythons.toml").display().to_string()
}

trial!(
    a_version_range_that_matches_no_interpreter_here_is_a_warning,
    needs = &["2.7", "3.12"]
);
/// On a machine with 2.7 and 3.12, a case's `python: ">=3.20"` (a typo for `>=3.10`) skips
/// the case everywhere: the run still exits 0, and warns at the range's line and column; a
/// rule's `<2` is counted in a note, and `list --expected` warns about it at its place.
fn a_version_range_that_matches_no_interpreter_here_is_a_warning() -> TestResult {
    let dir = folder(&[
        ("cases/typo.yaml", "title: typo\npython: \">=3.20\"\ncode: pass\n"),
        (
            "cases/rule.yaml",
            "title: rule\nexpect:\n  - outcome: fail\n    python: [\"<3\", \"<2\"]\ncode: assert str is not bytes\n",
        ),
        ("cases/fine.yaml", "title: fine\npython: \">=3.10\"\ncode: pass\n"),
    ]);
    let toml = machine_of(dir.path(), &[("old", "2.7"), ("new", "3.12")]);
    let (run, json) = run_json(dir.path(), &["cases", "--pythons-toml", &toml]);
    run.expect_code(0)?;
    check(
        runs(&json)
            .iter()
            .filter(|r| r["case"] == "typo")
            .all(|r| r["verdict"] == "skipped"),
        "typo is skipped everywhere",
    )?;
    let warned = "warning: cases/typo.yaml:2:9: python `>=3.20` matches no interpreter of this machine (found 2.7.18 to 3.12.1): the case is skipped on every one of them";
    check(
        run.stderr.contains(warned),
        format!("the case's range: {}", run.stderr),
    )?;
    check(
        run.stderr.contains("note: 1 rule's version range matches no interpreter of this machine, such as cases/rule.yaml:4:20: expect[0].python[1] `<2`"),
        format!("the rules' note: {}", run.stderr),
    )?;
    check(
        !run.stderr.contains("fine.yaml") && !run.stderr.contains("`<3`"),
        format!("ranges that match are not named: {}", run.stderr),
    )?;
    let list = Run::from(
        crosspickle(dir.path())
            .args(["list", "--expected", "cases", "--pythons-toml", &toml])
            .output()?,
    );
    list.expect_code(0)?;
    check(
        list.stderr.contains(warned)
            && list.stderr.contains("warning: cases/rule.yaml:4:20: expect[0].python[1] `<2` matches no interpreter of this machine (found 2.7.18 to 3.12.1): the rule decides no run here"),
        format!("list --expected names each: {}", list.stderr),
    )
}

/// Cases of which the first says, by a file, that the run is under way and then waits a
/// second, and the others pass: what runs after a fault made during that second shows it.
fn cases_with_a_start_signal(dir: &Path) -> std::path::PathBuf {
    let started = dir.join("started");
    let first = format!(
        "title: first\ncode: |\n  import time\n  open({:?}, 'w').close()\n  time.sleep(1)\n",
        started.display().to_string()
    );
    std::fs::create_dir_all(dir.join("cases")).unwrap();
    std::fs::write(dir.join("cases/a-first.yaml"), first).unwrap();
    for n in 1..=4 {
        std::fs::write(
            dir.join(format!("cases/later-{n}.yaml")),
            format!("title: later {n}\ncode: pass\n"),
        )
        .unwrap();
    }
    started
}

/// Run `args` (one job, exec isolation, JSON to results.json) and, once the first case has
/// started, `fault`; returns the run and its JSON.
fn run_with_fault(
    dir: &Path,
    started: &Path,
    args: &[String],
    fault: impl FnOnce(),
) -> Result<(Run, serde_json::Value), libtest_mimic::Failed> {
    let json = dir.join("results.json");
    let child = crosspickle(dir)
        .args(args)
        .args(["-j", "1", "--isolation", "exec", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let begun = std::time::Instant::now();
    while !started.exists() {
        check(
            begun.elapsed().as_secs() < 60,
            "the first case never started",
        )?;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    fault();
    let run = Run::from(child.wait_with_output()?);
    Ok((run, json_at(&json)))
}

/// Exit 3 and a message naming how many runs could not be set up and why; the runs after the
/// fault are env-error with that reason, none a regression.
fn is_tooling_failure(run: &Run, json: &serde_json::Value, why: &str) -> TestResult {
    run.expect_code(3)?;
    check(
        run.stderr
            .contains("could not be set up, a tooling failure and no verdict on")
            && run.stderr.contains(why),
        format!("the message: {}", run.stderr),
    )?;
    let all = runs(json);
    check(
        all.iter().all(|r| r["verdict"] != "regression")
            && all.iter().any(|r| {
                r["verdict"] == "env-error" && r["reason"].as_str().unwrap_or("").contains(why)
            }),
        format!("the runs: {json}"),
    )
}

trial!(
    an_interpreter_broken_during_the_run_is_a_tooling_failure,
    needs = &["3.6"]
);
/// A copy of a real CPython 3.6 installation (its executable and its standard library) whose
/// `encodings` package is removed while the run goes on (as an upgrade or a clean-up half
/// done leaves it): the runs after it crash at start ("Fatal Python error"), and that is the
/// interpreter's failure, not the cases' regression.
fn an_interpreter_broken_during_the_run_is_a_tooling_failure() -> TestResult {
    let py = python("3.6").expect("3.6");
    let prefix = py.parent().and_then(Path::parent).ok_or("no prefix")?;
    let dir = tempfile::tempdir()?;
    let copy = dir.path().join("py36");
    copy_tree(&prefix.join("bin"), &copy.join("bin"))?;
    copy_tree(&prefix.join("lib/python3.6"), &copy.join("lib/python3.6"))?;
    if prefix.join("lib/libpython3.6m.so.1.0").exists() {
        std::fs::copy(
            prefix.join("lib/libpython3.6m.so.1.0"),
            copy.join("lib/libpython3.6m.so.1.0"),
        )?;
    }
    let started = cases_with_a_start_signal(dir.path());
    let exe = copy.join("bin").join(py.file_name().unwrap());
    let args = vec![
        "cases".into(),
        "--pythons-toml".into(),
        "/dev/null".into(),
        "-p".into(),
        path_str(&exe),
    ];
    let encodings = copy.join("lib/python3.6/encodings");
    let (run, json) = run_with_fault(dir.path(), &started, &args, || {
        std::fs::remove_dir_all(&encodings).expect("the copy's encodings removed")
    })?;
    is_tooling_failure(&run, &json, "cpython-3.6.15 no longer starts")?;
    check(
        run.stderr.contains("Fatal Python error"),
        format!("what the interpreter said: {}", run.stderr),
    )
}

/// Copy the folder `from` to `to`, without the test suite and compiled files.
fn copy_tree(from: &Path, to: &Path) -> TestResult {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let kind = entry.file_type()?;
        if [
            "test",
            "__pycache__",
            "site-packages",
            "idlelib",
            "tkinter",
            "lib2to3",
        ]
        .iter()
        .any(|skip| name == *skip)
        {
            continue;
        }
        let target = to.join(&name);
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

trial!(
    an_interpreter_removed_during_the_run_is_a_tooling_failure,
    needs = &["3.12"]
);
/// A virtual environment of 3.12 (its own copy of the executable) removed while the run goes
/// on: the runs after it cannot start it.
fn an_interpreter_removed_during_the_run_is_a_tooling_failure() -> TestResult {
    let py = python("3.12").expect("3.12");
    let dir = tempfile::tempdir()?;
    let venv = dir.path().join("venv");
    let made = std::process::Command::new(&py)
        .args(["-m", "venv", "--copies", "--without-pip"])
        .arg(&venv)
        .output()?;
    check(made.status.success(), format!("venv: {made:?}"))?;
    let started = cases_with_a_start_signal(dir.path());
    let args = vec![
        "cases".into(),
        "--pythons-toml".into(),
        "/dev/null".into(),
        "-p".into(),
        path_str(&venv.join("bin/python")),
    ];
    let (run, json) = run_with_fault(dir.path(), &started, &args, || {
        std::fs::remove_dir_all(&venv).expect("the venv removed")
    })?;
    is_tooling_failure(&run, &json, "cannot start")
}

trial!(
    an_environment_that_cannot_be_made_is_a_tooling_failure,
    needs = &["3.12"]
);
/// A case whose `requires` names a package the index (here a folder of links, offline) does
/// not have: its environment cannot be made, exit 3, and the case that needs none still ran.
fn an_environment_that_cannot_be_made_is_a_tooling_failure() -> TestResult {
    let dir = folder(&[
        (
            "cases/needs.yaml",
            "title: needs\nrequires: [\"crosspickle-no-such-package==1.0\"]\ncode: pass\n",
        ),
        ("cases/plain.yaml", "title: plain\ncode: pass\n"),
    ]);
    std::fs::create_dir_all(dir.path().join("links"))?;
    let cache = tempfile::tempdir()?;
    let (run, json) = run_json(
        dir.path(),
        &args_on(
            &["3.12"],
            &[
                "cases",
                "--offline",
                "--find-links",
                &path_str(&dir.path().join("links")),
                "--cache-dir",
                &path_str(cache.path()),
            ],
        ),
    );
    is_tooling_failure(&run, &json, "crosspickle-no-such-package")?;
    check(
        find_run(&json, "plain", "cpython-3.12").is_some_and(|r| r["verdict"] == "ok"),
        format!("plain ran: {json}"),
    )
}

/// Three environments to make (tinypkg 1.0, 2.0 and 3.0 on 3.8, from local wheels, offline):
/// the case folder, the links and the cache, and the run's arguments.
fn three_environments(
) -> Result<(tempfile::TempDir, Vec<String>, [tempfile::TempDir; 2]), libtest_mimic::Failed> {
    let py = python("3.8").expect("3.8");
    let links = crate::requires::wheels(
        &py,
        &[
            ("tinypkg", "1.0"),
            ("tinypkg", "2.0"),
            ("tinypkg", "3.0"),
            ("tinypkg", "4.0"),
            ("tinypkg", "5.0"),
        ],
    )?;
    let cache = crate::requires::cache();
    let case = "title: one environment per version\nparams:\n  v: [\"1.0\", \"2.0\", \"3.0\"]\nrequires: [\"tinypkg=={v}\"]\ncode: |\n  import tinypkg\n  assert tinypkg.__version__ == v\n";
    let dir = folder(&[("cases/pv.yaml", case)]);
    let mut args = crate::requires::args(cache.path(), links.path(), "3.8");
    args.extend(["-j".into(), "1".into(), "cases".into()]);
    Ok((dir, args, [links, cache]))
}

trial!(
    environments_being_made_show_a_line_each_in_a_log,
    needs = &["3.8"]
);
/// stderr not a terminal (a CI log): a line per environment as it is made, with the count,
/// its time and what it holds.
fn environments_being_made_show_a_line_each_in_a_log() -> TestResult {
    let (dir, args, _kept) = three_environments()?;
    let (run, _) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    for v in ["1.0", "2.0", "3.0"] {
        let line = run
            .stderr
            .lines()
            .find(|l| l.ends_with(&format!("cpython-3.8.18 with tinypkg=={v}")))
            .ok_or(format!("no line for tinypkg=={v}: {}", run.stderr))?;
        check(
            line.starts_with("note: environment ") && line.contains(" of 3 made in "),
            format!("the line: {line}"),
        )?;
    }
    for n in 1..=3 {
        check(
            run.stderr
                .contains(&format!("note: environment {n} of 3 made in ")),
            format!("environment {n} of 3 counted: {}", run.stderr),
        )?;
    }
    Ok(())
}

trial!(
    environments_being_made_show_a_count_and_the_current_one_on_a_terminal,
    needs = &["3.8"],
    tool = "script"
);
/// On a terminal (`script` gives crosspickle one): a bar with the count made of the three and
/// the one being made, and no line per environment.
fn environments_being_made_show_a_count_and_the_current_one_on_a_terminal() -> TestResult {
    let (dir, args, _kept) = three_environments()?;
    let mut command = vec![shell_quote(&path_str(&bin()))];
    command.extend(args.iter().map(|a| shell_quote(a)));
    let cache = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe-cache");
    let out = std::process::Command::new("script")
        .args(["-qec", &command.join(" "), "/dev/null"])
        .current_dir(dir.path())
        .env("CROSSPICKLE_CACHE_DIR", cache)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "160")
        .env_remove("CI")
        .output()?;
    let run = Run::from(out);
    run.expect_code(0)?;
    let text = run.stdout.replace('\r', "\n");
    check(
        text.contains("environments 0/3 making cpython-3.8.18 with tinypkg==")
            && text.contains("environments 2/3 making cpython-3.8.18 with tinypkg=="),
        format!("the bar: {text}"),
    )?;
    check(
        !text.contains("note: environment 1 of 3"),
        format!("no line per environment: {text}"),
    )
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

trial!(
    a_package_bisect_names_every_change_it_crossed,
    needs = &["3.8"]
);
/// tinypkg 1.0 to 1.5: the case passes up to 1.1, raises ValueError from 1.2 and TypeError
/// from 1.4. The bisect's steps show the three outcomes, and it names both changes, each with
/// its two releases, in the report, its JSON and the conclusion.
fn a_package_bisect_names_every_change_it_crossed() -> TestResult {
    let py = python("3.8").expect("3.8");
    let releases = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5"];
    let dists: Vec<(&str, &str)> = releases.iter().map(|v| ("tinypkg", *v)).collect();
    let links = crate::requires::wheels(&py, &dists)?;
    let case = "title: two changes\nrequires: [\"tinypkg\"]\ncode: |\n  import tinypkg\n  v = tuple(int(x) for x in tinypkg.__version__.split('.'))\n  if v >= (1, 4):\n      raise TypeError('from 1.4')\n  if v >= (1, 2):\n      raise ValueError('from 1.2')\n";
    let dir = folder(&[("cases/two.yaml", case)]);
    let cache = crate::requires::cache();
    let (run, report) = crate::bisect::bisect_json(
        dir.path(),
        cache.path(),
        &[("PIP_NO_INDEX", "1"), ("PIP_CONFIG_FILE", "/dev/null")],
        &[
            "bisect",
            "two",
            "--package",
            "tinypkg",
            "--find-links",
            &path_str(links.path()),
            "--python",
            "cpython3.8",
        ],
    );
    run.expect_code(0)?;
    let found: Vec<(String, String)> = crate::bisect::boundaries(&report)
        .iter()
        .map(|b| {
            let at = |p: &str| b[p]["label"].as_str().unwrap_or("").to_string();
            (at("last_old"), at("first_new"))
        })
        .collect();
    check(
        found == [("1.3".into(), "1.4".into()), ("1.1".into(), "1.2".into())],
        format!(
            "both changes, the flip into the newest's outcome first: {found:?}\n{}",
            run.stdout
        ),
    )?;
    let conclusion = report["conclusion"].as_str().unwrap_or("");
    check(
        conclusion.starts_with("the outcome flipped to error: ")
            && conclusion.contains("TypeError at 1.4 (from error: ")
            && conclusion
                .contains("ValueError at 1.3), after 1 earlier change: at 1.2 (pass -> error: "),
        format!("the conclusion: {conclusion}"),
    )?;
    check(
        run.stdout.contains("(2 changes, the flip first):")
            && run.stdout.contains("1.1 -> 1.2: ")
            && run.stdout.contains("1.3 -> 1.4: "),
        format!("the summary: {}", run.stdout),
    )?;
    let tested = crate::bisect::steps(&report).len();
    check(
        tested <= releases.len(),
        format!("no release tested twice: {tested} steps"),
    )
}

trial!(
    the_matrix_fits_the_terminal_and_can_show_the_failures_only,
    needs = &["2.7", "3.8", "3.12", "3.13"]
);
/// 45 rows (a case with a long name and 44 params, and one that fails on 2.7) on four
/// interpreters, off a terminal: at `COLUMNS=40` no name is cut (each long one stands whole on
/// a line of its own) and every other line fits in 40 characters, the header repeated; without
/// `COLUMNS`, each row is one line with its name whole; `--failures-only` shows the failing
/// row alone and says how many were left out.
fn the_matrix_fits_the_terminal_and_can_show_the_failures_only() -> TestResult {
    let dir = folder(&[
        (
            "cases/long.yaml",
            &format!(
                "title: long\nid: a-case-whose-name-is-longer-than-a-narrow-terminal\nparams:\n  n: [{}]\ncode: pass\n",
                (0..44).map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
            ),
        ),
        ("cases/three.yaml", "title: three\ncode: |\n  assert str is not bytes\n"),
    ]);
    let args = args_on(&["2.7", "3.8", "3.12", "3.13"], &["cases"]);
    let matrix_of = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .take_while(|l| !l.starts_with(". ok"))
            .map(str::to_string)
            .collect()
    };
    let out = crosspickle(dir.path())
        .args(&args)
        .env("COLUMNS", "40")
        .output()?;
    let run = Run::from(out);
    run.expect_code(1)?;
    let lines = matrix_of(&run.stdout);
    let name = "a-case-whose-name-is-longer-than-a-narrow-terminal[n=";
    check(
        lines
            .iter()
            .all(|l| l.chars().count() <= 40 || l.starts_with(name))
            && !lines.iter().any(|l| l.contains('…')),
        format!(
            "every line in 40 columns but the names, whole:\n{}",
            lines.join("\n")
        ),
    )?;
    let headers = lines
        .iter()
        .filter(|l| l.trim_start().starts_with("2.7.18"))
        .count();
    check(
        headers >= 2,
        format!(
            "the header repeated over 45 rows ({headers} headers):\n{}",
            lines.join("\n")
        ),
    )?;
    for n in [0, 7, 43] {
        let shown = lines
            .iter()
            .filter(|l| **l == format!("{name}{n}]"))
            .count();
        check(
            shown == 1,
            format!("row n={n} once, whole ({shown}):\n{}", lines.join("\n")),
        )?;
    }
    let wide = Run::from(crosspickle(dir.path()).args(&args).output()?);
    let lines = matrix_of(&wide.stdout);
    check(
        lines.iter().filter(|l| l.starts_with(name)).count() == 44
            && lines
                .iter()
                .filter(|l| l.starts_with(name))
                .all(|l| l.ends_with(" .      .      .      .")),
        format!("each row one line off a terminal:\n{}", lines.join("\n")),
    )?;
    let only = Run::from(
        crosspickle(dir.path())
            .args(&args)
            .arg("--failures-only")
            .output()?,
    );
    only.expect_code(1)?;
    let lines = matrix_of(&only.stdout);
    check(
        lines.iter().any(|l| l.starts_with("three "))
            && !lines.iter().any(|l| l.contains("[n="))
            && lines
                .iter()
                .any(|l| l == "44 rows with no failing run not shown (--failures-only)"),
        format!("--failures-only:\n{}", lines.join("\n")),
    )
}

/// The first console block of the section `heading` of docs/bisect.md: its commands (`$ `
/// lines, comments dropped) and, after each, the lines it shows.
fn doc_block(doc: &str, heading: &str) -> Vec<(String, Vec<String>)> {
    let section = doc.split(&format!("\n{heading}\n")).nth(1).unwrap_or("");
    let block = section
        .split("```console\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or("");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => {
                let command = command.split(" # ").next().unwrap_or("").trim_end();
                out.push((command.to_string(), Vec::new()));
            }
            None => {
                if let Some(last) = out.last_mut() {
                    last.1.push(line.to_string());
                }
            }
        }
    }
    out
}

trial!(
    docs_bisect_md_examples_run_as_printed_and_print_what_it_shows,
    needs = &["3.7", "3.8", "3.9", "3.12"]
);
/// docs/bisect.md's "Choosing the case", "Across interpreters" and "Across a package's
/// releases" blocks, run as printed from this checkout (its `cases/` is the corpus; the
/// package example installs loky and cloudpickle from the index into an empty cache): every
/// command exits 0 (a change found), and what a block shows after a command is what the
/// command prints (install times aside).
fn docs_bisect_md_examples_run_as_printed_and_print_what_it_shows() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/bisect.md"))?;
    // An empty cache, as the doc's package example says (its environments are installed).
    let cache = crate::requires::cache();
    // What differs from one run to the next: how long an install took.
    let timing = fancy_regex::Regex::new(r"installed in \d+\.\d s").unwrap();
    let steady = |l: &str| timing.replace_all(l, "installed in N s").into_owned();
    let mut ran = 0;
    for heading in [
        "## Choosing the case",
        "## Across interpreters",
        "## Across a package's releases",
    ] {
        let block = doc_block(&doc, heading);
        check(
            !block.is_empty(),
            format!("no console block under {heading}"),
        )?;
        for (command, shown) in block {
            let words = shlex::split(&command).ok_or(format!("cannot split {command}"))?;
            check(
                words[0] == "crosspickle",
                format!("not a crosspickle command: {command}"),
            )?;
            let run = Run::from(
                crosspickle(root)
                    .args(&words[1..])
                    .env("CROSSPICKLE_CACHE_DIR", cache.path())
                    .output()?,
            );
            let said = format!(
                "`{command}` exit {}: {}{}",
                run.code, run.stdout, run.stderr
            );
            check(run.code == 0, said)?;
            if !shown.is_empty() {
                let printed: Vec<String> = run.stdout.trim_end().lines().map(steady).collect();
                check(
                    printed == shown.iter().map(|l| steady(l)).collect::<Vec<_>>(),
                    format!(
                        "`{command}` printed:\n{}\nthe doc shows:\n{}",
                        run.stdout,
                        shown.join("\n")
                    ),
                )?;
            }
            ran += 1;
        }
    }
    check(ran >= 5, format!("{ran} commands run"))
}

trial!(
    the_standard_librarys_cases_run_before_any_environment_is_made,
    needs = &["3.8"]
);
/// Issue 34: the cases without `requires` all run before the first environment is made, though
/// the case with `requires` comes first in the folder (`a-needs`, 4 environments, as many as
/// the runs `-j 1` keeps under way, then `b-std`, 10 runs): on main the first runs waited for
/// their environments and the others for them. A case with `requires` that `-k` leaves out
/// gets no environment. Each run writes its name and the time to a log.
fn the_standard_librarys_cases_run_before_any_environment_is_made() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = crate::requires::wheels(
        &py,
        &[
            ("tinypkg", "1.0"),
            ("tinypkg", "2.0"),
            ("tinypkg", "3.0"),
            ("tinypkg", "4.0"),
            ("tinypkg", "5.0"),
        ],
    )?;
    let cache = crate::requires::cache();
    let log = tempfile::NamedTempFile::new()?;
    let logged = |what: &str| {
        format!("  import time\n  with open({:?}, 'a') as f:\n      f.write('{what} %r\\n' % time.time())\n", path_str(log.path()))
    };
    let needs = format!(
        "title: needs tinypkg\nparams:\n  v: [\"1.0\", \"2.0\", \"3.0\", \"4.0\"]\nrequires: [\"tinypkg=={{v}}\"]\ncode: |\n{}  import tinypkg\n  assert tinypkg.__version__ == v\n",
        logged("pkg")
    );
    let std = format!(
        "title: standard library\nparams:\n  n: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\ncode: |\n{}  import pickle\n  assert pickle.loads(pickle.dumps(n)) == n\n",
        logged("std")
    );
    let unselected =
        "title: not selected\nrequires: [\"tinypkg==5.0\"]\ncode: |\n  import tinypkg\n";
    let dir = folder(&[
        ("cases/a-needs.yaml", needs.as_str()),
        ("cases/b-std.yaml", std.as_str()),
        ("cases/c-unselected.yaml", unselected),
    ]);
    let mut args = crate::requires::args(cache.path(), links.path(), "3.8");
    args.extend(["-j", "1", "-k", "not unselected", "cases"].map(String::from));
    let (run, _) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let lines = std::fs::read_to_string(log.path())?;
    let order: Vec<&str> = lines.lines().filter_map(|l| l.split(' ').next()).collect();
    let last_std = order.iter().rposition(|w| *w == "std");
    let first_pkg = order.iter().position(|w| *w == "pkg");
    check(
        order.len() == 14 && last_std == Some(9) && first_pkg == Some(10),
        format!("the 10 standard-library runs first, then the 4 others: {order:?}"),
    )?;
    let std_done: f64 = lines
        .lines()
        .filter(|l| l.starts_with("std "))
        .filter_map(|l| l[4..].trim().parse().ok())
        .fold(0.0, f64::max);
    let envs = crate::requires::envs(cache.path());
    check(
        envs.len() == 4,
        format!("environments for the selected case's 4 runs only: {envs:?}"),
    )?;
    for env in &envs {
        let made = std::fs::metadata(env.join("crosspickle-env.json"))?
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs_f64();
        check(
            made > std_done,
            format!(
                "{} made at {made}, before the last standard-library run ended at {std_done}",
                env.display()
            ),
        )?;
    }
    Ok(())
}

trial!(
    the_corpus_files_of_a_checkout_bring_no_warning,
    needs = &["3.8"]
);
/// Issue 34: `crosspickle run` in a checkout of crosspickle ran the project's own cases, and its
/// first lines were warnings about their version ranges (written for interpreters this machine
/// lacks). A case file that is the corpus's own, byte for byte, is not warned about; the same
/// file changed by one line is a case of the user's and still is.
fn the_corpus_files_of_a_checkout_bring_no_warning() -> TestResult {
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/threads/pickler-dump-race.yaml"),
    )?;
    let edited = format!("{shipped}# changed here\n");
    for (text, warned) in [(shipped.as_str(), false), (edited.as_str(), true)] {
        let dir = folder(&[("cases/threads/pickler-dump-race.yaml", text)]);
        let (run, _) = run_json(dir.path(), &["-p", "3.8", "cases"]);
        run.expect_code(0)?;
        let warning = "warning: cases/threads/pickler-dump-race.yaml:";
        check(
            run.stderr.contains(warning) == warned,
            format!("warned: {warned}, stderr:\n{}", run.stderr),
        )?;
        if !warned {
            check(
                !run.stderr.contains("warning") && !run.stderr.contains("match no interpreter"),
                format!("nothing about the corpus's own file:\n{}", run.stderr),
            )?;
        }
    }
    Ok(())
}
