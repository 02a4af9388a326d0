//! dbio-stats: completions in, figures out. Histograms, per-second series,
//! per-file counters, process CPU time, and the result schema.

pub mod schema;

pub use schema::*;
