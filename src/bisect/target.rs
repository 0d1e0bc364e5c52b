//! The target of a bisect: one case with one params combination, loaded from a case file or
//! found by id, and run once per interpreter through the runner.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::case::{load_cases, Case, ParamValue, Params};
use crate::env::EnvOptions;
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
    /// Where the environments of the case's requirements are made (package mode gives the
    /// cache folder; without one a case with requirements cannot run).
    pub environments: EnvOptions,
}

impl Target {
    /// `case` is a case file, or a case id (or a corpus path, `corpus:cases/gc/x.yaml`) looked
    /// up in `paths` and, with `corpus`, in the corpus shipped inside the binary; `params`
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
        let params = pick_params(&case, params)?;
        Ok(Target {
            case: Arc::new(case),
            params,
            timeout: None,
            environments: EnvOptions::default(),
        })
    }

    /// A round trip is bisected across package releases only (one side's, on one
    /// interpreter): the other modes refuse it with what to do.
    pub fn refuse_round_trip(&self) -> Result<(), Error> {
        if self.case.is_round_trip() {
            return Err(Error::Usage(format!(
                "case `{}` is a round trip (dump/load): bisect runs `code` cases only, or one side's package releases (--package NAME --side load|dump)",
                self.case.id
            )));
        }
        Ok(())
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
            environments: self.environments.clone(),
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

/// The one params combination `wanted` (`k=v,...`) selects. A value is written as run names
/// write it (`v=5`, `v='5'`, `v=5.0`, `v=True`); a value written as its raw text (`v=2.8.0`)
/// is taken when exactly one of the param's values has that text.
fn pick_params(case: &Case, wanted: Option<&str>) -> Result<Params, Error> {
    let combos = case.param_combinations();
    let mut pairs: Vec<(String, ParamValue)> = Vec::new();
    for piece in split_params(wanted.unwrap_or("")) {
        let (k, v) = piece
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--params: `{piece}` is not name=value")))?;
        let (k, v) = (k.trim(), v.trim());
        let Some(declared) = case.params.get(k) else {
            return Err(Error::Usage(format!(
                "--params: case `{}` has no param `{k}`",
                case.id
            )));
        };
        let by_name: Vec<&ParamValue> = declared.iter().filter(|d| d.name() == v).collect();
        let by_text: Vec<&ParamValue> = declared.iter().filter(|d| d.to_string() == v).collect();
        let value = match (by_name.as_slice(), by_text.as_slice()) {
            ([one], _) | ([], [one]) => (*one).clone(),
            ([], []) => {
                return Err(Error::Usage(format!(
                    "--params: param `{k}` of case `{}` has no value {v} (its values are {})",
                    case.id,
                    names(declared)
                )))
            }
            (_, several) => {
                return Err(Error::Usage(format!(
                    "--params: `{k}={v}` could be any of {}: write the value as its name",
                    names(several.iter().copied())
                )))
            }
        };
        pairs.push((k.to_string(), value));
    }
    let matching: Vec<Params> = combos
        .into_iter()
        .filter(|p| pairs.iter().all(|(k, v)| p.get(k) == Some(v)))
        .collect();
    match matching.len() {
        1 => Ok(matching.into_iter().next().expect("one")),
        0 => Err(Error::Usage(format!(
            "--params: no combination of case `{}` has {}",
            case.id,
            wanted.unwrap_or("")
        ))),
        _ => Err(Error::Usage(format!(
            "case `{}` runs {} params combinations; pick one with --params, e.g. --params \"{}\"",
            case.id,
            matching.len(),
            matching[0]
        ))),
    }
}

/// `a=1,b='x,y'` split on the commas outside quotes.
fn split_params(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut piece = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, ',') => {
                out.push(std::mem::take(&mut piece));
                continue;
            }
            _ => {}
        }
        piece.push(c);
    }
    out.push(piece);
    out.into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

fn names<'a>(values: impl IntoIterator<Item = &'a ParamValue>) -> String {
    values
        .into_iter()
        .map(ParamValue::name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case() -> Case {
        let text = "title: t\nparams:\n  v: [5, '5', 5.0, true, 'a,b']\n  w: [x]\ncode: pass\n";
        crate::case::parse_case(std::path::Path::new("c.yaml"), text).unwrap()
    }

    #[test]
    fn params_are_picked_by_their_names() {
        let case = case();
        let pick = |w: &str| pick_params(&case, Some(w)).map(|p| p.to_string());
        assert_eq!(pick("v=5").unwrap(), "v=5,w=x");
        assert_eq!(pick("v='5'").unwrap(), "v='5',w=x");
        assert_eq!(pick("v=5.0").unwrap(), "v=5.0,w=x");
        assert_eq!(pick("v=True").unwrap(), "v=True,w=x");
        assert_eq!(
            pick("v=true").unwrap(),
            "v=True,w=x",
            "the raw text, when unique"
        );
        assert_eq!(pick("v='a,b', w=x").unwrap(), "v='a,b',w=x");
        assert!(pick("v=6").unwrap_err().to_string().contains("no value 6"));
        let e = pick("w=x").unwrap_err().to_string();
        assert!(e.contains("runs 5 params combinations"), "{e}");
    }
}
