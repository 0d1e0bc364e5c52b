//! `crosspickle cache list|prune|clean`: the environments made for cases with `requires`, the
//! driver's and the cases' compiled forms kept per interpreter (`drivers/`), and what CPython
//! bisects keep (`bisect/`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use clap::{Args, Subcommand};

use super::failure::{Failure, EXIT_OK};
use super::settings::{Given, Settings};
use crate::bisect::commits::store as bisects;
use crate::env::store;
use crate::report::text::count;
use crate::run::driver::{other_drivers, prune_forms, DRIVERS_DIR as DRIVERS, LEASE};

#[derive(Debug, Args)]
pub struct CacheArgs {
    /// What to do [default: list]
    #[command(subcommand)]
    action: Option<CacheAction>,
    /// The cache folder [default: $XDG_CACHE_HOME/crosspickle or ~/.cache/crosspickle]
    #[arg(long, value_name = "DIR", env = "CROSSPICKLE_CACHE_DIR", global = true)]
    cache_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum CacheAction {
    /// Every environment: interpreter, requirements, size, last use
    List {
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Remove what is no longer used: environments, CPython bisect builds (those kept with
    /// `bisect --keep` excepted) and compiled forms unused for a while, what failed builds
    /// left, and the compiled forms kept for other versions of crosspickle
    Prune {
        /// Remove what was unused for this many days (0: all of it)
        #[arg(long, value_name = "DAYS", default_value_t = 30)]
        unused_for: u64,
    },
    /// Remove every environment (those being made right now excepted), the compiled forms of
    /// the driver and of cases, and what CPython bisects keep (clones, build folders, the
    /// compiler cache, built interpreters but those kept with `bisect --keep`)
    Clean {
        /// Remove the interpreters' probe answers (interpreters.json) too
        #[arg(long)]
        all: bool,
    },
}

/// Appends a line to the text printed at the end.
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        $out.push_str(&format!($($arg)*));
        $out.push('\n');
    }};
}

pub fn cache(args: &CacheArgs) -> Result<i32, Failure> {
    let mut out = String::new();
    let code = cache_into(args, &mut out);
    crate::sys::stdout::emit(&out);
    code
}

fn cache_into(args: &CacheArgs, out: &mut String) -> Result<i32, Failure> {
    let settings = Settings::resolve(Given {
        cache_dir: args.cache_dir.as_deref(),
        ..Given::default()
    })?;
    let dir = settings.required_cache_dir()?;
    // `crosspickle cache` alone lists what the cache holds.
    let action = args
        .action
        .as_ref()
        .unwrap_or(&CacheAction::List { json: false });
    match action {
        CacheAction::List { json } => list(dir, *json, out),
        CacheAction::Prune { unused_for } => match free(dir) {
            Some(_held) => prune(dir, *unused_for, out)?,
            None => say_in_use(dir, "pruned", out),
        },
        CacheAction::Clean { all } => match free(dir) {
            Some(_held) => clean(dir, *all, out)?,
            None => {
                if *all {
                    remove_probes(dir)?;
                    say!(
                        out,
                        "removed the interpreters' probe answers from {}",
                        dir.display()
                    );
                }
                say_in_use(dir, "cleaned", out)
            }
        },
    }
    Ok(EXIT_OK)
}

/// The cache's lease, held exclusively while it is cleaned or pruned (a crosspickle that
/// starts then waits), when no running crosspickle holds it; `None` while one does. A cache
/// without a lease file is one no crosspickle of this version has used.
fn free(dir: &Path) -> Option<Option<crate::sys::lock::Lock>> {
    let lease = dir.join(LEASE);
    if !lease.exists() {
        return Some(None);
    }
    crate::sys::lock::try_acquire(&lease).map(Some)
}

/// Why nothing a run needs was removed.
fn say_in_use(dir: &Path, verb: &str, out: &mut String) {
    say!(
        out,
        "kept the environments, compiled forms and CPython bisect builds of {}: another crosspickle is running on this cache; it is {verb} when none is (run this again then)",
        dir.display()
    );
}

