//! The `devices` section of a run: what the block devices under the target
//! and the machine's CPUs did (`iostat -x`, `mpstat`), as tables and
//! time-series charts; absent for NFS targets and older results.

use dbio_stats::{DeviceSample, DeviceSection, HostCpuSample, RunResult};

use crate::fmt::{self, Table};
use crate::svg::{line_chart, Line, LineChart, PALETTE};

/// Most points a device chart draws; longer runs are averaged into windows.
const POINTS: usize = 600;

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

fn f2(v: f64) -> String {
    format!("{v:.2}")
}

/// Means of the CPU samples (equal intervals).
fn cpu_mean(cpu: &[HostCpuSample]) -> HostCpuSample {
    let n = cpu.len().max(1) as f64;
    let sum = |f: fn(&HostCpuSample) -> f64| cpu.iter().map(f).sum::<f64>() / n;
    HostCpuSample {
        t_s: cpu.last().map_or(0.0, |s| s.t_s),
        user_pct: sum(|s| s.user_pct),
        system_pct: sum(|s| s.system_pct),
        iowait_pct: sum(|s| s.iowait_pct),
        steal_pct: sum(|s| s.steal_pct),
        idle_pct: sum(|s| s.idle_pct),
    }
}

fn cpu_table(d: &DeviceSection) -> Option<Table> {
    if d.cpu.is_empty() {
        return None;
    }
    let m = cpu_mean(&d.cpu);
    let mut t = Table::new(&["%user", "%system", "%iowait", "%steal", "%idle", "Seconds"]);
    t.row(vec![
        f1(m.user_pct),
        f1(m.system_pct),
        f1(m.iowait_pct),
        f1(m.steal_pct),
        f1(m.idle_pct),
        fmt::secs(d.elapsed_s),
    ]);
    Some(t)
}

/// `(title, table)` for Markdown and HTML: every `iostat -x` column of
/// each device over the whole run, and the machine's mean CPU.
pub(crate) fn tables(r: &RunResult) -> Vec<(&'static str, Table)> {
    let mut out = Vec::new();
    if let Some(t) = size_table(r) {
        out.push(("I/O sizes as issued", t));
    }
    if let Some(d) = &r.devices {
        out.extend(section_tables(d));
    }
    out
}

/// The devices section's tables, whatever result holds it.
pub(crate) fn section_tables(d: &DeviceSection) -> Vec<(&'static str, Table)> {
    let mut out = Vec::new();
    if !d.devices.is_empty() {
        let mut t = Table::new(&[
            "<Device",
            "<Role",
            "Reads",
            "Writes",
            "r/s",
            "w/s",
            "rMB/s",
            "wMB/s",
            "rareq-sz KiB",
            "wareq-sz KiB",
            "r_await ms",
            "w_await ms",
            "aqu-sz",
            "%util",
        ]);
        for s in &d.devices {
            let x = &s.total;
            t.row(vec![
                s.name.clone(),
                s.role.clone(),
                fmt::int(x.reads),
                fmt::int(x.writes),
                fmt::whole(x.r_s),
                fmt::whole(x.w_s),
                f2(x.rmb_s),
                f2(x.wmb_s),
                f1(x.rareq_kib),
                f1(x.wareq_kib),
                f2(x.r_await_ms),
                f2(x.w_await_ms),
                f2(x.aqu_sz),
                f1(x.util_pct),
            ]);
        }
        out.push(("Devices during the run (iostat -x, whole run)", t));
    }
    if let Some(t) = cpu_table(d) {
        out.push(("Machine CPU during the run (mean of all CPUs)", t));
    }
    out
}

