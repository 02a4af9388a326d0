//! The result of `dbio age`: copy-on-write aging measured round by round,
//! one series per file system and fill level.

use serde::{Deserialize, Serialize};

use crate::Labels;

/// `kind` of an age result.
pub const AGE_KIND: &str = "age";

/// The whole aging experiment.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AgeResult {
    /// Always "age".
    pub kind: String,
    pub format_version: u32,
    pub dbio_version: String,
    pub started_unix: f64,
    pub elapsed_s: f64,
    /// A stop signal or an error ended it early: the rounds measured are kept.
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Where the loop files went (`--dir`), or the user's directory (`--target`).
    pub dir: String,
    /// True for `--target`: the user's own file system, neither made nor filled.
    #[serde(default)]
    pub own_target: bool,
    pub engine: String,
    /// O_DIRECT for every measured phase.
    pub direct: bool,
    pub block_size: u32,
    /// Size of each loop file system asked for (`--size`), bytes.
    pub size_bytes: u64,
    /// Data-set size (data files), bytes.
    pub dataset_bytes: u64,
    /// Rounds asked for.
    pub rounds: u32,
    /// Random block writes (dbwr-write) per round.
    pub updates_per_round: u64,
    /// Length of each timed measurement (single-block reads, redo writes), seconds.
    pub measure_s: f64,
    /// One series per file system and fill level, in the order made.
    pub series: Vec<AgeSeries>,
    /// What the reader should know (sizes raised to a file system's minimum, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
}

/// One file system at one fill level, round after round.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AgeSeries {
    /// File-system type (btrfs, xfs, ext4).
    pub fs: String,
    /// Fill level asked for, percent (0 with `--target`: not filled).
    pub fill_pct: u32,
    /// Fill level once the data set was created, percent, as `df` shows it.
    pub fill_measured_pct: f64,
    /// Size of the file system's image, bytes (0 with `--target`).
    pub image_bytes: u64,
    /// Data files of the data set.
    pub data_files: u32,
    /// Whether the loop device reads and writes its image with O_DIRECT
    /// (else the image's page cache serves some reads).
    #[serde(default)]
    pub loop_direct_io: bool,
    /// Round 0 (the fresh data set), then one point per round.
    pub points: Vec<AgePoint>,
    /// What ended this series early (the file system full, a failed mkfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The measurements after one round.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AgePoint {
    /// 0: the data set as created; N: after N rounds of updates.
    pub round: u32,
    /// Random block writes done so far, in all rounds.
    pub updates: u64,
    /// Mean time of this round's updates, microseconds (0 for round 0).
    pub update_mean_us: f64,
    /// Single-block random reads: mean and 99th percentile latency, microseconds.
    pub read_mean_us: f64,
    pub read_p99_us: f64,
    pub read_iops: f64,
    /// Redo writes (sequential, synchronous): mean and 99th percentile, microseconds.
    pub redo_mean_us: f64,
    pub redo_p99_us: f64,
    /// Sequential scan of the data files in 1 MiB reads, MB/s (10^6 bytes).
    pub scan_mbps: f64,
    /// Extents per data file, counted as `filefrag` counts them: mean and largest.
    pub extents_per_file: f64,
    pub extents_max: u64,
    /// Fill level of the file system, percent.
    pub fill_pct: f64,
}

impl AgeSeries {
    /// Single-block read latency of the last round over that of the fresh data
    /// set (round 0, before any update), mean, when both were measured.
    pub fn read_slowdown(&self) -> Option<f64> {
        let first = self.points.iter().find(|p| p.round == 0)?;
        let last = self.points.last().filter(|p| p.round > 0)?;
        (first.read_mean_us > 0.0).then(|| last.read_mean_us / first.read_mean_us)
    }

    /// Redo write latency of the last round over that of the fresh data set (mean).
    pub fn redo_slowdown(&self) -> Option<f64> {
        let first = self.points.iter().find(|p| p.round == 0)?;
        let last = self.points.last().filter(|p| p.round > 0)?;
        (first.redo_mean_us > 0.0).then(|| last.redo_mean_us / first.redo_mean_us)
    }

    /// "btrfs 82%", or "ext4 (own)" for the user's file system.
    pub fn label(&self) -> String {
        if self.image_bytes == 0 && self.fill_pct == 0 {
            format!("{} (own)", self.fs)
        } else {
            format!("{} {}%", self.fs, self.fill_pct)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slowdown_is_last_round_over_the_fresh_data_set() {
        let p = |round, read_mean_us| AgePoint {
            round,
            read_mean_us,
            redo_mean_us: 100.0,
            ..Default::default()
        };
        let mut s = AgeSeries {
            fs: "btrfs".into(),
            fill_pct: 82,
            image_bytes: 1,
            points: vec![p(0, 50.0)],
            ..Default::default()
        };
        assert_eq!(s.read_slowdown(), None);
        s.points.push(p(1, 100.0));
        s.points.push(p(2, 250.0));
        assert_eq!(s.read_slowdown(), Some(5.0));
        assert_eq!(s.redo_slowdown(), Some(1.0));
        assert_eq!(s.label(), "btrfs 82%");
    }
}
