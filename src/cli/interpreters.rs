//! The interpreters a command works with, found and chosen once for every command: discover
//! (with the probe cache), select what `--python` asks for, then, for the commands that run
//! cases, warn about the unusable candidates, report the requests that match nothing, and
//! refuse an empty selection.

use super::args::PythonOptions;
use super::settings::Settings;
use crate::errors::Error;
use crate::python::discover::{self, Discovery};
use crate::python::probe::Prober;
use crate::python::request::{select, split_requests, Selection};
use crate::python::{Implementation, Interpreter};

/// What discovery found and what the requests selected of it.
pub struct Chosen {
    pub discovery: Discovery,
    /// The `--python` requests, split.
    pub requests: Vec<String>,
    pub selection: Selection,
}

/// A prober with the cache folder and the options' probe settings.
pub fn prober(options: &PythonOptions, settings: &Settings) -> Prober {
    Prober::new(
        settings.cache_dir.as_deref(),
        settings.probe_timeout,
        options.refresh,
    )
    .verbose(settings.verbose)
}

/// Discover (and cache) the interpreters, then select what the requests ask for.
pub async fn choose(options: &PythonOptions, settings: &Settings) -> Result<Chosen, Error> {
    let mut config = options.config()?;
    if let Some(dir) = &settings.cache_dir {
        let _ = std::fs::create_dir_all(dir);
        config.add_kept(dir);
    }
    let prober = prober(options, settings);
    // Probes mostly wait on the interpreters' start: a few at once even on few cores.
    let probes = crate::sys::cores().max(4);
    let discovery = discover::resolve(discover::candidates(&config), &prober, probes).await;
    let requests = split_requests(&options.python, "--python")?;
    let selection = select(&discovery, &requests, &prober).await?;
    prober.save();
    Ok(Chosen {
        discovery,
        requests,
        selection,
    })
}

/// The interpreters a run (or a bisect) uses: every usable one without requests (of `only`
/// when given), else what the requests select, stand-ins for broken requested ones included.
pub async fn for_running(
    options: &PythonOptions,
    settings: &Settings,
    only: Option<Implementation>,
) -> Result<Vec<Interpreter>, Error> {
    let chosen = choose(options, settings).await?;
    chosen.warn_unusable();
    chosen.check_missing(options.skip_missing)?;
    let Chosen {
        discovery,
        requests,
        selection,
    } = chosen;
    let mut interpreters = selection.interpreters;
    if let (true, Some(only)) = (requests.is_empty(), only) {
        interpreters.retain(|i| i.implementation == only);
    }
    if interpreters.is_empty() && !selection.missing.is_empty() {
        // --skip-missing skipped every request: say so, not that nothing was found.
        return Err(Error::Usage(format!(
            "no interpreter left to run on: --skip-missing skipped every request ({}), as none matches an interpreter found\n{}",
            selection
                .missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", "),
            found_list(&discovery.interpreters)
        )));
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
        return Err(Error::NoInterpreters(hint));
    }
    Ok(interpreters)
}

impl Chosen {
    /// Without requests, say which candidates are left out and why (a named one is only
    /// used when asked for).
    fn warn_unusable(&self) {
        if !self.requests.is_empty() {
            return;
        }
        for u in self.discovery.unusable.iter().filter(|u| u.name.is_none()) {
            eprintln!(
                "warning: skipping {} ({}): {}",
                u.path.display(),
                u.sources.join(", "),
                u.reason
            );
        }
    }

    /// A request that matches nothing is an error, or a warning with `--skip-missing`
    /// (except in CI, where a missing interpreter must fail).
    fn check_missing(&self, skip_missing: bool) -> Result<(), Error> {
        let missing = &self.selection.missing;
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
            eprintln!("note: --skip-missing is off when CI is set: a missing interpreter fails the run there");
        }
        Err(Error::MissingInterpreters {
            requests: missing.clone(),
            found: found_list(&self.discovery.interpreters),
        })
    }
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
