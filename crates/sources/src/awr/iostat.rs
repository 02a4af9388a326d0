//! IOStat by Function summary and IOStat by Filetype summary: requests, MiB and wait
//! times per function (Buffer Cache Reads, DBWR, LGWR, Direct Reads, ...) and per file
//! type.

use super::doc::Doc;
use super::model::IoStat;
use super::table::{duration_us, mebibytes, number, Table};

/// The functions AWR names; a text report cuts them to 15 characters.
const FUNCTIONS: [&str; 14] = [
    "Buffer Cache Reads",
    "Direct Reads",
    "Direct Writes",
    "DBWR",
    "LGWR",
    "ARCH",
    "RMAN",
    "Recovery",
    "Smart Scan",
    "Streams AQ",
    "Data Pump",
    "XDB",
    "Archive Manager",
    "Others",
];

const FILETYPES: [&str; 9] = [
    "Data File",
    "Log File",
    "Control File",
    "Temp File",
    "Archive Log",
    "Archive Log Backup",
    "Data File Backup",
    "Data File Incremental Backup",
    "Flashback Log",
];

fn whole(printed: &str, names: &[&str]) -> String {
    names
        .iter()
        .find(|n| **n == printed || (printed.len() >= 15 && n.starts_with(printed)))
        .map_or(printed.to_string(), |n| n.to_string())
}

fn rows(t: &Table, names: &[&str]) -> Vec<IoStat> {
    // "Reads: Data | Reqs per sec | Data per sec | Writes: Data | ..." (the same
    // titles twice, so found by place).
    let reads = t.column(|h| h.starts_with("reads:"));
    let writes = t.column(|h| h.starts_with("writes:"));
    let waits = t.column(|h| h.contains("count"));
    let avg = t.column(|h| h.starts_with("avg"));
    let small = t.column(|h| h.starts_with("small"));
    let large = t.column(|h| h.starts_with("large"));
    let at = |r: &super::table::Row, c: Option<usize>, k: usize| {
        c.map_or("", |c| r.cell(c + k)).to_string()
    };
    let time = |s: String| duration_us(&s, 1e3).map(|(v, _)| v);
    t.rows
        .iter()
        .filter(|r| !r.cell(0).is_empty() && !r.cell(0).starts_with("TOTAL"))
        .map(|r| IoStat {
            name: whole(r.cell(0), names),
            read_mib: mebibytes(&at(r, reads, 0)),
            read_reqs_s: number(&at(r, reads, 1)),
            read_mib_s: mebibytes(&at(r, reads, 2)),
            write_mib: mebibytes(&at(r, writes, 0)),
            write_reqs_s: number(&at(r, writes, 1)),
            write_mib_s: mebibytes(&at(r, writes, 2)),
            waits: number(&at(r, waits, 0)),
            avg_wait_us: time(at(r, avg, 0)),
            small_read_us: time(at(r, small, 0)),
            large_read_us: time(at(r, large, 0)),
        })
        .collect()
}

/// (by Function, by Filetype); empty where the report has no such section.
pub(crate) fn iostat(doc: &Doc) -> (Vec<IoStat>, Vec<IoStat>) {
    let table = |title: &str| doc.tables.iter().find(|t| t.title == title);
    (
        table("IOStat by Function summary").map_or(Vec::new(), |t| rows(t, &FUNCTIONS)),
        table("IOStat by Filetype summary").map_or(Vec::new(), |t| rows(t, &FILETYPES)),
    )
}
