//! The small stumbles of a first hour (issue 34): a mistyped case key answered with the nearest
//! one, `merge -q`, the hint for a missing interpreter in CI, the repository's root holding
//! only what belongs there, and the workflow building crosspickle only when its source changed.

use std::path::Path;

use crate::support::*;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

trial!(an_unknown_key_suggests_the_nearest_one);
/// A mistyped top-level key and a mistyped rule key are each answered with the key meant, at
/// their line and column, not with the list of every key; a name like none of them still
/// lists them.
fn an_unknown_key_suggests_the_nearest_one() -> TestResult {
    let dir = folder(&[
        ("top.yaml", "title: t\ncode: pass\nexpet: []\n"),
        (
            "rule.yaml",
            "title: t\ncode: pass\nexpect:\n  - outcome: error\n    excepton: ValueError\n",
        ),
        ("far.yaml", "title: t\ncode: pass\nzzzzzz: 1\n"),
    ]);
    for (file, want) in [
        (
            "top.yaml",
            "top.yaml:3:1: unknown field `expet`: did you mean `expect`?",
        ),
        (
            "rule.yaml",
            "rule.yaml:5:5: expect[0]: unknown field `excepton`: did you mean `exception`?",
        ),
    ] {
        let out = Run::from(crosspickle(dir.path()).args(["list", file]).output()?);
        out.expect_code(2)?;
        check(
            out.stderr.contains(want),
            format!("wanted `{want}` in:\n{}", out.stderr),
        )?;
        check(
            !out.stderr.contains("expected one of"),
            format!("every key listed for a near miss:\n{}", out.stderr),
        )?;
    }
    let out = Run::from(
        crosspickle(dir.path())
            .args(["list", "far.yaml"])
            .output()?,
    );
    out.expect_code(2)?;
    check(
        out.stderr
            .contains("unknown field `zzzzzz`, expected one of `id`, `title`")
            && !out.stderr.contains("did you mean"),
        format!("a key near none: {}", out.stderr),
    )
}

trial!(merge_has_quiet);
/// `merge -q`, as `run -q`: no matrix and no details, the short summary of the failing runs
/// and the summary line; the exit code and the report files are the same as without it.
fn merge_has_quiet() -> TestResult {
    let fixture = repo().join("tests/fixtures/results-v1/fixture.json");
    let dir = folder(&[]);
    let loud = Run::from(
        crosspickle(dir.path())
            .arg("merge")
            .arg(&fixture)
            .output()?,
    );
    let quiet = Run::from(
        crosspickle(dir.path())
            .args(["merge", "-q"])
            .arg(&fixture)
            .args(["--json", "q.json"])
            .output()?,
    );
    check(
        quiet.code == loud.code && loud.code == 3,
        format!("exit codes {} and {}", quiet.code, loud.code),
    )?;
    check(
        loud.stdout.contains("Failures") && !quiet.stdout.contains("Failures"),
        format!("the details in -q's output:\n{}", quiet.stdout),
    )?;
    check(
        !quiet.stdout.contains("prints-then-fails[") && !quiet.stdout.contains(" . ok "),
        format!("the matrix in -q's output:\n{}", quiet.stdout),
    )?;
    check(
        quiet
            .stdout
            .contains("REGRESSION prints-then-fails on cpython-3.12.1")
            && quiet.stdout.contains("2 regression"),
        format!("no short summary in -q's output:\n{}", quiet.stdout),
    )?;
    let json = json_at(&dir.path().join("q.json"));
    check(
        runs(&json).len() == 25,
        "merge -q wrote no whole JSON report",
    )
}

trial!(
    in_ci_the_missing_interpreter_hint_leaves_out_skip_missing,
    needs = &["3.12"]
);
/// A request that nothing matches: off CI the hint offers `--skip-missing`; with `CI` set,
/// where `--skip-missing` is off, it does not, and says why.
fn in_ci_the_missing_interpreter_hint_leaves_out_skip_missing() -> TestResult {
    let dir = folder(&[("cases/a.yaml", "title: a\ncode: pass\n")]);
    let mut args = python_args(&["3.12"]);
    args.extend(["--python".into(), "3.99".into()]);
    let off = Run::from(crosspickle(dir.path()).args(&args).output()?);
    off.expect_code(2)?;
    check(
        off.stderr.contains("or pass --skip-missing"),
        format!("off CI: {}", off.stderr),
    )?;
    let on = Run::from(
        crosspickle(dir.path())
            .args(&args)
            .env("CI", "true")
            .output()?,
    );
    on.expect_code(2)?;
    check(
        on.stderr.contains("no interpreter matches `3.99`")
            && !on.stderr.contains("pass --skip-missing")
            && on.stderr.contains("--skip-missing is off"),
        format!("with CI set: {}", on.stderr),
    )
}

