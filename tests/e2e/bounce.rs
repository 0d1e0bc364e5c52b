//! The bounce (`relay` and `reload`): the consumer pickles again what it loaded, in its load's
//! process, and the producer reads that back in a fresh process of its own; each leg's
//! exception, crash and traceback is judged and reported as its own phase, with live and
//! recorded producers, in both isolations.

use crate::support::*;

/// 2.7 pickles a `StandardError`, 3.12 loads it as `Exception` (fix_imports maps
/// `exceptions.StandardError` to `builtins.Exception`), and relays it, which names it
/// `exceptions.Exception` (the mapping back has no `StandardError`): 2.7 reloads an
/// `Exception`. One way, each leg passes; only the bounce shows the name lost. Relayed with
/// 3.12's highest protocol (5), the reload on 2.7 cannot read it at all. The relay sees the
/// consumer's `load_params`; the reload, the producer's program, does not (line 15). The
/// reload's `pickle.loads` is line 16 of the file, its last `assert` line 18.
const BOUNCE: &str = r#"title: A Python 2 StandardError comes back from Python 3 as Exception
load_params:
  relay_protocol: [2, -1]
setup: |
  import pickle, sys
  PY2 = sys.version_info[0] == 2
dump: |
  data = pickle.dumps(StandardError("x") if PY2 else Exception("x"), 2)
load: |
  obj = pickle.loads(data)
  assert type(obj).__name__ in ("StandardError", "Exception")
relay: |
  data = pickle.dumps(obj, relay_protocol)
reload: |
  assert "relay_protocol" not in globals()
  obj = pickle.loads(data)
  expected = StandardError if PY2 else Exception
  assert type(obj) is expected, type(obj).__name__
expect:
  - pairs: [["2.7", ">=3"]]
    where: {relay_protocol: -1}
    phase: reload
    outcome: error
    exception: ValueError
    match: "unsupported pickle protocol: 5"
  - pairs: [["2.7", ">=3"]]
    phase: reload
    outcome: fail
    match: "^Exception$"
"#;

/// A relay that leaves no bytes (an error of the relay, as a dump's is), one that ends its
/// process (a crash of the relay, not of the load, which had passed), and one that raises on
/// line 15 of the file.
const LEGS: &str = r#"title: what goes wrong in a relay is the relay's
load_params:
  how: [none, exit, raise]
dump: |
  import pickle
  data = pickle.dumps(1, 2)
load: |
  import pickle
  assert pickle.loads(data) == 1
relay: |
  if how == "exit":
      import os
      os._exit(3)
  if how == "raise":
      raise ValueError("in the relay")
  data = None
reload: |
  raise AssertionError("the reload ran")
expect:
  - where: {how: none}
    phase: relay
    outcome: error
    exception: TypeError
    match: "^relay must leave bytes in the global `data`, not NoneType$"
  - where: {how: exit}
    phase: relay
    outcome: crash
  - where: {how: raise}
    phase: relay
    outcome: error
    exception: ValueError
"#;

