//! Renders a [`MatrixResult`] (`dbio matrix`): the points as a table, Orion's three CSV
//! grids (`_iops.csv`, `_mbps.csv`, `_lat.csv`), JSON, Markdown, and HTML heatmaps.

use std::path::{Path, PathBuf};

use dbio_stats::{MatrixPoint, MatrixResult};

use crate::fmt::{self, html_escape as esc, Table};
use crate::svg::heatmap;
use crate::{ReportError, Written};

fn points_table(m: &MatrixResult) -> Table {
    let mut t = Table::new(&[
        "small",
        "large",
        "small IOPS",
        "small mean us",
        "small p99 us",
        "large MB/s",
        "large mean us",
    ]);
    for p in &m.points {
        let or_dash = |present: bool, v: String| if present { v } else { "-".into() };
        t.row(vec![
            p.small.to_string(),
            p.large.to_string(),
            or_dash(p.small > 0, fmt::whole(p.small_iops)),
            or_dash(p.small > 0, fmt::us(p.small_mean_us)),
            or_dash(p.small > 0, fmt::us(p.small_p99_us)),
            or_dash(p.large > 0, fmt::mbps(p.large_mbps)),
            or_dash(p.large > 0, fmt::us(p.large_mean_us)),
        ]);
    }
    t
}

fn headline(m: &MatrixResult) -> String {
    let best_iops = m
        .points
        .iter()
        .filter(|p| p.small > 0)
        .max_by(|a, b| a.small_iops.total_cmp(&b.small_iops));
    let best_mbps = m
        .points
        .iter()
        .filter(|p| p.large > 0)
        .max_by(|a, b| a.large_mbps.total_cmp(&b.large_mbps));
    let mut s = format!(
        "{} matrix of {} random reads against {} random reads, {} points of {} s each, on {} ({})",
        m.shape,
        fmt::bytes(u64::from(m.small_bytes)),
        fmt::bytes(u64::from(m.large_bytes)),
        m.points.len(),
        fmt::secs(m.point_s),
        m.target,
        m.engine
    );
    if let Some(p) = best_iops {
        s += &format!(
            "; max {} IOPS at {} small + {} large ({} us mean)",
            fmt::whole(p.small_iops),
            p.small,
            p.large,
            fmt::us(p.small_mean_us)
        );
    }
    if let Some(p) = best_mbps {
        s += &format!(
            "; max {} MB/s at {} large + {} small",
            fmt::mbps(p.large_mbps),
            p.large,
            p.small
        );
    }
    if m.interrupted {
        s += "; INTERRUPTED: the points measured so far";
    }
    s
}

/// The matrix as terminal text.
pub fn matrix_terminal(m: &MatrixResult) -> String {
    format!(
        "dbio matrix: {}\n\n{}",
        headline(m),
        points_table(m).text("  ")
    )
}

/// The matrix as Markdown.
pub fn matrix_markdown(m: &MatrixResult) -> String {
    format!(
        "# dbio matrix\n\n{}\n\n{}",
        fmt::md_escape(&headline(m)),
        points_table(m).markdown()
    )
}

/// Orion's grid: a header row `Large/Small, s1, s2, ...`, then one row per large level.
fn grid(m: &MatrixResult, value: impl Fn(&MatrixPoint) -> Option<f64>) -> String {
    let mut out = String::from("Large/Small");
    for s in &m.small_levels {
        out += &format!(",{s}");
    }
    out.push('\n');
    for l in &m.large_levels {
        out += &l.to_string();
        for s in &m.small_levels {
            out.push(',');
            if let Some(v) = m.point(*s, *l).and_then(&value) {
                out += &format!("{v:.2}");
            }
        }
        out.push('\n');
    }
    out
}

