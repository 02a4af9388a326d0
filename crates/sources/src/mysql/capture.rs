//! A MySQL or MariaDB capture: two snapshots of the server's InnoDB counters (`SHOW
//! GLOBAL STATUS`) and, where `performance_schema` is on, its file I/O summaries, with
//! the settings that shape InnoDB's I/O, the data's size and the sessions seen between
//! them. What a monitoring account may read, nothing more.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::pg::Sessions;

/// `kind` of a capture file.
pub const CAPTURE_KIND: &str = "dbio-mysql-capture";
/// `kind` of a file holding one snapshot (`dbio mysql snapshot`).
pub const SNAPSHOT_KIND: &str = "dbio-mysql-snapshot";
/// Format of both files.
pub const CAPTURE_FORMAT: u32 = 1;

/// The global status counters a snapshot keeps: InnoDB's I/O and the server's uptime.
pub const STATUS: [&str; 20] = [
    "Uptime",
    "Innodb_data_reads",
    "Innodb_data_read",
    "Innodb_data_writes",
    "Innodb_data_written",
    "Innodb_data_fsyncs",
    "Innodb_os_log_written",
    "Innodb_os_log_fsyncs",
    "Innodb_log_writes",
    "Innodb_log_write_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_read_ahead",
    "Innodb_pages_read",
    "Innodb_pages_written",
    "Innodb_dblwr_pages_written",
    "Innodb_dblwr_writes",
    "Com_commit",
    "Com_rollback",
    "Questions",
];

/// The settings that decide how InnoDB does its I/O (`SHOW GLOBAL VARIABLES`).
pub const SETTINGS: [&str; 14] = [
    "innodb_flush_method",
    "innodb_page_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_log_file_buffering",
    "innodb_use_native_aio",
    "innodb_read_ahead_threshold",
    "sync_binlog",
    "log_bin",
    "performance_schema",
];

/// One `performance_schema` file summary row: an event (`wait/io/file/innodb/
/// innodb_data_file`) and, by instance, the file. Timers are picoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileIo {
    /// EVENT_NAME.
    pub event: String,
    /// FILE_NAME, in `file_summary_by_instance` rows only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub count_read: u64,
    pub count_write: u64,
    /// Other calls on the file: opens, closes, flushes (fsync), ...
    pub count_misc: u64,
    pub sum_timer_read: u64,
    pub sum_timer_write: u64,
    pub sum_timer_misc: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// A `performance_schema` summary's count and time so far, summed over its rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerSum {
    /// SUM(COUNT_STAR).
    pub count: u64,
    /// SUM(SUM_TIMER_WAIT), picoseconds.
    pub sum_timer_wait: u64,
}

/// One snapshot of the server's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MySnapshot {
    /// The server's clock when read (`UNIX_TIMESTAMP(NOW(6))`), seconds since 1970.
    pub taken_at: f64,
    /// The counters of [`STATUS`] the server has, by name.
    pub status: BTreeMap<String, u64>,
    /// `file_summary_by_event_name` for InnoDB's files; empty without
    /// `performance_schema`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_events: Vec<FileIo>,
    /// `file_summary_by_instance` for InnoDB's files; empty without
    /// `performance_schema`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_instances: Vec<FileIo>,
    /// `events_statements_summary_global_by_event_name` summed over every statement:
    /// how many, and their time (picoseconds); none without `performance_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statements: Option<TimerSum>,
    /// `events_waits_summary_by_user_by_event_name` of InnoDB's data files, summed
    /// over the users (the sessions' calls, those of sessions gone included; the
    /// background threads have no user): what the sessions read themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_data_file: Option<TimerSum>,
    /// Why `performance_schema` gave nothing, where it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub performance_schema_missing: Option<String>,
    /// The server's process, where it runs on the capturing host: its read system
    /// calls so far (`/proc/PID/io` syscr), which InnoDB's synchronous page reads are
    /// and its asynchronous ones (io_uring, libaio) are not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_process: Option<ServerProcess>,
    /// Why the server's process could not be read, where it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_process_missing: Option<String>,
}