trial!(
    a_bounce_shows_what_each_way_hides,
    needs = &["2.7", "3.12"],
    both
);
/// Both cases on 2.7 and 3.12 (20 runs): the bounce of 2.7 through 3.12 is the rules'
/// `xfail` in its reload (`Exception`, or `ValueError` for protocol 5), its traceback naming the
/// case file's line; every other pair passes its reload; every relay that goes wrong is the
/// relay's phase. The JUnit and HTML reports say which legs ran where.
fn a_bounce_shows_what_each_way_hides(isolation: &'static str) -> TestResult {
    let dir = folder(&[("cases/bounce.yaml", BOUNCE), ("cases/legs.yaml", LEGS)]);
    let junit = dir.path().join("junit.xml");
    let html = dir.path().join("report.html");
    let extra = [
        "-j",
        "2",
        "--isolation",
        isolation,
        "--junit-xml",
        &path_str(&junit),
        "--html",
        &path_str(&html),
    ];
    let (run, json) = run_json(dir.path(), &args_on(&["2.7", "3.12"], &extra));
    run.expect_code(0)?;
    let all = runs(&json);
    check(all.len() == 20, format!("20 runs, got {}", all.len()))?;
    for r in &all {
        let across = r["dump_python"].as_str().unwrap_or("").contains("2.7")
            && r["load_python"].as_str().unwrap_or("").contains("3.12");
        let what = format!(
            "{} {} {} -> {}: {} {} in {} ({})",
            r["case"],
            r["params"],
            r["dump_python"],
            r["load_python"],
            r["verdict"],
            r["outcome"],
            r["phase"],
            r["message"]
        );
        let (verdict, phase) = match (r["case"].as_str(), across) {
            (Some("bounce"), true) => ("xfail", "reload"),
            (Some("bounce"), false) => ("ok", "reload"),
            _ => ("xfail", "relay"),
        };
        check(r["verdict"] == verdict && r["phase"] == phase, &what)?;
        if r["params"]["how"] == "raise" {
            let traceback = r["traceback"].as_str().unwrap_or_default();
            let at = "File \"cases/legs.yaml\", line 15, in <module>";
            check(
                traceback.contains(at),
                format!("{what}: the traceback lacks {at:?}:\n{traceback}"),
            )?;
        }
        if r["case"] == "bounce" && across {
            let relayed_5 = r["params"]["relay_protocol"] == -1;
            let exception = if relayed_5 {
                "ValueError"
            } else {
                "AssertionError"
            };
            check(r["exception"] == exception, &what)?;
            let traceback = r["traceback"].as_str().unwrap_or_default();
            let line = if relayed_5 { 16 } else { 18 };
            let at = format!("File \"cases/bounce.yaml\", line {line}, in <module>");
            check(
                traceback.contains(&at),
                format!("{what}: the traceback lacks {at:?}:\n{traceback}"),
            )?;
        }
    }
    let legs = "dumped by cpython-2.7.18, loaded and relayed by cpython-3.12.1, reloaded by cpython-2.7.18";
    for (name, path) in [("JUnit XML", &junit), ("HTML", &html)] {
        let text = std::fs::read_to_string(path)?;
        check(
            text.contains(legs),
            format!("the {name} report does not say {legs:?}"),
        )?;
        check(
            text.contains("loaded and relayed by cpython-3.12.1")
                && !text.contains("reloaded by cpython-3.12.1, loaded"),
            format!("the {name} report names the relays' legs"),
        )?;
    }
    Ok(())
}

trial!(a_recorded_producer_cannot_reload, needs = &["2.7", "3.12"]);
/// The bounce's pickles recorded on 2.7, then run on 3.12 alone: the pairs of the recorded
/// producer load and relay on 3.12, and are skipped saying that nothing can reload there; the
/// live 3.12 pairs bounce as always.
fn a_recorded_producer_cannot_reload() -> TestResult {
    let dir = folder(&[("cases/bounce.yaml", BOUNCE)]);
    let kept = path_str(&dir.path().join("kept"));
    let record = Run::from(
        crosspickle(dir.path())
            .arg("record")
            .args(args_on(&["2.7"], &["--pickles", &kept]))
            .output()?,
    );
    record.expect_code(0)?;
    let (run, json) = run_json(
        dir.path(),
        &args_on(&["3.12"], &["-j", "2", "--pickles", &kept]),
    );
    run.expect_code(0)?;
    let all: Vec<String> = runs(&json)
        .iter()
        .map(|r| {
            format!(
                "{} {} -> {}: {} ({})",
                r["params"]["relay_protocol"],
                r["dump_python"].as_str().unwrap_or("?"),
                r["python"].as_str().unwrap_or("?"),
                r["verdict"].as_str().unwrap_or("?"),
                r["reason"].as_str().or(r["phase"].as_str()).unwrap_or("?"),
            )
        })
        .collect();
    let skipped = "skipped (the reload runs on the producer, and recorded:cpython-2.7.18 is a recorded producer with no interpreter to run it (its load and relay passed))";
    check(
        all == [
            "2 cpython-3.12.1 -> cpython-3.12.1: ok (reload)".to_string(),
            format!("2 recorded:cpython-2.7.18 -> cpython-3.12.1: {skipped}"),
            "-1 cpython-3.12.1 -> cpython-3.12.1: ok (reload)".to_string(),
            format!("-1 recorded:cpython-2.7.18 -> cpython-3.12.1: {skipped}"),
        ],
        format!("the pairs: {all:#?}"),
    )
}

