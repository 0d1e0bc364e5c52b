//! Round trips end to end: each dump runs once per producer, loads once per pair, a failed dump
//! decides its pairs, rules select by side and phase, and the CLI narrows either side.

use crate::support::*;

const PROTOCOLS: &str = r#"title: protocols between old and new interpreters
params:
  protocol: [2, 4, 5]
dump: |
  import os, pickle, sys
  with open(os.environ["LOG"], "a") as f:
      f.write("%s %d\n" % (sys.version.split()[0], protocol))
  data = pickle.dumps({"a": [1, 2]}, protocol=protocol)
load: |
  import pickle
  assert pickle.loads(data) == {"a": [1, 2]}
expect:
  - phase: dump
    where: {protocol: [4, 5]}
    dump_python: "<3.4"
    outcome: error
    exception: ValueError
  - phase: dump
    where: {protocol: 5}
    dump_python: "<3.8"
    outcome: error
    exception: ValueError
  - where: {protocol: [4, 5]}
    load_python: "<3.4"
    outcome: error
    exception: ValueError
    match: unsupported pickle protocol
  - where: {protocol: 5}
    load_python: "<3.8"
    outcome: error
    exception: ValueError
    match: "unsupported pickle protocol: 5"
"#;

fn pythons(versions: &[&str]) -> Vec<String> {
    let mut args = vec!["--pythons-toml".to_string(), "/dev/null".to_string()];
    for v in versions {
        args.push("--python".into());
        args.push(path_str(&python(v).unwrap()));
    }
    args
}

trial!(
    protocols_between_old_and_new,
    needs = &["2.7", "3.6", "3.8", "3.13"]
);
fn protocols_between_old_and_new() -> TestResult {
    let log = tempfile::NamedTempFile::new().unwrap();
    let text = PROTOCOLS.replace(
        "os.environ[\"LOG\"]",
        &format!("{:?}", path_str(log.path())),
    );
    let dir = folder(&[("cases/rt.yaml", &text)]);
    let args = pythons(&["2.7", "3.6", "3.8", "3.13"]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (run, json) = run_json(dir.path(), &a);
    run.expect_code(0)?;
    let runs = runs(&json);
    check(runs.len() == 3 * 4 * 4, format!("{} runs", runs.len()))?;
    // Each dump once per producer and protocol, not once per pair.
    let dumps = std::fs::read_to_string(log.path()).unwrap();
    check(dumps.lines().count() == 3 * 4, format!("dumps:\n{dumps}"))?;
    let pair = |p: i64, from: &str, to: &str| {
        runs.iter()
            .find(|r| {
                r["params"]["protocol"] == p
                    && r["dump_python"].as_str().unwrap().starts_with(from)
                    && r["load_python"].as_str().unwrap().starts_with(to)
            })
            .cloned()
            .unwrap()
    };
    let r = pair(5, "cpython-3.13", "cpython-3.6");
    check(
        r["verdict"] == "xfail" && r["phase"] == "load" && r["python"] == r["load_python"],
        format!("{r}"),
    )?;
    check(
        r["dump_duration_s"].as_f64().is_some_and(|d| d > 0.0),
        format!("{r}"),
    )?;
    let r = pair(4, "cpython-2.7", "cpython-3.13");
    check(
        r["verdict"] == "xfail" && r["phase"] == "dump" && r["exception"] == "ValueError",
        format!("{r}"),
    )?;
    let r = pair(2, "cpython-3.13", "cpython-2.7");
    check(r["verdict"] == "ok", format!("{r}"))?;
    check(run.stdout.contains("rt[protocol=5] 3.13.0 ->"), &run.stdout)?;
    // A wrong expectation is caught: without the load rules, old consumers regress.
    let cut = text
        .split("  - where: {protocol: [4, 5]}\n    load_python")
        .next()
        .unwrap()
        .to_string();
    std::fs::write(dir.path().join("cases/rt.yaml"), cut).unwrap();
    let (run, json) = run_json(dir.path(), &a);
    run.expect_code(1)?;
    let regressions = super::support::runs(&json)
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .count();
    check(regressions > 0, format!("{json}"))
}

trial!(failed_dump_decides_its_pairs, needs = &["3.8", "3.12"]);
fn failed_dump_decides_its_pairs() -> TestResult {
    let text = "title: bad dump\ndump: |\n  data = u'not bytes'\nload: |\n  raise AssertionError('never runs')\nexpect:\n  - phase: dump\n    python: '3.8'\n    outcome: error\n    exception: TypeError\n    match: dump must leave bytes\n";
    let dir = folder(&[("cases/bad.yaml", text)]);
    let args = pythons(&["3.8", "3.12"]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (run, json) = run_json(dir.path(), &a);
    run.expect_code(1)?;
    for r in runs(&json) {
        check(
            r["phase"] == "dump" && r["exception"] == "TypeError",
            format!("{r}"),
        )?;
        // `python` in a rule means the producer when the dump decided.
        let from_38 = r["dump_python"]
            .as_str()
            .unwrap()
            .starts_with("cpython-3.8");
        let want = if from_38 { "xfail" } else { "regression" };
        check(r["verdict"] == want, format!("{r}"))?;
    }
    Ok(())
}

trial!(sides_can_be_narrowed, needs = &["2.7", "3.8", "3.12"]);
fn sides_can_be_narrowed() -> TestResult {
    let dir = folder(&[("cases/rt.yaml", PROTOCOLS.replace("  with open(os.environ[\"LOG\"], \"a\") as f:\n      f.write(\"%s %d\\n\" % (sys.version.split()[0], protocol))\n", "").as_str())]);
    let mut args = pythons(&["2.7", "3.8", "3.12"]);
    args.extend([
        "--dump-python".to_string(),
        "3.12".to_string(),
        "--load-python".to_string(),
        "2.7,3.8".to_string(),
    ]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (run, json) = run_json(dir.path(), &a);
    run.expect_code(0)?;
    let runs = runs(&json);
    check(runs.len() == 3 * 2, format!("{} runs", runs.len()))?;
    check(
        runs.iter().all(|r| {
            r["dump_python"]
                .as_str()
                .unwrap()
                .starts_with("cpython-3.12")
        }),
        "producers",
    )?;
    let mut bad = args.clone();
    bad.extend(["--dump-python".to_string(), "3.99".to_string()]);
    let a: Vec<&str> = bad.iter().map(String::as_str).collect();
    let (run, _) = run_json(dir.path(), &a);
    run.expect_code(2)?;
    check(
        run.stderr.contains("--dump-python `3.99` matches none"),
        &run.stderr,
    )
}
