//! Named checks in the matrices and the reports: `list --expected` gives each name a rule's
//! `check` names a row under its run's (the rule that decides it there), the terminal, Markdown
//! and HTML matrices give each check a row under its run's (its verdict in each run), and the
//! HTML report and GitHub's annotations show failing and skipped checks whose names and
//! messages try to be workflow commands or markup, escaped; a rule's `check` that is no name
//! is refused where it stands.

use crate::github::annotations;
use crate::support::*;

/// Three checks: one passes, one raises what its rule expects, one fails on 2.7 only, as the
/// rule of its glob says there.
const MATRIX: &str = r#"title: checks in the matrices
code: |
  import pickle, sys
  with check("ints"):
      assert pickle.loads(pickle.dumps(7)) == 7
  with check("lambda"):
      pickle.dumps(lambda: 0, 2)
  with check("py3 only"):
      assert sys.version_info[0] > 2, "this is Python 2"
expect:
  - check: lambda
    outcome: error
    exception: PicklingError
  - check: "py3*"
    python: "2.7"
    outcome: fail
"#;

/// The cells of the line of `text` that starts with `start` (its words after it).
fn cells_of(text: &str, start: &str) -> Vec<String> {
    text.lines()
        .find(|l| l.starts_with(start))
        .map(|l| {
            l[start.len()..]
                .split(['|', ' '])
                .filter(|w| !w.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

trial!(
    each_check_has_a_row_in_the_matrices,
    needs = &["2.7", "3.12"]
);
/// On 2.7 and 3.12: `list --expected` gives `lambda` rule 1 on both and the glob `py3*` rule 2
/// on 2.7, the implicit pass on 3.12, in rows under each interpreter's; the run's terminal and
/// Markdown matrices give each check a row under the case's with its verdict on each, and the
/// HTML matrix a row per check whose cells are those verdicts.
fn each_check_has_a_row_in_the_matrices() -> TestResult {
    let dir = folder(&[("cases/matrix.yaml", MATRIX)]);
    let d = dir.path();
    let list = Run::from(
        crosspickle(d)
            .args(["list", "--expected"])
            .args(python_args(&["2.7", "3.12"]))
            .output()?,
    );
    list.expect_code(0)?;
    let rows: Vec<Vec<String>> = list
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("matrix "))
        .skip(3)
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    let want: Vec<Vec<String>> = [
        "cpython-2.7.18 .",
        ":: lambda 1",
        ":: py3* 2",
        "cpython-3.12.1 .",
        ":: lambda 1",
        ":: py3* .",
    ]
    .iter()
    .map(|l| l.split(' ').map(String::from).collect())
    .collect();
    check(
        rows == want,
        format!(
            "list --expected: a row per rule's check under each run's:\n{}",
            list.stdout
        ),
    )?;
    let mut args = args_on(&["2.7", "3.12"], &["-j", "2", "--markdown", "m.md"]);
    args.extend(["--html", "r.html"].map(String::from));
    let (run, _) = run_json(d, &args);
    run.expect_code(0)?;
    let out = &run.stdout;
    let terminal = [
        ("matrix ", [".", "."]),
        ("  :: ints ", [".", "."]),
        ("  :: lambda ", ["x", "x"]),
        ("  :: py3 only ", ["x", "."]),
    ];
    for (start, want) in terminal {
        check(
            cells_of(out, start) == want,
            format!("the terminal's row {start:?} shows {want:?}:\n{out}"),
        )?;
    }
    let markdown = std::fs::read_to_string(d.join("m.md"))?;
    let md = [
        ("|   :: ints ", ["✅", "✅"]),
        ("|   :: lambda ", ["☑️", "☑️"]),
        ("|   :: py3 only ", ["☑️", "✅"]),
    ];
    for (start, want) in md {
        check(
            cells_of(&markdown, start) == want,
            format!("the Markdown's row {start:?} shows {want:?}:\n{markdown}"),
        )?;
    }
    let html = std::fs::read_to_string(d.join("r.html"))?;
    let row = |name: &str| -> Vec<String> {
        let at = format!("<span class=\"check-name\">  :: {name}</span>");
        let Some(start) = html.find(&at) else {
            return Vec::new();
        };
        let rest = &html[start..];
        let rest = &rest[..rest.find("</tr>").unwrap_or(rest.len())];
        rest.match_indices("class=\"cell check v-")
            .map(|(i, m)| {
                let v = &rest[i + m.len()..];
                v[..v.find('"').unwrap_or(0)].to_string()
            })
            .collect()
    };
    check(
        row("ints") == ["ok", "ok"]
            && row("lambda") == ["xfail", "xfail"]
            && row("py3 only") == ["xfail", "ok"],
        format!(
            "the HTML matrix's check rows: {:?} {:?} {:?}",
            row("ints"),
            row("lambda"),
            row("py3 only")
        ),
    )
}

/// A check whose name and message try to be workflow commands (and markup), failing; one
/// skipped from inside with such a reason; one that passes.
const HOSTILE: &str = r#"title: checks that try to be workflow commands
code: |
  with check("::error::forged%0Aname <i>"):
      raise AssertionError("::error file=x,line=1::forged\n::warning::too <b>")
  with check("skipped one"):
      check.skip("::notice::skipped%0A <u>reason</u>")
  with check("fine"):
      pass
"#;

trial!(
    failing_and_skipped_checks_escaped_in_html_and_annotations,
    needs = &["2.7", "3.12"]
);
/// With `GITHUB_ACTIONS=true`, on 2.7 and 3.12: the failing check is one `::error` annotation
/// whose message, unescaped as GitHub does, names the check whole and its message's first
/// line; nothing
/// the check's name, message or skip reason holds is read as a command of its own; the skipped
/// check is no annotation. The HTML report shows the failing check (its verdict, its message)
/// and the skipped one with its reason, HTML-escaped, and no markup of theirs.
fn failing_and_skipped_checks_escaped_in_html_and_annotations() -> TestResult {
    let dir = folder(&[("cases/hostile.yaml", HOSTILE)]);
    let d = dir.path();
    let run = Run::from(
        crosspickle(d)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", d)
            .args(args_on(&["2.7", "3.12"], &["-j", "2", "--html", "r.html"]))
            .output()?,
    );
    run.expect_code(1)?;
    let found = annotations(&run.stdout);
    check(
        found.len() == 1 && found[0].kind == "error",
        format!(
            "one error annotation, nothing forged: {found:#?}\n{}",
            run.stdout
        ),
    )?;
    let a = &found[0];
    check(
        a.message
            .contains("check ::error::forged%0Aname <i>: regression")
            && a.message
                .ends_with("AssertionError: ::error file=x,line=1::forged")
            && a.message.contains("cpython-2.7.18")
            && a.message.contains("cpython-3.12.1")
            && !a.message.contains("skipped one")
            && a.properties.get("file").map(String::as_str) == Some("cases/hostile.yaml"),
        format!("the annotation names the failing check and its message's first line: {a:#?}"),
    )?;
    // As printed: the name's own `%0A` escaped, so that GitHub shows it as written.
    check(
        run.stdout.lines().any(|l| {
            l.starts_with("::error file=cases/hostile.yaml,")
                && l.contains("check ::error::forged%250Aname <i>")
        }),
        format!("the raw command escapes the name's `%`:\n{}", run.stdout),
    )?;
    let html = std::fs::read_to_string(d.join("r.html"))?;
    check(
        html.contains("<span class=\"check-name\">  :: ::error::forged%0Aname &lt;i&gt;</span>")
            && html.contains("::warning::too &lt;b&gt;")
            && html.contains("::notice::skipped%0A &lt;u&gt;reason&lt;/u&gt;")
            && html.contains("class=\"cell check v-skipped\"")
            && html.contains("class=\"cell check v-regression\"")
            && !html.contains("<i>")
            && !html.contains("<u>reason"),
        "the HTML report shows both checks, escaped",
    )
}

trial!(
    a_check_rule_that_names_no_check_is_refused,
    needs = &["3.12"]
);
/// `check: 3` (YAML's integer, not the text `3`), and a list holding `true`: `run` and `list`
/// exit 2 naming the file, the value's line and column, the value and what to write instead,
/// and nothing runs.
fn a_check_rule_that_names_no_check_is_refused() -> TestResult {
    for (value, at, shown) in [
        ("3", "cases/bad.yaml:6:12: expect[0].check: ", "integer `3`"),
        (
            "[lambda, true]",
            "cases/bad.yaml:6:21: expect[0].check[1]: ",
            "boolean `true`",
        ),
    ] {
        let case = format!(
            "title: t\ncode: |\n  with check(\"3\"):\n      pass\nexpect:\n  - check: {value}\n    outcome: fail\n"
        );
        let dir = folder(&[("cases/bad.yaml", &case)]);
        for command in [&["run"][..], &["list"][..]] {
            let out = Run::from(
                crosspickle(dir.path())
                    .args(command)
                    .args(
                        python_args(&["3.12"])
                            .iter()
                            .filter(|_| command[0] == "run"),
                    )
                    .output()?,
            );
            out.expect_code(2)?;
            let wanted = format!("error: {at}invalid type: {shown}, expected a check's name, a string (quote a name that YAML reads as another type: ");
            check(
                out.stderr.contains(&wanted) && out.stdout.is_empty(),
                format!(
                    "{command:?} of `check: {value}`: wanted {wanted:?}\nstderr: {}\nstdout: {}",
                    out.stderr, out.stdout
                ),
            )?;
        }
    }
    Ok(())
}
