use serde_json::{json, Value};

use super::fixtures::{pg15, settings};
use super::*;

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
    let back = crate::model::WorkloadModel::from_toml(&m.to_toml(), "m.toml").unwrap();
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
