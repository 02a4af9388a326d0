//! A PostgreSQL capture: two snapshots of the server's cumulative statistics views,
//! the settings that shape its I/O, its size and the sessions seen between them. The
//! views' rows are kept as PostgreSQL printed them (`row_to_json`), whatever the
//! version, so a capture file holds the evidence and the model is computed from it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::readings::{HostSnapshot, RelationReads, SchedSnapshot};

/// `kind` of a capture file.
pub const CAPTURE_KIND: &str = "dbio-pg-capture";
/// Format of the capture file.
pub const CAPTURE_FORMAT: u32 = 1;
/// Oldest server whose statistics the model reads (pg_stat_wal came in 14).
pub const OLDEST_VERSION_NUM: u32 = 140_000;

/// The settings read with a capture: those that decide how PostgreSQL does its I/O.
pub const SETTINGS: [&str; 28] = [
    "block_size",
    "wal_block_size",
    "shared_buffers",
    "wal_buffers",
    "wal_segment_size",
    "wal_sync_method",
    "fsync",
    "synchronous_commit",
    "commit_delay",
    "commit_siblings",
    "full_page_writes",
    "wal_level",
    "wal_writer_delay",
    "checkpoint_timeout",
    "checkpoint_completion_target",
    "checkpoint_flush_after",
    "max_wal_size",
    "bgwriter_delay",
    "bgwriter_lru_maxpages",
    "effective_io_concurrency",
    "io_combine_limit",
    "debug_io_direct",
    "io_method",
    "io_workers",
    "track_io_timing",
    "track_wal_io_timing",
    "stats_fetch_consistency",
    "max_connections",
];

/// The statistics views a snapshot reads, with the first version that has each.
pub const VIEWS: [(&str, u32); 5] = [
    ("pg_stat_database", 0),
    ("pg_stat_wal", 140_000),
    ("pg_stat_bgwriter", 0),
    ("pg_stat_checkpointer", 170_000),
    ("pg_stat_io", 160_000),
];

/// One statistics snapshot: every row of each view, read in one transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PgSnapshot {
    /// The server's clock when the snapshot was read, seconds since 1970.
    pub taken_at: f64,
    /// When the server started (`pg_postmaster_start_time()`), as it prints it.
    pub postmaster_start: String,
    /// View name to its rows, each a JSON object of the view's columns.
    pub views: BTreeMap<String, Vec<Value>>,
    /// The server's processes' scheduler statistics, read beside the views where the
    /// server runs on the capturing host; absent from files of older dbio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched: Option<SchedSnapshot>,
    /// The data directory's device and the page cache, read where the server runs on
    /// the capturing host; absent from files of older dbio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostSnapshot>,
    /// Reads per relation of the database captured (`pg_statio_all_tables`), with
    /// their sizes; empty in files of older dbio.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<RelationReads>,
}

/// One setting as `pg_settings` gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PgSetting {
    pub setting: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// Client sessions seen while a capture ran (`pg_stat_activity`, MySQL's processlist).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sessions {
    /// Most client backends seen at once (the capture's own session not counted).
    pub max: u32,
    /// Mean of the samples.
    pub mean: f64,
    /// Of them, the most that were active (running a statement) at once.
    pub max_active: u32,
    /// How many times `pg_stat_activity` was read.
    pub samples: u32,
}

impl Sessions {
    /// The sessions of two sets of samples taken as one.
    pub fn merged(&self, other: &Sessions) -> Sessions {
        let samples = self.samples + other.samples;
        Sessions {
            max: self.max.max(other.max),
            mean: (self.mean * f64::from(self.samples) + other.mean * f64::from(other.samples))
                / f64::from(samples.max(1)),
            max_active: self.max_active.max(other.max_active),
            samples,
        }
    }
}

/// Client sessions seen, sample by sample, while a capture runs: its [`Sessions`].
#[derive(Default)]
pub struct SessionSampler {
    max: u32,
    max_active: u32,
    sum: u64,
    samples: u32,
    /// The last sample's sessions, for progress lines.
    pub last: u32,
}

impl SessionSampler {
    /// One sample: sessions, and of them those running a statement.
    pub fn add(&mut self, (n, active): (u32, u32)) {
        self.max = self.max.max(n);
        self.max_active = self.max_active.max(active);
        self.sum += u64::from(n);
        self.samples += 1;
        self.last = n;
    }

    pub fn sessions(&self) -> Sessions {
        Sessions {
            max: self.max,
            mean: self.sum as f64 / f64::from(self.samples.max(1)),
            max_active: self.max_active,
            samples: self.samples,
        }
    }
}

