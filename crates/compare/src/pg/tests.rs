use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::*;

pub(crate) fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, PgSetting> {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                PgSetting {
                    setting: v.to_string(),
                    unit: None,
                },
            )
        })
        .collect()
}

fn snapshot(at: f64, views: Vec<(&str, Vec<Value>)>) -> PgSnapshot {
    PgSnapshot {
        taken_at: at,
        postmaster_start: "2026-11-27 07:00:00+00".into(),
        views: views.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        sched: None,
        host: None,
        relations: Vec::new(),
    }
}

/// A PostgreSQL 15 capture of 100 s: 50,000 reads taking 25 s, 2,000 WAL flushes.
pub(crate) fn pg15() -> PgCapture {
    let db = |read: u64, time: f64, temp: u64| {
        vec![
            json!({"datid": "0", "datname": null, "blks_read": 10, "blk_read_time": 1.0,
                   "numbackends": 0, "temp_bytes": 0, "stats_reset": null}),
            json!({"datid": "5", "datname": "postgres", "blks_read": read,
                   "blk_read_time": time, "numbackends": 4, "temp_bytes": temp,
                   "stats_reset": null}),
        ]
    };
    let wal = |w: u64, s: u64, wt: f64, st: f64, b: u64| {
        vec![json!({"wal_write": w, "wal_sync": s, "wal_write_time": wt,
                    "wal_sync_time": st, "wal_bytes": b,
                    "stats_reset": "2026-11-27T07:00:00+00:00"})]
    };
    let bgw = |ck: u64, cl: u64, be: u64| {
        vec![
            json!({"buffers_checkpoint": ck, "buffers_clean": cl, "buffers_backend": be,
                    "buffers_backend_fsync": 0, "checkpoints_timed": 0,
                    "checkpoints_req": 0, "stats_reset": "2026-11-27T07:00:00+00:00"}),
        ]
    };
    PgCapture {
        kind: CAPTURE_KIND.into(),
        format: CAPTURE_FORMAT,
        server: "PostgreSQL 15.8 (Debian 15.8-0+deb12u1) on x86_64-pc-linux-gnu".into(),
        server_version_num: 150_008,
        target: "127.0.0.1:5432/postgres".into(),
        database_bytes: [("postgres".to_string(), 1u64 << 30)].into(),
        settings: settings(&[
            ("block_size", "8192"),
            ("wal_block_size", "8192"),
            ("wal_sync_method", "fdatasync"),
            ("track_io_timing", "on"),
            ("track_wal_io_timing", "on"),
        ]),
        sessions: Sessions {
            max: 4,
            mean: 3.9,
            max_active: 4,
            samples: 100,
        },
        begin: snapshot(
            1000.0,
            vec![
                ("pg_stat_database", db(1_000, 500.0, 0)),
                ("pg_stat_wal", wal(100, 100, 10.0, 90.0, 1_000_000)),
                ("pg_stat_bgwriter", bgw(0, 0, 0)),
            ],
        ),
        end: snapshot(
            1100.0,
            vec![
                ("pg_stat_database", db(51_000, 25_500.0, 0)),
                // 2,000 flushes of 5,000,000 bytes: 2,500 bytes each, one 8 KiB block.
                ("pg_stat_wal", wal(2_100, 2_100, 210.0, 1_890.0, 6_000_000)),
                ("pg_stat_bgwriter", bgw(700, 200, 100)),
            ],
        ),
    }
}

