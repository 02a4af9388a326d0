//! The error of every experiment, in its own module: each step (drive, run, calibrate,
//! matrix, plan) fails with it, and none of them should import another to name it.

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
