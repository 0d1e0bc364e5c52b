//! The interpreters a command works with, found and chosen once for every command: discover
//! (with the probe cache), select what `--python` asks for, install with uv what
//! `--download-python` asks for and select again, then, for the commands that run cases, warn
//! about the unusable candidates, report the requests that match nothing, and refuse an empty
//! selection.

use super::args::{DownloadPython, PythonOptions};
use super::failure::Failure;
use super::settings::Settings;
use crate::errors::Error;
use crate::python::config::PythonsConfig;
use crate::python::discover::{self, Discovery};
use crate::python::download;
use crate::python::probe::Prober;
use crate::python::request::{select, split_requests, Selection};
use crate::python::{Implementation, Interpreter, Source};

/// What discovery found and what the requests selected of it.
pub struct Chosen {
    pub discovery: Discovery,
    /// The `--python` requests, split.
    pub requests: Vec<String>,
    pub selection: Selection,
    /// Requests that matched nothing and that `--download-python` could not install: why, and
    /// what to use instead.
    pub not_downloadable: Vec<(String, String)>,
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

/// Discover (and cache) the interpreters, then select what the requests ask for; when
/// `--download-python` had uv install some, discover and select again.
pub async fn choose(options: &PythonOptions, settings: &Settings) -> Result<Chosen, Failure> {
    let mut config = options.config()?;
    if let Some(dir) = &settings.cache_dir {
        let _ = std::fs::create_dir_all(dir);
        config.add_kept(dir);
        config.downloads = Some(download::folder(dir));
    }
    let prober = prober(options, settings);
    // Probes mostly wait on the interpreters' start: a few at once even on few cores.
    let probes = crate::sys::cores().max(4);
    let mut discovery = discover::resolve(discover::candidates(&config), &prober, probes).await;
    let requests = split_requests(&options.python, "--python")?;
    let mut selection = select(&discovery, &requests, &prober).await?;
    let (installed, not_downloadable) =
        download_requested(options, &config, &requests, &selection).await?;
    if installed {
        let before = discovery;
        discovery = discover::resolve(discover::candidates(&config), &prober, probes).await;
        selection = select(&discovery, &requests, &prober).await?;
        say_installed(&before, &discovery, config.downloads.as_deref());
    }
    prober.save();
    Ok(Chosen {
        discovery,
        requests,
        selection,
        not_downloadable,
    })
}

/// `--download-python`: uv installs the requests it can serve (with `auto` those that matched
/// nothing, with `always` every one) into the cache's folder. Returns whether it ran, and why
/// uv cannot serve the requests that matched nothing.
async fn download_requested(
    options: &PythonOptions,
    config: &PythonsConfig,
    requests: &[String],
    selection: &Selection,
) -> Result<(bool, Vec<(String, String)>), Failure> {
    let (asked, mode) = match options.download_python {
        DownloadPython::Never => return Ok((false, Vec::new())),
        DownloadPython::Auto => (&selection.missing, "auto"),
        DownloadPython::Always => (&requests.to_vec(), "always"),
    };
    let mut wanted = Vec::new();
    let mut cannot = Vec::new();
    for text in asked {
        match download::uv_request(text) {
            Ok(request) => wanted.push(request),
            Err(why) if selection.missing.contains(text) => cannot.push((text.clone(), why)),
            // Found, and not uv's to install (a path, 2.7): used as found.
            Err(_) => {}
        }
    }
    if wanted.is_empty() {
        return Ok((false, cannot));
    }
    let listed = wanted
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let usage = |why: String| {
        Failure::from(Error::Usage(format!(
            "--download-python {mode}: installing {listed} {why}"
        )))
    };
    let Some(folder) = config.downloads.as_deref() else {
        return Err(usage(
            "needs the cache folder, and there is none (no HOME): give --cache-dir".into(),
        ));
    };
    if !config.sources.on(Source::Uv) {
        return Err(usage(format!(
            "is of no use: {} turns off the uv source ([discovery] uv = false), which finds what uv installs; turn it on, or leave --download-python out",
            config.file.as_deref().unwrap_or(std::path::Path::new("pythons.toml")).display()
        )));
    }
    let uv = download::find_uv().map_err(|why| usage(format!("needs uv, and {why}")))?;
    eprintln!(
        "note: --download-python {mode}: installing {listed} with {} into {}",
        uv.display(),
        folder.display()
    );
    let (cancel, _) = super::interrupt::cancel_on_signals();
    download::install(&uv, folder, &wanted, &cancel).await?;
    Ok((true, cannot))
}

/// Name the interpreters that uv's install added to what discovery finds.
fn say_installed(before: &Discovery, after: &Discovery, folder: Option<&std::path::Path>) {
    let Some(folder) = folder.and_then(|f| std::fs::canonicalize(f).ok()) else {
        return;
    };
    for i in &after.interpreters {
        let new = !before
            .interpreters
            .iter()
            .any(|b| b.executable == i.executable);
        if new && i.executable.starts_with(&folder) {
            eprintln!("note: installed {} at {}", i.label, i.executable.display());
        }
    }
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
    chosen.warn_unusable();
    chosen.check_missing(options.skip_missing)?;
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
        if !self.not_downloadable.is_empty() {
            let mut message = String::new();
            for m in missing {
                message.push_str(&format!("no interpreter matches `{m}`"));
                if let Some((_, why)) = self.not_downloadable.iter().find(|(r, _)| r == m) {
                    message.push_str(&format!(", and --download-python cannot install it: {why}"));
                }
                message.push('\n');
            }
            message.push_str(&found_list(&self.discovery.interpreters));
            return Err(Error::Usage(message));
        }
        Err(Error::MissingInterpreters {
            requests: missing.clone(),
            found: found_list(&self.discovery.interpreters),
            in_ci,
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
