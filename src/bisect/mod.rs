//! Bisect: where did a case's outcome change? The three searches ([`interpreters`] across the
//! installed interpreters, [`package`] across a package's releases, [`commits`] across a CPython
//! checkout's commits) and the `git bisect run` helper ([`step`]) share what lives here: the
//! target (one case with one params combination), the outcome that is compared (its kind and
//! exception type), one run on one interpreter through the runner, the binary [`Search`] with
//! skips, and the [`Report`] every mode prints and writes as JSON.

pub mod commits;
pub mod interpreters;
pub mod package;
pub mod step;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::case::{find_case_files, load_cases, Case, OutcomeKind, Params};
use crate::errors::Error;
use crate::outcome::Observed;
use crate::python::Interpreter;
use crate::run::{execute, ExecuteOptions, Plan};
use crate::verdict::Verdict;

/// The one case and params combination a bisect runs.
#[derive(Debug, Clone)]
pub struct Target {
    pub case: Arc<Case>,
    pub params: Params,
    /// Overrides the case's own time limit.
    pub timeout: Option<f64>,
}

impl Target {
    /// `case` is a case file, or a case id looked up in `paths` (default `cases/`); `params`
    /// (`k=v,k2=v2`) picks one combination and may be left out when the case has only one.
    pub fn load(case: &str, paths: &[PathBuf], params: Option<&str>) -> Result<Target, Error> {
        let as_path = Path::new(case);
        // A case file: a path to one, or a name ending in .yaml or .yml; anything else is an id.
        let looks_like_file = case.contains('/')
            || matches!(
                as_path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            );
        let found = if looks_like_file && as_path.is_file() {
            load_cases(&[as_path.to_path_buf()])?.into_iter().next()
        } else {
            let paths = if paths.is_empty() {
                vec![PathBuf::from("cases")]
            } else {
                paths.to_vec()
            };
            let cases = load_cases(&find_case_files(&paths)?)?;
            let found = cases.into_iter().find(|c| c.id == case);
            if found.is_none() {
                return Err(Error::Usage(format!(
                    "no case `{case}`: give a case file, or a case id found under {}",
                    paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            found
        };
        let case = found.ok_or_else(|| Error::Usage(format!("{case}: holds no case")))?;
        if case.is_round_trip() {
            return Err(Error::Usage(format!(
                "case `{}` is a round trip (dump/load): bisect runs `code` cases only",
                case.id
            )));
        }
        let params = pick_params(&case, params)?;
        Ok(Target {
            case: Arc::new(case),
            params,
            timeout: None,
        })
    }

    pub fn name(&self) -> String {
        self.case.display_name(&self.params)
    }
}

/// The one params combination `wanted` (`k=v,...`) selects.
fn pick_params(case: &Case, wanted: Option<&str>) -> Result<Params, Error> {
    let combos = case.param_combinations();
    let mut pairs: Vec<(String, String)> = Vec::new();
    for piece in wanted
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (k, v) = piece
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--params: `{piece}` is not name=value")))?;
        if !case.params.contains_key(k.trim()) {
            return Err(Error::Usage(format!(
                "--params: case `{}` has no param `{}`",
                case.id,
                k.trim()
            )));
        }
        pairs.push((k.trim().to_string(), v.trim().to_string()));
    }
    let matching: Vec<Params> = combos
        .into_iter()
        .filter(|p| {
            pairs
                .iter()
                .all(|(k, v)| p.get(k).is_some_and(|x| x.to_string() == *v))
        })
        .collect();
    match matching.len() {
        1 => Ok(matching.into_iter().next().expect("one")),
        0 => Err(Error::Usage(format!(
            "--params: no combination of case `{}` has {}",
            case.id,
            wanted.unwrap_or("")
        ))),
        _ => Err(Error::Usage(format!(
            "case `{}` runs {} params combinations; pick one with --params, e.g. --params {}",
            case.id,
            matching.len(),
            matching[0]
        ))),
    }
}

/// What bisect compares: the outcome and the exception's type (not its message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutcomeKey {
    pub outcome: OutcomeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
}

impl OutcomeKey {
    pub fn of(observed: &Observed) -> Self {
        OutcomeKey {
            outcome: observed.outcome,
            exception: observed.exception.clone(),
        }
    }

    /// `pass`, `fail`, `error`, `error:ValueError`, `fail:AssertionError`, `crash`, `timeout`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (kind, exception) = match text.split_once(':') {
            Some((k, e)) => (
                k.trim(),
                Some(e.trim().to_string()).filter(|e| !e.is_empty()),
            ),
            None => (text.trim(), None),
        };
        let outcome = match kind {
            "pass" => OutcomeKind::Pass,
            "fail" => OutcomeKind::Fail,
            "error" => OutcomeKind::Error,
            "crash" => OutcomeKind::Crash,
            "timeout" => OutcomeKind::Timeout,
            other => {
                return Err(format!(
                    "unknown outcome `{other}`: one of pass, fail, error, crash, timeout, optionally with :ExceptionType"
                ))
            }
        };
        Ok(OutcomeKey { outcome, exception })
    }

