//! PostgreSQL as a source of workload models: a capture (two snapshots of the
//! server's statistics views, taken by `dbio pg capture`) and the model computed from
//! it, as an AWR report gives one for Oracle; and what takes the snapshots: the client
//! ([`conn`]) and the sampling of the server's processes in /proc ([`sched`], [`host`]),
//! which stay with the capture they fill.

mod cache;
mod capture;
#[cfg(feature = "clients")]
pub mod conn;
mod cpu;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod host;
mod model;
mod readings;
pub mod sched;

pub use cache::{parse_block_stat, parse_proc_io, DeviceReads, HostSnapshot, RelationReads};
pub use capture::{
    number, CaptureError, PgCapture, PgSetting, PgSnapshot, PgSnapshotFile, SessionSampler,
    Sessions, CAPTURE_FORMAT, CAPTURE_KIND, OLDEST_VERSION_NUM, SETTINGS, SNAPSHOT_KIND, VIEWS,
};
pub use cpu::{
    parse_schedstat, parse_stat_minor_faults, parse_stat_start, CpuWait, ProcessSched,
    SchedSnapshot,
};
pub use model::{model_of, READ_EVENT, WAL_EVENT, WRITE_EVENT};

/// Whether `text` looks like a capture file (JSON naming its kind), without parsing it.
pub fn is_capture(text: &str) -> bool {
    let head: String = text.chars().take(256).collect();
    head.trim_start().starts_with('{') && head.contains(CAPTURE_KIND)
}

/// Reads and checks a capture file; `file` names it in errors.
pub fn read(text: &str, file: &str) -> Result<PgCapture, String> {
    let c: PgCapture = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    c.check().map_err(|e| format!("{file}: {e}"))?;
    Ok(c)
}

#[cfg(test)]
mod tests;
