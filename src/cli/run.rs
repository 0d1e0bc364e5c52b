//! `crosspickle run`: load → select → plan → execute → report.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::args::{IsolationArg, RunArgs};
use super::failure::Failure;
use super::settings::Settings;
use crate::case::{Case, Isolation, Params};
use crate::env::EnvOptions;
use crate::errors::Error;
use crate::partition::Shard;
use crate::python::Interpreter;
use crate::report::terminal::TerminalReporter;
use crate::run::{execute, ExecuteOptions, Plan};
use crate::select::Keyword;

pub async fn run(args: RunArgs) -> Result<i32, Failure> {
    let settings = args.settings()?;
    let report_files = args.reports.files()?;
    let cases = settings.load_cases()?;
    let keyword = args.keyword.as_deref().map(Keyword::parse).transpose()?;
    let cases: Vec<Arc<Case>> = cases
        .into_iter()
        .filter(|c| args.tags.is_empty() || c.tags.iter().any(|t| args.tags.contains(t)))
        .map(Arc::new)
        .collect();
    let (interpreters, machine) =
        super::interpreters::for_running_on_machine(&args.pythons, &settings, None).await?;
    super::ranges::warn_unmatched(cases.iter().map(|c| &**c), &machine, false);
    let recorded = super::record::for_run(args.pickles.as_deref(), &settings)?;
    let (mut plan, shard) = plan(&args, &cases, interpreters, &recorded, keyword.as_ref())?;
    if args.last_failed {
        super::last_failed::narrow(&mut plan, settings.cache_dir.as_deref());
    }
    let mut options = execute_options(&args, &settings)?;
    options.recorded = Arc::new(super::record::files_of(&plan, &recorded));
    options.twins = Arc::new(super::record::twins_of(&plan, &recorded));
    plan.add_comparisons(&options.twins);
    let to_make = announce_environments(&plan, &options.environments);
    let mut bars = None;
    if to_make > 0 {
        let (progress, beside) = super::env_progress::shown(to_make);
        options.environments.progress = Some(progress);
        bars = beside;
    }

    let (cancel, interrupted) = super::interrupt::cancel_on_signals();
    let mut terminal = TerminalReporter::new(args.reports.color.style(), args.verbose)
        .with_closing(args.quiet, args.durations)
        .with_layout(args.reports.layout());
    if let Some(bars) = bars {
        terminal = terminal.beside(bars);
    }
    let executed = execute(&plan, &options, cancel, &mut |event| {
        terminal.on_event(event)
    })
    .await
    .map_err(|e| Failure::system("preparing the run", e))?;
    let mut results = crate::results::Results::from_run(&plan, executed);
    results.partition = shard;
    let was_interrupted = interrupted.load(Ordering::SeqCst);
    if was_interrupted {
        results.partial = true;
        results.partial_reason = Some(format!(
            "interrupted ({}) after {} of {} runs",
            super::interrupt::what(),
            results.runs.len(),
            plan.runs.len()
        ));
    }
    super::last_failed::remember(&results, settings.cache_dir.as_deref());
    // Reports first: they are what CI keeps, even if printing to a closed stdout fails.
    let written = crate::report::write_all(&results, &report_files);
    let text = terminal.finish(&results);
    super::github::print_report(text, &results, &args.reports);
    written?;
    // Code that compiles on no interpreter is a mistake in the case file, not a verdict.
    let uncompilable = crate::results::code_lines::uncompilable(&results);
    if !was_interrupted && !uncompilable.is_empty() {
        return Err(Error::Cases(uncompilable).into());
    }
    Ok(if was_interrupted {
        super::interrupt::exit_code()
    } else {
        super::failure::exit_for(&results, &args.flaky)
    })
}

