//! `--github-annotations`: whether to annotate (auto: when `GITHUB_ACTIONS` is `true`), the
//! workspace annotations are relative to, and the terminal report guarded from GitHub's
//! reading of workflow commands (whenever `GITHUB_ACTIONS` is `true`, annotations or not; every
//! other line crosspickle prints then is neutralised by [`crate::sys::stdout`]), then the
//! annotations ([`crate::report::github`]).

use super::args::{AnnotationsChoice, ReportOptions};
use crate::report::github::{self, Places};
use crate::results::Results;

/// Print what `run` and `merge` end with: the terminal report `text`, guarded (what cases
/// printed is not read as commands) whenever GitHub reads the output, whatever
/// `--github-annotations` says, or when annotations are on; then the annotations when they are
/// on (auto: when `GITHUB_ACTIONS` is `true`).
pub fn print_report(text: String, results: &Results, reports: &ReportOptions) {
    let github = crate::sys::stdout::github_reads();
    let on = match reports.github_annotations {
        AnnotationsChoice::Always => true,
        AnnotationsChoice::Never => false,
        AnnotationsChoice::Auto => github,
    };
    if !on && !github {
        crate::sys::stdout::emit(&text);
        return;
    }
    let annotations = if on {
        let cwd = std::env::current_dir().unwrap_or_default();
        let workspace = std::env::var_os("GITHUB_WORKSPACE")
            .filter(|w| !w.is_empty())
            .map(|w| cwd.join(w))
            .unwrap_or_else(|| cwd.clone());
        let places = Places { workspace, cwd };
        github::render(results, &places, &full_report(reports))
    } else {
        String::new()
    };
    crate::sys::stdout::emit_commands(&format!("{}{annotations}", github::guard(&text, &token())));
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
