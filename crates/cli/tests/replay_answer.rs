//! `dbio replay`'s one answer on a PostgreSQL capture replayed for real against a
//! scratch directory, and `dbio report` rendering that replay's JSON again (and every
//! other kind dbio writes, or one line saying what a file is instead).

mod support;

use std::path::Path;

use dbio_sources::pg::PgCapture;
use serde_json::json;
use support::{dbio, json, s, scratch};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A capture of 30 s by 2 sessions: 200 reads a second of `read_us` each, and one WAL
/// flush of 1 ms in the whole window.
fn capture(path: &Path, read_us: f64) {
    let setting = |v: &str| json!({ "setting": v });
    let reads = 6000u64;
    let v = json!({
        "kind": "dbio-pg-capture",
        "format": 1,
        "server": "PostgreSQL 15.8 on x86_64-pc-linux-gnu",
        "server_version_num": 150008,
        "target": "127.0.0.1:5432/postgres",
        "database_bytes": { "postgres": 16u64 << 20 },
        "settings": {
            "block_size": setting("8192"),
            "wal_sync_method": setting("fdatasync"),
            "track_io_timing": setting("on"),
            "track_wal_io_timing": setting("on"),
        },
        "sessions": { "max": 2, "mean": 2.0, "max_active": 2, "samples": 30 },
        "begin": support::pg15_snapshot(1000.0, 0, 0.0, 0, 0.0, 2),
        "end": support::pg15_snapshot(1030.0, reads, reads as f64 * read_us / 1000.0, 1, 1.0, 2),
    });
    let c: PgCapture = serde_json::from_value(v).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
}

/// `dbio replay CAP` for 2 s a step at `scales` on buffered files in `dir`, writing
/// `out`: (exit code, stdout, stderr).
/// The replays of this file run real I/O and are judged by their latency across
/// scales; one at a time, so that a neighbour's replay does not take the CPU one
/// scale's reads wait for (2 cores).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn replay(dir: &Path, cap: &Path, scales: &str, out: &Path) -> (i32, String, String) {
    let o = dbio(&[
        "replay",
        s(cap),
        "--target",
        s(&dir.join("ds")),
        "--buffered",
        "--time",
        "2s",
        "--scale",
        scales,
        "--seed",
        "3",
        "--json",
        s(out),
    ]);
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

/// The first line of the replay's report proper (after the model and a blank line).
fn first_report_line(stdout: &str) -> &str {
    let at = stdout
        .find("\n\n")
        .unwrap_or_else(|| panic!("no report: {stdout}"));
    stdout[at..].trim_start().lines().next().unwrap()
}

#[test]
fn reads_slower_than_production_answer_no_first_and_exit_3() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let cap = dir.path().join("cap.json");
    // 100 ns a read: no read of 8 KiB through a system call is that fast.
    capture(&cap, 0.1);
    let out = dir.path().join("r.json");
    let (code, stdout, stderr) = replay(dir.path(), &cap, "1", &out);
    assert_eq!(code, 3, "{stdout}{stderr}");
    let r = json(&out);
    assert_eq!(r["answer"], "no", "{}", r["verdict"]);
    let verdict = r["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with("No: at 1.0x production's load, DataFileRead is ")
            && verdict.contains("x slower than production (")
            && verdict.ends_with(" against 0.1 µs)"),
        "{verdict}"
    );
    assert_eq!(first_report_line(&stdout), verdict, "{stdout}");
    // The lone flush is named with its count and decides nothing.
    let wal = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == "WALWrite+WALSync")
        .expect("the WAL replayed");
    assert_eq!(wal["too_few"], "1 flush in 30 s");
    assert!(
        stdout.contains("WALWrite+WALSync: 1 flush in 30 s: too few to judge"),
        "{stdout}"
    );
    assert!(r["slo"]
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["slo"]["class"] != "redo-write"));
}

#[test]
fn a_replay_served_answers_yes_and_dbio_report_renders_its_json_again() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let cap = dir.path().join("cap.json");
    // A second a read: any storage is faster.
    capture(&cap, 1e6);
    let out = dir.path().join("r.json");
    let (code, stdout, stderr) = replay(dir.path(), &cap, "1,1.5", &out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let r = json(&out);
    let verdict = r["verdict"].as_str().unwrap();
    assert_eq!(r["answer"], "yes", "{verdict}");
    assert_eq!(
        verdict,
        "Yes: serves production's load up to 1.5x, the largest tried, with every event \
         within production's latency; too few I/Os to judge: WALWrite+WALSync, 1 flush in 30 s"
    );
    assert_eq!(r["serves_up_to"], 1.5);
    // Rendered again: the same answer first, the page with its charts, the JSON as it was.
    let (html, md, again) = (
        dir.path().join("r.html"),
        dir.path().join("r.md"),
        dir.path().join("again.json"),
    );
    let o = dbio(&[
        "report",
        s(&out),
        "--html",
        s(&html),
        "--md",
        s(&md),
        "--json",
        s(&again),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let printed = text(&o.stdout);
    assert_eq!(printed.trim_start().lines().next(), Some(verdict));
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&out).unwrap()
    );
    let page = std::fs::read_to_string(&html).unwrap();
    let body = &page[page.find("</h1>").unwrap()..];
    assert!(body.contains("color:#2e7d32\">Yes: serves"), "{body}");
    assert!(page.contains("Mean latency per event at 1.00x"), "{page}");
    assert!(page.contains("The ramp: each event"), "{page}");
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .starts_with(&format!("# dbio replay\n\n**{verdict}**")));
    // A replay has no CSV: refused in one line before anything is written.
    let o = dbio(&["report", s(&out), "--csv", s(&dir.path().join("r.csv"))]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim_end(),
        "dbio: --csv: a replay has JSON, Markdown and HTML forms"
    );
    // The capture is no result: said in one line, with what takes it.
    let o = dbio(&["report", s(&cap)]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains("a PostgreSQL capture (`dbio pg capture`)")
            && e.contains("dbio report takes run, calibrate, age, matrix, comparison and replay"),
        "{e}"
    );
}

#[test]
fn dbio_report_renders_a_comparison_and_a_matrix() {
    let dir = scratch();
    let run = |name: &str| {
        let p = dir.path().join(format!("{name}.json"));
        let o = dbio(&[
            "run",
            "--engine",
            "null",
            "--target",
            s(&dir.path().join("ds")),
            "--size",
            "16MiB",
            "--workload",
            "single-block-read",
            "--time",
            "300ms",
            "--label",
            &format!("config={name}"),
            "--json",
            s(&p),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        p
    };
    let (a, b) = (run("a"), run("b"));
    let cmp = dir.path().join("cmp.json");
    let o = dbio(&["compare", s(&a), s(&b), "--json", s(&cmp)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let html = dir.path().join("cmp.html");
    let o = dbio(&["report", s(&cmp), "--html", s(&html)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("<title>dbio comparison</title>"));
    let m = dir.path().join("m.json");
    let o = dbio(&[
        "matrix",
        "--buffered",
        "--target",
        s(&dir.path().join("ds")),
        "--size",
        "16MiB",
        "--num-small",
        "1",
        "--num-large",
        "1",
        "--time-per-point",
        "200ms",
        "--json",
        s(&m),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = dir.path().join("m.md");
    let o = dbio(&["report", s(&m), "--md", s(&md)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&md).unwrap(),
        dbio_report::matrix::matrix_markdown(&serde_json::from_value(json(&m)).unwrap())
    );
}
