//! `crosspickle merge`: the JSON results of many jobs as one matrix, printed and written to
//! every report asked for. Exit codes: 0 all as expected, 1 a verdict failed or the inputs
//! conflict, 2 an input cannot be read.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_FAILED, EXIT_OK};
use crate::errors::Error;
use crate::report::terminal::{Style, TerminalReporter};
use crate::report::ReportFiles;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// JSON results written by `crosspickle --json` (or by an earlier merge)
    #[arg(value_name = "FILE.json", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write the merged results as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write JUnit XML to FILE (one testsuite per interpreter)
    #[arg(long, value_name = "FILE")]
    pub junit_xml: Option<PathBuf>,
    /// Write a Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML page to FILE
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Colour: auto (not with NO_COLOR or off a terminal), always, never
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

pub fn merge(args: &MergeArgs) -> Result<i32, Error> {
    let inputs = crate::report::merge::read_all(&args.inputs)?;
    let results = crate::report::merge::merge(inputs);
    let files = ReportFiles {
        json: args.json.clone(),
        junit_xml: args.junit_xml.clone(),
        markdown: args.markdown.clone(),
        html: args.html.clone(),
    };
    let written = crate::report::write_all(&results, &files);
    let style = Style::detect(&args.color);
    let mut out = TerminalReporter::new(style, false).finish(&results);
    if !results.conflicts.is_empty() {
        out.push_str(&format!(
            "\n{}\n",
            style.bold(&format!(
                "{} conflicts between the inputs",
                results.conflicts.len()
            ))
        ));
        for c in &results.conflicts {
            let mut name = c.case.clone();
            if !c.params.is_empty() {
                name = format!("{name}[{}]", c.params);
            }
            if let Some(d) = &c.dump_python {
                name = format!("{name} {d} ->");
            }
            out.push_str(&format!(
                "CONFLICT {name} on {}: {}\n",
                c.python,
                crate::report::text::clean(&c.describe())
            ));
        }
    }
    super::emit(&out);
    written?;
    Ok(if results.failed() {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}