    /// Does `observed` show this outcome? A key without an exception matches any exception; a
    /// bare exception name matches the last dotted part, as in `expect` rules.
    pub fn holds_for(&self, observed: &Observed) -> bool {
        self.outcome == observed.outcome
            && self.exception.as_deref().is_none_or(|want| {
                observed
                    .exception
                    .as_deref()
                    .is_some_and(|got| crate::verdict::exception_matches(want, got))
            })
    }
}

impl fmt::Display for OutcomeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.exception {
            Some(e) => write!(f, "{}: {e}", self.outcome),
            None => write!(f, "{}", self.outcome),
        }
    }
}

/// How a step turned out, relative to the outcome at the old end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepState {
    /// The old outcome.
    Old,
    /// Any other outcome.
    New,
    /// Could not be tested: no interpreter, no install, no build, or the case does not apply.
    Skip,
    /// Interpreter mode: every tested step is shown; there is no old or new there.
    Tested,
}

/// One step of the log.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The version, release or commit.
    pub label: String,
    /// The interpreter that ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    pub state: StepState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<OutcomeKey>,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened around it: `built in 21 s`, `environment cached`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
}

impl Step {
    pub fn tested(
        label: String,
        python: Option<String>,
        observed: Observed,
        state: StepState,
    ) -> Step {
        Step {
            label,
            python,
            state,
            outcome: Some(OutcomeKey::of(&observed)),
            reason: None,
            notes: Vec::new(),
            observed: Some(observed),
        }
    }

    pub fn skipped(label: String, python: Option<String>, reason: String) -> Step {
        Step {
            label,
            python,
            state: StepState::Skip,
            outcome: None,
            reason: Some(reason),
            notes: Vec::new(),
            observed: None,
        }
    }

    /// One line of the step log.
    pub fn line(&self) -> String {
        let what = match (&self.state, &self.observed, &self.reason) {
            (StepState::Skip, _, Some(r)) => format!("skip: {}", first_line(r)),
            (_, Some(o), _) => o.summary(),
            _ => String::new(),
        };
        let state = match self.state {
            StepState::Old => " [old]",
            StepState::New => " [new]",
            _ => "",
        };
        let notes = if self.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.notes.join("; "))
        };
        format!("{}{state}: {what}{notes}", self.label)
    }
}

fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    line.chars().take(400).collect()
}

/// One side of a boundary.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub label: String,
    pub outcome: OutcomeKey,
    /// The commit's subject, in commit mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// Where the outcome changed: the last version with the old outcome, the first with the new.
#[derive(Debug, Clone, Serialize)]
pub struct Boundary {
    pub last_old: Point,
    pub first_new: Point,
    /// Versions or commits between them that could not be tested: the change is at one of
    /// them or at `first_new`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub untested: Vec<String>,
}

impl Boundary {
    pub fn describe(&self) -> String {
        let with_subject = |p: &Point| match &p.subject {
            Some(s) => format!("{} \"{s}\"", p.label),
            None => p.label.clone(),
        };
        let mut s = format!(
            "{} -> {}: {} -> {}\n  last with the old outcome: {}\n  first with the new outcome: {}",
            self.last_old.label,
            self.first_new.label,
            self.last_old.outcome,
            self.first_new.outcome,
            with_subject(&self.last_old),
            with_subject(&self.first_new)
        );
        if !self.untested.is_empty() {
            s.push_str(&format!(
                "\n  could not test {} between them: the change is at one of them or at {}",
                self.untested.join(", "),
                self.first_new.label
            ));
        }
        s
    }
}

