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
//!   PyPy 3.10 and 3.14t, which it has not); with uv here, 3.12 is left out of that folder, as
//!   a version setup-python could not set up;
//! - `astral-sh/setup-uv`: uv (CROSSPICKLE_TEST_UV, else PATH's) in that folder, offline, with
//!   a local downloads list (`UV_PYTHON_DOWNLOADS_JSON_URL`) serving pyenv's 3.12 packed as
//!   uv's archives are, so that `--download-python auto` installs the missing 3.12 through the
//!   real uv into the job's crosspickle cache folder, and the run uses it;
//! - `actions/download-artifact` of the wheel and the "Install crosspickle" step (pip installing
//!   it): the binary under test on `PATH`; of the shards' results: the shard jobs' JSON copied;
//! - `actions/upload-artifact`: each of its `path:` lines must name files that exist;
//! - the variables: `GITHUB_ACTIONS=true`, `CI=true`, `GITHUB_WORKSPACE`, `GITHUB_STEP_SUMMARY`,
//!   `GITHUB_OUTPUT`, `GITHUB_ENV` (empty files), `RUNNER_TEMP`, a `HOME` of the runner's own,
//!   and `${{ matrix.NAME }}` in a step's `env:` (any other expression in a `run:` block or a
//!   step's `env:` fails the test).
//!
//! The build job's `Build the wheel` step is not run here: .ci/packaging runs it (it is how CI
//! builds the wheel it checks).

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
    /// The crosspickle cache folder of the runner's jobs (where uv installs).
    cache: PathBuf,
    /// The version served to uv from the local downloads list (setup-python "could not"
    /// set it up), when uv is here; uv's settings for it.
    served: Option<Served>,
}

/// A version that uv installs from a local downloads list.
struct Served {
    /// As the workflow lists it: `3.12`.
    version: &'static str,
    /// Its full version: `3.12.1`.
    dotted: String,
    env: Vec<(String, String)>,
}

/// The version uv serves in place of setup-python.
const SERVED: &str = "3.12";

/// uv's stand-in: uv on PATH as `bin/uv`, and pyenv's `SERVED` packed as uv's archives are,
/// listed in a local downloads list, uv offline. None without uv or that interpreter.
fn serve(root: &Path, bin: &Path) -> Option<Served> {
    let uv = crate::download::which_uv()?;
    let python = python(SERVED)?;
    let install = python.parent()?.parent()?.to_path_buf();
    let archive = root.join(format!("cpython-{SERVED}-install_only.tar.gz"));
    let mut pack = Command::new(&python);
    pack.arg("-c")
        .arg(crate::download::PACK)
        .arg(&install)
        .arg(&archive);
    if let Ok(patchelf) = which::which("patchelf") {
        pack.arg(patchelf);
    }
    let packed = pack.output().ok()?;
    assert!(packed.status.success(), "packing {SERVED}: {packed:?}");
    let version = String::from_utf8_lossy(&packed.stdout).trim().to_string();
    let sha = crate::download::sha256_of(&archive);
    let list = root.join("downloads.json");
    std::fs::write(
        &list,
        crate::download::downloads_json(&version, &archive, &sha),
    )
    .unwrap();
    std::os::unix::fs::symlink(uv, bin.join("uv")).unwrap();
    let env = [
        ("UV_OFFLINE", "1".to_string()),
        ("UV_NO_CONFIG", "1".to_string()),
        ("UV_CACHE_DIR", path_str(&root.join("uv-cache"))),
        (
            "UV_PYTHON_DOWNLOADS_JSON_URL",
            format!("file://{}", list.display()),
        ),
    ];
    Some(Served {
        version: SERVED,
        dotted: version.replace(' ', "."),
        env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    })
}

