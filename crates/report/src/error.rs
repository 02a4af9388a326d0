//! The error of loading and writing results, in a module of its own: reading back
//! (`result`, `saved`) and writing (`output`, the comparison, age and matrix pages)
//! all fail with it.

use std::path::PathBuf;

/// The kinds `dbio report` renders, as its errors list them.
pub const KINDS_TAKEN: &str = "run, calibrate, age, matrix, comparison and replay";

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
        KINDS_TAKEN
    )]
    NoKind { path: PathBuf },
    #[error(
        "{}: unknown result kind \"{kind}\" (dbio report takes {})",
        path.display(),
        KINDS_TAKEN
    )]
    UnknownKind { path: PathBuf, kind: String },
    /// A file dbio writes that is not a result: what it is and what takes it.
    #[error(
        "{}: {what}; not a result (dbio report takes {})",
        path.display(),
        KINDS_TAKEN
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
