//! `dbio compare` of PostgreSQL captures, beside each other and beside a dbio run.

mod support;

use std::path::Path;

use dbio_sources::pg::PgCapture;
use serde_json::{json, Value};
use support::{dbio, json, pair, s, scratch};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A capture of 100 s with 4 client sessions: 500 reads/s whose mean is `read_us`,
/// 20 WAL flushes/s of 1 ms each.
fn capture(read_us: f64) -> Value {
    let setting = |v: &str| json!({ "setting": v });
    json!({
        "kind": "dbio-pg-capture",
        "format": 1,
        "server": "PostgreSQL 15.8 on x86_64-pc-linux-gnu",
        "server_version_num": 150008,
        "target": "127.0.0.1:5432/postgres",
        "database_bytes": { "postgres": 1u64 << 30 },
        "settings": {
            "block_size": setting("8192"),
            "wal_sync_method": setting("fdatasync"),
            "track_io_timing": setting("on"),
            "track_wal_io_timing": setting("on"),
        },
        "sessions": { "max": 4, "mean": 3.9, "max_active": 4, "samples": 100 },
        "begin": support::pg15_snapshot(1000.0, 0, 0.0, 0, 0.0, 4),
        "end": support::pg15_snapshot(1100.0, 50_000, 50_000.0 * read_us / 1000.0, 2_000, 2_000.0, 4),
    })
}

/// Writes `v` as `dbio pg capture` does (its fields in the struct's order, kind first).
fn write(path: &Path, v: &Value) {
    let c: PgCapture = serde_json::from_value(v.clone()).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
}

/// The verdict that opens with `head`, over the lines it is wrapped on (up to the
/// table under it).
fn verdict<'a>(text: &'a str, head: &str) -> &'a str {
    let start = text
        .find(head)
        .unwrap_or_else(|| panic!("no verdict {head:?}: {text}"));
    let rest = &text[start..];
    &rest[..rest.find("\n  metric").unwrap_or(rest.len())]
}

#[test]
fn two_captures_compare_on_their_read_latency() {
    let dir = scratch();
    let (a, b) = (dir.path().join("capA.json"), dir.path().join("capB.json"));
    write(&a, &capture(500.0));
    write(&b, &capture(1000.0));
    let out = dir.path().join("cmp.json");
    let o = dbio(&["compare", s(&a), s(&b), "--json", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let verdict = verdict(&text, "capB against capA");
    assert!(verdict.contains("single-block-read latency"), "{verdict}");
    let cmp = json(&out);
    // The most sessions seen is the load.
    assert_eq!(cmp["loads"], json!([4]));
    assert_eq!(cmp["class"], "single-block-read");
    let read = pair(&cmp, "capB", "single-block-read mean_us");
    assert_eq!(read["effect"]["factor"], 0.5);
    let wal = pair(&cmp, "capB", "redo-write mean_us");
    assert_eq!(wal["effect"]["factor"], 1.0);
    assert_eq!(pair(&cmp, "capB", "iops")["effect"]["ratio"], 1.0);
}

#[test]
fn a_capture_sits_beside_a_run_of_its_load() {
    let dir = scratch();
    let cap = dir.path().join("prod/cap.json");
    write(&cap, &capture(500.0));
    let run = dir.path().join("here/run.json");
    std::fs::create_dir_all(run.parent().unwrap()).unwrap();
    let o = dbio(&[
        "run",
        "--target",
        s(&dir.path().join("ds")),
        "--engine",
        "null",
        "--workload",
        "single-block-read",
        "--users",
        "4",
        "--loops",
        "2000",
        "--json",
        s(&run),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("cmp.json");
    let o = dbio(&["compare", s(&cap), "--", s(&run), "--json", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let verdict = verdict(&text, "here against prod");
    assert!(verdict.contains("single-block-read latency"), "{verdict}");
    let cmp = json(&out);
    assert_eq!(cmp["loads"], json!([4]));
    pair(&cmp, "here", "single-block-read mean_us");
    pair(&cmp, "here", "single-block-read iops");
}

#[test]
fn a_capture_reset_between_its_snapshots_is_one_line_naming_it() {
    let dir = scratch();
    let (good, bad) = (dir.path().join("good.json"), dir.path().join("reset.json"));
    write(&good, &capture(500.0));
    let mut c = capture(500.0);
    c["end"]["views"]["pg_stat_wal"][0]["stats_reset"] = json!("2026-11-27T07:01:00+00:00");
    // Keys sorted, as another tool may write it: the kind comes late, and still counts.
    std::fs::write(&bad, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    let o = dbio(&["compare", s(&good), s(&bad)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("reset.json: pg_stat_wal was reset between"),
        "{err}"
    );
}

#[test]
fn help_names_captures() {
    let o = dbio(&["compare", "--help"]);
    assert!(o.status.success());
    // Help is wrapped to the terminal: words, not lines.
    let words = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("or PostgreSQL captures (`dbio pg capture"),
        "{words}"
    );
}
