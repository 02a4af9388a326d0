//! Reading what is to be compared: result files, directories of them (a sweep's),
//! observation files (`dbio awr` output) and database captures (`dbio pg capture`, `dbio
//! mysql capture`), in one or more sets.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::observation::{self, Observation, ResultView};
use dbio_sources::Source;

use crate::captures::observe_capture;
use crate::CompareError;

/// `kind` of a file that holds observations rather than one result.
pub const OBSERVATIONS_KIND: &str = "observations";

/// A file of observations, as `dbio awr` writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObservationFile {
    /// Always "observations".
    pub kind: String,
    pub format_version: u32,
    pub observations: Vec<Observation>,
}

/// What the inputs held.
#[derive(Debug, Default)]
pub struct Inputs {
    pub observations: Vec<Observation>,
    /// Files found in directories that are not results (manifests, comparisons), with why.
    pub skipped: Vec<String>,
}

/// Reads sets of paths. With one set, each result names its configuration by its
/// `config` label, else by its directory's name, and each capture by its file name
/// without the extension. With several sets (`A... -- B...`) each
/// set is one configuration, named after the directory its files share where the sets'
/// directories differ, else `set1`, `set2`, ...
pub fn read_sets(sets: &[Vec<PathBuf>]) -> Result<Inputs, CompareError> {
    let mut inputs = Inputs::default();
    let names = set_names(sets);
    for (set, name) in sets.iter().zip(&names) {
        for path in set {
            if path.is_dir() {
                for file in json_files(path)? {
                    read_file(&file, name.as_deref(), true, &mut inputs)?;
                }
            } else {
                read_file(path, name.as_deref(), false, &mut inputs)?;
            }
        }
    }
    if inputs.observations.is_empty() {
        return Err(CompareError::Empty);
    }
    Ok(inputs)
}

fn set_names(sets: &[Vec<PathBuf>]) -> Vec<Option<String>> {
    if sets.len() < 2 {
        return vec![None; sets.len()];
    }
    let dir_of = |set: &Vec<PathBuf>| -> Option<String> {
        let mut dirs = set.iter().map(|p| {
            let dir = if p.is_dir() {
                Some(p.as_path())
            } else {
                p.parent()
            };
            dir.and_then(|d| std::fs::canonicalize(d).ok())
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        });
        let first = dirs.next()??;
        dirs.all(|d| d.as_deref() == Some(first.as_str()))
            .then_some(first)
    };
    let dirs: Vec<Option<String>> = sets.iter().map(dir_of).collect();
    let distinct = dirs.iter().all(Option::is_some)
        && dirs.iter().enumerate().all(|(i, d)| !dirs[..i].contains(d));
    (0..sets.len())
        .map(|i| {
            Some(if distinct {
                dirs[i].clone().unwrap_or_default()
            } else {
                format!("set{}", i + 1)
            })
        })
        .collect()
}

/// Every `.json` file under `dir`, sorted, so that runs are read in a stable order.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, CompareError> {
    files_under(dir, |p| p.extension().is_some_and(|e| e == "json"))
}

/// Every regular file under `dir` that `keep` accepts, sorted; symbolic links are not
/// followed (a loop of them cannot hang the walk).
pub fn files_under(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>, CompareError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| CompareError::Read {
            path: d.display().to_string(),
            error: e.to_string(),
        })?;
        for entry in entries.flatten() {
            let p = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() && keep(&p) => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    Ok(out)
}

fn read_file(
    path: &Path,
    set: Option<&str>,
    found: bool,
    inputs: &mut Inputs,
) -> Result<(), CompareError> {
    let at = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CompareError::Read {
        path: at.clone(),
        error: e.to_string(),
    })?;
    // A capture found in a directory is read too, and a bad one stops the comparison
    // as a bad result given by name does: left out, it would leave a side empty.
    if let Some(o) = observe_capture(Source::of(&text), &text, path, set) {
        inputs.observations.push(o?);
        return Ok(());
    }
    let view: ResultView = serde_json::from_str(&text).map_err(|e| CompareError::Format {
        path: at.clone(),
        what: if e.is_syntax() || e.is_eof() {
            format!("not JSON ({e})")
        } else {
            format!("not a dbio result ({e})")
        },
    })?;
    if found && view.interrupted() {
        inputs.skipped.push(format!("{at}: an interrupted run"));
        return Ok(());
    }
    // A capture whose kind is not at its start (keys sorted by another tool).
    let capture = view.kind.as_deref().and_then(Source::of_kind);
    if let Some(o) = capture.and_then(|k| observe_capture(k, &text, path, set)) {
        inputs.observations.push(o?);
        return Ok(());
    }
    match view.kind.as_deref() {
        Some(OBSERVATIONS_KIND) => {
            let file: ObservationFile =
                serde_json::from_str(&text).map_err(|e| CompareError::Format {
                    path: at.clone(),
                    what: format!("not an observations file ({e})"),
                })?;
            inputs
                .observations
                .extend(file.observations.into_iter().map(|mut o| {
                    if let Some(set) = set {
                        o.config = set.to_string();
                    }
                    o
                }));
        }
        Some("run" | "calibrate") => {
            let dir_name = path
                .parent()
                .and_then(|d| std::fs::canonicalize(d).ok())
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
            let mut o = observation::from_view(&view, &at, set.or(dir_name.as_deref()))?;
            if let Some(set) = set {
                o.config = set.to_string();
            }
            inputs.observations.push(o);
        }
        other if found => inputs.skipped.push(format!(
            "{at}: {}",
            other.map_or("not a dbio result".to_string(), |k| format!(
                "a \"{k}\" file, not a result"
            ))
        )),
        Some(other) => {
            return Err(CompareError::Format {
                path: at,
                what: format!(
                    "a \"{other}\" file, not a run, calibrate, observations or PostgreSQL \
                     capture file"
                ),
            })
        }
        None => {
            return Err(CompareError::Format {
                path: at,
                what: "not a dbio result (no \"kind\")".into(),
            })
        }
    }
    Ok(())
}
