//! Package mode: binary search over a package's releases on one interpreter. The release list
//! comes from `--versions` or from the user's index through the interpreter's own pip (so the
//! user's pip configuration, `PIP_INDEX_URL`, `PIP_FIND_LINKS`, `pip.conf`, holds); each
//! release is installed into its own environment, the cached ones of the `requires` feature
//! ([`crate::env`]); a release that does not install is skipped.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

use pep440_rs::Version;
use tokio_util::sync::CancellationToken;

use super::report::seconds;
use super::report::LeftOut;
use super::search::{search_range, Tester};
use super::{BisectError, Boundary, Report, Step, StepState, Target};
use crate::case::Phase;
use crate::env::{pip, EnvError, EnvOptions};
use crate::python::Interpreter;
use crate::sys::process::{self, Output, TOOL_OUTPUT};

#[derive(Debug, Clone)]
pub struct PackageOptions {
    pub name: String,
    pub good: Option<String>,
    pub bad: Option<String>,
    /// The releases to consider, instead of asking pip.
    pub versions: Option<Vec<String>>,
    /// Folders of wheels and sdists handed to pip as `--find-links` (absolute paths).
    pub find_links: Vec<String>,
    pub cache_dir: PathBuf,
    /// A round trip's side whose releases are bisected (`--side`): its environment gets each
    /// release, the other side's holds what the case gives it, on the same interpreter.
    pub side: Option<Phase>,
}

/// The releases of a package pip lists for one interpreter.
#[derive(Debug, Clone, Default)]
pub struct Releases {
    /// What pip can install on the interpreter, oldest first.
    pub installable: Vec<String>,
    /// What pip lists only with `--ignore-requires-python`: releases whose `Requires-Python`
    /// excludes the interpreter, oldest first.
    pub excluded: Vec<String>,
}

/// The releases pip can see for `name` on `python`, oldest first (pre-releases only if pip
/// lists them), and apart those whose `Requires-Python` excludes it: pip is asked twice, as it
/// is and with `--ignore-requires-python`, at once.
pub async fn available_versions(
    python: &Path,
    name: &str,
    find_links: &[String],
    cancel: &CancellationToken,
) -> Result<Releases, BisectError> {
    let (installable, all) = tokio::join!(
        list_versions(python, name, find_links, false, cancel),
        list_versions(python, name, find_links, true, cancel)
    );
    let installable = installable?;
    if installable.is_empty() {
        return Err(BisectError::Request(format!("pip finds no release of `{name}`: check the name and your index (pip config list), or give --versions")));
    }
    // The second listing only tells what was left out: when it fails, nothing is.
    let all = match all {
        Err(BisectError::Interrupted) => return Err(BisectError::Interrupted),
        Err(_) => Vec::new(),
        Ok(all) => all,
    };
    Ok(Releases {
        excluded: left_out(&installable, &all),
        installable,
    })
}

/// The releases of `all` that are not in `installable` (PEP 440 equality), in `all`'s order.
fn left_out(installable: &[String], all: &[String]) -> Vec<String> {
    let kept: Vec<Version> = installable
        .iter()
        .filter_map(|v| Version::from_str(v).ok())
        .collect();
    all.iter()
        .filter(|v| Version::from_str(v).is_ok_and(|v| !kept.contains(&v)))
        .cloned()
        .collect()
}

/// One listing of the releases of `name`, sorted: pip's `index versions`, or on older pips the
/// resolver's error; with `ignore_requires_python`, those whose `Requires-Python` excludes
/// `python` too.
async fn list_versions(
    python: &Path,
    name: &str,
    find_links: &[String],
    ignore_requires_python: bool,
    cancel: &CancellationToken,
) -> Result<Vec<String>, BisectError> {
    let ignore: &[&str] = match ignore_requires_python {
        true => &["--ignore-requires-python"],
        false => &[],
    };
    // In an empty folder, with `-E -s` (every Python has them): nothing of the caller's folder
    // stands in for pip.
    let neutral = tempfile::tempdir().map_err(|e| BisectError::Io {
        context: "cannot make a temporary folder".into(),
        source: Box::new(e),
    })?;
    let spec = pip::command(python, &["-E", "-s"])
        .args(["index", "versions", name])
        .args(ignore.iter().copied())
        .args(pip::find_links_args(find_links))
        .cwd(neutral.path());
    let listed = match process::output(&spec, &format!("pip index versions {name}"), cancel).await {
        Ok(out) => out
            .lines()
            .find_map(|l| l.trim().strip_prefix("Available versions:"))
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
            }),
        Err(e) if e.is_cancelled() => return Err(BisectError::Interrupted),
        Err(_) => None,
    };
    let versions = match listed {
        Some(v) => v,
        None => versions_from_resolver_error(python, name, find_links, ignore, cancel).await?,
    };
    Ok(sort_versions(versions))
}