/// A bisect's result: what every mode prints and writes with `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `interpreters`, `package` or `commits`.
    pub mode: &'static str,
    pub case: String,
    pub params: Params,
    /// The package, or the CPython checkout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The interpreter of package mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// Every version or commit in the range, in order.
    pub candidates: Vec<String>,
    /// The steps in the order they ran.
    pub steps: Vec<Step>,
    pub boundaries: Vec<Boundary>,
    /// One sentence: what was found, or why nothing was.
    pub conclusion: String,
    /// Commit mode: how many builds ran (the other steps came from the cache).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builds: Option<usize>,
    pub duration_s: f64,
}

impl Report {
    /// The human summary printed after the step log.
    pub fn render(&self) -> String {
        let mut s = String::new();
        if self.boundaries.is_empty() {
            s.push_str(&format!("{}\n", self.conclusion));
        } else {
            s.push_str(&format!(
                "{} ({} change{}):\n",
                self.conclusion,
                self.boundaries.len(),
                if self.boundaries.len() == 1 { "" } else { "s" }
            ));
            for b in &self.boundaries {
                s.push_str(&format!("{}\n", b.describe()));
            }
        }
        s
    }

    pub fn write_json(&self, path: &Path) -> Result<(), Error> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a report serializes");
        bytes.push(b'\n');
        crate::report::write_atomic(path, &bytes)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }
}

/// Run the target on one interpreter through the runner: the observed outcome, or why it
/// could not run (the case does not apply, or the interpreter is broken).
pub async fn run_on(target: &Target, interpreter: &Interpreter) -> Result<Observed, String> {
    let results = run_on_many(target, std::slice::from_ref(interpreter), 1).await;
    results
        .into_iter()
        .next()
        .unwrap_or_else(|| Err("the run did not happen".into()))
}

/// Run the target on each interpreter, `jobs` at once; one result per interpreter, in order.
pub async fn run_on_many(
    target: &Target,
    interpreters: &[Interpreter],
    jobs: usize,
) -> Vec<Result<Observed, String>> {
    let wanted = target.params.clone();
    let keep = move |_: &Case, p: &Params| *p == wanted;
    let arcs: Vec<Arc<Interpreter>> = interpreters.iter().cloned().map(Arc::new).collect();
    let plan = Plan::build(std::slice::from_ref(&target.case), &arcs, None, None, &keep);
    let options = ExecuteOptions {
        jobs: jobs.max(1),
        timeout: target.timeout,
        ..ExecuteOptions::default()
    };
    let results = match execute(&plan, &options, CancellationToken::new(), &mut |_| {}).await {
        Ok(r) => r,
        Err(e) => {
            return interpreters
                .iter()
                .map(|_| Err(format!("cannot prepare the run: {e}")))
                .collect()
        }
    };
    plan.runs
        .iter()
        .map(|run| {
            let record = results
                .runs
                .iter()
                .find(|r| r.python == run.interpreter.label);
            match record {
                None => Err("the run did not finish".to_string()),
                Some(r) if r.verdict == Verdict::Skipped || r.verdict == Verdict::EnvError => {
                    Err(r.reason.clone().unwrap_or_else(|| r.verdict.to_string()))
                }
                Some(r) => r
                    .observed
                    .clone()
                    .ok_or_else(|| "no outcome recorded".to_string()),
            }
        })
        .collect()
}

/// Binary search over candidates `0..n` where `0` shows the old outcome and `n - 1` a new one;
/// candidates that cannot be tested are skipped, as `git bisect skip` does.
#[derive(Debug, Clone)]
pub struct Search {
    /// The last candidate known to show the old outcome.
    pub last_old: usize,
    /// The first candidate known to show a new outcome.
    pub first_new: usize,
    skipped: BTreeSet<usize>,
}

impl Search {
    pub fn new(n: usize) -> Search {
        assert!(n >= 2, "a search needs two ends");
        Search {
            last_old: 0,
            first_new: n - 1,
            skipped: BTreeSet::new(),
        }
    }

