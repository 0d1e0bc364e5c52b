//! GitHub Actions annotations end to end: real runs with `GITHUB_ACTIONS=true` print
//! `::error` workflow commands that parse back (GitHub's escaping undone) to the case file
//! relative to `GITHUB_WORKSPACE`, the real line of the rule that expected otherwise (or of
//! `code:`, `dump:` or `load:`), the verdict, the interpreters and expected against observed;
//! past ten failing cases one `::notice` counts the rest; `merge` annotates the same lines
//! from the JSON; what a case prints cannot forge one.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::*;

/// One workflow command as GitHub reads it.
#[derive(Debug, Clone)]
pub struct Annotation {
    /// `error`, `notice`, ...
    pub kind: String,
    pub properties: BTreeMap<String, String>,
    pub message: String,
}

/// GitHub's escaping undone (`%25` last, so that `%253A` stays `%3A`).
fn unescape(s: &str) -> String {
    s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
}

/// The workflow commands of `stdout` that GitHub would act on: every `::kind props::message`
/// line outside a `::stop-commands::TOKEN` … `::TOKEN::` stretch.
pub fn annotations(stdout: &str) -> Vec<Annotation> {
    let mut out = Vec::new();
    let mut stopped: Option<String> = None;
    for line in stdout.lines() {
        if let Some(token) = &stopped {
            if line == format!("::{token}::") {
                stopped = None;
            }
            continue;
        }
        if let Some(token) = line.strip_prefix("::stop-commands::") {
            stopped = Some(token.to_string());
            continue;
        }
        let Some(rest) = line.strip_prefix("::") else {
            continue;
        };
        let Some((head, message)) = rest.split_once("::") else {
            continue;
        };
        let (kind, props) = head.split_once(' ').unwrap_or((head, ""));
        let properties = props
            .split(',')
            .filter(|p| !p.is_empty())
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_string(), unescape(v)))
            .collect();
        out.push(Annotation {
            kind: kind.to_string(),
            properties,
            message: unescape(message),
        });
    }
    out
}

/// The 1-based number of the line of `file` (in `dir`) that starts with `start` once indented.
pub fn line_of(dir: &Path, file: &str, start: &str) -> usize {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    1 + text
        .lines()
        .position(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("{file} has no line starting with {start:?}"))
}

const RULES: &str = r#"title: a rule that expects what does not happen
params:
  protocol: [2, 5]
code: |
  import pickle
  print("::error file=forged.py,line=1::forged by the case")
  pickle.dumps(1, protocol=protocol)
expect:
  - python: "<3"
    outcome: error
    reason: not on these interpreters
  - python: ">=3.8"
    where: {protocol: 5}
    outcome: error
    exception: ValueError
    reason: "made up: 100%, to be escaped"
"#;

const NO_RULE: &str = "title: no rule, and it raises\ncode: |\n  raise KeyError('k')\n";

const ROUND_TRIP: &str = r#"title: a load that fails
dump: |
  import pickle
  data = pickle.dumps(1, protocol=2)
load: |
  raise TypeError("boom, on: load")
"#;

const DUMP_FAILS: &str = r#"title: a dump that fails
dump: |
  raise RuntimeError("no pickle")
load: |
  pass
"#;

fn with_github(dir: &Path, workspace: &Path, args: &[&str]) -> Run {
    Run::from(
        crosspickle(dir)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", workspace)
            .args(args)
            .output()
            .expect("crosspickle runs"),
    )
}