/// Older pips have no `pip index`: ask for a release that cannot exist and read the list of
/// releases from the error ("from versions: 1.0, 1.1"). Nothing is downloaded.
async fn versions_from_resolver_error(
    python: &Path,
    name: &str,
    find_links: &[String],
    ignore: &[&str],
    cancel: &CancellationToken,
) -> Result<Vec<String>, BisectError> {
    let scratch = tempfile::tempdir().map_err(|e| BisectError::Io {
        context: "cannot make a temporary folder".into(),
        source: Box::new(e),
    })?;
    let spec = pip::command(python, &["-E", "-s"])
        .cwd(scratch.path())
        .args(["download", "--no-deps", "--dest"])
        .arg(scratch.path())
        .arg(format!("{name}==0+crosspickle.impossible"))
        .args(ignore.iter().copied())
        .args(pip::find_links_args(find_links))
        .output(Output::Capture(TOOL_OUTPUT));
    let what = format!("pip download {name}");
    let finished = process::run(&spec, cancel)
        .await
        .map_err(|source| process::ToolError::Start { what, source })?;
    if cancel.is_cancelled() {
        return Err(BisectError::Interrupted);
    }
    let text = finished.stderr.text();
    let list = text
        .split("(from versions:")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .ok_or_else(|| BisectError::Listing {
            name: name.to_string(),
            said: process::said(&finished),
        })?;
    Ok(list
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s != "none")
        .collect())
}

/// PEP 440 order, duplicates removed; strings that are not versions are dropped.
pub fn sort_versions(versions: Vec<String>) -> Vec<String> {
    let mut parsed: Vec<(Version, String)> = versions
        .into_iter()
        .filter_map(|v| Version::from_str(&v).ok().map(|p| (p, v)))
        .collect();
    parsed.sort_by(|a, b| a.0.cmp(&b.0));
    parsed.dedup_by(|a, b| a.0 == b.0);
    parsed.into_iter().map(|(_, v)| v).collect()
}

/// The releases from `good` to `bad` (default: the oldest and the newest), inclusive.
pub fn range(
    versions: &[String],
    good: Option<&str>,
    bad: Option<&str>,
) -> Result<Vec<String>, String> {
    let find = |v: &str, which: &str| {
        let want =
            Version::from_str(v).map_err(|e| format!("--{which} {v}: not a version: {e}"))?;
        versions
            .iter()
            .position(|x| Version::from_str(x).is_ok_and(|x| x == want))
            .ok_or_else(|| {
                format!(
                    "--{which} {v} is not among the releases found: {}",
                    versions.join(", ")
                )
            })
    };
    let start = good.map(|g| find(g, "good")).transpose()?.unwrap_or(0);
    let end = bad
        .map(|b| find(b, "bad"))
        .transpose()?
        .unwrap_or(versions.len().saturating_sub(1));
    if start >= end {
        return Err(format!(
            "the good release ({}) must come before the bad one ({})",
            versions.get(start).map(String::as_str).unwrap_or("?"),
            versions.get(end).map(String::as_str).unwrap_or("?")
        ));
    }
    Ok(versions[start..=end].to_vec())
}

/// The requirement's project name, normalized (PEP 503).
fn project_name(requirement: &str) -> String {
    let name: String = requirement
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    normalize(&name)
}

fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_ascii_lowercase().chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The oldest of `releases` that the case pins `name` to (`name=={param}` or `name==X`), over
/// every combination of its params; `None` when it pins none of them.
fn case_floor(
    target: &Target,
    side: Option<Phase>,
    name: &str,
    releases: &[String],
) -> Option<String> {
    let wanted = normalize(name);
    let requires = target.case.requires_for(side);
    let mut pinned = Vec::new();
    for combination in target.case.param_combinations() {
        for req in crate::env::resolve_requirements(&requires, &combination) {
            if project_name(&req) != wanted {
                continue;
            }
            let spec = req.split(';').next().unwrap_or("");
            let Some((_, version)) = spec.split_once("==") else {
                continue;
            };
            let version = version.split(',').next().unwrap_or("").trim();
            if let Ok(v) = Version::from_str(version) {
                pinned.push(v);
            }
        }
    }
    releases
        .iter()
        .filter_map(|r| Version::from_str(r).ok().map(|v| (v, r)))
        .find(|(v, _)| pinned.contains(v))
        .map(|(_, r)| r.clone())
}

/// What goes into the environment of one release: `name==version`, and the case's own
/// `requires` (params substituted) except those naming the package; for a round trip's
/// `side`, that side's (`requires` and `dump_requires` or `load_requires`).
pub fn requirements(
    target: &Target,
    side: Option<Phase>,
    name: &str,
    version: &str,
) -> Vec<String> {
    let mut reqs = vec![format!("{name}=={version}")];
    let own = crate::env::resolve_requirements(&target.case.requires_for(side), &target.params);
    reqs.extend(
        own.into_iter()
            .filter(|r| project_name(r) != normalize(name)),
    );
    reqs
}

/// The cached environment holding `requirements` for `base` (the environments of the
/// `requires` feature, shared with runs): its python and whether it was already there, or
/// why it could not be made.
async fn environment(
    cache_dir: &Path,
    base: &Interpreter,
    requirements: &[String],
    find_links: &[String],
    cancel: &CancellationToken,
) -> Result<(PathBuf, bool), EnvError> {
    let options = EnvOptions {
        cache_dir: Some(cache_dir.to_path_buf()),
        offline: false,
        find_links: find_links.to_vec(),
        jobs: 1,
        progress: None,
    };
    let cached = crate::env::is_made(&options, base, requirements);
    let python = crate::env::python_with(&options, base, requirements, cancel).await?;
    Ok((python, cached))
}

struct PackageTester<'a> {
    target: &'a Target,
    /// The target without its `requires`, which each environment already holds.
    in_environment: &'a Target,
    base: &'a Interpreter,
    options: &'a PackageOptions,
    versions: &'a [String],
    cancel: &'a CancellationToken,
}

impl Tester for PackageTester<'_> {
    async fn test(&mut self, index: usize) -> Result<Step, BisectError> {
        let version = &self.versions[index];
        let label = format!("{}=={version}", self.options.name);
        let python = Some(self.base.label.clone());
        let started = Instant::now();
        let reqs = requirements(self.target, self.options.side, &self.options.name, version);
        let options = self.options;
        if let Some(side) = self.options.side {
            return one_side(self, side, label, reqs, started).await;
        }
        let made = environment(
            &options.cache_dir,
            self.base,
            &reqs,
            &options.find_links,
            self.cancel,
        )
        .await;
        let (exe, cached) = match made {
            Ok(e) => e,
            Err(EnvError::Cancelled) => return Err(BisectError::Interrupted),
            Err(reason) => {
                let reason = format!("does not install: {reason}");
                return Ok(Step::skipped(label, python, reason));
            }
        };
        let note = if cached {
            "environment cached".to_string()
        } else {
            format!("installed in {}", seconds(started.elapsed()))
        };
        let mut interpreter = self.base.clone();
        interpreter.executable = exe;
        let mut step = match self.in_environment.run_on(&interpreter, self.cancel).await {
            _ if self.cancel.is_cancelled() => return Err(BisectError::Interrupted),
            Ok(observed) => Step::tested(label, python, observed, StepState::Tested),
            Err(reason) => Step::skipped(label, python, reason),
        };
        step.notes.push(note);
        Ok(step)
    }
}

