//! Markdown in the shape of an AWR report: summary, top wait events by
//! time, wait event histogram, file I/O statistics, time series.

use dbio_stats::{CalibrateResult, ClassResult, HistogramBucket, RunResult, SecondSample};

use crate::fmt::{self, md_escape, Table};
use crate::terminal::{best_point, class_table, curve_table};
use crate::AnyResult;

/// Most rows a time-series table shows; longer runs are summed into
/// windows of several seconds.
pub(crate) const SERIES_ROWS: usize = 120;

/// Markdown text of the whole report.
pub fn markdown(result: &AnyResult) -> String {
    match result {
        AnyResult::Run(r) => run(r),
        AnyResult::Calibrate(c) => calibrate(c),
    }
}

fn kv(rows: &[(&str, String)]) -> String {
    let mut t = Table::new(&["<Item", "<Value"]);
    for (k, v) in rows {
        t.row(vec![k.to_string(), v.clone()]);
    }
    t.markdown()
}

/// How the I/O reaches the storage: O_DIRECT or the page cache for local
/// files; dbio's NFS client has no cache of its own, so O_DIRECT means
/// nothing there (the server's cache is another matter).
fn io_path(c: &dbio_stats::RunConfig) -> (&'static str, String) {
    if c.engine == "nfs" {
        (
            "Client cache",
            "none (dbio's NFS client sends every I/O to the server)".into(),
        )
    } else if c.direct {
        ("O_DIRECT", "yes (page cache bypassed)".into())
    } else {
        ("O_DIRECT", "no (through the page cache)".into())
    }
}

/// How redo writes were made durable, said only when not O_DSYNC writes to
/// a log opened like the data files.
pub(crate) fn redo_writes(c: &dbio_stats::RunConfig) -> String {
    let flush = match c.redo_flush.as_deref() {
        Some("fdatasync") => "each written, then the log fdatasync'ed",
        Some(other) => other,
        None => "O_DSYNC",
    };
    let path = if c.redo_buffered {
        ", through the page cache"
    } else {
        ""
    };
    format!("{flush}{path}")
}

pub(crate) fn run_summary(r: &RunResult) -> Vec<(&'static str, String)> {
    let c = &r.config;
    let mut rows = vec![
        ("Started", fmt::utc(r.started_unix)),
        ("Elapsed", format!("{} s", fmt::secs(r.elapsed_s))),
        ("Target", c.target.clone()),
        ("Engine", c.engine.clone()),
        ("Profile", c.profile.clone()),
        ("Workloads", c.workloads.join(", ")),
        (
            "Users x outstanding",
            format!("{} x {}", c.users, c.outstanding),
        ),
        ("Block size", fmt::bytes(u64::from(c.block_size))),
        ("Data set", fmt::bytes(c.dataset_bytes)),
        io_path(c),
        (
            "Limit",
            match (c.time_s, c.loops) {
                (Some(t), Some(l)) => {
                    format!("{} s or {} loops per user", fmt::secs(t), fmt::int(l))
                }
                (Some(t), None) => format!("{} s", fmt::secs(t)),
                (None, Some(l)) => format!("{} loops per user", fmt::int(l)),
                (None, None) => "-".into(),
            },
        ),
        (
            "SLOB knobs",
            format!(
                "UPDATE_PCT {}, SCAN_PCT {}, REDO_STRESS {}",
                c.update_pct,
                c.scan_pct,
                if c.redo_stress.is_empty() {
                    "-"
                } else {
                    &c.redo_stress
                }
            ),
        ),
        ("I/Os", fmt::int(r.ios)),
        ("IOPS", fmt::whole(r.iops)),
        ("MB/s", fmt::mbps(r.mbps)),
        ("Failed I/Os", fmt::int(r.failed_ios)),
        (
            "CPU (user + system)",
            format!(
                "{} s + {} s",
                fmt::secs(r.cpu.user_s),
                fmt::secs(r.cpu.system_s)
            ),
        ),
        ("CPU us per I/O", fmt::us(r.cpu_us_per_io)),
        ("dbio version", r.dbio_version.clone()),
    ];
    if c.redo_flush.is_some() || c.redo_buffered {
        let at = rows
            .iter()
            .position(|(k, _)| *k == "I/Os")
            .unwrap_or(rows.len());
        rows.insert(at, ("Redo writes", redo_writes(c)));
    }
    let at = rows.len() - 1;
    rows.splice(at..at, crate::rate_view::summary(r));
    if !r.labels.is_empty() {
        rows.insert(0, ("Labels", fmt::labels(&r.labels)));
    }
    if let Some(cache) = &r.cache {
        rows.push(("Cache", cache.note.clone()));
    }
    if r.interrupted {
        let why = r
            .stop_reason
            .clone()
            .unwrap_or_else(|| "stopped early".into());
        rows.insert(0, ("INTERRUPTED", why));
    }
    rows
}

