//! Renders an [`AgeResult`] (`dbio age`): a table per file system and fill
//! level with the slowdown from the fresh data set (round 0) to the last round, CSV (a row per file
//! system, fill level and round), JSON, and HTML line charts against rounds.

use std::path::PathBuf;

use dbio_stats::{AgePoint, AgeResult, AgeSeries};

use crate::fmt::{self, html_escape as esc, Table};
use crate::svg::{line_chart, Line, LineChart, PALETTE};
use crate::{ReportError, Written};

fn factor(v: Option<f64>) -> String {
    v.map_or("-".into(), |f| format!("{f:.2}x"))
}

fn summary_table(a: &AgeResult) -> Table {
    let mut t = Table::new(&[
        "fs",
        "fill %",
        "rounds",
        "extents/file r0",
        "r1",
        "last",
        "read us r0",
        "last",
        "read slowdown",
        "redo us r0",
        "last",
        "redo slowdown",
        "scan MB/s r0",
        "last",
    ]);
    for s in &a.series {
        let at = |r: u32| s.points.iter().find(|p| p.round == r);
        let last = s.points.last().filter(|p| p.round >= 1);
        let or = |p: Option<&AgePoint>, f: &dyn Fn(&AgePoint) -> String| p.map_or("-".into(), f);
        t.row(vec![
            s.fs.clone(),
            if a.own_target {
                format!("({:.0})", s.fill_measured_pct)
            } else {
                s.fill_pct.to_string()
            },
            last.map_or(0, |p| p.round).to_string(),
            or(at(0), &|p| format!("{:.1}", p.extents_per_file)),
            or(at(1), &|p| format!("{:.1}", p.extents_per_file)),
            or(last, &|p| format!("{:.1}", p.extents_per_file)),
            or(at(0), &|p| fmt::us(p.read_mean_us)),
            or(last, &|p| fmt::us(p.read_mean_us)),
            factor(s.read_slowdown()),
            or(at(0), &|p| fmt::us(p.redo_mean_us)),
            or(last, &|p| fmt::us(p.redo_mean_us)),
            factor(s.redo_slowdown()),
            or(at(0), &|p| fmt::mbps(p.scan_mbps)),
            or(last, &|p| fmt::mbps(p.scan_mbps)),
        ]);
    }
    t
}

fn headline(a: &AgeResult) -> String {
    let mut s = format!(
        "{} rounds of {} random {} B writes on {} of data",
        a.rounds,
        fmt::int(a.updates_per_round),
        a.block_size,
        fmt::bytes(a.dataset_bytes),
    );
    if a.own_target {
        s += &format!(" in {}", a.dir);
    } else {
        s += &format!(
            ", file systems of {} on loop devices in {}",
            fmt::bytes(a.size_bytes),
            a.dir
        );
    }
    s += &format!(
        "; reads and redo writes measured {} s each round ({}{})",
        fmt::secs(a.measure_s),
        a.engine,
        if a.direct { ", O_DIRECT" } else { ", buffered" }
    );
    if a.interrupted {
        s += &format!(
            "; INTERRUPTED ({}): the rounds measured so far",
            a.stop_reason.as_deref().unwrap_or("stopped")
        );
    }
    s
}

/// The result as terminal text: the headline, the summary table, notes.
pub fn age_terminal(a: &AgeResult) -> String {
    let mut s = format!(
        "dbio age: {}\n\n{}",
        headline(a),
        summary_table(a).text("  ")
    );
    s +=
        "  slowdown: mean latency after the last round over that of the fresh data set (round 0)\n";
    for n in &a.notes {
        s += &format!("  note: {n}\n");
    }
    for x in &a.series {
        if let Some(e) = &x.error {
            s += &format!("  {}: stopped early: {e}\n", x.label());
        }
        if !a.own_target && x.image_bytes > 0 && !x.loop_direct_io {
            s += &format!(
                "  {}: the loop device went through its image's page cache (no O_DIRECT there)\n",
                x.label()
            );
        }
    }
    s
}

/// One row per file system, fill level and round.
pub fn age_csv(a: &AgeResult) -> String {
    let mut out = String::from(
        "fs,fill_pct,round,updates,update_mean_us,read_mean_us,read_p99_us,read_iops,\
         redo_mean_us,redo_p99_us,scan_mbps,extents_per_file,extents_max,fill_measured_pct\n",
    );
    for s in &a.series {
        for p in &s.points {
            out += &format!(
                "{},{},{},{},{:.2},{:.2},{:.2},{:.1},{:.2},{:.2},{:.1},{:.1},{},{:.1}\n",
                fmt::csv_field(&s.fs),
                s.fill_pct,
                p.round,
                p.updates,
                p.update_mean_us,
                p.read_mean_us,
                p.read_p99_us,
                p.read_iops,
                p.redo_mean_us,
                p.redo_p99_us,
                p.scan_mbps,
                p.extents_per_file,
                p.extents_max,
                p.fill_pct
            );
        }
    }
    out
}