trial!(the_repository_root_holds_no_stray_output);
/// The repository's root holds what a checkout needs, not a command's output left behind (a
/// file `out` sat there): every file at the root is one of these.
fn the_repository_root_holds_no_stray_output() -> TestResult {
    let known = [
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "CONTRIBUTING.md",
        "LICENSE-APACHE",
        "LICENSE-MIT",
        "build.rs",
        "pyproject.toml",
        "pythons.toml",
    ];
    let listed = std::process::Command::new("git")
        .args(["ls-files", "--full-name", "--", ":/"])
        .current_dir(repo())
        .output()?;
    if !listed.status.success() {
        return Err("git ls-files failed: not a checkout?".into());
    }
    let text = String::from_utf8_lossy(&listed.stdout);
    let stray: Vec<&str> = text
        .lines()
        .filter(|p| !p.contains('/') && !p.starts_with('.') && !known.contains(p))
        .collect();
    check(
        stray.is_empty(),
        format!("files at the repository's root that belong nowhere: {stray:?}"),
    )
}

/// The `run:` block of the step named `name` in the build job of a workflow of docs/, and the
/// job's steps.
fn build_step(workflow: &str, name: &str) -> Result<(String, Vec<serde_json::Value>), String> {
    let text = std::fs::read_to_string(repo().join("docs").join(workflow))
        .map_err(|e| format!("{workflow}: {e}"))?;
    let wf: serde_json::Value =
        serde_norway::from_str(&text).map_err(|e| format!("{workflow}: {e}"))?;
    let steps = wf["jobs"]["build"]["steps"]
        .as_array()
        .cloned()
        .ok_or(format!("{workflow}: no build job"))?;
    let run = steps
        .iter()
        .find(|s| s["name"] == name)
        .and_then(|s| s["run"].as_str())
        .ok_or(format!("{workflow}: no step `{name}`"))?
        .to_string();
    Ok((run, steps))
}

trial!(the_workflow_caches_the_wheel_by_the_sources_commit);
/// Both workflows keep the built wheel in the Actions cache under the commit of the source, and
/// build only on a miss: the step that finds the commit, run with bash on a git repository
/// here, names the commit a branch, a tag and HEAD stand for, takes a full commit as it is,
/// and names none for a wheel (which is not built).
fn the_workflow_caches_the_wheel_by_the_sources_commit() -> TestResult {
    let upstream = folder(&[("README", "a source\n")]);
    let git = |args: &[&str]| -> Result<String, String> {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(upstream.path())
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    git(&["init", "-q"])?;
    git(&["add", "README"])?;
    git(&["commit", "-q", "-m", "first"])?;
    let first = git(&["rev-parse", "HEAD"])?;
    git(&["tag", "-a", "-m", "v1", "v1"])?;
    std::fs::write(upstream.path().join("README"), "changed\n")?;
    git(&["commit", "-q", "-am", "second"])?;
    let second = git(&["rev-parse", "HEAD"])?;
    let url = format!("git+file://{}", path_str(upstream.path()));
    for workflow in ["github-actions.yml", "github-actions-shards.yml"] {
        let (script, steps) = build_step(workflow, "The source's commit")?;
        for (source, want) in [
            (url.clone(), second.as_str()),
            (format!("{url}@main"), second.as_str()),
            (format!("{url}@{first}"), first.as_str()),
            (
                "/somewhere/crosspickle-0.1.0-py3-none-any.whl".to_string(),
                "",
            ),
        ] {
            let work = folder(&[]);
            let output = work.path().join("output");
            let out = Run::from(
                std::process::Command::new("bash")
                    .args(["-e", "-c", &script])
                    .current_dir(work.path())
                    .env("CROSSPICKLE_SOURCE", &source)
                    .env("GITHUB_OUTPUT", &output)
                    .output()?,
            );
            out.expect_code(0)?;
            let said = std::fs::read_to_string(&output)?;
            check(
                said == format!("commit={want}\n"),
                format!("{workflow}: {source}: {said:?}, wanted {want:?}"),
            )?;
        }
        // A tag: the commit, or the tag object that names it; not the branch's head.
        let work = folder(&[]);
        let output = work.path().join("output");
        Run::from(
            std::process::Command::new("bash")
                .args(["-e", "-c", &script])
                .current_dir(work.path())
                .env("CROSSPICKLE_SOURCE", format!("{url}@v1"))
                .env("GITHUB_OUTPUT", &output)
                .output()?,
        )
        .expect_code(0)?;
        let tagged = std::fs::read_to_string(&output)?;
        let tag_object = git(&["rev-parse", "v1"])?;
        check(
            tagged == format!("commit={tag_object}\n") || tagged == format!("commit={first}\n"),
            format!("{workflow}: @v1: {tagged:?}"),
        )?;
        // The cache is keyed by that commit and the build runs only on a miss.
        let cache = steps
            .iter()
            .find(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/cache"))
            })
            .ok_or(format!("{workflow}: no actions/cache step"))?;
        check(
            cache["with"]["key"]
                .as_str()
                .is_some_and(|k| k.contains("${{ steps.source.outputs.commit }}"))
                && cache["with"]["path"] == "wheel",
            format!("{workflow}: the cache step: {cache}"),
        )?;
        let build = steps
            .iter()
            .find(|s| s["name"] == "Build the wheel")
            .ok_or("no build step")?;
        check(
            build["if"].as_str().is_some_and(|c| {
                c.contains(&format!(
                    "steps.{}.outputs.cache-hit",
                    cache["id"].as_str().unwrap_or("?")
                ))
            }),
            format!("{workflow}: the build step runs on a cache hit too: {build}"),
        )?;
    }
    Ok(())
}