#[test]
fn pg15_model_takes_each_figure_from_its_view() {
    let m = model_of(&pg15(), "c.json").unwrap();
    let read = m.class("single-block-read").unwrap();
    assert_eq!(read.event, READ_EVENT);
    assert_eq!(read.rate, 500.0);
    assert_eq!(read.size, 8192);
    // 25,000 ms over 50,000 reads.
    assert_eq!(read.production_mean_us, Some(500.0));
    assert!(read.source.contains("blks_read 50000"), "{}", read.source);
    let wal = m.class("redo-write").unwrap();
    assert_eq!(wal.rate, 20.0);
    assert_eq!(wal.size, 8192);
    // (200 + 1,800) ms over 2,000 syncs.
    assert_eq!(wal.production_mean_us, Some(1000.0));
    assert_eq!(wal.flush.as_deref(), Some("fdatasync"));
    assert_eq!(wal.buffered, Some(true));
    let w = m.class("dbwr-write").unwrap();
    assert_eq!(w.rate, 10.0);
    assert_eq!(w.production_mean_us, None);
    assert!(w.mean_source.as_deref().unwrap().starts_with("not judged"));
    assert_eq!(m.users, Some(4));
    assert_eq!(m.outstanding, Some(1));
    assert_eq!(m.engine.as_deref(), Some("psync"));
    assert!(m.service_time);
    assert_eq!(m.dataset_bytes, Some(1 << 30));
    assert!(m.notes.iter().any(|n| n.contains("extends")));
    // 15 without debug_io_direct reads through the page cache, and says how to replay it.
    assert!(m.data_buffered);
    assert!(m.notes.iter().any(|n| n.contains("--page-cache")));
    // The model is one a replay can run, and saves and loads as TOML.
    m.check().unwrap();
    let back = crate::replay::WorkloadModel::from_toml(&m.to_toml(), "m.toml").unwrap();
    assert_eq!(back, m);
}

#[test]
fn timing_off_keeps_rates_and_says_why_latency_is_missing() {
    let mut c = pg15();
    c.settings = settings(&[("track_io_timing", "off"), ("track_wal_io_timing", "off")]);
    let m = model_of(&c, "c.json").unwrap();
    let read = m.class("single-block-read").unwrap();
    assert_eq!(read.rate, 500.0);
    assert_eq!(read.production_mean_us, None);
    assert!(read
        .mean_source
        .as_deref()
        .unwrap()
        .contains("track_io_timing was off"));
    let wal = m.class("redo-write").unwrap();
    assert_eq!(wal.production_mean_us, None);
    assert!(wal
        .mean_source
        .as_deref()
        .unwrap()
        .contains("track_wal_io_timing was off"));
}

#[test]
fn a_reset_or_restart_between_snapshots_is_refused() {
    let mut c = pg15();
    c.end.views.get_mut("pg_stat_wal").unwrap()[0]["stats_reset"] =
        json!("2026-11-27T07:01:00+00:00");
    let e = model_of(&c, "c.json").unwrap_err();
    assert!(
        e.to_string().starts_with("pg_stat_wal was reset between"),
        "{e}"
    );

    let mut c = pg15();
    c.end.postmaster_start = "2026-11-27 07:00:30+00".into();
    let e = model_of(&c, "c.json").unwrap_err();
    assert!(matches!(e, CaptureError::Restarted { .. }), "{e}");

    // pg_stat_reset() leaves stats_reset on the database row; the counters fall.
    let mut c = pg15();
    c.end.views.get_mut("pg_stat_database").unwrap()[1]["blks_read"] = json!(3);
    let e = model_of(&c, "c.json").unwrap_err();
    assert!(e.to_string().contains("blks_read went down"), "{e}");

    let mut c = pg15();
    c.end.taken_at = c.begin.taken_at;
    assert!(matches!(
        model_of(&c, "c.json").unwrap_err(),
        CaptureError::Order { .. }
    ));

    let mut c = pg15();
    c.server_version_num = 130_011;
    c.server = "PostgreSQL 13.11".into();
    let e = model_of(&c, "c.json").unwrap_err();
    assert!(e.to_string().contains("older than 14"), "{e}");
}

/// pg_stat_io rows of a PostgreSQL 18 server: relation reads with their bytes and WAL
/// rows (object wal).
fn io_rows(
    reads: u64,
    read_bytes: u64,
    read_ms: f64,
    wal: (u64, u64, u64, f64, f64),
) -> Vec<Value> {
    let (writes, fsyncs, bytes, wt, ft) = wal;
    // Checkpointer writes and fsyncs and backend extends, from the end snapshot on.
    let k = u64::from(reads > 0);
    vec![
        json!({"backend_type": "client backend", "object": "relation", "context": "normal",
               "reads": reads, "read_bytes": read_bytes, "read_time": read_ms,
               "writes": 0, "extends": 10 * k, "fsyncs": null,
               "stats_reset": "2026-11-27T07:00:00+00:00"}),
        json!({"backend_type": "checkpointer", "object": "relation", "context": "normal",
               "reads": 0, "read_bytes": 0, "read_time": 0.0, "writes": 90 * k,
               "extends": null, "fsyncs": 5 * k, "stats_reset": "2026-11-27T07:00:00+00:00"}),
        json!({"backend_type": "client backend", "object": "wal", "context": "normal",
               "reads": null, "writes": writes, "write_bytes": bytes, "write_time": wt,
               "fsyncs": fsyncs, "fsync_time": ft,
               "stats_reset": "2026-11-27T07:00:00+00:00"}),
    ]
}

