//! Plain-text summary for the terminal.

use dbio_stats::{CalibrateResult, CurvePoint, RunResult};

use crate::fmt::{self, Table};
use crate::AnyResult;

/// A plain-text summary with aligned columns, ending in a newline.
pub fn terminal(result: &AnyResult) -> String {
    match result {
        AnyResult::Run(r) => run(r),
        AnyResult::Calibrate(c) => calibrate(c),
    }
}

fn interrupted_line(interrupted: bool, reason: Option<&str>, elapsed_s: f64) -> String {
    if !interrupted {
        return String::new();
    }
    let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
    format!(
        "INTERRUPTED{why}: figures cover the {} s measured\n",
        fmt::secs(elapsed_s)
    )
}

pub(crate) fn class_table(r: &RunResult) -> Table {
    let mut t = Table::new(&[
        "<class",
        "<wait event",
        "ios",
        "IOPS",
        "MB/s",
        "mean us",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "max us",
    ]);
    for c in &r.classes {
        t.row(vec![
            c.class.clone(),
            c.wait_event.clone(),
            fmt::int(c.ios),
            fmt::whole(c.iops),
            fmt::mbps(c.mbps),
            fmt::us(c.mean_us),
            fmt::us(c.p50_us),
            fmt::us(c.p99_us),
            fmt::us(c.p999_us),
            fmt::us(c.max_us),
        ]);
    }
    if r.classes.len() > 1 {
        let lat_sum: f64 = r.classes.iter().map(|c| c.mean_us * c.ios as f64).sum();
        let mean = if r.ios > 0 {
            lat_sum / r.ios as f64
        } else {
            0.0
        };
        let max = r.classes.iter().map(|c| c.max_us).fold(0.0, f64::max);
        t.row(vec![
            "total".into(),
            String::new(),
            fmt::int(r.ios),
            fmt::whole(r.iops),
            fmt::mbps(r.mbps),
            fmt::us(mean),
            String::new(),
            String::new(),
            String::new(),
            fmt::us(max),
        ]);
    }
    t
}

fn run(r: &RunResult) -> String {
    let c = &r.config;
    let mut out = format!(
        "dbio run: {} on {}, engine {}, profile {}, {} x {} outstanding, {} s\n",
        if c.workloads.is_empty() {
            "-".to_string()
        } else {
            c.workloads.join("+")
        },
        if c.target.is_empty() { "-" } else { &c.target },
        if c.engine.is_empty() { "-" } else { &c.engine },
        if c.profile.is_empty() {
            "-"
        } else {
            &c.profile
        },
        fmt::count(c.users as u64, "user"),
        c.outstanding,
        fmt::secs(r.elapsed_s),
    );
    if !r.labels.is_empty() {
        out.push_str(&format!("labels: {}\n", fmt::labels(&r.labels)));
    }
    if c.redo_flush.is_some() || c.redo_buffered {
        let how = crate::markdown::redo_writes(c);
        out.push_str(&format!("redo writes: {how}\n"));
    }
    out.push_str(&cache_line(r.cache.as_ref()));
    out.push_str(&interrupted_line(
        r.interrupted,
        r.stop_reason.as_deref(),
        r.elapsed_s,
    ));
    if let Some(o) = &r.open_loop {
        out.push_str(&format!(
            "open loop: --rate {}, {} arrivals; {}\n",
            r.config.rate.as_deref().unwrap_or("-"),
            o.arrivals,
            o.verdict
        ));
    }
    out.push('\n');
    if r.classes.is_empty() {
        out.push_str("  no I/O completed\n");
    } else {
        out.push_str(&class_table(r).text("  "));
    }
    out.push('\n');
    out.push_str(&format!(
        "  total {} I/Os, {} IOPS, {} MB/s; failed {}\n",
        fmt::int(r.ios),
        fmt::whole(r.iops),
        fmt::mbps(r.mbps),
        fmt::int(r.failed_ios)
    ));
    out.push_str(&format!(
        "  CPU user {} s, system {} s, cpu_us_per_io {}\n",
        fmt::secs(r.cpu.user_s),
        fmt::secs(r.cpu.system_s),
        fmt::us(r.cpu_us_per_io)
    ));
    if let Some(m) = &r.machine_cpu {
        out.push_str(&format!(
            "  machine CPU (every process and the kernel) user {} s, system {} s, idle {} s, busy us per I/O {}\n",
            fmt::secs(m.user_s),
            fmt::secs(m.system_s),
            fmt::secs(m.idle_s),
            fmt::us(m.us_per_io)
        ));
    }
    for (title, t) in crate::rate_view::tables(r)
        .into_iter()
        .chain(crate::nfs_views::tables(r))
        .chain(crate::verify_view::tables(r))
        .chain(crate::ranks_view::tables(r))
        .chain(crate::devices_view::terminal_tables(r))
    {
        if t.rows.is_empty() {
            continue;
        }
        out.push_str(&format!("\n  {title}\n"));
        out.push_str(&t.text("  "));
    }
    if !r.slo.is_empty() {
        let pass = r.slo.iter().all(|o| o.pass);
        out.push_str(&format!(
            "\n  objectives: {}\n",
            if pass { "all pass" } else { "FAIL" }
        ));
        for o in &r.slo {
            out.push_str(&format!("    {}\n", o.line));
        }
    }
    out
}

