//! Typed errors for everything the user can get wrong (bad input, exit status 2), each with a
//! message that says what to do about it. Runtime faults of the cases themselves are not
//! errors: they are outcomes. What fails inside crosspickle has its own types where it happens
//! (`ProbeError`, `EnvError`, `RunFailure`, `ToolError`, `BisectError`), and `cli` alone turns
//! them into exit codes. This file imports nothing from the crate.

use std::path::PathBuf;

/// A problem in a case file: where it is and what is wrong.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}{}: {message}", path.display(), location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
pub struct CaseError {
    pub path: PathBuf,
    /// 1-based line and column, when known.
    pub location: Option<(usize, usize)>,
    pub message: String,
}

/// Bad input that stops crosspickle before or around a run (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}", format_case_errors(.0))]
    Cases(Vec<CaseError>),

    #[error("no case files found in {}: give case files or folders holding *.yaml / *.yml files", format_paths(.0))]
    NoCases(Vec<PathBuf>),

    #[error("{}: no such file or folder", .0.display())]
    MissingPath(PathBuf),

    #[error("invalid version request `{request}`: {reason}")]
    VersionRequest { request: String, reason: String },

    #[error("no interpreter matches {}\n{found}\nInstall it (with `pyenv install`, or `--download-python auto` to have uv install it into the cache), {}", format_requests(.requests), if *.in_ci { "or name it in pythons.toml (with CI set, a missing interpreter fails the run: --skip-missing is off)" } else { "name it in pythons.toml, or pass --skip-missing" })]
    MissingInterpreters {
        requests: Vec<String>,
        found: String,
        /// `CI` is set: `--skip-missing` would not help, so it is not offered.
        in_ci: bool,
    },

    #[error("no usable Python interpreter found{0}")]
    NoInterpreters(String),

    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },

    #[error("invalid -k expression `{expr}`: {reason}")]
    Keyword { expr: String, reason: String },

    #[error("{}", .0)]
    Usage(String),

    /// A file or folder the user named that cannot be read or written.
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

impl Error {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

fn format_case_errors(errors: &[CaseError]) -> String {
    let mut out = String::new();
    for (i, e) in errors.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&e.to_string());
    }
    if errors.len() > 1 {
        let files = errors.iter().map(|e| &e.path);
        let files = files.collect::<std::collections::BTreeSet<_>>().len();
        let plural = if files == 1 { "" } else { "s" };
        out.push_str(&format!(
            "\n{} errors in {files} case file{plural}",
            errors.len()
        ));
    }
    out
}

fn format_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn format_requests(requests: &[String]) -> String {
    requests
        .iter()
        .map(|r| format!("`{r}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn at(path: &str, line: usize) -> CaseError {
        CaseError {
            path: PathBuf::from(path),
            location: Some((line, 1)),
            message: "bad".into(),
        }
    }

    #[test]
    fn errors_are_counted_apart_from_the_files_they_are_in() {
        let one = Error::Cases(vec![at("a.yaml", 2), at("a.yaml", 4)]).to_string();
        assert!(one.ends_with("\n2 errors in 1 case file"), "{one}");
        let two = Error::Cases(vec![at("a.yaml", 2), at("b.yaml", 1), at("a.yaml", 5)]);
        assert!(
            two.to_string().ends_with("\n3 errors in 2 case files"),
            "{two}"
        );
        let single = Error::Cases(vec![at("a.yaml", 2)]).to_string();
        assert_eq!(single.lines().count(), 1, "{single}");
    }
}
