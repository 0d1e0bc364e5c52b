//! What a user writes never makes crosspickle misreport or fall over: params with exact
//! identity, matching at full fidelity with Python's `re` meaning, hostile case files refused
//! fast, load errors at the offending value, interpreters that are loops, wrappers or no
//! Python at all, and command-line values that would panic or mislead. Each test ran against
//! crosspickle 0.1.0 (`CROSSPICKLE_E2E_BIN=<old binary>`) and failed there.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::*;

fn py(v: &str) -> String {
    path_str(&python(v).expect("checked by trial()"))
}

fn cmd(dir: &Path, args: &[&str]) -> Run {
    Run::from(
        crosspickle(dir)
            .args(args)
            .output()
            .expect("crosspickle runs"),
    )
}

/// Run with a time limit: `None` when it had to be killed.
fn cmd_within(dir: &Path, args: &[&str], limit: Duration) -> (Option<Run>, Duration) {
    let start = Instant::now();
    let mut child = crosspickle(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("crosspickle starts");
    loop {
        if child.try_wait().expect("wait").is_some() {
            let out = child.wait_with_output().expect("output");
            return (Some(Run::from(out)), start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return (None, start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn contains(haystack: &str, needle: &str) -> TestResult {
    check(
        haystack.contains(needle),
        format!("wanted {needle:?} in:\n{haystack}"),
    )
}

fn run_names(json: &serde_json::Value) -> Vec<String> {
    runs(json)
        .iter()
        .map(|r| {
            let params: Vec<String> = r["params"]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
                .unwrap_or_default();
            format!("{}[{}]", r["case"].as_str().unwrap_or(""), params.join(","))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Params with exact identity

trial!(
    params_of_different_types_are_different_runs_everywhere,
    needs = &["3.12"]
);
/// `[5, "5", 1.0, true]` are four runs with four names: in the matrix, JUnit, merge keys, -k
/// and bisect-step's --params; the case receives each with its type.
fn params_of_different_types_are_different_runs_everywhere() -> TestResult {
    let case = r#"title: values that differ only by type
params:
  v: [5, "5", 1.0, true]
code: |
  print(type(v).__name__ + " " + repr(v))
  assert not isinstance(v, str), "a string"
expect:
  - where: {v: "5"}
    outcome: fail
    match: ^a string$
"#;
    let dir = folder(&[("cases/t.yaml", case)]);
    let p = py("3.12");
    let (run, json) = run_json(dir.path(), &["--python", &p, "--junit-xml", "junit.xml"]);
    run.expect_code(0)?;
    for row in ["t[v=5] ", "t[v='5'] ", "t[v=1.0] ", "t[v=True] "] {
        contains(&run.stdout, row)?;
    }
    let printed: Vec<String> = runs(&json)
        .iter()
        .map(|r| r["stdout"].as_str().unwrap_or("").trim().to_string())
        .collect();
    check(
        printed == ["int 5", "str '5'", "float 1.0", "bool True"],
        format!("what the case received: {printed:?}"),
    )?;
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let mut names: Vec<&str> = junit
        .split("<testcase name=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap_or(""))
        .collect();
    check(names.len() == 4, format!("JUnit testcases: {names:?}"))?;
    names.sort();
    names.dedup();
    check(names.len() == 4, format!("JUnit names repeat: {names:?}"))?;
    // merge of that one file: four runs, no conflict.
    let merged = cmd(
        dir.path(),
        &["merge", "results.json", "--json", "merged.json"],
    );
    merged.expect_code(0)?;
    let merged: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("merged.json")).unwrap()).unwrap();
    check(
        runs(&merged).len() == 4 && merged["conflicts"].is_null(),
        format!(
            "merged: {:?}, conflicts {}",
            run_names(&merged),
            merged["conflicts"]
        ),
    )?;
    // -k selects the string alone.
    let (run, json) = run_json(dir.path(), &["--python", &p, "-k", "v='5'"]);
    run.expect_code(0)?;
    check(
        run_names(&json) == [r#"t[v="5"]"#],
        format!("-k v='5' selected {:?}", run_names(&json)),
    )?;
    // bisect-step runs the combination --params names.
    let step = cmd(
        dir.path(),
        &[
            "bisect-step",
            "t",
            "--params",
            "v='5'",
            "--python",
            &p,
            "--old",
            "fail",
        ],
    );
    step.expect_code(0)?;
    let step = cmd(
        dir.path(),
        &[
            "bisect-step",
            "t",
            "--params",
            "v=5",
            "--python",
            &p,
            "--old",
            "pass",
        ],
    );
    step.expect_code(0)
}

trial!(non_finite_floats_survive_json_and_merge, needs = &["3.12"]);
/// `[null, .inf, -.inf, .nan]`: four runs, kept apart in JSON and through merge.
fn non_finite_floats_survive_json_and_merge() -> TestResult {
    let case = "title: non-finite floats\nparams:\n  x: [null, .inf, -.inf, .nan]\ncode: |\n  print(repr(x))\n";
    let dir = folder(&[("cases/f.yaml", case)]);
    let (run, json) = run_json(dir.path(), &["--python", &py("3.12")]);
    run.expect_code(0)?;
    let params: Vec<String> = runs(&json)
        .iter()
        .map(|r| r["params"]["x"].to_string())
        .collect();
    check(
        params
            == [
                "null",
                r#"{"float":"inf"}"#,
                r#"{"float":"-inf"}"#,
                r#"{"float":"nan"}"#,
            ],
        format!("JSON params: {params:?}"),
    )?;
    let printed: Vec<String> = runs(&json)
        .iter()
        .map(|r| r["stdout"].as_str().unwrap_or("").trim().to_string())
        .collect();
    check(
        printed == ["None", "inf", "-inf", "nan"],
        format!("the case received {printed:?}"),
    )?;
    let merged = cmd(
        dir.path(),
        &[
            "merge",
            "results.json",
            "results.json",
            "--json",
            "merged.json",
        ],
    );
    merged.expect_code(0)?;
    for row in ["f[x=None]", "f[x=inf]", "f[x=-inf]", "f[x=nan]"] {
        contains(&merged.stdout, row)?;
    }
    let merged: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("merged.json")).unwrap()).unwrap();
    let params: Vec<String> = runs(&merged)
        .iter()
        .map(|r| r["params"]["x"].to_string())
        .collect();
    check(params.len() == 4, format!("merged params: {params:?}"))
}

trial!(nan_and_signed_zeros_are_usable_params, needs = &["3.12"]);
/// NaN can be named in `where`; 0.0 and -0.0 are two values.
fn nan_and_signed_zeros_are_usable_params() -> TestResult {
    let case = r#"title: signed zeros and NaN
params:
  z: [0.0, -0.0, .nan, 1.5]
code: |
  import math
  assert math.copysign(1.0, z) > 0 and z == z, "negative or nan"
expect:
  - where: {z: [-0.0, .nan]}
    outcome: fail
    match: negative or nan
"#;
    let dir = folder(&[("cases/z.yaml", case)]);
    let (run, json) = run_json(dir.path(), &["--python", &py("3.12")]);
    run.expect_code(0)?;
    let verdicts: Vec<(String, String)> = runs(&json)
        .iter()
        .map(|r| {
            (
                r["params"]["z"].to_string(),
                r["verdict"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let want = [
        ("0.0", "ok"),
        ("-0.0", "xfail"),
        (r#"{"float":"nan"}"#, "xfail"),
        ("1.5", "ok"),
    ];
    check(
        verdicts
            .iter()
            .map(|(p, v)| (p.as_str(), v.as_str()))
            .collect::<Vec<_>>()
            == want,
        format!("{verdicts:?}"),
    )?;
    contains(&run.stdout, "z[z=-0.0]")
}

trial!(
    integers_of_any_size_reach_the_case_exactly,
    needs = &["2.7", "3.12"]
);
/// 2**64, 2**100 and -2**63-1 reach the case as exact integers, on 2.7 (as `long`) and 3.x.
fn integers_of_any_size_reach_the_case_exactly() -> TestResult {
    let case = r#"title: integers beyond 64 bits
params:
  n: [18446744073709551616, 1267650600228229401496703205376, -9223372036854775809, 0x1F]
code: |
  import pickle
  assert n in (2**64, 2**100, -2**63 - 1, 31), repr(n)
  for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
      assert pickle.loads(pickle.dumps(n, protocol)) == n
"#;
    let dir = folder(&[("cases/n.yaml", case)]);
    let (run, json) = run_json(
        dir.path(),
        &["--python", &py("2.7"), "--python", &py("3.12")],
    );
    run.expect_code(0)?;
    check(
        runs(&json).len() == 8,
        format!("{} runs", runs(&json).len()),
    )?;
    contains(&run.stdout, "n[n=1267650600228229401496703205376]")?;
    let first = &runs(&json)[0]["params"]["n"];
    check(
        first["int"] == "18446744073709551616" && first.as_object().is_some_and(|o| o.len() == 1),
        format!("JSON: {first}"),
    )
}

trial!(
    param_names_that_cannot_be_globals_are_refused,
    needs = &["3.12"]
);
/// Names that cannot be globals of the case are refused at load, each at its line and column.
fn param_names_that_cannot_be_globals_are_refused() -> TestResult {
    let files: &[(&str, &str, &str)] = &[
        (
            "dunder.yaml",
            "title: t\nparams:\n  __name__: [a]\ncode: pass\n",
            "dunder.yaml:3:3: param `__name__` is a dunder name",
        ),
        (
            "data.yaml",
            "title: t\nparams:\n  data: [1]\ndump: data = b''\nload: pass\n",
            "data.yaml:3:3: param `data` would hide the pickle",
        ),
        (
            "print.yaml",
            "title: t\nparams:\n  print: [1]\ncode: pass\n",
            "print.yaml:3:3: param `print` is a keyword of Python 2.7",
        ),
        (
            "async.yaml",
            "title: t\npython: '>=3'\nparams:\n  async: [1]\ncode: pass\n",
            "async.yaml:4:3: param `async` is a keyword of Python 3.7 and later",
        ),
        (
            "none.yaml",
            "title: t\npython: '>=3'\nparams:\n  None: [1]\ncode: pass\n",
            "none.yaml:4:3: param `None` is a keyword of Python 3",
        ),
        (
            "digit.yaml",
            "title: t\nparams:\n  1x: [1]\ncode: pass\n",
            "digit.yaml:3:3: param `1x` is not an ASCII Python identifier",
        ),
        (
            "accent.yaml",
            "title: t\nparams:\n  caf\u{e9}: [1]\ncode: pass\n",
            "accent.yaml:3:3: param `caf\u{e9}` is not an ASCII Python identifier",
        ),
    ];
    for (name, text, error) in files {
        let dir = folder(&[(&format!("cases/{name}"), text)]);
        let run = cmd(dir.path(), &["--python", &py("3.12")]);
        run.expect_code(2)?;
        contains(&run.stderr, error)?;
    }
    // `print` is fine where no Python 2 runs the case.
    let dir = folder(&[(
        "cases/ok.yaml",
        "title: t\npython: '>=3'\nparams:\n  print: [1]\ncode: assert globals()['print'] == 1\n",
    )]);
    cmd(dir.path(), &["--python", &py("3.12")]).expect_code(0)
}

// ---------------------------------------------------------------------------------------------
// Matching at full fidelity

trial!(match_sees_the_whole_message, needs = &["3.12"]);
/// A pattern for text in the middle of a 40 KB message matches; the stored message is cut.
fn match_sees_the_whole_message() -> TestResult {
    let case = r#"title: a long message
code: |
  raise ValueError("x" * 20000 + " NEEDLE " + "y" * 20000)
expect:
  - outcome: error
    exception: ValueError
    match: " NEEDLE "
"#;
    let dir = folder(&[("cases/long.yaml", case)]);
    let (run, json) = run_json(dir.path(), &["--python", &py("3.12")]);
    run.expect_code(0)?;
    let r = &runs(&json)[0];
    check(r["verdict"] == "xfail", format!("verdict {}", r["verdict"]))?;
    let stored = r["message"].as_str().unwrap_or("");
    check(
        stored.chars().count() < 17_000 && stored.contains("characters omitted"),
        format!("stored message of {} characters", stored.chars().count()),
    )
}

trial!(match_has_python_re_meaning, needs = &["3.12"]);
/// `abc$` matches "abc\n", `\Z` is the very end, named groups and back-references, a literal
/// `{`; what Python's re would refuse is refused at load with its reason.
fn match_has_python_re_meaning() -> TestResult {
    let case = r#"title: Python's re
params:
  m: [newline, quoted, braces]
code: |
  raise ValueError({"newline": "abc\n", "quoted": "'x'", "braces": "{'a': 1}"}[m])
expect:
  - where: {m: newline}
    outcome: error
    match: abc$
  - where: {m: quoted}
    outcome: error
    match: (?P<q>['"])x(?P=q)\Z
  - outcome: error
    match: "{'a': 1}"
"#;
    let dir = folder(&[("cases/re.yaml", case)]);
    let (run, json) = run_json(dir.path(), &["--python", &py("3.12")]);
    run.expect_code(0)?;
    let verdicts: Vec<String> = runs(&json)
        .iter()
        .filter_map(|r| r["verdict"].as_str().map(String::from))
        .collect();
    check(verdicts == ["xfail"; 3], format!("{verdicts:?}"))?;
    // `\Z` is not "before a final newline" as in fancy-regex.
    let dir = folder(&[(
        "cases/z.yaml",
        "title: t\ncode: raise ValueError('abc\\n')\nexpect:\n  - outcome: error\n    match: abc\\Z\n",
    )]);
    let (run, json) = run_json(dir.path(), &["--python", &py("3.12")]);
    run.expect_code(1)?;
    check(
        runs(&json)[0]["verdict"] == "changed",
        "abc\\Z must not match abc\\n",
    )?;
    for (pattern, reason) in [
        ("a**", "multiple repeat at position 2"),
        (r"\N{DIGIT ONE}", "named characters are not supported"),
        ("(?<=a+)b", "look-behind requires fixed-width pattern"),
        (r"\h", "bad escape \\h"),
    ] {
        let text =
            format!("title: t\ncode: pass\nexpect:\n  - outcome: error\n    match: '{pattern}'\n");
        let dir = folder(&[("cases/bad.yaml", &text)]);
        let run = cmd(dir.path(), &["--python", &py("3.12")]);
        run.expect_code(2)?;
        contains(
            &run.stderr,
            &format!("bad.yaml:5:12: expect[0].match `{pattern}`"),
        )?;
        contains(&run.stderr, reason)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Bounded, fast refusal of hostile files

trial!(hostile_files_are_refused_fast);
fn hostile_files_are_refused_fast() -> TestResult {
    let n = 100_000;
    let deep = format!(
        "title: t\ncode: pass\nparams:\n  x: {}{}\n",
        "[".repeat(n),
        "]".repeat(n)
    );
    let mut laughs = String::from("title: t\ncode: pass\nparams:\n  x: [a]\nexpect:\n  - outcome: pass\n    where: {x: [&a0 [x, x, x, x, x, x, x, x, x, x]");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        laughs.push_str(&format!(", &a{i} [{refs}]"));
    }
    laughs.push_str("]}\n");
    let huge = format!("title: t\ncode: |\n{}", "  x = 1\n".repeat(200_000));
    let product = format!(
        "title: t\ncode: pass\nparams:\n  a: [{list}]\n  b: [{list}]\n  c: [{list}]\n",
        list = (0..100)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let huge_error = format!("huge.yaml: the file is {} bytes", huge.len());
    let cases: &[(&str, &str, &str)] = &[
        ("deep.yaml", &deep, "deep.yaml:4:"),
        ("laughs.yaml", &laughs, "laughs.yaml:7:"),
        ("huge.yaml", &huge, &huge_error),
        (
            "product.yaml",
            &product,
            "product.yaml:4:3: the params make 1000000 combinations",
        ),
    ];
    let reasons = [
        "nesting deeper than 32 levels",
        "expands the document past 100000 nodes",
        "limited to 1048576 bytes",
        "at most 10000",
    ];
    for ((name, text, at), reason) in cases.iter().zip(reasons) {
        let dir = folder(&[(&format!("cases/{name}"), text)]);
        let (run, took) = cmd_within(dir.path(), &["list"], Duration::from_secs(5));
        let Some(run) = run else {
            return Err(format!("{name}: still loading after {took:?}").into());
        };
        run.expect_code(2)?;
        check(
            took < Duration::from_secs(1),
            format!("{name}: refused in {took:?}"),
        )?;
        contains(&run.stderr, at)?;
        contains(&run.stderr, reason)?;
    }
    Ok(())
}

trial!(load_errors_quote_the_value_at_its_position);
/// Every load error names the offending value where it stands, and quotes it.
fn load_errors_quote_the_value_at_its_position() -> TestResult {
    let files: &[(&str, &str, &str)] = &[
        (
            "impl.yaml",
            "title: t\nimplementation: jython\ncode: pass\n",
            "impl.yaml:2:17: implementation: unknown implementation `jython`",
        ),
        (
            "rule-impl.yaml",
            "title: t\ncode: pass\nexpect:\n  - implementation: [cpython, jython]\n    outcome: fail\n",
            "rule-impl.yaml:4:31: expect[0].implementation[1]: unknown implementation `jython`",
        ),
        (
            "match.yaml",
            "title: t\ncode: pass\nexpect:\n  - outcome: fail\n    match: '(unclosed'\n",
            "match.yaml:5:12: expect[0].match `(unclosed` is not a valid regular expression",
        ),
        (
            "where.yaml",
            "title: t\nparams:\n  p: [1, 2]\ncode: pass\nexpect:\n  - where: {p: [1, 3]}\n    outcome: fail\n",
            "where.yaml:6:20: expect[0].where: param `p` has no value 3",
        ),
        (
            "dup.yaml",
            "title: t\nparams:\n  p: [1, 2, 1]\ncode: pass\n",
            "dup.yaml:3:13: param `p` lists the value 1 twice (first at line 3, column 7)",
        ),
        (
            "tag.yaml",
            "title: t\ntags: [ok, 'two words']\ncode: pass\n",
            "tag.yaml:2:12: tag `two words` must be one word",
        ),
        (
            "link.yaml",
            "title: t\nlinks:\n  - https://example.org/a\n  - not a link\ncode: pass\n",
            "link.yaml:4:5: link `not a link` is not a URL",
        ),
        (
            "exc.yaml",
            "title: t\ncode: pass\nexpect:\n  - outcome: pass\n    exception: ValueError\n",
            "exc.yaml:5:16: expect[0].exception `ValueError` cannot go with `outcome: pass`",
        ),
        (
            "float.yaml",
            "title: t\nparams:\n  x: [1.5, 1e400]\ncode: pass\n",
            "float.yaml:3:12: param `x`: `1e400` is too large for a float",
        ),
    ];
    for (name, text, error) in files {
        let dir = folder(&[(&format!("cases/{name}"), text)]);
        let run = cmd(dir.path(), &["list"]);
        run.expect_code(2)?;
        contains(&run.stderr, error)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Interpreters

trial!(symlink_loop_as_python_is_named);
fn symlink_loop_as_python_is_named() -> TestResult {
    let dir = folder(&[("cases/t.yaml", "title: t\ncode: pass\n")]);
    std::os::unix::fs::symlink(dir.path().join("b"), dir.path().join("a")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("b")).unwrap();
    let run = cmd(
        dir.path(),
        &["--pythons-toml", "/dev/null", "--python", "./a"],
    );
    run.expect_code(2)?;
    contains(
        &run.stderr,
        "--python ./a: ./a cannot be resolved: it is a loop of symbolic links",
    )
}

trial!(
    wrapper_of_a_found_interpreter_is_listed_once,
    needs = &["3.12"]
);
/// A wrapper script on PATH that execs an interpreter named in pythons.toml is that
/// interpreter: listed once, with both sources.
fn wrapper_of_a_found_interpreter_is_listed_once() -> TestResult {
    let real = py("3.12");
    let wrapper = format!("#!/bin/sh\nexec \"{real}\" \"$@\"\n");
    let dir = folder(&[
        ("wrap/python3.12", &wrapper),
        ("cases/t.yaml", "title: t\ncode: pass\n"),
    ]);
    let exe = dir.path().join("wrap/python3.12");
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cfg = format!(
        "[discovery]\npath = true\npyenv = false\nuv = false\nconda = false\n[pythons]\nreal = \"{real}\"\n"
    );
    std::fs::write(dir.path().join("pythons.toml"), cfg).unwrap();
    let path = dir.path().join("wrap");
    let listed = Run::from(
        crosspickle(dir.path())
            .args(["pythons", "--json"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    listed.expect_code(0)?;
    let value: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    let found: Vec<String> = value["interpreters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| format!("{} {} {}", i["label"], i["executable"], i["sources"]))
        .collect();
    check(
        found.len() == 1 && found[0].contains(&real) && found[0].contains("\"PATH\""),
        format!("listed: {found:?}"),
    )?;
    let run = Run::from(
        crosspickle(dir.path())
            .arg("--json")
            .arg("r.json")
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    run.expect_code(0)?;
    contains(&run.stdout, "(1 run, 1 interpreter)")
}

trial!(a_program_that_is_no_python_says_so, needs = &["3.12"]);
fn a_program_that_is_no_python_says_so() -> TestResult {
    let dir = folder(&[("cases/t.yaml", "title: t\ncode: pass\n")]);
    let run = cmd(
        dir.path(),
        &["--pythons-toml", "/dev/null", "--python", "/bin/ls"],
    );
    // An interpreter that cannot run is a tooling failure (exit 3), not a verdict.
    run.expect_code(3)?;
    contains(
        &run.stdout,
        "not a Python interpreter (the probe exited with status 2",
    )?;
    check(
        !run.stdout.contains("interpreter probe") && !run.stdout.contains("import sys"),
        format!("the probe's source is in the report:\n{}", run.stdout),
    )?;
    let verbose = cmd(
        dir.path(),
        &["--pythons-toml", "/dev/null", "--python", "/bin/ls", "-v"],
    );
    verbose.expect_code(3)?;
    contains(&verbose.stdout, "it printed: /usr/bin/ls: cannot access")
}

// ---------------------------------------------------------------------------------------------
// Command line and reports

trial!(
    time_limits_that_cannot_be_kept_are_refused,
    needs = &["3.12", "3.13"]
);
fn time_limits_that_cannot_be_kept_are_refused() -> TestResult {
    let dir = folder(&[
        ("cases/t.yaml", "title: t\ncode: pass\n"),
        ("long/l.yaml", "title: t\ntimeout: 1e300\ncode: pass\n"),
    ]);
    let p = py("3.12");
    let both = format!("{p},{}", py("3.13"));
    for (args, error) in [
        (
            vec!["--python", &p, "--timeout", "1e20"],
            "--timeout 1e+20 is too long",
        ),
        (
            vec!["--python", &p, "--timeout=-1"],
            "--timeout must be a positive number",
        ),
        (
            vec!["--python", &p, "--probe-timeout", "1e20"],
            "--probe-timeout 1e+20 is too long",
        ),
        (
            vec![
                "bisect",
                "cases/t.yaml",
                "--python",
                &both,
                "--timeout",
                "1e20",
            ],
            "--timeout 1e+20 is too long",
        ),
        (
            vec![
                "bisect-step",
                "cases/t.yaml",
                "--python",
                &p,
                "--old",
                "pass",
                "--timeout",
                "1e20",
            ],
            "--timeout 1e+20 is too long",
        ),
        (
            vec!["pythons", "--probe-timeout", "inf"],
            "--probe-timeout must be a positive number",
        ),
        (
            vec!["long", "--python", &p],
            "l.yaml:2:10: `timeout` 1e+300 is too long: at most 604800 seconds",
        ),
        (
            vec!["--python", &p, "-j", "2305843009213693952"],
            "-j 2305843009213693952 is more processes at once",
        ),
    ] {
        let run = cmd(dir.path(), &args);
        // bisect-step reports bad input with its own "cannot run" code (128), never a panic.
        let want = if args[0] == "bisect-step" { 128 } else { 2 };
        run.expect_code(want)?;
        contains(&run.stderr, error)?;
    }
    Ok(())
}

trial!(empty_python_requests_are_refused, needs = &["3.12"]);
fn empty_python_requests_are_refused() -> TestResult {
    let dir = folder(&[("cases/t.yaml", "title: t\ncode: pass\n")]);
    for value in ["", ",", "3.12,"] {
        let run = cmd(dir.path(), &["--python", value]);
        run.expect_code(2)?;
        contains(
            &run.stderr,
            &format!("--python '{value}' holds an empty request"),
        )?;
    }
    let run = cmd(dir.path(), &["--python", &py("3.12"), "--dump-python", ","]);
    run.expect_code(2)?;
    contains(&run.stderr, "--dump-python ',' holds an empty request")
}

trial!(one_file_for_two_reports_is_refused, needs = &["3.12"]);
fn one_file_for_two_reports_is_refused() -> TestResult {
    let dir = folder(&[("cases/t.yaml", "title: t\ncode: pass\n")]);
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let run = cmd(
        dir.path(),
        &[
            "--python",
            &py("3.12"),
            "--json",
            "out/r",
            "--html",
            "./out/../out/r",
        ],
    );
    run.expect_code(2)?;
    contains(
        &run.stderr,
        "--json out/r and --html ./out/../out/r name the same file",
    )?;
    check(
        !dir.path().join("out/r").exists(),
        "nothing may run before the refusal",
    )?;
    let run = cmd(dir.path(), &["--python", &py("3.12"), "--json", "out/r"]);
    run.expect_code(0)?;
    let run = cmd(
        dir.path(),
        &[
            "merge",
            "out/r",
            "--markdown",
            "m.md",
            "--junit-xml",
            "m.md",
        ],
    );
    run.expect_code(2)?;
    contains(
        &run.stderr,
        "--junit-xml m.md and --markdown m.md name the same file",
    )
}

trial!(skip_missing_that_leaves_nothing_says_so, needs = &["3.12"]);
fn skip_missing_that_leaves_nothing_says_so() -> TestResult {
    let dir = folder(&[("cases/t.yaml", "title: t\ncode: pass\n")]);
    let run = cmd(dir.path(), &["--python", "3.99", "--skip-missing"]);
    run.expect_code(2)?;
    contains(&run.stderr, "--skip-missing skipped every request (`3.99`)")?;
    contains(&run.stderr, "cpython-3.12")
}

trial!(jobs_zero_is_refused, needs = &["3.12"]);
fn jobs_zero_is_refused() -> TestResult {
    let dir = folder(&[("cases/t.yaml", "title: t\ncode: pass\n")]);
    let run = cmd(dir.path(), &["--python", &py("3.12"), "-j", "0"]);
    run.expect_code(2)?;
    contains(
        &run.stderr,
        "-j 0: give the number of Python processes at once, at least 1",
    )
}

trial!(counts_of_one_are_singular, needs = &["3.12"]);
fn counts_of_one_are_singular() -> TestResult {
    let dir = folder(&[("cases/t.yaml", "title: t\ncode: pass\n")]);
    let (run, _) = run_json(
        dir.path(),
        &[
            "--python",
            &py("3.12"),
            "--markdown",
            "s.md",
            "--html",
            "s.html",
        ],
    );
    run.expect_code(0)?;
    contains(&run.stdout, "(1 run, 1 interpreter)")?;
    contains(
        &std::fs::read_to_string(dir.path().join("s.md")).unwrap(),
        "1 run on 1 interpreter",
    )?;
    contains(
        &std::fs::read_to_string(dir.path().join("s.html")).unwrap(),
        "1 run on 1 interpreter,",
    )
}

trial!(merge_takes_the_longest_duration, needs = &["3.12"]);
/// Merged results took as long as their longest input: a file merged with itself keeps its
/// duration.
fn merge_takes_the_longest_duration() -> TestResult {
    let dir = folder(&[
        ("a/t.yaml", "title: t\ncode: pass\n"),
        (
            "b/t.yaml",
            "title: t\ncode: |\n  import time\n  time.sleep(0.5)\n",
        ),
    ]);
    let p = py("3.12");
    cmd(dir.path(), &["a", "--python", &p, "--json", "a.json"]).expect_code(0)?;
    cmd(dir.path(), &["b", "--python", &p, "--json", "b.json"]).expect_code(0)?;
    let read = |f: &str| -> f64 {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(f)).unwrap()).unwrap();
        v["duration_s"].as_f64().unwrap()
    };
    cmd(
        dir.path(),
        &["merge", "a.json", "a.json", "--json", "aa.json"],
    )
    .expect_code(0)?;
    check(
        read("aa.json") == read("a.json"),
        format!("a with itself: {} vs {}", read("aa.json"), read("a.json")),
    )?;
    cmd(
        dir.path(),
        &["merge", "a.json", "b.json", "--json", "ab.json"],
    )
    .expect_code(0)?;
    check(
        read("ab.json") == read("a.json").max(read("b.json")),
        format!(
            "a and b: {} (inputs {} and {})",
            read("ab.json"),
            read("a.json"),
            read("b.json")
        ),
    )
}

trial!(
    conflict_sides_name_the_files_they_came_from,
    needs = &["3.12"]
);
/// A conflict names, for each side, the file that side came from, also through a merge of
/// merges.
fn conflict_sides_name_the_files_they_came_from() -> TestResult {
    let dir = folder(&[(
        "cases/c.yaml",
        "title: t\ncode: |\n  import os\n  assert os.environ.get('SIDE') != 'bad'\n",
    )]);
    let p = py("3.12");
    let run_side = |side: &str, json: &str| {
        Run::from(
            crosspickle(dir.path())
                .args(["--python", &p, "--json", json])
                .env("SIDE", side)
                .output()
                .unwrap(),
        )
    };
    run_side("good", "1.json").expect_code(0)?;
    run_side("bad", "2.json").expect_code(1)?;
    run_side("good", "3.json").expect_code(0)?;
    cmd(
        dir.path(),
        &["merge", "1.json", "2.json", "--json", "12.json"],
    )
    .expect_code(1)?;
    let run = cmd(dir.path(), &["merge", "12.json", "3.json"]);
    run.expect_code(1)?;
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("CONFLICT") && l.contains(" in "))
        .ok_or(format!("no conflict:\n{}", run.stdout))?;
    check(
        line.contains("ok in 1.json")
            && line.contains("regression in 2.json")
            && line.contains("ok in 3.json")
            && !line.contains("12.json"),
        format!("each side named by its own file: {line}"),
    )
}
