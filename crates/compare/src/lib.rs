//! Comparisons of dbio results: summaries over repeats, the impact of one configuration
//! against a baseline, and whether a difference stands out of the noise.
//!
//! Results of every origin become [`Observation`]s (one measured run: configuration,
//! load, repeat, figures); [`compare`] turns them into a [`Comparison`], which `report`
//! renders. No I/O happens here except reading the inputs named in [`inputs`] and the
//! sweep manifests that say which of them were interleaved ([`interleaved`]).
//!
//! Production's side comes from dbio-sources: AWR reports ([`awr_import`]) and
//! database captures ([`captures`]) as observations, and a replay's run judged against
//! the workload model it ran ([`replay`]).

pub mod awr_import;
pub mod captures;
pub mod comparison;
mod error;
pub mod inputs;
pub mod interleaved;
pub mod nfs_views;
pub mod observation;
pub mod provenance;
pub mod replay;
pub mod statistics;

#[cfg(test)]
#[path = "../../sources/src/shared_data.rs"]
mod shared_data;

pub use comparison::{compare, Comparison, Effect, Options, Verdict};
pub use error::CompareError;
pub use observation::{Direction, Observation};
