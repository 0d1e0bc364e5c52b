//! crosspickle: how does this pickle behaviour differ across Python versions, and did that
//! change when and how we expected?
//!
//! The pipeline, in the order it runs: [`case`] files are loaded, [`python`] interpreters
//! discovered and selected, a [`run::Plan`] made and executed, each run judged into a
//! [`verdict::Verdict`], and the [`results::Results`] handed to the [`report`]ers.
//!
//! The layers, bottom to top (a module imports only from the layers before its own, never
//! from its own or a later one, and no two files import each other; `tests/house.rs` checks
//! every `crate::` path against this sentence): [`sys`], [`errors`] and [`version`], which
//! import nothing of the crate; [`python`]; [`case`], [`explore`] and [`record`]; [`corpus`], [`outcome`],
//! [`select`] and [`partition`]; [`env`](mod@env) and [`verdict`]; [`run`]; [`results`];
//! [`report`]; [`bisect`]; [`cli`]; and `main.rs`, which calls [`cli::main`].
//!
//! What each layer owns, the life of one run (driver protocol, fork servers, result channel)
//! and what to touch to add a report format, a case or rule key, a discovery source, a bisect
//! mode or a platform: `docs/architecture.md`.

/// `eprintln!` for the whole crate: what crosspickle says on stderr, written without a panic
/// when stderr is closed (`crosspickle ... 2>&1 | head -2`): the exit code stays the one the
/// command meant. (Defined before the modules, it stands in for the standard macro in all of
/// them.)
macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::sys::stdout::emit_err(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub mod bisect;
pub mod case;
pub mod cli;
pub mod corpus;
pub mod env;
pub mod errors;
pub mod explore;
pub mod outcome;
pub mod partition;
pub mod python;
pub mod record;
pub mod report;
pub mod results;
pub mod run;
pub mod select;
pub mod sys;
pub mod verdict;
pub mod version;
