//! Comparisons of dbio results: summaries over repeats, the impact of one configuration
//! against a baseline, and whether a difference stands out of the noise.
//!
//! Results of every origin become [`Observation`]s (one measured run: configuration,
//! load, repeat, figures); [`compare`] turns them into a [`Comparison`], which `report`
//! renders. No I/O happens here except reading the inputs named in [`inputs`] and the
//! sweep manifests that say which of them were interleaved ([`interleaved`]).

pub mod awr;
pub mod comparison;
pub mod inputs;
pub mod interleaved;
pub mod mysql;
pub mod nfs_views;
pub mod observation;
pub mod pg;
pub mod provenance;
pub mod replay;
pub mod sources;
pub mod statistics;

#[cfg(test)]
mod shared_data;

pub use comparison::{compare, Comparison, Effect, Options, Verdict};
pub use observation::{Direction, Observation};

/// What can go wrong reading or comparing results; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("{path}: {error}")]
    Read { path: String, error: String },
    #[error("{path}: {what}")]
    Format { path: String, what: String },
    #[error("no results to compare")]
    Empty,
    #[error("baseline {baseline:?} is not among the configurations ({configs})")]
    NoBaseline { baseline: String, configs: String },
    #[error("--class {class:?}: no such I/O class in these results (they have: {classes})")]
    NoClass { class: String, classes: String },
    #[error("only one configuration ({0:?}): a comparison needs two or more (give sets separated by --, or a sweep of several configurations)")]
    OneConfig(String),
}
