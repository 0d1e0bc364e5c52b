//! The GitHub Actions workflows of `docs/` run here: the `run:` blocks of their jobs, read from
//! the YAML, executed in order with bash as GitHub runs them (`bash -e`), a failed step
//! skipping the later ones that do not say `if: always()`.
//!
//! What GitHub would provide is stood in for, and nothing else:
//! - `actions/checkout`: a workspace folder holding what `crosspickle init` writes, plus a
//!   round-trip case and a case that fails on purpose;
//! - `actions/setup-python`: a folder at the front of `PATH` with this machine's interpreters
//!   under the names setup-python gives them (`python3.8`, `pypy3.11`, ...), and the job's
//!   `CROSSPICKLE_PYTHONS` set to the versions this machine has (the workflow's own list has
//!   PyPy 3.10 and 3.14t, which it has not);
//! - `actions/download-artifact` of the wheel and the "Install crosspickle" step (pip installing
//!   it): the binary under test on `PATH`; of the shards' results: the shard jobs' JSON copied;
//! - `actions/upload-artifact`: each of its `path:` lines must name files that exist;
//! - the variables: `GITHUB_ACTIONS=true`, `CI=true`, `GITHUB_WORKSPACE`, `GITHUB_STEP_SUMMARY`,
//!   `GITHUB_OUTPUT`, `GITHUB_ENV` (empty files), `RUNNER_TEMP`, and `${{ matrix.NAME }}` in a
//!   step's `env:` (any other expression in a `run:` block or a step's `env:` fails the test).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Trial;
use serde_norway::Value;

use crate::github::{annotations, line_of};
use crate::support::*;

/// The interpreters the workflow lists, as setup-python names them, with what stands in for
/// each here (`python()`'s names); `None`: this machine has no such build.
const SETUP_PYTHON: &[(&str, Option<&str>)] = &[
    ("pypy3.10", None),
    ("pypy3.11", Some("pypy3.11")),
    ("3.14t", None),
    ("3.8", Some("3.8")),
    ("3.9", Some("3.9")),
    ("3.10", Some("3.10")),
    ("3.11", Some("3.11")),
    ("3.12", Some("3.12")),
    ("3.13", Some("3.13")),
    ("3.14", Some("3.14")),
];

/// The sharded workflow needs `--partition` (another branch's work until it is merged).
fn partition_trial(name: &str, test: fn() -> TestResult) -> Trial {
    let help = Command::new(bin()).args(["run", "--help"]).output();
    let knows = help.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--partition"));
    let t = trial(name, &["3.8", "3.12", "3.13"], test);
    if knows {
        t
    } else {
        t.with_kind("needs run --partition").with_ignored_flag(true)
    }
}

const ROUND_TRIP: &str = r#"title: a list made by one Python, loaded by every other
dump: |
  import pickle
  data = pickle.dumps([1, "two", 3.0], protocol=2)
load: |
  import pickle
  assert pickle.loads(data) == [1, "two", 3.0]
"#;

const FAILING: &str = r#"title: a rule that expects an error that does not happen
code: |
  import pickle
  pickle.dumps(1, protocol=2)
expect:
  - python: ">=3.9"
    outcome: error
    exception: ValueError
"#;

