//! Oracle AWR text reports (`awrrpt.sql`, 11g to 19c) read into observations, so that
//! runs already made with a database compare like dbio's own.
//!
//! Read: the header (DB name, instance, snapshots, elapsed), the Load Profile (physical
//! reads and writes, I/O requests and MB per second), the top foreground (or timed)
//! events (waits, total wait time, average wait, % DB time, wait class) and the wait
//! event histogram where present. Columns of the fixed-width tables are found from their
//! dashed rulers, so that the widths and column titles of each version need no list.

use std::collections::BTreeMap;
use std::path::Path;

use regex::Regex;

use serde::{Deserialize, Serialize};

use crate::{CompareError, Observation};

/// What was read from one report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AwrReport {
    pub db_name: String,
    pub instance: String,
    pub begin_snap: Option<u64>,
    pub end_snap: Option<u64>,
    pub begin_time: Option<String>,
    pub end_time: Option<String>,
    /// Seconds between the snapshots.
    pub elapsed_s: f64,
    /// Load Profile figures per second, by their name in the report ("Physical read
    /// (blocks)", "Read IO requests", ...).
    pub load_profile: BTreeMap<String, f64>,
    pub events: Vec<AwrEvent>,
    /// Wait event histograms: event -> (bucket upper bound in us, % of waits).
    pub histograms: BTreeMap<String, Vec<(u64, f64)>>,
}

/// One row of the top events table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AwrEvent {
    pub event: String,
    /// Absent for DB CPU.
    pub waits: Option<f64>,
    pub total_wait_s: f64,
    /// Average wait in microseconds (the report gives ms, or a value with its unit).
    pub avg_wait_us: Option<f64>,
    pub db_time_pct: Option<f64>,
    pub wait_class: String,
}

/// Why a report could not be read: the line (from 1) and what was expected there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct AwrError {
    pub line: usize,
    pub what: String,
}

fn err(line: usize, what: impl Into<String>) -> AwrError {
    AwrError {
        line: line + 1,
        what: what.into(),
    }
}

/// A number as AWR prints it: "2,940,000", "1150.3", ".0", "12.5K", "1.2M".
fn number(s: &str) -> Option<f64> {
    let s = s.trim().replace(',', "");
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        _ => (s.as_str(), 1.0),
    };
    num.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| v * mult)
}

