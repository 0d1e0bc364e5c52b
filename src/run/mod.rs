//! Running cases: the [`plan`] of runs, one Python process per run with the embedded
//! [`driver`] (forked from a fork [`server`], or started for the run alone by
//! [`crate::sys::process`]), and the [`execute`](mod@execute) loop that runs them concurrently,
//! judges each, and emits events for reporters. Why a run has no outcome is a [`RunFailure`].

pub mod bounce;
pub mod checks;
pub mod driver;
pub mod execute;
pub mod marshal;
pub mod plan;
pub mod record;
pub mod server;

pub use checks::CheckRecord;
pub use execute::{
    default_isolation, dump_only, execute, Dumped, Event, ExecuteOptions, Executed, Recorded,
    RunFailure, SetupError, Twins,
};
pub use plan::{Plan, PlannedRun};
pub use record::RunRecord;
