//! Renders a [`Comparison`] (`dbio compare`): terminal tables, Markdown, CSV, JSON and one
//! HTML page with the latency-against-throughput curves, the impact per user load with
//! its confidence interval, and two configurations' latency histograms overlaid.

use std::fmt::Write;

use dbio_compare::comparison::{Cell, Histogram, Pair};
use dbio_compare::statistics::Summary;
use dbio_compare::{Comparison, Verdict};

use crate::fmt::{self, csv_field, html_escape as esc, Table};
use crate::svg::{grouped_bars, line_chart, BarSeries, Line, LineChart, PALETTE};
use crate::{write_atomic, Outputs, ReportError};

/// The metrics the tables show (all of them go to CSV and JSON): throughput, CPU, and per
/// I/O class the mean and 99th percentile latency.
fn shown(metric: &str) -> bool {
    !metric.contains(' ') || metric.ends_with(" mean_us") || metric.ends_with(" p99_us")
}

/// A metric's name as a column heading: "single-block-read mean_us" -> "single-block-read mean us".
fn heading(metric: &str) -> String {
    match metric {
        "iops" => "IOPS".into(),
        "mbps" => "MB/s".into(),
        "cpu_us_per_io" => "CPU us/IO".into(),
        m => m
            .replace("_us", " us")
            .replace("_iops", " IOPS")
            .replace("_mbps", " MB/s")
            .replace('_', " "),
    }
}

fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        fmt::whole(v)
    } else {
        format!("{v:.2}")
    }
}

fn mean_sd(s: &Summary) -> String {
    if s.n > 1 {
        format!("{} ± {}", number(s.mean), number(s.sd))
    } else {
        number(s.mean)
    }
}

fn impact_text(s: &Summary) -> String {
    if s.n > 1 {
        format!(
            "{:+.1} ± {:.1} [{:+.1}, {:+.1}]",
            s.mean, s.sd, s.min, s.max
        )
    } else {
        format!("{:+.1}", s.mean)
    }
}

fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
        None => "-".into(),
    }
}

fn cell<'a>(c: &'a Comparison, config: &str, load: u32, metric: &str) -> Option<&'a Cell> {
    c.cells
        .iter()
        .find(|x| x.config == config && x.load == load && x.metric == metric)
}

/// Per configuration and load: runs and the mean ± sd of each metric shown.
fn figures_table(c: &Comparison) -> Table {
    let metrics: Vec<&String> = c.metrics.iter().filter(|m| shown(m)).collect();
    let mut headers = vec!["users".to_string(), "<config".into(), "runs".into()];
    headers.extend(metrics.iter().map(|m| heading(m)));
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    for &load in &c.loads {
        for config in &c.configs {
            let cells: Vec<Option<&Cell>> =
                metrics.iter().map(|m| cell(c, config, load, m)).collect();
            let Some(runs) = cells.iter().flatten().map(|x| x.summary.n).max() else {
                continue;
            };
            let mut row = vec![load.to_string(), config.clone(), runs.to_string()];
            row.extend(
                cells
                    .iter()
                    .map(|x| x.map_or("-".into(), |x| mean_sd(&x.summary))),
            );
            t.row(row);
        }
    }
    t
}

/// Every shown metric of every configuration against the baseline.
fn pairs_table(c: &Comparison) -> Table {
    let mut t = Table::new(&[
        "users",
        "<config",
        "<metric",
        "baseline",
        "other",
        "impact % (mean ± sd [min, max])",
        "ratio",
        "p",
        "<test",
        "<verdict",
    ]);
    for p in c.pairs.iter().filter(|p| shown(&p.metric)) {
        let mean = |config: &str| {
            cell(c, config, p.load, &p.metric).map_or("-".into(), |x| number(x.summary.mean))
        };
        t.row(vec![
            p.load.to_string(),
            p.config.clone(),
            heading(&p.metric),
            mean(&c.baseline),
            mean(&p.config),
            p.impact_pct.as_ref().map_or("-".into(), impact_text),
            p.ratio
                .as_ref()
                .map_or("-".into(), |r| format!("{:.3}x", r.mean)),
            p_text(p.p_value),
            p.test.clone(),
            p.verdict.text().into(),
        ]);
    }
    t
}

fn headline(c: &Comparison) -> String {
    let loads: Vec<String> = c.loads.iter().map(u32::to_string).collect();
    format!(
        "{} configurations ({}), baseline {}; user loads {}; {} runs; significance level {}%",
        c.configs.len(),
        c.configs.join(", "),
        c.baseline,
        loads.join(", "),
        c.observations,
        c.alpha * 100.0
    )
}

const IMPACT_NOTE: &str = "impact % = 100 x (baseline - other) / baseline per repeat: positive means the \
     other configuration has less (lower latency, or lower throughput); the verdict says which is better \
     and calls a difference the test cannot tell from the repeats' noise \"within noise\".";

/// The comparison as terminal text.
pub fn comparison_terminal(c: &Comparison) -> String {
    let mut out = format!(
        "dbio compare: {}\n\nPer configuration, mean ± standard deviation over repeats:\n",
        headline(c)
    );
    out.push_str(&figures_table(c).text("  "));
    let _ = write!(out, "\nAgainst {}: {IMPACT_NOTE}\n", c.baseline);
    out.push_str(&pairs_table(c).text("  "));
    out
}

