//! Hand-built results with plausible shapes, for tests and for looking at
//! the renderers without running a benchmark. The figures are made up.

use dbio_stats::{
    CalibrateResult, ClassResult, CpuUsage, CurvePoint, FileResult, HistogramBucket, RunConfig,
    RunResult, SecondSample, CALIBRATE_KIND, FORMAT_VERSION, RUN_KIND,
};

fn buckets(counts: &[(u32, u64)]) -> Vec<HistogramBucket> {
    counts
        .iter()
        .map(|&(k, count)| HistogramBucket {
            lower_us: if k == 0 { 0 } else { 1 << (k - 1) },
            upper_us: 1 << k,
            count,
        })
        .collect()
}

fn class(name: &str, event: &str, ios: u64, size: u64, secs: f64, lat: [f64; 7]) -> ClassResult {
    let [mean, p50, p90, p99, p999, min, max] = lat;
    ClassResult {
        class: name.into(),
        wait_event: event.into(),
        ios,
        bytes: ios * size,
        iops: ios as f64 / secs,
        mbps: (ios * size) as f64 / secs / 1e6,
        mean_us: mean,
        p50_us: p50,
        p90_us: p90,
        p95_us: (p90 + p99) / 2.0,
        p99_us: p99,
        p999_us: p999,
        min_us: min,
        max_us: max,
        histogram: Vec::new(),
        sizes: Vec::new(),
    }
}

/// A 30-second OLTP-like run with three classes and two files.
pub fn run() -> RunResult {
    let secs = 30.0;
    let mut reads = class(
        "single-block-read",
        "db file sequential read",
        1_446_300,
        8192,
        secs,
        [82.9, 71.0, 121.0, 310.0, 1_180.0, 18.2, 9_870.0],
    );
    reads.histogram = buckets(&[
        (5, 2_100),
        (6, 310_000),
        (7, 905_000),
        (8, 201_000),
        (9, 24_500),
        (10, 2_900),
        (11, 650),
        (12, 120),
        (14, 30),
    ]);
    let mut dbwr = class(
        "dbwr-write",
        "db file parallel write",
        160_500,
        8192,
        secs,
        [240.5, 190.0, 410.0, 1_900.0, 5_200.0, 41.0, 22_100.0],
    );
    dbwr.histogram = buckets(&[
        (6, 1_200),
        (7, 30_000),
        (8, 88_000),
        (9, 35_000),
        (11, 6_000),
        (13, 300),
    ]);
    let mut redo = class(
        "redo-write",
        "log file parallel write",
        41_200,
        16384,
        secs,
        [612.0, 540.0, 900.0, 2_600.0, 7_400.0, 120.0, 15_300.0],
    );
    redo.histogram = buckets(&[
        (7, 400),
        (8, 2_000),
        (9, 15_000),
        (10, 21_000),
        (11, 2_100),
        (12, 600),
        (14, 100),
    ]);
    let series = (1..=30)
        .map(|t| {
            // A dip at 12-14 s, as a checkpoint might cause.
            let dip = if (12..=14).contains(&t) { 0.6 } else { 1.0 };
            let wobble = f64::from(t % 5) * 350.0;
            let iops = (54_900.0 + wobble) * dip;
            SecondSample {
                t_s: f64::from(t),
                iops,
                mbps: iops * 8600.0 / 1e6,
                mean_us: 96.0 / dip + f64::from(t % 3) * 4.0,
                max_us: 4_000.0 / dip,
            }
        })
        .collect();
    let mut r = RunResult {
        kind: RUN_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: "0.1.0".into(),
        started_unix: 1_763_700_000.0,
        elapsed_s: secs,
        interrupted: false,
        stop_reason: None,
        config: RunConfig {
            target: "/data/dbio".into(),
            engine: "io_uring".into(),
            profile: "oltp".into(),
            workloads: vec![
                "single-block-read".into(),
                "dbwr-write".into(),
                "redo-write".into(),
            ],
            users: 4,
            outstanding: 8,
            block_size: 8192,
            direct: true,
            time_s: Some(30.0),
            loops: None,
            rate: None,
            update_pct: 20,
            scan_pct: 0,
            redo_stress: "lite".into(),
            redo_flush: None,
            redo_buffered: false,
            dataset_bytes: 2 << 30,
        },
        failed_ios: 0,
        cpu: CpuUsage {
            user_s: 3.1,
            system_s: 9.4,
        },
        classes: vec![reads, dbwr, redo],
        files: vec![
            FileResult {
                name: "/data/dbio/data01.dbf".into(),
                size: 1 << 30,
                reads: 723_150,
                writes: 80_250,
                read_bytes: 723_150 * 8192,
                write_bytes: 80_250 * 8192,
                read_mean_us: 83.1,
                write_mean_us: 238.0,
            },
            FileResult {
                name: "/data/dbio/redo01.log".into(),
                size: 256 << 20,
                reads: 0,
                writes: 41_200,
                read_bytes: 0,
                write_bytes: 41_200 * 16384,
                read_mean_us: 0.0,
                write_mean_us: 612.0,
            },
        ],
        series,
        ..Default::default()
    };
    r.fill_totals();
    r
}

