//! Reports that open on what failed: tracebacks that name the case file's lines in every
//! report, the terminal's failures grouped by case and rule, code that no interpreter can
//! compile refused at its line, the matrix off a terminal (`COLUMNS`, `CI`), and the HTML page
//! that opens on the failing rows with the case's code beside a run.

use std::path::Path;

use crate::support::*;

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A case whose code raises two frames deep (its code starts on line 5, after a blank line
/// inside the block), and a round trip whose `load` fails on its line 2 (line 11 of the file).
const RAISES: &str = "title: Raises two frames deep\n# a comment\ncode: |\n\n  def f():\n      raise ValueError('boom')\n\n  f()\n";
const ROUND_TRIP: &str = "title: Loads the wrong value\ndump: |\n  import pickle\n  data = pickle.dumps(1)\n\n\n\n\nload: |\n  import pickle\n  assert pickle.loads(data) == 2, 'two'\n";

trial!(tracebacks_name_the_case_files_lines, needs = &["3.12"]);
/// Every report (terminal, JSON, JUnit, Markdown, HTML) names `cases/raises.yaml` at the lines
/// of the code's frames (6 for `raise`, 8 for `f()`) and the round trip's load at line 11,
/// never the temporary `case.py`.
fn tracebacks_name_the_case_files_lines() -> TestResult {
    let dir = folder(&[
        ("cases/raises.yaml", RAISES),
        ("cases/trip.yaml", ROUND_TRIP),
    ]);
    let mut args = vec!["run".to_string(), "cases".to_string()];
    args.extend(python_args(&["3.12"]));
    for (flag, file) in [
        ("--junit-xml", "r.xml"),
        ("--markdown", "r.md"),
        ("--html", "r.html"),
    ] {
        args.extend([flag.to_string(), file.to_string()]);
    }
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(1)?;
    let raises = find_run(&json, "raises", "cpython-3.12").ok_or("no run of raises")?;
    let traceback = raises["traceback"].as_str().unwrap_or_default();
    for line in [
        "File \"cases/raises.yaml\", line 8, in <module>",
        "File \"cases/raises.yaml\", line 6, in f",
    ] {
        check(
            traceback.contains(line),
            format!("the JSON traceback lacks {line:?}:\n{traceback}"),
        )?;
    }
    let trip = find_run(&json, "trip", "cpython-3.12").ok_or("no run of trip")?;
    let trip_traceback = trip["traceback"].as_str().unwrap_or_default();
    check(
        trip_traceback.contains("File \"cases/trip.yaml\", line 11, in <module>"),
        format!("the round trip's load is not at line 11:\n{trip_traceback}"),
    )?;
    let reports = [
        ("terminal", run.stdout.clone()),
        ("JUnit", read(&dir.path().join("r.xml"))?),
        ("Markdown", read(&dir.path().join("r.md"))?),
        ("HTML", read(&dir.path().join("r.html"))?),
    ];
    for (name, text) in &reports {
        // The HTML and the XML escape the quotes.
        let text = text.replace("&quot;", "\"").replace("&#34;", "\"");
        check(
            text.contains("cases/raises.yaml\", line 6, in f")
                && text.contains("cases/trip.yaml\", line 11"),
            format!("the {name} report does not name the case file's lines:\n{text}"),
        )?;
        check(
            !text.contains("case.py") && !text.contains("load.py"),
            format!("the {name} report still names the temporary code file:\n{text}"),
        )?;
    }
    Ok(())
}

const MISTYPED: &str = "title: A mistyped rule\ncode: |\n  raise ValueError('boom')\nexpect:\n  - outcome: error\n    exception: ValueErorr\n";

trial!(
    one_mistyped_rule_is_one_block_of_failures,
    needs = &["3.8", "3.12", "3.13"]
);
/// One mistyped rule failing on three interpreters is one block of details, whose heading
/// lists the three once; the short summary still gives each run its own line.
fn one_mistyped_rule_is_one_block_of_failures() -> TestResult {
    let dir = folder(&[("cases/mistyped.yaml", MISTYPED)]);
    let mut args = vec!["run".to_string(), "cases".to_string()];
    args.extend(python_args(&["3.8", "3.12", "3.13"]));
    let (run, _) = run_json(dir.path(), &args);
    run.expect_code(1)?;
    let failures = run
        .stdout
        .split("\nFailures\n")
        .nth(1)
        .and_then(|rest| rest.split("\nShort summary").next())
        .ok_or_else(|| format!("no failures section:\n{}", run.stdout))?;
    let blocks = failures.matches("\nCHANGED ").count();
    let expected = failures.matches("  expected:  error: ValueErorr").count();
    check(
        blocks == 1 && expected == 1,
        format!("{blocks} blocks, {expected} `expected:` lines (wanted one of each):\n{failures}"),
    )?;
    let heading = failures
        .lines()
        .find(|l| l.starts_with("CHANGED "))
        .unwrap_or("");
    check(
        heading.starts_with("CHANGED mistyped on 3 interpreters: cpython-3.8.")
            && heading.contains(", cpython-3.12.")
            && heading.contains(", cpython-3.13."),
        format!("the heading does not list the three interpreters once: {heading}"),
    )?;
    check(
        failures.contains("File \"cases/mistyped.yaml\", line 3, in <module>"),
        format!("the traceback is not shown once for them:\n{failures}"),
    )?;
    let summary_lines = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("CHANGED mistyped on cpython-"))
        .count();
    check(
        summary_lines == 3,
        format!(
            "{summary_lines} short summary lines (wanted 3):\n{}",
            run.stdout
        ),
    )
}

