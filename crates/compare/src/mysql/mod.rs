//! MySQL and MariaDB as a source of workload models: a capture (two snapshots of
//! InnoDB's counters and `performance_schema`'s file I/O, taken by `dbio mysql
//! capture`) and the model computed from it, as PostgreSQL's capture and an AWR report
//! give theirs. Reading the server is the binary's work; here the capture is data.

mod capture;
mod model;
mod shape;

pub use capture::{
    CaptureError, FileIo, MyCapture, MyServer, MySnapshot, MySnapshotFile, CAPTURE_FORMAT,
    CAPTURE_KIND, SETTINGS, SNAPSHOT_KIND, STATUS,
};
pub use model::{model_of, DATA_FILE, DBLWR_FILE, LOG_FILE};

use std::path::Path;

use crate::{CompareError, Observation};

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

/// A capture file's text as an observation for `dbio compare`: the model's classes
/// under a run's figure names, at the most sessions seen; its configuration is `set`
/// where the inputs came in sets, else the file name without its extension.
pub fn observe_file(
    text: &str,
    path: &Path,
    set: Option<&str>,
) -> Result<Observation, CompareError> {
    let at = path.display().to_string();
    let err = |what: String| CompareError::Format {
        path: at.clone(),
        what,
    };
    let c: MyCapture = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
    let m = model_of(&c, &at).map_err(|e| err(e.to_string()))?;
    Ok(Observation::of_model(
        &m,
        &Observation::config_of_file(path, set),
        c.sessions.max.max(1),
        None,
        &at,
    ))
}

#[cfg(test)]
mod tests;