/// The three Orion grids: small IOPS, large MB/s, small mean latency (us).
pub fn matrix_csvs(m: &MatrixResult) -> [(&'static str, String); 3] {
    [
        (
            "_iops.csv",
            grid(m, |p| (p.small > 0).then_some(p.small_iops)),
        ),
        (
            "_mbps.csv",
            grid(m, |p| (p.large > 0).then_some(p.large_mbps)),
        ),
        (
            "_lat.csv",
            grid(m, |p| (p.small > 0).then_some(p.small_mean_us)),
        ),
    ]
}

fn heat(
    m: &MatrixResult,
    title: &str,
    low_is_good: bool,
    value: impl Fn(&MatrixPoint) -> Option<f64>,
) -> String {
    let cols: Vec<String> = m.small_levels.iter().map(u32::to_string).collect();
    let rows: Vec<String> = m.large_levels.iter().map(u32::to_string).collect();
    let values: Vec<Vec<Option<f64>>> = m
        .large_levels
        .iter()
        .map(|l| {
            m.small_levels
                .iter()
                .map(|s| m.point(*s, *l).and_then(&value))
                .collect()
        })
        .collect();
    heatmap(
        title,
        "small I/Os outstanding",
        "large I/Os outstanding",
        &cols,
        &rows,
        &values,
        low_is_good,
    )
}

/// The matrix as one HTML page with three heatmaps and the points.
pub fn matrix_html(m: &MatrixResult) -> String {
    let mut body = String::new();
    body += &heat(
        m,
        "Small random reads: IOPS (darker is better)",
        false,
        |p| (p.small > 0).then_some(p.small_iops),
    );
    body += &heat(
        m,
        "Small random reads: mean latency, us (darker is better)",
        true,
        |p| (p.small > 0).then_some(p.small_mean_us),
    );
    body += &heat(
        m,
        "Large random reads: MB/s (darker is better)",
        false,
        |p| (p.large > 0).then_some(p.large_mbps),
    );
    body += "<h2>Points</h2>\n";
    body += &points_table(m).html();
    crate::html::page(
        "dbio matrix",
        &headline(m),
        &body,
        env!("CARGO_PKG_VERSION"),
    )
    .replace(
        "<title>dbio matrix</title>",
        &format!("<title>dbio matrix: {}</title>", esc(&m.shape)),
    )
}

/// Which files to write for a matrix: JSON, Markdown, HTML, and the three CSV grids
/// named from a prefix.
#[derive(Clone, Debug, Default)]
pub struct MatrixOutputs {
    pub json: Option<PathBuf>,
    pub csv_prefix: Option<PathBuf>,
    pub md: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

/// The path of one CSV grid: the prefix with the grid's suffix.
pub fn csv_path(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Writes each output asked for (each file whole or not at all).
/// Returns the files written.
pub fn write_matrix(m: &MatrixResult, out: &MatrixOutputs) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Written::default();
    if let Some(p) = &out.json {
        let text =
            serde_json::to_string_pretty(m).map_err(|e| ReportError::Encode(e.to_string()))? + "\n";
        written.write(p, text.as_bytes())?;
    }
    if let Some(prefix) = &out.csv_prefix {
        for (suffix, text) in matrix_csvs(m) {
            written.write(&csv_path(prefix, suffix), text.as_bytes())?;
        }
    }
    if let Some(p) = &out.md {
        written.write(p, matrix_markdown(m).as_bytes())?;
    }
    if let Some(p) = &out.html {
        written.write(p, matrix_html(m).as_bytes())?;
    }
    Ok(written.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> MatrixResult {
        let mut m = MatrixResult {
            kind: "matrix".into(),
            shape: "basic".into(),
            small_bytes: 8192,
            large_bytes: 1 << 20,
            point_s: 2.0,
            small_levels: vec![0, 1, 2],
            large_levels: vec![0, 1],
            ..Default::default()
        };
        for (s, l, iops, mbps) in [(1, 0, 1000.0, 0.0), (2, 0, 1800.0, 0.0), (0, 1, 0.0, 250.0)] {
            m.points.push(MatrixPoint {
                small: s,
                large: l,
                small_iops: iops,
                small_mean_us: 100.0 * s as f64,
                large_mbps: mbps,
                ..Default::default()
            });
        }
        m
    }

    #[test]
    fn orion_grids_have_a_row_per_large_level_and_blank_cells() {
        let [(_, iops), (_, mbps), (_, lat)] = matrix_csvs(&sample());
        assert_eq!(iops, "Large/Small,0,1,2\n0,,1000.00,1800.00\n1,,,\n");
        assert_eq!(mbps, "Large/Small,0,1,2\n0,,,\n1,250.00,,\n");
        assert_eq!(lat, "Large/Small,0,1,2\n0,,100.00,200.00\n1,,,\n");
    }

    #[test]
    fn html_has_three_heatmaps_and_the_headline_names_the_maxima() {
        let m = sample();
        let page = matrix_html(&m);
        assert_eq!(page.matches("<svg").count(), 3);
        let text = matrix_terminal(&m);
        assert!(
            text.contains("max 1,800 IOPS at 2 small + 0 large"),
            "{text}"
        );
        assert!(
            text.contains("max 250.0 MB/s at 1 large + 0 small"),
            "{text}"
        );
        assert!(
            text.contains("of 8 KiB random reads against 1 MiB random reads"),
            "{text}"
        );
        // Each map has its colour scale: ten steps, the ends labelled; the
        // latency map is darker where lower, so its light end is the highest.
        assert_eq!(page.matches("height=\"14\"").count(), 30);
        assert!(page.contains(">1,000</text>") && page.contains(">1,800</text>"));
        assert!(page.contains(">200</text>") && page.contains(">100</text>"));
        // One precision per map: IOPS whole, however small a value.
        assert!(
            !page.contains("1000.00") && !page.contains("250.00"),
            "{page}"
        );
    }
}
