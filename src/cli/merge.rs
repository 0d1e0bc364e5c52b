//! `crosspickle merge`: the JSON results of many jobs as one matrix, printed and written to
//! every report asked for. Exit codes: 0 all as expected, 1 a verdict failed or the inputs
//! conflict, 2 an input cannot be read or the shards of a `--partition` run are not all there
//! once each (nothing is written then), 3 an input holds runs that could not be set up
//! (`env-error`), as `run` ends.
//!
//! The `--json` reports of the shards of one `explore --partition M/N` run are merged as
//! explore's own report ([`super::explore_merge`]): printed, written with `--json` and
//! `--out`; 0 no finding, 1 findings, 2 reports that are not one run's shards (or mixed with
//! `run`'s results).

use std::path::PathBuf;

use clap::Args;

use super::args::{FlakyOptions, ReportOptions};
use super::failure::Failure;
use crate::errors::Error;
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
    /// Explore reports only: write each merged finding's case file into this folder
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn merge(args: &MergeArgs) -> Result<i32, Failure> {
    let report_files = args.reports.files()?;
    if let Some(shards) = super::explore_merge::read(&args.inputs)? {
        return merge_explore(args, &report_files, &shards);
    }
    if let Some(out) = &args.out {
        return Err(Error::Usage(format!(
            "--out {}: only a merge of explore reports writes case files; these are results of `run`",
            out.display()
        ))
        .into());
    }
    let inputs = crate::results::merge::read_all(&args.inputs)?;
    crate::results::merge::check_shards(&inputs)?;
    let results = crate::results::merge::merge(inputs);
    let written = crate::report::write_all(&results, &report_files);
    let style = args.reports.color.style();
    let out = TerminalReporter::new(style, false)
        .with_closing(args.quiet, None)
        .with_layout(args.reports.layout())
        .finish(&results);
    super::github::print_report(out, &results, &args.reports);
    written?;
    Ok(super::failure::exit_for(&results, &args.flaky))
}

/// The shards of one explore run, merged: the summary printed, `--json` and `--out` written.
fn merge_explore(
    args: &MergeArgs,
    files: &crate::report::ReportFiles,
    shards: &[(String, serde_json::Value)],
) -> Result<i32, Failure> {
    let mut json = None;
    for (format, path) in &files.0 {
        if format.flag != "json" {
            return Err(Error::Usage(format!(
                "--{} {}: a merge of explore reports writes only --json (and --out)",
                format.flag,
                path.display()
            ))
            .into());
        }
        json = Some(path);
    }
    let mut merged =
        super::explore_merge::merge(shards, super::explore::FORMAT).map_err(Error::Usage)?;
    if let Some(dir) = &args.out {
        super::explore_merge::write_cases(dir, &mut merged)?;
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&merged).expect("JSON") + "\n";
        crate::sys::fs::write_atomic(path, text.as_bytes())
            .map_err(|e| Error::Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    crate::sys::stdout::emit(&super::explore_merge::summary(&merged));
    let found = merged["findings"].as_array().is_some_and(|f| !f.is_empty());
    Ok(if found {
        super::failure::EXIT_FAILED
    } else {
        super::failure::EXIT_OK
    })
}
