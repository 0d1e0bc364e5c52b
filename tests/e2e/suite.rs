//! Cases that hold a whole suite: `setup` shared by the code, the dump and the load, with the
//! tracebacks of its lines naming the case file's; rules on the older, the newer or either end
//! of a pair; `protocol: each`, each protocol where the interpreters have it; `dump_params` and
//! `load_params`, each side's own, with live and recorded producers.

use crate::support::*;

/// `setup` (lines 3-8) defines a class and a check both sides need in `__main__`; the dump
/// pickles a `Point` of the param, the load compares what it got with `Point(1)`: `x=2`
/// fails in `same` (line 8, called from the load's line 12).
const SETUP: &str = r#"title: setup gives the dump and the load one class and one check
setup: |
  import pickle
  class Point(object):
      def __init__(self, x):
          self.x = x
  def same(a, b):
      assert a.x == b.x, "%r != %r" % (a.x, b.x)
dump: |
  data = pickle.dumps(Point(x), 2)
load: |
  same(pickle.loads(data), Point(1))
params:
  x: [1, 2]
expect:
  - where: {x: 2}
    outcome: fail
    match: "^2 != 1$"
"#;

/// A plain case whose `setup` runs before its `code`, in the same `__main__`.
const SETUP_CODE: &str = "title: setup runs before code\nsetup: |\n  import sys\n  FIRST = __name__\ncode: |\n  assert FIRST == '__main__' and 'sys' in globals()\n";

trial!(
    setup_runs_ahead_of_code_dump_and_load,
    needs = &["2.7", "3.12"]
);
/// Every pair of 2.7 and 3.12: `x=1` passes both ways (the class of `setup` is `__main__`'s
/// on both sides), `x=2` is the rule's `xfail`, its traceback names the case file's lines of
/// the load (12) and of `setup`'s function (8); the plain case passes on both.
fn setup_runs_ahead_of_code_dump_and_load() -> TestResult {
    let dir = folder(&[
        ("cases/setup.yaml", SETUP),
        ("cases/setup-code.yaml", SETUP_CODE),
    ]);
    let (run, json) = run_json(dir.path(), &python_args(&["2.7", "3.12"]));
    run.expect_code(0)?;
    let all = runs(&json);
    check(
        all.len() == 10,
        format!("8 pairs and 2 plain runs, got {}", all.len()),
    )?;
    for r in &all {
        let x = r["params"]["x"].as_i64();
        let want = if x == Some(2) { "xfail" } else { "ok" };
        check(
            r["verdict"] == want,
            format!(
                "{} {} x={x:?}: {} ({})",
                r["case"], r["python"], r["verdict"], r["message"]
            ),
        )?;
        if x == Some(2) {
            let traceback = r["traceback"].as_str().unwrap_or_default();
            for line in [
                "File \"cases/setup.yaml\", line 12, in <module>",
                "File \"cases/setup.yaml\", line 8, in same",
            ] {
                check(
                    traceback.contains(line),
                    format!("the traceback lacks {line:?}:\n{traceback}"),
                )?;
            }
        }
    }
    Ok(())
}

/// Every load fails, saying `producer->consumer` by major version; each rule's `match` holds
/// only for the pairs it is meant to select, so a rule that selected another pair would make
/// it `changed`, and a pair no rule selects would be a `regression`.
const ENDS: &str = r#"title: older, newer and either end select a pair by its ends' ages
dump: |
  import pickle, sys
  data = pickle.dumps(sys.version_info[0], 2)
load: |
  import pickle, sys
  raise AssertionError("%d->%d" % (pickle.loads(data), sys.version_info[0]))
expect:
  - older_python: "<3"
    newer_python: ">=3"
    outcome: fail
    match: "^(2->3|3->2)$"
  - newer_features: {c_pickle: false}
    outcome: fail
    match: "^2->2$"
  - either_implementation: cpython
    outcome: fail
    match: "^3->3$"
"#;