/// The sizes of the I/Os dbio issued, per class, in power-of-two buckets
/// (as dtrace's bitesize); none for results without them.
pub(crate) fn size_table(r: &RunResult) -> Option<Table> {
    if r.classes.iter().all(|c| c.sizes.is_empty()) {
        return None;
    }
    let mut t = Table::new(&["<Class", "<Size", "I/Os", "% of class"]);
    for c in &r.classes {
        let total: u64 = c.sizes.iter().map(|b| b.count).sum();
        for b in &c.sizes {
            t.row(vec![
                c.class.clone(),
                if b.upper_bytes <= 1 {
                    "0 B".to_string()
                } else {
                    format!(
                        "{} to < {}",
                        fmt::bytes(b.lower_bytes),
                        fmt::bytes(b.upper_bytes)
                    )
                },
                fmt::int(b.count),
                format!("{:.2}", b.count as f64 * 100.0 / total.max(1) as f64),
            ]);
        }
    }
    Some(t)
}

/// `(title, table)` for the terminal: one line per device (mean r/s, w/s,
/// r_await, w_await, %util) and one for the machine's CPU.
pub(crate) fn terminal_tables(r: &RunResult) -> Vec<(&'static str, Table)> {
    r.devices
        .as_deref()
        .map(section_terminal_tables)
        .unwrap_or_default()
}

/// The devices section for the terminal, whatever result holds it.
pub(crate) fn section_terminal_tables(d: &DeviceSection) -> Vec<(&'static str, Table)> {
    let mut out = Vec::new();
    if !d.devices.is_empty() {
        let mut t = Table::new(&[
            "<Device",
            "<Role",
            "r/s",
            "w/s",
            "r_await ms",
            "w_await ms",
            "%util",
        ]);
        for s in &d.devices {
            let x = &s.total;
            t.row(vec![
                s.name.clone(),
                s.role.clone(),
                fmt::whole(x.r_s),
                fmt::whole(x.w_s),
                f2(x.r_await_ms),
                f2(x.w_await_ms),
                f1(x.util_pct),
            ]);
        }
        out.push(("Devices (iostat -x over the run)", t));
    }
    if let Some(t) = cpu_table(d) {
        out.push(("Machine CPU", t));
    }
    out
}

/// Averages consecutive samples into at most `n` windows (request-weighted
/// for the waits and sizes, time-weighted for the rates).
fn coarsen(s: &[DeviceSample], n: usize) -> Vec<DeviceSample> {
    if s.len() <= n || n == 0 {
        return s.to_vec();
    }
    let per = s.len().div_ceil(n);
    let mut prev_t = 0.0;
    s.chunks(per)
        .map(|w| {
            let mut a = DeviceSample::default();
            let (mut r_ms, mut w_ms, mut q, mut u) = (0.0, 0.0, 0.0, 0.0);
            let mut t = prev_t;
            for x in w {
                let span = (x.t_s - t).max(0.0);
                a.reads += x.reads;
                a.writes += x.writes;
                a.read_bytes += x.read_bytes;
                a.write_bytes += x.write_bytes;
                r_ms += x.r_await_ms * x.reads as f64;
                w_ms += x.w_await_ms * x.writes as f64;
                q += x.aqu_sz * span;
                u += x.util_pct * span;
                t = x.t_s;
            }
            let span = (t - prev_t).max(1e-9);
            prev_t = t;
            let per_req = |v: f64, n: u64| if n > 0 { v / n as f64 } else { 0.0 };
            DeviceSample {
                t_s: t,
                r_s: a.reads as f64 / span,
                w_s: a.writes as f64 / span,
                rmb_s: a.read_bytes as f64 / 1e6 / span,
                wmb_s: a.write_bytes as f64 / 1e6 / span,
                rareq_kib: per_req(a.read_bytes as f64 / 1024.0, a.reads),
                wareq_kib: per_req(a.write_bytes as f64 / 1024.0, a.writes),
                r_await_ms: per_req(r_ms, a.reads),
                w_await_ms: per_req(w_ms, a.writes),
                aqu_sz: q / span,
                util_pct: u / span,
                ..a
            }
        })
        .collect()
}

