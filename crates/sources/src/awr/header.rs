//! The report's header: database, instance, release, snapshots and the time between
//! them.

use super::doc::{AwrError, Doc};
use super::table::{number, squeeze, Table};
use super::text::Lines;

/// What the header says.
pub(crate) struct Header {
    pub release: Option<String>,
    pub db_name: String,
    pub instance: String,
    pub begin_snap: Option<u64>,
    pub end_snap: Option<u64>,
    pub begin_time: Option<String>,
    pub end_time: Option<String>,
    pub elapsed_s: f64,
}

/// The "DB Name ... Instance ... Release" table (and 12c+'s separate "Instance" table).
fn database(doc: &Doc) -> Result<(String, String, Option<String>), AwrError> {
    let Some(t) = doc
        .tables
        .iter()
        .find(|t| t.headers.first().is_some_and(|h| squeeze(h) == "DBName"))
    else {
        return Err(doc.err(doc.end, "no \"DB Name\" table at the top of the report"));
    };
    let row = t
        .rows
        .first()
        .ok_or_else(|| doc.err(t.line, "the DB Name table's values"))?;
    let db_name = row.cell(0).to_string();
    if db_name.is_empty() {
        return Err(doc.err(row.line, "a database name under \"DB Name\""));
    }
    let in_row = |t: &Table, name: &str| {
        let c = t.column(|h| h == name)?;
        let v = t.rows.first()?.cell(c).to_string();
        (!v.is_empty()).then_some(v)
    };
    let release = in_row(t, "release");
    // 12c+ print the instance in a table of its own; without one (19c text reports
    // of before) the unique name identifies the database.
    let instance = in_row(t, "instance")
        .or_else(|| {
            doc.tables
                .iter()
                .find(|t| t.headers.first().is_some_and(|h| h.trim() == "Instance"))
                .and_then(|t| in_row(t, "instance"))
        })
        .or_else(|| in_row(t, "uniquename"))
        .unwrap_or_default();
    Ok((db_name, instance, release))
}

pub(crate) fn header(doc: &Doc) -> Result<Header, AwrError> {
    let (db_name, instance, release) = database(doc)?;
    let snaps = match &doc.lines {
        Some(lines) => text_snaps(doc, lines)?,
        None => html_snaps(doc)?,
    };
    Ok(Header {
        release,
        db_name,
        instance,
        begin_snap: snaps.begin.0,
        end_snap: snaps.end.0,
        begin_time: snaps.begin.1,
        end_time: snaps.end.1,
        elapsed_s: snaps.elapsed_s,
    })
}

struct Snaps {
    begin: (Option<u64>, Option<String>),
    end: (Option<u64>, Option<String>),
    elapsed_s: f64,
}

/// "Elapsed: 5.00 (mins)" or its cell: minutes to seconds.
fn elapsed(doc: &Doc, line: usize, text: &str) -> Result<f64, AwrError> {
    text.split_whitespace()
        .find_map(number)
        .filter(|m| *m > 0.0)
        .map(|m| m * 60.0)
        .ok_or_else(|| doc.err(line, "elapsed minutes, e.g. \"Elapsed: 5.00 (mins)\""))
}

/// "Begin Snap:   37 12-Feb-17 12:16:04 ..." lines.
fn text_snaps(doc: &Doc, lines: &Lines) -> Result<Snaps, AwrError> {
    let find = |label: &str| {
        (0..lines.lines.len())
            .find(|&i| lines.text(i).trim_start().starts_with(label))
            .map(|i| {
                (
                    lines.number(i),
                    lines.text(i).trim_start()[label.len()..].to_string(),
                )
            })
    };
    let snap = |label: &str| -> Result<(Option<u64>, Option<String>), AwrError> {
        let Some((line, rest)) = find(label) else {
            return Ok((None, None));
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let id = words.first().and_then(|s| s.parse().ok());
        if id.is_none() {
            return Err(doc.err(line, format!("a snapshot id after \"{label}\"")));
        }
        let time = (words.len() >= 3).then(|| format!("{} {}", words[1], words[2]));
        Ok((id, time))
    };
    let (line, rest) =
        find("Elapsed:").ok_or_else(|| doc.err(doc.end, "no \"Elapsed:\" line in the header"))?;
    Ok(Snaps {
        begin: snap("Begin Snap:")?,
        end: snap("End Snap:")?,
        elapsed_s: elapsed(doc, line, &rest)?,
    })
}

/// The snapshot table: rows "Begin Snap:", "End Snap:", "Elapsed:".
fn html_snaps(doc: &Doc) -> Result<Snaps, AwrError> {
    let rows = || {
        doc.tables
            .iter()
            .filter(|t| t.headers.iter().any(|h| squeeze(h) == "SnapId"))
            .flat_map(|t| t.rows.iter())
    };
    let row = |label: &str| rows().find(|r| r.cell(0) == label);
    let snap = |label: &str| -> Result<(Option<u64>, Option<String>), AwrError> {
        let Some(r) = row(label) else {
            return Ok((None, None));
        };
        let id = r.cell(1).parse().ok();
        if id.is_none() {
            return Err(doc.err(r.line, format!("a snapshot id after \"{label}\"")));
        }
        let time = Some(r.cell(2).to_string()).filter(|t| !t.is_empty());
        Ok((id, time))
    };
    let e = row("Elapsed:")
        .ok_or_else(|| doc.err(doc.end, "no \"Elapsed:\" row in the snapshot table"))?;
    let text = e
        .cells
        .iter()
        .skip(1)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Snaps {
        begin: snap("Begin Snap:")?,
        end: snap("End Snap:")?,
        elapsed_s: elapsed(doc, e.line, &text)?,
    })
}
