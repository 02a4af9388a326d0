use super::*;
use crate::schema::RunResult;

const US: u64 = 1000;

fn classes() -> Vec<ClassDesc> {
    vec![
        ClassDesc::new("single-block-read", "db file sequential read"),
        ClassDesc::new("dbwr-write", "db file parallel write"),
    ]
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= b.abs() * rel
}

#[test]
fn percentiles_of_a_uniform_ramp() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    for us in 1..=1000u64 {
        r.record(0, 0, false, 8192, us * US, start);
    }
    let (c, _, _) = r.finish(Duration::from_secs(1));
    assert_eq!(c.len(), 1, "the class without I/O is left out");
    let c = &c[0];
    assert_eq!(c.class, "single-block-read");
    assert_eq!(c.wait_event, "db file sequential read");
    assert_eq!(c.ios, 1000);
    assert!(close(c.mean_us, 500.5, 1e-12), "mean {}", c.mean_us);
    // 3 significant digits: within 0.1 %.
    for (got, want) in [
        (c.p50_us, 500.0),
        (c.p90_us, 900.0),
        (c.p95_us, 950.0),
        (c.p99_us, 990.0),
        (c.p999_us, 999.0),
    ] {
        assert!(close(got, want, 1e-3), "got {got}, want {want}");
    }
    assert_eq!(c.min_us, 1.0);
    assert_eq!(c.max_us, 1000.0);
}

#[test]
fn sub_microsecond_latencies_keep_their_fraction() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    for ns in [250u64, 500, 750] {
        r.record(0, 0, false, 8192, ns, start);
    }
    let (c, _, _) = r.finish(Duration::from_secs(1));
    assert_eq!(c[0].min_us, 0.25);
    assert_eq!(c[0].p50_us, 0.5);
    assert_eq!(c[0].max_us, 0.75);
    assert_eq!(c[0].mean_us, 0.5);
}

#[test]
fn power_of_two_buckets_like_event_histogram_micro() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    for ns in [500, 1_000, 1_999, 3_000, 3_999, 4_000, 1_000_000] {
        r.record(0, 0, false, 8192, ns, start);
    }
    let (c, _, _) = r.finish(Duration::from_secs(1));
    let got: Vec<(u64, u64, u64)> = c[0]
        .histogram
        .iter()
        .map(|b| (b.lower_us, b.upper_us, b.count))
        .collect();
    assert_eq!(
        got,
        vec![(0, 1, 1), (1, 2, 2), (2, 4, 2), (4, 8, 1), (512, 1024, 1)],
        "empty buckets left out, bounds are powers of two"
    );
}

#[test]
fn huge_latency_is_clamped_not_lost() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    r.record(0, 0, false, 8192, u64::MAX / 2, start);
    let (c, _, _) = r.finish(Duration::from_secs(1));
    assert_eq!(c[0].ios, 1);
    assert_eq!(c[0].histogram.iter().map(|b| b.count).sum::<u64>(), 1);
    assert!(c[0].p99_us >= 59_000_000.0);
}

#[test]
fn iops_and_mbps_over_elapsed() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 2, start);
    for i in 0..1000u64 {
        r.record(0, (i % 2) as usize, false, 8192, 100 * US, start);
    }
    for _ in 0..10 {
        r.record(1, 1, true, 1 << 20, 2_000 * US, start);
    }
    let (c, f, _) = r.finish(Duration::from_secs(2));
    assert_eq!(c.len(), 2);
    assert!(close(c[0].iops, 500.0, 1e-12));
    assert!(close(c[0].mbps, 8192.0 * 1000.0 / 2.0 / 1e6, 1e-12));
    assert!(close(c[1].iops, 5.0, 1e-12));
    assert!(close(c[1].mbps, 10.0 * 1048576.0 / 2.0 / 1e6, 1e-12));
    assert_eq!((f[0].reads, f[0].writes), (500, 0));
    assert_eq!((f[1].reads, f[1].writes), (500, 10));
    assert_eq!(f[1].write_bytes, 10 << 20);
    assert_eq!(f[0].read_mean_us, 100.0);
    assert_eq!(f[0].write_mean_us, 0.0);
    assert_eq!(f[1].write_mean_us, 2000.0);
    assert!(f[0].name.is_empty(), "names are the caller's to fill");
}