    /// The next candidate to test: the untested one nearest the middle of the open range.
    pub fn next(&self) -> Option<usize> {
        let open: Vec<usize> = (self.last_old + 1..self.first_new)
            .filter(|i| !self.skipped.contains(i))
            .collect();
        if open.is_empty() {
            return None;
        }
        let middle = (self.last_old + self.first_new) / 2;
        open.into_iter().min_by_key(|&i| (i.abs_diff(middle), i))
    }

    pub fn old(&mut self, i: usize) {
        self.last_old = i;
    }

    pub fn new_outcome(&mut self, i: usize) {
        self.first_new = i;
    }

    pub fn skip(&mut self, i: usize) {
        self.skipped.insert(i);
    }

    /// Skipped candidates between the two ends: the change may be at any of them.
    pub fn untested(&self) -> Vec<usize> {
        (self.last_old + 1..self.first_new)
            .filter(|i| self.skipped.contains(i))
            .collect()
    }
}

/// Tests one candidate of a package or commit search.
#[allow(async_fn_in_trait)]
pub trait Tester {
    /// A step with the candidate's outcome, or a skip with its reason.
    async fn test(&mut self, index: usize) -> Step;
}

/// What a package or commit search found.
pub struct Found {
    pub steps: Vec<Step>,
    pub boundary: Option<Boundary>,
    pub conclusion: String,
}

/// Test both ends, then binary-search between them: the first candidate whose outcome differs
/// from the first candidate's. `labels` name the candidates in order, oldest first.
pub async fn search_range<T: Tester>(
    labels: &[String],
    tester: &mut T,
    on_step: &mut dyn FnMut(&Step),
) -> Found {
    let mut steps: Vec<Step> = Vec::new();
    let mut record = |mut step: Step, state: Option<StepState>, steps: &mut Vec<Step>| {
        if let (Some(s), true) = (state, step.outcome.is_some()) {
            step.state = s;
        }
        on_step(&step);
        steps.push(step.clone());
        step
    };
    let n = labels.len();
    if n < 2 {
        return Found {
            steps,
            boundary: None,
            conclusion: format!("{n} candidate in the range: nothing to bisect"),
        };
    }
    let first = record(tester.test(0).await, Some(StepState::Old), &mut steps);
    let Some(old) = first.outcome.clone() else {
        let reason = first.reason.unwrap_or_default();
        return Found {
            steps,
            boundary: None,
            conclusion: format!(
                "the good end {} could not be tested: {}",
                labels[0],
                first_line(&reason)
            ),
        };
    };
    let last = tester.test(n - 1).await;
    let last_state = match &last.outcome {
        Some(o) if *o == old => StepState::Old,
        _ => StepState::New,
    };
    let last = record(last, Some(last_state), &mut steps);
    let Some(new_end) = last.outcome.clone() else {
        let reason = last.reason.unwrap_or_default();
        return Found {
            steps,
            boundary: None,
            conclusion: format!(
                "the bad end {} could not be tested: {}",
                labels[n - 1],
                first_line(&reason)
            ),
        };
    };
    if new_end == old {
        return Found {
            steps,
            boundary: None,
            conclusion: format!(
                "no change: {} and {} both show {old}",
                labels[0],
                labels[n - 1]
            ),
        };
    }
    let mut search = Search::new(n);
    let mut outcomes: Vec<Option<OutcomeKey>> = vec![None; n];
    outcomes[0] = Some(old.clone());
    outcomes[n - 1] = Some(new_end);
    while let Some(i) = search.next() {
        let step = tester.test(i).await;
        let state = match &step.outcome {
            None => StepState::Skip,
            Some(o) if *o == old => StepState::Old,
            Some(_) => StepState::New,
        };
        let step = record(step, Some(state), &mut steps);
        match state {
            StepState::Skip => search.skip(i),
            StepState::Old => search.old(i),
            _ => search.new_outcome(i),
        }
        outcomes[i] = step.outcome;
    }
    let point = |i: usize| Point {
        label: labels[i].clone(),
        outcome: outcomes[i]
            .clone()
            .expect("both ends of the boundary were tested"),
        subject: None,
    };
    let boundary = Boundary {
        last_old: point(search.last_old),
        first_new: point(search.first_new),
        untested: search
            .untested()
            .into_iter()
            .map(|i| labels[i].clone())
            .collect(),
    };
    let conclusion = if boundary.untested.is_empty() {
        format!("the outcome changed at {}", boundary.first_new.label)
    } else {
        format!(
            "the outcome changed after {}, at one of {} untested or at {}",
            boundary.last_old.label,
            boundary.untested.len(),
            boundary.first_new.label
        )
    };
    Found {
        steps,
        boundary: Some(boundary),
        conclusion,
    }
}

