//! crosspickle: how does this pickle behaviour differ across Python versions, and did that
//! change when and how we expected?
//!
//! The pipeline, in the order it runs: [`case`] files are loaded, [`python`] interpreters
//! discovered and selected, a [`run::Plan`] made and executed, each run judged into a
//! [`verdict::Verdict`], and the [`results::Results`] handed to the [`report`]ers.

pub mod bisect;
pub mod case;
pub mod cli;
pub mod env;
pub mod errors;
pub mod outcome;
pub mod python;
pub mod report;
pub mod results;
pub mod run;
pub mod select;
pub mod sys;
pub mod verdict;
pub mod version;
