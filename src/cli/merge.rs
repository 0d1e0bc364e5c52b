//! `crosspickle merge`: the JSON results of many jobs as one matrix, printed and written to
//! every report asked for. Exit codes: 0 all as expected, 1 a verdict failed or the inputs
//! conflict, 2 an input cannot be read or the shards of a `--partition` run are not all there
//! once each (nothing is written then), 3 an input holds runs that could not be set up
//! (`env-error`), as `run` ends.

use std::path::PathBuf;

use clap::Args;

use super::args::{FlakyOptions, ReportOptions};
use super::failure::Failure;
use crate::report::terminal::TerminalReporter;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// JSON results written by `crosspickle --json` (or by an earlier merge)
    #[arg(value_name = "FILE.json", required = true)]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub reports: ReportOptions,
    #[command(flatten)]
    pub flaky: FlakyOptions,
    /// Quieter: no matrix and no details of runs, only the short summary of the failing runs
    /// and the summary line (as `run -q`)
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
}

pub fn merge(args: &MergeArgs) -> Result<i32, Failure> {
    let report_files = args.reports.files()?;
    let inputs = crate::results::merge::read_all(&args.inputs)?;
    crate::results::merge::check_shards(&inputs)?;
    let results = crate::results::merge::merge(inputs);
    let written = crate::report::write_all(&results, &report_files);
    let style = args.reports.color.style();
    let out = TerminalReporter::new(style, false)
        .with_closing(args.quiet, None)
        .with_layout(args.reports.layout())
        .finish(&results);
    crate::sys::stdout::emit(&super::github::with_annotations(
        out,
        &results,
        &args.reports,
    ));
    written?;
    Ok(super::failure::exit_for(&results, &args.flaky))
}
