//! Reading one report, text or HTML: its sections into the model, and its parameters.
//! `import` reads many through it.

use super::doc::{doc, AwrError};
use super::model::{AwrReport, Layout};
use super::{events, fileio, header, histogram, iostat, load};

/// Parses one AWR report, text or HTML.
pub fn parse(text: &str) -> Result<AwrReport, AwrError> {
    let doc = doc(text);
    // "WORKLOAD REPOSITORY report for", "WORKLOAD REPOSITORY PDB report (root snapshots)".
    let titled = text
        .lines()
        .take(200)
        .any(|l| l.contains("WORKLOAD REPOSITORY") && l.to_lowercase().contains("report"));
    if !titled {
        let kind = if doc.lines.is_none() {
            "an AWR HTML"
        } else {
            "an AWR text"
        };
        return Err(doc.err(
            1,
            format!("not {kind} report (no \"WORKLOAD REPOSITORY ... report\" title)"),
        ));
    }
    let h = header::header(&doc)?;
    let load_profile = load::load_profile(&doc)?;
    let (events, background_events) = events::events(&doc)?;
    let (io_by_function, io_by_filetype) = iostat::iostat(&doc);
    let (tablespaces, files) = fileio::file_io(&doc);
    Ok(AwrReport {
        layout: if doc.lines.is_some() {
            Layout::Text
        } else {
            Layout::Html
        },
        release: h.release,
        db_name: h.db_name,
        instance: h.instance,
        begin_snap: h.begin_snap,
        end_snap: h.end_snap,
        begin_time: h.begin_time,
        end_time: h.end_time,
        elapsed_s: h.elapsed_s,
        load_profile,
        events,
        background_events,
        io_by_function,
        io_by_filetype,
        histograms: histogram::histograms(&doc),
        tablespaces,
        files,
        activity: load::activity_totals(&doc),
    })
}

/// The "init.ora Parameters" section of a report (text or HTML): name (lower case) to
/// its value at the begin snapshot (19c calls the section "Modified Parameters"). A PDB report adds the container's parameters
/// ("Parameters modified by other containers") where the PDB sets none of its own.
/// Empty when the report has no such section.
pub fn parameters(text: &str) -> Vec<(String, String)> {
    let doc = doc(text);
    let mut out: Vec<(String, String)> = Vec::new();
    let titles: [&[&str]; 2] = [
        &["init.ora Parameters", "Modified Parameters"],
        &["Parameters modified by other containers"],
    ];
    for group in titles {
        let own = out.len();
        for t in doc
            .tables
            .iter()
            .filter(|t| group.iter().any(|g| t.title.starts_with(g)))
        {
            for r in t.rows.iter().take(10_000) {
                let (name, value) = (r.cell(0).to_lowercase(), r.cell(1));
                // "PDB: PDB1" lines under a value name the container, not a parameter.
                if name.is_empty()
                    || name.contains(' ')
                    || out[..own].iter().any(|(n, _)| *n == name)
                {
                    continue;
                }
                out.push((name, value.trim_matches('\'').to_string()));
            }
        }
    }
    out
}
