//! `crosspickle merge`: the JSON results of many jobs as one matrix, printed and written to
//! every report asked for. Exit codes: 0 all as expected, 1 a verdict failed or the inputs
//! conflict, 2 an input cannot be read.

use std::path::PathBuf;

use clap::Args;

use super::args::ReportOptions;
use super::failure::{Failure, EXIT_FAILED, EXIT_OK};
use crate::report::terminal::TerminalReporter;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// JSON results written by `crosspickle --json` (or by an earlier merge)
    #[arg(value_name = "FILE.json", required = true)]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub reports: ReportOptions,
}

pub fn merge(args: &MergeArgs) -> Result<i32, Failure> {
    let report_files = args.reports.files()?;
    let inputs = crate::results::merge::read_all(&args.inputs)?;
    let results = crate::results::merge::merge(inputs);
    let written = crate::report::write_all(&results, &report_files);
    let style = args.reports.color.style();
    let mut out = TerminalReporter::new(style, false).finish(&results);
    if !results.conflicts.is_empty() {
        out.push_str(&format!(
            "\n{}\n",
            style.bold(&format!(
                "{} between the inputs",
                crate::report::text::count(results.conflicts.len(), "conflict", "conflicts")
            ))
        ));
        for c in &results.conflicts {
            let name = c.name();
            out.push_str(&format!(
                "CONFLICT {} on {}: {}\n",
                crate::report::text::one_line(&name),
                crate::report::text::one_line(&c.python),
                crate::report::text::clean(&c.describe())
            ));
        }
    }
    crate::sys::stdout::emit(&out);
    written?;
    Ok(if results.failed() {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}