/// Four param combinations with names past 80 characters; one of them fails.
const LONG_NAMES: &str = "title: Long names\nparams:\n  protocol_version_of_the_pickle: [0, 5]\n  object_kind_to_round_trip: [frozenset_of_tuples, bytearray_subclass]\ncode: |\n  assert not (protocol_version_of_the_pickle == 5 and object_kind_to_round_trip == 'bytearray_subclass')\n";

trial!(
    off_a_terminal_names_stay_whole_and_ci_shows_failing_rows,
    needs = &["3.8", "3.12"]
);
/// Off a terminal, with `COLUMNS=80`, no name of the matrix is cut (no `…`); with `CI` set
/// only the failing row is drawn, with a line counting the others; a passing run in CI draws
/// no row at all.
fn off_a_terminal_names_stay_whole_and_ci_shows_failing_rows() -> TestResult {
    let dir = folder(&[("cases/long.yaml", LONG_NAMES)]);
    let mut args = vec!["run".to_string(), "cases".to_string()];
    args.extend(python_args(&["3.8", "3.12"]));
    let run = |ci: bool, extra: &[&str]| {
        let mut cmd = crosspickle(dir.path());
        cmd.args(&args).args(extra).env("COLUMNS", "80");
        if ci {
            cmd.env("CI", "true");
        }
        Run::from(cmd.output().expect("crosspickle runs"))
    };
    let failing =
        "long[protocol_version_of_the_pickle=5,object_kind_to_round_trip=bytearray_subclass]";
    let passing =
        "long[protocol_version_of_the_pickle=0,object_kind_to_round_trip=frozenset_of_tuples]";
    let plain = run(false, &[]);
    plain.expect_code(1)?;
    let matrix = plain.stdout.split("\nFailures").next().unwrap_or("");
    check(
        !matrix.contains('…') && matrix.contains(failing) && matrix.contains(passing),
        format!("a name is cut, or a row is missing, at 80 columns:\n{matrix}"),
    )?;
    let ci = run(true, &[]);
    ci.expect_code(1)?;
    let matrix = ci.stdout.split("\nFailures").next().unwrap_or("");
    check(
        matrix.contains(failing)
            && !matrix.contains(passing)
            && matrix.contains("3 rows with no failing run not shown (CI is set)"),
        format!("with CI set the matrix is not the failing row and a count:\n{matrix}"),
    )?;
    let green = run(true, &["-k", "frozenset"]);
    green.expect_code(0)?;
    check(
        !green.stdout.contains("long[")
            && green
                .stdout
                .contains("2 rows with no failing run not shown (CI is set)"),
        format!("a passing run in CI draws rows:\n{}", green.stdout),
    )
}