impl Runner {
    fn new() -> Runner {
        let root = tempfile::tempdir().unwrap();
        let (workspace, bin, temp, home) = (
            root.path().join("workspace"),
            root.path().join("bin"),
            root.path().join("runner-temp"),
            root.path().join("home"),
        );
        for d in [&workspace, &bin, &temp, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        let init = crosspickle(&workspace).arg("init").output().unwrap();
        assert!(init.status.success(), "{init:?}");
        for (file, text) in [("round-trip.yaml", ROUND_TRIP), ("failing.yaml", FAILING)] {
            std::fs::write(workspace.join("cases").join(file), text).unwrap();
        }
        std::os::unix::fs::symlink(super::support::bin(), bin.join("crosspickle")).unwrap();
        let served = serve(root.path(), &bin);
        let mut pythons = String::new();
        for (version, here) in SETUP_PYTHON {
            let Some(path) = here.and_then(python) else {
                continue;
            };
            if served.as_ref().is_some_and(|s| s.version == *version) {
                pythons.push_str(&format!("{version}\n"));
                continue; // setup-python "could not": uv installs it
            }
            let exe = if version.starts_with("pypy") {
                version.to_string()
            } else {
                format!("python{version}")
            };
            std::os::unix::fs::symlink(path, bin.join(exe)).unwrap();
            pythons.push_str(&format!("{version}\n"));
        }
        Runner {
            cache: root.path().join("cache"),
            _root: root,
            workspace,
            bin,
            temp,
            pythons,
            served,
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
        env.insert("HOME".into(), path_str(&self.temp.with_file_name("home")));
        env.insert("CROSSPICKLE_CACHE_DIR".into(), path_str(&self.cache));
        for (k, v) in self.served.iter().flat_map(|s| &s.env) {
            env.insert(k.clone(), v.clone());
        }
        // The machine's PATH after the stand-ins, less pyenv's shims (a runner has none, and
        // with the runner's HOME they find no version).
        let path = std::env::var_os("PATH").unwrap_or_default();
        let kept = std::env::split_paths(&path).filter(|d| !d.ends_with("shims"));
        let path = std::env::join_paths(std::iter::once(self.bin.clone()).chain(kept)).unwrap();
        env.insert("PATH".into(), path.to_string_lossy().into_owned());
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
        if let Ok(v) = std::env::var("CROSSPICKLE_NEWEST_PYTHONS") {
            cmd.env("CROSSPICKLE_NEWEST_PYTHONS", v);
        }
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
    // What setup-python cannot give, uv installs: the job goes on, with uv set up.
    check(
        setup["continue-on-error"].as_bool() == Some(true),
        "setup-python's step is not continue-on-error",
    )?;
    let steps = job["steps"].as_sequence().unwrap();
    check(
        steps.iter().any(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("astral-sh/setup-uv@"))
        }),
        "no astral-sh/setup-uv step",
    )?;
    check(
        steps.iter().any(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("--download-python auto"))
        }),
        "no step runs with --download-python auto",
    )?;
    let listed: Vec<&str> = job["env"]["CROSSPICKLE_PYTHONS"]
        .as_str()
        .unwrap_or("")
        .lines()
        .collect();
    let wanted: Vec<&str> = SETUP_PYTHON.iter().map(|(v, _)| *v).collect();
    check(listed == wanted, format!("{listed:?}"))
}

