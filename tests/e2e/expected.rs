//! `crosspickle list --expected` (`-p`, `--json`): the expected matrix it prints without
//! running anything is what a real run then decides, cell by cell.

use serde_json::Value;

use crate::support::*;

/// The interpreters of the corpus comparison: both majors, a debug build and a PyPy.
const CORPUS_PYTHONS: &[&str] = &["2.7", "3.8", "3.13", "pypy", "debug"];

/// The key of a run in both JSONs: case, params, consumer (or interpreter), producer.
fn key(v: &Value) -> String {
    format!(
        "{} {} {} <- {}",
        v["case"].as_str().unwrap_or(""),
        v["params"],
        v["python"].as_str().unwrap_or(""),
        v["dump_python"].as_str().unwrap_or("")
    )
}

/// Checks every run of `run` against the cell `list` printed for it; returns how many runs
/// were executed and judged by a rule (the rest were skipped or could not run).
pub fn compare(listed: &Value, run: &Value) -> Result<usize, libtest_mimic::Failed> {
    let mut cells = std::collections::HashMap::new();
    for case in listed["cases"].as_array().into_iter().flatten() {
        for cell in case["runs"].as_array().into_iter().flatten() {
            let mut cell = cell.clone();
            cell["case"] = case["id"].clone();
            cells.insert(key(&cell), cell);
        }
    }
    let runs = runs(run);
    check(
        runs.len() == cells.len(),
        format!("{} runs, {} cells listed", runs.len(), cells.len()),
    )?;
    let mut judged = 0;
    for r in &runs {
        let k = key(r);
        let cell = cells
            .get(&k)
            .ok_or_else(|| format!("no cell listed for the run {k}"))?;
        let verdict = r["verdict"].as_str().unwrap_or("");
        let disposition = cell["disposition"].as_str().unwrap_or("");
        match (disposition, verdict) {
            ("skipped", v) => {
                check(
                    v == "skipped",
                    format!("{k}: listed skipped, the run says {v}"),
                )?;
                check(
                    cell["reason"] == r["reason"],
                    format!(
                        "{k}: skipped for {} (listed {})",
                        r["reason"], cell["reason"]
                    ),
                )?;
            }
            ("env-error", v) => check(v == "env-error", format!("{k}: listed env-error, ran {v}"))?,
            // An environment of `requires` that could not be made: nothing was judged.
            ("run", "env-error") => {}
            ("run", _) => {
                let by_dump = r["phase"] == "dump";
                let (rule, expected) = if by_dump {
                    ("dump_rule", &cell["dump_expected"])
                } else {
                    ("rule", &cell["expected"])
                };
                check(
                    &r["expected"] == expected,
                    format!(
                        "{k}: the run expected {} (decided in phase {}), list says {expected} (its {rule} {})",
                        r["expected"], r["phase"], cell[rule]
                    ),
                )?;
                judged += 1;
            }
            (d, _) => return Err(format!("{k}: unknown disposition {d}").into()),
        }
    }
    Ok(judged)
}

trial!(corpus_matrix_is_what_a_run_decides, needs = CORPUS_PYTHONS);
/// The whole corpus on five interpreters: `list --corpus -p … --json`, then a run of the same
/// with `--json`; every run's expectation is the cell's (of the phase that decided it), every
/// skip is listed as one, with the same reason.
fn corpus_matrix_is_what_a_run_decides() -> TestResult {
    let dir = folder(&[]);
    let mut args = python_args(CORPUS_PYTHONS);
    args.push("--corpus".into());
    // The live matrix: the corpus's recorded pickles, which `--corpus` reads, left out (an
    // empty folder) by both, as they would double the runs.
    let none = dir.path().join("no-pickles");
    std::fs::create_dir(&none)?;
    args.extend(["--pickles".into(), path_str(&none)]);
    let listed = crosspickle(dir.path())
        .arg("list")
        .args(&args)
        .arg("--json")
        .output()?;
    let text = Run::from(listed);
    text.expect_code(0)?;
    let listed: Value = serde_json::from_str(&text.stdout)?;
    check(
        listed["interpreters"].as_array().map_or(0, Vec::len) == CORPUS_PYTHONS.len(),
        format!("interpreters {}", listed["interpreters"]),
    )?;
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let judged = compare(&listed, &json)?;
    // Most of the corpus's runs execute: a comparison of skips alone would prove little.
    check(judged > 500, format!("only {judged} runs judged"))?;
    Ok(())
}

