//! A PostgreSQL 15 capture to test with, here and in the crates that read captures
//! (dbio-compare's tests, through the `fixtures` feature).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{PgCapture, PgSetting, PgSnapshot, Sessions, CAPTURE_FORMAT, CAPTURE_KIND};

pub fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, PgSetting> {
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

pub fn snapshot(at: f64, views: Vec<(&str, Vec<Value>)>) -> PgSnapshot {
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
pub fn pg15() -> PgCapture {
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