trial!(
    the_html_page_opens_on_the_failing_rows_and_shows_the_rule,
    needs = &["3.12"]
);
/// The HTML page of a run where the last case (by name) fails: its row comes first, marked
/// failing, after a line saying so; its details show the case file with the deciding rule's
/// line (line 5 of `zz-mistyped.yaml`) marked; a passing run's details show no file.
fn the_html_page_opens_on_the_failing_rows_and_shows_the_rule() -> TestResult {
    let dir = folder(&[
        ("cases/aa-fine.yaml", "title: Fine\ncode: pass\n"),
        ("cases/zz-mistyped.yaml", MISTYPED),
    ]);
    let mut args = vec!["run".to_string(), "cases".to_string()];
    args.extend(python_args(&["3.12"]));
    args.extend(["--html".to_string(), "r.html".to_string()]);
    let (run, _) = run_json(dir.path(), &args);
    run.expect_code(1)?;
    let html = read(&dir.path().join("r.html"))?;
    let body = html.split("<tbody>").nth(1).unwrap_or("");
    let first_row = body.split("</tr>").next().unwrap_or("");
    check(
        first_row.contains("class=\"failing\"") && first_row.contains("zz-mistyped"),
        format!("the first row is not the failing one: {first_row}"),
    )?;
    check(
        html.contains("1 row with a failing run first, then the 1 others."),
        "no line says the failing rows come first",
    )?;
    let details = |name: &str| -> String {
        html.split("<section id=\"details-cell-")
            .find(|s| s.starts_with(name))
            .unwrap_or("")
            .split("</section>")
            .next()
            .unwrap_or("")
            .to_string()
    };
    let failing = details("zz-mistyped");
    check(
        failing.contains("<span class=\"line rule\" data-line=\"5\">")
            && failing.contains("exception: ValueErorr")
            && failing.matches("class=\"line rule\"").count() == 1,
        format!("the failing run's details do not mark the rule's line 5:\n{failing}"),
    )?;
    let fine = details("aa-fine");
    check(
        !fine.is_empty() && !fine.contains("class=\"source\""),
        format!("a passing run shows the case file:\n{fine}"),
    )
}

trial!(
    code_no_interpreter_compiles_is_an_error_at_its_line,
    needs = &["3.8", "3.12"]
);
/// Code that compiles on neither interpreter is refused at its line and column of the case
/// file (exit 2, Python's message); code that compiles on 3.12 only (`match`) stays a verdict
/// of the 3.8 run (exit 1).
fn code_no_interpreter_compiles_is_an_error_at_its_line() -> TestResult {
    let dir = folder(&[
        (
            "cases/broken.yaml",
            "title: Does not compile\ncode: |\n  x = 1\n  def f(:\n      pass\n",
        ),
        (
            "cases/newer.yaml",
            "title: Compiles from 3.10\ncode: |\n  match 1:\n      case 1:\n          pass\n",
        ),
    ]);
    let run = |keyword: &str| {
        let mut args = vec!["run".to_string(), "cases".to_string(), "-k".to_string()];
        args.push(keyword.to_string());
        args.extend(python_args(&["3.8", "3.12"]));
        run_json(dir.path(), &args).0
    };
    let broken = run("broken");
    broken.expect_code(2)?;
    check(
        broken.stderr.contains(
            "cases/broken.yaml:4:9: the code compiles on no selected interpreter (cpython-3.8.",
        ) && broken.stderr.contains("SyntaxError: invalid syntax"),
        format!(
            "no error at the line and column of the case file:\n{}",
            broken.stderr
        ),
    )?;
    let newer = run("newer");
    newer.expect_code(1)?;
    check(
        !newer.stderr.contains("compiles on no selected interpreter"),
        format!("code that compiles on 3.12 is refused:\n{}", newer.stderr),
    )
}
