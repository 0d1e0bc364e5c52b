//! Each side of a round trip with packages of its own (`dump_requires`, `load_requires`), end
//! to end and hermetic: tiny wheels written by the test, installed offline into a throwaway
//! cache folder; the reports say which packages each side had, and `bisect --package --side`
//! bisects one side's releases with the other side's fixed.

use std::path::Path;

use serde_json::Value;

use crate::requires::{cache, envs, wheels};
use crate::support::*;

/// Both sides hold `shared`; the producer `tinypkg=={dumped}`, the consumer `tinypkg=={loaded}`.
/// The dump sends what it imported, the load compares it with the params and with its own.
const SIDES: &str = r#"title: each side imports its own release of tinypkg
params:
  dumped: ["1.0", "2.0"]
  loaded: ["1.0"]
requires: ["shared==1.0"]
dump_requires: ["tinypkg=={dumped}"]
load_requires: ["tinypkg=={loaded}"]
dump: |
  import pickle, sys, shared, tinypkg
  assert tinypkg.__file__.startswith(sys.prefix)
  data = pickle.dumps((tinypkg.__version__, shared.__version__), protocol=2)
load: |
  import pickle, sys, shared, tinypkg
  assert tinypkg.__file__.startswith(sys.prefix)
  theirs, their_shared = pickle.loads(data)
  assert (theirs, their_shared, shared.__version__) == (dumped, "1.0", "1.0")
  assert tinypkg.__version__ == loaded, tinypkg.__version__
  assert theirs == tinypkg.__version__, "dumped with %s" % theirs
expect:
  - where: {dumped: "2.0"}
    outcome: fail
    match: "^dumped with 2\\.0$"
"#;

fn offline(cache: &Path, links: &Path) -> Vec<String> {
    vec![
        "--cache-dir".into(),
        path_str(cache),
        "--offline".into(),
        "--find-links".into(),
        path_str(links),
    ]
}

trial!(each_side_gets_its_own_packages, needs = &["3.8", "3.13"]);
/// Every pair of 3.8 and 3.13, both params: the verdicts the rule says, each run's JSON naming
/// each side's packages, one environment per (interpreter, requirement set), and the JUnit
/// report saying the packages too, for a passing run and an xfail.
fn each_side_gets_its_own_packages() -> TestResult {
    let py = python("3.8").expect("3.8");
    let links = wheels(
        &py,
        &[("tinypkg", "1.0"), ("tinypkg", "2.0"), ("shared", "1.0")],
    )?;
    let cache = cache();
    let dir = folder(&[("cases/sides.yaml", SIDES)]);
    let mut args = python_args(&["3.8", "3.13"]);
    args.extend(offline(cache.path(), links.path()));
    args.extend(["--junit-xml".into(), "junit.xml".into()]);
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let all = runs(&json);
    check(
        all.len() == 8,
        format!("8 runs (2 params x 4 pairs), got {}", all.len()),
    )?;
    for r in &all {
        let dumped = r["params"]["dumped"].as_str().unwrap_or("?");
        let want = if dumped == "2.0" { "xfail" } else { "ok" };
        check(
            r["verdict"] == want,
            format!(
                "{} -> {} dumped={dumped}: {} ({})",
                r["dump_python"], r["load_python"], r["verdict"], r["message"]
            ),
        )?;
        let dump: Value = serde_json::json!(["shared==1.0", format!("tinypkg=={dumped}")]);
        check(
            r["dump_packages"] == dump
                && r["load_packages"] == serde_json::json!(["shared==1.0", "tinypkg==1.0"]),
            format!(
                "each side's packages: {} / {}",
                r["dump_packages"], r["load_packages"]
            ),
        )?;
        check(
            r.get("packages").is_none(),
            "a round trip says its sides' packages only",
        )?;
    }
    // Per interpreter: {shared, tinypkg 1.0} (the dump of dumped=1.0 and every load) and
    // {shared, tinypkg 2.0} (the dump of dumped=2.0).
    let made = envs(cache.path());
    check(made.len() == 4, format!("4 environments, got {made:?}"))?;
    let junit = std::fs::read_to_string(dir.path().join("junit.xml"))?;
    for want in [
        // An ok run's one line, and an xfail's details.
        "packages: dumped with shared==1.0, tinypkg==1.0; loaded with shared==1.0, tinypkg==1.0",
        "dumped with shared==1.0, tinypkg==2.0; loaded with shared==1.0, tinypkg==1.0",
    ] {
        check(
            junit.contains(want),
            format!("no {want:?} in the JUnit report"),
        )?;
    }
    // `merge` reads the JSON back and writes it again, the packages included.
    let merged = dir.path().join("merged.json");
    let out = Run::from(
        crosspickle(dir.path())
            .arg("merge")
            .arg(dir.path().join("results.json"))
            .arg("--json")
            .arg(&merged)
            .output()?,
    );
    out.expect_code(0)?;
    let again = runs(&json_at(&merged));
    check(
        again
            .iter()
            .map(|r| (&r["dump_packages"], &r["load_packages"]))
            .collect::<Vec<_>>()
            == all
                .iter()
                .map(|r| (&r["dump_packages"], &r["load_packages"]))
                .collect::<Vec<_>>(),
        "merge keeps each side's packages",
    )?;
    // A plain run names its own packages as `packages`.
    let plain = "title: t\nrequires: [\"tinypkg==2.0\"]\ncode: |\n  import tinypkg\n  assert tinypkg.__version__ == '2.0'\n";
    let dir = folder(&[("cases/plain.yaml", plain)]);
    let mut args = python_args(&["3.8"]);
    args.extend(offline(cache.path(), links.path()));
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let r = &runs(&json)[0];
    check(
        r["packages"] == serde_json::json!(["tinypkg==2.0"]) && r.get("dump_packages").is_none(),
        format!("a plain run's packages: {r}"),
    )
}

