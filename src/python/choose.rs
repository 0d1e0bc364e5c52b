//! Interpreter choice, in one call for every command that chooses interpreters ([`choose`]):
//! read pythons.toml, discover (with the probe cache), select what `--python` asks for,
//! install with uv what `--download-python` asks for and discover and select again, then save
//! the probe cache. What a command then says about the choice (the unusable candidates, the
//! requests that match nothing) and the refusal of an empty selection are the command's.

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::config::PythonsConfig;
use super::discover::{self, Discovery};
use super::download;
use super::probe::Prober;
use super::request::{select, split_requests, Selection};
use super::Source;
use crate::errors::Error;
use crate::sys::process::ToolError;

/// `--download-python`: when uv installs the requested interpreters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Download {
    /// Use what is installed.
    Never,
    /// Install a request that nothing found matches.
    Auto,
    /// Install every request uv can serve, also one that something found matches.
    Always,
}

/// What a command asks of interpreter choice: its `--python` options and the settings that
/// bear on probing.
#[derive(Debug, Clone)]
pub struct Ask<'a> {
    /// `--python`'s values, not yet split.
    pub python: &'a [String],
    /// `--pythons-toml`'s files; none: `./pythons.toml` when there is one.
    pub pythons_toml: &'a [PathBuf],
    pub download: Download,
    /// The cache folder (probe answers, the interpreters uv installs, kept builds).
    pub cache_dir: Option<&'a Path>,
    pub probe_timeout: std::time::Duration,
    /// Probe every interpreter again instead of trusting the cache.
    pub refresh: bool,
    pub verbose: bool,
}

/// Why the choice could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ChooseError {
    /// Bad input: pythons.toml, a request, `--download-python` that cannot work.
    #[error(transparent)]
    Input(#[from] Error),
    /// uv's install failed or was cancelled.
    #[error(transparent)]
    Tool(#[from] ToolError),
}

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

impl Ask<'_> {
    /// A prober with the cache folder and these probe settings.
    pub fn prober(&self) -> Prober {
        Prober::new(self.cache_dir, self.probe_timeout, self.refresh).verbose(self.verbose)
    }

    /// The pythons.toml files asked for, else `./pythons.toml` when there is one.
    pub fn config(&self) -> Result<PythonsConfig, Error> {
        match self.pythons_toml {
            [] => {
                let default = PathBuf::from("pythons.toml");
                if default.is_file() {
                    PythonsConfig::load(&default)
                } else {
                    Ok(Default::default())
                }
            }
            files => PythonsConfig::load_all(files),
        }
    }
}

/// Discover (and cache) the interpreters, then select what the requests ask for; when
/// `--download-python` had uv install some, discover and select again. `cancel` gives the
/// token that stops uv's install (asked for only when uv runs).
pub async fn choose(
    ask: &Ask<'_>,
    cancel: impl FnOnce() -> CancellationToken,
) -> Result<Chosen, ChooseError> {
    let mut config = ask.config()?;
    if let Some(dir) = ask.cache_dir {
        let _ = std::fs::create_dir_all(dir);
        config.add_kept(dir);
        config.downloads = Some(download::folder(dir));
    }
    let prober = ask.prober();
    // Probes mostly wait on the interpreters' start: a few at once even on few cores.
    let probes = crate::sys::cores().max(4);
    let mut discovery = discover::resolve(discover::candidates(&config), &prober, probes).await;
    let requests = split_requests(ask.python, "--python")?;
    let mut selection = select(&discovery, &requests, &prober).await?;
    let (installed, not_downloadable) =
        download_requested(ask.download, &config, &requests, &selection, cancel).await?;
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
    download: Download,
    config: &PythonsConfig,
    requests: &[String],
    selection: &Selection,
    cancel: impl FnOnce() -> CancellationToken,
) -> Result<(bool, Vec<(String, String)>), ChooseError> {
    let (asked, mode) = match download {
        Download::Never => return Ok((false, Vec::new())),
        Download::Auto => (&selection.missing, "auto"),
        Download::Always => (&requests.to_vec(), "always"),
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
        ChooseError::from(Error::Usage(format!(
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
            config.file.as_deref().unwrap_or(Path::new("pythons.toml")).display()
        )));
    }
    let uv = download::find_uv().map_err(|why| usage(format!("needs uv, and {why}")))?;
    eprintln!(
        "note: --download-python {mode}: installing {listed} with {} into {}",
        uv.display(),
        folder.display()
    );
    download::install(&uv, folder, &wanted, &cancel()).await?;
    Ok((true, cannot))
}

/// Name the interpreters that uv's install added to what discovery finds.
fn say_installed(before: &Discovery, after: &Discovery, folder: Option<&Path>) {
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
