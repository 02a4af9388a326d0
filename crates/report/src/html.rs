//! One self-contained HTML page: inline CSS, inline SVG charts, no scripts
//! and no external resources. Every string from the result is escaped.

use std::fmt::Write;

use dbio_stats::{CalibrateResult, CurvePoint, HistogramBucket, RunResult};

use crate::fmt::{self, html_escape as esc, Table};
use crate::markdown::{
    calibrate_summary, coarsen, file_table, histogram_table, run_summary, series_table, top_events,
};
use crate::svg::{bar_chart, line_chart, Bar, Line, LineChart, PALETTE};
use crate::terminal::{best_point, class_table, curve_table};
use crate::AnyResult;

/// Most points a time-series chart draws; longer runs are averaged into windows.
const SERIES_POINTS: usize = 600;

const STYLE: &str = "
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1d2329;background:#f5f6f8;margin:0}
main{max-width:1060px;margin:0 auto;padding:20px 28px 40px;background:#fff;min-height:100vh}
h1{font-size:24px;margin:8px 0 2px}
h2{font-size:18px;margin:30px 0 10px;padding-bottom:4px;border-bottom:2px solid #1f5fa8;color:#1f3b5c}
h3{font-size:15px;margin:18px 0 6px}
p.sub{color:#5c6770;margin:0 0 14px;font-size:13px}
.banner{background:#fde8e8;border:1px solid #d1495b;color:#8a1c2b;padding:8px 12px;font-weight:600;margin:10px 0;border-radius:4px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}
.card{flex:1 1 180px;border:1px solid #d8dde3;border-radius:6px;padding:10px 14px;background:#fafbfc}
.card .v{font-size:26px;font-weight:600;color:#1f5fa8;font-variant-numeric:tabular-nums}
.card .k{font-size:12px;color:#5c6770;text-transform:uppercase;letter-spacing:.04em}
.card .d{font-size:12px;color:#5c6770}
table{border-collapse:collapse;font-size:13px;margin:6px 0 10px}
th,td{padding:4px 10px;border-bottom:1px solid #e3e7eb;text-align:left;white-space:nowrap}
th{background:#eef2f6;font-weight:600}
tbody tr:nth-child(even){background:#f9fafb}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
table.wrap-last{width:100%}
table.wrap-last td:last-child{white-space:normal;overflow-wrap:anywhere;font-size:12px;color:#3c4650}
.kv td:first-child{color:#5c6770}
svg.chart{width:100%;max-width:1000px;height:auto;display:block;margin:8px 0 4px;font-family:inherit}
svg .ct{font-size:14px;font-weight:600;fill:#1d2329}
svg .al{font-size:12px;fill:#3c4650}
svg .tk{font-size:11px;fill:#3c4650}
svg .pl{font-size:10px;fill:#3c4650}
svg .grid{stroke:#e3e7eb;stroke-width:1}
svg .axis{stroke:#8a949e;stroke-width:1}
svg .ref{stroke:#d1495b;stroke-width:1.5;stroke-dasharray:4 3}
svg .hl{fill:none;stroke:#d1495b;stroke-width:2}
svg .hlt{font-size:12px;font-weight:600;fill:#d1495b}
details{margin:6px 0 12px}
summary{cursor:pointer;color:#1f5fa8;font-size:13px}
footer{margin-top:36px;color:#8a949e;font-size:12px}
";

/// The whole report as one HTML document.
pub fn html(result: &AnyResult) -> String {
    match result {
        AnyResult::Run(r) => run(r),
        AnyResult::Calibrate(c) => calibrate(c),
    }
}

pub(crate) fn page(title: &str, sub: &str, body: &str, version: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>{t}</h1>\n<p class=\"sub\">{s}</p>\n{body}\
         <footer>Written by dbio {v}. Latencies in microseconds (us); MB = 10^6 bytes.</footer>\n\
         </main>\n</body>\n</html>\n",
        t = esc(title),
        s = esc(sub),
        v = esc(version)
    )
}

fn card(out: &mut String, key: &str, value: &str, detail: &str) {
    let _ = write!(
        out,
        "<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"d\">{}</div></div>",
        esc(key),
        esc(value),
        esc(detail)
    );
}

fn kv_table(rows: &[(&str, String)]) -> String {
    let mut t = Table::new(&["<Item", "<Value"]);
    for (k, v) in rows {
        t.row(vec![k.to_string(), v.clone()]);
    }
    t.html().replacen("<table>", "<table class=\"kv\">", 1)
}

fn details(summary: &str, inner: &str) -> String {
    format!(
        "<details><summary>{}</summary>\n{inner}</details>\n",
        esc(summary)
    )
}

/// Bars for power-of-two buckets, with the empty buckets between the
/// first and last filled in so the x axis stays evenly spaced in log time.
fn histogram_bars(buckets: &[HistogramBucket]) -> Vec<Bar> {
    let index = |b: &HistogramBucket| b.upper_us.max(1).trailing_zeros();
    let (Some(first), Some(last)) = (
        buckets.iter().map(index).min(),
        buckets.iter().map(index).max(),
    ) else {
        return Vec::new();
    };
    let total: u64 = buckets.iter().map(|b| b.count).sum();
    (first..=last)
        .map(|k| {
            let upper = 1u64 << k.min(63);
            let lower = if k == 0 { 0 } else { upper / 2 };
            let count = buckets
                .iter()
                .filter(|b| index(b) == k)
                .map(|b| b.count)
                .sum::<u64>();
            Bar {
                label: format!("<{}", fmt::us_short(upper)),
                value: count as f64,
                tip: format!(
                    "{}: {} I/Os ({:.2}%)",
                    fmt::bucket(lower, upper),
                    fmt::int(count),
                    count as f64 * 100.0 / total.max(1) as f64
                ),
            }
        })
        .collect()
}

fn run(r: &RunResult) -> String {
    let c = &r.config;
    let sub = format!(
        "{} · engine {} · profile {} · {} x {} outstanding · started {}",
        c.target,
        c.engine,
        c.profile,
        fmt::count(c.users as u64, "user"),
        c.outstanding,
        fmt::utc(r.started_unix)
    );
    let mut b = String::new();
    if r.interrupted {
        let why = r.stop_reason.as_deref().unwrap_or("stopped early");
        let _ = writeln!(
            b,
            "<div class=\"banner\">INTERRUPTED ({}): the figures cover the {} s measured.</div>",
            esc(why),
            fmt::secs(r.elapsed_s)
        );
    }
    b.push_str("<div class=\"cards\">");
    card(
        &mut b,
        "IOPS",
        &fmt::whole(r.iops),
        &format!("{} I/Os", fmt::int(r.ios)),
    );
    card(&mut b, "MB/s", &fmt::mbps(r.mbps), "10^6 bytes per second");
    let lat_sum: f64 = r.classes.iter().map(|c| c.mean_us * c.ios as f64).sum();
    let mean = if r.ios > 0 {
        lat_sum / r.ios as f64
    } else {
        0.0
    };
    card(
        &mut b,
        "Mean latency",
        &format!("{} us", fmt::us(mean)),
        "all classes",
    );
    card(
        &mut b,
        "CPU per I/O",
        &format!("{} us", fmt::us(r.cpu_us_per_io)),
        "dbio user + system",
    );
    b.push_str("</div>\n<h2>Summary</h2>\n");
    b.push_str(&kv_table(&run_summary(r)));
    b.push_str("<h2>I/O classes</h2>\n");
    b.push_str(&class_table(r).html());
    b.push_str("<h2>Top wait events by time</h2>\n");
    b.push_str(&top_events(r).html());
    b.push_str("<h2>Latency histograms</h2>\n<p class=\"sub\">Power-of-two buckets in microseconds, as V$EVENT_HISTOGRAM_MICRO. Each bar counts the I/Os faster than its label and at least as fast as the bar before.</p>\n");
    for (i, c) in r.classes.iter().enumerate() {
        let _ = writeln!(
            b,
            "<h3>{} <small>({})</small></h3>",
            esc(&c.wait_event),
            esc(&c.class)
        );
        b.push_str(&bar_chart(
            &format!("{}: I/Os by latency", c.wait_event),
            "latency bucket",
            "I/Os",
            &histogram_bars(&c.histogram),
            PALETTE[i % PALETTE.len()],
        ));
        b.push_str(&details(
            "bucket table",
            &histogram_table(&c.wait_event, &c.histogram).html(),
        ));
    }
    b.push_str("<h2>Time series</h2>\n");
    let pts = coarsen(&r.series, SERIES_POINTS);
    let series_line = |name: &str, color, f: &dyn Fn(&dbio_stats::SecondSample) -> f64| Line {
        name: name.into(),
        color,
        points: pts.iter().map(|s| (s.t_s, f(s))).collect(),
        labels: Vec::new(),
        markers: pts.len() <= 60,
        dashed: false,
    };
    b.push_str(&line_chart(&LineChart {
        title: "I/Os per second".into(),
        x_label: "seconds since start".into(),
        y_label: "IOPS".into(),
        lines: vec![series_line("IOPS", PALETTE[0], &|s| s.iops)],
        reference: None,
        highlight: None,
    }));
    b.push_str(&line_chart(&LineChart {
        title: "Mean latency per second".into(),
        x_label: "seconds since start".into(),
        y_label: "microseconds".into(),
        lines: vec![series_line("mean latency", PALETTE[1], &|s| s.mean_us)],
        reference: None,
        highlight: None,
    }));
    b.push_str(&details(
        "per-second table",
        &series_table(&r.series).html(),
    ));
    b.push_str("<h2>File I/O stats</h2>\n");
    b.push_str(&file_table(r).html());
    for (title, t) in crate::rate_view::tables(r)
        .into_iter()
        .chain(crate::nfs_views::tables(r))
        .chain(crate::verify_view::tables(r))
        .chain(crate::ranks_view::tables(r))
    {
        let _ = writeln!(b, "<h2>{}</h2>", esc(title));
        b.push_str(&if t.rows.is_empty() {
            "<p>none</p>\n".to_string()
        } else {
            t.html()
        });
    }
    b.push_str(&crate::devices_view::html(r));
    page("dbio run report", &sub, &b, &r.dbio_version)
}

fn curve_line(
    name: &str,
    color: &'static str,
    pts: &[CurvePoint],
    f: fn(&CurvePoint) -> (f64, f64),
    dashed: bool,
    labels: bool,
) -> Line {
    Line {
        name: name.into(),
        color,
        points: pts.iter().map(f).collect(),
        labels: if labels {
            pts.iter().map(|p| p.outstanding.to_string()).collect()
        } else {
            Vec::new()
        },
        markers: true,
        dashed,
    }
}

fn calibrate(c: &CalibrateResult) -> String {
    let sub = format!(
        "{} · engine {} · data set {} · latency cap {} us · started {}",
        c.target,
        c.engine,
        fmt::bytes(c.dataset_bytes),
        fmt::us(c.max_latency_us),
        fmt::utc(c.started_unix)
    );
    let mut b = String::new();
    if c.interrupted {
        b.push_str("<div class=\"banner\">INTERRUPTED: the figures come from the points measured so far.</div>\n");
    }
    if let Some(limit) = &c.host_limit {
        let _ = writeln!(b, "<div class=\"banner\">Note: {}.</div>", esc(limit));
    }
    b.push_str("<div class=\"cards\">");
    card(
        &mut b,
        "Max IOPS",
        &fmt::whole(c.max_iops),
        &format!("8 KiB random reads, {} outstanding", c.max_iops_outstanding),
    );
    card(
        &mut b,
        "Latency at max IOPS",
        &format!("{} us", fmt::us(c.latency_us)),
        &format!("mean; p99 {} us", fmt::us(c.latency_p99_us)),
    );
    card(
        &mut b,
        "Max MB/s",
        &fmt::mbps(c.max_mbps),
        &format!("1 MiB reads, {} outstanding", c.max_mbps_outstanding),
    );
    b.push_str("</div>\n<h2>Summary</h2>\n");
    b.push_str(&kv_table(&calibrate_summary(c)));

    let _ = writeln!(
        b,
        "<h2>IOPS ramp: 8 KiB random reads</h2>\n<p class=\"sub\">Latency against IOPS as outstanding I/Os grow (numbers by the points). Ramp stopped: {}.</p>",
        esc(&c.iops_stop)
    );
    let best = best_point(&c.iops_curve, c.max_iops_outstanding);
    // Mean and p99 each on a chart of their own: the p99 is often ten times
    // the mean, and on one scale the mean would lie flat on the axis.
    b.push_str(&line_chart(&LineChart {
        title: "Mean latency against IOPS".into(),
        x_label: "IOPS".into(),
        y_label: "mean latency (us)".into(),
        lines: vec![curve_line(
            "mean",
            PALETTE[0],
            &c.iops_curve,
            |p| (p.iops, p.mean_us),
            false,
            true,
        )],
        reference: Some((
            c.max_latency_us,
            format!("cap {} us", fmt::us(c.max_latency_us)),
        )),
        highlight: best.map(|i| {
            let p = &c.iops_curve[i];
            (
                p.iops,
                p.mean_us,
                format!("max IOPS {}", fmt::whole(p.iops)),
            )
        }),
    }));
    b.push_str(&line_chart(&LineChart {
        title: "p99 latency against IOPS".into(),
        x_label: "IOPS".into(),
        y_label: "p99 latency (us)".into(),
        lines: vec![curve_line(
            "p99",
            PALETTE[1],
            &c.iops_curve,
            |p| (p.iops, p.p99_us),
            false,
            true,
        )],
        reference: None,
        highlight: None,
    }));
    b.push_str(&curve_table(&c.iops_curve, best, true).html());

    let _ = writeln!(
        b,
        "<h2>MB/s ramp: 1 MiB reads</h2>\n<p class=\"sub\">Throughput as outstanding I/Os grow. Ramp stopped: {}.</p>",
        esc(&c.mbps_stop)
    );
    let best = best_point(&c.mbps_curve, c.max_mbps_outstanding);
    b.push_str(&line_chart(&LineChart {
        title: "MB/s against outstanding I/Os".into(),
        x_label: "outstanding I/Os".into(),
        y_label: "MB/s".into(),
        lines: vec![curve_line(
            "MB/s",
            PALETTE[2],
            &c.mbps_curve,
            |p| (f64::from(p.outstanding), p.mbps),
            false,
            false,
        )],
        reference: None,
        highlight: best.map(|i| {
            let p = &c.mbps_curve[i];
            (
                f64::from(p.outstanding),
                p.mbps,
                format!("max MB/s {}", fmt::mbps(p.mbps)),
            )
        }),
    }));
    b.push_str(&line_chart(&LineChart {
        title: "Mean latency against MB/s".into(),
        x_label: "MB/s".into(),
        y_label: "mean latency (us)".into(),
        lines: vec![curve_line(
            "mean",
            PALETTE[0],
            &c.mbps_curve,
            |p| (p.mbps, p.mean_us),
            false,
            true,
        )],
        reference: None,
        highlight: None,
    }));
    b.push_str(&curve_table(&c.mbps_curve, best, false).html());
    b.push_str("<p class=\"sub\">* marks the load level of the headline figure.</p>\n");

    b.push_str("<h2>Latency histogram at max IOPS</h2>\n");
    b.push_str(&bar_chart(
        "8 KiB random reads at max IOPS: I/Os by latency",
        "latency bucket",
        "I/Os",
        &histogram_bars(&c.histogram),
        PALETTE[0],
    ));
    b.push_str(&details(
        "bucket table",
        &histogram_table("8 KiB random read", &c.histogram).html(),
    ));
    if let Some(d) = &c.devices {
        b.push_str(&crate::devices_view::section_html(d));
    }
    page("dbio calibrate report", &sub, &b, &c.dbio_version)
}