/// A capture file: two snapshots of one server, and what the model needs besides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PgCapture {
    /// Always "dbio-pg-capture".
    pub kind: String,
    pub format: u32,
    /// `version()`: "PostgreSQL 15.8 (Debian 15.8-0+deb12u1) on x86_64...".
    pub server: String,
    /// `server_version_num`: 150008.
    pub server_version_num: u32,
    /// Where it was read: host, port, database and user (no password).
    pub target: String,
    /// Size of every database on the server, bytes (`pg_database_size`), by name.
    pub database_bytes: BTreeMap<String, u64>,
    /// The settings of [`SETTINGS`] that the server has.
    pub settings: BTreeMap<String, PgSetting>,
    pub sessions: Sessions,
    pub begin: PgSnapshot,
    pub end: PgSnapshot,
}

/// `kind` of a file holding one snapshot (`dbio pg snapshot`), joined with another
/// into a capture.
pub const SNAPSHOT_KIND: &str = "dbio-pg-snapshot";

/// One snapshot taken by hand, with what a capture keeps besides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PgSnapshotFile {
    /// Always "dbio-pg-snapshot".
    pub kind: String,
    pub format: u32,
    pub server: String,
    pub server_version_num: u32,
    pub target: String,
    pub database_bytes: BTreeMap<String, u64>,
    pub settings: BTreeMap<String, PgSetting>,
    /// Client sessions when it was taken (one sample).
    pub sessions: Sessions,
    pub snapshot: PgSnapshot,
}

impl PgSnapshotFile {
    /// The capture from `self` to `later`: the same server, the settings and sizes
    /// of the later one, the sessions of both.
    pub fn join(self, later: PgSnapshotFile) -> Result<PgCapture, CaptureError> {
        for s in [&self, &later] {
            if s.kind != SNAPSHOT_KIND {
                return Err(CaptureError::Other(format!(
                    "not a snapshot file (kind {:?}, expected {SNAPSHOT_KIND:?})",
                    s.kind
                )));
            }
        }
        if self.server != later.server || self.target != later.target {
            return Err(CaptureError::Servers(
                format!("{} at {}", self.server, self.target),
                format!("{} at {}", later.server, later.target),
            ));
        }
        let sessions = self.sessions.merged(&later.sessions);
        let c = PgCapture {
            kind: CAPTURE_KIND.into(),
            format: CAPTURE_FORMAT,
            server: later.server,
            server_version_num: later.server_version_num,
            target: later.target,
            database_bytes: later.database_bytes,
            settings: later.settings,
            sessions,
            begin: self.snapshot,
            end: later.snapshot,
        };
        c.check()?;
        Ok(c)
    }
}

/// A capture that cannot be used: what is wrong, in one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaptureError {
    #[error("not a capture file (kind {0:?}, expected {CAPTURE_KIND:?})")]
    NotCapture(String),
    #[error("capture format {0} is newer than this dbio reads ({CAPTURE_FORMAT})")]
    Format(u32),
    #[error("PostgreSQL {0} is older than 14, which dbio reads (pg_stat_wal came in 14)")]
    TooOld(String),
    #[error("the server restarted between the snapshots (started {begin}, then {end}): its statistics started again")]
    Restarted { begin: String, end: String },
    #[error("{view} was reset between the snapshots (stats_reset {begin} then {end}): the difference means nothing")]
    Reset {
        view: String,
        begin: String,
        end: String,
    },
    #[error(
        "{view}.{column} went down between the snapshots ({begin} to {end}): statistics were reset"
    )]
    WentDown {
        view: String,
        column: String,
        begin: f64,
        end: f64,
    },
    #[error("the second snapshot ({end}) is not after the first ({begin})")]
    Order { begin: f64, end: f64 },
    #[error("the snapshots are of different servers ({0} and {1})")]
    Servers(String, String),
    #[error("{0}")]
    Other(String),
}

impl PgCapture {
    /// Checks that the two snapshots can be subtracted: same server run, no reset of
    /// any view between them, time going forward, counters not going down.
    pub fn check(&self) -> Result<(), CaptureError> {
        if self.kind != CAPTURE_KIND {
            return Err(CaptureError::NotCapture(self.kind.clone()));
        }
        if self.format > CAPTURE_FORMAT {
            return Err(CaptureError::Format(self.format));
        }
        if self.server_version_num < OLDEST_VERSION_NUM {
            return Err(CaptureError::TooOld(self.server.clone()));
        }
        let (b, e) = (&self.begin, &self.end);
        if b.postmaster_start != e.postmaster_start {
            return Err(CaptureError::Restarted {
                begin: b.postmaster_start.clone(),
                end: e.postmaster_start.clone(),
            });
        }
        if e.taken_at.partial_cmp(&b.taken_at) != Some(std::cmp::Ordering::Greater) {
            return Err(CaptureError::Order {
                begin: b.taken_at,
                end: e.taken_at,
            });
        }
        for (view, rows) in &e.views {
            let before = b.views.get(view).map(Vec::as_slice).unwrap_or(&[]);
            check_view(view, before, rows)?;
        }
        Ok(())
    }

