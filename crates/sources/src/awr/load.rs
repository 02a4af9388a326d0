//! The Load Profile, completed from the Instance Activity Stats where it lacks the I/O
//! request rates (11g's Load Profile gives blocks only).

use std::collections::BTreeMap;

use super::doc::{AwrError, Doc};
use super::model::LoadProfile;
use super::table::{number, squeeze};

/// "Name:   per-second   per-transaction ..." rows of the Load Profile.
pub(crate) fn load_profile(doc: &Doc) -> Result<LoadProfile, AwrError> {
    let mut per_second = BTreeMap::new();
    for t in doc.tables.iter().filter(|t| t.title == "Load Profile") {
        for r in &t.rows {
            let name = r.cell(0).trim_end_matches(':').trim();
            if name.is_empty() || name.starts_with('~') {
                continue;
            }
            let v = number(r.cell(1))
                .ok_or_else(|| doc.err(r.line, format!("a per-second figure for \"{name}\"")))?;
            per_second.insert(name.to_string(), v);
        }
    }
    let lp = |names: &[&str]| names.iter().find_map(|n| per_second.get(*n).copied());
    let mut p = LoadProfile {
        read_iops: lp(&["Read IO requests", "Physical read IO requests"]),
        write_iops: lp(&["Write IO requests", "Physical write IO requests"]),
        read_mib_s: lp(&["Read IO (MB)"]),
        write_mib_s: lp(&["Write IO (MB)"]),
        physical_read_blocks: lp(&["Physical read (blocks)", "Physical reads"]),
        physical_write_blocks: lp(&["Physical write (blocks)", "Physical writes"]),
        logical_read_blocks: lp(&["Logical read (blocks)", "Logical reads"]),
        redo_bytes: lp(&["Redo size (bytes)", "Redo size"]),
        ..LoadProfile::default()
    };
    if p.read_iops.is_some() || p.write_iops.is_some() {
        p.requests_from = Some("Load Profile".into());
    } else {
        let stat = activity(doc);
        let get = |name: &str| stat.get(name).copied();
        p.read_iops = get("physical read IO requests");
        p.write_iops = get("physical write IO requests");
        p.read_mib_s = get("physical read bytes").map(|b| b / 1_048_576.0);
        p.write_mib_s = get("physical write bytes").map(|b| b / 1_048_576.0);
        if p.read_iops.is_some() || p.write_iops.is_some() {
            p.requests_from = Some("Instance Activity Stats".into());
        }
    }
    p.logical_to_physical = match (p.logical_read_blocks, p.physical_read_blocks) {
        (Some(l), Some(r)) if r > 0.0 => Some(l / r),
        _ => None,
    };
    p.per_second = per_second;
    Ok(p)
}

/// Instance Activity Stats (every page, and 12c+'s Key and Other tables): statistic
/// name to its per-second figure.
fn activity(doc: &Doc) -> BTreeMap<String, f64> {
    activity_column(doc, "persecond")
}

/// Instance Activity Stats: statistic name (as printed: a text report cuts it to 33
/// characters) to its total over the interval, which keeps the digits that a rare
/// statistic's per-second figure (0.0) loses.
pub(crate) fn activity_totals(doc: &Doc) -> BTreeMap<String, f64> {
    activity_column(doc, "total")
}

fn activity_column(doc: &Doc, column: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for t in doc
        .tables
        .iter()
        .filter(|t| t.title.contains("Instance Activity Stats"))
    {
        let Some(c) = t.column(|h| h == column) else {
            continue;
        };
        if squeeze(t.headers.first().map_or("", |h| h.as_str())) != "Statistic" {
            continue;
        }
        for r in &t.rows {
            if let Some(v) = number(r.cell(c)) {
                out.insert(r.cell(0).to_string(), v);
            }
        }
    }
    out
}
