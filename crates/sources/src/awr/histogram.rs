//! Wait Event Histograms: 11g's millisecond table and its Detail tables (64 ms to 2 s,
//! 4 s to 2 min, ...), 12c's Histogram Detail, 19c's microsecond tables ("<8us" ...
//! ">=512us", then "up to 64 us", "up to 32 ms", ...), all in one histogram per event.
//!
//! Every one of these tables starts at zero: its first column is the share of waits
//! below its first bound, whatever the table's range. So each table gives points of the
//! event's cumulative distribution (the share below each bound); the points of all the
//! tables together, in order of bound, give the buckets. Where two tables give the
//! same bound, the one that sums fewer rounded shares is kept.

use std::collections::BTreeMap;

use super::doc::Doc;
use super::model::{WaitBucket, WaitHistogram};
use super::table::{figure, io_event, number, squeeze, Table};

/// 1 ms, 1 s, 1 min and 1 h as Oracle's power-of-two buckets count them, in us.
const MS: f64 = 1024.0;
const S: f64 = MS * 1024.0;
const MIN: f64 = S * 64.0;
const HOUR: f64 = MIN * 64.0;

/// A bucket title ("<1ms", "<=1s", ">=512us", "<1/8s", "< 2m") as (bound in us,
/// whether it is the open bucket above the bound).
fn bound(title: &str) -> Option<(u64, bool)> {
    let t = squeeze(title);
    let (open, t) = if let Some(r) = t.strip_prefix(">=").or_else(|| t.strip_prefix('>')) {
        (true, r)
    } else {
        (false, t.trim_start_matches("<=").trim_start_matches('<'))
    };
    let split = t.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = t.split_at(split);
    let unit_us = match unit {
        "us" => 1.0,
        "ms" => MS,
        "s" => S,
        "m" => MIN,
        "h" | "hr" => HOUR,
        _ => return None,
    };
    let value = match n.split_once('/') {
        Some((a, b)) => a.parse::<f64>().ok()? / b.parse::<f64>().ok().filter(|b| *b > 0.0)?,
        None => n.parse::<f64>().ok()?,
    };
    let us = value * unit_us;
    (1.0..1e15)
        .contains(&us)
        .then_some((us.round() as u64, open))
}

/// Cumulative points of one event: bound -> (percent below it, shares summed).
type Points = BTreeMap<u64, (f64, usize)>;

fn put(points: &mut Points, bound: u64, below: f64, terms: usize) {
    let keep = points.get(&bound).is_some_and(|&(_, t)| t <= terms);
    if !keep {
        points.insert(bound, (below, terms));
    }
}

fn read_table(
    t: &Table,
    points: &mut BTreeMap<String, Points>,
    totals: &mut BTreeMap<String, f64>,
) {
    let bounds: Vec<(usize, u64, bool)> = t
        .headers
        .iter()
        .enumerate()
        .skip(2)
        .filter_map(|(c, h)| bound(h).map(|(b, open)| (c, b, open)))
        .collect();
    if bounds.is_empty() {
        return;
    }
    let total_column = t
        .headers
        .get(1)
        .is_some_and(|h| squeeze(h).to_lowercase().starts_with("total"));
    for r in &t.rows {
        let event = r.cell(0);
        if event.is_empty() {
            continue;
        }
        // A text report cuts names to 26 characters; the events tables give them whole.
        let event = io_event(event).map_or(event, |(whole, _)| whole);
        if total_column {
            if let Some((w, _)) = figure(r.cell(1)) {
                totals.insert(event.to_string(), w);
            }
        }
        let p = points.entry(event.to_string()).or_default();
        let mut below = 0.0;
        for (k, &(c, b, open)) in bounds.iter().enumerate() {
            // A blank cell is a share of 0: no wait fell there.
            let share = number(r.cell(c)).unwrap_or(0.0);
            if open {
                put(p, b, 100.0 - share, 1);
            } else {
                below += share;
                put(p, b, below, k + 1);
            }
        }
    }
}

/// A difference of printed shares (one decimal) without the float noise of the
/// subtraction: 15.1, not 15.100000000000001.
fn share(pct: f64) -> f64 {
    (pct * 1e6).round() / 1e6
}

fn buckets(points: &Points) -> Vec<WaitBucket> {
    let mut out = Vec::new();
    let (mut lower, mut below) = (0u64, 0.0f64);
    for (&b, &(at, _)) in points {
        // Rounded shares can make the sum dip or pass 100: keep it a distribution.
        let at = at.clamp(below, 100.0);
        out.push(WaitBucket {
            lower_us: lower,
            upper_us: b,
            pct: share(at - below),
        });
        lower = b;
        below = at;
    }
    if below < 100.0 - 1e-9 && !out.is_empty() {
        out.push(WaitBucket {
            lower_us: lower,
            upper_us: u64::MAX,
            pct: share(100.0 - below),
        });
    }
    out
}

/// Every event's histogram; tables it cannot read are left out (histograms are
/// optional in a report).
pub(crate) fn histograms(doc: &Doc) -> BTreeMap<String, WaitHistogram> {
    let mut points = BTreeMap::new();
    let mut totals = BTreeMap::new();
    for t in doc
        .tables
        .iter()
        .filter(|t| t.title.starts_with("Wait Event Histogram"))
    {
        read_table(t, &mut points, &mut totals);
    }
    points
        .into_iter()
        .filter_map(|(event, p)| {
            let b = buckets(&p);
            (!b.is_empty()).then(|| {
                let total_waits = totals.get(&event).copied();
                (
                    event,
                    WaitHistogram {
                        total_waits,
                        buckets: b,
                    },
                )
            })
        })
        .collect()
}
