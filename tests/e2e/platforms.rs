//! The platform an interpreter runs on, end to end: the probe records `sys.platform` and the
//! machine, `merge` keeps one label of three systems as three interpreters, and a rule selects
//! on `platform` (checked at load, shown by `list`).

use std::path::Path;

use crate::support::*;

const CASE: &str = "\
id: on-every-system
title: a case that raises everywhere, as its rule says
code: raise ValueError('x')
expect:
  - outcome: error
    exception: ValueError
";

/// The host as `platform.machine()` says it on Linux.
fn machine() -> &'static str {
    std::env::consts::ARCH
}

trial!(merge_keeps_three_systems_apart, needs = &["3.12", "2.7"]);
fn merge_keeps_three_systems_apart() -> TestResult {
    let dir = folder(&[("cases/c.yaml", CASE)]);
    let (out, json) = run_json(dir.path(), &args_on(&["3.12", "2.7"], &["cases"]));
    out.expect_code(0)?;
    let pythons = json["interpreters"].as_array().cloned().unwrap_or_default();
    check(pythons.len() == 2, format!("{pythons:?}"))?;
    for p in &pythons {
        // 2.7 says `linux2`: recorded as `linux`.
        check(
            p["platform"] == "linux" && p["machine"] == machine(),
            format!("the probe records the platform: {p}"),
        )?;
        check(
            !p["label"].as_str().unwrap_or("+").contains('+'),
            format!("no platform in a label of the host's: {p}"),
        )?;
    }
    let linux = dir.path().join("linux.json");
    std::fs::rename(dir.path().join("results.json"), &linux)?;
    // The same results as a macOS and a Windows job would write them: the same labels.
    let as_on = |name: &str, platform: Option<&str>, machine: Option<&str>| {
        let mut copy = json.clone();
        for p in copy["interpreters"].as_array_mut().unwrap() {
            let p = p.as_object_mut().unwrap();
            match (platform, machine) {
                (Some(s), Some(m)) => {
                    p.insert("platform".into(), s.into());
                    p.insert("machine".into(), m.into());
                }
                _ => {
                    p.remove("platform");
                    p.remove("machine");
                }
            }
        }
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(&copy).unwrap()).unwrap();
        path
    };
    let mac = as_on("mac.json", Some("darwin"), Some("arm64"));
    let win = as_on("win.json", Some("win32"), Some("AMD64"));
    let merged = dir.path().join("merged.json");
    let out = Run::from(
        crosspickle(dir.path())
            .arg("merge")
            .args([&linux, &mac, &win])
            .arg("--json")
            .arg(&merged)
            .output()?,
    );
    out.expect_code(0)?;
    let m = json_at(&merged);
    let mut labels: Vec<String> = m["interpreters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap_or_default().to_string())
        .collect();
    labels.sort();
    let mut want = Vec::new();
    for p in &pythons {
        let label = p["label"].as_str().unwrap();
        for tag in [
            format!("linux-{}", machine()),
            "darwin-arm64".into(),
            "win32-AMD64".into(),
        ] {
            want.push(format!("{label}+{tag}"));
        }
    }
    want.sort();
    check(labels == want, format!("{labels:?}, wanted {want:?}"))?;
    let runs = runs(&m);
    check(runs.len() == 6, format!("a run per system: {runs:?}"))?;
    for r in &runs {
        check(
            labels.iter().any(|l| r["python"] == l.as_str()),
            format!("every run names a merged interpreter: {r}"),
        )?;
    }
    check(
        out.stdout.contains("+win32-AMD64") && out.stdout.contains("+darwin-arm64"),
        format!("the matrix has a column per system:\n{}", out.stdout),
    )?;
    // Results of an older crosspickle, which recorded no platform, merge by label as before.
    let old = as_on("old.json", None, None);
    let out = Run::from(
        crosspickle(dir.path())
            .arg("merge")
            .args([&old, &linux])
            .arg("--json")
            .arg(&merged)
            .output()?,
    );
    out.expect_code(0)?;
    let m = json_at(&merged);
    check(
        m["interpreters"].as_array().map(Vec::len) == Some(2) && runs_len(&m) == 2,
        format!("old and new results of one machine are one column each: {m}"),
    )
}

