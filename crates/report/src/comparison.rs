//! Renders a [`Comparison`] (`dbio compare`): terminal tables, Markdown, CSV, JSON and one
//! HTML page. Each opens with the verdict per configuration (winner, by how much, with
//! which test), in one convention for every metric ("14.7x better", "worse by 12%",
//! oriented by whether more of the metric is better) and one colour per verdict; then the
//! charts, every figure against the baseline, and the figures per configuration.

use std::fmt::Write;

use dbio_compare::comparison::{Cell, Pair};
use dbio_compare::statistics::Summary;
use dbio_compare::{Comparison, Verdict};

use crate::comparison_charts as charts;
pub use crate::comparison_view::TextStyle;
use crate::comparison_view::{
    self as view, fitted_text, headline_metrics, metric_name, pair_text, short_text, wrap,
};
use crate::fmt::{self, csv_field, html_escape as esc, Table};
use crate::{Outputs, ReportError};

/// The metrics the detail tables show (all of them go to CSV and JSON): throughput, CPU,
/// and per I/O class the mean and 99th percentile latency.
fn shown(metric: &str) -> bool {
    !metric.contains(' ') || metric.ends_with(" mean_us") || metric.ends_with(" p99_us")
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

fn cell<'a>(c: &'a Comparison, config: &str, load: u32, metric: &str) -> Option<&'a Cell> {
    c.cells
        .iter()
        .find(|x| x.config == config && x.load == load && x.metric == metric)
}

fn pair<'a>(c: &'a Comparison, config: &str, load: u32, metric: &str) -> Option<&'a Pair> {
    c.pairs
        .iter()
        .find(|p| p.config == config && p.load == load && p.metric == metric)
}

/// A table and the verdict of each of its cells that has one (for colour).
struct Painted {
    table: Table,
    verdicts: Vec<Vec<Option<Verdict>>>,
    /// Columns repeated when the table is split to fit a width.
    keep: usize,
}

impl Painted {
    fn verdict(&self, row: usize, col: usize) -> Option<Verdict> {
        self.verdicts.get(row)?.get(col).copied().flatten()
    }

    fn text(&self, style: TextStyle) -> String {
        fitted_text(&self.table, self.keep, style, &|r, c| self.verdict(r, c))
    }