fn workflow(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(name);
    serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Where a workflow runs here: the workspace, PATH's stand-ins, the runner's files.
struct Runner {
    _root: tempfile::TempDir,
    workspace: PathBuf,
    bin: PathBuf,
    temp: PathBuf,
    /// The versions of the workflow's list that this machine has, one a line.
    pythons: String,
}

impl Runner {
    fn new() -> Runner {
        let root = tempfile::tempdir().unwrap();
        let (workspace, bin, temp) = (
            root.path().join("workspace"),
            root.path().join("bin"),
            root.path().join("runner-temp"),
        );
        for d in [&workspace, &bin, &temp] {
            std::fs::create_dir_all(d).unwrap();
        }
        let init = crosspickle(&workspace).arg("init").output().unwrap();
        assert!(init.status.success(), "{init:?}");
        for (file, text) in [("round-trip.yaml", ROUND_TRIP), ("failing.yaml", FAILING)] {
            std::fs::write(workspace.join("cases").join(file), text).unwrap();
        }
        std::os::unix::fs::symlink(super::support::bin(), bin.join("crosspickle")).unwrap();
        let mut pythons = String::new();
        for (version, here) in SETUP_PYTHON {
            let Some(path) = here.and_then(python) else {
                continue;
            };
            let exe = if version.starts_with("pypy") {
                version.to_string()
            } else {
                format!("python{version}")
            };
            std::os::unix::fs::symlink(path, bin.join(exe)).unwrap();
            pythons.push_str(&format!("{version}\n"));
        }
        Runner {
            _root: root,
            workspace,
            bin,
            temp,
            pythons,
        }
    }

    /// The environment of a job's steps, GitHub's variables stood in for.
    fn env(&self, job: &Value, summary: &Path) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        if let Some(map) = job["env"].as_mapping() {
            for (k, v) in map {
                let value = v.as_str().map(String::from).unwrap_or_else(|| scalar(v));
                env.insert(k.as_str().unwrap().to_string(), value);
            }
        }
        env.insert("CROSSPICKLE_PYTHONS".into(), self.pythons.clone());
        let files = |name: &str| {
            let p = self.temp.join(name);
            std::fs::write(&p, "").unwrap();
            p.display().to_string()
        };
        env.insert("GITHUB_OUTPUT".into(), files("output"));
        env.insert("GITHUB_ENV".into(), files("env"));
        env.insert("GITHUB_STEP_SUMMARY".into(), summary.display().to_string());
        env.insert("GITHUB_ACTIONS".into(), "true".into());
        env.insert("CI".into(), "true".into());
        env.insert("GITHUB_WORKSPACE".into(), path_str(&self.workspace));
        env.insert("RUNNER_TEMP".into(), path_str(&self.temp));
        let path = std::env::var("PATH").unwrap_or_default();
        env.insert("PATH".into(), format!("{}:{path}", self.bin.display()));
        env
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => serde_norway::to_string(other).unwrap().trim().to_string(),
    }
}

/// What one step did.
struct Step {
    name: String,
    code: i32,
    stdout: String,
    stderr: String,
}

/// Run the steps of `job` in the workspace with `matrix`; `download` stands in for a
/// download-artifact step other than the wheel's. Returns every `run:` step that ran.
fn run_job(
    runner: &Runner,
    job: &Value,
    matrix: &BTreeMap<&str, String>,
    summary: &Path,
    download: &mut dyn FnMut(&Value),
) -> Result<Vec<Step>, String> {
    let env = runner.env(job, summary);
    let mut failed = false;
    let mut ran = Vec::new();
    for step in job["steps"].as_sequence().unwrap() {
        let always = step["if"].as_str().is_some_and(|c| c.contains("always()"));
        if failed && !always {
            continue;
        }
        if let Some(action) = step["uses"].as_str() {
            if action.starts_with("actions/upload-artifact") {
                uploaded(runner, &step["with"])?;
            } else if action.starts_with("actions/download-artifact")
                && step["with"]["name"].as_str() != Some("crosspickle-wheel")
            {
                download(&step["with"]);
            }
            continue;
        }
        let script = step["run"]
            .as_str()
            .ok_or("a step with neither uses nor run")?;
        if script.contains("pip install") {
            continue; // the wheel's install: the binary under test is on PATH
        }
        if script.contains("${{") {
            return Err(format!("an expression in a run: block: {script}"));
        }
        let mut cmd = Command::new("bash");
        cmd.arg("-e").arg("-c").arg(script);
        cmd.current_dir(&runner.workspace).env_clear().envs(&env);
        for key in ["HOME", "CROSSPICKLE_NEWEST_PYTHONS"] {
            if let Ok(v) = std::env::var(key) {
                cmd.env(key, v);
            }
        }
        let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("probe-cache");
        cmd.env("CROSSPICKLE_CACHE_DIR", cache);
        for (k, v) in step["env"].as_mapping().into_iter().flatten() {
            cmd.env(k.as_str().unwrap(), step_env(v, matrix)?);
        }
        let out = cmd.output().map_err(|e| e.to_string())?;
        let done = Step {
            name: step["name"].as_str().unwrap_or("").to_string(),
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        failed |= done.code != 0;
        ran.push(done);
    }
    Ok(ran)
}

/// A step's `env:` value, `${{ matrix.NAME }}` filled in.
fn step_env(v: &Value, matrix: &BTreeMap<&str, String>) -> Result<String, String> {
    let text = v.as_str().map(String::from).unwrap_or_else(|| scalar(v));
    let Some(inner) = text
        .strip_prefix("${{")
        .and_then(|t| t.strip_suffix("}}"))
        .map(str::trim)
    else {
        return if text.contains("${{") {
            Err(format!(
                "an expression this test cannot stand in for: {text}"
            ))
        } else {
            Ok(text)
        };
    };
    inner
        .strip_prefix("matrix.")
        .and_then(|name| matrix.get(name).cloned())
        .ok_or_else(|| format!("an expression this test cannot stand in for: {text}"))
}

/// upload-artifact's stand-in: every `path:` line names files that exist (a glob's folder
/// holds a file matching it).
fn uploaded(runner: &Runner, with: &Value) -> Result<(), String> {
    for line in with["path"].as_str().unwrap_or("").lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let path = runner.workspace.join(line);
        let found = match line.split_once('*') {
            None => path.exists(),
            Some((before, after)) => {
                let (dir, prefix) = match before.rsplit_once('/') {
                    Some((d, p)) => (runner.workspace.join(d), p.to_string()),
                    None => (runner.workspace.clone(), before.to_string()),
                };
                std::fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        name.starts_with(&prefix) && name.ends_with(after)
                    })
            }
        };
        if !found {
            return Err(format!("upload-artifact: nothing at {line}"));
        }
    }
    Ok(())
}

