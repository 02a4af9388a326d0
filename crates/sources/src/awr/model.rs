//! What an AWR report says about the storage: the model [`super::parse`] reads, in the
//! same form whichever version and layout (text or HTML) printed the report.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One AWR report read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AwrReport {
    /// How the report was printed.
    pub layout: Layout,
    /// The database release as the report gives it ("11.2.0.4.0"), where it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    /// The database name (DB Name).
    pub db_name: String,
    /// The instance name (or, where a report gives none, its unique name).
    pub instance: String,
    /// The snapshot the report starts at.
    pub begin_snap: Option<u64>,
    /// The snapshot the report ends at.
    pub end_snap: Option<u64>,
    /// When the begin snapshot was taken, as printed ("12-Feb-17 12:16:04").
    pub begin_time: Option<String>,
    /// When the end snapshot was taken, as printed.
    pub end_time: Option<String>,
    /// Seconds between the snapshots (the report prints minutes to 0.01).
    pub elapsed_s: f64,
    /// The I/O rates of the Load Profile (completed from the Instance Activity Stats
    /// where the Load Profile lacks them).
    pub load_profile: LoadProfile,
    /// Foreground wait events: the Top events table and the Foreground Wait Events
    /// table together, one entry per event.
    pub events: Vec<WaitEvent>,
    /// Background wait events (the Background Wait Events table).
    #[serde(default)]
    pub background_events: Vec<WaitEvent>,
    /// IOStat by Function summary: one row per function (Buffer Cache Reads, DBWR,
    /// LGWR, Direct Reads, Direct Writes, Others, ...), the TOTAL row left out.
    #[serde(default)]
    pub io_by_function: Vec<IoStat>,
    /// IOStat by Filetype summary: one row per file type (Data File, Log File, ...).
    #[serde(default)]
    pub io_by_filetype: Vec<IoStat>,
    /// Wait event histograms by event: the Wait Event Histogram and its detail tables
    /// (11g's milliseconds, 12c's Histogram Detail, 19c's microseconds) in one.
    #[serde(default)]
    pub histograms: BTreeMap<String, WaitHistogram>,
    /// Tablespace IO Stats, one row per tablespace.
    #[serde(default)]
    pub tablespaces: Vec<FileIo>,
    /// File IO Stats, one row per data or temp file.
    #[serde(default)]
    pub files: Vec<FileIo>,
    /// Instance Activity Stats: statistic name as printed (a text report cuts it to
    /// 33 characters) to its total over the interval.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub activity: BTreeMap<String, f64>,
}

impl AwrReport {
    /// An Instance Activity statistic's total, found by its whole name or, in a text
    /// report that cut it, by the part printed.
    pub fn activity_total(&self, name: &str) -> Option<f64> {
        self.activity.get(name).copied().or_else(|| {
            self.activity
                .iter()
                .find(|(k, _)| k.len() >= 24 && name.starts_with(k.as_str()))
                .map(|(_, v)| *v)
        })
    }
}

/// How a report was printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// `awrrpt.sql` text output (or `AWR_REPORT_TEXT` spooled by SQL*Plus).
    Text,
    /// `awrrpt.sql` HTML output.
    Html,
}

/// The Load Profile's I/O figures, per second over the report's interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadProfile {
    /// Read I/O requests per second (Load Profile "Read IO requests", or Instance
    /// Activity "physical read IO requests").
    pub read_iops: Option<f64>,
    /// Write I/O requests per second ("Write IO requests", or "physical write IO
    /// requests").
    pub write_iops: Option<f64>,
    /// MiB read per second ("Read IO (MB)", or "physical read bytes" / 2^20).
    pub read_mib_s: Option<f64>,
    /// MiB written per second ("Write IO (MB)", or "physical write bytes" / 2^20).
    pub write_mib_s: Option<f64>,
    /// Blocks read per second ("Physical read (blocks)", 11g "Physical reads"): blocks,
    /// not requests; a multiblock read counts each of its blocks.
    pub physical_read_blocks: Option<f64>,
    /// Blocks written per second ("Physical write (blocks)", 11g "Physical writes").
    pub physical_write_blocks: Option<f64>,
    /// Blocks read from the buffer cache per second ("Logical read (blocks)", 11g
    /// "Logical reads").
    pub logical_read_blocks: Option<f64>,
    /// Redo bytes written per second ("Redo size (bytes)", 11g "Redo size").
    pub redo_bytes: Option<f64>,
    /// Logical reads per physical block read: how much of the reading the buffer
    /// cache absorbs.
    pub logical_to_physical: Option<f64>,
    /// Where the request and MiB rates came from: "Load Profile" or "Instance Activity
    /// Stats".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_from: Option<String>,
    /// Every Load Profile row's per-second figure, by its name as printed without the
    /// colon ("DB Time(s)", "Read IO requests", ...).
    pub per_second: BTreeMap<String, f64>,
}

