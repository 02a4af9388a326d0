//! dbio-experiment: what to measure and when to stop.
//!
//! - [`run`]: drive a workload with one thread per user, each with its own
//!   engine instance, for a time or a number of loops.
//! - [`calibrate`]: ramp outstanding asynchronous I/Os to find max IOPS at
//!   a latency cap and max MB/s, recording every load level.
//! - [`plan`]: from the options a user gives to a checked [`RunPlan`], then
//!   to a [`RunSpec`] once the target is open.
//! - [`OpenLoop`]: `--rate`, I/Os that arrive on a schedule whatever
//!   became of the ones before, latency counted from the intended start.
//! - [`SlobRow`]: `RunOptions::apply_slob`, a run's options from a slob.conf.
//! - [`replay`]: a workload model (from an AWR report) as the plan of an
//!   open-loop run at a scale of its rates.
//! - [`verify_map`]: the verify policy (which generation map a run needs).
//! - [`matrix`]: Orion's grid of small against large I/O load.
//! - [`sweep`]: a planned experiment of many runs, interleaved, resumable.
//! - [`age`]: file systems aged by rounds of random block writes, measured
//!   after each round.

pub mod age;
mod calibrate;
mod drive;
pub mod matrix;
mod pace;
pub mod plan;
pub mod replay;
mod requests;
mod run;
mod slob_run;
pub mod sweep;
pub mod verify_map;
mod warm;

pub use calibrate::{
    calibrate, calibrate_in_step, level_requests, Alone, CalibrateSpec, MachineIdle, Step,
};
pub use matrix::{matrix, MatrixSpec, Shape};
pub use pace::{OpenLoop, PACE_QUANTUM};
pub use plan::{RunOptions, RunPlan};
pub use requests::Requests;
pub use run::{run, run_requests, RunOutput, RunSpec, WindowEdge, WindowHook};
pub use slob_run::SlobRow;

use dbio_engine::EngineError;
use dbio_workload::verify::MapError;
use dbio_workload::{DatasetError, GeneratorError};

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
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error(transparent)]
    Map(#[from] MapError),
}

impl ExperimentError {
    /// True when a stop signal ended the preparation of the data set.
    pub fn is_interrupted(&self) -> bool {
        matches!(self, ExperimentError::Dataset(DatasetError::Interrupted))
    }
}

/// Called with one line of progress (the caller decides where it goes).
pub type ProgressFn<'a> = &'a (dyn Fn(&str) + Sync);