/// HTML: the section's tables and its time-series charts (requests per
/// second, waits, utilisation per device; the machine's CPU).
pub(crate) fn html(r: &RunResult) -> String {
    let mut b = String::new();
    if let Some(t) = size_table(r) {
        b.push_str(&format!("<h2>I/O sizes as issued</h2>\n{}", t.html()));
    }
    if let Some(d) = &r.devices {
        b.push_str(&section_html(d));
    }
    b
}

/// The devices section in HTML, whatever result holds it.
pub(crate) fn section_html(d: &DeviceSection) -> String {
    let mut b = String::from(
        "<h2>Devices and CPU during the run</h2>\n<p class=\"sub\">Sampled from /proc/diskstats \
         and /proc/stat every second, as iostat -x and mpstat show them: compare the devices' \
         waits with dbio's latencies to see whether time goes in the device or above it.</p>\n",
    );
    for (title, t) in section_tables(d) {
        b.push_str(&format!("<h3>{}</h3>\n", fmt::html_escape(title)));
        b.push_str(&t.html());
    }
    let devs: Vec<(String, Vec<DeviceSample>)> = d
        .devices
        .iter()
        .map(|s| (s.name.clone(), coarsen(&s.samples, POINTS)))
        .collect();
    let line =
        |name: String, i: usize, pts: &[DeviceSample], f: fn(&DeviceSample) -> f64, dashed| Line {
            name,
            color: PALETTE[i % PALETTE.len()],
            points: pts.iter().map(|s| (s.t_s, f(s))).collect(),
            labels: Vec::new(),
            markers: pts.len() <= 60,
            dashed,
        };
    let chart = |title: &str, y: &str, lines: Vec<Line>| {
        line_chart(&LineChart {
            title: title.into(),
            x_label: "seconds since start".into(),
            y_label: y.into(),
            lines,
            reference: None,
            highlight: None,
        })
    };
    if devs.iter().any(|(_, s)| !s.is_empty()) {
        let mut rw = Vec::new();
        let mut wait = Vec::new();
        let mut util = Vec::new();
        for (i, (name, s)) in devs.iter().enumerate() {
            rw.push(line(format!("{name} r/s"), i, s, |x| x.r_s, false));
            rw.push(line(format!("{name} w/s"), i, s, |x| x.w_s, true));
            wait.push(line(
                format!("{name} r_await"),
                i,
                s,
                |x| x.r_await_ms,
                false,
            ));
            wait.push(line(
                format!("{name} w_await"),
                i,
                s,
                |x| x.w_await_ms,
                true,
            ));
            util.push(line(format!("{name} %util"), i, s, |x| x.util_pct, false));
        }
        b.push_str(&chart(
            "Device requests per second (writes dashed)",
            "requests per second",
            rw,
        ));
        b.push_str(&chart(
            "Device wait per request (r_await, w_await dashed)",
            "milliseconds",
            wait,
        ));
        b.push_str(&chart("Device utilisation", "% of time busy", util));
    }
    if !d.cpu.is_empty() {
        let step = d.cpu.len().div_ceil(POINTS).max(1);
        let pts: Vec<&HostCpuSample> = d.cpu.iter().step_by(step).collect();
        let cpu_line = |name: &str, i: usize, f: fn(&HostCpuSample) -> f64| Line {
            name: name.into(),
            color: PALETTE[i],
            points: pts.iter().map(|s| (s.t_s, f(s))).collect(),
            labels: Vec::new(),
            markers: pts.len() <= 60,
            dashed: false,
        };
        b.push_str(&chart(
            "Machine CPU (all CPUs)",
            "% of CPU time",
            vec![
                cpu_line("user", 0, |s| s.user_pct),
                cpu_line("system", 1, |s| s.system_pct),
                cpu_line("iowait", 2, |s| s.iowait_pct),
                cpu_line("steal", 3, |s| s.steal_pct),
            ],
        ));
    }
    b
}

#[cfg(test)]
mod tests {
    use dbio_stats::{DeviceSample, DeviceSection, DeviceStats, HostCpuSample};

