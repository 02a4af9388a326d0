//! MySQL and MariaDB as a source of workload models: a capture (two snapshots of
//! InnoDB's counters and `performance_schema`'s file I/O, taken by `dbio mysql
//! capture`) and the model computed from it, as PostgreSQL's capture and an AWR report
//! give theirs; and the client that takes the snapshots ([`conn`]).

mod capture;
#[cfg(feature = "clients")]
pub mod conn;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
mod model;
mod shape;

pub use capture::{
    CaptureError, FileIo, MyCapture, MyServer, MySnapshot, MySnapshotFile, ServerProcess, TimerSum,
    CAPTURE_FORMAT, CAPTURE_KIND, SETTINGS, SNAPSHOT_KIND, STATUS,
};
pub use model::{model_of, DATA_FILE, DBLWR_FILE, LOG_FILE};

/// Whether `text` looks like a MySQL capture file (JSON naming its kind), without
/// parsing it.
pub fn is_capture(text: &str) -> bool {
    let head: String = text.chars().take(256).collect();
    head.trim_start().starts_with('{') && head.contains(CAPTURE_KIND)
}

/// Reads and checks a capture file; `file` names it in errors.
pub fn read(text: &str, file: &str) -> Result<MyCapture, String> {
    let c: MyCapture = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    c.check().map_err(|e| format!("{file}: {e}"))?;
    Ok(c)
}

#[cfg(test)]
mod tests;
