//! Running cases: the [`plan`] of runs, one Python process per run (started by
//! [`crate::sys::process`]) with the embedded [`driver`], and the [`execute`](mod@execute) loop that runs
//! them concurrently, judges each, and emits events for reporters. Why a run has no outcome is
//! a [`RunFailure`].

pub mod driver;
pub mod execute;
pub mod plan;
pub mod record;

pub use execute::{execute, Event, ExecuteOptions, Executed, RunFailure, SetupError};
pub use plan::{Plan, PlannedRun};
pub use record::RunRecord;
