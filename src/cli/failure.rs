//! Why a command stopped, turned into its exit code and its message here and nowhere else:
//! **2** for bad input (the user's to fix), **3** when crosspickle could not do its work (a tool
//! it runs failed, its cache or a temporary folder could not be written; a `run` with an
//! `env-error`, a run that could not be set up, and a `merge` of one), **130** for Ctrl-C (**143** SIGTERM,
//! **129** SIGHUP: [`super::interrupt::exit_code`]).
//! (**0** and **1** are the verdicts' answer, not failures.)

use crate::bisect::BisectError;
use crate::errors::Error;
use crate::sys::process::ToolError;

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_SYSTEM: i32 = 3;
/// Ctrl-C (SIGTERM and SIGHUP: 143 and 129).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Why a command stopped without its answer.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Bad input: a case file with an error, an unknown flag, a request nothing matches, a
    /// file that cannot be read or written where the user asked.
    #[error(transparent)]
    Input(#[from] Error),
    #[error(transparent)]
    Bisect(#[from] BisectError),
    /// A tool crosspickle ran for the user failed (`uv python install`), or Ctrl-C stopped it.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// Something crosspickle needs for itself failed.
    #[error("{context}: {source}")]
    System {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl Failure {
    pub fn system(context: impl Into<String>, source: std::io::Error) -> Self {
        Failure::System {
            context: context.into(),
            source,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Input(_) => EXIT_USAGE,
            Failure::Bisect(BisectError::Input(_) | BisectError::Request(_)) => EXIT_USAGE,
            Failure::Bisect(BisectError::Interrupted) => super::interrupt::exit_code(),
            Failure::Tool(e) if e.is_cancelled() => super::interrupt::exit_code(),
            Failure::Tool(_) => EXIT_SYSTEM,
            Failure::Bisect(
                BisectError::Tool(_) | BisectError::Listing { .. } | BisectError::Io { .. },
            )
            | Failure::System { .. } => EXIT_SYSTEM,
        }
    }

    /// What is printed to stderr.
    pub fn message(&self) -> String {
        match self {
            Failure::Bisect(BisectError::Interrupted) => "interrupted".to_string(),
            Failure::Tool(e) if e.is_cancelled() => "interrupted".to_string(),
            other => format!("error: {other}"),
        }
    }
}

/// What a finished `run` or `merge` exits with: 3 (its line printed) when some runs could not be
/// set up, else 1 when a verdict failed (a flaky one only with `--flaky-result fail`), else 0.
pub fn exit_for(results: &crate::results::Results, flaky: &super::args::FlakyOptions) -> i32 {
    if let Some(message) = tooling_failure(results) {
        eprintln!("{message}");
        EXIT_SYSTEM
    } else if flaky.failed(results) {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

/// Runs that could not be set up (`env-error`: the interpreter could not be started or its
/// environment made, the run's folder could not be written) are crosspickle's failure, not a
/// verdict on their cases: what `run` and `merge` end with (exit 3), naming how many and the first.
fn tooling_failure(results: &crate::results::Results) -> Option<String> {
    let failed: Vec<_> = results
        .runs
        .iter()
        .filter(|r| r.verdict == crate::verdict::Verdict::EnvError)
        .collect();
    let first = failed.first()?;
    let name = crate::case::run_name(
        &first.case,
        &first.params,
        first.dump_python.as_deref(),
        first.load_python.as_deref(),
    );
    let on = match &first.dump_python {
        Some(_) => String::new(),
        None => format!(" on {}", first.python),
    };
    let whose = if failed.len() == 1 {
        "its case"
    } else {
        "their cases"
    };
    Some(format!(
        "error: {} of {} could not be set up, a tooling failure and no verdict on {whose} \
         (the first, {name}{on}: {}); the reports list them as env-error",
        failed.len(),
        crate::report::text::count(results.runs.len(), "run", "runs"),
        crate::report::text::clean(first.reason.as_deref().unwrap_or("no reason given"))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::process::ToolError;

    #[test]
    fn bad_input_is_2_and_failed_tools_are_not() {
        let usage = Failure::from(Error::Usage("bad".into()));
        assert_eq!(
            (usage.exit_code(), usage.message()),
            (2, "error: bad".into())
        );
        let request = Failure::from(BisectError::Request("`v9` is not a commit".into()));
        assert_eq!(request.exit_code(), EXIT_USAGE);
        let git = Failure::from(BisectError::from(ToolError::Failed {
            what: "git clone --shared".into(),
            status: "exit status: 128".into(),
            said: "fatal: no space left".into(),
        }));
        assert_eq!(git.exit_code(), EXIT_SYSTEM);
        assert_eq!(
            git.message(),
            "error: `git clone --shared` failed (exit status: 128): fatal: no space left"
        );
        let cancelled = BisectError::from(ToolError::Cancelled {
            what: "make".into(),
        });
        assert_eq!(Failure::from(cancelled).exit_code(), EXIT_INTERRUPTED);
        let io = Failure::system("preparing the run", std::io::Error::other("disk full"));
        assert_eq!(io.exit_code(), EXIT_SYSTEM);
    }
}