    /// An HTML table, verdict cells classed by verdict, in a box that scrolls sideways
    /// rather than running past the page.
    fn html(&self) -> String {
        let t = &self.table;
        let num = |i: usize| matches!(t.align.get(i), Some(fmt::Align::Right));
        let mut out = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
        for (i, h) in t.headers.iter().enumerate() {
            let _ = write!(
                out,
                "<th{}>{}</th>",
                if num(i) { " class=\"num\"" } else { "" },
                esc(h)
            );
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for (r, row) in t.rows.iter().enumerate() {
            out.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                let mut class: Vec<&str> = Vec::new();
                if num(i) {
                    class.push("num");
                }
                if let Some(v) = self.verdict(r, i) {
                    class.push(view::css(v));
                }
                let class = if class.is_empty() {
                    String::new()
                } else {
                    format!(" class=\"{}\"", class.join(" "))
                };
                let _ = write!(out, "<td{class}>{}</td>", esc(c));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table></div>\n");
        out
    }
}

/// The verdict table of one configuration against the baseline: a row per headline
/// metric; at a single load the verdict, its interval, p and test, at several loads one
/// column per load.
fn verdict_table(c: &Comparison, config: &str) -> Painted {
    let metrics = headline_metrics(c);
    let mut verdicts = Vec::new();
    let table = if let [load] = c.loads[..] {
        let mut t = Table::new(&[
            "<metric",
            "<verdict",
            "<95% interval",
            "p",
            "<test",
            &c.baseline,
            config,
        ]);
        for m in metrics {
            let Some(p) = pair(c, config, load, m) else {
                continue;
            };
            let mean =
                |config: &str| cell(c, config, load, m).map_or("-".into(), |x| mean_sd(&x.summary));
            t.row(vec![
                metric_name(m),
                short_text(p),
                view::interval_text(p),
                view::p_text(p.p_value),
                view::test_text(p),
                mean(&c.baseline),
                mean(config),
            ]);
            verdicts.push(vec![None, Some(p.verdict)]);
        }
        t
    } else {
        let heads: Vec<String> = std::iter::once("<metric".to_string())
            .chain(c.loads.iter().map(|l| format!("<{l} users")))
            .collect();
        let refs: Vec<&str> = heads.iter().map(String::as_str).collect();
        let mut t = Table::new(&refs);
        for m in metrics {
            let ps: Vec<Option<&Pair>> = c.loads.iter().map(|&l| pair(c, config, l, m)).collect();
            if ps.iter().all(Option::is_none) {
                continue;
            }
            let mut row = vec![metric_name(m)];
            row.extend(ps.iter().map(|p| p.map_or("-".into(), short_text)));
            t.row(row);
            let mut v = vec![None];
            v.extend(ps.iter().map(|p| p.map(|p| p.verdict)));
            verdicts.push(v);
        }
        t
    };
    Painted {
        table,
        verdicts,
        keep: 1,
    }
}

/// "q8 against q1: IOPS 14.7x better (p <0.001, Welch*); redo-write latency: within
/// noise (p 0.41, Welch)" at the highest load the configuration was measured at.
fn verdict_line(c: &Comparison, config: &str) -> Option<(String, Vec<(String, Verdict)>)> {
    let load = *c
        .loads
        .iter()
        .rev()
        .find(|&&l| c.pairs.iter().any(|p| p.config == config && p.load == l))?;
    let at = if c.loads.len() > 1 {
        format!(" at {load} users")
    } else {
        String::new()
    };
    let parts = headline_metrics(c)
        .into_iter()
        .filter_map(|m| {
            let p = pair(c, config, load, m)?;
            let text = match p.verdict {
                // The p and the test, so that a difference left in the noise can be
                // told from one no test could judge.
                Verdict::WithinNoise => format!(
                    "{}: within noise (p {}, {})",
                    metric_name(m),
                    view::p_text(p.p_value),
                    view::test_text(p)
                ),
                _ => format!("{} {}", metric_name(m), pair_text(p)),
            };
            Some((text, p.verdict))
        })
        .collect();
    Some((format!("{config} against {}{at}: ", c.baseline), parts))
}

/// The notes the verdicts need: the assumption of a test, unequal repeats.
fn notes(c: &Comparison) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for p in &c.pairs {
        if let Some(n) = p.test_note.as_deref().filter(|n| n.starts_with("assumes")) {
            let test = if p.paired {
                "The paired t-test"
            } else {
                "Welch's t-test"
            };
            add(format!("* {test} {n}."));
        }
    }
    for p in &c.pairs {
        if let Some(n) = &p.note {
            add(format!("{} at {} users: {n}.", p.config, p.load));
        }
    }
    out
}

/// Every shown metric of every configuration against the baseline.
fn pairs_table(c: &Comparison) -> Painted {
    let mut t = Table::new(&[
        "users",
        "<config",
        "<metric",
        "<verdict",
        "<95% interval",
        "p",
        "<test",
        "baseline",
        "other",
    ]);
    let mut verdicts = Vec::new();
    for p in c.pairs.iter().filter(|p| shown(&p.metric)) {
        let mean = |config: &str| {
            cell(c, config, p.load, &p.metric).map_or("-".into(), |x| number(x.summary.mean))
        };
        t.row(vec![
            p.load.to_string(),
            p.config.clone(),
            metric_name(&p.metric),
            short_text(p),
            view::interval_text(p),
            view::p_text(p.p_value),
            view::test_text(p),
            mean(&c.baseline),
            mean(&p.config),
        ]);
        verdicts.push(vec![None, None, None, Some(p.verdict)]);
    }
    Painted {
        table: t,
        verdicts,
        keep: 3,
    }
}

/// Per load and metric, each configuration's mean ± sd over its repeats: configurations
/// as columns, so that many metrics never make the table wider.
fn figures_table(c: &Comparison) -> Painted {
    let heads: Vec<String> = ["users".to_string(), "<metric".to_string()]
        .into_iter()
        .chain(c.configs.iter().cloned())
        .collect();
    let refs: Vec<&str> = heads.iter().map(String::as_str).collect();
    let mut t = Table::new(&refs);
    for &load in &c.loads {
        let runs: Vec<String> = c
            .configs
            .iter()
            .map(|config| {
                c.cells
                    .iter()
                    .filter(|x| x.config == *config && x.load == load)
                    .map(|x| x.summary.n)
                    .max()
                    .map_or("-".into(), |n| n.to_string())
            })
            .collect();
        let mut row = vec![load.to_string(), "runs".to_string()];
        row.extend(runs);
        t.row(row);
        for m in c.metrics.iter().filter(|m| shown(m)) {
            let mut row = vec![load.to_string(), metric_name(m)];
            row.extend(c.configs.iter().map(|config| {
                cell(c, config, load, m).map_or("-".into(), |x| mean_sd(&x.summary))
            }));
            t.row(row);
        }
    }
    Painted {
        table: t,
        verdicts: Vec::new(),
        keep: 2,
    }
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

const CONVENTION: &str = "Each figure against the baseline, oriented by the metric: more \
    throughput is better, less latency or CPU is better. \"2.9x worse\" from twice on, else \
    \"better by 12%\". The repeats of a sweep ran interleaved, so they are tested as pairs: \
    drift moves both runs of a repeat alike and drops out of their ratio; the size is the \
    geometric mean of the per-repeat ratios (paired t on their logarithms) or their \
    Hodges-Lehmann estimate (Wilcoxon's signed-rank test), with that test's 95% interval. \
    Other runs are independent samples: the size is the change of the mean against the \
    baseline's, tested by Welch's test on the logarithms of the figures (its 95% interval a \
    ratio of geometric means) or the Mann-Whitney U test. A difference the test cannot tell \
    from the noise of the repeats is \"within noise\"; a single run on a side cannot be \
    tested (marked ?).";

fn class_text(c: &Comparison) -> Option<String> {
    let class = c.class.as_deref()?;
    Some(format!(
        "Latency charted: {class} ({}); --class chooses another.",
        c.class_reason.as_deref().unwrap_or("")
    ))
}

/// The comparison as terminal text, fitted to `style.width`.
pub fn comparison_terminal(c: &Comparison, style: TextStyle) -> String {
    let w = style.width.max(40);
    let mut out = wrap(&format!("dbio compare: {}", headline(c)), w, 2);
    for warning in &c.warnings {
        out.push_str(&wrap(&format!("warning: {warning}"), w, 2));
    }
    let _ = write!(out, "\nVerdict against {}:\n", c.baseline);
    for config in &c.configs[1..] {
        if let Some((lead, parts)) = verdict_line(c, config) {
            let texts: Vec<String> = parts.iter().map(|p| p.0.clone()).collect();
            let line = wrap(&format!("{lead}{}", texts.join("; ")), w - 2, 4);
            for l in line.lines() {
                let _ = writeln!(out, "  {l}");
            }
        }
        out.push_str(&verdict_table(c, config).text(style));
        out.push('\n');
    }
    for n in notes(c).into_iter().chain(class_text(c)) {
        out.push_str(&wrap(&n, w, 2));
    }
    let _ = write!(out, "\nEvery figure against {}:\n", c.baseline);
    out.push_str(&pairs_table(c).text(style));
    out.push_str("\nPer configuration, mean ± standard deviation over repeats:\n");
    out.push_str(&figures_table(c).text(style));
    out.push('\n');
    out.push_str(&wrap(CONVENTION, w, 0));
    out
}

/// The comparison as Markdown.
pub fn comparison_markdown(c: &Comparison) -> String {
    let md = fmt::md_escape;
    let mut out = format!("# dbio comparison\n\n{}\n\n", md(&headline(c)));
    for warning in &c.warnings {
        let _ = writeln!(out, "> **Warning:** {}\n", md(warning));
    }
    let _ = write!(out, "## Verdict against {}\n\n", md(&c.baseline));
    for config in &c.configs[1..] {
        if let Some((lead, parts)) = verdict_line(c, config) {
            let texts: Vec<String> = parts
                .iter()
                .map(|(t, v)| match v {
                    Verdict::Better | Verdict::Worse => format!("**{}**", md(t)),
                    _ => md(t),
                })
                .collect();
            let _ = write!(out, "{}{}\n\n", md(&lead), texts.join("; "));
        }
        out.push_str(&verdict_table(c, config).table.markdown());
        out.push('\n');
    }
    for n in notes(c).into_iter().chain(class_text(c)) {
        let _ = write!(out, "{}\n\n", md(&n));
    }
    let _ = write!(
        out,
        "## Every figure against {}\n\n{}\n\n",
        md(&c.baseline),
        md(CONVENTION)
    );
    out.push_str(&pairs_table(c).table.markdown());
    out.push_str("\n## Per configuration\n\nMean ± standard deviation over repeats.\n\n");
    out.push_str(&figures_table(c).table.markdown());
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
         ratio_mean,welch_p,mann_whitney_p,test,p,verdict,\
         effect_ratio,change_pct,change_ci95_low,change_ci95_high,factor,test_note,note,\
         wilcoxon_p,paired_t_p\n",
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
        f.extend(vec![String::new(); 22]);
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
        let e = p.effect.as_ref();
        let ci = e.and_then(|e| e.change_ci95);
        let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        f.extend([
            num(e.map(|e| e.ratio)),
            num(e.map(|e| e.change_pct)),
            num(ci.map(|c| c[0])),
            num(ci.map(|c| c[1])),
            num(e.map(|e| e.factor)),
            p.test_note.clone().unwrap_or_default(),
            p.note.clone().unwrap_or_default(),
            num(p.wilcoxon.map(|t| t.p_value)),
            num(p.paired_t.map(|t| t.p_value)),
        ]);
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

/// Colours of the verdicts in the page's tables (the charts use the same).
fn verdict_style() -> String {
    format!(
        "<style>\
         .scroll{{overflow-x:auto;max-width:100%}}\
         td.better{{background:#e6f4e7;color:{b};font-weight:600}}\
         td.worse{{background:#fbe9e9;color:{w};font-weight:600}}\
         td.noise{{color:#5c6770}}\
         td.untested{{color:#8a939b;font-style:italic}}\
         .verdict{{font-size:15px;margin:8px 0 6px;line-height:1.5}}\
         .verdict .better{{color:{b};font-weight:600}}\
         .verdict .worse{{color:{w};font-weight:600}}\
         .verdict .noise{{color:#5c6770}}\
         .verdict .untested{{color:#8a939b}}\
         p.note{{font-size:13px;color:#3c4650;margin:4px 0}}\
         </style>\n",
        b = view::BETTER,
        w = view::WORSE
    )
}

/// The comparison as one self-contained HTML page, opening with the verdicts.
pub fn comparison_html(c: &Comparison) -> String {
    let mut body = verdict_style();
    for warning in &c.warnings {
        let _ = writeln!(body, "<div class=\"banner\">{}</div>", esc(warning));
    }
    let _ = writeln!(body, "<h2>Verdict against {}</h2>", esc(&c.baseline));
    for config in &c.configs[1..] {
        if let Some((lead, parts)) = verdict_line(c, config) {
            let spans: Vec<String> = parts
                .iter()
                .map(|(t, v)| format!("<span class=\"{}\">{}</span>", view::css(*v), esc(t)))
                .collect();
            let _ = writeln!(
                body,
                "<p class=\"verdict\"><b>{}</b>{}</p>",
                esc(&lead),
                spans.join("; ")
            );
        }
        body.push_str(&verdict_table(c, config).html());
    }
    for n in notes(c).into_iter().chain(class_text(c)) {
        let _ = writeln!(body, "<p class=\"note\">{}</p>", esc(&n));
    }
    let _ = writeln!(body, "<p class=\"sub\">{}</p>", esc(CONVENTION));
    body.push_str("<h2>Charts</h2>\n");
    let metrics = [
        charts::chart_throughput(c).map(str::to_string),
        charts::chart_latency(c),
    ];
    for m in metrics.iter().flatten() {
        if let Some(svg) = charts::factor_chart(c, m) {
            body.push_str(&svg);
        }
    }
    if let Some(svg) = charts::curves(c) {
        body.push_str(&svg);
    }
    if let Some(svg) = charts::histogram_chart(c) {
        body.push_str(&svg);
    }
    let _ = writeln!(body, "<h2>Every figure against {}</h2>", esc(&c.baseline));
    body.push_str(&pairs_table(c).html());
    body.push_str(
        "<h2>Per configuration</h2>\n<p class=\"sub\">Mean ± standard deviation over repeats.</p>\n",
    );
    body.push_str(&figures_table(c).html());
    if let Some((note, t)) = crate::comparison_nfs::table(c) {
        body.push_str("<h2>NFS views per configuration</h2>\n");
        let _ = writeln!(body, "<p class=\"sub\">{}</p>", esc(note));
        body.push_str(&t.html());
    }
    let count = |v: Verdict| {
        c.pairs
            .iter()
            .filter(|p| shown(&p.metric) && p.verdict == v)
            .count()
    };
    let sub = format!(
        "{} · {} figures better, {} worse, {} within noise, {} untested",
        headline(c),
        count(Verdict::Better),
        count(Verdict::Worse),
        count(Verdict::WithinNoise),
        count(Verdict::TooFewRepeats),
    );
    crate::html::page("dbio comparison", &sub, &body, env!("CARGO_PKG_VERSION"))
}

/// Writes each output asked for (each file whole or not at all); the files written,
/// in order.
pub fn write_comparison(
    c: &Comparison,
    outputs: &Outputs,
) -> Result<Vec<std::path::PathBuf>, ReportError> {
    let mut written = crate::Written::default();
    if let Some(p) = &outputs.json {
        written.write(p, comparison_json(c)?.as_bytes())?;
    }
    if let Some(p) = &outputs.csv {
        written.write(p, comparison_csv(c).as_bytes())?;
    }
    if let Some(p) = &outputs.md {
        written.write(p, comparison_markdown(c).as_bytes())?;
    }
    if let Some(p) = &outputs.html {
        written.write(p, comparison_html(c).as_bytes())?;
    }
    Ok(written.0)
}

#[cfg(test)]
#[path = "comparison_tests.rs"]
mod tests;
