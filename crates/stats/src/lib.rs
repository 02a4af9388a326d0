//! dbio-stats: completions in, figures out. Histograms, per-second series,
//! per-file counters, process CPU time, and the result schema.
//!
//! # Use in a run driver
//!
//! - Each user thread owns a [`Recorder`] (no locks, no allocation per
//!   completion) and calls [`Recorder::record`] for every completion, with
//!   the class and file indexes, the direction, the bytes, the latency in
//!   nanoseconds and the reap time. Failed I/Os go to
//!   [`Recorder::record_failure`].
//! - Once per reaped batch the thread also bumps the shared [`Live`]
//!   counters; a progress thread prints [`Progress::line`] once a second.
//! - At the end the driver [`merge`](Recorder::merge)s the recorders and
//!   calls [`Recorder::finish`], then fills the [`RunResult`]: file names
//!   and sizes, `cpu` from [`CpuClock`], and [`RunResult::fill_totals`].
//! - `dbio calibrate` uses one merged recorder per load level and
//!   [`Recorder::curve_point`]; [`Recorder::histogram`] gives the buckets
//!   of the `max_iops` level.
//! - [`process_cpu`] reads another process's CPU time (the NFS server's).
//! - [`Recorder::to_raw`] gives the recorder as data ([`RawRecorder`],
//!   kept in `RunResult::raw`); raw recorders [`merge`](RawRecorder::merge)
//!   exactly, and [`merge_runs`] makes one result of several runs.
//! - [`upgrade_json`] brings results of older formats to the current one.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use dbio_stats::{ClassDesc, CpuClock, Live, Progress, Recorder, RunResult};
//!
//! let classes = [ClassDesc::new("single-block-read", "db file sequential read")];
//! let start = Instant::now();
//! let cpu0 = CpuClock::now();
//! let live = Live::new();
//! let mut progress = Progress::new(&live, start);
//!
//! // In each user thread: one recorder, one record() per completion.
//! let mut rec = Recorder::new(&classes, 1, start);
//! rec.record(0, 0, false, 8192, 120_000, Instant::now()); // 120 us read
//! live.add(1, 8192, 120_000); // once per reaped batch
//! let _line = progress.line(&live, Instant::now()); // once a second
//!
//! // At the end: merge the threads' recorders and fill the result.
//! let mut all = Recorder::new(&classes, 1, start);
//! all.merge(&rec);
//! let elapsed = Duration::from_secs(1);
//! let (classes, mut files, series) = all.finish(elapsed);
//! files[0].name = "data01.dbf".into();
//! let mut run = RunResult {
//!     kind: dbio_stats::RUN_KIND.into(),
//!     format_version: dbio_stats::FORMAT_VERSION,
//!     elapsed_s: elapsed.as_secs_f64(),
//!     failed_ios: all.failed(),
//!     cpu: cpu0.elapsed(),
//!     classes,
//!     files,
//!     series,
//!     ..Default::default()
//! };
//! run.fill_totals();
//! assert_eq!(run.ios, 1);
//! assert_eq!(run.classes[0].histogram[0].lower_us, 64); // [64,128) us
//! ```

pub mod age;
pub mod cpu;
pub mod kernel_nfs;
pub mod live;
pub mod machine_cpu;
pub mod matrix;
mod merge;
pub mod open_loop;
pub mod raw;
pub mod recorder;
pub mod schema;
pub mod slo;
mod upgrade;

pub use age::{AgePoint, AgeResult, AgeSeries, AGE_KIND};
pub use cpu::{parse_proc_stat, process_cpu, CpuClock};
pub use kernel_nfs::{KernelNfsConnection, KernelNfsOp, KernelNfsSecond, KernelNfsSection};
pub use live::{progress_line, Live, LiveSnapshot, Progress};
pub use machine_cpu::MachineCpu;
pub use matrix::{MatrixPoint, MatrixResult, MATRIX_KIND};
pub use merge::merge_runs;
pub use open_loop::{ClassLateness, Lateness, OpenLoopClass, OpenLoopSection};
pub use raw::{RawClass, RawError, RawFile, RawHistogram, RawRecorder, RawSecond};
pub use recorder::{cpu_us_per_io, ClassDesc, Recorder};
pub use schema::*;
pub use slo::{Slo, SloOutcome, SloStat};
pub use upgrade::upgrade_json;

/// Errors of this crate; each names the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unexpected format")]
    Parse { path: String },
}
