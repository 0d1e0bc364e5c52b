//! Reports checked by their real consumers: every JUnit file against the Jenkins xunit schema
//! with `xmllint --schema` (also when the cases print NUL, ANSI escapes, invalid UTF-8,
//! U+FFFE, `]]>` and megabytes), `merge` on the JSON of separate real runs and of runs that
//! disagree, the HTML page in headless Chromium (a cell clicked through the page's
//! `#open=` fragment, a screenshot kept under target/), and the partial reports of a run
//! interrupted with Ctrl-C.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::Trial;

use crate::support::*;

/// A test that needs interpreters and programs: without a program it fails under CI (CI set:
/// `.ci/run` installs them) and is ignored elsewhere, saying what to install.
fn tool_trial(name: &str, pythons: &[&str], tools: &[&str], test: fn() -> TestResult) -> Trial {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| which::which(t).is_err())
        .collect();
    if missing.is_empty() {
        return trial(name, pythons, test);
    }
    let what = format!(
        "needs {} (apt-get install {})",
        missing.join(", "),
        missing
            .iter()
            .map(|t| if *t == "xmllint" { "libxml2-utils" } else { t })
            .collect::<Vec<_>>()
            .join(" ")
    );
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        return crate::support::timed(name, move || {
            Err(format!("CI is set and this test {what}").into())
        });
    }
    crate::support::timed(name, test)
        .with_kind(what)
        .with_ignored_flag(true)
}

fn py(v: &str) -> String {
    path_str(&python(v).expect("checked by trial()"))
}

/// The schema pytest's JUnit output targets, from the project's shared folder.
fn junit_schema() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        root.join("../shared/junit/junit-10.xsd"),
        PathBuf::from("/work/shared/junit/junit-10.xsd"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| "junit-10.xsd not found in ../shared/junit/".to_string())
}

/// `xmllint --noout --schema junit-10.xsd FILE` must succeed.
fn xmllint(file: &Path) -> TestResult {
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(junit_schema()?)
        .arg(file)
        .output()
        .map_err(|e| format!("xmllint: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    check(
        out.status.success() && stderr.contains("validates"),
        format!(
            "{} does not validate:\n{}",
            file.display(),
            stderr.chars().take(4000).collect::<String>()
        ),
    )
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    serde_json::from_str(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// crosspickle in `dir` with `args` and every report flag, as `<stem>.json|xml|md|html`.
fn run_reports(dir: &Path, stem: &str, args: &[&str]) -> Run {
    let out = crosspickle(dir)
        .args(["--pythons-toml", "/dev/null"])
        .args(args)
        .args(report_flags(stem))
        .output()
        .expect("crosspickle runs");
    Run::from(out)
}

fn report_flags(stem: &str) -> Vec<String> {
    ["json", "junit-xml", "markdown", "html"]
        .iter()
        .zip(["json", "xml", "md", "html"])
        .flat_map(|(flag, ext)| [format!("--{flag}"), format!("{stem}.{ext}")])
        .collect()
}

fn merge(dir: &Path, inputs: &[&str], stem: &str) -> Run {
    let out = crosspickle(dir)
        .arg("merge")
        .args(inputs)
        .args(report_flags(stem))
        .output()
        .expect("crosspickle runs");
    Run::from(out)
}

/// Every `<tag …>` opening tag in `xml`.
fn tags<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}");
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        if after.starts_with([' ', '>', '/']) {
            let end = after
                .find('>')
                .map(|e| i + open.len() + e + 1)
                .unwrap_or(rest.len());
            found.push(&rest[i..end]);
        }
        rest = &rest[i + open.len()..];
    }
    found
}

/// The value of attribute `name` in an opening tag, as written (escaped).
fn attr(tag: &str, name: &str) -> String {
    let key = format!(" {name}=\"");
    tag.find(&key)
        .map(|i| &tag[i + key.len()..])
        .and_then(|rest| rest.find('"').map(|e| rest[..e].to_string()))
        .unwrap_or_default()
}

/// The `<testcase>` element (with its body) whose name is `name`.
fn testcase<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let start = xml.find(&format!("<testcase name=\"{name}\""))?;
    let rest = &xml[start..];
    let first_line_end = rest.find('>')?;
    if rest[..first_line_end].ends_with('/') {
        return Some(&rest[..=first_line_end]);
    }
    let end = rest.find("</testcase>")?;
    Some(&rest[..end])
}