trial!(recorded_producers_are_listed_as_run, needs = &["3.12"]);
/// The corpus's round trips on 3.12 alone with its shipped recorded pickles (`--corpus` reads
/// them), for two cases: `list --json` lists each recorded producer's pair and the comparison
/// of 3.12's fresh dump with its recorded twin (`phase: compare`), and the run then makes
/// exactly those runs, each expected as listed. The text form names the comparison.
fn recorded_producers_are_listed_as_run() -> TestResult {
    let dir = folder(&[]);
    let mut args = python_args(&["3.12"]);
    args.extend(["--corpus", "-k", "union or default-protocol"].map(String::from));
    let list = Run::from(
        crosspickle(dir.path())
            .arg("list")
            .args(&args)
            .arg("--json")
            .output()?,
    );
    list.expect_code(0)?;
    let listed: Value = serde_json::from_str(&list.stdout)?;
    let cells: Vec<&Value> = listed["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["runs"].as_array().into_iter().flatten())
        .collect();
    let recorded = |v: &Value| v.as_str().is_some_and(|s| s.starts_with("recorded:"));
    let pairs = cells.iter().filter(|c| recorded(&c["dump_python"])).count();
    let comparisons: Vec<&&Value> = cells.iter().filter(|c| c["phase"] == "compare").collect();
    check(
        pairs >= 20
            && !comparisons.is_empty()
            && comparisons
                .iter()
                .all(|c| recorded(&c["python"]) && !recorded(&c["dump_python"])),
        format!(
            "{pairs} pairs of recorded producers and {} comparisons listed: {comparisons:?}",
            comparisons.len()
        ),
    )?;
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let ran = runs(&json);
    check(
        ran.iter().filter(|r| r["phase"] == "compare").count() == comparisons.len(),
        "the run compares what list listed",
    )?;
    let judged = compare(&listed, &json)?;
    check(judged >= pairs, format!("only {judged} runs judged"))?;
    let text = Run::from(
        crosspickle(dir.path())
            .arg("list")
            .args(&args)
            .arg("--expected")
            .output()?,
    );
    text.expect_code(0)?;
    let line = text
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("compare  cpython-3.12"));
    check(
        line.is_some_and(|l| l.contains("-> recorded:cpython-3.12")),
        format!("the text form names the comparison:\n{}", text.stdout),
    )
}

/// The run CI made of the whole corpus on every interpreter it has (`.ci/run` names its JSON
/// and the arguments it ran with): ignored, saying so, where they are not given.
fn ci_corpus_gate(name: &str, test: fn() -> TestResult) -> libtest_mimic::Trial {
    if std::env::var_os("CROSSPICKLE_TEST_CORPUS_RUN").is_some() {
        return crate::support::timed(name, test);
    }
    crate::support::timed(name, test)
        .with_kind("needs CROSSPICKLE_TEST_CORPUS_RUN (.ci/run sets it after its corpus run)")
        .with_ignored_flag(true)
}

trial!(the_ci_corpus_run_is_what_list_expected, by = ci_corpus_gate);
/// `list -p … --json` with the arguments of CI's corpus run (`CROSSPICKLE_TEST_CORPUS_ARGS`,
/// one per line, `cases` first, run from the repository) against that run's JSON
/// (`CROSSPICKLE_TEST_CORPUS_RUN`), cell by cell: on every interpreter CI has, without a
/// second run of the corpus.
fn the_ci_corpus_run_is_what_list_expected() -> TestResult {
    let run_path = std::env::var("CROSSPICKLE_TEST_CORPUS_RUN")?;
    let args = std::env::var("CROSSPICKLE_TEST_CORPUS_ARGS")?;
    let args: Vec<&str> = args.lines().filter(|l| !l.is_empty()).collect();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = std::process::Command::new(bin())
        .current_dir(repo)
        .arg("list")
        .args(&args)
        .arg("--json")
        .output()?;
    let listed = Run::from(listed);
    listed.expect_code(0)?;
    let listed: Value = serde_json::from_str(&listed.stdout)?;
    let run = json_at(&repo.join(&run_path));
    let interpreters = run["interpreters"].as_array().map_or(0, Vec::len);
    check(
        listed["interpreters"].as_array().map_or(0, Vec::len) == interpreters,
        format!(
            "list found other interpreters than the run: {}",
            listed["interpreters"]
        ),
    )?;
    let judged = compare(&listed, &run)?;
    check(judged > 2000, format!("only {judged} runs judged"))?;
    println!("{judged} runs on {interpreters} interpreters judged as list said");
    Ok(())
}

const ROUND_TRIP: &str = "title: t\nparams:\n  protocol: [2, 3]\ndump: |\n  import pickle\n  data = pickle.dumps(1, protocol)\nload: |\n  import pickle\n  pickle.loads(data)\nexpect:\n  - phase: dump\n    dump_python: '<3'\n    where: {protocol: 3}\n    outcome: error\n    exception: ValueError\n  - load_python: '<3'\n    where: {protocol: 3}\n    outcome: error\n    exception: ValueError\n";

