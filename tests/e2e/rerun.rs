//! Re-running and reading a run: the short summary's arguments, pasted after the same paths,
//! select exactly the run they name (a plain run and a round trip's pair); `--last-failed`
//! runs what failed last time from this folder, everything (with a note) when nothing did;
//! `--durations N` lists the N slowest runs; `-q` leaves the matrix and details out.

use std::path::Path;

use crate::support::*;

const CASES: &[(&str, &str)] = &[
    (
        "cases/a.yaml",
        "title: a\nparams:\n  n: [1, 2]\ncode: |\n  assert n == 1\n",
    ),
    ("cases/ab.yaml", "title: ab\ncode: |\n  raise ValueError('boom')\n"),
    ("cases/fine.yaml", "title: fine\ncode: |\n  pass\n"),
    (
        "cases/rt.yaml",
        "title: rt\ndump: |\n  import pickle, sys\n  data = pickle.dumps(tuple(sys.version_info[:2]), protocol=2)\nload: |\n  import pickle, sys\n  assert pickle.loads(data) == tuple(sys.version_info[:2])\n",
    ),
];

/// crosspickle `cases` on 3.8 and 3.12 with `extra`, in `dir`, JSON to `out.json`.
fn run(dir: &Path, extra: &[&str]) -> Result<(Run, serde_json::Value), libtest_mimic::Failed> {
    let mut args = python_args(&["3.8", "3.12"]);
    args.push("cases".into());
    args.extend(extra.iter().map(|a| a.to_string()));
    Ok(run_json(dir, &args))
}

/// (case, params, dump_python, python) of every run, sorted.
fn keys(json: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = runs(json)
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {}",
                r["case"], r["params"], r["dump_python"], r["python"]
            )
        })
        .collect();
    k.sort();
    k
}

trial!(
    short_summary_last_failed_durations_quiet,
    needs = &["3.8", "3.12"]
);
fn short_summary_last_failed_durations_quiet() -> TestResult {
    let dir = folder(CASES);
    let d = dir.path();
    // No record yet: --lf runs everything, and says so.
    let (first, json) = run(d, &["--lf", "--durations", "3"])?;
    first.expect_code(1)?;
    let all = keys(&json);
    check(
        all.len() == 12 && first.stderr.contains("note: --last-failed: no failing run recorded from this folder; running all 12 selected runs"),
        format!("--lf with no record runs all 12:\n{}", first.stderr),
    )?;
    let slow = first
        .stdout
        .split("The 3 slowest runs\n")
        .nth(1)
        .unwrap_or("");
    check(
        slow.lines()
            .take(3)
            .all(|l| l.trim_start().contains("s  ") && l.contains(" on cpython-3.")),
        format!("--durations 3 lists 3 runs:\n{}", first.stdout),
    )?;
    let mut failing = pasted_runs(d, &first.stdout)?;
    failing.sort();
    check(
        failing
            .iter()
            .any(|k| k.starts_with("\"rt\"") && !k.contains(" null ")),
        format!("a round trip's pair among them: {failing:?}"),
    )?;
    // --lf: what failed, nothing else (the pasted runs failed again: the record holds them).
    let (lf, json) = run(d, &["--lf"])?;
    lf.expect_code(1)?;
    check(
        keys(&json) == failing
            && lf
                .stderr
                .contains("running the 6 of 12 selected runs that failed last time"),
        format!(
            "--lf runs the 6 failing runs: {:?}\n{}",
            keys(&json),
            lf.stderr
        ),
    )?;
    // Once ab passes, --lf forgets it and the next --lf runs only what still fails.
    std::fs::write(d.join("cases/ab.yaml"), "title: ab\ncode: |\n  pass\n")?;
    let (fixed, _) = run(d, &["--lf"])?;
    fixed.expect_code(1)?;
    let (lf, json) = run(d, &["--lf", "-q"])?;
    lf.expect_code(1)?;
    check(
        keys(&json).len() == 4 && !keys(&json).iter().any(|k| k.starts_with("\"ab\"")),
        format!("ab left the record: {:?}", keys(&json)),
    )?;
    // -q: no matrix and no details; the short summary and the summary line.
    check(
        !lf.stdout.contains("Failures")
            && !lf.stdout.lines().any(|l| l.starts_with("a[n=2] "))
            && lf.stdout.contains("Short summary")
            && lf.stdout.trim_end().ends_with("(4 runs, 2 interpreters)"),
        format!("-q:\n{}", lf.stdout),
    )
}