trial!(side_packages_are_refused_where_they_mean_nothing);
/// `dump_requires` and `load_requires` are refused at their line and column in a `code` case,
/// as are placeholders naming no param and empty requirements; version-1 keys still load.
fn side_packages_are_refused_where_they_mean_nothing() -> TestResult {
    let bad = [
        (
            "title: t\ncode: pass\ndump_requires: [tinypkg]\n",
            "x.yaml:3:16: `dump_requires` gives one side of a round trip its packages, but this case has `code`, not `dump` and `load`: use `requires`",
        ),
        (
            "title: t\ndump: 'data = b\"\"'\nload: pass\nload_requires:\n  - tinypkg\n  - 'other=={release}'\n",
            "x.yaml:6:5: requirement `other=={release}` uses `{release}` but the case has no param `release`",
        ),
        (
            "title: t\ndump: 'data = b\"\"'\nload: pass\ndump_requires: ['  ']\n",
            "x.yaml:4:17: empty requirement in `dump_requires`",
        ),
        (
            "title: t\ndump: 'data = b\"\"'\nload: pass\ndump_requires: tinypkg\n",
            "x.yaml:4:16: dump_requires: invalid type: string \"tinypkg\", expected a sequence",
        ),
    ];
    for (text, want) in bad {
        let dir = folder(&[("cases/x.yaml", text)]);
        let out = Run::from(crosspickle(dir.path()).args(["list", "cases"]).output()?);
        out.expect_code(2)?;
        check(
            out.stderr.contains(want),
            format!("wanted {want:?}, got {}", out.stderr),
        )?;
    }
    let fine = "title: t\nrequires: [six]\ndump: 'data = b\"\"'\nload: pass\n";
    let dir = folder(&[("cases/x.yaml", fine)]);
    let out = Run::from(crosspickle(dir.path()).args(["list", "cases"]).output()?);
    out.expect_code(0)
}

