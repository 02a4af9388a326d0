//! dbio-report: renders the results of `dbio run` and `dbio calibrate`
//! ([`RunResult`], [`CalibrateResult`] from dbio-stats) as a terminal
//! summary, JSON, CSV, Markdown (AWR-style sections) and one self-contained
//! HTML file with inline SVG charts.
//!
//! - [`terminal`], [`json`], [`csv`], [`markdown`], [`html`] turn a result
//!   into text.
//! - [`write_outputs`] writes the files asked for; a file is written beside
//!   its final name and renamed, so no half-written file is ever left.
//! - [`load`] reads a saved run or calibrate result back; [`saved::load_saved`] any
//!   kind dbio writes (for `dbio report`).
//!
//! ```
//! use dbio_report::{load, terminal, write_outputs, AnyResult, Outputs};
//! use dbio_stats::{RunResult, FORMAT_VERSION, RUN_KIND};
//!
//! let run = RunResult {
//!     kind: RUN_KIND.into(),
//!     format_version: FORMAT_VERSION,
//!     ..Default::default()
//! };
//! let result = AnyResult::from(run);
//! print!("{}", terminal(&result));
//!
//! let dir = std::env::temp_dir().join(format!("dbio-report-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let outputs = Outputs {
//!     json: Some(dir.join("run.json")),
//!     html: Some(dir.join("run.html")),
//!     ..Default::default()
//! };
//! write_outputs(&result, &outputs).unwrap();
//! assert_eq!(load(&dir.join("run.json")).unwrap(), result);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

pub mod age;
pub mod comparison;
mod comparison_charts;
mod comparison_nfs;
mod comparison_view;
pub mod matrix;
pub mod replay;
pub mod saved;

pub use fmt::{Align, Table};

use std::io::Write;
use std::path::{Path, PathBuf};

use dbio_stats::{CalibrateResult, RunResult, CALIBRATE_KIND, FORMAT_VERSION, RUN_KIND};

mod csv;
mod devices_view;
mod fmt;
mod html;
mod kernel_nfs_view;
mod markdown;
mod nfs_views;
mod ranks_view;
mod rate_view;
pub mod sample;
mod svg;
mod terminal;
mod verify_view;

pub use csv::csv;
pub use fmt::{bytes as fmt_bytes, count as fmt_count, UtcTime};
pub use html::html;
pub use markdown::markdown;
pub use terminal::terminal;

/// A result of either kind, as read back from JSON.
// One result is made per command: the size of a variant costs nothing worth a box,
// which every reader would then have to see through.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum AnyResult {
    Run(RunResult),
    Calibrate(CalibrateResult),
}

impl From<RunResult> for AnyResult {
    fn from(r: RunResult) -> Self {
        AnyResult::Run(r)
    }
}

impl From<CalibrateResult> for AnyResult {
    fn from(r: CalibrateResult) -> Self {
        AnyResult::Calibrate(r)
    }
}

/// Errors of loading and writing results; each is one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not JSON: {message}", path.display())]
    NotJson { path: PathBuf, message: String },
    #[error(
        "{}: not a dbio result (no \"kind\" field; dbio report takes {})",
        path.display(),
        saved::KINDS_TAKEN
    )]
    NoKind { path: PathBuf },
    #[error(
        "{}: unknown result kind \"{kind}\" (dbio report takes {})",
        path.display(),
        saved::KINDS_TAKEN
    )]
    UnknownKind { path: PathBuf, kind: String },
    /// A file dbio writes that is not a result: what it is and what takes it.
    #[error(
        "{}: {what}; not a result (dbio report takes {})",
        path.display(),
        saved::KINDS_TAKEN
    )]
    NotAResult { path: PathBuf, what: &'static str },
    #[error(
        "{}: format_version {found} is newer than this dbio reads ({supported}); use a newer dbio",
        path.display()
    )]
    NewerFormat {
        path: PathBuf,
        found: u64,
        supported: u32,
    },
    #[error("{}: not a valid dbio {kind} result: {message}", path.display())]
    Invalid {
        path: PathBuf,
        kind: &'static str,
        message: String,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode result as JSON: {0}")]
    Encode(String),
}

/// Read a result saved as JSON; `kind` picks run or calibrate.
pub fn load(path: &Path) -> Result<AnyResult, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

pub(crate) fn parse(path: &Path, text: &str) -> Result<AnyResult, ReportError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ReportError::NotJson {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let kind = match value.get("kind").and_then(|k| k.as_str()) {
        Some(k) => k.to_string(),
        None => {
            return Err(ReportError::NoKind {
                path: path.to_path_buf(),
            })
        }
    };
    // Check the version before the shape: a newer format may have changed
    // fields, and "use a newer dbio" is the useful message then.
    if let Some(v) = value.get("format_version").and_then(|v| v.as_u64()) {
        if v > u64::from(FORMAT_VERSION) {
            return Err(ReportError::NewerFormat {
                path: path.to_path_buf(),
                found: v,
                supported: FORMAT_VERSION,
            });
        }
    }
    // Older formats are brought up to this one before they are read.
    let value = dbio_stats::upgrade_json(value);
    let invalid = |kind: &'static str, e: serde_json::Error| ReportError::Invalid {
        path: path.to_path_buf(),
        kind,
        message: e.to_string(),
    };
    match kind.as_str() {
        RUN_KIND => serde_json::from_value(value)
            .map(AnyResult::Run)
            .map_err(|e| invalid(RUN_KIND, e)),
        CALIBRATE_KIND => serde_json::from_value(value)
            .map(AnyResult::Calibrate)
            .map_err(|e| invalid(CALIBRATE_KIND, e)),
        _ => Err(ReportError::UnknownKind {
            path: path.to_path_buf(),
            kind,
        }),
    }
}

/// The result as pretty-printed JSON (the schema of dbio-stats), with a
/// final newline.
pub fn json(result: &AnyResult) -> Result<String, ReportError> {
    let text = match result {
        AnyResult::Run(r) => serde_json::to_string_pretty(r),
        AnyResult::Calibrate(c) => serde_json::to_string_pretty(c),
    }
    .map_err(|e| ReportError::Encode(e.to_string()))?;
    Ok(text + "\n")
}

/// Which files to write; `None` writes nothing of that format.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub md: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

/// Write each output asked for. Each file appears whole or not at all; the
/// first failure stops and names its path. Returns the files written, in
/// order, for the caller to tell the user where they are.
pub fn write_outputs(result: &AnyResult, outputs: &Outputs) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Written::default();
    if let Some(p) = &outputs.json {
        written.write(p, json(result)?.as_bytes())?;
    }
    if let Some(p) = &outputs.csv {
        written.write(p, csv(result).as_bytes())?;
    }
    if let Some(p) = &outputs.md {
        written.write(p, markdown(result).as_bytes())?;
    }
    if let Some(p) = &outputs.html {
        written.write(p, html(result).as_bytes())?;
    }
    Ok(written.0)
}

/// The files an output step has written so far ([`write_atomic`] each).
#[derive(Default)]
pub(crate) struct Written(pub(crate) Vec<PathBuf>);

impl Written {
    pub(crate) fn write(&mut self, path: &Path, data: &[u8]) -> Result<(), ReportError> {
        write_atomic(path, data)?;
        self.0.push(path.to_path_buf());
        Ok(())
    }
}

/// Write `data` to a temporary file in the same directory, then rename it
/// over `path` (rename within a directory is atomic).
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), ReportError> {
    let err = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let name = path.file_name().ok_or_else(|| {
        err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
