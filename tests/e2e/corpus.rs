//! The shipped corpus: it loads, its catalogue in docs/corpus.md is current, and `list` works;
//! the copy inside the binary (`--corpus`) runs, lists and bisects from a folder of its own,
//! alone or with the folder's cases.

use std::path::Path;

use crate::support::*;

/// The number of case files under cases/.
fn cases_on_disk() -> usize {
    fn walk(dir: &Path) -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                if p.is_dir() {
                    walk(&p)
                } else {
                    usize::from(p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                }
            })
            .sum()
    }
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("cases"))
}

trial!(embedded_list_anywhere);
/// `list --corpus` in an empty folder prints the catalogue docs/corpus.md is (made from cases/).
fn embedded_list_anywhere() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = folder(&[]);
    let md = Run::from(
        crosspickle(dir.path())
            .args(["list", "--corpus", "--markdown"])
            .output()
            .unwrap(),
    );
    md.expect_code(0)?;
    let committed = std::fs::read_to_string(root.join("docs/corpus.md")).unwrap_or_default();
    check(
        md.stdout == committed,
        "`list --corpus --markdown` differs from docs/corpus.md",
    )?;
    let text = Run::from(
        crosspickle(dir.path())
            .args(["list", "--corpus"])
            .output()
            .unwrap(),
    );
    text.expect_code(0)?;
    check(
        text.stdout
            .ends_with(&format!("\n{} cases\n", cases_on_disk())),
        &text.stdout,
    )?;
    // Without --corpus and without cases/, the error says what to do.
    let none = Run::from(crosspickle(dir.path()).args(["list"]).output().unwrap());
    none.expect_code(2)?;
    check(
        none.stderr.contains("no `cases/` folder here")
            && none.stderr.contains("--corpus")
            && none.stderr.contains("crosspickle init"),
        &none.stderr,
    )
}