/// A wait with its unit, as 19c prints it ("391.26us", "8.33ms", "1.02 s"); a bare number
/// is taken in `default_unit_us`.
fn wait_us(s: &str, default_unit_us: f64) -> Option<f64> {
    let s = s.trim();
    for (suffix, us) in [("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)] {
        if let Some(n) = s.strip_suffix(suffix) {
            return number(n).map(|v| v * us);
        }
    }
    number(s).map(|v| v * default_unit_us)
}

/// Column spans (start, end) of a ruler line of dashes separated by spaces.
fn ruler(line: &str) -> Option<Vec<(usize, usize)>> {
    let t = line.trim_end();
    if !t.trim_start().starts_with('-') || !t.chars().all(|c| c == '-' || c == ' ') {
        return None;
    }
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in t.char_indices() {
        match (c, start) {
            ('-', None) => start = Some(i),
            (' ', Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, t.len()));
    }
    Some(spans)
}

/// The text of a column; the last column runs to the end of the line.
fn column(line: &str, spans: &[(usize, usize)], i: usize) -> String {
    let Some(&(s, e)) = spans.get(i) else {
        return String::new();
    };
    let e = if i + 1 == spans.len() { line.len() } else { e };
    // A cut inside a multi-byte character reads as empty, never as a panic.
    line.get(s.min(line.len())..e.min(line.len()))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Parses one AWR text report.
pub fn parse(text: &str) -> Result<AwrReport, AwrError> {
    let lines: Vec<&str> = text.lines().collect();
    let find =
        |pred: &dyn Fn(&str) -> bool, from: usize| (from..lines.len()).find(|&i| pred(lines[i]));
    if find(&|l| l.contains("WORKLOAD REPOSITORY report"), 0).is_none() {
        return Err(err(
            0,
            "not an AWR text report (no \"WORKLOAD REPOSITORY report\" title)",
        ));
    }
    // Header: "DB Name ... Instance ..." titles, a ruler, then the values.
    let h = find(&|l| l.trim_start().starts_with("DB Name"), 0)
        .ok_or_else(|| err(0, "no \"DB Name\" header"))?;
    let values = (h + 1..lines.len().min(h + 4))
        .find(|&i| ruler(lines[i]).is_none() && !lines[i].trim().is_empty())
        .ok_or_else(|| err(h + 1, "the DB Name header's values"))?;
    let fields: Vec<&str> = lines[values].split_whitespace().collect();
    if fields.len() < 3 {
        return Err(err(values, "DB name, DB id and instance"));
    }
    let (db_name, instance) = (fields[0].to_string(), fields[2].to_string());

    let snap = |label: &str| -> Result<(Option<u64>, Option<String>), AwrError> {
        let Some(i) = find(&|l: &str| l.trim_start().starts_with(label), h) else {
            return Ok((None, None));
        };
        let rest: Vec<&str> = lines[i].trim_start()[label.len()..]
            .split_whitespace()
            .collect();
        let id = rest.first().and_then(|s| s.parse().ok());
        let time = (rest.len() >= 3).then(|| format!("{} {}", rest[1], rest[2]));
        if id.is_none() {
            return Err(err(i, format!("a snapshot id after \"{label}\"")));
        }
        Ok((id, time))
    };
    let (begin_snap, begin_time) = snap("Begin Snap:")?;
    let (end_snap, end_time) = snap("End Snap:")?;
    let e = find(&|l: &str| l.trim_start().starts_with("Elapsed:"), h)
        .ok_or_else(|| err(h, "no \"Elapsed:\" line in the header"))?;
    let words: Vec<&str> = lines[e].split_whitespace().collect();
    let minutes = words
        .get(1)
        .and_then(|w| number(w))
        .filter(|m| *m > 0.0)
        .ok_or_else(|| err(e, "elapsed minutes, e.g. \"Elapsed: 5.00 (mins)\""))?;
    let elapsed_s = minutes * 60.0;

    let load_profile = load_profile(&lines)?;
    let events = top_events(&lines)?;
    let histograms = histograms(&lines);
    Ok(AwrReport {
        db_name,
        instance,
        begin_snap,
        end_snap,
        begin_time,
        end_time,
        elapsed_s,
        load_profile,
        events,
        histograms,
    })
}

/// "Name:   per-second   per-transaction ..." rows of the Load Profile.
fn load_profile(lines: &[&str]) -> Result<BTreeMap<String, f64>, AwrError> {
    let mut out = BTreeMap::new();
    let Some(start) = lines
        .iter()
        .position(|l| l.trim_start().starts_with("Load Profile"))
    else {
        return Ok(out);
    };
    let mut seen_row = false;
    for (i, l) in lines.iter().enumerate().skip(start + 1) {
        if l.trim().is_empty() {
            if seen_row {
                break;
            }
            continue;
        }
        let Some((name, rest)) = l.split_once(':') else {
            continue;
        };
        let name = name.trim();
        if name.is_empty() || name.starts_with('~') {
            continue;
        }
        let first = rest.split_whitespace().next().unwrap_or("");
        let v =
            number(first).ok_or_else(|| err(i, format!("a per-second figure for \"{name}\"")))?;
        out.insert(name.to_string(), v);
        seen_row = true;
    }
    Ok(out)
}

/// The "Top N (Timed) Foreground Events ..." or "Top 5 Timed Events" table.
fn top_events(lines: &[&str]) -> Result<Vec<AwrEvent>, AwrError> {
    let Some(start) = lines.iter().position(|l| {
        let t = l.trim_start();
        t.starts_with("Top ") && t.contains("Events") && !t.contains("Background")
    }) else {
        return Err(err(
            0,
            "no top events table (\"Top 10 Foreground Events ...\" or \"Top 5 Timed Events\")",
        ));
    };
    let r = (start + 1..lines.len().min(start + 12))
        .find(|&i| ruler(lines[i]).is_some_and(|s| s.len() >= 5))
        .ok_or_else(|| err(start, "the top events table's ruler of dashes"))?;
    let spans = ruler(lines[r]).unwrap_or_default();
    // Titles above the ruler tell the units of the average wait and the total time.
    let titles = lines[start + 1..r].join(" ");
    let avg_unit_us = if titles.contains("(ms)") || titles.contains("Avg(ms)") {
        1e3
    } else {
        1.0
    };
    let mut events = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(r + 1) {
        if l.trim().is_empty() || l.trim_start().starts_with("---") {
            break;
        }
        let event = column(l, &spans, 0);
        if event.is_empty() {
            return Err(err(i, "an event name in the first column"));
        }
        let waits = number(&column(l, &spans, 1));
        let total_wait_s = number(&column(l, &spans, 2))
            .ok_or_else(|| err(i, format!("the total wait time of \"{event}\"")))?;
        let avg = column(l, &spans, 3);
        let avg_wait_us = if avg.is_empty() {
            None
        } else {
            Some(wait_us(&avg, avg_unit_us).ok_or_else(|| {
                err(
                    i,
                    format!("the average wait of \"{event}\", e.g. 391.26us or 0.39"),
                )
            })?)
        };
        let pct = column(l, &spans, 4);
        let db_time_pct = if pct.is_empty() { None } else { number(&pct) };
        let wait_class = column(l, &spans, 5);
        events.push(AwrEvent {
            event,
            waits,
            total_wait_s,
            avg_wait_us,
            db_time_pct,
            wait_class,
        });
    }
    if events.is_empty() {
        return Err(err(r + 1, "at least one event row under the ruler"));
    }
    Ok(events)
}

/// "Wait Event Histogram" rows: event, total waits, then % of waits per bucket whose
/// titles ("<1ms", "<2ms", ... ">=1s", or "<32us" in the micro histograms) name the
/// upper bounds. Tables it cannot read are left out: the histogram is optional.
fn histograms(lines: &[&str]) -> BTreeMap<String, Vec<(u64, f64)>> {
    let mut out = BTreeMap::new();
    let Some(start) = lines
        .iter()
        .position(|l| l.trim_start().starts_with("Wait Event Histogram"))
    else {
        return out;
    };
    let Some(r) = (start + 1..lines.len().min(start + 12))
        .find(|&i| ruler(lines[i]).is_some_and(|s| s.len() >= 4))
    else {
        return out;
    };
    let spans = ruler(lines[r]).unwrap_or_default();
    let title = lines[r - 1];
    let bounds: Vec<Option<u64>> = (2..spans.len())
        .map(|c| {
            let t = column(title, &spans, c);
            if t.starts_with('>') {
                return Some(u64::MAX);
            }
            let t = t.trim_start_matches("<=").trim_start_matches('<');
            wait_us(t, 1e3).map(|v| v as u64)
        })
        .collect();
    for l in lines.iter().skip(r + 1) {
        if l.trim().is_empty() || l.trim_start().starts_with("---") {
            break;
        }
        let event = column(l, &spans, 0);
        let buckets: Vec<(u64, f64)> = bounds
            .iter()
            .enumerate()
            .filter_map(|(k, b)| Some(((*b)?, number(&column(l, &spans, k + 2))?)))
            .collect();
        if !event.is_empty() && !buckets.is_empty() {
            out.insert(event, buckets);
        }
    }
    out
}

impl AwrReport {
    /// The figures as an observation's metrics: `iops` and `mbps` from the Load Profile
    /// (I/O requests and MB per second where the report has them, else physical reads
    /// and writes), and per User I/O, System I/O or Commit event `EVENT mean_us` and
    /// `EVENT iops` (waits per second).
    pub fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        let lp = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| self.load_profile.get(*n).copied())
        };
        let reads = lp(&[
            "Read IO requests",
            "Physical read IO requests",
            "Physical read (blocks)",
            "Physical reads",
        ]);
        let writes = lp(&[
            "Write IO requests",
            "Physical write IO requests",
            "Physical write (blocks)",
            "Physical writes",
        ]);
        if reads.is_some() || writes.is_some() {
            m.insert("iops".into(), reads.unwrap_or(0.0) + writes.unwrap_or(0.0));
        }
        let read_mb = lp(&["Read IO (MB)"]);
        let write_mb = lp(&["Write IO (MB)"]);
        if read_mb.is_some() || write_mb.is_some() {
            m.insert(
                "mbps".into(),
                (read_mb.unwrap_or(0.0) + write_mb.unwrap_or(0.0)) * 1.048_576,
            );
        }
        for e in &self.events {
            if !matches!(e.wait_class.as_str(), "User I/O" | "System I/O" | "Commit") {
                continue;
            }
            if let Some(avg) = e.avg_wait_us {
                m.insert(format!("{} mean_us", e.event), avg);
            }
            if let Some(w) = e.waits {
                m.insert(format!("{} iops", e.event), w / self.elapsed_s);
            }
        }
        m
    }
}