/// A short stable hash (FNV-1a, 64 bits, hex) for cache keys.
pub fn short_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Where bisect keeps its environments and builds: `<cache>/bisect`.
pub fn cache_root(cache_dir: &Path) -> PathBuf {
    cache_dir.join("bisect")
}

/// Run a setup command (pip, git, configure, make) with its output appended to `log`; on
/// failure, the error names the command and quotes the log's last lines.
pub async fn run_logged(
    command: &mut tokio::process::Command,
    what: &str,
    log: &Path,
) -> Result<(), String> {
    use std::io::Write;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let _ = writeln!(&file, "$ {what}");
    let err_file = file
        .try_clone()
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let status = command
        .stdin(std::process::Stdio::null())
        .stdout(file)
        .stderr(err_file)
        .kill_on_drop(true)
        .status()
        .await
        .map_err(|e| format!("cannot start `{what}`: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let last = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("$ "))
        .unwrap_or("")
        .to_string();
    let last: String = last.chars().take(300).collect();
    Err(format!(
        "`{what}` failed ({status}): {last} (log: {})",
        log.display()
    ))
}

/// Run a command and return its stdout; the error quotes stderr.
pub async fn output_of(
    command: &mut tokio::process::Command,
    what: &str,
) -> Result<String, String> {
    let out = command
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("cannot start `{what}`: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "`{what}` failed ({}): {}",
            out.status,
            stderr.trim()
        ))
    }
}

/// Seconds as the step log shows them.
pub fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_search(n: usize, change_at: usize, skip: &[usize]) -> (usize, usize, Vec<usize>, usize) {
        let mut s = Search::new(n);
        let mut steps = 0;
        while let Some(i) = s.next() {
            steps += 1;
            if skip.contains(&i) {
                s.skip(i);
            } else if i < change_at {
                s.old(i);
            } else {
                s.new_outcome(i);
            }
        }
        (s.last_old, s.first_new, s.untested(), steps)
    }

    #[test]
    fn finds_the_change() {
        for n in 2..40 {
            for change in 1..n {
                let (old, new, untested, steps) = run_search(n, change, &[]);
                assert_eq!((old, new), (change - 1, change), "n={n} change={change}");
                assert!(untested.is_empty());
                assert!(
                    steps <= (n as f64).log2().ceil() as usize + 1,
                    "n={n} steps={steps}"
                );
            }
        }
    }

    #[test]
    fn skips_like_git_bisect() {
        // The change is at 5; 5 cannot be tested: the answer is "4, then one of 5 or 6".
        let (old, new, untested, _) = run_search(10, 5, &[5]);
        assert_eq!((old, new, untested), (4, 6, vec![5]));
        // A skipped candidate away from the change does not matter.
        let (old, new, untested, _) = run_search(10, 7, &[3, 4]);
        assert_eq!((old, new, untested), (6, 7, vec![]));
    }

    #[test]
    fn outcome_keys() {
        let k = OutcomeKey::parse("error:PicklingError").unwrap();
        assert_eq!(k.outcome, OutcomeKind::Error);
        assert_eq!(k.exception.as_deref(), Some("PicklingError"));
        assert_eq!(OutcomeKey::parse("fail").unwrap().to_string(), "fail");
        assert!(OutcomeKey::parse("boom").is_err());
        let observed = Observed {
            exception: Some("_pickle.PicklingError".into()),
            ..Observed::new(OutcomeKind::Error, 0.0)
        };
        assert!(k.holds_for(&observed));
        assert!(OutcomeKey::parse("error").unwrap().holds_for(&observed));
        assert!(!OutcomeKey::parse("error:ValueError")
            .unwrap()
            .holds_for(&observed));
        assert_eq!(
            OutcomeKey::of(&observed).to_string(),
            "error: _pickle.PicklingError"
        );
    }
}