trial!(
    older_newer_and_either_select_by_the_ends,
    needs = &["2.7", "3.12"]
);
/// The four pairs of 2.7 and 3.12: both across the 2/3 boundary (either way) are the first
/// rule's, 2.7 with itself the second's (its newer end is 2.7), 3.12 with itself the third's:
/// every run `xfail`, by the rule the test expects.
fn older_newer_and_either_select_by_the_ends() -> TestResult {
    let dir = folder(&[("cases/ends.yaml", ENDS)]);
    let (run, json) = run_json(dir.path(), &python_args(&["2.7", "3.12"]));
    run.expect_code(0)?;
    let all = runs(&json);
    check(all.len() == 4, format!("4 pairs, got {}", all.len()))?;
    for r in &all {
        let (dump, load) = (r["dump_python"].to_string(), r["load_python"].to_string());
        let across = dump.contains("2.7") != load.contains("2.7");
        let rule = match (across, dump.contains("2.7")) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => 2,
        };
        check(
            r["verdict"] == "xfail" && r["expected"]["line"] == [9, 13, 16][rule],
            format!(
                "{dump} -> {load}: {} by {} ({})",
                r["verdict"], r["expected"], r["message"]
            ),
        )?;
    }
    Ok(())
}

/// Each protocol, both ways between 2.7 (highest 2) and 3.12 (highest 5), and in a plain case.
const PROTOCOLS: &str = "title: each protocol both ends have\nprotocol: each\ndump: |\n  import pickle\n  data = pickle.dumps([1], protocol)\nload: |\n  import pickle\n  assert pickle.loads(data) == [1]\n";
const PROTOCOLS_CODE: &str = "title: each protocol it has\nprotocol: each\ncode: |\n  import pickle\n  assert pickle.loads(pickle.dumps([1], protocol)) == [1]\n";

trial!(
    protocol_each_runs_what_both_ends_have,
    needs = &["2.7", "3.12"]
);
/// 6 protocols on 4 pairs and on 2 interpreters: protocols 3 to 5 are skipped wherever 2.7
/// takes part (9 pairs and 3 plain runs), with the reason naming the end and its highest; all
/// else passes, with no rule written.
fn protocol_each_runs_what_both_ends_have() -> TestResult {
    let dir = folder(&[
        ("cases/protocols.yaml", PROTOCOLS),
        ("cases/protocols-code.yaml", PROTOCOLS_CODE),
    ]);
    let (run, json) = run_json(dir.path(), &python_args(&["2.7", "3.12"]));
    run.expect_code(0)?;
    let all = runs(&json);
    check(
        all.len() == 36,
        format!("24 pairs and 12 plain runs, got {}", all.len()),
    )?;
    let mut skipped = 0;
    for r in &all {
        let protocol = r["params"]["protocol"]
            .as_i64()
            .ok_or("no protocol param")?;
        let sides = [&r["python"], &r["dump_python"], &r["load_python"]];
        let old = sides
            .iter()
            .any(|p| p.as_str().is_some_and(|p| p.contains("2.7")));
        let message = r["message"].as_str().unwrap_or_default();
        let reason = r["reason"].as_str().unwrap_or_default();
        if old && protocol > 2 {
            skipped += 1;
            check(
                r["verdict"] == "skipped"
                    && reason.contains(&format!(
                        "protocol {protocol} is above the highest of its pickle (2)"
                    )),
                format!(
                    "{} protocol {protocol}: {} ({reason})",
                    r["case"], r["verdict"]
                ),
            )?;
        } else {
            check(
                r["verdict"] == "ok",
                format!(
                    "{} protocol {protocol}: {} ({message})",
                    r["case"], r["verdict"]
                ),
            )?;
        }
    }
    check(skipped == 12, format!("12 skipped, got {skipped}"))
}

/// The producer's `pickler` and the consumer's `unpickler`, each unseen by the other side; the
/// dump logs each time it runs (to LOG) and sends its pickler, the load fails for `c by py`.
const SIDE_PARAMS: &str = r#"title: each side's params are its own
dump_params:
  pickler: [py, c]
load_params:
  unpickler: [py, c]