/// Classes by total wait time, largest first, as AWR's "Top Timed Events".
pub(crate) fn top_events(r: &RunResult) -> Table {
    let mut classes: Vec<&ClassResult> = r.classes.iter().collect();
    let wait_s = |c: &ClassResult| c.mean_us * c.ios as f64 / 1e6;
    classes.sort_by(|a, b| wait_s(b).total_cmp(&wait_s(a)));
    let total: f64 = classes.iter().map(|c| wait_s(c)).sum();
    let mut t = Table::new(&[
        "<Event",
        "<Class",
        "Waits",
        "Total wait time (s)",
        "Avg wait (us)",
        "% of wait time",
    ]);
    for c in classes {
        let pct = if total > 0.0 {
            wait_s(c) / total * 100.0
        } else {
            0.0
        };
        t.row(vec![
            c.wait_event.clone(),
            c.class.clone(),
            fmt::int(c.ios),
            format!("{:.2}", wait_s(c)),
            fmt::us(c.mean_us),
            format!("{pct:.1}"),
        ]);
    }
    t
}

pub(crate) fn histogram_table(label: &str, buckets: &[HistogramBucket]) -> Table {
    let total: u64 = buckets.iter().map(|b| b.count).sum();
    let mut t = Table::new(&["<Event", "<Wait time", "Waits", "% of waits"]);
    for b in buckets {
        t.row(vec![
            label.to_string(),
            fmt::bucket(b.lower_us, b.upper_us),
            fmt::int(b.count),
            format!("{:.2}", b.count as f64 * 100.0 / total.max(1) as f64),
        ]);
    }
    t
}

pub(crate) fn file_table(r: &RunResult) -> Table {
    let mut t = Table::new(&[
        "<File",
        "Size",
        "Reads",
        "Read MB",
        "Avg read (us)",
        "Writes",
        "Write MB",
        "Avg write (us)",
    ]);
    for f in &r.files {
        t.row(vec![
            f.name.clone(),
            fmt::bytes(f.size),
            fmt::int(f.reads),
            fmt::mbps(f.read_bytes as f64 / 1e6),
            fmt::us(f.read_mean_us),
            fmt::int(f.writes),
            fmt::mbps(f.write_bytes as f64 / 1e6),
            fmt::us(f.write_mean_us),
        ]);
    }
    t
}

/// At most `rows` samples: consecutive seconds are summed into equal
/// windows (rates weighted by time, latency by I/Os).
pub(crate) fn coarsen(series: &[SecondSample], rows: usize) -> Vec<SecondSample> {
    if series.len() <= rows || rows == 0 {
        return series.to_vec();
    }
    let per = series.len().div_ceil(rows);
    let mut prev_t = 0.0;
    series
        .chunks(per)
        .map(|w| {
            let mut ios = 0.0;
            let mut mb = 0.0;
            let mut lat = 0.0;
            let mut max = 0.0f64;
            let mut t = prev_t;
            for s in w {
                let span = (s.t_s - t).max(0.0);
                ios += s.iops * span;
                mb += s.mbps * span;
                lat += s.mean_us * s.iops * span;
                max = max.max(s.max_us);
                t = s.t_s;
            }
            let span = t - prev_t;
            prev_t = t;
            SecondSample {
                t_s: t,
                iops: if span > 0.0 { ios / span } else { 0.0 },
                mbps: if span > 0.0 { mb / span } else { 0.0 },
                mean_us: if ios > 0.0 { lat / ios } else { 0.0 },
                max_us: max,
            }
        })
        .collect()
}

pub(crate) fn series_table(series: &[SecondSample]) -> Table {
    let mut t = Table::new(&["t (s)", "IOPS", "MB/s", "Mean (us)", "Max (us)"]);
    for s in coarsen(series, SERIES_ROWS) {
        t.row(vec![
            fmt::secs(s.t_s),
            fmt::whole(s.iops),
            fmt::mbps(s.mbps),
            fmt::us(s.mean_us),
            fmt::us(s.max_us),
        ]);
    }
    t
}