trial!(text_matrix, needs = &["2.7", "3.13"]);
/// The text form: the rules numbered, a row per producer, a column per consumer, `D/L` where
/// the dump phase's rule is another than the load's.
fn text_matrix() -> TestResult {
    let dir = folder(&[("cases/rt.yaml", ROUND_TRIP)]);
    let args = python_args(&["2.7", "3.13"]);
    let out = crosspickle(dir.path()).arg("list").args(&args).output()?;
    let out = Run::from(out);
    out.expect_code(0)?;
    let want = [
        "    1  dumped by python <3, dump phase, protocol=3: error ValueError",
        "    2  loaded by python <3, protocol=3: error ValueError",
        "    [protocol=3]",
    ];
    for line in want {
        check(
            out.stdout.contains(line),
            format!("no line {line:?} in\n{}", out.stdout),
        )?;
    }
    let rows: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.contains("[protocol=3]"))
        .collect();
    check(rows.len() >= 4, format!("{rows:?}"))?;
    check(
        rows[1].split_whitespace().collect::<Vec<_>>() == ["dump", "\\", "load", "a", "b"],
        rows[1],
    )?;
    let cells = |row: &str| {
        row.split_whitespace()
            .skip(2)
            .map(String::from)
            .collect::<Vec<_>>()
    };
    check(
        cells(rows[2]) == ["1/2", "1/."],
        format!("the 2.7 row: {}", rows[2]),
    )?;
    check(
        cells(rows[3]) == ["2", "."],
        format!("the 3.13 row: {}", rows[3]),
    )?;
    // --markdown is the catalogue: not with the matrix.
    let both = crosspickle(dir.path())
        .arg("list")
        .args(&args)
        .arg("--markdown")
        .output()?;
    let both = Run::from(both);
    both.expect_code(2)?;
    check(
        both.stderr.contains("--markdown prints the catalogue"),
        &both.stderr,
    )
}

/// Two series with both implementations (3.9), two versions of one series (3.11.2, 3.11.7),
/// one version in two builds (3.11.2 and its debug build), and 2.7 and 3.13.
const RELATION_PYTHONS: &[&str] = &["2.7", "3.9", "3.11", "3.13", "pypy", "system", "debug"];

/// Each load raises what its pair really is (compared in Python: implementation, series,
/// version, build alike or not); each rule matches what its relations say, so a run in which
/// every verdict is `xfail` shows that each pair met the rule that describes it.
const RELATIONS: &str = r#"title: Pair relations select the pairs they say
dump: |
  import platform, sys, sysconfig
  facts = (platform.python_implementation(), "%d.%d.%d" % sys.version_info[:3],
           hasattr(sys, "gettotalrefcount"), bool(sysconfig.get_config_var("Py_GIL_DISABLED")))
  data = repr(facts).encode("ascii")
load: |
  import ast, platform, sys, sysconfig
  impl, version, debug, ft = ast.literal_eval(data.decode("ascii"))
  mine = "%d.%d.%d" % sys.version_info[:3]
  same = {
      "implementation": impl == platform.python_implementation(),
      "series": version.split(".")[:2] == mine.split(".")[:2],
      "version": version == mine,
      "build": (debug, ft) == (hasattr(sys, "gettotalrefcount"), bool(sysconfig.get_config_var("Py_GIL_DISABLED"))),
  }
  raise ValueError(" ".join("%s=%s" % (k, "T" if same[k] else "F") for k in ["implementation", "series", "version", "build"]))
expect:
  - dump_implementation_version: ">=7,<8"
    load_implementation_version: "3.13"
    outcome: error
    match: "^implementation=F series=F"
  - same: [version, implementation]
    different: [build]
    outcome: error
    match: "^implementation=T series=T version=T build=F$"
  - same: [series]
    different: [implementation]
    outcome: error
    match: "^implementation=F series=T"
  - same: [series]
    different: [version]
    outcome: error
    match: "series=T version=F"
  - pairs: [["2.7", "3.13"], ["3.13", "2.7"]]
    outcome: error
    match: "^implementation=T series=F"
  - same: [version, build, implementation]
    outcome: error
    match: "^implementation=T series=T version=T build=T$"
  - outcome: error
    match: "series=F"
"#;