/// The "init.ora Parameters" section of a report: name (lower case) to its value at the
/// begin snapshot. Empty when the report has no such section.
pub fn parameters(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|l| l.trim_start().starts_with("init.ora Parameters"))
    else {
        return Vec::new();
    };
    let Some(r) = (start + 1..lines.len().min(start + 10))
        .find(|&i| ruler(lines[i]).is_some_and(|s| s.len() >= 2))
    else {
        return Vec::new();
    };
    let spans = ruler(lines[r]).unwrap_or_default();
    let mut out = Vec::new();
    for l in lines.iter().skip(r + 1).take(10_000) {
        if l.trim().is_empty() || l.trim_start().starts_with("---") {
            break;
        }
        let (name, value) = (column(l, &spans, 0), column(l, &spans, 1));
        if !name.is_empty() && !name.contains(' ') {
            out.push((name.to_lowercase(), value.trim_matches('\'').to_string()));
        }
    }
    out
}

/// Reports of a directory turned into observations.
#[derive(Debug, Default)]
pub struct Import {
    pub observations: Vec<Observation>,
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
                    "{at}: {} bytes, larger than an AWR text report",
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
            Ok(r) => out
                .observations
                .push(r.observation(&caps["config"], users, repeat, &at)),
            Err(e) => out.problems.push(format!("{at}: {e}")),
        }
    }
    Ok(out)
}

impl AwrReport {
    /// This report as one observation of `config` at `users`.
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
            .map(|(event, buckets)| {
                let mut lower = 0;
                let b = buckets
                    .iter()
                    .map(|&(upper, pct)| {
                        // Shares in hundredths of a percent: the charts show shares.
                        let row = (lower, upper, (pct * 100.0).round() as u64);
                        lower = upper;
                        row
                    })
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
        }
    }
}

#[cfg(test)]
#[path = "awr_tests.rs"]
mod tests;