    /// Seconds between the snapshots.
    pub fn elapsed_s(&self) -> f64 {
        self.end.taken_at - self.begin.taken_at
    }

    /// The setting `name` as the server printed it.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings.get(name).map(|s| s.setting.as_str())
    }

    /// `name` in bytes, for settings counted in units (shared_buffers: "16384" of
    /// "8kB"); plain byte counts as they are.
    pub fn setting_bytes(&self, name: &str) -> Option<u64> {
        let s = self.settings.get(name)?;
        let n: u64 = s.setting.parse().ok()?;
        let unit = match s.unit.as_deref().unwrap_or("B") {
            "B" | "" => 1,
            "kB" => 1 << 10,
            "8kB" => 8 << 10,
            "16kB" => 16 << 10,
            "32kB" => 32 << 10,
            "MB" => 1 << 20,
            "GB" => 1 << 30,
            _ => return None,
        };
        n.checked_mul(unit)
    }

    /// True when the setting is "on".
    pub fn on(&self, name: &str) -> bool {
        self.setting(name) == Some("on")
    }

    /// The major version: 15, 17, 18.
    pub fn major(&self) -> u32 {
        self.server_version_num / 10_000
    }

    /// Sum over `view`'s rows that `keep` accepts of `column`, end less begin; None
    /// when the view or the column is absent from both snapshots.
    pub fn delta(&self, view: &str, column: &str, keep: impl Fn(&Value) -> bool) -> Option<f64> {
        let sum = |s: &PgSnapshot| -> Option<f64> {
            let rows = s.views.get(view)?;
            let mut found = false;
            let mut total = 0.0;
            for r in rows.iter().filter(|r| keep(r)) {
                if let Some(v) = r.get(column) {
                    found |= !v.is_null();
                    total += number(v).unwrap_or(0.0);
                }
            }
            found.then_some(total)
        };
        match (sum(&self.begin), sum(&self.end)) {
            (Some(b), Some(e)) => Some(e - b),
            (None, Some(e)) => Some(e),
            _ => None,
        }
    }

    /// Whether the end snapshot has `view` at all.
    pub fn has_view(&self, view: &str) -> bool {
        self.end.views.get(view).is_some_and(|r| !r.is_empty())
    }
}

/// A column's value as a number: PostgreSQL prints bigints as numbers, oids and
/// numerics sometimes as strings.
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The columns that name a row rather than count (pg_stat_io's backend_type, object
/// and context; pg_stat_database's datid and datname).
const KEYS: [&str; 5] = ["backend_type", "object", "context", "datid", "datname"];

fn row_key(r: &Value) -> String {
    KEYS.iter()
        .map(|k| r.get(*k).map_or(String::new(), |v| v.to_string()))
        .collect::<Vec<_>>()
        .join("/")
}

fn check_view(view: &str, before: &[Value], after: &[Value]) -> Result<(), CaptureError> {
    for a in after {
        let key = row_key(a);
        let Some(b) = before.iter().find(|b| row_key(b) == key) else {
            continue;
        };
        let reset = |r: &Value| {
            r.get("stats_reset")
                .filter(|v| !v.is_null())
                .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
        };
        if reset(a) != reset(b) {
            return Err(CaptureError::Reset {
                view: view.to_string(),
                begin: reset(b).unwrap_or_else(|| "never".into()),
                end: reset(a).unwrap_or_else(|| "never".into()),
            });
        }
        let Some(obj) = a.as_object() else { continue };
        for (column, v) in obj {
            if KEYS.contains(&column.as_str()) || column == "stats_reset" {
                continue;
            }
            // Gauges (numbackends) may go down; counters may not.
            if matches!(column.as_str(), "numbackends" | "op_bytes") {
                continue;
            }
            if let (Some(e), Some(s)) = (number(v), b.get(column).and_then(number)) {
                if e < s {
                    return Err(CaptureError::WentDown {
                        view: view.to_string(),
                        column: column.clone(),
                        begin: s,
                        end: e,
                    });
                }
            }
        }
    }
    Ok(())
}