/// One release on one side of a round trip: the case runs on `base` as both producer and
/// consumer, `side`'s environment holding `reqs` and the other side's what the case gives it,
/// both made (and cached) by the runner as for any run.
async fn one_side(
    tester: &PackageTester<'_>,
    side: Phase,
    label: String,
    reqs: Vec<String>,
    started: Instant,
) -> Result<Step, BisectError> {
    let python = Some(tester.base.label.clone());
    let options = tester.options;
    let environments = EnvOptions {
        cache_dir: Some(options.cache_dir.clone()),
        offline: false,
        find_links: options.find_links.clone(),
        jobs: 1,
        progress: None,
    };
    let cached = crate::env::is_made(&environments, tester.base, &reqs);
    let mut target = tester.target.clone();
    let mut case = (*target.case).clone();
    let other = match side {
        Phase::Dump | Phase::Compare | Phase::Reload => Phase::Load,
        Phase::Load | Phase::Relay => Phase::Dump,
    };
    let fixed = crate::env::resolve_requirements(&case.requires_for(Some(other)), &target.params);
    case.requires.clear();
    let (this, that) = match side {
        Phase::Dump | Phase::Compare | Phase::Reload => {
            (&mut case.dump_requires, &mut case.load_requires)
        }
        Phase::Load | Phase::Relay => (&mut case.load_requires, &mut case.dump_requires),
    };
    *this = reqs;
    *that = fixed;
    target.case = std::sync::Arc::new(case);
    target.environments = environments;
    let mut step = match target.run_on(tester.base, tester.cancel).await {
        _ if tester.cancel.is_cancelled() => return Err(BisectError::Interrupted),
        Ok(observed) => Step::tested(label, python, observed, StepState::Tested),
        Err(reason) => Step::skipped(label, python, reason),
    };
    step.notes.push(match cached {
        true => format!("{side} environment cached"),
        false => format!("{side} environment made in {}", seconds(started.elapsed())),
    });
    Ok(step)
}

pub async fn bisect(
    target: &Target,
    base: &Interpreter,
    options: &PackageOptions,
    on_step: &mut dyn FnMut(&Step),
    cancel: &CancellationToken,
) -> Result<Report, BisectError> {
    let started = Instant::now();
    let releases = match &options.versions {
        Some(v) => Releases {
            installable: sort_versions(v.clone()),
            excluded: Vec::new(),
        },
        None => {
            available_versions(&base.executable, &options.name, &options.find_links, cancel).await?
        }
    };
    let all = &releases.installable;
    for (flag, given) in [("good", &options.good), ("bad", &options.bad)] {
        if let Some(release) = given.as_deref().filter(|g| among(&releases.excluded, g)) {
            return Err(BisectError::Request(format!(
                "--{flag} {release}: its Requires-Python excludes {} (pip does not install it there); pick one of {}",
                base.label,
                all.join(", ")
            )));
        }
    }
    // Without --good, the search starts at the oldest release the case itself pins (its params'
    // values), not at the package's oldest release, which often cannot install here at all.
    let floor = match &options.good {
        Some(_) => None,
        None => case_floor(target, options.side, &options.name, all),
    };
    let versions = match floor
        .as_deref()
        .and_then(|f| range(all, Some(f), options.bad.as_deref()).ok())
    {
        Some(from_the_floor) => from_the_floor,
        // No pin, or none before the bad release: from the oldest release (or --good).
        None => range(all, options.good.as_deref(), options.bad.as_deref())
            .map_err(BisectError::Request)?,
    };
    let left_out = left_out_of(&releases.excluded, &versions, options.bad.as_deref(), base);
    // Each release's environment already holds the case's `requires`: the runner must run the
    // case in it as it is, not make an environment of its own on top.
    let mut in_environment = target.clone();
    let mut case = (*target.case).clone();
    case.requires.clear();
    in_environment.case = std::sync::Arc::new(case);
    let mut tester = PackageTester {
        target,
        in_environment: &in_environment,
        base,
        options,
        versions: &versions,
        cancel,
    };
    let found = search_range(&versions, &mut tester, on_step).await?;
    let (boundaries, conclusion) = flip_first(found.boundaries, found.conclusion);
    Ok(Report {
        mode: "package",
        case: target.case.id.clone(),
        params: target.params.clone(),
        subject: Some(options.name.clone()),
        side: options.side.map(|s| s.to_string()),
        python: Some(base.label.clone()),
        candidates: versions.clone(),
        steps: found.steps,
        boundaries,
        conclusion,
        left_out,
        builds: None,
        duration_s: started.elapsed().as_secs_f64(),
    })
}

