//! The case format (version 2, a superset of version 1, `docs/case-format.md`): what a case
//! file may say, checked strictly on load (`load.rs`), its JSON Schema, the loaded case and
//! the questions the runner asks of it (`model.rs`), and what its rules mean in words
//! (`rules.rs`). A facade: it declares the files and re-exports, and holds nothing itself.

mod bounce;
mod check_names;
mod checks;
mod de;
mod ends;
mod json_schema;
mod load;
mod model;
mod pairs;
mod params;
mod pyre;
mod requirement;
mod rules;
mod schema;
mod selectors;
pub mod yaml;

pub use bounce::{Bounce, RELAY_FILE, RELOAD_FILE};
pub use check_names::CheckNames;
pub use ends::PairEnds;
pub use load::{find_case_files, load_cases, load_file, parse_case};
pub use load::{MAX_COMBINATIONS, MAX_TIMEOUT_S};
pub use model::{Body, Case, Expected, RangeAt, Rule, RunSide, SetupLines};
pub use pairs::{PairRelations, Relation};
pub use params::{python_float_repr, python_unicode_literal, run_name, ParamValue, Params};
pub use pyre::{compile as compile_match, Pattern};
pub use rules::{describe_rule, head, summary, Wording};
pub use schema::{case_schema, Isolation, OutcomeKind, Phase};
pub use selectors::{Feature, Features, InterpreterSelector, VersionRequests, WhereValue};