trial!(
    pair_relations_select_what_they_say,
    needs = RELATION_PYTHONS
);
/// A rule per relation: `list` gives each at least one pair, the run executes every pair,
/// each judged `xfail` by the rule `list` said (so the rule that selected it describes it).
fn pair_relations_select_what_they_say() -> TestResult {
    let dir = folder(&[("cases/rel.yaml", RELATIONS)]);
    let args = python_args(RELATION_PYTHONS);
    let listed = Run::from(
        crosspickle(dir.path())
            .arg("list")
            .args(&args)
            .arg("--json")
            .output()?,
    );
    listed.expect_code(0)?;
    let listed: Value = serde_json::from_str(&listed.stdout)?;
    let cells = listed["cases"][0]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    check(cells.len() == 49, format!("{} pairs listed", cells.len()))?;
    for rule in 0..7 {
        check(
            cells.iter().any(|c| c["rule"] == rule),
            format!("no pair listed for expect[{rule}]"),
        )?;
    }
    let rule_of = |dump: &str, load: &str| {
        cells
            .iter()
            .find(|c| {
                c["dump_python"]
                    .as_str()
                    .is_some_and(|p| p.starts_with(dump))
                    && c["load_python"] == load
            })
            .map(|c| c["rule"].clone())
            .unwrap_or(Value::Null)
    };
    check(
        rule_of("pypy", "cpython-3.13.0") == 0,
        "pypy 7.3 -> 3.13: the implementation_version rule",
    )?;
    check(
        rule_of("cpython-3.11.2+debug", "cpython-3.11.2") == 1,
        "debug -> release of 3.11.2: same version, different build",
    )?;
    check(
        rule_of("pypy", "cpython-3.9.18") == 2,
        "pypy3.9 -> 3.9: same series, different implementation",
    )?;
    check(
        rule_of("cpython-3.11.7", "cpython-3.11.2") == 3,
        "3.11.7 -> 3.11.2: same series, different version",
    )?;
    check(
        rule_of("cpython-2.7.18", "cpython-3.13.0") == 4,
        "2.7 -> 3.13: the explicit pair",
    )?;
    check(
        rule_of("cpython-3.13.0", "cpython-3.13.0") == 5,
        "3.13 -> 3.13: the same interpreter",
    )?;
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let xfail = runs(&json)
        .iter()
        .filter(|r| r["verdict"] == "xfail")
        .count();
    check(
        xfail == 49,
        format!("{xfail} of 49 pairs xfail\n{}", run.stdout),
    )?;
    let judged = compare(&listed, &json)?;
    check(judged == 49, format!("{judged} pairs judged"))
}

trial!(pair_relations_that_never_hold_are_refused);
/// A relation that cannot hold is refused at its line and column, and so are relations in a
/// `code` case and empty lists.
fn pair_relations_that_never_hold_are_refused() -> TestResult {
    let bad = [
        ("same: [series]\n    different: [series]", "6:16: expect[0] can never be chosen: `series` is both in `same` and in `different`"),
        ("same: [version]\n    dump_python: '<3'\n    load_python: '>=3'", "5:11: expect[0] can never be chosen: `same: [version]`, but dump_python and load_python share no version"),
        ("same: [implementation]\n    dump_implementation: pypy\n    load_implementation: cpython", "5:11: expect[0] can never be chosen: `same: [implementation]`"),
        ("different: [implementation]\n    dump_implementation: pypy\n    load_implementation: pypy", "5:16: expect[0] can never be chosen: `different: [implementation]`"),
        ("same: [version]\n    different: [series]", "6:16: expect[0] can never be chosen: the same version is of the same series"),
        ("same: [build]\n    dump_features: {debug: true}\n    load_features: {debug: false}", "5:11: expect[0] can never be chosen: `same: [build]`"),
        ("pairs: [['2.7', '3.8']]\n    dump_python: '>=3'", "5:12: expect[0] can never be chosen: no pair of `pairs` is left"),
        ("pairs: []", "5:12: expect[0].pairs is an empty list"),
        ("same: [serie]", "5:12: expect[0].same[0]: unknown variant `serie`"),
        ("pairs: [['2.7', '3.8', '3.9']]", "5:13: expect[0].pairs[0]: invalid length 3"),
    ];
    for (rule, want) in bad {
        let text = format!(
            "title: t\ndump: 'data = b\"\"'\nload: pass\nexpect:\n  - {rule}\n    outcome: fail\n"
        );
        let dir = folder(&[("cases/x.yaml", &text)]);
        let out = Run::from(crosspickle(dir.path()).args(["list", "cases"]).output()?);
        out.expect_code(2)?;
        check(
            out.stderr.contains(want),
            format!("{rule}: wanted {want:?}, got {}", out.stderr),
        )?;
    }
    let text = "title: t\ncode: pass\nexpect:\n  - same: [series]\n    outcome: fail\n  - load_implementation_version: '7.3'\n    outcome: fail\n";
    let dir = folder(&[("cases/x.yaml", text)]);
    let out = Run::from(crosspickle(dir.path()).args(["list", "cases"]).output()?);
    out.expect_code(2)?;
    for want in [
        "x.yaml:4:11: expect[0].same selects round trips, but this case has `code`",
        "x.yaml:6:34: expect[1].load_implementation_version selects round trips",
    ] {
        check(
            out.stderr.contains(want),
            format!("wanted {want:?}, got {}", out.stderr),
        )?;
    }
    Ok(())
}
