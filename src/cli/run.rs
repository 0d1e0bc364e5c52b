//! `crosspickle run`: load → select → plan → execute → report.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{RunArgs, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::case::{find_case_files, load_cases, Case};
use crate::errors::Error;
use crate::python::request::{select, split_requests, PythonRequest};
use crate::python::Interpreter;
use crate::report::terminal::{Style, TerminalReporter};
use crate::run::{execute, ExecuteOptions, Plan};
use crate::select::Keyword;

pub async fn run(args: RunArgs) -> Result<i32, Error> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("cases")]
    } else {
        args.paths.clone()
    };
    let cases = load_cases(&find_case_files(&paths)?)?;
    let keyword = args.keyword.as_deref().map(Keyword::parse).transpose()?;
    let cases: Vec<Arc<Case>> = cases
        .into_iter()
        .filter(|c| args.tags.is_empty() || c.tags.iter().any(|t| args.tags.contains(t)))
        .map(Arc::new)
        .collect();
    super::check_timeout(args.timeout)?;

    let (discovery, prober) = super::pythons::discover_all(&args.pythons).await?;
    let requests = split_requests(&args.pythons.python);
    let selection = select(&discovery, &requests, &prober).await?;
    prober.save();
    for u in &discovery.unusable {
        if u.name.is_none() && requests.is_empty() {
            eprintln!(
                "warning: skipping {} ({}): {}",
                u.path.display(),
                u.sources.join(", "),
                u.reason
            );
        }
    }
    if !selection.missing.is_empty() {
        let found = found_list(&discovery.interpreters);
        let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        if args.pythons.skip_missing && !in_ci {
            for m in &selection.missing {
                eprintln!("warning: no interpreter matches `{m}`; skipped (--skip-missing)");
            }
        } else {
            if args.pythons.skip_missing {
                eprintln!("note: --skip-missing is off when CI is set: a missing interpreter fails the run there");
            }
            return Err(Error::MissingInterpreters {
                requests: selection.missing,
                found,
            });
        }
    }
    if selection.interpreters.is_empty() {
        let hint = if discovery.unusable.is_empty() {
            String::new()
        } else {
            format!(
                " ({} candidates were unusable: see `crosspickle pythons`)",
                discovery.unusable.len()
            )
        };
        return Err(Error::NoInterpreters(hint));
    }
    let interpreters: Vec<Arc<Interpreter>> =
        selection.interpreters.into_iter().map(Arc::new).collect();
    let keep = |case: &Case, params: &crate::case::Params| {
        keyword.as_ref().is_none_or(|k| k.selects(case, params))
    };
    let producers = narrow(&interpreters, &args.dump_python, "--dump-python")?;
    let consumers = narrow(&interpreters, &args.load_python, "--load-python")?;
    let plan = Plan::build(
        &cases,
        &interpreters,
        producers.as_deref(),
        consumers.as_deref(),
        &keep,
    );
    if plan.runs.is_empty() {
        return Err(Error::Usage(match (&args.keyword, args.tags.is_empty()) {
            (Some(k), _) => format!("-k `{k}` selects no case"),
            (None, false) => format!("no case has the tag {}", args.tags.join(" or ")),
            _ => "no case to run".to_string(),
        }));
    }

    let options = ExecuteOptions {
        jobs: args
            .jobs
            .unwrap_or_else(|| ExecuteOptions::default().jobs)
            .max(1),
        timeout: args.timeout,
        exit_first: args.exit_first,
        environments: crate::env::EnvOptions {
            cache_dir: args.pythons.cache_dir(),
            offline: args.offline,
            find_links: args.find_links.iter().map(|f| absolute_link(f)).collect(),
            jobs: args
                .jobs
                .unwrap_or_else(|| ExecuteOptions::default().jobs)
                .max(1),
        },
        ..ExecuteOptions::default()
    };
    let to_make = crate::env::missing(&plan, &options.environments);
    if !to_make.is_empty() {
        let interpreters: std::collections::BTreeSet<&str> =
            to_make.iter().map(|(i, _)| i.as_str()).collect();
        eprintln!(
            "note: making {} environment(s) for `requires` on {} interpreter(s); later runs reuse them",
            to_make.len(),
            interpreters.len()
        );
    }
    let cancel = CancellationToken::new();
    let interrupted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let (cancel, interrupted) = (cancel.clone(), interrupted.clone());
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
                cancel.cancel();
            }
        });
    }
    let mut terminal = TerminalReporter::new(Style::detect(&args.reports.color), args.verbose);
    let mut results = execute(&plan, &options, cancel, &mut |event| {
        terminal.on_event(event)
    })
    .await
    .map_err(|e| Error::io("preparing the run", e))?;
    let was_interrupted = interrupted.load(std::sync::atomic::Ordering::SeqCst);
    if was_interrupted {
        results.partial = true;
        results.partial_reason = Some(format!(
            "interrupted (Ctrl-C) after {} of {} runs",
            results.runs.len(),
            plan.runs.len()
        ));
    }
    // Reports first: they are what CI keeps, even if printing to a closed stdout fails.
    let written = crate::report::write_all(&results, &args.reports.files());
    super::emit(&terminal.finish(&results));
    written?;
    Ok(if was_interrupted {
        EXIT_INTERRUPTED
    } else if results.failed() {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}

/// A --find-links folder made absolute (the installer may run elsewhere); a URL as it is.
fn absolute_link(link: &str) -> String {
    let path = std::path::Path::new(link);
    if path.exists() {
        std::path::absolute(path)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| link.to_string())
    } else {
        link.to_string()
    }
}

/// The interpreters of `selected` that `requests` (one side of round trips) ask for.
fn narrow(
    selected: &[Arc<Interpreter>],
    requests: &[String],
    flag: &str,
) -> Result<Option<Vec<Arc<Interpreter>>>, Error> {
    if requests.is_empty() {
        return Ok(None);
    }
    let mut side = Vec::new();
    for text in split_requests(requests) {
        let request = PythonRequest::parse(&text)?;
        let matched: Vec<_> = selected
            .iter()
            .filter(|i| request.selects(i))
            .cloned()
            .collect();
        if matched.is_empty() {
            return Err(Error::Usage(format!(
                "{flag} `{text}` matches none of the selected interpreters ({})",
                selected
                    .iter()
                    .map(|i| i.label.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for i in matched {
            if !side.iter().any(|s: &Arc<Interpreter>| Arc::ptr_eq(s, &i)) {
                side.push(i);
            }
        }
    }
    side.sort_by_key(|i| selected.iter().position(|s| Arc::ptr_eq(s, i)));
    Ok(Some(side))
}

fn found_list(interpreters: &[Interpreter]) -> String {
    if interpreters.is_empty() {
        return "No usable interpreter was found (see `crosspickle pythons`).".to_string();
    }
    let mut s = String::from("Found:");
    for i in interpreters {
        s.push_str(&format!("\n  {:24} {}", i.label, i.executable.display()));
    }
    s
}