/// A ramp's points; `capped`: the ramp had a latency cap (the IOPS ramp; MB/s has
/// none, so "within cap" would say nothing there).
pub(crate) fn curve_table(points: &[CurvePoint], best: Option<usize>, capped: bool) -> Table {
    let mut headers = vec![
        "outstanding",
        "seconds",
        "ios",
        "IOPS",
        "MB/s",
        "mean us",
        "p50 us",
        "p99 us",
        "cpu us/io",
        "idle %",
    ];
    if capped {
        headers.push("<within cap");
    }
    let mut t = Table::new(&headers);
    for (i, p) in points.iter().enumerate() {
        // Unmarked rows get the same width so the numbers stay aligned.
        let mark = if Some(i) == best { " *" } else { "  " };
        let mut row = vec![
            format!("{}{mark}", p.outstanding),
            fmt::secs(p.duration_s),
            fmt::int(p.ios),
            fmt::whole(p.iops),
            fmt::mbps(p.mbps),
            fmt::us(p.mean_us),
            fmt::us(p.p50_us),
            fmt::us(p.p99_us),
            fmt::us(p.cpu_us_per_io),
            p.machine_idle_pct
                .map_or_else(|| "-".into(), |i| format!("{i:.1}")),
        ];
        if capped {
            row.push(if p.within_cap { "yes" } else { "no" }.into());
        }
        t.row(row);
    }
    t
}

/// Index of the point a headline figure was measured at: the one with
/// that load level, the highest `within_cap` value breaking ties.
pub(crate) fn best_point(points: &[CurvePoint], outstanding: u32) -> Option<usize> {
    points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.outstanding == outstanding)
        .max_by(|a, b| {
            (a.1.within_cap, a.1.iops)
                .partial_cmp(&(b.1.within_cap, b.1.iops))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(|(i, _)| i)
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

/// "cache: ..." when the result says whether its reads could come from memory.
fn cache_line(c: Option<&dbio_stats::CacheCheck>) -> String {
    c.map_or_else(String::new, |c| format!("cache: {}\n", c.note))
}

fn calibrate(c: &CalibrateResult) -> String {
    let mut out = format!(
        "dbio calibrate: {}, engine {}, data set {}, latency cap {} us, {} s\n",
        or_dash(&c.target),
        or_dash(&c.engine),
        fmt::bytes(c.dataset_bytes),
        fmt::us(c.max_latency_us),
        fmt::secs(c.elapsed_s),
    );
    if !c.labels.is_empty() {
        out.push_str(&format!("labels: {}\n", fmt::labels(&c.labels)));
    }
    out.push_str(&cache_line(c.cache.as_ref()));
    out.push_str(&interrupted_line(c.interrupted, None, c.elapsed_s));
    out.push('\n');
    let mut head = Table::new(&["<", "", "<"]);
    head.row(vec![
        "max_iops".into(),
        fmt::whole(c.max_iops),
        format!(
            "8 KiB random reads at {} outstanding; ramp stopped: {}",
            c.max_iops_outstanding,
            or_dash(&c.iops_stop)
        ),
    ]);
    head.row(vec![
        "latency_us".into(),
        fmt::us(c.latency_us),
        format!("mean at max_iops; p99 {} us", fmt::us(c.latency_p99_us)),
    ]);
    head.row(vec![
        "max_mbps".into(),
        fmt::mbps(c.max_mbps),
        format!(
            "1 MiB reads at {} outstanding; ramp stopped: {}",
            c.max_mbps_outstanding,
            or_dash(&c.mbps_stop)
        ),
    ]);
    // Skip the header and rule lines of this key-value table.
    for line in head.text("  ").lines().skip(2) {
        out.push_str(line);
        out.push('\n');
    }
    if let Some(limit) = &c.host_limit {
        out.push_str(&format!("note: {limit}\n"));
    }
    for (title, points, outstanding, stop, capped) in [
        (
            "8 KiB random reads (IOPS ramp)",
            &c.iops_curve,
            c.max_iops_outstanding,
            &c.iops_stop,
            true,
        ),
        (
            "1 MiB reads (MB/s ramp)",
            &c.mbps_curve,
            c.max_mbps_outstanding,
            &c.mbps_stop,
            false,
        ),
    ] {
        out.push_str(&format!("\n{title}, stopped: {}\n", or_dash(stop)));
        if points.is_empty() {
            out.push_str("  no points measured\n");
        } else {
            out.push_str(&curve_table(points, best_point(points, outstanding), capped).text("  "));
        }
    }
    out.push_str("\n  * = the load level of the headline figure\n");
    if let Some(d) = &c.devices {
        for (title, t) in crate::devices_view::section_terminal_tables(d) {
            out.push_str(&format!("\n  {title}\n"));
            out.push_str(&t.text("  "));
        }
    }
    out
}
