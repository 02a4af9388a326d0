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
mod error;
mod hooks;
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
pub use error::ExperimentError;
pub use hooks::{ProgressFn, WindowEdge, WindowHook};
pub use matrix::{matrix, MatrixSpec, Shape};
pub use pace::{OpenLoop, PACE_QUANTUM};
pub use plan::{RunOptions, RunPlan};
pub use requests::Requests;
pub use run::{run, run_requests, RunOutput, RunSpec};
pub use slob_run::SlobRow;
