//! The sources of workload models behind one door: an Oracle AWR report, a PostgreSQL
//! capture, a MySQL or MariaDB capture, and a model saved before. `replay` and
//! `compare` ask here what a file is and what it gives, and never which database it
//! came from; another source is added in this file (a variant of [`Source`] and its
//! arms) and its own module.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context};

use crate::awr::WaitHistogram;
use crate::model::WorkloadModel;

/// The kinds of file a model can come from, besides a saved model (`--model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An Oracle AWR report (awrrpt.sql's text or HTML).
    Awr,
    /// `dbio pg capture`.
    Postgres,
    /// `dbio mysql capture`.
    Mysql,
}

impl Source {
    /// What `text` is: a capture names its kind at its start; anything else is read as
    /// an AWR report.
    pub fn of(text: &str) -> Source {
        if crate::pg::is_capture(text) {
            Source::Postgres
        } else if crate::mysql::is_capture(text) {
            Source::Mysql
        } else {
            Source::Awr
        }
    }

    /// The source whose capture files have `kind` (a JSON file whose keys another
    /// tool sorted, so the kind is not at its start).
    pub fn of_kind(kind: &str) -> Option<Source> {
        match kind {
            crate::pg::CAPTURE_KIND => Some(Source::Postgres),
            crate::mysql::CAPTURE_KIND => Some(Source::Mysql),
            _ => None,
        }
    }

    /// For the sources that are captures, the model of the capture `text` read from
    /// `at`, with the most sessions it saw: what `dbio compare` makes an observation
    /// of. None for a source that is not a capture; an error says what, not where.
    pub fn capture(self, text: &str, at: &str) -> Option<Result<Captured, String>> {
        let captured = match self {
            Source::Postgres => (|| {
                let c = crate::pg::read(text, at).map_err(|e| {
                    // `read` names the file; the caller names it once.
                    e.strip_prefix(&format!("{at}: ")).unwrap_or(&e).to_string()
                })?;
                let model = crate::pg::model_of(&c, at).map_err(|e| e.to_string())?;
                Ok(Captured {
                    model,
                    sessions: c.sessions.max,
                })
            })(),
            Source::Mysql => (|| {
                let c: crate::mysql::MyCapture =
                    serde_json::from_str(text).map_err(|e| e.to_string())?;
                let model = crate::mysql::model_of(&c, at).map_err(|e| e.to_string())?;
                Ok(Captured {
                    model,
                    sessions: c.sessions.max,
                })
            })(),
            Source::Awr => return None,
        };
        Some(captured)
    }
}

/// What a file of `kind` written by a source's own commands is, and what takes it:
/// `dbio report` names these instead of rendering them. None for any other kind.
pub fn file_of_kind(kind: &str) -> Option<&'static str> {
    Some(match kind {
        crate::pg::CAPTURE_KIND => {
            "a PostgreSQL capture (`dbio pg capture`): replay it with `dbio replay FILE` or set \
             it beside runs with `dbio compare`"
        }
        crate::pg::SNAPSHOT_KIND => {
            "a PostgreSQL snapshot (`dbio pg snapshot`): join two into a capture with `dbio \
             pg join`"
        }
        crate::mysql::CAPTURE_KIND => {
            "a MySQL or MariaDB capture (`dbio mysql capture`): replay it with `dbio replay \
             FILE` or set it beside runs with `dbio compare`"
        }
        crate::mysql::SNAPSHOT_KIND => {
            "a MySQL or MariaDB snapshot (`dbio mysql snapshot`): join two into a capture \
             with `dbio mysql join`"
        }
        _ => return None,
    })
}

/// A capture's model and the most client sessions the capture saw.
#[derive(Debug, Clone)]
pub struct Captured {
    pub model: WorkloadModel,
    pub sessions: u32,
}

/// Production's wait histograms by event, where the source has them (AWR).
pub type Histograms = BTreeMap<String, WaitHistogram>;

/// The model of the file at `path` whose text is `text`, with production's wait
/// histograms; one line naming the file when it cannot give one, or when it shows no
/// I/O dbio replays.
pub fn model_of_file(text: &str, path: &Path) -> Result<(WorkloadModel, Histograms), String> {
    let at = path.display().to_string();
    let name = path
        .file_name()
        .map_or(at.clone(), |n| n.to_string_lossy().into());
    let (m, histograms, nothing) = match Source::of(text) {
        Source::Postgres => {
            let c = crate::pg::read(text, &at)?;
            let m = crate::pg::model_of(&c, &name).map_err(|e| format!("{at}: {e}"))?;
            let nothing = "PostgreSQL did no I/O dbio can replay between the snapshots (no \
                           reads, WAL flushes or block writes)";
            (m, Histograms::new(), nothing)
        }
        Source::Mysql => {
            let c = crate::mysql::read(text, &at)?;
            let m = crate::mysql::model_of(&c, &name).map_err(|e| format!("{at}: {e}"))?;
            let nothing = "InnoDB did no I/O dbio can replay between the snapshots (no page \
                           reads, log flushes or page writes)";
            (m, Histograms::new(), nothing)
        }
        Source::Awr => {
            let report = crate::awr::parse(text).map_err(|e| format!("{at}: {e}"))?;
            let block = crate::awr::parameters(text)
                .into_iter()
                .find(|(n, _)| n == "db_block_size")
                .and_then(|(_, v)| v.parse::<u32>().ok());
            let m = crate::awr::model_of(&report, &name, block);
            let nothing = "the report shows no I/O dbio can replay (no db file, direct path or \
                           redo figures)";
            (m, report.histograms, nothing)
        }
    };
    if m.classes.is_empty() {
        return Err(format!("{at}: {nothing}"));
    }
    Ok((m, histograms))
}

/// The model to run: the one saved at `saved` (TOML, as `--save-model` writes it), else
/// the one the report or capture at `report` gives, with its wait histograms.
pub fn model_from(
    report: Option<&Path>,
    saved: Option<&Path>,
) -> anyhow::Result<(WorkloadModel, Histograms)> {
    if let Some(path) = saved {
        let text = read_text(path)?;
        let m = WorkloadModel::from_toml(&text, &path.display().to_string())?;
        return Ok((m, Histograms::new()));
    }
    let Some(path) = report else {
        bail!("give an AWR report or --model FILE.toml");
    };
    let text = read_text(path)?;
    model_of_file(&text, path).map_err(anyhow::Error::msg)
}

/// Largest report read (AWR reports are a few hundred KiB).
const REPORT_MAX: u64 = 64 << 20;

/// The text of the file at `path`, bytes that are not UTF-8 replaced (reports pasted
/// from other systems have them); a file too large for a report is refused unread.
fn read_text(path: &Path) -> anyhow::Result<String> {
    let size = std::fs::metadata(path)
        .with_context(|| path.display().to_string())?
        .len();
    if size > REPORT_MAX {
        bail!(
            "{}: {size} bytes, larger than an AWR report",
            path.display()
        );
    }
    let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_of_each_capture_command_are_named() {
        for kind in [
            crate::pg::CAPTURE_KIND,
            crate::pg::SNAPSHOT_KIND,
            crate::mysql::CAPTURE_KIND,
            crate::mysql::SNAPSHOT_KIND,
        ] {
            assert!(file_of_kind(kind).is_some(), "{kind}");
        }
        assert_eq!(file_of_kind("run"), None);
        assert_eq!(
            Source::of_kind(crate::mysql::CAPTURE_KIND),
            Some(Source::Mysql)
        );
        assert_eq!(Source::of_kind(crate::pg::SNAPSHOT_KIND), None);
    }
}