    use crate::AnyResult;

    fn sample(t: f64, reads: u64) -> DeviceSample {
        DeviceSample {
            t_s: t,
            reads,
            read_bytes: reads * 8192,
            r_s: reads as f64,
            rmb_s: reads as f64 * 8192.0 / 1e6,
            rareq_kib: 8.0,
            r_await_ms: 0.25,
            util_pct: 40.0,
            ..Default::default()
        }
    }

    #[test]
    fn devices_render_everywhere_and_round_trip() {
        let mut r = crate::sample::run();
        let plain = AnyResult::Run(r.clone());
        assert!(!crate::terminal(&plain).contains("iostat"));
        assert!(!crate::markdown(&plain).contains("I/O sizes"));
        r.classes[0].sizes = vec![dbio_stats::SizeBucket {
            lower_bytes: 8192,
            upper_bytes: 16384,
            count: 5,
        }];
        assert!(!crate::json(&plain).unwrap().contains("\"devices\""));
        r.devices = Some(Box::new(DeviceSection {
            interval_s: 1.0,
            elapsed_s: 3.0,
            devices: vec![DeviceStats {
                name: "loop7".into(),
                dev: "7:7".into(),
                role: "file system".into(),
                total: sample(3.0, 3000),
                samples: (1..=3).map(|i| sample(i as f64, 1000)).collect(),
            }],
            cpu: (1..=3)
                .map(|i| HostCpuSample {
                    t_s: i as f64,
                    user_pct: 10.0,
                    system_pct: 20.0,
                    iowait_pct: 30.0,
                    steal_pct: 0.0,
                    idle_pct: 40.0,
                })
                .collect(),
        }));
        let any = AnyResult::Run(r.clone());
        let term = crate::terminal(&any);
        assert!(term.contains("Devices (iostat -x over the run)"), "{term}");
        assert!(term.contains("loop7"), "{term}");
        let md = crate::markdown(&any);
        assert!(md.contains("| loop7 | file system | 3,000 |"), "{md}");
        assert!(md.contains("I/O sizes as issued"), "{md}");
        assert!(
            md.contains("| single-block-read | 8 KiB to < 16 KiB |"),
            "{md}"
        );
        let html = crate::html(&any);
        assert!(html.contains("Device requests per second"));
        assert!(html.contains("Machine CPU (all CPUs)"));
        let json = crate::json(&any).unwrap();
        let back: dbio_stats::RunResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back.devices, r.devices);
        // Through the loader (and its format upgrade) as a file.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        std::fs::write(&path, &json).unwrap();
        match crate::load(&path).unwrap() {
            AnyResult::Run(back) => assert_eq!(back, r),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_calibration_shows_its_devices_too() {
        let mut c = crate::sample::calibrate();
        c.devices = Some(Box::new(DeviceSection {
            interval_s: 1.0,
            elapsed_s: 1.0,
            devices: vec![DeviceStats {
                name: "nvme9n1".into(),
                dev: "259:9".into(),
                role: "file system".into(),
                total: sample(1.0, 100),
                samples: vec![sample(1.0, 100)],
            }],
            cpu: Vec::new(),
        }));
        let any = AnyResult::Calibrate(c);
        assert!(crate::terminal(&any).contains("nvme9n1"));
        assert!(crate::markdown(&any).contains("| nvme9n1 |"));
        assert!(crate::html(&any).contains("Device utilisation"));
    }

    #[test]
    fn long_series_are_averaged_into_windows() {
        let s: Vec<DeviceSample> = (1..=1200).map(|i| sample(i as f64, 100)).collect();
        let c = super::coarsen(&s, 600);
        assert_eq!(c.len(), 600);
        assert_eq!(c[0].reads, 200);
        assert!((c[0].r_s - 100.0).abs() < 1e-9);
        assert!((c[0].r_await_ms - 0.25).abs() < 1e-9);
        assert!((c[599].util_pct - 40.0).abs() < 1e-9);
    }
}