trial!(embedded_run_anywhere, needs = &["2.7", "3.13", "pypy"]);
/// `run --corpus` from an empty folder: every case of the corpus, from memory, all as expected.
fn embedded_run_anywhere() -> TestResult {
    let dir = folder(&[]);
    let mut args = python_args(&["2.7", "3.13", "pypy"]);
    args.push("--corpus".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let cases = json["cases"].as_object().cloned().unwrap_or_default();
    check(
        cases.len() == cases_on_disk(),
        format!("{} cases run, {} in cases/", cases.len(), cases_on_disk()),
    )?;
    for (id, info) in &cases {
        let path = info["path"].as_str().unwrap_or("");
        check(
            path.starts_with("corpus:cases/")
                && Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(&path["corpus:".len()..])
                    .is_file(),
            format!("{id}: path {path}"),
        )?;
    }
    let runs = runs(&json);
    let failing: Vec<&serde_json::Value> = runs
        .iter()
        .filter(|r| !["ok", "xfail", "skipped"].contains(&r["verdict"].as_str().unwrap_or("")))
        .collect();
    check(failing.is_empty(), format!("{failing:?}"))?;
    check(
        json["interpreters"].as_array().map_or(0, Vec::len) == 3,
        "three interpreters",
    )?;
    // The seed of the project is there, and it ran.
    check(
        runs.iter()
            .any(|r| r["case"] == "reducer-override-cycle" && r["verdict"] == "ok"),
        "reducer-override-cycle ran",
    )
}

trial!(embedded_with_my_cases, needs = &["3.12"]);
/// `--corpus` next to a folder's own cases/: the corpus alone, or both with `cases`; the
/// corpus's own file given again counts once; another case with a corpus id is an error.
fn embedded_with_my_cases() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let highest =
        std::fs::read_to_string(root.join("cases/protocols/highest-protocol.yaml")).unwrap();
    let dir = folder(&[
        ("cases/mine.yaml", "title: mine\ntags: [mine]\ncode: pass\n"),
        ("cases/highest-protocol.yaml", &highest),
    ]);
    let total = cases_on_disk();
    let py = python_args(&["3.12"]);
    let with = |extra: &[&str]| -> Vec<String> {
        let mut a = py.clone();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    // The corpus alone: mine is not run.
    let a = with(&["--corpus", "-k", "mine or highest-protocol"]);
    let (run, json) = run_json(
        dir.path(),
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    run.expect_code(0)?;
    let ids: Vec<String> = json["cases"].as_object().unwrap().keys().cloned().collect();
    check(ids == ["highest-protocol"], format!("{ids:?}"))?;
    // Both: the copy of a corpus file is the corpus's case, kept once.
    let list = Run::from(
        crosspickle(dir.path())
            .args(["list", "--corpus", "cases"])
            .output()
            .unwrap(),
    );
    list.expect_code(0)?;
    check(
        list.stdout.ends_with(&format!("\n{} cases\n", total + 1)),
        &list.stdout,
    )?;
    let a = with(&["--corpus", "cases", "--tag", "mine", "--tag", "protocols"]);
    let (run, json) = run_json(
        dir.path(),
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    run.expect_code(0)?;
    let cases = json["cases"].as_object().unwrap();
    check(
        cases["mine"]["path"] == "cases/mine.yaml"
            && cases["highest-protocol"]["path"] == "corpus:cases/protocols/highest-protocol.yaml",
        format!("{cases:?}"),
    )?;
    // The same id with other text: an error naming both files, nothing runs.
    std::fs::write(
        dir.path().join("cases/highest-protocol.yaml"),
        highest.replacen("title: ", "title: my ", 1),
    )
    .unwrap();
    let a = with(&["--corpus", "cases"]);
    let (run, json) = run_json(
        dir.path(),
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    run.expect_code(2)?;
    check(json.is_null(), "nothing ran")?;
    check(
        run.stderr.contains("cases/highest-protocol.yaml: id `highest-protocol` is also the id of corpus:cases/protocols/highest-protocol.yaml"),
        &run.stderr,
    )?;
    // Without --corpus the folder's cases alone.
    let (run, json) = run_json(
        dir.path(),
        &with(&[]).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    run.expect_code(0)?;
    check(
        json["cases"].as_object().unwrap().len() == 2,
        format!("{}", json["cases"]),
    )
}

trial!(embedded_bisect, needs = &["3.7", "3.8"]);
/// `bisect --corpus ID` finds a corpus case by id (and by its corpus path) from any folder.
fn embedded_bisect() -> TestResult {
    let dir = folder(&[]);
    let mut args = python_args(&["3.7", "3.8"]);
    args.extend(["--params", "protocol=5", "--corpus"].map(String::from));
    for case in [
        "highest-protocol",
        "corpus:cases/protocols/highest-protocol.yaml",
    ] {
        let out = Run::from(
            crosspickle(dir.path())
                .arg("bisect")
                .arg(case)
                .args(&args)
                .output()
                .unwrap(),
        );
        out.expect_code(0)?;
        check(
            out.stdout.contains("-> cpython-3.8.")
                && out.stdout.contains("error: ValueError -> pass"),
            &out.stdout,
        )?;
    }
    let out = Run::from(
        crosspickle(dir.path())
            .args(["bisect", "no-such-case", "--corpus"])
            .output()
            .unwrap(),
    );
    out.expect_code(2)?;
    check(
        out.stderr.contains("no case `no-such-case`")
            && out.stderr.contains("in the corpus (--corpus)"),
        &out.stderr,
    )
}

trial!(catalogue_is_current);
fn catalogue_is_current() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Run::from(
        crosspickle(root)
            .args(["list", "--markdown"])
            .output()
            .unwrap(),
    );
    out.expect_code(0)?;
    let committed = std::fs::read_to_string(root.join("docs/corpus.md")).unwrap_or_default();
    check(
        committed == out.stdout,
        "docs/corpus.md is stale: run `cargo run -- list --markdown > docs/corpus.md`",
    )?;
    let count: usize = out.stdout.lines().filter(|l| l.starts_with("| `")).count();
    check(count >= 78, format!("{count} cases in the corpus"))?;
    let text = Run::from(crosspickle(root).args(["list"]).output().unwrap());
    text.expect_code(0)?;
    check(
        text.stdout.contains("reducer-override-cycle")
            && text
                .stdout
                .contains("expect: otherwise python >=3.8.0,<3.8.2, pickler=c: fail"),
        &text.stdout,
    )
}
