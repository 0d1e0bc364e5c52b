//! Case format version 2 end to end, on real interpreters: version-request lists,
//! `implementation_version`, `features`, the round-trip implementation and feature selectors,
//! `where: {not: ...}`, `skip` rules (in every report, and not executed), `exception` by
//! identity and `instance_of` (resolved where the case ran, not fooled by the case), version-1
//! files loading unchanged, load errors for every key's bad values, the JSON Schema (current,
//! accepting the corpus, refusing what the loader refuses), `list`, and the examples of
//! docs/case-format.md.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Trial;

use crate::support::*;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `--python` for these interpreters (by path), with discovery and pythons.toml out of the way.
fn on(pythons: &[&str]) -> Vec<String> {
    let paths: Vec<String> = pythons
        .iter()
        .map(|p| path_str(&python(p).expect("checked by trial()")))
        .collect();
    vec![
        "--pythons-toml".into(),
        "/dev/null".into(),
        "--python".into(),
        paths.join(","),
    ]
}

fn run_on(dir: &Path, pythons: &[&str], extra: &[&str]) -> (Run, serde_json::Value) {
    let mut args = on(pythons);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_json(dir, &args)
}

/// The label prefix of an interpreter a test needs: `cpython-2.7`, `pypy-`, `cpython-3.11.2+debug`.
fn label(need: &str) -> &'static str {
    match need {
        "pypy" => "pypy-",
        "debug" => "+debug",
        "2.7" => "cpython-2.7.",
        "3.8" => "cpython-3.8.",
        "3.12" => "cpython-3.12.",
        "3.13" => "cpython-3.13.",
        "3.6" => "cpython-3.6.",
        other => panic!("no label for {other}"),
    }
}

fn is(python: &str, need: &str) -> bool {
    let l = label(need);
    if l.starts_with('+') {
        python.ends_with(l)
    } else {
        python.starts_with(l) && !python.contains('+')
    }
}

/// The runs of `case` whose params display as `params` (`p=1,q=2`, or empty) on `python`
/// (for a round trip: the consumer), and `producer` for a round trip.
fn find<'a>(
    json: &'a serde_json::Value,
    case: &str,
    params: &str,
    producer: Option<&str>,
    python: &str,
) -> Result<&'a serde_json::Value, String> {
    let shown = |r: &serde_json::Value| -> String {
        r["params"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| match v {
                        serde_json::Value::String(s) => format!("{k}={s}"),
                        other => format!("{k}={other}"),
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    };
    json["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| {
            r["case"] == case
                && shown(r) == params
                && is(r["python"].as_str().unwrap_or(""), python)
                && match producer {
                    None => r.get("dump_python").is_none(),
                    Some(p) => is(r["dump_python"].as_str().unwrap_or(""), p),
                }
        })
        .ok_or_else(|| {
            format!("no run {case}[{params}] {producer:?} -> {python} in\n{json:#}")
                .chars()
                .take(6000)
                .collect()
        })
}

/// Every (case, params, producer, consumer, verdict) must be as given.
fn verdicts(
    json: &serde_json::Value,
    want: &[(&str, &str, Option<&str>, &str, &str)],
) -> TestResult {
    for (case, params, producer, python, verdict) in want {
        let run = find(json, case, params, *producer, python)?;
        check(
            run["verdict"] == *verdict,
            format!("{case}[{params}] {producer:?} -> {python}: wanted {verdict}, got {run:#}"),
        )?;
    }
    Ok(())
}

trial!(
    version_1_files_load_and_mean_what_they_meant,
    needs = &["2.7", "3.8", "3.13", "pypy"]
);
fn version_1_files_load_and_mean_what_they_meant() -> TestResult {
    // Version-1 files as the corpus had them before version 2, and one with every version-1
    // key: they load, run and mean what they meant.
    let dir = folder(&[
        ("cases/every-v1-key.yaml", EVERY_V1_KEY),
        ("cases/v1-round-trip.yaml", V1_ROUND_TRIP),
    ]);
    let fixtures = repo().join("tests/fixtures/format-v1");
    for entry in std::fs::read_dir(&fixtures).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        std::fs::copy(
            &path,
            dir.path().join("cases").join(path.file_name().unwrap()),
        )
        .map_err(|e| e.to_string())?;
    }
    let (run, json) = run_on(dir.path(), &["2.7", "3.8", "3.13", "pypy"], &[]);
    run.expect_code(0)?;
    verdicts(
        &json,
        &[
            ("every-v1-key", "p=1", None, "2.7", "xfail"),
            ("every-v1-key", "p=2", None, "2.7", "xfail"),
            ("every-v1-key", "p=1", None, "3.8", "xfail"),
            ("every-v1-key", "p=2", None, "3.13", "ok"),
            ("every-v1-key", "p=1", None, "pypy", "skipped"),
            ("v1-round-trip", "", Some("2.7"), "3.13", "ok"),
            ("v1-round-trip", "", Some("3.13"), "2.7", "xfail"),
            ("v1-round-trip", "", Some("pypy"), "3.8", "skipped"),
            ("local-class-error-type", "pickler=c", None, "2.7", "xfail"),
            ("local-class-error-type", "pickler=c", None, "3.13", "xfail"),
            ("local-class-error-type", "pickler=c", None, "pypy", "xfail"),
            (
                "local-class-error-type",
                "pickler=python",
                None,
                "3.8",
                "xfail",
            ),
            (
                "reducer-override-cycle",
                "pickler=c",
                None,
                "pypy",
                "skipped",
            ),
            ("reducer-override-cycle", "pickler=c", None, "3.8", "ok"),
        ],
    )?;
    // The version-1 skip reasons read as they did.
    let skipped = find(&json, "every-v1-key", "p=1", None, "pypy")?;
    check(skipped["reason"] == "case applies to cpython", skipped)?;
    // And their catalogue: the rules in order, none of them lost.
    let list = Run::from(crosspickle(dir.path()).arg("list").output().unwrap());
    list.expect_code(0)?;
    check(
        list.stdout.contains(
            "expect: python <3, p=1: fail (a rule per version-1 key)\n    expect: python <3, p=2: error ValueError\n",
        ),
        &list.stdout,
    )
}