#[test]
fn per_second_series() {
    let start = Instant::now();
    let at = |ms: u64| start + Duration::from_millis(ms);
    let mut r = Recorder::new(&classes(), 1, start);
    r.record(0, 0, false, 8192, 100 * US, at(500));
    r.record(0, 0, false, 8192, 200 * US, at(1200));
    r.record(0, 0, false, 8192, 400 * US, at(1900));
    r.record(0, 0, false, 8192, 50 * US, at(2100));
    let (_, _, s) = r.finish(Duration::from_millis(2500));
    assert_eq!(s.len(), 3);
    assert_eq!(
        s.iter().map(|x| x.t_s).collect::<Vec<_>>(),
        vec![1.0, 2.0, 2.5]
    );
    assert_eq!(s[0].iops, 1.0);
    assert_eq!(s[1].iops, 2.0);
    assert_eq!(s[1].mean_us, 300.0);
    assert_eq!(s[1].max_us, 400.0);
    assert!(close(s[1].mbps, 2.0 * 8192.0 / 1e6, 1e-12));
    // The half-second tail: one I/O over 0.5 s.
    assert!(close(s[2].iops, 2.0, 1e-12));

    // A tail of 0.1 s is too short to be a rate: it joins the second
    // before, which then spans 1.1 s and holds 3 I/Os.
    let (_, _, s) = r.finish(Duration::from_millis(2100));
    assert_eq!(s.len(), 2);
    assert_eq!(s[1].t_s, 2.1);
    assert!(close(s[1].iops, 3.0 / 1.1, 1e-12));
    assert_eq!(s[1].max_us, 400.0);

    // Completions stamped after the measured end count in the last second.
    let (_, _, s) = r.finish(Duration::from_millis(2000));
    assert_eq!(s.len(), 2);
    assert_eq!(s[1].iops, 3.0);

    // Every I/O appears once in the series.
    for ms in [300, 1000, 1900, 2500, 4000] {
        let (_, _, s) = r.finish(Duration::from_millis(ms));
        let mut t = 0.0;
        let ios: f64 = s
            .iter()
            .map(|x| {
                let n = x.iops * (x.t_s - t);
                t = x.t_s;
                n
            })
            .sum();
        assert!(close(ios, 4.0, 1e-9), "{ms} ms: {ios}");
    }
    assert!(r.finish(Duration::ZERO).2.is_empty());
    assert_eq!(r.finish(Duration::MAX).2.len(), 3 + 86_400);
}

#[test]
fn idle_seconds_appear_as_zero() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    r.record(
        0,
        0,
        false,
        8192,
        100 * US,
        start + Duration::from_millis(100),
    );
    let (_, _, s) = r.finish(Duration::from_secs(3));
    assert_eq!(s.len(), 3);
    assert_eq!(s[1].iops, 0.0);
    assert_eq!(s[2].mean_us, 0.0);
}

#[test]
fn merge_equals_recording_in_one() {
    let start = Instant::now();
    let mut one = Recorder::new(&classes(), 2, start);
    let mut a = Recorder::new(&classes(), 2, start);
    let mut b = Recorder::new(&classes(), 2, start);
    for i in 0..5000u64 {
        let lat = (i * 7919) % 20_000 * US + 30 * US;
        let (class, file, write) = ((i % 3 == 0) as usize, (i % 2) as usize, i % 3 == 0);
        let now = start + Duration::from_millis(i % 3000);
        one.record(class, file, write, 8192, lat, now);
        let half = if i % 2 == 0 { &mut a } else { &mut b };
        half.record(class, file, write, 8192, lat, now);
    }
    a.record_failure();
    b.record_failure();
    a.merge(&b);
    assert_eq!(a.failed(), 2);
    let elapsed = Duration::from_secs(3);
    assert_eq!(a.finish(elapsed), one.finish(elapsed));
    assert_eq!(a.ios(), 5000);
}

