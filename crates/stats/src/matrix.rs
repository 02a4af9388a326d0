//! The result of `dbio matrix`: Orion's grid of small random I/O load against large I/O
//! load, each point measured with both loads running at once.

use serde::{Deserialize, Serialize};

use crate::Labels;

/// `kind` of a matrix result.
pub const MATRIX_KIND: &str = "matrix";

/// The whole matrix.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MatrixResult {
    /// Always "matrix".
    pub kind: String,
    pub format_version: u32,
    pub dbio_version: String,
    pub started_unix: f64,
    pub elapsed_s: f64,
    /// A stop signal ended it early: the points measured are kept.
    pub interrupted: bool,
    pub target: String,
    pub engine: String,
    pub dataset_bytes: u64,
    /// Orion's shape: basic, detailed, row, col or max.
    pub shape: String,
    /// Size of a small I/O (random reads), bytes.
    pub small_bytes: u32,
    /// Size of a large I/O (random reads), bytes.
    pub large_bytes: u32,
    /// Measured time of each point, seconds (after its warm-up).
    pub point_s: f64,
    /// Outstanding small I/Os of the grid's columns (0: none).
    pub small_levels: Vec<u32>,
    /// Outstanding large I/Os of the grid's rows (0: none).
    pub large_levels: Vec<u32>,
    /// Points in the order measured.
    pub points: Vec<MatrixPoint>,
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
}

/// One point: `small` 8 KiB reads and `large` 1 MiB reads outstanding at the same time.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MatrixPoint {
    pub small: u32,
    pub large: u32,
    /// Small I/Os per second.
    pub small_iops: f64,
    /// Mean and 99th percentile latency of the small I/Os, microseconds.
    pub small_mean_us: f64,
    pub small_p99_us: f64,
    /// Megabytes (10^6 bytes) per second of the large I/Os.
    pub large_mbps: f64,
    /// Mean latency of the large I/Os, microseconds.
    pub large_mean_us: f64,
}

impl MatrixResult {
    /// The point at (small, large), if measured.
    pub fn point(&self, small: u32, large: u32) -> Option<&MatrixPoint> {
        self.points
            .iter()
            .find(|p| p.small == small && p.large == large)
    }
}
