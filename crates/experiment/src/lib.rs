//! dbio-experiment: what to measure and when to stop.
//!
//! - [`run`]: drive a workload with one thread per user, each with its own
//!   engine instance, for a time or a number of loops.
//! - [`calibrate`]: ramp outstanding asynchronous I/Os to find max IOPS at
//!   a latency cap and max MB/s, recording every load level.

mod calibrate;
mod drive;
mod run;

pub use calibrate::{calibrate, CalibrateSpec};
pub use run::{run, RunOutput, RunSpec};

use dbio_engine::EngineError;
use dbio_workload::GeneratorError;

/// Errors of an experiment; each names what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Workload(#[from] GeneratorError),
    #[error("{0}")]
    Config(String),
    #[error("cannot start user thread: {0}")]
    Thread(std::io::Error),
}

/// Called with one line of progress (the caller decides where it goes).
pub type ProgressFn<'a> = &'a (dyn Fn(&str) + Sync);
