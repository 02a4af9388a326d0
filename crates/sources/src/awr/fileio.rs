//! Tablespace IO Stats and File IO Stats. A text report prints each on two lines (the
//! name, then the figures under the ruler's columns); HTML on one row.

use super::doc::Doc;
use super::model::FileIo;
use super::table::{duration_us, number, Row, Table};

/// Rows as (tablespace, file, figures under `t.headers`).
fn named_rows(
    t: &Table,
    text: bool,
    with_file: bool,
) -> Vec<(String, Option<String>, Vec<String>)> {
    if !text {
        let skip = if with_file { 2 } else { 1 };
        return t
            .rows
            .iter()
            .map(|r| {
                let file = with_file.then(|| r.cell(1).to_string());
                (
                    r.cell(0).to_string(),
                    file,
                    r.cells.iter().skip(skip).cloned().collect(),
                )
            })
            .collect();
    }
    let mut out = Vec::new();
    let mut name: Option<&Row> = None;
    for r in &t.rows {
        if !r.raw.starts_with([' ', '\t']) {
            name = Some(r);
            continue;
        }
        let Some(n) = name.take() else { continue };
        let mut words = n.raw.split_whitespace();
        let tablespace = words.next().unwrap_or("").to_string();
        let file = with_file.then(|| words.collect::<Vec<_>>().join(" "));
        out.push((tablespace, file, r.cells.clone()));
    }
    out
}

fn read(doc: &Doc, t: &Table, with_file: bool) -> Vec<FileIo> {
    let text = doc.lines.is_some();
    // In HTML the name columns come first; their titles are left out to match.
    let headers: Vec<String> = if text {
        t.headers.clone()
    } else {
        t.headers
            .iter()
            .skip(if with_file { 2 } else { 1 })
            .cloned()
            .collect()
    };
    let figures = Table {
        headers,
        ..Table::default()
    };
    let col = |pred: &dyn Fn(&str) -> bool| figures.column(pred);
    let reads = col(&|h| h == "reads");
    let reads_s = col(&|h| h == "avreads/s" || h == "avrds/s" || h == "reads/s");
    let avg_read = col(&|h| h == "avrd(ms)");
    let blocks = col(&|h| h == "avblks/rd");
    let writes = col(&|h| h == "writes");
    let writes_s = col(&|h| h == "avwrites/s" || h == "writesavg/s" || h == "writes/s");
    named_rows(t, text, with_file)
        .into_iter()
        .map(|(tablespace, file, cells)| {
            let get = |c: Option<usize>| c.and_then(|c| cells.get(c)).map_or("", |s| s.as_str());
            FileIo {
                tablespace,
                file,
                reads: number(get(reads)),
                reads_s: number(get(reads_s)),
                avg_read_us: duration_us(get(avg_read), 1e3).map(|(v, _)| v),
                blocks_per_read: number(get(blocks)),
                writes: number(get(writes)),
                writes_s: number(get(writes_s)),
            }
        })
        .collect()
}

/// (Tablespace IO Stats, File IO Stats); empty where the report has no such section.
pub(crate) fn file_io(doc: &Doc) -> (Vec<FileIo>, Vec<FileIo>) {
    let all = |title: &str, with_file: bool| -> Vec<FileIo> {
        doc.tables
            .iter()
            .filter(|t| t.title == title)
            .flat_map(|t| read(doc, t, with_file))
            .collect()
    };
    (
        all("Tablespace IO Stats", false),
        all("File IO Stats", true),
    )
}
