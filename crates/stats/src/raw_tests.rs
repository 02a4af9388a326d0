use std::time::{Duration, Instant};

use super::*;
use crate::schema::{
    NfsEvent, NfsFile, NfsProcCount, NfsSection, NfsServer, NfsStats, RunConfig, RunResult,
};
use crate::{merge_runs, ClassDesc, Recorder};

fn classes() -> Vec<ClassDesc> {
    vec![
        ClassDesc::new("single-block-read", "db file sequential read"),
        ClassDesc::new("dbwr-write", "db file parallel write"),
    ]
}

/// Deterministic samples: (class, file, write, bytes, latency ns, second).
fn samples(n: u64, seed: u64) -> Vec<(usize, usize, bool, u32, u64, u64)> {
    let mut x = seed;
    (0..n)
        .map(|i| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Latencies from 0 ns to past the histogram's 60 s top.
            let lat = match i % 50 {
                0 => 0,
                1 => 61_000_000_000,
                _ => (x >> 20) % 20_000_000 + 500,
            };
            let class = (x >> 7) as usize % 2;
            (class, (x >> 9) as usize % 3, class == 1, 8192, lat, i % 7)
        })
        .collect()
}

fn feed(rec: &mut Recorder, s: &[(usize, usize, bool, u32, u64, u64)]) {
    let start = rec.start();
    for &(c, f, w, b, lat, sec) in s {
        rec.record(
            c,
            f,
            w,
            b,
            lat,
            start + Duration::from_millis(sec * 1000 + 10),
        );
    }
}

#[test]
fn raw_form_round_trips_through_json_exactly() {
    let mut rec = Recorder::new(&classes(), 3, Instant::now());
    feed(&mut rec, &samples(5000, 1));
    rec.record_failure();
    let raw = rec.to_raw();
    let json = serde_json::to_string(&raw).unwrap();
    let back: RawRecorder = serde_json::from_str(&json).unwrap();
    assert_eq!(back, raw);
    let again = Recorder::from_raw(&back).unwrap();
    assert_eq!(again.to_raw(), raw);
    let d = Duration::from_secs(7);
    assert_eq!(again.finish(d), rec.finish(d));
    assert_eq!(again.failed(), 1);
}

#[test]
fn merged_percentiles_equal_those_of_one_histogram_fed_all_samples() {
    let start = Instant::now();
    let all = samples(30_000, 7);
    let mut one = Recorder::new(&classes(), 3, start);
    feed(&mut one, &all);
    let mut raw = RawRecorder::default();
    for part in all.chunks(7_001) {
        let mut r = Recorder::new(&classes(), 3, start);
        feed(&mut r, part);
        raw.merge(&r.to_raw()).unwrap();
    }
    assert_eq!(raw, one.to_raw());
    let merged = Recorder::from_raw(&raw).unwrap();
    let d = Duration::from_secs(7);
    let (mc, mf, ms) = merged.finish(d);
    let (oc, of, os) = one.finish(d);
    assert_eq!(mc, oc, "classes (percentiles included)");
    assert_eq!((mf, ms), (of, os));
    assert!(mc[0].p99_us > mc[0].p50_us);
}

fn run_of(rec: &Recorder, elapsed_s: f64, rank: &str) -> RunResult {
    let (classes, mut files, series) = rec.finish(Duration::from_secs_f64(elapsed_s));
    for (i, f) in files.iter_mut().enumerate() {
        f.name = format!("dbio-data-{i:02}.dbf");
        f.size = 1 << 20;
    }
    let mut r = RunResult {
        kind: crate::RUN_KIND.into(),
        format_version: crate::FORMAT_VERSION,
        started_unix: 1000.0 + elapsed_s,
        elapsed_s,
        config: RunConfig {
            users: 2,
            ..Default::default()
        },
        failed_ios: rec.failed(),
        cpu: crate::CpuUsage {
            user_s: 1.0,
            system_s: 0.5,
        },
        classes,
        files,
        series,
        nfs: Some(Box::new(NfsSection {
            servers: vec![NfsServer {
                name: "filer1".into(),
                ..Default::default()
            }],
            files: vec![NfsFile {
                name: "dbio-data-00.dbf".into(),
                size: 1 << 20,
                server: "filer1".into(),
            }],
            stats: NfsStats {
                calls: vec![NfsProcCount {
                    procedure: "READ".into(),
                    calls: 10,
                }],
                read_bytes: 100,
                write_bytes: 0,
            },
            events: vec![NfsEvent {
                t_s: elapsed_s,
                what: format!("down: rank {rank}"),
                ..Default::default()
            }],
            ..Default::default()
        })),
        raw: Some(Box::new(rec.to_raw())),
        ..Default::default()
    };
    r.labels.insert("config".into(), "oltp".into());
    r.labels.insert("rank".into(), rank.into());
    r.fill_totals();
    r
}

