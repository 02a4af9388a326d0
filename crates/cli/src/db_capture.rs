//! What `dbio pg` and `dbio mysql` share: the capture file written whole, the model
//! shown as `dbio replay --dry-run` shows it, sessions sampled, waits that a Ctrl-C
//! ends.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use dbio_sources::WorkloadModel;
use dbio_workload::units::format_size;

use crate::common;

/// `join`'s arguments: two snapshot files of one server, and the capture to write.
#[derive(clap::Args)]
pub struct JoinArgs {
    /// The earlier snapshot
    #[arg(value_name = "BEGIN.json")]
    pub begin: PathBuf,
    /// The later snapshot
    #[arg(value_name = "END.json")]
    pub end: PathBuf,
    /// The capture file to write (JSON)
    #[arg(long, value_name = "FILE.json")]
    pub out: PathBuf,
}

/// Reads a JSON file (a snapshot); errors name the file.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// Refuses an output that is a directory before anything is read from the server.
pub fn check_out(out: &Path) -> anyhow::Result<()> {
    if out.is_dir() {
        return Err(anyhow!("--out {}: a directory, not a file", out.display()));
    }
    Ok(())
}

/// Writes `value` as JSON, whole or not at all.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    dbio_report::write_atomic(path, text.as_bytes())?;
    Ok(())
}

/// The file's name, as a model's source names it.
pub fn file_name(out: &Path) -> String {
    out.file_name()
        .map_or(out.display().to_string(), |n| n.to_string_lossy().into())
}

/// Prints the model a capture gives, then the file written.
pub fn summary(m: &WorkloadModel, out: &Path) -> anyhow::Result<()> {
    let size = m.dataset_bytes.map_or("unknown".to_string(), format_size);
    print!("{}", dbio_report::replay::model_text(m, &size));
    common::wrote(vec![out.to_path_buf()]);
    Ok(())
}

/// Sleeps `d`, or less when `stop` is set.
pub fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(100)));
    }
}