/// The version setup-python "could not" set up was warned of, installed by uv into the
/// runner's cache folder (`installed`: this job's run said so), and run on.
fn check_served(runner: &Runner, json: &serde_json::Value, named: &Step) -> TestResult {
    let Some(served) = &runner.served else {
        return Ok(());
    };
    let warning = format!(
        "::warning::python{v} is not on PATH (actions/setup-python did not set up {v})",
        v = served.version
    );
    check(
        named.stdout.contains(&warning),
        format!("no warning for {}:\n{}", served.version, named.stdout),
    )?;
    let downloads = std::fs::canonicalize(runner.cache.join("pythons"))
        .map_err(|e| format!("nothing installed in the cache's pythons/: {e}"))?;
    let from_uv: Vec<_> = json["interpreters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["sources"] == serde_json::json!(["uv"]))
        .collect();
    check(
        from_uv.len() == 1
            && from_uv[0]["label"] == format!("cpython-{}", served.dotted)
            && Path::new(from_uv[0]["executable"].as_str().unwrap_or("")).starts_with(&downloads),
        format!("the interpreters found by uv: {from_uv:?}"),
    )
}

/// What a workspace's results must show: every interpreter of the list here, round trips
/// between two different ones, the failing case annotated on its rule's line.
fn check_results(runner: &Runner, json: &serde_json::Value, stdout: &str) -> TestResult {
    let here = runner.pythons.lines().count();
    let interpreters = json["interpreters"].as_array().map_or(0, Vec::len);
    check(
        interpreters == here,
        format!("{interpreters} interpreters, {here} listed"),
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
    if let Some(served) = &runner.served {
        let note = format!("note: installed cpython-{} at ", served.dotted);
        check(
            run.stderr.contains(&note),
            format!("uv's install is not told:\n{}", run.stderr),
        )?;
    }
    let json = json_at(&runner.workspace.join("crosspickle.json"));
    check_served(&runner, &json, named)?;
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
    let mut first_named = None;
    for shard in &shards {
        std::fs::write(&summary, "").unwrap();
        let matrix = BTreeMap::from([("shard", shard.clone())]);
        let mut steps = run_job(&runner, cases, &matrix, &summary, &mut |_| {})?;
        let run = step(&steps, "Run the cases")?;
        check(run.code <= 1, format!("{}\n{}", run.stdout, run.stderr))?;
        stdout.push_str(&run.stdout);
        if first_named.is_none() {
            let at = steps.iter().position(|s| s.name == "Name the interpreters");
            first_named = at.map(|i| steps.swap_remove(i));
        }
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
    check_served(
        &runner,
        &json,
        &first_named.ok_or("no step `Name the interpreters` ran")?,
    )?;
    check_results(&runner, &json, &stdout)
}

trial!(
    the_recorded_job_loads_on_one_python,
    needs = &["2.7", "3.8", "3.13"]
);
/// The workflow's `recorded` job: without cases/pickles/ it says how to record and passes; with
/// the round trip recorded on 2.7 and 3.8, it runs on the one Python it sets up (3.13 here, as
/// the job's `CROSSPICKLE_RECORDED_PYTHON`), every recorded producer's pickle loaded by it and
/// no other consumer, the summary written, and the failing case fails the job. The same for
/// the shards workflow's `recorded` job.
fn the_recorded_job_loads_on_one_python() -> TestResult {
    for file in ["github-actions.yml", "github-actions-shards.yml"] {
        recorded_job_loads_on_one_python(file)
            .map_err(|e| format!("{file}: {}", e.message().unwrap_or("")))?;
    }
    Ok(())
}

fn recorded_job_loads_on_one_python(file: &str) -> TestResult {
    let mut job = workflow(file)["jobs"]["recorded"].clone();
    check(
        job["needs"].as_str() == Some("build")
            && job["env"]["CROSSPICKLE_RECORDED_PYTHON"].as_str() == Some("3.12"),
        format!("the job: {job:?}"),
    )?;
    job["env"]["CROSSPICKLE_RECORDED_PYTHON"] = Value::String("3.13".into());
    let setups = job["steps"]
        .as_sequence()
        .ok_or("no steps")?
        .iter()
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/setup-python"))
        })
        .count();
    check(setups == 1, format!("one setup-python, not {setups}"))?;
    let runner = Runner::new();
    let summary = runner.temp.join("step-summary.md");
    std::fs::write(&summary, "").unwrap();
    // Without the folder: the notice, and nothing to upload (so the upload is left out here).
    let mut bare = job.clone();
    if let Some(steps) = bare["steps"].as_sequence_mut() {
        steps.retain(|s| {
            !s["uses"]
                .as_str()
                .is_some_and(|u| u.contains("upload-artifact"))
        });
    }
    let steps = run_job(&runner, &bare, &BTreeMap::new(), &summary, &mut |_| {})?;
    let load = step(&steps, "Load the recorded pickles")?;
    check(
        load.code == 0
            && load
                .stdout
                .starts_with("::notice::no recorded pickles (cases/pickles/manifest.json): run `crosspickle record`"),
        format!("exit {}\n{}\n{}", load.code, load.stdout, load.stderr),
    )?;
    let record = Run::from(
        crosspickle(&runner.workspace)
            .args(["record", "cases"])
            .args(python_args(&["2.7", "3.8"]))
            .output()?,
    );
    record.expect_code(0)?;
    let steps = run_job(&runner, &job, &BTreeMap::new(), &summary, &mut |_| {})?;
    let load = step(&steps, "Load the recorded pickles")?;
    check(
        load.code == 1,
        format!("exit {}\n{}\n{}", load.code, load.stdout, load.stderr),
    )?;
    let json = json_at(&runner.workspace.join("crosspickle-recorded.json"));
    let all = runs(&json);
    let consumers: std::collections::BTreeSet<&str> =
        all.iter().filter_map(|r| r["python"].as_str()).collect();
    check(
        consumers.len() == 1 && consumers.iter().all(|c| c.starts_with("cpython-3.13.")),
        format!("one consumer: {consumers:?}"),
    )?;
    let loaded: Vec<String> = all
        .iter()
        .filter(|r| r["case"] == "round-trip")
        .map(|r| {
            format!(
                "{}: {}",
                r["dump_python"].as_str().unwrap_or("?"),
                r["verdict"].as_str().unwrap_or("?")
            )
        })
        .collect();
    check(
        loaded.len() == 3
            && loaded[0].starts_with("cpython-3.13.")
            && loaded[1] == "recorded:cpython-2.7.18: ok"
            && loaded[2].starts_with("recorded:cpython-3.8.")
            && loaded.iter().all(|l| l.ends_with(": ok")),
        format!("the round trip's producers: {loaded:#?}"),
    )?;
    let markdown = std::fs::read_to_string(&summary)?;
    check(
        markdown.contains("recorded:cpython-2.7.18"),
        format!("the summary: {markdown}"),
    )
}