const EVERY_V1_KEY: &str = r#"id: every-v1-key
title: Every key of format version 1
description: a rule per key
links: [https://example.org/v1]
tags: [v1]
python: ">=2.7"
implementation: [cpython]
requires: []
env: {V1: "yes"}
timeout: 30
params:
  p: [1, 2]
code: |
  import os, sys
  assert os.environ["V1"] == "yes"
  if sys.version_info[0] == 2:
      assert p == 2, "p is one"
      raise ValueError("two on 2.7")
  if p == 1:
      raise ValueError("one")
expect:
  - python: "<3"
    where: {p: 1}
    outcome: fail
    match: p is one
    reason: a rule per version-1 key
  - python: "<3"
    outcome: error
    exception: ValueError
  - where: {p: [1]}
    implementation: cpython
    outcome: error
    exception: ValueError
    match: "^one$"
"#;

const V1_ROUND_TRIP: &str = r#"title: A version-1 round trip
implementation: cpython
dump: |
  import pickle
  data = pickle.dumps([1], 3) if bytes is not str else pickle.dumps([1], 2)
load: |
  import pickle
  assert pickle.loads(data) == [1]
expect:
  - phase: load
    dump_python: ">=3"
    load_python: "<3"
    outcome: error
    exception: ValueError
    match: unsupported pickle protocol
"#;

trial!(
    python_lists_and_implementation_version,
    needs = &["2.7", "3.8", "3.12", "pypy"]
);
fn python_lists_and_implementation_version() -> TestResult {
    let dir = folder(&[
        (
            "cases/lists.yaml",
            r#"title: version-request lists
python: ["2.7", ">=3.12"]
code: |
  import sys
  assert False, "on %d.%d" % sys.version_info[:2]
expect:
  - python: ["<3", "3.12"]
    outcome: fail
    match: "^on (2.7|3.12)$"
"#,
        ),
        (
            "cases/own-version.yaml",
            r#"title: implementation_version
code: |
  import sys
  v = getattr(getattr(sys, "implementation", None), "version", None) or sys.version_info
  assert False, "%d.%d" % tuple(v[:2])
expect:
  - implementation_version: "7.3"
    outcome: fail
    match: "^7\\.3$"
  - implementation_version: ["2.7", "3.8"]
    outcome: fail
    match: "^(2\\.7|3\\.8)$"
  - implementation: cpython
    implementation_version: ">=3.12"
    outcome: fail
    match: "^3\\.12$"
"#,
        ),
        (
            "cases/case-level.yaml",
            r#"title: case-level implementation_version
implementation_version: ["<3", ">=7,<8"]
code: pass
"#,
        ),
    ]);
    let (run, json) = run_on(dir.path(), &["2.7", "3.8", "3.12", "pypy"], &[]);
    run.expect_code(0)?;
    verdicts(
        &json,
        &[
            ("lists", "", None, "2.7", "xfail"),
            ("lists", "", None, "3.12", "xfail"),
            ("lists", "", None, "3.8", "skipped"),
            ("lists", "", None, "pypy", "skipped"),
            ("own-version", "", None, "2.7", "xfail"),
            ("own-version", "", None, "3.8", "xfail"),
            ("own-version", "", None, "3.12", "xfail"),
            ("own-version", "", None, "pypy", "xfail"),
            ("case-level", "", None, "2.7", "ok"),
            ("case-level", "", None, "pypy", "ok"),
            ("case-level", "", None, "3.12", "skipped"),
        ],
    )?;
    let skipped = find(&json, "lists", "", None, "3.8")?;
    check(
        skipped["reason"] == "case applies to python 2.7 or >=3.12",
        skipped,
    )?;
    let skipped = find(&json, "case-level", "", None, "3.8")?;
    check(
        skipped["reason"] == "case applies to implementation_version <3 or >=7,<8",
        skipped,
    )?;
    // The probe's answer, as `pythons --json` shows it.
    let out = Run::from(
        crosspickle(dir.path())
            .arg("pythons")
            .args(on(&["pypy"]))
            .arg("--json")
            .output()
            .unwrap(),
    );
    out.expect_code(0)?;
    check(
        out.stdout.contains("\"implementation_version\": \"7.3."),
        &out.stdout,
    )
}

trial!(
    features_as_the_probe_found_them,
    needs = &["2.7", "3.12", "pypy", "debug"]
);
fn features_as_the_probe_found_them() -> TestResult {
    // The case asks the interpreter itself and says what it found; the rules select on what
    // the probe found. Any disagreement is a changed verdict.
    let dir = folder(&[
        (
            "cases/features.yaml",
            r#"title: features as the probe found them
code: |
  import pickle, sys
  try:
      import _pickle
      c = all(getattr(pickle, n) is getattr(_pickle, n) for n in ("Pickler", "Unpickler", "dumps", "loads"))
  except ImportError:
      c = False
  d = hasattr(sys, "gettotalrefcount")
  assert False, "c_pickle=%s debug=%s" % (c, d)
expect:
  - features: {c_pickle: true, debug: true, free_threaded: false}
    outcome: fail
    match: "^c_pickle=True debug=True$"
  - features: {c_pickle: true}
    outcome: fail
    match: "^c_pickle=True debug=False$"
  - features: {c_pickle: false, debug: false}
    outcome: fail
    match: "^c_pickle=False debug=False$"
"#,
        ),
        (
            "cases/debug-only.yaml",
            "title: only on a debug build\nfeatures: {debug: true}\ncode: |\n  import sys\n  assert hasattr(sys, 'gettotalrefcount')\n",
        ),
        (
            "cases/free-threaded.yaml",
            "title: no free-threaded build here\ncode: pass\nexpect:\n  - features: {free_threaded: true}\n    outcome: fail\n",
        ),
        (
            // Every build here has its GIL: the rule for GIL-less processes selects none of
            // them, and the case-level feature lets them all run.
            "cases/gil.yaml",
            "title: the GIL is on here\nfeatures: {gil_enabled: true}\ncode: pass\nexpect:\n  - features: {gil_enabled: false}\n    outcome: fail\n",
        ),
        (
            "cases/no-gil-only.yaml",
            "title: only without the GIL\nfeatures: {gil_enabled: false}\ncode: pass\n",
        ),
    ]);
    let all = ["2.7", "3.12", "pypy", "debug"];
    let (run, json) = run_on(dir.path(), &all, &[]);
    run.expect_code(0)?;
    let mut want = Vec::new();
    for p in all {
        want.push(("features", "", None, p, "xfail"));
        want.push(("free-threaded", "", None, p, "ok"));
        want.push(("gil", "", None, p, "ok"));
        want.push(("no-gil-only", "", None, p, "skipped"));
        want.push((
            "debug-only",
            "",
            None,
            p,
            if p == "debug" { "ok" } else { "skipped" },
        ));
    }
    verdicts(&json, &want)?;
    let skipped = find(&json, "debug-only", "", None, "3.12")?;
    check(
        skipped["reason"] == "case applies to interpreters with debug",
        skipped,
    )?;
    // `pythons --json` reports c_pickle as the feature means it.
    let out = Run::from(
        crosspickle(dir.path())
            .arg("pythons")
            .args(on(&all))
            .arg("--json")
            .output()
            .unwrap(),
    );
    let value: serde_json::Value = serde_json::from_str(&out.stdout).map_err(|e| e.to_string())?;
    for i in value["interpreters"].as_array().into_iter().flatten() {
        let label = i["label"].as_str().unwrap_or("");
        let want = label.starts_with("cpython-3.");
        check(i["c_pickle_used"] == want, format!("{label}: {i}"))?;
        // No free-threaded build here: each has its GIL on.
        check(
            i["gil_enabled"] == true && i["free_threaded"] == false,
            format!("{label}: {i}"),
        )?;
    }
    let skipped = find(&json, "no-gil-only", "", None, "3.12")?;
    check(
        skipped["reason"] == "case applies to interpreters without gil_enabled",
        skipped,
    )?;
    Ok(())
}

trial!(
    a_probe_cache_without_gil_enabled_is_probed_again,
    needs = &["3.12"]
);
fn a_probe_cache_without_gil_enabled_is_probed_again() -> TestResult {
    // A cache written before `gil_enabled` was probed (format 2) holds a made-up answer: it is
    // left behind, the interpreter probed again, and its answer has the field.
    let dir = folder(&[]);
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let exe = std::fs::canonicalize(python("3.12").expect("3.12 is here")).unwrap();
    let m = std::fs::metadata(&exe).unwrap();
    use std::os::unix::fs::MetadataExt;
    let old = serde_json::json!({
        "version": 2,
        "entries": {exe.to_string_lossy(): {
            "key": {"size": m.size(), "mtime_ns": m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
                    "inode": m.ino(), "device": m.dev()},
            "info": {"implementation": "cpython", "version_info": [3, 99, 0, "final", 0],
                     "version": "3.99.0", "implementation_version": null, "executable": exe,
                     "prefix": "/", "debug": false, "free_threaded": true, "c_pickle": "_pickle",
                     "c_pickle_used": true, "pickle_highest_protocol": 5,
                     "pickle_default_protocol": 5, "platform": "linux"}}}
    });
    std::fs::write(cache.join("interpreters.json"), old.to_string()).unwrap();
    let out = Run::from(
        crosspickle(dir.path())
            .env("CROSSPICKLE_CACHE_DIR", &cache)
            .args(["pythons", "--json", "--python"])
            .arg(&exe)
            .output()
            .unwrap(),
    );
    out.expect_code(0)?;
    let value: serde_json::Value = serde_json::from_str(&out.stdout).map_err(|e| e.to_string())?;
    let i = &value["interpreters"][0];
    check(
        i["version"].as_str().is_some_and(|v| v.starts_with("3.12"))
            && i["free_threaded"] == false
            && i["gil_enabled"] == true,
        i,
    )?;
    let written = std::fs::read_to_string(cache.join("interpreters.json")).unwrap();
    check(written.contains("\"gil_enabled\": true"), written)
}

trial!(
    round_trip_implementation_and_features,
    needs = &["2.7", "3.12", "pypy"]
);
fn round_trip_implementation_and_features() -> TestResult {
    let dir = folder(&[(
        "cases/sides.yaml",
        r#"title: round-trip implementation and feature selectors
dump: |
  import pickle, platform, sys
  try:
      import _pickle
      c = pickle.Pickler is _pickle.Pickler
  except ImportError:
      c = False
  data = ("%s c=%s" % (platform.python_implementation().lower(), c)).encode("ascii")
load: |
  import pickle, platform, sys
  try:
      import _pickle
      c = pickle.Pickler is _pickle.Pickler
  except ImportError:
      c = False
  assert False, "%s -> %s c=%s" % (data.decode("ascii"), platform.python_implementation().lower(), c)
expect:
  - dump_implementation: pypy
    load_implementation: [pypy]
    outcome: fail
    match: "^pypy c=False -> pypy c=False$"
  - dump_implementation: pypy
    outcome: fail
    match: "^pypy c=False -> cpython c=(True|False)$"
  - dump_features: {c_pickle: true}
    load_features: {c_pickle: false}
    outcome: fail
    match: "^cpython c=True -> (cpython|pypy) c=False$"
  - load_features: {c_pickle: true}
    dump_features: {c_pickle: false}
    outcome: fail
    match: "^cpython c=False -> cpython c=True$"
  - outcome: fail
    match: "^cpython c=(True -> cpython c=True|False -> (cpython|pypy) c=False)$"
"#,
    )]);
    let all = ["2.7", "3.12", "pypy"];
    let (run, json) = run_on(dir.path(), &all, &[]);
    run.expect_code(0)?;
    let mut want = Vec::new();
    for p in all {
        for c in all {
            want.push(("sides", "", Some(p), c, "xfail"));
        }
    }
    verdicts(&json, &want)?;
    // Each pair decided by the rule meant for it: the message says which pair it was.
    let r = find(&json, "sides", "", Some("3.12"), "pypy")?;
    check(
        r["expected"]["match"] == "^cpython c=True -> (cpython|pypy) c=False$",
        r,
    )
}

trial!(where_not, needs = &["3.12"]);
fn where_not() -> TestResult {
    let dir = folder(&[(
        "cases/not.yaml",
        r#"title: where not
params:
  p: [a, b, c]
  n: [1, 2]
code: |
  if p == "c":
      assert False, "c"
  if n == 2:
      raise KeyError(p)
  raise ValueError(p)
expect:
  - where: {p: {not: [a, b]}}
    outcome: fail
  - where: {n: {not: 1}}
    outcome: error
    exception: KeyError
  - where: {p: {not: c}, n: 1}
    outcome: error
    exception: ValueError
"#,
    )]);
    let (run, json) = run_on(dir.path(), &["3.12"], &[]);
    run.expect_code(0)?;
    check(
        runs(&json).iter().all(|r| r["verdict"] == "xfail") && runs(&json).len() == 6,
        json.to_string(),
    )
}

trial!(
    skip_rules_are_not_run_and_every_report_says_why,
    needs = &["2.7", "3.12", "pypy"]
);
fn skip_rules_are_not_run_and_every_report_says_why() -> TestResult {
    // Where the skip rule decides, the code would abort: a crash would show that it ran.
    let dir = folder(&[(
        "cases/skips.yaml",
        r#"title: skip rules
params:
  p: [1, 2]
code: |
  import os, platform, sys
  if p == 2 and (platform.python_implementation() == "PyPy" or sys.version_info[0] == 2):
      os.abort()
expect:
  - python: "<3"
    where: {p: 1}
    outcome: pass
    reason: an explicit pass rule comes first
  - where: {p: 2}
    implementation: pypy
    outcome: skip
    reason: "R1: PyPy is skipped for p=2"
  - python: "<3"
    outcome: skip
    reason: "R2: 2.7 is skipped for the rest"
"#,
    )]);
    let reports = [
        "--junit-xml",
        "r.xml",
        "--markdown",
        "r.md",
        "--html",
        "r.html",
        "-v",
    ];
    let (run, json) = run_on(dir.path(), &["2.7", "3.12", "pypy"], &reports);
    run.expect_code(0)?;
    verdicts(
        &json,
        &[
            ("skips", "p=1", None, "2.7", "ok"),
            ("skips", "p=2", None, "2.7", "skipped"),
            ("skips", "p=1", None, "pypy", "ok"),
            ("skips", "p=2", None, "pypy", "skipped"),
            ("skips", "p=2", None, "3.12", "ok"),
        ],
    )?;
    let r = find(&json, "skips", "p=2", None, "pypy")?;
    check(
        r["reason"] == "R1: PyPy is skipped for p=2"
            && r["expected"]["outcome"] == "skip"
            && r.get("outcome").is_none(),
        r,
    )?;
    let r = find(&json, "skips", "p=2", None, "2.7")?;
    check(r["reason"] == "R2: 2.7 is skipped for the rest", r)?;
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap_or_default();
    for (report, text) in [
        ("terminal", run.stdout.clone()),
        ("junit", read("r.xml")),
        ("markdown", read("r.md")),
        ("html", read("r.html")),
    ] {
        for reason in [
            "R1: PyPy is skipped for p=2",
            "R2: 2.7 is skipped for the rest",
        ] {
            check(
                text.contains(reason),
                format!("{report} does not say `{reason}`:\n{text}"),
            )?;
        }
    }
    check(
        read("r.xml").contains("<skipped message=\"R1: PyPy is skipped for p=2\""),
        read("r.xml"),
    )?;
    // The catalogue shows the pass and skip rules in order.
    let list = Run::from(crosspickle(dir.path()).arg("list").output().unwrap());
    check(
        list.stdout.contains("    expect: python <3, p=1: pass (an explicit pass rule comes first)\n    expect: pypy, p=2: skipped (R1: PyPy is skipped for p=2)\n    expect: otherwise python <3, p=2: skipped (R2: 2.7 is skipped for the rest)\n    expect: otherwise: pass\n"),
        &list.stdout,
    )
}

trial!(skip_rules_in_round_trips, needs = &["2.7", "3.12"]);
fn skip_rules_in_round_trips() -> TestResult {
    // Loads abort: a load that ran would be a crash. Pairs loaded by 2.7 are skipped by a
    // rule that only the load phase meets: their dumps run, their loads do not.
    let dir = folder(&[(
        "cases/rt.yaml",
        r#"title: skip rules in round trips
params:
  proto: [2, 3]
dump: |
  import pickle
  data = pickle.dumps([1], proto)
load: |
  import os
  os.abort()
expect:
  - phase: dump
    dump_python: "<3"
    where: {proto: 3}
    outcome: error
    exception: ValueError
    reason: 2.7 writes protocols up to 2
  - load_python: "<3"
    outcome: skip
    reason: "R-load: not loaded by 2.7"
  - phase: dump
    outcome: skip
    reason: "R-dump: never reached, the dumps pass"
  - outcome: crash
    signal: SIGABRT
"#,
    )]);
    let (run, json) = run_on(dir.path(), &["2.7", "3.12"], &[]);
    run.expect_code(0)?;
    verdicts(
        &json,
        &[
            ("rt", "proto=3", Some("2.7"), "2.7", "xfail"),
            ("rt", "proto=3", Some("2.7"), "3.12", "xfail"),
            ("rt", "proto=2", Some("2.7"), "2.7", "skipped"),
            ("rt", "proto=2", Some("3.12"), "2.7", "skipped"),
            ("rt", "proto=3", Some("3.12"), "2.7", "skipped"),
            ("rt", "proto=2", Some("2.7"), "3.12", "xfail"),
            ("rt", "proto=3", Some("3.12"), "3.12", "xfail"),
        ],
    )?;
    let r = find(&json, "rt", "proto=2", Some("3.12"), "2.7")?;
    check(
        r["reason"] == "R-load: not loaded by 2.7" && r.get("outcome").is_none(),
        r,
    )?;
    // A pair whose rule is a skip whichever phase decides is skipped before its dump runs:
    // a dump that would abort shows it did not.
    let dir = folder(&[(
        "cases/rt2.yaml",
        r#"title: a pair skipped before anything runs
dump: |
  import os, sys
  if sys.version_info[0] == 2:
      os.abort()
  data = b"x"
load: |
  assert data == b"x"
expect:
  - dump_python: "<3"
    outcome: skip
    reason: "R-pair: 2.7 makes no pickles here"
"#,
    )]);
    let (run, json) = run_on(dir.path(), &["2.7", "3.12"], &[]);
    run.expect_code(0)?;
    verdicts(
        &json,
        &[
            ("rt2", "", Some("2.7"), "2.7", "skipped"),
            ("rt2", "", Some("2.7"), "3.12", "skipped"),
            ("rt2", "", Some("3.12"), "2.7", "ok"),
        ],
    )?;
    let r = find(&json, "rt2", "", Some("2.7"), "3.12")?;
    check(r["reason"] == "R-pair: 2.7 makes no pickles here", r)
}

trial!(
    exception_by_identity_and_instance_of,
    needs = &["2.7", "3.8", "3.13", "pypy", "debug"]
);
fn exception_by_identity_and_instance_of() -> TestResult {
    let dir = folder(&[
        (
            "cases/alias.yaml",
            r#"title: pickle.PicklingError names the class _pickle raises
code: |
  import pickle
  pickle.dumps(lambda: None, 2)
expect:
  - outcome: error
    exception: pickle.PicklingError
    instance_of: pickle.PickleError
"#,
        ),
        (
            // Expected to be `changed` where noted: a name that is another class, or that
            // does not exist there, does not match.
            "cases/negative.yaml",
            r#"title: names that must not match
params:
  want: [ValueError, ModuleNotFoundError, _pickle.PicklingError, Exception, nosuchmodule.Error]
code: |
  import pickle
  pickle.loads(b"cnosuchmod\nthing\n.")
expect:
  - where: {want: ValueError}
    outcome: error
    instance_of: ValueError
  - where: {want: ModuleNotFoundError}
    outcome: error
    instance_of: ModuleNotFoundError
  - where: {want: _pickle.PicklingError}
    outcome: error
    exception: _pickle.PicklingError
  - where: {want: Exception}
    outcome: error
    instance_of: Exception
  - where: {want: nosuchmodule.Error}
    outcome: error
    instance_of: nosuchmodule.Error
"#,
        ),
        (
            "cases/import-error.yaml",
            r#"title: except ImportError catches what find_class raises
code: |
  import pickle
  pickle.loads(b"cnosuchmod\nthing\n.")
expect:
  - outcome: error
    instance_of: ImportError
"#,
        ),
    ]);
    let all = ["2.7", "3.8", "3.13", "pypy", "debug"];
    let (run, json) = run_on(dir.path(), &all, &[]);
    run.expect_code(1)?;
    let mut want = Vec::new();
    for p in all {
        want.push(("alias", "", None, p, "xfail"));
        want.push(("import-error", "", None, p, "xfail"));
        want.push(("negative", "want=ValueError", None, p, "changed"));
        want.push(("negative", "want=Exception", None, p, "xfail"));
        want.push(("negative", "want=_pickle.PicklingError", None, p, "changed"));
        want.push(("negative", "want=nosuchmodule.Error", None, p, "changed"));
        let mnfe = if p == "2.7" { "changed" } else { "xfail" };
        want.push(("negative", "want=ModuleNotFoundError", None, p, mnfe));
    }
    verdicts(&json, &want)?;
    // By name alone (version 1), the alias would not have matched on CPython 3.
    let r = find(&json, "alias", "", None, "3.13")?;
    check(r["exception"] == "_pickle.PicklingError", r)
}

trial!(
    class_names_resolved_despite_the_case,
    needs = &["2.7", "3.12", "pypy"]
);
fn class_names_resolved_despite_the_case() -> TestResult {
    let dir = folder(&[
        (
            "cases/builtins.yaml",
            r#"title: a case that rebinds a builtin does not change what the name means
code: |
  try:
      import builtins
  except ImportError:
      import __builtin__ as builtins
  builtins.ValueError = KeyError
  raise KeyError("k")
expect:
  - outcome: error
    instance_of: ValueError
"#,
        ),
        (
            "cases/main.yaml",
            r#"title: __main__ is the case's module even if the case replaces it
code: |
  import sys
  class MyError(LookupError):
      pass
  Alias = MyError
  sys.modules["__main__"] = None
  raise MyError("m")
expect:
  - outcome: error
    exception: __main__.Alias
    instance_of: LookupError
"#,
        ),
        (
            "cases/startup-module.yaml",
            r#"title: a module loaded before the case is taken as it was
code: |
  import os, sys, types
  sys.modules["os"] = types.ModuleType("os")
  raise OSError("o")
expect:
  - outcome: error
    instance_of: os.error
"#,
        ),
        (
            "cases/reimported.yaml",
            r#"title: a class whose module the case removed still matches by its name
code: |
  import sys
  import pickle
  err = pickle.PicklingError
  del sys.modules["pickle"]
  raise err("p")
expect:
  - outcome: error
    exception: pickle.PicklingError
    instance_of: pickle.PickleError
"#,
        ),
        (
            "cases/blocked.yaml",
            r#"title: a module the case blocked does not resolve
code: |
  import sys
  sys.modules["_pickle"] = None
  sys.modules.pop("pickle", None)
  import pickle
  pickle.dumps(lambda: None, 2)
expect:
  - outcome: error
    instance_of: _pickle.PicklingError
"#,
        ),
        (
            "cases/liar.yaml",
            r#"title: a metaclass that claims every class is its subclass is not believed
code: |
  class Meta(type):
      def __subclasscheck__(cls, sub):
          return True
      def __instancecheck__(cls, obj):
          return True
  Liar = Meta("Liar", (Exception,), {})
  raise KeyError("x")
expect:
  - outcome: error
    instance_of: __main__.Liar
"#,
        ),
    ]);
    let all = ["2.7", "3.12", "pypy"];
    let (run, json) = run_on(dir.path(), &all, &[]);
    run.expect_code(1)?;
    let mut want = Vec::new();
    for p in all {
        want.push(("builtins", "", None, p, "changed"));
        want.push(("main", "", None, p, "xfail"));
        want.push(("startup-module", "", None, p, "xfail"));
        want.push(("reimported", "", None, p, "xfail"));
        want.push(("blocked", "", None, p, "changed"));
        want.push(("liar", "", None, p, "changed"));
    }
    verdicts(&json, &want)
}

trial!(bad_values_are_located_and_quoted);
/// A bad value of each key of format 2, reported at its own line and column and quoted.
fn bad_values_are_located_and_quoted() -> TestResult {
    let dir = repo().join("tests/fixtures/bad-cases");
    let cases = [
        ("version-list-empty.yaml", "5:13", "expect[0].python: an empty list of version requests"),
        ("version-list-number.yaml", "5:21", "expect[0].python[1]: version requests are strings: YAML reads this as the number 3.9"),
        ("implementation-version-number.yaml", "3:25", "implementation_version: version requests are strings: YAML reads this as the number 7.3"),
        ("features-unknown.yaml", "3:12", "features: unknown field `cpickle`: did you mean `c_pickle`?"),
        ("features-not-boolean.yaml", "5:23", "expect[0].features.debug: invalid type: string \"yes\", expected a boolean"),
        ("features-dump-in-code-case.yaml", "5:20", "expect[0].dump_features selects round trips"),
        ("implementation-unknown.yaml", "3:17", "implementation: unknown implementation `jython`"),
        ("load-implementation-unknown.yaml", "6:33", "expect[0].load_implementation[1]: unknown implementation `ironpython`"),
        ("where-not-misspelt.yaml", "7:16", "expect[0].where.p: a `where` value is a param's value, a list of them, or {not: VALUE} / {not: [VALUES]}, not a map with `nto`"),
        ("where-not-extra-key.yaml", "7:16", "expect[0].where.p: `{not: ...}` takes nothing else, not `also`"),
        ("where-nested-list.yaml", "7:17", "expect[0].where.p[0]: param values must be scalars, not lists"),
        ("outcome-unknown.yaml", "5:14", "expect[0].outcome: unknown variant `bogus`, expected one of `pass`, `fail`, `error`, `crash`, `timeout`, `skip`"),
        ("skip-without-reason.yaml", "6:14", "expect[0] has `outcome: skip` without a `reason`"),
        ("skip-with-empty-reason.yaml", "6:14", "expect[0] has `outcome: skip` without a `reason`"),
        ("skip-with-exception.yaml", "7:16", "expect[0].exception `ValueError` cannot go with `outcome: skip`"),
        ("instance-of-with-timeout.yaml", "6:18", "expect[0].instance_of `ValueError` cannot go with `outcome: timeout`"),
        ("instance-of-not-a-name.yaml", "6:18", "expect[0].instance_of `value error` is not a class name"),
        ("dump-features-not-boolean.yaml", "6:31", "expect[0].dump_features.c_pickle: invalid type: integer `1`, expected a boolean"),
        ("dump-implementation-unknown.yaml", "6:26", "expect[0].dump_implementation: unknown implementation `graalpy`"),
        ("dump-python-empty-list.yaml", "6:18", "expect[0].dump_python: an empty list of version requests"),
    ];
    for (file, at, message) in cases {
        let out = Run::from(crosspickle(&dir).args(["list", file]).output().unwrap());
        out.expect_code(2)?;
        let want = format!("{file}:{at}: {message}");
        check(
            out.stderr.contains(&want),
            format!("wanted `{want}` in:\n{}", out.stderr),
        )?;
    }
    // A request of a list that is no version request, at its own place in the list.
    let dir = folder(&[(
        "cases/garbage.yaml",
        "title: t\ncode: pass\nexpect:\n  - python: ['3.8', '>=banana']\n    outcome: fail\n",
    )]);
    let out = Run::from(crosspickle(dir.path()).arg("list").output().unwrap());
    out.expect_code(2)?;
    check(
        out.stderr
            .contains("garbage.yaml:4:21: expect[0].python[1]: invalid version request `>=banana`"),
        &out.stderr,
    )?;
    // A `not` that leaves no value, located at the param's entry in `where`.
    let dir = folder(&[(
        "cases/all-not.yaml",
        "title: t\nparams:\n  p: [1, 2]\ncode: pass\nexpect:\n  - outcome: fail\n    where: {p: {not: [1, 2]}}\n",
    )]);
    let out = Run::from(crosspickle(dir.path()).arg("list").output().unwrap());
    out.expect_code(2)?;
    check(
        out.stderr.contains(
            "all-not.yaml:7:13: expect[0].where: `p: {not: [1, 2]}` leaves no value of param `p`",
        ),
        &out.stderr,
    )
}

trial!(schema_is_current);
fn schema_is_current() -> TestResult {
    let out = Run::from(crosspickle(repo()).arg("schema").output().unwrap());
    out.expect_code(0)?;
    let committed =
        std::fs::read_to_string(repo().join("docs/case.schema.json")).unwrap_or_default();
    check(
        committed == out.stdout,
        "docs/case.schema.json is stale: run `cargo run -- schema > docs/case.schema.json`",
    )?;
    let schema: serde_json::Value = serde_json::from_str(&out.stdout).map_err(|e| e.to_string())?;
    check(
        schema["$schema"] == "https://json-schema.org/draft/2020-12/schema",
        &schema["$schema"],
    )
}

/// check-jsonschema: CROSSPICKLE_TEST_CHECK_JSONSCHEMA (as .ci/run sets it, into a private
/// environment under target/) or on PATH.
fn check_jsonschema() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CROSSPICKLE_TEST_CHECK_JSONSCHEMA").filter(|v| !v.is_empty())
    {
        return Some(PathBuf::from(p));
    }
    which::which("check-jsonschema").ok()
}