/// The server's process on the capturing host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerProcess {
    pub pid: u32,
    /// `/proc/PID/io` syscr: read system calls (read, pread64, readv, preadv) so far.
    pub syscr: u64,
}

/// What the server is, read once per snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MyServer {
    /// `VERSION()`: "10.11.19-MariaDB-0+deb12u1", "8.0.40".
    pub version: String,
    /// `@@version_comment`: "Debian 12", "MySQL Community Server - GPL".
    pub comment: String,
    /// Where it was read: host and port or socket, and user (no password).
    pub target: String,
    /// The settings of [`SETTINGS`] the server has, as it printed them.
    pub settings: BTreeMap<String, String>,
    /// Bytes of InnoDB's tablespaces per schema ("(system)" for those of none): their
    /// files' sizes, else the tables' data and index lengths.
    pub schema_bytes: BTreeMap<String, u64>,
}

/// A capture file: two snapshots of one server run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MyCapture {
    /// Always "dbio-mysql-capture".
    pub kind: String,
    pub format: u32,
    pub server: MyServer,
    pub sessions: Sessions,
    pub begin: MySnapshot,
    pub end: MySnapshot,
}

/// One snapshot taken by hand, to be joined with a later one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MySnapshotFile {
    /// Always "dbio-mysql-snapshot".
    pub kind: String,
    pub format: u32,
    pub server: MyServer,
    pub sessions: Sessions,
    pub snapshot: MySnapshot,
}

/// A capture that cannot be used, in one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaptureError {
    #[error("not a MySQL capture file (kind {0:?}, expected {CAPTURE_KIND:?})")]
    NotCapture(String),
    #[error("capture format {0} is newer than this dbio reads ({CAPTURE_FORMAT})")]
    Format(u32),
    #[error("{0} is older than MySQL 5.7 and MariaDB 10.2, which dbio reads")]
    TooOld(String),
    #[error("the server restarted between the snapshots (up {begin} s, then {end} s {elapsed:.0} s later): its counters started again")]
    Restarted { begin: u64, end: u64, elapsed: f64 },
    #[error("{what} went down between the snapshots ({begin} to {end}): counters were reset")]
    WentDown { what: String, begin: u64, end: u64 },
    #[error("the second snapshot ({end}) is not after the first ({begin})")]
    Order { begin: f64, end: f64 },
    #[error("the snapshots are of different servers ({0} and {1})")]
    Servers(String, String),
    #[error("{0}")]
    Other(String),
}

impl MySnapshotFile {
    /// The capture from `self` to `later`: the same server, its later settings and
    /// sizes, the sessions of both.
    pub fn join(self, later: MySnapshotFile) -> Result<MyCapture, CaptureError> {
        for s in [&self, &later] {
            if s.kind != SNAPSHOT_KIND {
                return Err(CaptureError::Other(format!(
                    "not a MySQL snapshot file (kind {:?}, expected {SNAPSHOT_KIND:?})",
                    s.kind
                )));
            }
        }
        let (a, b) = (&self.server, &later.server);
        if a.version != b.version || a.target != b.target {
            return Err(CaptureError::Servers(
                format!("{} at {}", a.version, a.target),
                format!("{} at {}", b.version, b.target),
            ));
        }
        let c = MyCapture {
            kind: CAPTURE_KIND.into(),
            format: CAPTURE_FORMAT,
            sessions: self.sessions.merged(&later.sessions),
            server: later.server,
            begin: self.snapshot,
            end: later.snapshot,
        };
        c.check()?;
        Ok(c)
    }
}

