//! `--github-annotations`: whether to annotate (auto: when `GITHUB_ACTIONS` is `true`), the
//! workspace annotations are relative to, and the terminal report guarded from GitHub's
//! reading of workflow commands, then the annotations ([`crate::report::github`]).

use super::args::{AnnotationsChoice, ReportOptions};
use crate::report::github::{self, Places};
use crate::results::Results;

/// What `run` and `merge` print: the terminal report `text`, and when annotations are on, that
/// report guarded (what cases printed is not read as commands) followed by the annotations.
pub fn with_annotations(text: String, results: &Results, reports: &ReportOptions) -> String {
    let on = match reports.github_annotations {
        AnnotationsChoice::Always => true,
        AnnotationsChoice::Never => false,
        AnnotationsChoice::Auto => std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
    };
    if !on {
        return text;
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let workspace = std::env::var_os("GITHUB_WORKSPACE")
        .filter(|w| !w.is_empty())
        .map(|w| cwd.join(w))
        .unwrap_or_else(|| cwd.clone());
    let places = Places { workspace, cwd };
    let annotations = github::render(results, &places, &full_report(reports));
    format!("{}{annotations}", github::guard(&text, &token()))
}

/// Where the whole report is: this step's log and the report files written.
fn full_report(reports: &ReportOptions) -> String {
    let files: Vec<String> = reports
        .files
        .0
         .0
        .iter()
        .map(|(_, p)| p.display().to_string())
        .collect();
    if files.is_empty() {
        "every failing run is in this step's log".to_string()
    } else {
        format!(
            "every failing run is in this step's log and in {}",
            files.join(", ")
        )
    }
}

/// A token no case can know: std's per-process random hash keys, with the time.
fn token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("crosspickle-{:016x}", hasher.finish())
}