/// A test that needs check-jsonschema: ignored, saying so, without it; a failure when
/// CROSSPICKLE_TEST_CHECK_JSONSCHEMA names one that is not there.
fn schema_trial(name: &str, test: fn() -> TestResult) -> Trial {
    match check_jsonschema() {
        Some(p) if p.exists() => crate::support::timed(name, test),
        Some(p) => {
            let msg = format!(
                "CROSSPICKLE_TEST_CHECK_JSONSCHEMA names {}, which is not there",
                p.display()
            );
            crate::support::timed(name, move || Err(msg.clone().into()))
        }
        None => crate::support::timed(name, test)
            .with_kind("needs check-jsonschema (pip install check-jsonschema)")
            .with_ignored_flag(true),
    }
}

trial!(
    schema_accepts_the_corpus_and_refuses_bad_cases,
    by = schema_trial
);
fn schema_accepts_the_corpus_and_refuses_bad_cases() -> TestResult {
    let tool = check_jsonschema().expect("checked by schema_trial()");
    let schema = repo().join("docs/case.schema.json");
    let validate = |files: &[PathBuf]| {
        Command::new(&tool)
            .arg("--schemafile")
            .arg(&schema)
            .args(files)
            .output()
            .expect("check-jsonschema runs")
    };
    let out = Command::new(&tool)
        .arg("--check-metaschema")
        .arg(&schema)
        .output()
        .unwrap();
    check(out.status.success(), String::from_utf8_lossy(&out.stdout))?;
    let mut corpus = Vec::new();
    collect_yaml(&repo().join("cases"), &mut corpus);
    check(corpus.len() >= 40, format!("{} corpus files", corpus.len()))?;
    let out = validate(&corpus);
    check(
        out.status.success(),
        format!(
            "the corpus does not validate:\n{}",
            String::from_utf8_lossy(&out.stdout)
        ),
    )?;
    let mut bad = Vec::new();
    collect_yaml(&repo().join("tests/fixtures/bad-cases"), &mut bad);
    check(bad.len() >= 30, format!("{} bad cases", bad.len()))?;
    // One run of the validator for all of them; its JSON names each file it refuses.
    let out = Command::new(&tool)
        .arg("--schemafile")
        .arg(&schema)
        .args(["--output-format", "json"])
        .args(&bad)
        .output()
        .expect("check-jsonschema runs");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "check-jsonschema's JSON: {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })?;
    let refused: std::collections::BTreeSet<PathBuf> = report["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["filename"].as_str().map(PathBuf::from))
        .collect();
    for file in &bad {
        let loader = Run::from(crosspickle(repo()).arg("list").arg(file).output().unwrap());
        check(
            loader.code == 2,
            format!("the loader accepts {}: {}", file.display(), loader.stdout),
        )?;
        check(
            refused.contains(file),
            format!(
                "the schema accepts {}, which the loader refuses with:\n{}",
                file.display(),
                loader.stderr
            ),
        )?;
    }
    Ok(())
}

fn collect_yaml(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_yaml(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(p);
        }
    }
}