fn chart(a: &AgeResult, title: &str, y_label: &str, value: fn(&AgePoint) -> f64) -> String {
    let lines = a
        .series
        .iter()
        .enumerate()
        .map(|(i, s): (usize, &AgeSeries)| Line {
            name: s.label(),
            color: PALETTE[i % PALETTE.len()],
            points: s
                .points
                .iter()
                .map(|p| (f64::from(p.round), value(p)))
                .collect(),
            labels: Vec::new(),
            markers: true,
            dashed: i >= PALETTE.len(),
        })
        .collect();
    line_chart(&LineChart {
        title: title.into(),
        x_label: "round (0: the data set as created)".into(),
        y_label: y_label.into(),
        lines,
        reference: None,
        highlight: None,
    })
}

/// The result as one HTML page: latency, extents, redo and scan against
/// rounds, one line per file system and fill level; then the table.
pub fn age_html(a: &AgeResult) -> String {
    let mut body = String::new();
    body += &chart(
        a,
        "Single-block read latency (mean) against rounds",
        "mean latency, us",
        |p| p.read_mean_us,
    );
    body += &chart(
        a,
        "Extents per data file against rounds",
        "extents per file",
        |p| p.extents_per_file,
    );
    body += &chart(
        a,
        "Redo write latency (mean) against rounds",
        "mean latency, us",
        |p| p.redo_mean_us,
    );
    body += &chart(
        a,
        "Sequential scan (1 MiB reads) against rounds",
        "MB/s",
        |p| p.scan_mbps,
    );
    body += "<h2>Slowdown from the fresh data set to the last round</h2>\n";
    body += &summary_table(a).html();
    if !a.notes.is_empty() {
        body += "<h2>Notes</h2>\n<ul>\n";
        for n in &a.notes {
            body += &format!("<li>{}</li>\n", esc(n));
        }
        body += "</ul>\n";
    }
    crate::html::page("dbio age", &headline(a), &body, env!("CARGO_PKG_VERSION"))
}

/// Which files to write for an age result.
#[derive(Clone, Debug, Default)]
pub struct AgeOutputs {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

/// Writes each output asked for (each file whole or not at all).
pub fn write_age(a: &AgeResult, out: &AgeOutputs) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Written::default();
    if let Some(p) = &out.json {
        let text =
            serde_json::to_string_pretty(a).map_err(|e| ReportError::Encode(e.to_string()))? + "\n";
        written.write(p, text.as_bytes())?;
    }
    if let Some(p) = &out.csv {
        written.write(p, age_csv(a).as_bytes())?;
    }
    if let Some(p) = &out.html {
        written.write(p, age_html(a).as_bytes())?;
    }
    Ok(written.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> AgeResult {
        let p = |round, ext, read| AgePoint {
            round,
            updates: u64::from(round) * 100,
            read_mean_us: read,
            redo_mean_us: 50.0,
            extents_per_file: ext,
            ..Default::default()
        };
        AgeResult {
            kind: dbio_stats::AGE_KIND.into(),
            rounds: 2,
            updates_per_round: 100,
            block_size: 8192,
            series: vec![
                AgeSeries {
                    fs: "btrfs".into(),
                    fill_pct: 50,
                    image_bytes: 1,
                    points: vec![p(0, 1.0, 90.0), p(1, 80.0, 100.0), p(2, 150.0, 300.0)],
                    ..Default::default()
                },
                AgeSeries {
                    fs: "ext4".into(),
                    fill_pct: 50,
                    image_bytes: 1,
                    points: vec![p(0, 1.0, 90.0), p(1, 1.0, 100.0)],
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn table_csv_and_charts() {
        let a = sample();
        let text = age_terminal(&a);
        // 300 us after the last round over 90 us on the fresh data set.
        assert!(text.contains("3.33x"), "{text}");
        let csv = age_csv(&a);
        assert_eq!(csv.lines().count(), 1 + 5);
        assert!(csv.contains("\nbtrfs,50,2,200,"), "{csv}");
        let page = age_html(&a);
        assert_eq!(page.matches("<svg").count(), 4);
        assert!(page.contains("btrfs 50%"));
    }
}
