//! A run or calibrate result, read back from its JSON and written as JSON again.

use std::path::Path;

use dbio_stats::{CalibrateResult, RunResult, CALIBRATE_KIND, FORMAT_VERSION, RUN_KIND};

use crate::error::ReportError;

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