/// Is `release` one of `releases` (PEP 440 equality)?
fn among(releases: &[String], release: &str) -> bool {
    let Ok(want) = Version::from_str(release) else {
        return false;
    };
    releases
        .iter()
        .any(|r| Version::from_str(r).is_ok_and(|r| r == want))
}

/// The releases whose `Requires-Python` excludes `base` that the range would otherwise hold:
/// from its first candidate on, up to `--bad` when one is given.
fn left_out_of(
    excluded: &[String],
    candidates: &[String],
    bad: Option<&str>,
    base: &Interpreter,
) -> Option<LeftOut> {
    let first = Version::from_str(candidates.first()?).ok()?;
    let last = bad.and_then(|b| Version::from_str(b).ok());
    let releases: Vec<String> = excluded
        .iter()
        .filter(|r| {
            Version::from_str(r)
                .is_ok_and(|v| v >= first && last.as_ref().is_none_or(|last| v <= *last))
        })
        .cloned()
        .collect();
    (!releases.is_empty()).then(|| LeftOut {
        why: format!(
            "their Requires-Python excludes {}: pip does not install them there",
            base.label
        ),
        releases,
    })
}

/// The change that flips the outcome first: the last one the search found, into the outcome
/// of the newest release, after which nothing changes again; the earlier ones (often releases
/// too old to run here) follow in order.
pub fn flip_first(mut boundaries: Vec<Boundary>, conclusion: String) -> (Vec<Boundary>, String) {
    if boundaries.len() < 2 {
        return (boundaries, conclusion);
    }
    let flip = boundaries.pop().expect("two or more");
    let conclusion = format!(
        "the outcome flipped to {} at {} (from {} at {}), after {} earlier change{}: {}",
        flip.first_new.outcome,
        flip.first_new.label,
        flip.last_old.outcome,
        flip.last_old.label,
        boundaries.len(),
        if boundaries.len() == 1 { "" } else { "s" },
        boundaries
            .iter()
            .map(|b| format!(
                "at {} ({} -> {})",
                b.first_new.label, b.last_old.outcome, b.first_new.outcome
            ))
            .collect::<Vec<_>>()
            .join(", then ")
    );
    boundaries.insert(0, flip);
    (boundaries, conclusion)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ordering_and_ranges() {
        let sorted = sort_versions(v(&["1.10", "1.2", "1.2.0", "2.0rc1", "nonsense", "1.9"]));
        assert_eq!(sorted, v(&["1.2", "1.9", "1.10", "2.0rc1"]));
        assert_eq!(
            range(&sorted, Some("1.9"), None).unwrap(),
            v(&["1.9", "1.10", "2.0rc1"])
        );
        assert_eq!(
            range(&sorted, None, Some("1.9")).unwrap(),
            v(&["1.2", "1.9"])
        );
        assert!(range(&sorted, Some("1.10"), Some("1.2")).is_err());
        assert!(range(&sorted, Some("3.0"), None)
            .unwrap_err()
            .contains("not among"));
    }

    #[test]
    fn what_pip_lists_only_when_requires_python_is_ignored() {
        let installable = v(&["1.0", "1.1", "2.0"]);
        let all = v(&["0.9", "1.0", "1.1.0", "2.0", "2.1", "3.0"]);
        assert_eq!(left_out(&installable, &all), v(&["0.9", "2.1", "3.0"]));
        assert!(left_out(&installable, &[]).is_empty());
        assert!(among(&all, "2.1.0") && !among(&all, "2.2") && !among(&all, "x"));
    }

    #[test]
    fn names() {
        assert_eq!(
            project_name("Foo_Bar.baz>=1; python_version>'3'"),
            "foo-bar-baz"
        );
        assert_eq!(normalize("cloud__Pickle"), "cloud-pickle");
    }
}