fn runs_len(m: &serde_json::Value) -> usize {
    runs(m).len()
}

const RULES: &str = "\
id: by-platform
title: rules chosen by the operating system
code: raise ValueError('x')
expect:
  - platform: win32
    outcome: error
    exception: OSError
  - platform: [linux, darwin]
    outcome: error
    exception: ValueError
";

trial!(rules_select_on_platform, needs = &["3.12", "2.7"]);
fn rules_select_on_platform() -> TestResult {
    let dir = folder(&[("cases/c.yaml", RULES)]);
    let (out, json) = run_json(dir.path(), &args_on(&["3.12", "2.7"], &["cases"]));
    out.expect_code(0)?;
    let runs = runs(&json);
    check(
        runs.len() == 2 && runs.iter().all(|r| r["verdict"] == "xfail"),
        format!("the linux rule decides (the win32 one would fail them): {runs:?}"),
    )?;
    for r in &runs {
        check(
            r["expected"]["exception"] == "ValueError",
            format!("expected by the second rule: {r}"),
        )?;
    }
    let list = |extra: &[&str]| {
        let mut args = vec!["list".to_string()];
        args.extend(extra.iter().map(|a| a.to_string()));
        Run::from(crosspickle(dir.path()).args(&args).output().unwrap())
    };
    let out = list(&["cases"]);
    out.expect_code(0)?;
    check(
        out.stdout.contains("expect: on win32: error OSError")
            && out
                .stdout
                .contains("expect: on linux/darwin: error ValueError"),
        format!("list says each rule's platform:\n{}", out.stdout),
    )?;
    let mut args = vec!["cases".to_string()];
    args.extend(python_args(&["3.12", "2.7"]));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut expected = args.clone();
    expected.insert(0, "--expected");
    let out = list(&expected);
    out.expect_code(0)?;
    let (_, listed) = list_json(dir.path(), &args);
    let rules: Vec<Option<i64>> = listed["cases"][0]["runs"]
        .as_array()
        .map(|r| r.iter().map(|r| r["rule"].as_i64()).collect())
        .unwrap_or_default();
    check(
        rules == [Some(1), Some(1)],
        format!("list's matrix has rule 2 (index 1) for both: {rules:?}\n{listed}"),
    )?;
    check(
        out.stdout
            .contains("    2  on linux/darwin: error ValueError")
            && out.stdout.contains("    1  on win32: error OSError"),
        format!(
            "list -p numbers the rules with their platform:\n{}",
            out.stdout
        ),
    )
}

fn list_json(dir: &Path, args: &[&str]) -> (Run, serde_json::Value) {
    let out = Run::from(
        crosspickle(dir)
            .arg("list")
            .arg("--json")
            .args(args)
            .output()
            .unwrap(),
    );
    let v = serde_json::from_str(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, v)
}

trial!(unknown_platform_is_named_where_it_stands);
fn unknown_platform_is_named_where_it_stands() -> TestResult {
    let dir = folder(&[
        (
            "one.yaml",
            "title: t\ncode: pass\nexpect:\n  - platform: windows\n    outcome: fail\n",
        ),
        (
            "list.yaml",
            "title: t\ncode: pass\nexpect:\n  - platform: [linux, macos]\n    outcome: fail\n",
        ),
        (
            "empty.yaml",
            "title: t\ncode: pass\nexpect:\n  - platform: []\n    outcome: fail\n",
        ),
    ]);
    for (file, want) in [
        ("one.yaml", "one.yaml:4:15: expect[0].platform: unknown platform `windows`: crosspickle knows `linux`, `darwin` and `win32`"),
        ("list.yaml", "list.yaml:4:23: expect[0].platform[1]: unknown platform `macos`"),
        ("empty.yaml", "empty.yaml:4:15: expect[0].platform: an empty list of platforms"),
    ] {
        let out = Run::from(crosspickle(dir.path()).args(["list", file]).output()?);
        out.expect_code(2)?;
        check(
            out.stderr.contains(want),
            format!("wanted `{want}` in:\n{}", out.stderr),
        )?;
    }
    Ok(())
}