fn step<'a>(steps: &'a [Step], name: &str) -> Result<&'a Step, String> {
    steps
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("no step `{name}` ran"))
}

/// The job's setup-python step installs exactly the list the issue asks for, from the job's
/// `CROSSPICKLE_PYTHONS`.
fn check_the_list(job: &Value) -> TestResult {
    let setup = job["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/setup-python"))
        })
        .ok_or("no setup-python step")?;
    check(
        setup["with"]["python-version"].as_str() == Some("${{ env.CROSSPICKLE_PYTHONS }}"),
        format!("{:?}", setup["with"]),
    )?;
    let listed: Vec<&str> = job["env"]["CROSSPICKLE_PYTHONS"]
        .as_str()
        .unwrap_or("")
        .lines()
        .collect();
    let wanted: Vec<&str> = SETUP_PYTHON.iter().map(|(v, _)| *v).collect();
    check(listed == wanted, format!("{listed:?}"))
}

/// What a workspace's results must show: every interpreter of the list here, round trips
/// between two different ones, the failing case annotated on its rule's line.
fn check_results(runner: &Runner, json: &serde_json::Value, stdout: &str) -> TestResult {
    let here = runner.pythons.lines().count();
    let interpreters = json["interpreters"].as_array().map_or(0, Vec::len);
    check(
        interpreters == here,
        format!("{interpreters} interpreters, {here} set up"),
    )?;
    let runs = runs(json);
    let pairs: Vec<_> = runs
        .iter()
        .filter(|r| r["case"] == "round-trip" && r["verdict"] == "ok")
        .filter(|r| r["dump_python"] != r["load_python"] && r["dump_python"].is_string())
        .collect();
    check(
        pairs.len() == here * (here - 1),
        format!("{} round trips between two interpreters", pairs.len()),
    )?;
    let found = annotations(stdout);
    let on_rule = line_of(&runner.workspace, "cases/failing.yaml", "- python:").to_string();
    check(
        found.len() == 1
            && found[0].kind == "error"
            && found[0].properties.get("file").map(String::as_str) == Some("cases/failing.yaml")
            && found[0].properties.get("line") == Some(&on_rule)
            && found[0].properties["title"].starts_with("crosspickle: fixed in failing ("),
        format!("{found:#?}"),
    )
}