trial!(list_summarises_first_match_and_selects);
fn list_summarises_first_match_and_selects() -> TestResult {
    let dir = folder(&[
        (
            "cases/a/catch-all.yaml",
            "title: a catch-all after a rule\ntags: [one]\nparams:\n  pickler: [c, python]\ncode: pass\nexpect:\n  - implementation: pypy\n    where: {pickler: c}\n    outcome: skip\n    reason: no C pickler\n  - python: '<3'\n    outcome: fail\n  - outcome: error\n    exception: KeyError\n",
        ),
        (
            "cases/b/by-params.yaml",
            "title: rules by params\ntags: [two]\nparams:\n  p: [1, 2, 3]\ncode: pass\nexpect:\n  - where: {p: 1}\n    outcome: fail\n  - where: {p: {not: 3}}\n    outcome: pass\n    reason: explicit\n",
        ),
    ]);
    let list = |args: &[&str]| {
        Run::from(
            crosspickle(dir.path())
                .arg("list")
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let all = list(&[]);
    all.expect_code(0)?;
    for line in [
        "    expect: pypy, pickler=c: skipped (no C pickler)\n",
        "    expect: otherwise python <3: fail\n",
        "    expect: otherwise: error KeyError\n",
        "    expect: p=1: fail\n",
        "    expect: p=2: pass (explicit)\n",
        "    expect: p=3: pass\n",
        "2 cases\n",
    ] {
        check(
            all.stdout.contains(line),
            format!("no `{line}` in\n{}", all.stdout),
        )?;
    }
    check(!all.stdout.contains("everywhere"), &all.stdout)?;
    let one = list(&["--tag", "two"]);
    one.expect_code(0)?;
    check(
        one.stdout.contains("by-params") && !one.stdout.contains("catch-all"),
        &one.stdout,
    )?;
    let k = list(&["-k", "pickler=python and catch"]);
    k.expect_code(0)?;
    check(
        k.stdout.contains("catch-all") && k.stdout.ends_with("1 case\n"),
        &k.stdout,
    )?;
    let none = list(&["-k", "nothing"]);
    none.expect_code(2)?;
    check(
        none.stderr.contains("-k `nothing` selects no case"),
        &none.stderr,
    )?;
    let md = list(&["--markdown", "--tag", "one"]);
    md.expect_code(0)?;
    check(
        md.stdout.contains("| `catch-all` | a catch-all after a rule | every interpreter | pypy, pickler=c: skipped (no C pickler)<br>otherwise python <3: fail<br>otherwise: error KeyError |  |"),
        &md.stdout,
    )
}

trial!(
    case_format_examples_pass,
    needs = &["2.7", "3.6", "3.8", "3.13", "pypy", "debug"]
);
/// Every case in docs/case-format.md (a ```yaml block starting `# cases/...`) passes.
fn case_format_examples_pass() -> TestResult {
    let text =
        std::fs::read_to_string(repo().join("docs/case-format.md")).map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().unwrap();
    let mut count = 0;
    for block in text.split("```yaml\n").skip(1) {
        let block = block.split("```").next().unwrap_or("");
        let Some(path) = block.lines().next().and_then(|l| l.strip_prefix("# ")) else {
            continue;
        };
        if !path.starts_with("cases/") {
            continue;
        }
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, block).unwrap();
        count += 1;
    }
    check(count >= 9, format!("{count} examples"))?;
    let (run, json) = run_on(
        dir.path(),
        &["2.7", "3.6", "3.8", "3.13", "pypy", "debug"],
        &[],
    );
    run.expect_code(0)?;
    // Each example ran somewhere: none is skipped everywhere.
    let ran: std::collections::BTreeSet<String> = runs(&json)
        .iter()
        .filter(|r| r["verdict"] != "skipped")
        .map(|r| r["case"].as_str().unwrap_or("").to_string())
        .collect();
    check(
        ran.len() == count,
        format!("{count} examples, ran: {ran:?}"),
    )
}