/// Remove the interpreters' probe answers (interpreters.json), if there are any.
fn remove_probes(dir: &Path) -> Result<bool, Failure> {
    let probes = dir.join("interpreters.json");
    if !probes.exists() {
        return Ok(false);
    }
    std::fs::remove_file(&probes)
        .map_err(|e| Failure::system(format!("removing {}", probes.display()), e))?;
    Ok(true)
}

/// The environments, as a table or as JSON.
fn list(dir: &Path, json: bool, out: &mut String) {
    let envs = store::list(dir);
    if json {
        let value = serde_json::json!({
            "cache_dir": dir,
            "environments": envs,
            "cpython_bisects": bisects::summary(dir),
        });
        say!(
            out,
            "{}",
            serde_json::to_string_pretty(&value).expect("serializes")
        );
        return;
    }
    say_other_forms(dir, out);
    say!(out, "Environments in {}:", store::envs_dir(dir).display());
    if envs.is_empty() {
        say!(out, "  none");
        return;
    }
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    say!(
        out,
        "  {:16}  {:24}  {:>9}  {:>10}  REQUIREMENTS",
        "ENVIRONMENT",
        "INTERPRETER",
        "SIZE",
        "LAST USED"
    );
    for e in &envs {
        let used = e
            .last_used
            .map(|t| ago(now.saturating_sub(t)))
            .unwrap_or_else(|| "-".into());
        say!(
            out,
            "  {:16}  {:24}  {:>9}  {:>10}  {}",
            e.hash,
            e.meta.interpreter,
            size(e.size_bytes),
            used,
            e.meta.requirements.join(", ")
        );
    }
    let total: u64 = envs.iter().map(|e| e.size_bytes).sum();
    say!(
        out,
        "{}, {}",
        count(envs.len(), "environment", "environments"),
        size(total)
    );
    if envs.iter().any(|e| e.meta.installer == "uv") {
        if let Some(uv_cache) = uv_cache_dir() {
            say!(
                out,
                "uv's cache, which the environments uv made link their packages from: {}, {} (`uv cache prune` trims it)",
                uv_cache.display(),
                size(store::size_of(&uv_cache))
            );
        }
    }
}

/// uv's cache folder, as uv finds it: `UV_CACHE_DIR`, else `$XDG_CACHE_HOME/uv`, else
/// `~/.cache/uv` (on Windows `%LOCALAPPDATA%\uv\cache`).
fn uv_cache_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("UV_CACHE_DIR") {
        return Some(dir);
    }
    if cfg!(windows) {
        return var("LOCALAPPDATA").map(|d| d.join("uv").join("cache"));
    }
    var("XDG_CACHE_HOME")
        .map(|d| d.join("uv"))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("uv")))
}

/// The lines of `list` on what is kept beside the environments: compiled forms (how much of
/// them for other versions of crosspickle) and CPython bisects' builds.
fn say_other_forms(dir: &Path, out: &mut String) {
    let others: u64 = other_drivers(dir).iter().map(|d| store::size_of(d)).sum();
    say!(
        out,
        "Compiled forms of the driver and of cases in {}: {}{}",
        dir.join(DRIVERS).display(),
        size(store::size_of(&dir.join(DRIVERS))),
        if others > 0 {
            format!(
                ", {} of it for other versions of crosspickle (`crosspickle cache prune` removes those)",
                size(others)
            )
        } else {
            String::new()
        }
    );
    if let Some(b) = bisects::summary(dir) {
        say!(
            out,
            "CPython bisects in {}: {} ({}, {}, {} of them kept with --keep), compiler cache {}",
            crate::bisect::cache_root(dir).display(),
            size(b.bytes),
            count(b.checkouts, "checkout", "checkouts"),
            count(b.builds, "built interpreter", "built interpreters"),
            b.kept,
            size(b.compiler_cache_bytes)
        );
    }
}