/// The short summary of `stdout`: each failing run's pasted arguments, run after `cases` in
/// `d`, select exactly one run, which fails again; the keys of those runs.
fn pasted_runs(d: &Path, stdout: &str) -> Result<Vec<String>, libtest_mimic::Failed> {
    // The short summary: 6 failing runs, each with the arguments that select it alone.
    let summary = stdout
        .split("Short summary (each with the arguments that run it again, after the same paths)\n")
        .nth(1)
        .ok_or_else(|| format!("no short summary:\n{}", stdout))?;
    let lines: Vec<&str> = summary.lines().take_while(|l| !l.is_empty()).collect();
    check(
        lines.len() == 12,
        format!("6 failing runs, 2 lines each:\n{summary}"),
    )?;
    let mut failing = Vec::new();
    for pair in lines.chunks(2) {
        let (head, paste) = (pair[0], pair[1].trim());
        check(
            head.starts_with("REGRESSION "),
            format!("a regression: {head}"),
        )?;
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "exec \"$0\" cases --pythons-toml /dev/null {paste} --json one.json"
            ))
            .arg(bin())
            .current_dir(d)
            .env(
                "CROSSPICKLE_CACHE_DIR",
                std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe-cache"),
            )
            .env("NO_COLOR", "1")
            .env_remove("CI")
            .output()?;
        let again = Run::from(out);
        again.expect_code(1)?;
        let one = json_at(&d.join("one.json"));
        let k = keys(&one);
        let name = head
            .trim_start_matches("REGRESSION ")
            .split(": ")
            .next()
            .unwrap_or("");
        check(
            k.len() == 1 && runs(&one)[0]["verdict"] == "regression",
            format!("`{paste}` selects exactly one run ({name}): {k:?}"),
        )?;
        failing.push(k[0].clone());
    }
    Ok(failing)
}

trial!(side_by_side_runs_keep_both_failures, needs = &["3.12"]);
/// Two runs from one folder (two halves of the cases, as two shards side by side would be),
/// started together and ending together: each case waits until all four runs have started,
/// then fails, so both crosspickles finish their runs at the same moment and update the
/// last-failed record together. The record keeps all four failures, in every round (a fresh
/// folder each round, so that no older record hides a lost update).
fn side_by_side_runs_keep_both_failures() -> TestResult {
    const ROUNDS: usize = 4;
    for round in 0..ROUNDS {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        let wait = |name: &str| {
            format!(
                "title: {name}\nparams:\n  n: [1, 2]\ncode: |\n  import os, time\n  open(os.path.join({root:?}, '{name}-%d' % n), 'w').close()\n  deadline = time.time() + 30\n  while len([f for f in os.listdir({root:?}) if '-' in f]) < 4 and time.time() < deadline:\n      time.sleep(0.005)\n  raise ValueError('{name} fails')\n",
                root = path_str(d)
            )
        };
        std::fs::create_dir_all(d.join("cases"))?;
        std::fs::write(d.join("cases/left.yaml"), wait("left"))?;
        std::fs::write(d.join("cases/right.yaml"), wait("right"))?;
        std::fs::write(d.join("cases/fine.yaml"), "title: fine\ncode: |\n  pass\n")?;
        let start = |keyword: &str| {
            let mut args = python_args(&["3.12"]);
            args.extend(["cases", "-k", keyword, "-q", "-j", "2"].map(String::from));
            crosspickle(d)
                .args(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
        };
        let (left, right) = (start("left")?, start("right")?);
        for (name, child) in [("left", left), ("right", right)] {
            let run = Run::from(child.wait_with_output()?);
            check(
                run.code == 1,
                format!(
                    "round {round}, the {name} half fails (exit 1): exit {}\n{}",
                    run.code, run.stderr
                ),
            )?;
        }
        // The record, counted by --lf on a case it does not hold (which runs it, and passes).
        let mut args = python_args(&["3.12"]);
        args.extend(["cases", "-k", "fine", "--lf", "-q"].map(String::from));
        let after = Run::from(crosspickle(d).args(&args).output()?);
        after.expect_code(0)?;
        check(
            after.stderr.contains(
                "note: --last-failed: none of the 4 failing runs recorded from this folder is selected",
            ),
            format!(
                "round {round}: both halves' 2 failures recorded (4):\n{}",
                after.stderr
            ),
        )?;
    }
    Ok(())
}