#[test]
fn merged_runs_sum_counts_and_derive_percentiles_exactly() {
    let start = Instant::now();
    let (a, b) = (samples(20_000, 3), samples(12_000, 4));
    let mut ra = Recorder::new(&classes(), 3, start);
    feed(&mut ra, &a);
    ra.record_failure();
    let mut rb = Recorder::new(&classes(), 3, start);
    feed(&mut rb, &b);
    let runs = [run_of(&ra, 7.0, "0"), run_of(&rb, 6.5, "1")];
    let m = merge_runs(&runs).unwrap();

    assert_eq!(m.ios, runs[0].ios + runs[1].ios);
    assert_eq!(m.failed_ios, 1);
    assert_eq!(m.elapsed_s, 7.0);
    assert_eq!(m.config.users, 4);
    assert_eq!(m.cpu.user_s, 2.0);
    for (i, c) in m.classes.iter().enumerate() {
        assert_eq!(c.ios, runs[0].classes[i].ios + runs[1].classes[i].ios);
        assert_eq!(c.bytes, runs[0].classes[i].bytes + runs[1].classes[i].bytes);
    }
    for (i, f) in m.files.iter().enumerate() {
        assert_eq!(f.reads, runs[0].files[i].reads + runs[1].files[i].reads);
        assert_eq!(f.name, runs[0].files[i].name);
    }
    let series_ios: f64 = m.series.iter().map(|s| s.iops).sum();
    assert!((series_ios - m.ios as f64).abs() < 1e-6, "series adds up");

    let mut one = Recorder::new(&classes(), 3, start);
    feed(&mut one, &a);
    feed(&mut one, &b);
    let (oc, _, _) = one.finish(Duration::from_secs(7));
    assert_eq!(m.classes, oc, "percentiles as from one histogram");

    let nfs = m.nfs.as_deref().unwrap();
    assert_eq!(nfs.servers.len(), 1);
    assert_eq!(nfs.files.len(), 1);
    assert_eq!(nfs.stats.calls[0].calls, 20);
    assert_eq!(nfs.events.len(), 2);
    assert_eq!(nfs.events[0].what, "down: rank 1", "oldest first");
    assert_eq!(m.labels.len(), 1, "only labels all runs share");
    assert_eq!(m.labels["config"], "oltp");
}

#[test]
fn merging_needs_raw_recorders() {
    assert_eq!(merge_runs(&[]), Err(RawError::NoRuns));
    let rec = Recorder::new(&classes(), 1, Instant::now());
    let mut r = run_of(&rec, 1.0, "0");
    r.raw = None;
    let ok = run_of(&rec, 1.0, "1");
    assert_eq!(merge_runs(&[ok, r]), Err(RawError::NoRaw { index: 1 }));
}

#[test]
fn malformed_raw_recorders_are_refused() {
    let mut rec = Recorder::new(&classes(), 1, Instant::now());
    feed(&mut rec, &samples(10, 5));
    let good = rec.to_raw();
    let broken = |f: &dyn Fn(&mut RawClass)| {
        let mut raw = good.clone();
        f(&mut raw.classes[0]);
        Recorder::from_raw(&raw).err().expect("refused").to_string()
    };
    assert!(broken(&|c| c.hdr.sigfig = 5).contains("bounds"));
    assert!(broken(&|c| c.hdr.counts.push_str(" x")).contains("token"));
    assert!(broken(&|c| c.hdr.counts.push_str(" 99999999999999")).contains("range"));
    assert!(
        broken(&|c| c.hdr.counts = "60000000000 18446744073709551615".into()).contains("overflow")
    );
    assert!(broken(&|c| c.ios += 1).contains("holds"));
    assert!(broken(&|c| c.pow2 = vec![0; 41]).contains("buckets"));
    let mut raw = good.clone();
    let before = raw.clone();
    let mut bad = good.clone();
    bad.classes[0].hdr.counts = "x".into();
    assert!(raw.merge(&bad).is_err());
    assert_eq!(raw, before, "a failed merge changes nothing");
}
