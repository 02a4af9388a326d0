//! Reports of a directory turned into observations for `dbio compare`.

use std::collections::BTreeMap;
use std::path::Path;

use regex::Regex;

use super::{parse, AwrReport};
use crate::{CompareError, Observation};

impl AwrReport {
    /// The figures as an observation's metrics: `iops` and `mbps` from the I/O
    /// requests and MiB per second (never from blocks, which count each block of a
    /// multiblock read), `read iops`, `write iops`, `read mbps`, `write mbps`, and per
    /// foreground User I/O, System I/O or Commit event `EVENT mean_us` and `EVENT
    /// iops` (waits per second); background System I/O events (log file parallel
    /// write, db file parallel write, ...) as `EVENT (background) ...`.
    pub fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        let lp = &self.load_profile;
        let mut pair = |name: &str, r: Option<f64>, w: Option<f64>, scale: f64| {
            if let Some(r) = r {
                m.insert(format!("read {name}"), r * scale);
            }
            if let Some(w) = w {
                m.insert(format!("write {name}"), w * scale);
            }
            if r.is_some() || w.is_some() {
                m.insert(
                    name.to_string(),
                    (r.unwrap_or(0.0) + w.unwrap_or(0.0)) * scale,
                );
            }
        };
        pair("iops", lp.read_iops, lp.write_iops, 1.0);
        // dbio's MB are 10^6 bytes; Oracle's MB are MiB.
        pair("mbps", lp.read_mib_s, lp.write_mib_s, 1.048_576);
        let foreground = self.events.iter().map(|e| (e, ""));
        let background = self
            .background_events
            .iter()
            .filter(|e| e.wait_class == "System I/O")
            .map(|e| (e, " (background)"));
        for (e, suffix) in foreground.chain(background) {
            if !matches!(e.wait_class.as_str(), "User I/O" | "System I/O" | "Commit") {
                continue;
            }
            if let Some(mean) = e.mean_wait_us {
                m.insert(format!("{}{suffix} mean_us", e.event), mean);
            }
            if let Some(w) = e.waits {
                m.insert(format!("{}{suffix} iops", e.event), w / self.elapsed_s);
            }
        }
        m
    }

    /// This report as one observation of `config` at `users`. Histogram counts are
    /// shares in hundredths of a percent (a report gives shares, not counts): the
    /// charts compare shapes.
    pub fn observation(
        &self,
        config: &str,
        users: u32,
        repeat: Option<u32>,
        source: &str,
    ) -> Observation {
        let histograms = self
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
            metrics: self.metrics(),
            histograms,
            setup: Default::default(),
            options: Vec::new(),
            nfs: None,
        }
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
                    .push(r.observation(&caps["config"], users, repeat, &at));
                out.reports.push(r);
            }
            Err(e) => out.problems.push(format!("{at}: {e}")),
        }
    }
    Ok(out)
}