fn run(r: &RunResult) -> String {
    let mut out = String::from("# dbio run report\n\n");
    if r.interrupted {
        out.push_str("**INTERRUPTED**: the figures cover only what was measured.\n\n");
    }
    out.push_str("## Summary\n\n");
    out.push_str(&kv(&run_summary(r)));
    out.push_str("\n## I/O classes\n\n");
    out.push_str(&class_table(r).markdown());
    out.push_str("\n## Top wait events by time\n\n");
    out.push_str(&top_events(r).markdown());
    out.push_str("\n## Wait event histogram\n\n");
    out.push_str("Power-of-two buckets in microseconds, as V$EVENT_HISTOGRAM_MICRO.\n\n");
    for c in &r.classes {
        out.push_str(&format!("### {}\n\n", md_escape(&c.wait_event)));
        out.push_str(&histogram_table(&c.wait_event, &c.histogram).markdown());
        out.push('\n');
    }
    out.push_str("## File I/O stats\n\n");
    out.push_str(&file_table(r).markdown());
    out.push_str("\n## Time series\n\n");
    out.push_str(&series_table(&r.series).markdown());
    for (title, t) in crate::rate_view::tables(r)
        .into_iter()
        .chain(crate::nfs_views::tables(r))
        .chain(crate::verify_view::tables(r))
        .chain(crate::ranks_view::tables(r))
        .chain(crate::devices_view::tables(r))
    {
        out.push_str(&format!("\n## {title}\n\n"));
        out.push_str(&if t.rows.is_empty() {
            "none\n".to_string()
        } else {
            t.markdown()
        });
    }
    out
}

pub(crate) fn calibrate_summary(c: &CalibrateResult) -> Vec<(&'static str, String)> {
    let mut rows = vec![
        ("Started", fmt::utc(c.started_unix)),
        ("Elapsed", format!("{} s", fmt::secs(c.elapsed_s))),
        ("Target", c.target.clone()),
        ("Engine", c.engine.clone()),
        ("Data set", fmt::bytes(c.dataset_bytes)),
        ("Latency cap", format!("{} us", fmt::us(c.max_latency_us))),
        (
            "Max IOPS",
            format!(
                "{} (8 KiB random reads, {} outstanding)",
                fmt::whole(c.max_iops),
                c.max_iops_outstanding
            ),
        ),
        (
            "Latency at max IOPS",
            format!(
                "{} us mean, {} us p99",
                fmt::us(c.latency_us),
                fmt::us(c.latency_p99_us)
            ),
        ),
        (
            "Max MB/s",
            format!(
                "{} (1 MiB reads, {} outstanding)",
                fmt::mbps(c.max_mbps),
                c.max_mbps_outstanding
            ),
        ),
        ("IOPS ramp stopped", c.iops_stop.clone()),
        ("MB/s ramp stopped", c.mbps_stop.clone()),
        ("dbio version", c.dbio_version.clone()),
    ];
    if !c.labels.is_empty() {
        rows.insert(0, ("Labels", fmt::labels(&c.labels)));
    }
    if let Some(cache) = &c.cache {
        rows.push(("Cache", cache.note.clone()));
    }
    if c.interrupted {
        rows.insert(0, ("INTERRUPTED", "stopped early".into()));
    }
    rows
}

fn calibrate(c: &CalibrateResult) -> String {
    let mut out = String::from("# dbio calibrate report\n\n");
    if c.interrupted {
        out.push_str("**INTERRUPTED**: the figures come from the points measured so far.\n\n");
    }
    if let Some(limit) = &c.host_limit {
        out.push_str(&format!("**Note**: {}.\n\n", md_escape(limit)));
    }
    out.push_str("## Summary\n\n");
    out.push_str(&kv(&calibrate_summary(c)));
    out.push_str(&format!(
        "\n## IOPS ramp (8 KiB random reads), stopped: {}\n\n",
        md_escape(&c.iops_stop)
    ));
    let best = best_point(&c.iops_curve, c.max_iops_outstanding);
    out.push_str(&curve_table(&c.iops_curve, best, true).markdown());
    out.push_str(&format!(
        "\n## MB/s ramp (1 MiB reads), stopped: {}\n\n",
        md_escape(&c.mbps_stop)
    ));
    let best = best_point(&c.mbps_curve, c.max_mbps_outstanding);
    out.push_str(&curve_table(&c.mbps_curve, best, false).markdown());
    out.push_str("\n\\* marks the load level of the headline figure.\n");
    out.push_str("\n## Latency histogram at max IOPS\n\n");
    out.push_str(&histogram_table("8 KiB random read", &c.histogram).markdown());
    if let Some(d) = &c.devices {
        for (title, t) in crate::devices_view::section_tables(d) {
            out.push_str(&format!("\n## {title}\n\n"));
            out.push_str(&t.markdown());
        }
    }
    out
}
