//! Environments for cases with `requires`: one virtual environment per (interpreter, resolved
//! requirement set) in the cache folder, made once and reused by every later run and process.
//!
//! The runner asks [`Environments::python_for`] (in [`environments`]) before each run; it
//! answers the interpreter itself for a case without `requires`, and otherwise the python of
//! the environment, making it first when needed. How an environment is made is [`build`]'s
//! business, with [`pip`]'s arguments and environment; its name and identity [`key`]'s; what
//! is in the cache folder, for `crosspickle cache`, [`store`]'s; what may be asked of it,
//! [`options`]; why one could not be made, [`error`]; what its making tells the caller as it
//! goes, [`progress`]. This file only declares and re-exports.

pub mod build;
pub mod environments;
pub mod error;
pub mod key;
pub mod options;
pub mod pip;
pub mod progress;
pub mod store;

pub use environments::{is_made, missing, python_with, Environments};
pub use error::EnvError;
pub use key::{resolve_requirements, EnvKey, EnvMeta};
pub use options::EnvOptions;
pub use progress::{BuildEvent, BuildProgress};
pub use store::python_in;