#[test]
fn out_of_range_indexes_are_counted_not_fatal() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    r.record(7, 0, false, 8192, US, start);
    r.record(0, 3, false, 8192, US, start);
    assert_eq!(r.misrouted(), 2);
    assert_eq!(r.ios(), 0);
    let (c, f, _) = r.finish(Duration::from_secs(1));
    assert!(c.is_empty());
    assert_eq!(f[0].reads, 0);
}

#[test]
fn curve_point_of_one_level() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    for us in 1..=400u64 {
        r.record(0, 0, false, 8192, us * US, start);
    }
    let cpu = CpuUsage {
        user_s: 0.002,
        system_s: 0.006,
    };
    let p = r.curve_point(8, Duration::from_secs(2), &cpu, 250.0);
    assert_eq!(p.outstanding, 8);
    assert_eq!(p.ios, 400);
    assert!(close(p.iops, 200.0, 1e-12));
    assert!(close(p.mbps, 200.0 * 8192.0 / 1e6, 1e-12));
    assert!(close(p.mean_us, 200.5, 1e-12));
    assert!(close(p.p50_us, 200.0, 1e-3));
    assert!(close(p.p99_us, 396.0, 1e-3));
    assert!(close(p.cpu_us_per_io, 20.0, 1e-9));
    assert!(p.within_cap);
    let over = r.curve_point(8, Duration::from_secs(2), &cpu, 150.0);
    assert!(!over.within_cap);
    assert_eq!(r.histogram().iter().map(|b| b.count).sum::<u64>(), 400);
}

#[test]
fn run_totals_from_classes() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    for _ in 0..300 {
        r.record(0, 0, false, 8192, 100 * US, start);
    }
    for _ in 0..100 {
        r.record(1, 0, true, 8192, 300 * US, start);
    }
    let (classes, files, series) = r.finish(Duration::from_secs(4));
    let mut run = RunResult {
        elapsed_s: 4.0,
        cpu: CpuUsage {
            user_s: 0.01,
            system_s: 0.03,
        },
        classes,
        files,
        series,
        ..Default::default()
    };
    run.fill_totals();
    assert_eq!(run.ios, 400);
    assert!(close(run.iops, 100.0, 1e-12));
    assert!(close(run.mbps, 400.0 * 8192.0 / 4.0 / 1e6, 1e-12));
    assert!(close(run.cpu_us_per_io, 100.0, 1e-9));
}

#[test]
fn recorder_moves_between_threads() {
    fn send<T: Send>(_: &T) {}
    let r = Recorder::new(&classes(), 1, Instant::now());
    send(&r);
    let handle = std::thread::spawn(move || {
        let mut r = r;
        r.record(0, 0, false, 8192, 5 * US, r.start());
        r
    });
    assert_eq!(handle.join().unwrap().ios(), 1);
}

#[test]
fn sizes_as_issued_in_power_of_two_buckets_survive_the_raw_form() {
    let start = Instant::now();
    let mut r = Recorder::new(&classes(), 1, start);
    for size in [512u32, 8192, 8192, 12288, 1 << 20, 0] {
        r.record(0, 0, false, size, 100 * US, start);
    }
    let (classes, _, _) = r.finish(Duration::from_secs(1));
    let got: Vec<(u64, u64, u64)> = classes[0]
        .sizes
        .iter()
        .map(|b| (b.lower_bytes, b.upper_bytes, b.count))
        .collect();
    assert_eq!(
        got,
        [
            (0, 1, 1),
            (512, 1024, 1),
            (8192, 16384, 3),
            (1 << 20, 1 << 21, 1)
        ]
    );
    let mut raw = r.to_raw();
    raw.merge(&r.to_raw()).unwrap();
    let back = Recorder::from_raw(&raw).unwrap();
    let (classes, _, _) = back.finish(Duration::from_secs(1));
    assert_eq!(classes[0].sizes[2].count, 6);
    // A raw form written before sizes were kept still reads.
    let mut old = r.to_raw();
    old.classes[0].sizes.clear();
    assert!(Recorder::from_raw(&old).is_ok());
}
