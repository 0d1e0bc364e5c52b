//! The interpreters a command works with: chosen by one call into `python/`
//! ([`crate::python::choose`]: discovery, `--python`, `--download-python`, the probe cache),
//! then, for the commands that run cases, the warnings about the unusable candidates, the
//! requests that match nothing, and the refusal of an empty selection; and each side of the
//! round trips narrowed by `--dump-python` and `--load-python` (`run` and `record`).

use std::sync::Arc;

use super::args::{DownloadPython, PythonOptions};
use super::failure::Failure;
use super::settings::Settings;
use crate::errors::Error;
use crate::python::choose::{self, Ask, ChooseError, Chosen, Download};
use crate::python::probe::Prober;
use crate::python::request::{split_requests, PythonRequest};
use crate::python::{Implementation, Interpreter};

/// What the options and settings ask of interpreter choice.
pub fn ask<'a>(options: &'a PythonOptions, settings: &'a Settings) -> Ask<'a> {
    Ask {
        python: &options.python,
        pythons_toml: &options.pythons_toml,
        download: match options.download_python {
            DownloadPython::Never => Download::Never,
            DownloadPython::Auto => Download::Auto,
            DownloadPython::Always => Download::Always,
        },
        cache_dir: settings.cache_dir.as_deref(),
        probe_timeout: settings.probe_timeout,
        refresh: options.refresh,
        verbose: settings.verbose,
    }
}

/// A prober with the cache folder and the options' probe settings.
pub fn prober(options: &PythonOptions, settings: &Settings) -> Prober {
    ask(options, settings).prober()
}

/// [`choose::choose`] with the options and settings; uv's install stops on Ctrl-C.
pub async fn choose(options: &PythonOptions, settings: &Settings) -> Result<Chosen, Failure> {
    choose::choose(&ask(options, settings), || {
        super::interrupt::cancel_on_signals().0
    })
    .await
    .map_err(|e| match e {
        ChooseError::Input(e) => Failure::from(e),
        ChooseError::Tool(e) => Failure::from(e),
    })
}

/// The interpreters a run (or a bisect) uses: every usable one without requests (of `only`
/// when given), else what the requests select, stand-ins for broken requested ones included.
pub async fn for_running(
    options: &PythonOptions,
    settings: &Settings,
    only: Option<Implementation>,
) -> Result<Vec<Interpreter>, Failure> {
    Ok(for_running_on_machine(options, settings, only).await?.0)
}

/// [`for_running`]'s interpreters, and every usable one discovery found on the machine (what
/// the warnings about version ranges that match none compare with).
pub async fn for_running_on_machine(
    options: &PythonOptions,
    settings: &Settings,
    only: Option<Implementation>,
) -> Result<(Vec<Interpreter>, Vec<Interpreter>), Failure> {
    let chosen = choose(options, settings).await?;
    warn_unusable(&chosen);
    check_missing(
        &chosen,
        options.skip_missing,
        options.download_python != super::args::DownloadPython::Never,
    )?;
    let Chosen {
        discovery,
        requests,
        selection,
        ..
    } = chosen;
    let mut interpreters = selection.interpreters;
    if let (true, Some(only)) = (requests.is_empty(), only) {
        interpreters.retain(|i| i.implementation == only);
    }
    if interpreters.is_empty() && !selection.missing.is_empty() {
        // --skip-missing skipped every request: say so, not that nothing was found.
        return Err(Failure::from(Error::Usage(format!(
            "no interpreter left to run on: --skip-missing skipped every request ({}), as none matches an interpreter found\n{}",
            selection
                .missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", "),
            found_list(&discovery.interpreters)
        ))));
    }
    if interpreters.is_empty() {
        let hint = if discovery.unusable.is_empty() {
            String::new()
        } else {
            format!(
                " ({} candidates were unusable: see `crosspickle pythons`)",
                discovery.unusable.len()
            )
        };
        return Err(Error::NoInterpreters(hint).into());
    }
    Ok((interpreters, discovery.interpreters))
}

/// Without requests, say which candidates are left out and why (a named one is only used
/// when asked for).
fn warn_unusable(chosen: &Chosen) {
    if !chosen.requests.is_empty() {
        return;
    }
    for u in chosen
        .discovery
        .unusable
        .iter()
        .filter(|u| u.name.is_none())
    {
        eprintln!(
            "warning: skipping {} ({}): {}",
            u.path.display(),
            u.sources.join(", "),
            u.reason
        );
    }
}

/// A request that matches nothing is an error, or a warning with `--skip-missing` (except
/// in CI, where a missing interpreter must fail); `downloaded` says `--download-python` had uv
/// install the missing ones already.
fn check_missing(chosen: &Chosen, skip_missing: bool, downloaded: bool) -> Result<(), Error> {
    let missing = &chosen.selection.missing;
    if missing.is_empty() {
        return Ok(());
    }
    let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    if skip_missing && !in_ci {
        for m in missing {
            eprintln!("warning: no interpreter matches `{m}`; skipped (--skip-missing)");
        }
        return Ok(());
    }
    if skip_missing {
        eprintln!(
            "note: --skip-missing is off when CI is set: a missing interpreter fails the run there"
        );
    }
    if !chosen.not_downloadable.is_empty() {
        let mut message = String::new();
        for m in missing {
            message.push_str(&format!("no interpreter matches `{m}`"));
            if let Some((_, why)) = chosen.not_downloadable.iter().find(|(r, _)| r == m) {
                message.push_str(&format!(", and --download-python cannot install it: {why}"));
            }
            message.push('\n');
        }
        message.push_str(&found_list(&chosen.discovery.interpreters));
        return Err(Error::Usage(message));
    }
    Err(Error::MissingInterpreters {
        requests: missing.clone(),
        found: found_list(&chosen.discovery.interpreters),
        downloaded,
        in_ci,
    })
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

/// The interpreters of `selected` that `requests` (one side of round trips) ask for.
pub(super) fn narrow(
    selected: &[Arc<Interpreter>],
    requests: &[String],
    flag: &str,
) -> Result<Option<Vec<Arc<Interpreter>>>, Error> {
    if requests.is_empty() {
        return Ok(None);
    }
    let mut side = Vec::new();
    for text in split_requests(requests, flag)? {
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