impl MyServer {
    /// "MariaDB" or "MySQL", from the version string.
    pub fn flavour(&self) -> &'static str {
        if self.version.contains("MariaDB") {
            "MariaDB"
        } else {
            "MySQL"
        }
    }

    /// Major and minor version: (10, 11), (8, 0).
    pub fn major_minor(&self) -> Option<(u32, u32)> {
        let mut parts = self
            .version
            .split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some((major, minor))
    }

    /// True for versions whose `performance_schema` file summaries and InnoDB
    /// counters dbio reads: MySQL 5.7 and later, MariaDB 10.2 and later.
    pub fn supported(&self) -> bool {
        match (self.flavour(), self.major_minor()) {
            ("MariaDB", Some(v)) => v >= (10, 2),
            (_, Some(v)) => v >= (5, 7),
            _ => false,
        }
    }

    /// The setting as the server printed it.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings.get(name).map(String::as_str)
    }

    /// A setting that is a number.
    pub fn setting_u64(&self, name: &str) -> Option<u64> {
        self.setting(name)?.trim().parse().ok()
    }

    /// True when the setting is ON (or 1).
    pub fn on(&self, name: &str) -> bool {
        self.setting(name)
            .is_some_and(|v| v.eq_ignore_ascii_case("ON") || v == "1")
    }

    /// "MariaDB 10.11.19" or "MySQL 8.0.40".
    pub fn name(&self) -> String {
        let v = self.version.split('-').next().unwrap_or(&self.version);
        format!("{} {v}", self.flavour())
    }
}

