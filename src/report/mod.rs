//! Reporters: they consume the runner's events and the final [`Results`], and know every
//! output format; the runner knows none. Every report draws the same [`grid`] and shows each
//! run through the same [`view`], with the [`text`] helpers below them all; each format
//! (terminal, JSON, JUnit, Markdown, HTML) only renders them in its own syntax. Every report
//! file is written atomically.

pub mod github;
pub mod grid;
pub mod rerun;
pub mod terminal;
pub mod text;
pub mod view;

use std::path::{Path, PathBuf};

use crate::errors::Error;
use crate::results::Results;

/// A report written to a file: its command-line flag and help, and its writer (which writes
/// atomically).
#[derive(Debug)]
pub struct ReportFormat {
    /// The long flag without its dashes: `junit-xml` for `--junit-xml FILE`.
    pub flag: &'static str,
    /// The flag's help, as `--help` prints it.
    pub help: &'static str,
    pub write: fn(&Path, &Results) -> Result<(), Error>,
}

/// Declares each format's module and lists the formats in [`FORMATS`]: a new format is its
/// module (with `pub fn write(&Path, &Results) -> Result<(), Error>`) and one line here.
macro_rules! formats {
    ($($module:ident: $flag:literal, $help:literal,)*) => {
        $(pub mod $module;)*
        /// Every report format written to a file, in the order `--help` lists their flags.
        pub static FORMATS: &[ReportFormat] = &[$(ReportFormat {
            flag: $flag,
            help: $help,
            write: $module::write,
        },)*];
    };
}

formats! {
    json: "json", "Write the results as JSON to FILE",
    junit: "junit-xml", "Write JUnit XML to FILE (one testsuite per interpreter), for CI systems",
    markdown: "markdown", "Write a Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)",
    html: "html", "Write a self-contained HTML page to FILE",
}

/// The report files asked for on the command line: each format's file, in [`FORMATS`]' order.
#[derive(Debug, Clone, Default)]
pub struct ReportFiles(pub Vec<(&'static ReportFormat, PathBuf)>);

/// Write every requested report from `results`, each atomically. One that cannot be written
/// does not stop the others; the first such error is returned after all were tried (the
/// others are printed).
pub fn write_all(results: &Results, files: &ReportFiles) -> Result<(), Error> {
    let mut first_error = None;
    for (format, path) in &files.0 {
        if let Err(e) = (format.write)(path, results) {
            if first_error.is_some() {
                eprintln!("error: {e}");
            }
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Results for the reporters' unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::case::{OutcomeKind, ParamValue, Params};
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
                params: Params(params),
                observed: Some(Observed {
                    exception: Some("ValueError".into()),
                    message: Some(text.clone()),
                    traceback: Some(text.clone()),
                    stdout: text.clone(),
                    stderr: text.clone(),
                    ..Observed::new(OutcomeKind::Error, 0.1)
                }),
                ..RunRecord::for_tests("case", "cpython-3.12.1", Verdict::Regression)
            });
        }
        results.cases.insert(
            "case".into(),
            CaseInfo {
                title: nasty.into(),
                path: "cases/case.yaml".into(),
                tags: vec!["t".into()],
                links: vec![],
                source: None,
                code_starts: (None, None),
                setup_lines: Default::default(),
                bounce_starts: (None, None),
            },
        );
        results
    }
}