/// The Markdown without its fenced code blocks (where text is shown verbatim).
fn outside_fences(md: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in md.lines() {
        let ticks: String = line.chars().take_while(|c| *c == '`').collect();
        match &fence {
            Some(f) if line.trim_end() == f => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

const HOSTILE: &str = r#"title: Prints everything a report must survive
links: [https://example.org/issue/1, "https://example.org/a?b=1&c=<2>"]
tags: [hostile]
code: |
  import os, sys
  nasty = u"ansi \x1b[31mred\x1b[0m nul \x00 cdata-end ]]> <b>bold</b> nonchars \ufffe \uffff </script><script>alert(1)</script>\n"
  sys.stdout.write(nasty)
  sys.stdout.flush()
  os.write(1, b"invalid utf-8: \xff\xfe\xc3\x28 \xed\xa0\x80 done\n")
  sys.stdout.write("x" * (5 * 1024 * 1024) + "\n")
  sys.stdout.write(nasty)
  sys.stdout.flush()
  sys.stderr.write(nasty)
  sys.stderr.buffer.write(b"\xc0\xaf\x00 raw stderr bytes\n")
  sys.stderr.flush()
  raise ValueError(nasty + u"]]> tail of the message " + u"y" * 200000)
"#;

const KNOWN: &str = "title: A known failure\ntags: [gc]\ncode: |\n  assert False, 'still broken'\nexpect:\n  - outcome: fail\n    match: still broken\n    reason: bpo-0000, still open\n";

trial!(
    junit_markdown_html_survive_hostile_output,
    by = |name, test| tool_trial(name, &["3.12"], &["xmllint"], test)
);
fn junit_markdown_html_survive_hostile_output() -> TestResult {
    let dir = folder(&[
        ("cases/hostile.yaml", HOSTILE),
        ("cases/known.yaml", KNOWN),
        (
            "cases/old.yaml",
            "title: Only on Python 2\npython: \"<3\"\ncode: pass\n",
        ),
        (
            "cases/fine.yaml",
            "title: Fine\nparams:\n  p: [2, \"a|b<c>&]]>\"]\ncode: pass\n",
        ),
        ("broken-python", "#!/bin/sh\nexit 3\n"),
    ]);
    let broken = dir.path().join("broken-python");
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = run_reports(
        dir.path(),
        "r",
        &["--python", &py("3.12"), "--python", &path_str(&broken)],
    );
    run.expect_code(3)?;
    // Merged, the env-error is the same tooling failure (exit 3), with the same last line (its
    // first run may be another: merge orders runs by case, params and interpreter).
    let merged = merge(dir.path(), &["r.json"], "m");
    merged.expect_code(3)?;
    let line = |r: &Run| {
        let last = r.stderr.lines().last().unwrap_or("");
        last.split(" (the first").next().unwrap_or("").to_string()
    };
    check(
        line(&merged) == line(&run) && line(&run).contains("could not be set up"),
        format!(
            "merge ends with {:?}, run with {:?}",
            line(&merged),
            line(&run)
        ),
    )?;
    let xml_path = dir.path().join("r.xml");
    xmllint(&xml_path)?;
    let xml = read(&xml_path)?;
    check(
        xml.len() < 1024 * 1024,
        format!(
            "JUnit file of {} bytes for one case printing 5 MB",
            xml.len()
        ),
    )?;
    check(
        !xml.contains('\u{0}') && !xml.contains('\u{1b}') && !xml.contains('\u{fffe}'),
        "forbidden characters in the XML",
    )?;

    // One suite per interpreter, named by its label, with its facts.
    let suites = tags(&xml, "testsuite");
    check(suites.len() == 2, format!("two testsuites: {suites:?}"))?;
    check(suites[0].contains("name=\"cpython-3.12."), suites[0])?;
    check(
        xml.contains("<property name=\"python.version\" value=\"3.12."),
        "interpreter facts as properties",
    )?;
    check(
        xml.contains("<property name=\"python.unusable\""),
        "the broken interpreter's reason as a property",
    )?;

    // Failure: regression with expected vs observed, traceback and output tails in the body.
    let hostile = testcase(&xml, "hostile").ok_or("no testcase hostile")?;
    check(
        hostile.contains("classname=\"crosspickle.cpython-3.12."),
        hostile.lines().next().unwrap_or(""),
    )?;
    let failure = tags(hostile, "failure");
    check(
        failure.len() == 1 && failure[0].contains("type=\"regression\""),
        format!("{failure:?}"),
    )?;
    check(
        failure[0].contains("message=\"regression: expected pass, got error: ValueError:"),
        failure[0].chars().take(300).collect::<String>(),
    )?;
    check(
        hostile.contains("--- traceback") && hostile.contains("Traceback (most recent call last)"),
        "traceback head kept",
    )?;
    check(hostile.contains("tail of the message"), "exception kept")?;
    check(
        hostile.contains("--- stdout") && hostile.contains("--- stderr"),
        "output tails",
    )?;
    check(
        hostile.contains("]]&gt;") && hostile.contains("&lt;/script&gt;"),
        "escaped markup",
    )?;

    // xfail passes and says what it reproduced; skipped says why; env-error is an error.
    let known = testcase(&xml, "known").ok_or("no testcase known")?;
    check(
        !known.contains("<failure")
            && known.contains("<system-out>xfail")
            && known.contains("bpo-0000, still open"),
        known,
    )?;
    let old = testcase(&xml, "old").ok_or("no testcase old")?;
    check(
        old.contains("<skipped message=\"case applies to python"),
        old,
    )?;
    check(
        xml.contains("<error message=\"env-error: ") && xml.contains("type=\"env-error\""),
        "env-error as <error>",
    )?;
    // Names are unique per classname even with hostile params.
    let names: Vec<(String, String)> = tags(&xml, "testcase")
        .into_iter()
        .map(|t| (attr(t, "classname"), attr(t, "name")))
        .collect();
    let unique: std::collections::HashSet<&(String, String)> = names.iter().collect();
    check(
        names.len() == 10 && unique.len() == 10,
        format!("{names:#?}"),
    )?;
    check(
        xml.contains("name=\"fine[p=&apos;a|b&lt;c&gt;&amp;]]&gt;&apos;]\""),
        "param values escaped in names",
    )?;

    // Markdown: the matrix, then the failing runs folded, nothing raw.
    let md = read(&dir.path().join("r.md"))?;
    check(md.len() < 1024 * 1024, "markdown under GitHub's 1 MiB")?;
    check(
        !md.contains('\u{0}') && !md.contains('\u{1b}'),
        "control characters in the markdown",
    )?;
    check(
        md.contains("| case | 3.12.")
            && md.contains("| [hostile](https://example.org/issue/1) | ❌ | 💥 |"),
        &md,
    )?;
    check(
        md.contains("| fine\\[p=\\'a\\|b\\<c\\>\\&\\]\\]\\>\\'\\] | ✅ | 💥 |"),
        "table cells escaped",
    )?;
    check(
        md.contains("<details><summary>❌ <b>regression</b> <code>hostile</code>"),
        "failing run folded",
    )?;
    let outside_fences = outside_fences(&md);
    check(
        !outside_fences.contains("<script") && !outside_fences.contains("<b>bold"),
        format!("raw markup outside code blocks:\n{outside_fences}"),
    )?;
    check(
        md.contains("<script>alert(1)</script>"),
        "output kept verbatim in a code block",
    )?;

    // HTML: escaped everywhere, bounded.
    let html = read(&dir.path().join("r.html"))?;
    check(
        html.len() < 8 * 1024 * 1024,
        format!("HTML of {} bytes", html.len()),
    )?;
    check(
        !html.contains("<script>alert") && !html.contains("<b>bold"),
        "unescaped case output in the HTML",
    )?;
    check(
        html.contains("&lt;/script&gt;&lt;script&gt;alert(1)"),
        "escaped output in the HTML",
    )?;
    check(
        html.contains("href=\"https://example.org/a?b=1&amp;c=&lt;2&gt;\""),
        "escaped link",
    )?;
    check(
        html.matches("<script>").count() == 1,
        "one script: the page's own",
    )?;
    let json = read_json(&dir.path().join("r.json"))?;
    check(
        json["partial"] == false && runs(&json).len() == 10,
        "the JSON report",
    )
}

trial!(
    merge_jobs_into_one_matrix,
    by = |name, test| tool_trial(name, &["3.8", "3.12"], &["xmllint"], test)
);
fn merge_jobs_into_one_matrix() -> TestResult {
    let dir = folder(&[
        (
            "cases/version.yaml",
            "title: Version-dependent\nlinks: [https://example.org/v]\ncode: |\n  import sys\n  assert sys.version_info >= (3, 9), 'too old'\nexpect:\n  - python: '<3.9'\n    outcome: fail\n    match: too old\n    reason: arrived in 3.9\n",
        ),
        ("cases/plain.yaml", "title: Plain\nparams:\n  protocol: [2, 4]\ncode: |\n  import pickle\n  assert pickle.loads(pickle.dumps(1, protocol)) == 1\n"),
    ]);
    // One job per interpreter, as CI runs them.
    let a = run_reports(dir.path(), "job-3.8", &["--python", &py("3.8")]);
    a.expect_code(0)?;
    let b = run_reports(dir.path(), "job-3.12", &["--python", &py("3.12")]);
    b.expect_code(0)?;
    xmllint(&dir.path().join("job-3.8.xml"))?;
    xmllint(&dir.path().join("job-3.12.xml"))?;

    let m = merge(dir.path(), &["job-3.8.json", "job-3.12.json"], "merged");
    m.expect_code(0)?;
    let json = read_json(&dir.path().join("merged.json"))?;
    let labels: Vec<&str> = json["interpreters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    check(
        labels.len() == 2
            && labels[0].starts_with("cpython-3.8.")
            && labels[1].starts_with("cpython-3.12."),
        format!("{labels:?}"),
    )?;
    check(
        runs(&json).len() == 6,
        format!("six runs: {}", runs(&json).len()),
    )?;
    check(json.get("conflicts").is_none(), "no conflicts")?;
    let v38 = find_run(&json, "version", "cpython-3.8.").ok_or("version on 3.8")?;
    let v312 = find_run(&json, "version", "cpython-3.12.").ok_or("version on 3.12")?;
    check(
        v38["verdict"] == "xfail" && v312["verdict"] == "ok",
        format!("{v38} {v312}"),
    )?;
    check(
        json["cases"]["version"]["links"][0] == "https://example.org/v",
        "case info kept",
    )?;

    xmllint(&dir.path().join("merged.xml"))?;
    let xml = read(&dir.path().join("merged.xml"))?;
    check(
        tags(&xml, "testsuite").len() == 2 && tags(&xml, "testcase").len() == 6,
        &xml,
    )?;

    // One matrix: both interpreters as columns of one table, every row filled.
    let md = read(&dir.path().join("merged.md"))?;
    check(md.matches("| :--- |").count() == 1, &md)?;
    let header = md.lines().find(|l| l.starts_with("| case |")).unwrap_or("");
    check(header.contains("3.8.") && header.contains("3.12."), header)?;
    let row = md.lines().find(|l| l.contains("[version]")).unwrap_or("");
    check(row.ends_with("| ☑️ | ✅ |"), row)?;
    check(
        m.stdout.contains("4 ok, 2 xfail") || m.stdout.contains("5 ok, 1 xfail"),
        &m.stdout,
    )?;
    let html = read(&dir.path().join("merged.html"))?;
    check(
        html.contains("id=\"cell-version--cpython-3.8.")
            && html.contains("id=\"cell-version--cpython-3.12."),
        "both cells in the page",
    )?;

    // The same job twice is the same run, not a conflict; a merge of merges stays one matrix.
    let again = merge(
        dir.path(),
        &["job-3.8.json", "merged.json", "job-3.8.json"],
        "again",
    );
    again.expect_code(0)?;
    let json = read_json(&dir.path().join("again.json"))?;
    check(
        runs(&json).len() == 6 && json.get("conflicts").is_none(),
        format!("{json}"),
    )?;

    // A failing verdict in one job fails the merge.
    std::fs::write(
        dir.path().join("cases/new.yaml"),
        "title: Fails on new Pythons\ncode: |\n  import sys\n  assert sys.version_info < (3, 10), 'newer'\n",
    )
    .unwrap();
    run_reports(dir.path(), "job-3.12b", &["--python", &py("3.12")]).expect_code(1)?;
    let failing = merge(dir.path(), &["job-3.8.json", "job-3.12b.json"], "failing");
    failing.expect_code(1)?;
    check(!failing.stdout.contains("CONFLICT"), &failing.stdout)?;
    xmllint(&dir.path().join("failing.xml"))
}

trial!(
    merge_reports_conflicts,
    by = |name, test| tool_trial(name, &["3.12"], &["xmllint"], test)
);
fn merge_reports_conflicts() -> TestResult {
    let dir = folder(&[(
        "cases/flaky.yaml",
        "title: Passes on one machine\ncode: pass\n",
    )]);
    run_reports(dir.path(), "machine-a", &["--python", &py("3.12")]).expect_code(0)?;
    // The same case on the same interpreter label, now failing: as another machine would see it.
    std::fs::write(
        dir.path().join("cases/flaky.yaml"),
        "title: Passes on one machine\ncode: |\n  raise ValueError('broken on machine b')\n",
    )
    .unwrap();
    run_reports(dir.path(), "machine-b", &["--python", &py("3.12")]).expect_code(1)?;

    let m = merge(dir.path(), &["machine-a.json", "machine-b.json"], "merged");
    m.expect_code(1)?;
    check(
        m.stdout.contains("1 conflict between the inputs"),
        &m.stdout,
    )?;
    check(
        m.stdout.contains("CONFLICT flaky on cpython-3.12.")
            && m.stdout.contains("ok in machine-a.json")
            && m.stdout.contains("regression in machine-b.json"),
        &m.stdout,
    )?;
    let json = read_json(&dir.path().join("merged.json"))?;
    check(
        runs(&json).len() == 1 && runs(&json)[0]["verdict"] == "regression",
        format!("{json}"),
    )?;
    let conflicts = json["conflicts"].as_array().ok_or("a conflicts field")?;
    check(conflicts.len() == 1, format!("{conflicts:?}"))?;
    let seen = conflicts[0]["seen"].as_array().unwrap();
    check(
        seen.len() == 2
            && seen[0]["source"] == "machine-a.json"
            && seen[0]["verdict"] == "ok"
            && seen[1]["source"] == "machine-b.json"
            && seen[1]["verdict"] == "regression"
            && seen[1]["summary"]
                .as_str()
                .unwrap()
                .contains("broken on machine b"),
        format!("{seen:?}"),
    )?;

    xmllint(&dir.path().join("merged.xml"))?;
    let xml = read(&dir.path().join("merged.xml"))?;
    let case = testcase(&xml, "flaky").ok_or("no testcase flaky")?;
    check(
        case.contains("type=\"conflict\"") && case.contains("ok in machine-a.json"),
        case,
    )?;
    let md = read(&dir.path().join("merged.md"))?;
    check(
        md.contains("### ❗ Conflicts (1)") && md.contains("| ❌❗ |"),
        &md,
    )?;
    let html = read(&dir.path().join("merged.html"))?;
    check(
        html.contains("id=\"conflicts\"") && html.contains("class=\"cell v-regression conflict\""),
        "conflict in the page",
    )?;

    // The conflict survives a merge of the merge, and passing-only disagreements count too.
    let again = merge(dir.path(), &["merged.json"], "again");
    again.expect_code(1)?;
    check(
        read_json(&dir.path().join("again.json"))?["conflicts"]
            .as_array()
            .map(Vec::len)
            == Some(1),
        "kept",
    )
}

trial!(merge_unreadable_input_is_exit_2);
fn merge_unreadable_input_is_exit_2() -> TestResult {
    let dir = folder(&[
        ("garbage.json", "this is not json"),
        ("other.json", "{\"hello\": 1}"),
        (
            "future.json",
            "{\"format_version\": 99, \"crosspickle_version\": \"9.0.0\", \"partial\": false, \"duration_s\": 0, \"interpreters\": [], \"runs\": []}",
        ),
    ]);
    let m = merge(dir.path(), &["missing.json"], "out");
    m.expect_code(2)?;
    check(m.stderr.contains("missing.json"), &m.stderr)?;
    for (file, says) in [
        ("garbage.json", "not a crosspickle JSON report"),
        ("other.json", "not a crosspickle JSON report"),
        ("future.json", "upgrade"),
    ] {
        let m = merge(dir.path(), &[file], "out");
        m.expect_code(2)?;
        check(
            m.stderr.contains(file) && m.stderr.contains(says),
            &m.stderr,
        )?;
    }
    check(
        !dir.path().join("out.json").exists(),
        "no report from unreadable input",
    )?;
    let out = crosspickle(dir.path()).arg("merge").output().unwrap();
    Run::from(out).expect_code(2)
}

trial!(snapshots_of_a_fixed_results_file);
/// The terminal matrix, the Markdown and the JUnit XML of a fixed results file (the 0.1.0
/// fixture, merged from a folder of its own: nothing in them depends on this machine or this
/// run), compared whole with the snapshots in `tests/e2e/snapshots/` (insta): a change to a
/// report shows as a diff to review, and `cargo insta review` (or `INSTA_UPDATE=always`)
/// accepts it.
fn snapshots_of_a_fixed_results_file() -> TestResult {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-v1/fixture.json");
    let dir = folder(&[]);
    std::fs::copy(&fixture, dir.path().join("fixture.json")).map_err(|e| e.to_string())?;
    let m = crosspickle(dir.path())
        .args(["merge", "fixture.json", "--color", "never"])
        .args(["--markdown", "m.md", "--junit-xml", "m.xml"])
        .output()
        .expect("crosspickle runs");
    let m = Run::from(m);
    // The fixture holds env-error runs: a tooling failure of the job that ran them (exit 3).
    m.expect_code(3)?;
    let snapshot = |name: &str, text: &str| {
        std::panic::catch_unwind(|| {
            insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
                insta::assert_snapshot!(name, text);
            })
        })
        .map_err(|_| format!("the {name} report differs from its snapshot (diff above)"))
    };
    snapshot("merge_terminal", &m.stdout)?;
    snapshot("merge_markdown", &read(&dir.path().join("m.md"))?)?;
    snapshot("merge_junit", &read(&dir.path().join("m.xml"))?)?;
    Ok(())
}

trial!(
    merge_reads_a_0_1_0_report_and_every_format_shows_one_view,
    by = |name, test| tool_trial(name, &[], &["xmllint"], test)
);
/// The JSON report crosspickle 0.1.0 wrote (tests/fixtures/results-v1/README.md): `merge` reads
/// it into the same records, and every report shows the same facts of a run, in one order.
fn merge_reads_a_0_1_0_report_and_every_format_shows_one_view() -> TestResult {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-v1/fixture.json");
    let dir = folder(&[]);
    let m = merge(dir.path(), &[&path_str(&fixture)], "m");
    // Its env-error runs make it a tooling failure (exit 3), as they made its run.
    m.expect_code(3)?;
    let old = read_json(&fixture)?;
    let new = read_json(&dir.path().join("m.json"))?;
    let sorted = |v: &serde_json::Value| {
        let mut runs: Vec<String> = runs(v).iter().map(|r| r.to_string()).collect();
        runs.sort();
        runs
    };
    check(sorted(&old) == sorted(&new), "merge kept the records")?;
    check(
        sorted(&old).len() == 25
            && old["interpreters"] == new["interpreters"]
            && old["cases"] == new["cases"],
        "interpreters and cases kept",
    )?;
    check(new["partial"] == true, "partial kept")?;
    xmllint(&dir.path().join("m.xml"))?;

    // A failing round trip: every report names its pair.
    let pair = "pair:      dumped by cpython-2.7.18, loaded by /tmp/sr/fixture/broken-python";
    let xml = read(&dir.path().join("m.xml"))?;
    let md = read(&dir.path().join("m.md"))?;
    let html = read(&dir.path().join("m.html"))?;
    for (what, text) in [("JUnit", &xml), ("Markdown", &md)] {
        check(text.contains(pair), format!("{what} lacks `{pair}`"))?;
    }
    // The terminal groups the failures of one case and rule, naming each pair in the heading.
    let heading = "ENV-ERROR default-protocol-py3-to-py2 on 5 runs: cpython-2.7.18 -> /tmp/sr/fixture/broken-python, ";
    check(
        m.stdout.contains(heading),
        format!("terminal lacks `{heading}`"),
    )?;
    check(
        html.contains("<dt>pair</dt><dd class=\"pair\">dumped by cpython-2.7.18, loaded by /tmp/sr/fixture/broken-python</dd>"),
        "HTML lacks the pair",
    )?;
    // The failing run's output: traceback, stderr, stdout, in that order everywhere.
    let order = |what: &str, text: &str, marks: [&str; 3]| -> TestResult {
        let at: Vec<Option<usize>> = marks.iter().map(|m| text.find(m)).collect();
        check(
            at.iter().all(Option::is_some) && at[0] < at[1] && at[1] < at[2],
            format!("{what}: {marks:?} at {at:?}"),
        )
    };
    let tail = |text: &str, from: &str| text[text.find(from).unwrap_or(0)..].to_string();
    order(
        "terminal",
        &tail(
            &m.stdout,
            "REGRESSION prints-then-fails on 2 interpreters: cpython-2.7.18",
        ),
        ["  traceback:", "  stderr (tail):", "  stdout (tail):"],
    )?;
    for (what, text) in [("JUnit", &xml), ("Markdown", &md)] {
        order(
            what,
            &tail(text, "observed:  error: ValueError: boom"),
            ["--- traceback", "--- stderr", "--- stdout"],
        )?;
    }
    order(
        "HTML",
        &tail(
            &html,
            "id=\"details-cell-prints-then-fails--cpython-2.7.18\"",
        ),
        ["<h3>traceback</h3>", "<h3>stderr</h3>", "<h3>stdout</h3>"],
    )
}

/// Run chromium headless on `url` with `extra` arguments; its stdout.
fn chromium(profile: &Path, url: &str, extra: &[&str]) -> Result<String, String> {
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
            "--window-size=1400,900",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("chromium: {e}"))?;
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let stderr = child.stderr.take().unwrap();
    let err_reader =
        std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("chromium did not finish in 120s on {url}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("chromium failed ({status}) on {url}:\n{err}"));
    }
    Ok(out)
}

/// The opening tag of the element whose id is `id`.
fn tag_with_id<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let start = dom[..at].rfind('<')?;
    let end = at + dom[at..].find('>')?;
    Some(&dom[start..=end])
}

