//! Reporters: they consume the runner's events and the final [`Results`], and know every
//! output format; the runner knows none. Every report draws the same [`grid`] and shows each
//! run through the same [`view`], with the [`text`] helpers below them all; each format
//! (terminal, JSON, JUnit, Markdown, HTML) only renders them in its own syntax. Every report
//! file is written atomically.

pub mod grid;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod rerun;
pub mod terminal;
pub mod text;
pub mod view;

use std::path::{Path, PathBuf};

use crate::errors::Error;
use crate::results::Results;

/// The report files asked for on the command line.
#[derive(Debug, Clone, Default)]
pub struct ReportFiles {
    pub json: Option<PathBuf>,
    pub junit_xml: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

/// Write every requested report from `results`, each atomically. One that cannot be written
/// does not stop the others; the first such error is returned after all were tried (the
/// others are printed).
pub fn write_all(results: &Results, files: &ReportFiles) -> Result<(), Error> {
    type Writer = fn(&Path, &Results) -> Result<(), Error>;
    let writers: [(&Option<PathBuf>, Writer); 4] = [
        (&files.json, json::write),
        (&files.junit_xml, junit::write),
        (&files.markdown, markdown::write),
        (&files.html, html::write),
    ];
    let mut first_error = None;
    for (path, write) in writers {
        if let Some(path) = path {
            if let Err(e) = write(path, results) {
                if first_error.is_some() {
                    eprintln!("error: {e}");
                }
                first_error.get_or_insert(e);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Results for the reporters' unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::case::{Expected, OutcomeKind, ParamValue, Params};
    use crate::outcome::Observed;
    use crate::results::{CaseInfo, Results, RunRecord};
    use crate::verdict::Verdict;

    /// `n` regressions on one interpreter, each printing `output` bytes of hostile text.
    pub fn failing(n: usize, output: usize) -> Results {
        let mut results = Results::new();
        let nasty = "\u{0}\u{1b}[31m]]><b>&\u{fffe}\u{ffff}\"'";
        let text: String = nasty.chars().cycle().take(output).collect();
        for i in 0..n {
            let mut params = indexmap::IndexMap::new();
            params.insert("i".to_string(), ParamValue::from(i as i64));
            results.runs.push(RunRecord {
                case: "case".into(),
                params: Params(params),
                python: "cpython-3.12.1".into(),
                dump_python: None,
                load_python: None,
                verdict: Verdict::Regression,
                expected: Expected::default_pass(),
                observed: Some(Observed {
                    exception: Some("ValueError".into()),
                    message: Some(text.clone()),
                    traceback: Some(text.clone()),
                    stdout: text.clone(),
                    stderr: text.clone(),
                    ..Observed::new(OutcomeKind::Error, 0.1)
                }),
                reason: None,
                dump_duration_s: None,
                attempts: Vec::new(),
            });
        }
        results.cases.insert(
            "case".into(),
            CaseInfo {
                title: nasty.into(),
                path: "cases/case.yaml".into(),
                tags: vec!["t".into()],
                links: vec![],
            },
        );
        results
    }
}