dump: |
  import pickle, sys
  assert "unpickler" not in globals()
  with open(LOG, "a") as log:
      log.write("%s %s\n" % (sys.version_info[0], pickler))
  data = pickle.dumps(pickler, 2)
load: |
  import pickle
  assert "pickler" not in globals()
  got = pickle.loads(data)
  assert (got, unpickler) != ("c", "py"), "%s by %s" % (got, unpickler)
expect:
  - where: {pickler: c, unpickler: py}
    outcome: fail
    match: "^c by py$"
"#;

trial!(each_sides_params_are_its_own, needs = &["2.7", "3.12"]);
/// 4 pairs of 2.7 and 3.12 times 2 picklers times 2 unpicklers: 16 runs named by both params,
/// `c by py` the rule's `xfail` and the rest `ok` (so neither side saw the other's param), and
/// 4 dumps (one per producer and pickler, not one per unpickler too).
fn each_sides_params_are_its_own() -> TestResult {
    let log = tempfile::NamedTempFile::new()?;
    let text = SIDE_PARAMS.replace("LOG", &format!("{:?}", path_str(log.path())));
    let dir = folder(&[("cases/sides.yaml", &text)]);
    let (run, json) = run_json(dir.path(), &python_args(&["2.7", "3.12"]));
    run.expect_code(0)?;
    let all = runs(&json);
    check(all.len() == 16, format!("16 runs, got {}", all.len()))?;
    for r in &all {
        let (p, u) = (&r["params"]["pickler"], &r["params"]["unpickler"]);
        let want = if p == "c" && u == "py" { "xfail" } else { "ok" };
        check(
            r["verdict"] == want,
            format!("{p} by {u}: {} ({})", r["verdict"], r["message"]),
        )?;
    }
    let dumps = std::fs::read_to_string(log.path())?;
    check(
        dumps.lines().count() == 4,
        format!("4 dumps, got:\n{dumps}"),
    )?;
    check(
        run.stdout.contains("sides[pickler=c,unpickler=py]"),
        format!("no run named by both sides' params:\n{}", run.stdout),
    )
}

/// `load_params` with a recorded producer: the pickles 2.7 made, one per `pickler`.
const RECORDED_SIDES: &str = r#"title: each side's params with a recorded producer
dump_params:
  pickler: [a, b]
load_params:
  unpickler: [a, b]
dump: |
  import pickle
  data = pickle.dumps(pickler, 2)
load: |
  import pickle
  assert pickle.loads(data) in ("a", "b") and unpickler in ("a", "b")
"#;

trial!(
    each_sides_params_with_a_recorded_producer,
    needs = &["2.7", "3.12"]
);
/// Recorded on 2.7 (`crosspickle record`), then run on 3.12 alone: the recorded producer's
/// pairs are all 4 combinations of `pickler` and `unpickler`, each ok (a recorded pickle per
/// run's params, though one dump made the two of each `pickler`).
fn each_sides_params_with_a_recorded_producer() -> TestResult {
    let dir = folder(&[("cases/rec.yaml", RECORDED_SIDES)]);
    let kept = path_str(&dir.path().join("kept"));
    let mut record = vec!["record".to_string()];
    record.extend(python_args(&["2.7"]));
    record.extend(["--pickles".to_string(), kept.clone()]);
    let recorded = Run::from(crosspickle(dir.path()).args(&record).output()?);
    recorded.expect_code(0)?;
    let mut args = python_args(&["3.12"]);
    args.extend(["--pickles".to_string(), kept]);
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let from_record: Vec<String> = runs(&json)
        .iter()
        .filter(|r| {
            r["dump_python"]
                .as_str()
                .is_some_and(|p| p.starts_with("recorded:"))
        })
        .map(|r| format!("{} {}", r["params"], r["verdict"]))
        .collect();
    check(
        from_record.len() == 4 && from_record.iter().all(|r| r.ends_with("\"ok\"")),
        format!("4 ok pairs from the recorded 2.7, got {from_record:?}"),
    )
}