trial!(
    html_page_in_headless_chromium,
    by = |name, test| tool_trial(name, &["3.12"], &["chromium"], test)
);
fn html_page_in_headless_chromium() -> TestResult {
    let dir = folder(&[
        ("cases/hostile.yaml", HOSTILE),
        ("cases/known.yaml", KNOWN),
        (
            "cases/fine.yaml",
            "title: Fine\nlinks: [https://example.org/fine]\ncode: pass\n",
        ),
    ]);
    let run = run_reports(dir.path(), "r", &["--python", &py("3.12")]);
    run.expect_code(1)?;
    let page = dir.path().join("r.html");
    let json = read_json(&dir.path().join("r.json"))?;
    let label = find_run(&json, "hostile", "cpython-3.12.").ok_or("hostile run")?["python"]
        .as_str()
        .unwrap()
        .to_string();
    let cell = format!("cell-hostile--{label}");
    let url = format!("file://{}", page.display());
    let profile = tempfile::tempdir().unwrap();

    // Before any click: the panel is hidden, every section too.
    let dom = chromium(profile.path(), &url, &["--dump-dom"])?;
    let panel = tag_with_id(&dom, "details-panel").ok_or("no details panel")?;
    check(panel.contains("hidden"), panel)?;

    // Click the hostile cell (the page clicks the cell named by #open= on load).
    let dom = chromium(
        profile.path(),
        &format!("{url}#open={cell}"),
        &["--dump-dom"],
    )?;
    let panel = tag_with_id(&dom, "details-panel").ok_or("no details panel")?;
    check(
        !panel.contains("hidden") && panel.contains(&format!("data-open=\"{cell}\"")),
        panel,
    )?;
    let button = tag_with_id(&dom, &cell).ok_or("no cell")?;
    check(
        button.contains("selected") && button.contains("aria-expanded=\"true\""),
        button,
    )?;
    let section_id = format!("details-{cell}");
    let section = tag_with_id(&dom, &section_id).ok_or("no details section")?;
    check(!section.contains("hidden"), section)?;
    let others = dom.matches("class=\"details\" hidden").count();
    check(
        others == 2,
        format!("the two other sections stay hidden ({others})"),
    )?;
    let start = dom.find(&format!("id=\"{section_id}\"")).unwrap();
    let body = &dom[start..start + dom[start..].find("</section>").unwrap()];
    for shown in [
        "regression",
        "<dt>expected</dt><dd class=\"expected\">pass</dd>",
        "error: ValueError",
        "Traceback (most recent call last)",
        "&lt;/script&gt;",
        "stdout",
    ] {
        check(body.contains(shown), format!("details lack `{shown}`"))?;
    }
    check(!dom.contains("<b>bold</b>"), "case output became markup")?;
    check(
        dom.contains("<a class=\"case-link\" href=\"https://example.org/issue/1\">hostile</a>"),
        "case title links upstream",
    )?;

    // Filters: by verdict, then by tag.
    let dom = chromium(
        profile.path(),
        &format!("{url}#verdict=regression"),
        &["--dump-dom"],
    )?;
    let rows: Vec<&str> = tags(&dom, "tr")
        .into_iter()
        .filter(|t| t.contains("data-tags"))
        .collect();
    check(rows.len() == 3, format!("{rows:?}"))?;
    // The failing rows come first.
    check(
        rows.iter().filter(|r| r.contains("hidden")).count() == 2
            && rows[0].contains("hostile")
            && rows[0].contains("class=\"failing\"")
            && !rows[0].contains("hidden"),
        format!("{rows:?}"),
    )?;
    let dom = chromium(profile.path(), &format!("{url}#tag=gc"), &["--dump-dom"])?;
    let rows: Vec<&str> = tags(&dom, "tr")
        .into_iter()
        .filter(|t| t.contains("data-tags"))
        .collect();
    check(
        rows.iter().filter(|r| !r.contains("hidden")).count() == 1
            && rows
                .iter()
                .any(|r| r.contains("gc") && !r.contains("hidden")),
        format!("{rows:?}"),
    )?;

    // A screenshot of the opened cell, kept as an artefact.
    let artefacts = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("artefacts");
    std::fs::create_dir_all(&artefacts).unwrap();
    let shot = artefacts.join("report-html-chromium.png");
    let _ = std::fs::remove_file(&shot);
    chromium(
        profile.path(),
        &format!("{url}#open={cell}"),
        &[&format!("--screenshot={}", shot.display())],
    )?;
    let png =
        std::fs::read(&shot).map_err(|e| format!("no screenshot at {}: {e}", shot.display()))?;
    check(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        format!("screenshot of {} bytes", png.len()),
    )?;
    eprintln!("screenshot: {}", shot.display());
    Ok(())
}