/// The comparison as Markdown.
pub fn comparison_markdown(c: &Comparison) -> String {
    let mut out = format!(
        "# dbio comparison\n\n{}\n\n## Per configuration\n\nMean ± standard deviation over repeats.\n\n",
        fmt::md_escape(&headline(c))
    );
    out.push_str(&figures_table(c).markdown());
    let _ = write!(
        out,
        "\n## Against {}\n\n{}\n\n",
        fmt::md_escape(&c.baseline),
        fmt::md_escape(IMPACT_NOTE)
    );
    out.push_str(&pairs_table(c).markdown());
    out
}

fn summary_fields(s: Option<&Summary>) -> [String; 7] {
    let f = |v: f64| format!("{v}");
    match s {
        Some(s) => [
            s.n.to_string(),
            f(s.mean),
            f(s.sd),
            f(s.min),
            f(s.max),
            s.ci95.map_or(String::new(), |c| f(c[0])),
            s.ci95.map_or(String::new(), |c| f(c[1])),
        ],
        None => Default::default(),
    }
}

/// The comparison as CSV: one row per figure (configuration, load, metric over repeats)
/// and one per pair against the baseline.
pub fn comparison_csv(c: &Comparison) -> String {
    let mut out = String::from(
        "row,config,users,metric,n,mean,sd,min,max,ci95_low,ci95_high,\
         impact_n,impact_mean,impact_sd,impact_min,impact_max,impact_ci95_low,impact_ci95_high,\
         ratio_mean,welch_p,mann_whitney_p,test,p,verdict\n",
    );
    let line = |out: &mut String, fields: Vec<String>| {
        let f: Vec<String> = fields.iter().map(|x| csv_field(x)).collect();
        out.push_str(&f.join(","));
        out.push('\n');
    };
    for x in &c.cells {
        let mut f = vec![
            "figure".into(),
            x.config.clone(),
            x.load.to_string(),
            x.metric.clone(),
        ];
        f.extend(summary_fields(Some(&x.summary)));
        f.extend(vec![String::new(); 13]);
        line(&mut out, f);
    }
    for p in &c.pairs {
        let mut f = vec![
            "pair".into(),
            p.config.clone(),
            p.load.to_string(),
            p.metric.clone(),
        ];
        f.extend(summary_fields(None));
        f.extend(summary_fields(p.impact_pct.as_ref()));
        f.push(
            p.ratio
                .as_ref()
                .map_or(String::new(), |r| r.mean.to_string()),
        );
        f.push(p.welch.map_or(String::new(), |t| t.p_value.to_string()));
        f.push(
            p.mann_whitney
                .map_or(String::new(), |t| t.p_value.to_string()),
        );
        f.push(p.test.clone());
        f.push(p.p_value.map_or(String::new(), |v| v.to_string()));
        f.push(p.verdict.text().into());
        line(&mut out, f);
    }
    out
}

/// The comparison as pretty-printed JSON (the schema of dbio-compare), with a final newline.
pub fn comparison_json(c: &Comparison) -> Result<String, ReportError> {
    serde_json::to_string_pretty(c)
        .map(|s| s + "\n")
        .map_err(|e| ReportError::Encode(e.to_string()))
}

/// The latency the charts plot: the first per-class mean latency, else calibrate's.
fn main_latency(c: &Comparison) -> Option<&str> {
    c.metrics
        .iter()
        .find(|m| m.ends_with(" mean_us"))
        .or_else(|| c.metrics.iter().find(|m| *m == "latency_us"))
        .map(String::as_str)
}

fn main_throughput(c: &Comparison) -> Option<&str> {
    ["iops", "max_iops"]
        .into_iter()
        .find(|m| c.metrics.iter().any(|x| x == m))
}

fn curves(c: &Comparison) -> Option<String> {
    let (lat, thr) = (main_latency(c)?, main_throughput(c)?);
    let lines = c
        .configs
        .iter()
        .enumerate()
        .map(|(i, config)| {
            let pts: Vec<(f64, f64, u32)> = c
                .loads
                .iter()
                .filter_map(|&l| {
                    Some((
                        cell(c, config, l, thr)?.summary.mean,
                        cell(c, config, l, lat)?.summary.mean,
                        l,
                    ))
                })
                .collect();
            Line {
                name: config.clone(),
                color: PALETTE[i % PALETTE.len()],
                points: pts.iter().map(|p| (p.0, p.1)).collect(),
                labels: pts.iter().map(|p| format!("{}u", p.2)).collect(),
                markers: true,
                dashed: i > 0 && i >= PALETTE.len(),
            }
        })
        .collect();
    Some(line_chart(&LineChart {
        title: format!(
            "{} against {} per configuration (labels: users)",
            heading(lat),
            heading(thr)
        ),
        x_label: heading(thr),
        y_label: heading(lat),
        lines,
        reference: None,
        highlight: None,
    }))
}