trial!(bisect_one_side_with_the_other_fixed, needs = &["3.8"]);
/// The consumer's releases fixed producer: 1.0 pickles its major version; releases 1.0 to 2.1
/// load it, and from 2.0 on the load fails. `--side load` finds 1.2 -> 2.0 with the producer's
/// environment made once; `--side dump`, with the consumer pinned to 1.0, finds the same
/// boundary among the producer's releases. A round trip without `--side`, and `--side` for a
/// `code` case, are refused.
fn bisect_one_side_with_the_other_fixed() -> TestResult {
    let py = python("3.8").expect("3.8");
    let releases = ["1.0", "1.1", "1.2", "2.0", "2.1"];
    let dists: Vec<(&str, &str)> = releases.iter().map(|v| ("tinypkg", *v)).collect();
    let links = wheels(&py, &dists)?;
    let case = r#"title: a pickle of tinypkg's major version loads where the major is the same
dump_requires: ["tinypkg==1.0"]
load_requires: ["tinypkg==1.0"]
dump: |
  import tinypkg
  data = tinypkg.__version__.split(".")[0].encode("ascii")
load: |
  import tinypkg
  assert data.decode("ascii") == tinypkg.__version__.split(".")[0], "another major"
"#;
    let dir = folder(&[
        ("cases/major.yaml", case),
        ("cases/code.yaml", "title: t\ncode: pass\n"),
    ]);
    let cache = cache();
    let env = [("PIP_NO_INDEX", "1"), ("PIP_CONFIG_FILE", "/dev/null")];
    let links_arg = path_str(links.path());
    let python_arg = path_str(&py);
    let bisect = |case: &str, side: Option<&str>| {
        let mut args = vec![
            "bisect",
            case,
            "--package",
            "tinypkg",
            "--find-links",
            &links_arg,
            "--python",
            &python_arg,
            "--versions",
            "1.0,1.1,1.2,2.0,2.1",
        ];
        if let Some(side) = side {
            args.extend(["--side", side]);
        }
        crate::bisect::bisect_json(dir.path(), cache.path(), &env, &args)
    };
    for side in ["load", "dump"] {
        let (run, report) = bisect("major", Some(side));
        run.expect_code(0)?;
        let b = crate::bisect::boundaries(&report);
        check(
            b.len() == 1
                && b[0]["last_old"]["label"] == "1.2"
                && b[0]["first_new"]["label"] == "2.0",
            format!(
                "--side {side}: one boundary 1.2 -> 2.0, got {b:?}\n{}",
                run.stdout
            ),
        )?;
        check(
            report["side"] == side && report["mode"] == "package",
            format!("the report says the side: {}", report["side"]),
        )?;
        let steps = crate::bisect::steps(&report);
        check(
            steps
                .iter()
                .all(|s| s["state"] == "old" || s["state"] == "new"),
            format!("every step tested: {steps:?}"),
        )?;
    }
    // The fixed side's environment (tinypkg 1.0) is the one every step shares, and each
    // release tested has one: at most the five releases, however many steps ran.
    let made = envs(cache.path());
    check(
        (2..=5).contains(&made.len()),
        format!("one environment per release tested, got {}", made.len()),
    )?;
    let (run, _) = bisect("major", None);
    run.expect_code(2)?;
    check(
        run.stderr
            .contains("is a round trip: say whose releases to bisect, --side load"),
        &run.stderr,
    )?;
    let (run, _) = bisect("code", Some("load"));
    run.expect_code(2)?;
    check(
        run.stderr.contains("--side load is for round trips"),
        &run.stderr,
    )?;
    let (run, _) = crate::bisect::bisect_json(
        dir.path(),
        cache.path(),
        &env,
        &["bisect", "major", "--python", &python_arg],
    );
    run.expect_code(2)?;
    check(
        run.stderr
            .contains("bisect runs `code` cases only, or one side's package releases"),
        &run.stderr,
    )
}

trial!(numpy_case_fails_when_a_rule_changes, needs = &["3.12"]);
/// The corpus's NumPy case (NumPy 2.0.2 pickles, NumPy 1.26.0 and 1.26.4 loads, from the index)
/// on 3.12: every verdict as its rules say; with one rule changed (its `where` moved from
/// protocol 5 to protocol 4), the run fails where that rule no longer tells the truth.
fn numpy_case_fails_when_a_rule_changes() -> TestResult {
    const CASE: &str =
        include_str!("../../cases/thirdparty/numpy-28340-numpy2-pickle-on-numpy1.yaml");
    let rule = r#"  - where: {numpy_release: "1.26.4", protocol: 5}"#;
    check(CASE.contains(rule), "the rule to change is in the case")?;
    let changed = CASE.replace(rule, r#"  - where: {numpy_release: "1.26.4", protocol: 4}"#);
    let args = python_args(&["3.12"]);
    let verdicts = |json: &Value| {
        let mut v: Vec<String> = runs(json)
            .iter()
            .map(|r| format!("{}={}", r["params"], r["verdict"].as_str().unwrap_or("?")))
            .collect();
        v.sort();
        v
    };
    let dir = folder(&[("cases/numpy.yaml", CASE)]);
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let want = [
        r#"{"protocol":4,"numpy_release":"1.26.0"}=xfail"#,
        r#"{"protocol":4,"numpy_release":"1.26.4"}=ok"#,
        r#"{"protocol":5,"numpy_release":"1.26.0"}=xfail"#,
        r#"{"protocol":5,"numpy_release":"1.26.4"}=xfail"#,
    ];
    check(verdicts(&json) == want, format!("{:?}", verdicts(&json)))?;
    let dir = folder(&[("cases/numpy.yaml", &changed)]);
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(1)?;
    let want = [
        r#"{"protocol":4,"numpy_release":"1.26.0"}=xfail"#,
        r#"{"protocol":4,"numpy_release":"1.26.4"}=fixed"#,
        r#"{"protocol":5,"numpy_release":"1.26.0"}=xfail"#,
        r#"{"protocol":5,"numpy_release":"1.26.4"}=regression"#,
    ];
    check(verdicts(&json) == want, format!("{:?}", verdicts(&json)))?;
    check(
        run.stdout.contains("No module named 'numpy._core.numeric'"),
        &run.stdout,
    )
}
