//! What the tests that run the `dbio` binary share: running it, scratch
//! directories on the build's disk, and reading its JSON results.

// Each test file uses only some of these.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

pub mod device_proxy;
pub mod mariadb_lab;
pub mod pg_lab;
pub mod pnfs_lab;
pub mod stall;

use serde_json::Value;

/// Runs `dbio` to the end.
pub fn dbio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(args)
        .output()
        .expect("run dbio")
}

/// Starts `dbio` with stderr piped and stdout discarded.
pub fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn dbio")
}

/// Sends `sig` to `child`; kill(2)'s return value.
pub fn signal(child: &Child, sig: i32) -> i32 {
    // SAFETY: plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, sig) }
}

/// A scratch directory on the disk that holds the build (not a tmpfs
/// /tmp, where older kernels refuse O_DIRECT).
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch directory")
}

/// A results file, parsed.
pub fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("result file")).expect("valid JSON")
}

/// A path as an argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `dbio run ARGS`, which must succeed, and returns the results file
/// named by its `--json`.
pub fn run_ok(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .arg("run")
        .args(args)
        .output()
        .expect("run dbio");
    assert!(
        out.status.success(),
        "dbio run {args:?}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let at = args
        .iter()
        .position(|a| *a == "--json")
        .expect("--json given");
    json(Path::new(args[at + 1]))
}

/// The pair of a comparison's JSON for `config` and `metric`.
pub fn pair<'a>(cmp: &'a Value, config: &str, metric: &str) -> &'a Value {
    cmp["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["config"] == config && p["metric"] == metric)
        .unwrap_or_else(|| panic!("no pair {config} {metric}: {cmp}"))
}

/// A snapshot of a PostgreSQL 15 server's statistics views at `at` s, as `dbio pg
/// snapshot` writes it: relation reads with their time (ms), WAL writes and syncs
/// (`flushes` of each) with the syncs' time, and `backends` sessions.
pub fn pg15_snapshot(
    at: f64,
    reads: u64,
    read_ms: f64,
    flushes: u64,
    flush_ms: f64,
    backends: u32,
) -> Value {
    serde_json::json!({
        "taken_at": at,
        "postmaster_start": "2026-11-27 07:00:00+00",
        "views": {
            "pg_stat_database": [{
                "datid": "5", "datname": "postgres", "blks_read": reads,
                "blk_read_time": read_ms, "numbackends": backends, "temp_bytes": 0,
                "stats_reset": null
            }],
            "pg_stat_wal": [{
                "wal_write": flushes, "wal_sync": flushes, "wal_write_time": 0.0,
                "wal_sync_time": flush_ms, "wal_bytes": flushes * 4000,
                "stats_reset": "2026-11-27T07:00:00+00:00"
            }]
        }
    })
}