trial!(
    annotations_on_the_lines_that_expected_otherwise,
    needs = &["3.8", "3.12"]
);
fn annotations_on_the_lines_that_expected_otherwise() -> TestResult {
    let dir = folder(&[
        ("cases/rules.yaml", RULES),
        ("cases/sub/no-rule.yaml", NO_RULE),
        ("cases/round-trip.yaml", ROUND_TRIP),
        ("cases/dump-fails.yaml", DUMP_FAILS),
    ]);
    // Run from a folder below the workspace, the cases named from there.
    let below = dir.path().join("cases");
    let mut args = vec!["run".to_string()];
    args.extend(python_args(&["3.8", "3.12"]));
    args.extend([".", "--json", "../results.json"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = with_github(&below, dir.path(), &args);
    run.expect_code(1)?;
    let found = annotations(&run.stdout);
    check(
        found.iter().all(|a| a.kind == "error") && found.len() == 4,
        format!("four errors, nothing forged: {found:#?}\n{}", run.stdout),
    )?;
    check(
        run.stdout.contains("forged by the case"),
        "the case's output is in the report, guarded",
    )?;
    let by_file = |file: &str| {
        found
            .iter()
            .find(|a| a.properties.get("file").map(String::as_str) == Some(file))
            .cloned()
            .ok_or_else(|| format!("no annotation on {file}: {found:#?}"))
    };
    let rule = by_file("cases/rules.yaml")?;
    let want = line_of(dir.path(), "cases/rules.yaml", "- python: \">=3.8\"");
    check(
        rule.properties["line"] == want.to_string()
            && rule.properties["title"] == "crosspickle: fixed in rules (2 runs)",
        format!("{rule:#?}, the rule at line {want}"),
    )?;
    check(
        rule.message.starts_with("fixed on cpython-3.8.")
            && rule.message.contains("[protocol=5], cpython-3.12.")
            && rule
                .message
                .contains(": expected error: ValueError, got pass")
            && rule
                .message
                .ends_with("the rule says: made up: 100%, to be escaped"),
        &rule.message,
    )?;
    let no_rule = by_file("cases/sub/no-rule.yaml")?;
    let want = line_of(dir.path(), "cases/sub/no-rule.yaml", "code:");
    check(
        no_rule.properties["line"] == want.to_string()
            && no_rule.properties["title"] == "crosspickle: regression in no-rule (2 runs)"
            && no_rule
                .message
                .contains(": expected pass, got error: KeyError: 'k'"),
        format!("{no_rule:#?}, code: at line {want}"),
    )?;
    let pair = by_file("cases/round-trip.yaml")?;
    let want = line_of(dir.path(), "cases/round-trip.yaml", "load:");
    check(
        pair.properties["line"] == want.to_string()
            && pair.properties["title"] == "crosspickle: regression in round-trip (4 runs)"
            && pair.message.contains("cpython-3.8.")
            && pair.message.contains(" -> cpython-3.12.")
            && pair
                .message
                .contains("expected pass, got error: TypeError: boom, on: load"),
        format!("{pair:#?}, load: at line {want}"),
    )?;
    let dump = by_file("cases/dump-fails.yaml")?;
    let want = line_of(dir.path(), "cases/dump-fails.yaml", "dump:");
    check(
        dump.properties["line"] == want.to_string()
            && dump.properties["title"] == "crosspickle: regression in dump-fails (4 runs)"
            && dump
                .message
                .contains("expected pass, got error: RuntimeError: no pickle"),
        format!("{dump:#?}, dump: at line {want}"),
    )?;

    // merge annotates the same lines from the JSON (run where the run ran: the JSON keeps
    // the paths as the run was given them); `never` and a run off GitHub do not.
    let merged = with_github(
        &below,
        dir.path(),
        &["merge", "../results.json", "--github-annotations", "always"],
    );
    merged.expect_code(1)?;
    let again = annotations(&merged.stdout);
    // (merge orders the cases by id, the run by file.)
    let places = |a: &[Annotation]| -> Vec<(String, String, String)> {
        let mut places: Vec<_> = a
            .iter()
            .map(|a| {
                let p = |k: &str| a.properties.get(k).cloned().unwrap_or_default();
                (p("file"), p("line"), p("title"))
            })
            .collect();
        places.sort();
        places
    };
    check(
        places(&again) == places(&found),
        format!("{again:#?} against {found:#?}"),
    )?;
    let mut never = args.clone();
    never.extend(["--github-annotations", "never"]);
    let quiet = with_github(&below, dir.path(), &never);
    let off = Run::from(crosspickle(&below).args(&args).output().unwrap());
    quiet.expect_code(1)?;
    // Under GitHub, annotations off: no annotation, and what the case printed still guarded.
    check(
        annotations(&quiet.stdout).is_empty() && quiet.stdout.contains("::stop-commands::"),
        &quiet.stdout,
    )?;
    off.expect_code(1)?;
    // Not under GitHub: only what the case printed, unguarded, as before annotations existed.
    let left = crate::guard::commands(&off.stdout);
    check(
        !off.stdout.contains("::stop-commands::")
            && !left.is_empty()
            && left.iter().all(|c| c.line.contains("file=forged.py")),
        &off.stdout,
    )?;
    Ok(())
}

trial!(past_ten_failing_cases_a_notice, needs = &["3.12"]);
fn past_ten_failing_cases_a_notice() -> TestResult {
    let files: Vec<(String, String)> = (0..12)
        .map(|i| {
            (
                format!("cases/c{i:02}.yaml"),
                format!("title: failing {i}\ncode: |\n  raise ValueError({i})\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let dir = folder(&files);
    let mut args = vec!["run".to_string()];
    args.extend(python_args(&["3.12"]));
    args.extend(["--html", "report.html"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = with_github(dir.path(), dir.path(), &args);
    run.expect_code(1)?;
    let found = annotations(&run.stdout);
    let kinds: Vec<&str> = found.iter().map(|a| a.kind.as_str()).collect();
    check(
        kinds[..10].iter().all(|k| *k == "error") && kinds[10..] == ["notice"],
        format!("{kinds:?}\n{}", run.stdout),
    )?;
    for (i, a) in found[..10].iter().enumerate() {
        check(
            a.properties["file"] == format!("cases/c{i:02}.yaml") && a.properties["line"] == "2",
            format!("{a:#?}"),
        )?;
    }
    let notice = &found[10].message;
    check(
        notice.starts_with("2 more failing cases (2 runs) not annotated")
            && notice.ends_with("in this step's log and in report.html"),
        notice,
    )
}