trial!(
    list_expected_shows_the_reloads_rule,
    needs = &["2.7", "3.12"]
);
/// `list --expected`: the pair 2.7 -> 3.12 is decided, once its dump passed, by the rule of its
/// reload (rule 2 for protocol 2, rule 1 for protocol 5), which no load's rule names.
fn list_expected_shows_the_reloads_rule() -> TestResult {
    let dir = folder(&[("cases/bounce.yaml", BOUNCE)]);
    let list = Run::from(
        crosspickle(dir.path())
            .args(["list", "--expected"])
            .args(python_args(&["2.7", "3.12"]))
            .output()?,
    );
    list.expect_code(0)?;
    let rows: Vec<&str> = list
        .stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("a  cpython-2.7"))
        .collect();
    check(
        rows.len() == 2 && rows[0].ends_with(". ./2") && rows[1].ends_with(". ./1"),
        format!("2.7's rows: {rows:#?}\n{}", list.stdout),
    )
}

trial!(repro_writes_the_three_legs, needs = &["2.7", "3.12"]);
/// `repro` of a bounce on 2.7 and 3.12: the script holds the four pickles the dumps made, loads
/// and relays each on a consumer, and reloads on the producer what was relayed of its own;
/// crosspickle shows each leg's output (3.12 relays all four, 2.7 reloads its `Exception` and
/// cannot read protocol 5), and the script run by hand, 3.12 then 2.7, says the same.
fn repro_writes_the_three_legs() -> TestResult {
    let dir = folder(&[("bounce.yaml", BOUNCE)]);
    let run = Run::from(
        crosspickle(dir.path())
            .args([
                "repro",
                "bounce.yaml",
                "-o",
                "repro.py",
                "--pythons-toml",
                "/dev/null",
            ])
            .args(python_args(&["2.7", "3.12"]))
            .output()?,
    );
    run.expect_code(0)?;
    let out = &run.stdout;
    let script = std::fs::read_to_string(dir.path().join("repro.py"))?;
    check(
        script.contains("RELAY = ")
            && script.contains("RELOAD = ")
            && !script.contains("crosspickle")
            && !run.stderr.contains("left out"),
        format!(
            "the script holds the three legs:\n{script}\nstderr: {}",
            run.stderr
        ),
    )?;
    let section = |heading: &str| -> String {
        let start = out
            .find(heading)
            .map(|i| i + heading.len())
            .unwrap_or(out.len());
        let rest = &out[start..];
        let end = rest.find("\nOutput on ").unwrap_or(rest.len());
        rest[..end].to_string()
    };
    let relays = section("cpython-3.12.1 (load and relay)");
    check(
        relays.matches("-> load ok, relay ok (relayed-").count() == 4,
        format!("3.12 loads and relays the four pickles:\n{out}"),
    )?;
    let reloads = section("cpython-2.7.18 (reload of what cpython-3.12.1 relayed)");
    let reloaded_as = |protocol: &str, what: &str| {
        reloads.lines().any(|l| {
            l.starts_with("cpython-2.7.18, {")
                && l.contains(&format!("'relay_protocol': {protocol}}} -> relayed-"))
                && l.ends_with(&format!(".pickle: reload: {what}"))
        })
    };
    check(
        reloaded_as("2", "AssertionError: Exception")
            && reloaded_as("-1", "ValueError: unsupported pickle protocol: 5")
            && !reloads.contains("cpython-3.12.1,"),
        format!("2.7 reloads what 3.12 relayed of its own pickles:\n{out}"),
    )?;
    // By hand: the relay on 3.12, then the reload on 2.7, in a folder of their own.
    let by_hand = tempfile::tempdir()?;
    std::fs::copy(dir.path().join("repro.py"), by_hand.path().join("repro.py"))?;
    let say = |python: &str, args: &[&str]| -> std::io::Result<String> {
        let out = std::process::Command::new(python)
            .arg("repro.py")
            .args(args)
            .current_dir(by_hand.path())
            .output()?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (py27, py312) = (
        path_str(&python("2.7").unwrap()),
        path_str(&python("3.12").unwrap()),
    );
    let relayed = say(&py312, &[])?;
    let reloaded = say(&py27, &["reload", "cpython-2.7.18"])?;
    check(
        relayed.lines().skip(1).eq(relays.lines().filter(|l| l.contains(" -> ")))
            && reloaded.lines().skip(1).eq(reloads.lines().filter(|l| l.contains(" -> "))),
        format!("run by hand, the script says what crosspickle showed:\n{relayed}\n{reloaded}\nshown:\n{out}"),
    )
}