/// Remove every environment, the compiled forms, what CPython bisects keep but the kept
/// interpreters, and with `all`, the probe answers.
fn clean(dir: &Path, all: bool, out: &mut String) -> Result<(), Failure> {
    let cleaned =
        store::clean(dir).map_err(|e| Failure::system(format!("cleaning {}", dir.display()), e))?;
    let drivers = dir.join(DRIVERS);
    let bytes = store::size_of(&drivers);
    if drivers.exists() {
        std::fs::remove_dir_all(&drivers)
            .map_err(|e| Failure::system(format!("removing {}", drivers.display()), e))?;
    }
    let mut said = format!(
        "removed {} environments ({}) and the compiled forms of the driver and of cases ({})",
        cleaned.environments,
        size(cleaned.bytes),
        size(bytes)
    );
    if crate::bisect::cache_root(dir).is_dir() {
        let removed = bisects::clean(dir)
            .map_err(|e| Failure::system(format!("cleaning {}", dir.display()), e))?;
        said.push_str(&format!(
            ", CPython bisects' builds, clones and compiler cache ({}; {} kept with --keep stay)",
            size(removed.bytes),
            count(removed.kept, "interpreter", "interpreters")
        ));
    }
    if all && remove_probes(dir)? {
        said.push_str(" and the interpreters' probe answers");
    }
    say!(out, "{said} from {}", dir.display());
    Ok(())
}

/// Remove the environments, bisect builds and compiled forms unused for `days` days, the
/// unusable environment folders, and the other drivers' folders of compiled forms.
fn prune(dir: &Path, days: u64, out: &mut String) -> Result<(), Failure> {
    let before = SystemTime::now()
        .checked_sub(std::time::Duration::from_secs(days.saturating_mul(86400)))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let pruned = store::prune(dir, before)
        .map_err(|e| Failure::system(format!("pruning {}", dir.display()), e))?;
    let (mut drivers, mut bytes) = (0, 0);
    for other in other_drivers(dir) {
        bytes += store::size_of(&other);
        std::fs::remove_dir_all(&other)
            .map_err(|e| Failure::system(format!("removing {}", other.display()), e))?;
        drivers += 1;
    }
    let mut said = format!(
        "removed {} unused for {}",
        count(pruned.environments, "environment", "environments"),
        count(days as usize, "day", "days"),
    );
    if pruned.unusable > 0 {
        said.push_str(&format!(
            " and {} (unfinished, or whose interpreter is gone)",
            count(pruned.unusable, "unusable folder", "unusable folders")
        ));
    }
    said.push_str(&format!(" ({})", size(pruned.bytes)));
    if crate::bisect::cache_root(dir).is_dir() {
        let removed = bisects::prune(dir, before)
            .map_err(|e| Failure::system(format!("pruning {}", dir.display()), e))?;
        said.push_str(&format!(
            ", CPython bisect builds unused as long: {} ({})",
            count(removed.builds, "interpreter", "interpreters"),
            size(removed.bytes)
        ));
    }
    let (forms, forms_bytes) = prune_forms(dir, before);
    say!(
        out,
        "{said}, compiled forms unread as long ({}, {}), and those of {} ({}) from {}",
        count(forms, "file", "files"),
        size(forms_bytes),
        count(drivers, "other driver", "other drivers"),
        size(bytes),
        dir.display()
    );
    Ok(())
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.0} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

fn ago(seconds: u64) -> String {
    match seconds {
        s if s < 60 => "just now".into(),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86400 => format!("{} h ago", s / 3600),
        s => format!("{} ago", count((s / 86400) as usize, "day", "days")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_ages() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(20 * 1024), "20 KiB");
        assert_eq!(size(3 * (1 << 20) + (1 << 19)), "3.5 MiB");
        assert_eq!(ago(5), "just now");
        assert_eq!(ago(7200), "2 h ago");
        assert_eq!(ago(3 * 86400), "3 days ago");
    }
}