/// One wait event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitEvent {
    /// The event's name, made whole where a text report cut it to 26 characters and
    /// the Top events table or a known I/O event gives it whole.
    pub event: String,
    /// Its wait class ("User I/O", "System I/O", "Commit", ...), made whole where 19c
    /// cut it to 8 characters; empty for DB CPU and unknown events.
    pub wait_class: String,
    /// Times waited (absent for DB CPU).
    pub waits: Option<f64>,
    /// Total time waited, seconds (for DB CPU, the CPU time).
    pub total_wait_s: f64,
    /// Mean wait in microseconds, from the most precise source the report has (see
    /// `mean_source`).
    pub mean_wait_us: Option<f64>,
    /// Which figures `mean_wait_us` came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_source: Option<MeanSource>,
    /// How far the true mean can be from `mean_wait_us`, microseconds: the rounding of
    /// the printed figures it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_error_us: Option<f64>,
    /// Share of DB time (foreground) or of background time, percent.
    pub db_time_pct: Option<f64>,
}

/// Which printed figures an event's mean wait came from. AWR prints the same wait
/// several times with different rounding (11g's Avg wait column is whole
/// milliseconds, so 21 us prints as 0); the one with the smallest rounding error wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MeanSource {
    /// Top events table: total wait time over waits.
    TopTimeOverWaits,
    /// Top events table: its Avg wait column.
    TopAvgColumn,
    /// Foreground or Background Wait Events table: Total Wait Time (s) over Waits.
    EventsTimeOverWaits,
    /// Foreground or Background Wait Events table: its Avg wait column.
    EventsAvgColumn,
}

impl MeanSource {
    /// A short name for tables: "time/waits (Top)".
    pub fn label(self) -> &'static str {
        match self {
            MeanSource::TopTimeOverWaits => "time/waits (Top events)",
            MeanSource::TopAvgColumn => "Avg column (Top events)",
            MeanSource::EventsTimeOverWaits => "time/waits (Wait Events)",
            MeanSource::EventsAvgColumn => "Avg column (Wait Events)",
        }
    }
}

/// One row of IOStat by Function or by Filetype.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoStat {
    /// The function ("Buffer Cache Reads", "DBWR", "LGWR", "Direct Reads", "Direct
    /// Writes", "Others", ...) or file type ("Data File", "Log File", ...), made whole
    /// where a text report cut it to 15 characters.
    pub name: String,
    /// MiB read over the interval.
    pub read_mib: Option<f64>,
    /// Read requests per second.
    pub read_reqs_s: Option<f64>,
    /// MiB read per second.
    pub read_mib_s: Option<f64>,
    /// MiB written over the interval.
    pub write_mib: Option<f64>,
    /// Write requests per second.
    pub write_reqs_s: Option<f64>,
    /// MiB written per second.
    pub write_mib_s: Option<f64>,
    /// Waits counted (by Function only).
    pub waits: Option<f64>,
    /// Mean wait, microseconds (by Function only: "Avg Tm(ms)" or 12c+ "Avg Time").
    pub avg_wait_us: Option<f64>,
    /// Mean service time of a small (single block) read, microseconds (by Filetype).
    pub small_read_us: Option<f64>,
    /// Mean service time of a large (multiblock) read, microseconds (by Filetype).
    pub large_read_us: Option<f64>,
}

/// A wait event's histogram.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitHistogram {
    /// Waits counted ("Total Waits", rounded as printed: "35.9K").
    pub total_waits: Option<f64>,
    /// Buckets in increasing order, covering 0 to the last bound without gap.
    pub buckets: Vec<WaitBucket>,
}

/// One bucket of a wait histogram: waits with `lower_us <= wait < upper_us`. Oracle's
/// bounds are powers of two: they are read as powers of two of microseconds (1 ms =
/// 1024 us, 1 s = 1024 ms, as 19c's legend has it), so that they line up with dbio's
/// own buckets; for 11g's millisecond tables this is 2.4% above the printed bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WaitBucket {
    /// Lower bound, microseconds.
    pub lower_us: u64,
    /// Upper bound, microseconds (`u64::MAX` for the last, open bucket).
    pub upper_us: u64,
    /// Share of the event's waits in this bucket, percent.
    pub pct: f64,
}

/// One row of Tablespace IO Stats or File IO Stats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileIo {
    /// The tablespace.
    pub tablespace: String,
    /// The file (File IO Stats only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Read requests over the interval.
    pub reads: Option<f64>,
    /// Read requests per second.
    pub reads_s: Option<f64>,
    /// Mean read time, microseconds ("Av Rd(ms)").
    pub avg_read_us: Option<f64>,
    /// Mean blocks per read ("Av Blks/Rd"): 1 for single-block reads.
    pub blocks_per_read: Option<f64>,
    /// Write requests over the interval.
    pub writes: Option<f64>,
    /// Write requests per second.
    pub writes_s: Option<f64>,
}
