//! Where dbio's workload models come from: an Oracle AWR report, a PostgreSQL capture, a
//! MySQL or MariaDB capture, or a model saved before. Each source gives the one
//! [`WorkloadModel`] that `dbio replay` runs and `dbio compare` sets beside a run. SLOB's
//! slob.conf ([`slob`]) is here too: it gives a run's knobs (and a replay's sessions,
//! time and size) rather than a model.
//!
//! Each source is a module of its own ([`awr`], [`pg`], [`mysql`]), with what reads the
//! live server where there is one (`pg::conn`, `mysql::conn`). Which source a file is,
//! and what it gives, is chosen in one place: [`source`]. Another source is a module
//! here and a variant there.

pub mod awr;
pub mod model;
pub mod mysql;
pub mod pg;
#[cfg(feature = "slob")]
pub mod slob;
pub mod source;

#[cfg(test)]
mod shared_data;

pub use model::{ModelClass, ModelError, WorkloadModel};
pub use source::{Histograms, Source};
