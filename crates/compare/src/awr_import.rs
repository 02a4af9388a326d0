//! Oracle AWR reports as observations for `dbio compare`: one report, or the reports of
//! a directory, so that runs already made with a database compare like dbio's own.

use std::path::Path;

use dbio_sources::awr::{parse, AwrReport};
use regex::Regex;

use crate::{CompareError, Observation};

/// `r` as one observation of `config` at `users`. Histogram counts are
/// shares in hundredths of a percent (a report gives shares, not counts): the
/// charts compare shapes.
pub fn observation(
    r: &AwrReport,
    config: &str,
    users: u32,
    repeat: Option<u32>,
    source: &str,
) -> Observation {
    let histograms = r
        .histograms
        .iter()
        .map(|(event, h)| {
            let b = h
                .buckets
                .iter()
                .map(|b| (b.lower_us, b.upper_us, (b.pct * 100.0).round() as u64))
                .collect();
            (event.clone(), b)
        })
        .collect();
    Observation {
        config: config.to_string(),
        load: users,
        repeat,
        source: source.to_string(),
        metrics: r.metrics(),
        histograms,
        setup: Default::default(),
        options: Vec::new(),
        nfs: None,
    }
}

/// Reports of a directory turned into observations.
#[derive(Debug, Default)]
pub struct Import {
    pub observations: Vec<Observation>,
    /// The reports read, in the order of `observations`.
    pub reports: Vec<AwrReport>,
    /// Reports that could not be read: "FILE: line N: what was expected".
    pub problems: Vec<String>,
    /// Files the grouping pattern did not match.
    pub unmatched: Vec<String>,
}

/// Largest report read (AWR text reports are a few hundred KiB).
const REPORT_MAX: u64 = 64 << 20;

/// Reads every file under `dir` whose path relative to it matches `group`, a regular
/// expression with named groups `config` (required), `users` and `repeat` (optional),
/// e.g. `(?P<config>[A-Z]+)/awr_(?P<users>\d+)_(?P<repeat>\d+)\.txt`. A report that
/// cannot be read is named in `problems`; the others go on.
pub fn import(dir: &Path, group: &Regex) -> Result<Import, CompareError> {
    if !group.capture_names().any(|n| n == Some("config")) {
        return Err(CompareError::Format {
            path: group.as_str().to_string(),
            what: "the pattern needs a named group (?P<config>...)".into(),
        });
    }
    let mut out = Import::default();
    for file in crate::inputs::files_under(dir, |_| true)? {
        let rel = file
            .strip_prefix(dir)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('\\', "/");
        let Some(caps) = group.captures(&rel) else {
            out.unmatched.push(rel);
            continue;
        };
        let at = file.display().to_string();
        let number = |name: &str| -> Result<Option<u32>, String> {
            caps.name(name)
                .map(|m| {
                    m.as_str()
                        .parse::<u32>()
                        .map_err(|_| format!("{name} {:?} is not a number", m.as_str()))
                })
                .transpose()
        };
        let (users, repeat) = match (number("users"), number("repeat")) {
            (Ok(u), Ok(r)) => (u.unwrap_or(1), r),
            (Err(e), _) | (_, Err(e)) => {
                out.problems.push(format!("{at}: {e}"));
                continue;
            }
        };
        let text = match std::fs::metadata(&file) {
            Ok(m) if m.len() > REPORT_MAX => {
                out.problems.push(format!(
                    "{at}: {} bytes, larger than an AWR report",
                    m.len()
                ));
                continue;
            }
            _ => match std::fs::read(&file) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => {
                    out.problems.push(format!("{at}: {e}"));
                    continue;
                }
            },
        };
        match parse(&text) {
            Ok(r) => {
                out.observations
                    .push(observation(&r, &caps["config"], users, repeat, &at));
                out.reports.push(r);
            }
            Err(e) => out.problems.push(format!("{at}: {e}")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(name: &str) -> String {
        let path = format!(
            "{}/../sources/testdata/awr/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn a_report_s_histograms_are_shares_in_hundredths_of_a_percent() {
        let r = parse(&report("19c.txt")).unwrap();
        let o = observation(&r, "X", 1, None, "19c.txt");
        assert_eq!(o.histograms["db file sequential read"][0], (0, 1024, 9610));
    }

    #[test]
    fn a_directory_of_reports_becomes_observations() {
        let dir = tempfile::tempdir().unwrap();
        for (config, text) in [("NFS", "11g.txt"), ("DNFS", "12c.txt")] {
            std::fs::create_dir_all(dir.path().join(config)).unwrap();
            for (users, repeat) in [(1, 1), (1, 2), (4, 1)] {
                std::fs::write(
                    dir.path()
                        .join(format!("{config}/awr_{users}_{repeat}.txt")),
                    report(text),
                )
                .unwrap();
            }
        }
        std::fs::write(dir.path().join("NFS/awr_8_1.txt"), report("truncated.txt")).unwrap();
        std::fs::write(dir.path().join("notes.md"), "not a report").unwrap();
        let group =
            Regex::new(r"(?P<config>[A-Z]+)/awr_(?P<users>\d+)_(?P<repeat>\d+)\.txt").unwrap();
        let got = import(dir.path(), &group).unwrap();
        assert_eq!(got.observations.len(), 6);
        assert_eq!(got.reports.len(), 6);
        assert_eq!(got.unmatched, ["notes.md"]);
        assert_eq!(got.problems.len(), 1);
        assert!(
            got.problems[0].contains("awr_8_1.txt: line 19:"),
            "{:?}",
            got.problems
        );
        let o = got
            .observations
            .iter()
            .find(|o| o.config == "DNFS" && o.load == 4)
            .unwrap();
        assert_eq!(o.repeat, Some(1));
        assert!(close(o.metrics["iops"], 27_999.7, 1e-6));
        let e = import(dir.path(), &Regex::new("(?P<users>\\d+)").unwrap()).unwrap_err();
        assert!(e.to_string().contains("(?P<config>"), "{e}");
    }
}