trial!(
    interrupted_run_reports_say_partial,
    by = |name, test| tool_trial(name, &["3.12"], &["xmllint"], test)
);
fn interrupted_run_reports_say_partial() -> TestResult {
    let dir = folder(&[
        ("cases/fast.yaml", "title: fast\ncode: pass\n"),
        (
            "cases/slow.yaml",
            "title: slow\ncode: |\n  import time\n  time.sleep(60)\n",
        ),
    ]);
    let mut child = crosspickle(dir.path())
        .args([
            "--pythons-toml",
            "/dev/null",
            "--python",
            &py("3.12"),
            "-j",
            "2",
            "-v",
        ])
        .args(report_flags("r"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the fast run has finished (-v prints each run as it finishes).
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains("fast on") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let started = rx.recv_timeout(Duration::from_secs(60));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let stdout = reader.join().unwrap();
    check(
        started.is_ok(),
        format!("the fast run never finished:\n{stdout}"),
    )?;
    check(
        status.code() == Some(130),
        format!("exit {status}:\n{stdout}"),
    )?;

    let json = read_json(&dir.path().join("r.json"))?;
    check(
        json["partial"] == true && runs(&json).len() == 1,
        format!("{json}"),
    )?;
    let xml_path = dir.path().join("r.xml");
    xmllint(&xml_path)?;
    let xml = read(&xml_path)?;
    check(
        xml.contains("<property name=\"crosspickle.partial\" value=\"true\"/>")
            && xml.contains("<property name=\"crosspickle.partial_reason\" value=\"interrupted")
            && xml.contains("<testsuites name=\"crosspickle (partial: interrupted"),
        &xml,
    )?;
    let md = read(&dir.path().join("r.md"))?;
    check(md.contains("**Partial results**: interrupted"), &md)?;
    let html = read(&dir.path().join("r.html"))?;
    check(
        html.contains("<title>crosspickle results (partial)</title>")
            && html.contains("id=\"partial\""),
        "partial page",
    )?;
    // Written atomically: no temporary file left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    check(leftovers.is_empty(), format!("{leftovers:?}"))
}
