//! Every result dbio writes, read back for `dbio report`: run and calibrate
//! ([`AnyResult`]), age, matrix, comparison and replay. A file dbio writes that is not
//! a result (a PostgreSQL capture or snapshot, AWR observations, a sweep's manifest) is
//! named for what it is and where it goes instead, in one line.

use std::path::Path;

use dbio_compare::replay::{ReplayReport, REPLAY_FORMAT, REPLAY_KIND};
use dbio_compare::Comparison;
use dbio_stats::{AgeResult, MatrixResult, AGE_KIND, CALIBRATE_KIND, MATRIX_KIND, RUN_KIND};

pub use crate::error::KINDS_TAKEN;
use crate::{AnyResult, ReportError};

/// `kind` of a `dbio compare` result.
pub const COMPARISON_KIND: &str = "comparison";

/// A result of any kind dbio writes.
// One is read per command: boxing the large variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Saved {
    Result(AnyResult),
    Age(AgeResult),
    Matrix(MatrixResult),
    Comparison(Comparison),
    Replay(ReplayReport),
}

/// What a file of `kind` is when it is no result, and what takes it; the files of the
/// workload sources (captures, snapshots) are named by dbio-sources.
fn not_a_result(kind: &str) -> Option<&'static str> {
    if let Some(what) = dbio_sources::source::file_of_kind(kind) {
        return Some(what);
    }
    Some(match kind {
        dbio_compare::inputs::OBSERVATIONS_KIND => {
            "AWR observations (`dbio awr --json`): set them beside runs with `dbio compare`"
        }
        "sweep" => "a sweep's manifest: compare the sweep's results with `dbio compare DIR`",
        _ => return None,
    })
}

/// Reads a result of any kind dbio writes.
pub fn load_saved(path: &Path) -> Result<Saved, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ReportError::NotJson {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let Some(kind) = value.get("kind").and_then(|k| k.as_str()) else {
        return Err(ReportError::NoKind {
            path: path.to_path_buf(),
        });
    };
    let invalid = |kind: &'static str, e: serde_json::Error| ReportError::Invalid {
        path: path.to_path_buf(),
        kind,
        message: e.to_string(),
    };
    match kind {
        RUN_KIND | CALIBRATE_KIND => crate::parse(path, &text).map(Saved::Result),
        AGE_KIND => serde_json::from_value(value)
            .map(Saved::Age)
            .map_err(|e| invalid(AGE_KIND, e)),
        MATRIX_KIND => serde_json::from_value(value)
            .map(Saved::Matrix)
            .map_err(|e| invalid(MATRIX_KIND, e)),
        COMPARISON_KIND => serde_json::from_value(value)
            .map(Saved::Comparison)
            .map_err(|e| invalid(COMPARISON_KIND, e)),
        REPLAY_KIND => match value.get("format_version").and_then(|v| v.as_u64()) {
            Some(v) if v > u64::from(REPLAY_FORMAT) => Err(ReportError::NewerFormat {
                path: path.to_path_buf(),
                found: v,
                supported: REPLAY_FORMAT,
            }),
            _ => serde_json::from_value(value)
                .map(Saved::Replay)
                .map_err(|e| invalid(REPLAY_KIND, e)),
        },
        other => Err(match not_a_result(other) {
            Some(what) => ReportError::NotAResult {
                path: path.to_path_buf(),
                what,
            },
            None => ReportError::UnknownKind {
                path: path.to_path_buf(),
                kind: other.to_string(),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Saved, String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.json");
        std::fs::write(&p, text).unwrap();
        load_saved(&p).map_err(|e| {
            let e = e.to_string();
            assert!(e.contains("in.json") && !e.contains('\n'), "{e}");
            e
        })
    }

    #[test]
    fn inputs_are_named_for_what_they_are_and_unknown_kinds_list_the_kinds_taken() {
        let e = load_text(r#"{"kind": "dbio-pg-capture", "format": 1}"#).unwrap_err();
        assert!(
            e.contains("a PostgreSQL capture (`dbio pg capture`)"),
            "{e}"
        );
        assert!(e.ends_with(&format!("not a result (dbio report takes {KINDS_TAKEN})")));
        let e = load_text(r#"{"kind": "sweep", "format_version": 1}"#).unwrap_err();
        assert!(e.contains("a sweep's manifest"), "{e}");
        let e = load_text(r#"{"kind": "nonsense"}"#).unwrap_err();
        assert!(e.contains("unknown result kind \"nonsense\""), "{e}");
        assert!(e.contains(KINDS_TAKEN), "{e}");
        let e = load_text(r#"{"findings": []}"#).unwrap_err();
        assert!(e.contains(KINDS_TAKEN), "{e}");
    }

    #[test]
    fn a_replay_of_a_newer_format_asks_for_a_newer_dbio() {
        let newer = format!(
            "{{\"kind\": \"replay\", \"format_version\": {}}}",
            REPLAY_FORMAT + 1
        );
        assert!(load_text(&newer).unwrap_err().contains("use a newer dbio"));
        let broken = format!("{{\"kind\": \"replay\", \"format_version\": {REPLAY_FORMAT}}}");
        assert!(load_text(&broken)
            .unwrap_err()
            .contains("not a valid dbio replay result"));
    }
}
