//! The target of a bisect: one case with one params combination, loaded from a case file or
//! found by id, and run once per interpreter through the runner.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::case::{load_cases, Case, Params};
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
    /// `case` is a case file, or a case id (or a corpus path, `corpus:cases/gc/x.yaml`) looked up in
    /// `paths` and, with `corpus`, in the corpus shipped inside the binary; `params`
    /// (`k=v,k2=v2`) picks one combination and may be left out when the case has only one.
    pub fn load(
        case: &str,
        paths: &[PathBuf],
        corpus: bool,
        params: Option<&str>,
    ) -> Result<Target, Error> {
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
            let cases = crate::corpus::load(paths, corpus)?;
            let found = cases
                .into_iter()
                .find(|c| c.id == case || c.path.as_os_str() == case);
            if found.is_none() {
                let mut searched = Vec::new();
                if !paths.is_empty() {
                    let paths: Vec<String> =
                        paths.iter().map(|p| p.display().to_string()).collect();
                    searched.push(format!("under {}", paths.join(", ")));
                }
                if corpus {
                    searched.push("in the corpus (--corpus)".to_string());
                }
                return Err(Error::Usage(format!(
                    "no case `{case}`: give a case file, or a case id found {}",
                    searched.join(" or ")
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

    /// Run the target on one interpreter: the observed outcome, or why it could not run (the
    /// case does not apply, the interpreter is broken, the run was cancelled).
    pub async fn run_on(
        &self,
        interpreter: &Interpreter,
        cancel: &CancellationToken,
    ) -> Result<Observed, String> {
        let results = self
            .run_on_many(std::slice::from_ref(interpreter), 1, cancel)
            .await;
        results
            .into_iter()
            .next()
            .unwrap_or_else(|| Err("the run did not happen".into()))
    }

    /// Run the target on each interpreter, `jobs` at once; one result per interpreter, in
    /// order.
    pub async fn run_on_many(
        &self,
        interpreters: &[Interpreter],
        jobs: usize,
        cancel: &CancellationToken,
    ) -> Vec<Result<Observed, String>> {
        let wanted = self.params.clone();
        let keep = move |_: &Case, p: &Params| *p == wanted;
        let arcs: Vec<Arc<Interpreter>> = interpreters.iter().cloned().map(Arc::new).collect();
        let plan = Plan::build(std::slice::from_ref(&self.case), &arcs, None, None, &keep);
        let options = ExecuteOptions {
            timeout: self.timeout,
            ..ExecuteOptions::new(jobs.max(1))
        };
        let executed = match execute(&plan, &options, cancel.clone(), &mut |_| {}).await {
            Ok(r) => r,
            Err(e) => {
                return interpreters
                    .iter()
                    .map(|_| Err(format!("cannot prepare the run: {e}")))
                    .collect()
            }
        };
        executed
            .records
            .into_iter()
            .map(|record| match record {
                None => Err("the run did not finish".to_string()),
                Some(r) if r.verdict == Verdict::Skipped || r.verdict == Verdict::EnvError => {
                    Err(r.reason.clone().unwrap_or_else(|| r.verdict.to_string()))
                }
                Some(r) => r
                    .observed
                    .clone()
                    .ok_or_else(|| "no outcome recorded".to_string()),
            })
            .collect()
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