/// Every run of the selected cases on the selected interpreters (round trips narrowed by
/// `--dump-python` and `--load-python`), only those of one shard with `--partition`; an error
/// when `-k` or `--tag` leave none (a shard that gets none of them is not one).
fn plan(
    args: &RunArgs,
    cases: &[Arc<Case>],
    interpreters: Vec<Interpreter>,
    recorded: &Option<crate::record::Folder>,
    keyword: Option<&Keyword>,
) -> Result<(Plan, Option<Shard>), Error> {
    let interpreters: Vec<Arc<Interpreter>> = interpreters.into_iter().map(Arc::new).collect();
    let selected = |case: &Case, params: &Params| keyword.is_none_or(|k| k.selects(case, params));
    let units: Vec<String> = cases
        .iter()
        .flat_map(|case| {
            case.param_combinations()
                .into_iter()
                .filter(|p| selected(case, p))
                .map(|p| case.display_name(&p))
        })
        .collect();
    if units.is_empty() {
        return Err(Error::Usage(match (&args.keyword, args.tags.is_empty()) {
            (Some(k), _) => format!("-k `{k}` selects no case"),
            (None, false) => format!("no case has the tag {}", args.tags.join(" or ")),
            _ => "no case to run".to_string(),
        }));
    }
    let (in_shard, shard) = match &args.partition {
        Some(partition) => {
            let (keep, shard) = partition.select(&units);
            let kept: HashSet<&String> = units
                .iter()
                .zip(keep)
                .filter_map(|(u, k)| k.then_some(u))
                .collect();
            announce_shard(&shard);
            (Some(kept), Some(shard))
        }
        None => (None, None),
    };
    let keep = |case: &Case, params: &Params| {
        selected(case, params)
            && in_shard
                .as_ref()
                .is_none_or(|kept| kept.contains(&case.display_name(params)))
    };
    // Recorded producers beside the live ones, which --dump-python narrows alike.
    let mut producing = interpreters.clone();
    producing.extend(super::record::producers(recorded));
    let producers = super::interpreters::narrow(&producing, &args.dump_python, "--dump-python")?
        .unwrap_or(producing);
    let consumers = super::interpreters::narrow(&interpreters, &args.load_python, "--load-python")?;
    let mut plan = Plan::build(
        cases,
        &interpreters,
        Some(&producers),
        consumers.as_deref(),
        &keep,
    );
    super::record::keep_recorded_runs(&mut plan, recorded);
    Ok((plan, shard))
}

/// Say which part of the selection this shard runs (none at all is no error: a matrix of
/// N jobs over fewer cases has empty shards, and `merge` still needs their JSON).
fn announce_shard(shard: &Shard) {
    eprintln!(
        "note: shard {}: {} of the {} selected (a case with one param combination, every run of it)",
        shard.partition,
        shard.units,
        crate::report::text::count(shard.selected, "case", "cases")
    );
}

fn execute_options(args: &RunArgs, settings: &Settings) -> Result<ExecuteOptions, Error> {
    if args.isolation == Some(IsolationArg::Fork) && !crate::sys::process::can_watch_any_process() {
        return Err(Error::Usage(crate::sys::process::CANNOT_WATCH.into()));
    }
    Ok(ExecuteOptions {
        timeout: settings.timeout,
        exit_first: args.exit_first,
        environments: EnvOptions {
            cache_dir: settings.cache_dir.clone(),
            offline: args.offline,
            find_links: settings.find_links.clone(),
            jobs: settings.jobs,
            progress: None,
        },
        retries: args.retries.unwrap_or(0),
        repeat: args.repeat.unwrap_or(1),
        isolation: match args.isolation {
            Some(IsolationArg::Exec) => Isolation::Exec,
            Some(IsolationArg::Fork) => Isolation::Fork,
            None => crate::run::default_isolation(),
        },
        ..ExecuteOptions::new(settings.jobs)
    })
}

/// Tell the user why the first runs are slow: environments for `requires` to make (how
/// many, returned).
fn announce_environments(plan: &Plan, options: &EnvOptions) -> usize {
    let to_make = crate::env::missing(plan.environments(), options);
    if to_make.is_empty() {
        return 0;
    }
    let interpreters: std::collections::BTreeSet<&str> =
        to_make.iter().map(|(i, _)| i.as_str()).collect();
    eprintln!(
        "note: making {} for `requires` on {}; later runs reuse them",
        crate::report::text::count(to_make.len(), "environment", "environments"),
        crate::report::text::count(interpreters.len(), "interpreter", "interpreters")
    );
    to_make.len()
}