impl MyCapture {
    /// Checks the two snapshots can be subtracted: a known server, one run of it,
    /// time going forward, no counter going down.
    pub fn check(&self) -> Result<(), CaptureError> {
        if self.kind != CAPTURE_KIND {
            return Err(CaptureError::NotCapture(self.kind.clone()));
        }
        if self.format > CAPTURE_FORMAT {
            return Err(CaptureError::Format(self.format));
        }
        if !self.server.supported() {
            return Err(CaptureError::TooOld(format!(
                "{} {}",
                self.server.flavour(),
                self.server.version
            )));
        }
        let (b, e) = (&self.begin, &self.end);
        let elapsed = e.taken_at - b.taken_at;
        if elapsed.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return Err(CaptureError::Order {
                begin: b.taken_at,
                end: e.taken_at,
            });
        }
        // Uptime is whole seconds: a restart shows as less time up than went by.
        let (ub, ue) = (b.status.get("Uptime"), e.status.get("Uptime"));
        if let (Some(&ub), Some(&ue)) = (ub, ue) {
            if (ue as f64) + 2.0 < ub as f64 + elapsed {
                return Err(CaptureError::Restarted {
                    begin: ub,
                    end: ue,
                    elapsed,
                });
            }
        }
        for (name, &end) in &e.status {
            if let Some(&begin) = b.status.get(name) {
                if end < begin {
                    return Err(CaptureError::WentDown {
                        what: format!("global status {name}"),
                        begin,
                        end,
                    });
                }
            }
        }
        for row in &e.file_events {
            if let Some(before) = b.file_events.iter().find(|r| r.event == row.event) {
                went_down(before, row)?;
            }
        }
        Ok(())
    }

    /// Seconds between the snapshots.
    pub fn elapsed_s(&self) -> f64 {
        self.end.taken_at - self.begin.taken_at
    }

    /// A status counter's growth; None when the server has no such counter.
    pub fn status_delta(&self, name: &str) -> Option<f64> {
        let e = *self.end.status.get(name)?;
        let b = self.begin.status.get(name).copied().unwrap_or(0);
        Some(e.saturating_sub(b) as f64)
    }

    /// The statements run between the snapshots and their time (picoseconds); None
    /// where either snapshot has no statement summary.
    pub fn statements_delta(&self) -> Option<(f64, f64)> {
        let (b, e) = (self.begin.statements?, self.end.statements?);
        let n = e.count.checked_sub(b.count)?;
        let t = e.sum_timer_wait.checked_sub(b.sum_timer_wait)?;
        Some((n as f64, t as f64))
    }

    /// The sessions' own calls on InnoDB's data files between the snapshots and their
    /// time (picoseconds); None where either snapshot has no such summary.
    /// The server's read system calls between the snapshots, where both read the same
    /// process on this host.
    pub fn server_syscr_delta(&self) -> Option<f64> {
        let (b, e) = (self.begin.server_process?, self.end.server_process?);
        (b.pid == e.pid && e.syscr >= b.syscr).then(|| (e.syscr - b.syscr) as f64)
    }

    pub fn session_data_file_delta(&self) -> Option<(f64, f64)> {
        let (b, e) = (self.begin.session_data_file?, self.end.session_data_file?);
        let n = e.count.checked_sub(b.count)?;
        let t = e.sum_timer_wait.checked_sub(b.sum_timer_wait)?;
        Some((n as f64, t as f64))
    }

    /// The growth of an event's file summary (`file_summary_by_event_name`); None
    /// without `performance_schema` or where the server has no such event.
    pub fn file_delta(&self, event: &str) -> Option<FileIo> {
        let e = self.end.file_events.iter().find(|r| r.event == event)?;
        let zero = FileIo::default();
        let b = self
            .begin
            .file_events
            .iter()
            .find(|r| r.event == event)
            .unwrap_or(&zero);
        Some(FileIo {
            event: event.to_string(),
            file: None,
            count_read: e.count_read.saturating_sub(b.count_read),
            count_write: e.count_write.saturating_sub(b.count_write),
            count_misc: e.count_misc.saturating_sub(b.count_misc),
            sum_timer_read: e.sum_timer_read.saturating_sub(b.sum_timer_read),
            sum_timer_write: e.sum_timer_write.saturating_sub(b.sum_timer_write),
            sum_timer_misc: e.sum_timer_misc.saturating_sub(b.sum_timer_misc),
            bytes_read: e.bytes_read.saturating_sub(b.bytes_read),
            bytes_written: e.bytes_written.saturating_sub(b.bytes_written),
        })
    }

    /// Whether `performance_schema`'s file summaries were read in both snapshots.
    pub fn has_file_io(&self) -> bool {
        !self.begin.file_events.is_empty() && !self.end.file_events.is_empty()
    }

    /// Reads per data file over the capture (`file_summary_by_instance`): file name,
    /// reads, bytes read; most read first.
    pub fn file_reads(&self, event: &str) -> Vec<(String, u64, u64)> {
        let mut out: Vec<(String, u64, u64)> = self
            .end
            .file_instances
            .iter()
            .filter(|r| r.event == event)
            .filter_map(|e| {
                let name = e.file.clone()?;
                let b = self
                    .begin
                    .file_instances
                    .iter()
                    .find(|r| r.file.as_deref() == Some(name.as_str()));
                let (n0, b0) = b.map_or((0, 0), |b| (b.count_read, b.bytes_read));
                Some((
                    name,
                    e.count_read.saturating_sub(n0),
                    e.bytes_read.saturating_sub(b0),
                ))
            })
            .filter(|r| r.1 > 0)
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

fn went_down(b: &FileIo, e: &FileIo) -> Result<(), CaptureError> {
    let pairs = [
        ("COUNT_READ", b.count_read, e.count_read),
        ("COUNT_WRITE", b.count_write, e.count_write),
        ("COUNT_MISC", b.count_misc, e.count_misc),
        ("SUM_TIMER_READ", b.sum_timer_read, e.sum_timer_read),
        ("SUM_TIMER_WRITE", b.sum_timer_write, e.sum_timer_write),
    ];
    for (column, begin, end) in pairs {
        if end < begin {
            return Err(CaptureError::WentDown {
                what: format!(
                    "performance_schema.file_summary_by_event_name {} {column}",
                    e.event
                ),
                begin,
                end,
            });
        }
    }
    Ok(())
}
