//! The error of reading and comparing results, in a module of its own: observations
//! and comparisons fail with it, and lib.rs, which re-exports them, is not where they
//! should import it from.

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
