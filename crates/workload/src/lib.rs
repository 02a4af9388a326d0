//! dbio-workload: database I/O classes and mixes (which block, which size,
//! read or write, when) and the data set they run on.
//!
//! - [`class`]: the I/O classes and their Oracle wait events.
//! - [`dataset`]: dbio's own data files, created through the engine, marked
//!   with a manifest and a header, and guarded against overwriting others'.
//! - [`namespace`]: the operations on a directory the data set needs
//!   ([`namespace::LocalDir`] for local files); [`prepare`]: the one
//!   data-set algorithm over them.
//! - [`generator`]: per-user generator that yields the next I/O cheaply.
//! - [`rate`]: open-loop load: rates asked ([`Rates`]) and arrival
//!   schedules (fixed or Poisson).
//! - [`units`]: sizes (`1GiB`, `8k`) and durations (`30s`, `2m`).
//! - [`verify`], [`verify_scan`]: verified block content, the generation
//!   map, and the pass that checks every block.

pub mod class;
pub mod content;
pub mod dataset;
mod format;
pub mod generator;
pub mod namespace;
pub mod prepare;
pub mod rate;
pub mod skew;
mod steady;
pub mod units;
pub mod verify;
pub mod verify_scan;

pub use class::IoClass;
pub use dataset::{Dataset, DatasetError, DatasetSpec, FileKind, PrepareOptions};
pub use generator::{
    Generator, GeneratorError, Hotspot, Layout, Op, Profile, RedoFlush, RedoStress, Think,
    WorkloadConfig,
};
pub use rate::{Arrival, Arrivals, Burst, RateError, Rates, Schedule, MAX_BURST};
pub use skew::{ReadSkew, SharedPool};