/// The summary holds the Markdown matrix: a column per interpreter, a row per producer of the
/// round trip, the failing case's row with its ⭕ (fixed) cells.
fn check_summary(runner: &Runner, markdown: &str) -> TestResult {
    let here = runner.pythons.lines().count();
    let rows: Vec<&str> = markdown.lines().filter(|l| l.starts_with("| ")).collect();
    let header = rows.first().copied().unwrap_or("");
    let producers = rows
        .iter()
        .filter(|r| r.starts_with("| round-trip ") && r.contains(" -\\> |"))
        .count();
    let failing = rows.iter().find(|r| r.starts_with("| failing |"));
    check(
        markdown.starts_with("## crosspickle results")
            && header.starts_with("| case |")
            && header.matches(" | ").count() == here
            && producers == here
            && failing.is_some_and(|r| r.contains('⭕')),
        format!("the summary: {markdown}"),
    )
}

trial!(
    one_job_runs_every_python_here,
    needs = &["3.8", "3.12", "3.13"]
);
fn one_job_runs_every_python_here() -> TestResult {
    let wf = workflow("github-actions.yml");
    let job = &wf["jobs"]["cases"];
    check_the_list(job)?;
    let runner = Runner::new();
    let summary = runner.temp.join("step-summary.md");
    std::fs::write(&summary, "").unwrap();
    let steps = run_job(&runner, job, &BTreeMap::new(), &summary, &mut |_| {})?;
    let named = step(&steps, "Name the interpreters")?;
    check(
        named.code == 0,
        format!("{}\n{}", named.stdout, named.stderr),
    )?;
    let run = step(&steps, "Run the cases")?;
    // 1: the failing case fails the job, after the summary was written.
    check(
        run.code == 1,
        format!("exit {}\n{}\n{}", run.code, run.stdout, run.stderr),
    )?;
    check_summary(&runner, &std::fs::read_to_string(&summary).unwrap())?;
    let json = json_at(&runner.workspace.join("crosspickle.json"));
    check_results(&runner, &json, &run.stdout)
}

trial!(shards_run_every_python_here_and_merge, by = partition_trial);
fn shards_run_every_python_here_and_merge() -> TestResult {
    let wf = workflow("github-actions-shards.yml");
    let cases = &wf["jobs"]["cases"];
    check_the_list(cases)?;
    let runner = Runner::new();
    let summary = runner.temp.join("step-summary.md");
    let shards: Vec<String> = cases["strategy"]["matrix"]["shard"]
        .as_sequence()
        .ok_or("no shard matrix")?
        .iter()
        .map(scalar)
        .collect();
    check(
        shards.len().to_string() == scalar(&cases["env"]["CROSSPICKLE_SHARDS"]),
        "the matrix lists CROSSPICKLE_SHARDS shards",
    )?;
    let mut stdout = String::new();
    for shard in &shards {
        std::fs::write(&summary, "").unwrap();
        let matrix = BTreeMap::from([("shard", shard.clone())]);
        let steps = run_job(&runner, cases, &matrix, &summary, &mut |_| {})?;
        let run = step(&steps, "Run the cases")?;
        check(run.code <= 1, format!("{}\n{}", run.stdout, run.stderr))?;
        stdout.push_str(&run.stdout);
    }
    // The report job, in a workspace of its own that holds the shards' results.
    let report = &wf["jobs"]["report"];
    std::fs::write(&summary, "").unwrap();
    let from = runner.workspace.clone();
    let steps = run_job(&runner, report, &BTreeMap::new(), &summary, &mut |with| {
        let dir = from.join(with["path"].as_str().unwrap());
        std::fs::create_dir_all(&dir).unwrap();
        for e in std::fs::read_dir(&from).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("crosspickle-shard-") {
                std::fs::copy(e.path(), dir.join(&name)).unwrap();
            }
        }
    })?;
    let merge = step(&steps, "Merge")?;
    check(
        merge.code == 1,
        format!("{}\n{}", merge.stdout, merge.stderr),
    )?;
    check(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("round-trip"),
        "the merged summary",
    )?;
    let json = json_at(&runner.workspace.join("crosspickle.json"));
    check_results(&runner, &json, &stdout)
}
