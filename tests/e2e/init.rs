//! `crosspickle init` end to end: in a fresh folder it writes the example case and the
//! workflow, and `crosspickle run` then passes on every interpreter; it never overwrites.

use std::path::Path;

use crate::support::*;

fn init(dir: &Path, args: &[&str]) -> Run {
    Run::from(
        crosspickle(dir)
            .arg("init")
            .args(args)
            .output()
            .expect("crosspickle runs"),
    )
}

/// Every file under `dir`, with its bytes.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.push((
                    p.strip_prefix(root).unwrap().display().to_string() + "/",
                    vec![],
                ));
                walk(root, &p, out);
            } else {
                out.push((
                    p.strip_prefix(root).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

trial!(then_run_passes_everywhere, needs = EVERY_PYTHON);
fn then_run_passes_everywhere() -> TestResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = folder(&[]);
    let out = init(dir.path(), &[]);
    out.expect_code(0)?;
    check(
        out.stdout.starts_with("wrote cases/example.yaml: ")
            && out
                .stdout
                .contains("\nwrote .github/workflows/crosspickle.yml: ")
            && out.stdout.contains("CROSSPICKLE_SOURCE"),
        &out.stdout,
    )?;
    let names: Vec<String> = tree(dir.path()).into_iter().map(|(n, _)| n).collect();
    check(
        names
            == [
                ".github/",
                ".github/workflows/",
                ".github/workflows/crosspickle.yml",
                "cases/",
                "cases/example.yaml",
            ],
        format!("{names:?}"),
    )?;
    let workflow = std::fs::read(dir.path().join(".github/workflows/crosspickle.yml")).unwrap();
    check(
        workflow == std::fs::read(root.join("docs/github-actions.yml")).unwrap(),
        "the workflow is docs/github-actions.yml",
    )?;

    // `crosspickle run` as a newcomer types it: every interpreter found.
    let plain = Run::from(crosspickle(dir.path()).arg("run").output().unwrap());
    plain.expect_code(0)?;
    // And on every interpreter of the machine, the debug build included.
    let args = python_args(EVERY_PYTHON);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (run, json) = run_json(dir.path(), &args);
    run.expect_code(0)?;
    let runs = runs(&json);
    let n = EVERY_PYTHON.len();
    check(
        runs.len() == 3 * n,
        format!("{} runs on {n} interpreters", runs.len()),
    )?;
    // 2.7 knows protocols up to 2, 3.6 and 3.7 up to 4: the known ValueErrors are xfail.
    for r in &runs {
        let python = r["python"].as_str().unwrap_or("");
        let protocol = r["params"]["protocol"].as_i64().unwrap_or(0);
        let too_new = (python.starts_with("cpython-2.7.") && protocol > 2)
            || ((python.starts_with("cpython-3.6.") || python.starts_with("cpython-3.7."))
                && protocol > 4);
        let want = if too_new { "xfail" } else { "ok" };
        check(
            r["verdict"] == want,
            format!("{python} protocol {protocol}: {r}"),
        )?;
    }
    Ok(())
}

trial!(never_overwrites);
fn never_overwrites() -> TestResult {
    // An existing case: named, exit 2, nothing written, the file untouched.
    let dir = folder(&[("cases/example.yaml", "mine\n")]);
    let before = tree(dir.path());
    let out = init(dir.path(), &[]);
    out.expect_code(2)?;
    check(
        out.stderr.contains("cases/example.yaml exists already")
            && out.stderr.contains("nothing was written"),
        &out.stderr,
    )?;
    check(tree(dir.path()) == before, "the folder is as it was")?;

    // An existing workflow: cases/ is not made either.
    let dir = folder(&[(".github/workflows/crosspickle.yml", "on: push\n")]);
    let before = tree(dir.path());
    let out = init(dir.path(), &[]);
    out.expect_code(2)?;
    check(
        out.stderr
            .contains(".github/workflows/crosspickle.yml exists already"),
        &out.stderr,
    )?;
    check(tree(dir.path()) == before, "the folder is as it was")?;

    // A file where a folder must go.
    let dir = folder(&[(".github", "not a folder\n")]);
    let out = init(dir.path(), &[]);
    out.expect_code(2)?;
    check(out.stderr.contains(".github exists already"), &out.stderr)?;
    check(!dir.path().join("cases").exists(), "cases/ not made")?;

    // Into another folder: it must exist; a second init there refuses.
    let dir = folder(&[]);
    let target = dir.path().join("project");
    let out = init(dir.path(), &["project"]);
    out.expect_code(2)?;
    check(out.stderr.contains("project: no such folder"), &out.stderr)?;
    std::fs::create_dir(&target).unwrap();
    let made = init(dir.path(), &["project"]);
    made.expect_code(0)?;
    check(
        made.stdout.lines().last().is_some_and(|l| {
            l.starts_with(
                "to check pickles made by interpreters CI cannot set up: run `crosspickle record`",
            ) && l.ends_with("the workflow's `recorded` job loads them on one Python")
        }),
        format!("init says how to record: {}", made.stdout),
    )?;
    check(
        target.join("cases/example.yaml").is_file(),
        "written in project/",
    )?;
    let again = init(dir.path(), &["project"]);
    again.expect_code(2)?;
    check(
        again.stderr.contains(
            "project/cases/example.yaml, project/.github/workflows/crosspickle.yml exist already",
        ),
        &again.stderr,
    )
}
