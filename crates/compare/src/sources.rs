//! The sources of workload models behind one door: an Oracle AWR report, a PostgreSQL
//! capture and a MySQL or MariaDB capture. `replay` and `compare` ask here what a file
//! is and what it gives, and never which database it came from; another source is
//! added in this file and its own module.

use std::collections::BTreeMap;
use std::path::Path;

use crate::awr::WaitHistogram;
use crate::replay::WorkloadModel;
use crate::{CompareError, Observation};

/// The kinds of file a model can come from.
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
            let m = crate::replay::model_of(&report, &name, block);
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

/// A capture file as an observation for `dbio compare`, for the sources that are
/// captures (`source`); None for one that is not.
pub fn observe_capture(
    source: Source,
    text: &str,
    path: &Path,
    set: Option<&str>,
) -> Option<Result<Observation, CompareError>> {
    match source {
        Source::Postgres => Some(crate::pg::observe_file(text, path, set)),
        Source::Mysql => Some(crate::mysql::observe_file(text, path, set)),
        Source::Awr => None,
    }
}