#[test]
fn pg18_reads_sizes_from_bytes_and_wal_from_pg_stat_io() {
    let mut c = pg15();
    c.server = "PostgreSQL 18.1 on x86_64-pc-linux-gnu".into();
    c.server_version_num = 180_001;
    c.settings = settings(&[
        ("block_size", "8192"),
        ("wal_sync_method", "fdatasync"),
        ("track_io_timing", "on"),
        ("track_wal_io_timing", "on"),
        ("io_method", "worker"),
        ("debug_io_direct", "data,wal"),
    ]);
    c.begin.views = [(
        "pg_stat_io".to_string(),
        io_rows(0, 0, 0.0, (0, 0, 0, 0.0, 0.0)),
    )]
    .into();
    // 1,000 reads of 16 KiB; 500 WAL writes and 400 fsyncs of 4 MiB written.
    c.end.views = [(
        "pg_stat_io".to_string(),
        io_rows(1_000, 16_384_000, 300.0, (500, 400, 4 << 20, 100.0, 700.0)),
    )]
    .into();
    let m = model_of(&c, "c.json").unwrap();
    let read = m.class("multiblock-read").unwrap();
    assert_eq!(read.size, 16384);
    assert_eq!(read.rate, 10.0);
    assert_eq!(read.production_mean_us, Some(300.0));
    let wal = m.class("redo-write").unwrap();
    assert_eq!(wal.rate, 4.0);
    // 10,485.76 bytes per flush: two 8 KiB blocks.
    assert_eq!(wal.size, 16384);
    assert_eq!(wal.production_mean_us, Some(2000.0));
    assert_eq!(wal.buffered, Some(false));
    assert!(wal.source.contains("object wal"), "{}", wal.source);
    // Checkpointer writes and backend extends, as load.
    assert_eq!(m.class("dbwr-write").unwrap().rate, 1.0);
    assert!(m.not_replayed.iter().any(|n| n.starts_with("DataFileSync")));
    assert!(m.notes.iter().any(|n| n.contains("io_method worker")));
    // Reads handed to PostgreSQL's default three I/O workers.
    assert_eq!(m.io_workers, Some(3));
    assert!(!m.data_buffered, "debug_io_direct=data reads O_DIRECT");
    assert!(!m.notes.iter().any(|n| n.contains("--page-cache")));
    m.check().unwrap();
}

#[test]
fn open_datasync_counts_each_write_as_a_flush() {
    let mut c = pg15();
    c.settings.get_mut("wal_sync_method").unwrap().setting = "open_datasync".into();
    for s in [&mut c.begin, &mut c.end] {
        s.views.get_mut("pg_stat_wal").unwrap()[0]["wal_sync"] = json!(0);
        s.views.get_mut("pg_stat_wal").unwrap()[0]["wal_sync_time"] = json!(0.0);
    }
    let m = model_of(&c, "c.json").unwrap();
    let wal = m.class("redo-write").unwrap();
    assert_eq!(wal.rate, 20.0);
    assert_eq!(wal.flush.as_deref(), Some("dsync"));
    // 200 ms of writes over 2,000.
    assert_eq!(wal.production_mean_us, Some(100.0));
}

#[test]
fn capture_files_are_told_from_reports() {
    let text = serde_json::to_string_pretty(&pg15()).unwrap();
    assert!(is_capture(&text));
    assert!(!is_capture("WORKLOAD REPOSITORY report for"));
    assert_eq!(read(&text, "c.json").unwrap(), pg15());
    let e = read("{\"kind\": \"dbio-pg-capture\"}", "c.json").unwrap_err();
    assert!(e.starts_with("c.json: missing field"), "{e}");
}