fn point(outstanding: u32, iops: f64, mean: f64, size: f64, cap: f64) -> CurvePoint {
    CurvePoint {
        outstanding,
        duration_s: 3.0,
        ios: (iops * 3.0) as u64,
        iops,
        mbps: iops * size / 1e6,
        mean_us: mean,
        p50_us: mean * 0.9,
        p99_us: mean * 2.6,
        cpu_us_per_io: 4.0 + 60.0 / f64::from(outstanding),
        within_cap: mean <= cap,
        machine_idle_pct: Some(70.0),
    }
}

/// A calibration whose IOPS ramp stopped at the knee (64 outstanding I/Os
/// gave only 3% more than 32).
pub fn calibrate() -> CalibrateResult {
    let cap = 2_000.0;
    let iops: Vec<CurvePoint> = [
        (1, 9_800.0, 98.0),
        (2, 18_900.0, 102.0),
        (4, 35_200.0, 110.0),
        (8, 61_000.0, 127.0),
        (16, 92_500.0, 168.0),
        (32, 110_400.0, 283.0),
        (64, 114_100.0, 548.0),
    ]
    .iter()
    .map(|&(o, x, m)| point(o, x, m, 8192.0, cap))
    .collect();
    let mbps: Vec<CurvePoint> = [
        (1, 610.0, 1_640.0),
        (2, 1_020.0, 1_960.0),
        (4, 1_310.0, 3_050.0),
        (8, 1_380.0, 5_790.0),
    ]
    .iter()
    .map(|&(o, x, m)| point(o, x, m, 1_048_576.0, cap))
    .collect();
    CalibrateResult {
        kind: CALIBRATE_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: "0.1.0".into(),
        started_unix: 1_763_700_000.0,
        elapsed_s: 41.5,
        interrupted: false,
        target: "/data/dbio".into(),
        engine: "io_uring".into(),
        dataset_bytes: 1 << 30,
        max_latency_us: cap,
        max_iops: 114_100.0,
        max_iops_outstanding: 64,
        latency_us: 548.0,
        latency_p99_us: 1_424.8,
        max_mbps: 1_447.034_88,
        max_mbps_outstanding: 8,
        iops_stop: "knee".into(),
        mbps_stop: "knee".into(),
        iops_curve: iops,
        mbps_curve: mbps,
        histogram: buckets(&[
            (6, 800),
            (7, 21_000),
            (8, 160_000),
            (9, 120_000),
            (10, 26_000),
            (11, 3_100),
            (12, 300),
        ]),
        labels: Default::default(),
        cache: None,
        host_limit: None,
        devices: None,
    }
}