fn impact_chart(c: &Comparison, metric: &str) -> Option<String> {
    let pair = |config: &str, load: u32| -> Option<&Pair> {
        c.pairs
            .iter()
            .find(|p| p.config == config && p.load == load && p.metric == metric)
    };
    let series: Vec<BarSeries> = c.configs[1..]
        .iter()
        .enumerate()
        .map(|(i, config)| BarSeries {
            name: config.clone(),
            color: PALETTE[(i + 1) % PALETTE.len()],
            values: c
                .loads
                .iter()
                .map(|&l| {
                    let s = pair(config, l)?.impact_pct.as_ref()?;
                    Some((s.mean, s.ci95.map(|[a, b]| (a, b))))
                })
                .collect(),
        })
        .collect();
    if series.iter().all(|s| s.values.iter().all(Option::is_none)) {
        return None;
    }
    let groups: Vec<String> = c.loads.iter().map(|l| format!("{l} users")).collect();
    Some(grouped_bars(
        &format!(
            "Impact on {} against {} (mean and 95% interval over repeats)",
            heading(metric),
            c.baseline
        ),
        "user load",
        "impact %",
        &groups,
        &series,
    ))
}

/// The baseline's and the first other configuration's histograms at the highest load
/// both have, as shares of their I/Os.
fn histogram_chart(c: &Comparison) -> Option<String> {
    let class = main_latency(c)?.strip_suffix(" mean_us")?;
    let other = c.configs.get(1)?;
    let find = |config: &str, load: u32| -> Option<&Histogram> {
        c.histograms
            .iter()
            .find(|h| h.config == config && h.load == load && h.class == class)
    };
    let load = c
        .loads
        .iter()
        .rev()
        .find(|&&l| find(&c.baseline, l).is_some() && find(other, l).is_some())?;
    let hs = [find(&c.baseline, *load)?, find(other, *load)?];
    let mut uppers: Vec<u64> = hs
        .iter()
        .flat_map(|h| h.buckets.iter().map(|b| b.1))
        .collect();
    uppers.sort_unstable();
    uppers.dedup();
    let groups: Vec<String> = uppers
        .iter()
        .map(|u| format!("<{}", fmt::us_short(*u)))
        .collect();
    let series = hs
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let total: u64 = h.buckets.iter().map(|b| b.2).sum::<u64>().max(1);
            BarSeries {
                name: h.config.clone(),
                color: PALETTE[i],
                values: uppers
                    .iter()
                    .map(|u| {
                        let n: u64 = h.buckets.iter().filter(|b| b.1 == *u).map(|b| b.2).sum();
                        Some((n as f64 * 100.0 / total as f64, None))
                    })
                    .collect(),
            }
        })
        .collect::<Vec<_>>();
    Some(grouped_bars(
        &format!(
            "{class} latency at {load} users: {} and {other}",
            c.baseline
        ),
        "latency",
        "% of I/Os",
        &groups,
        &series,
    ))
}

/// The comparison as one self-contained HTML page.
pub fn comparison_html(c: &Comparison) -> String {
    let mut body = String::new();
    body.push_str("<h2>Latency and throughput</h2>\n");
    if let Some(svg) = curves(c) {
        body.push_str(&svg);
    }
    let _ = write!(
        body,
        "<h2>Against {}</h2>\n<p class=\"sub\">{}</p>\n",
        esc(&c.baseline),
        esc(IMPACT_NOTE)
    );
    for metric in [main_latency(c), main_throughput(c)].into_iter().flatten() {
        if let Some(svg) = impact_chart(c, metric) {
            body.push_str(&svg);
        }
    }
    body.push_str(&pairs_table(c).html());
    if let Some(svg) = histogram_chart(c) {
        let _ = write!(body, "<h2>Latency histograms</h2>\n{svg}");
    }
    body.push_str("<h2>Per configuration</h2>\n<p class=\"sub\">Mean ± standard deviation over repeats.</p>\n");
    body.push_str(&figures_table(c).html());
    let worse = c
        .pairs
        .iter()
        .filter(|p| shown(&p.metric) && p.verdict == Verdict::Worse)
        .count();
    let better = c
        .pairs
        .iter()
        .filter(|p| shown(&p.metric) && p.verdict == Verdict::Better)
        .count();
    let sub = format!(
        "{} · {better} figures better and {worse} worse than {} at {}%",
        headline(c),
        c.baseline,
        c.alpha * 100.0
    );
    crate::html::page("dbio comparison", &sub, &body, env!("CARGO_PKG_VERSION"))
}

/// Writes each output asked for (each file whole or not at all).
pub fn write_comparison(c: &Comparison, outputs: &Outputs) -> Result<(), ReportError> {
    if let Some(p) = &outputs.json {
        write_atomic(p, comparison_json(c)?.as_bytes())?;
    }
    if let Some(p) = &outputs.csv {
        write_atomic(p, comparison_csv(c).as_bytes())?;
    }
    if let Some(p) = &outputs.md {
        write_atomic(p, comparison_markdown(c).as_bytes())?;
    }
    if let Some(p) = &outputs.html {
        write_atomic(p, comparison_html(c).as_bytes())?;
    }
    Ok(())
}
