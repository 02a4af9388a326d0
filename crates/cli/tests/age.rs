//! `dbio age` on loop file systems it makes itself: copy-on-write aging
//! shows in the extents, and nothing (loop device, mount, image) is left
//! behind, also after a Ctrl-C. Needs root and mkfs.btrfs / mkfs.ext4:
//! skipped without them, failing under DBIO_REQUIRE_PEERS=1.

mod loopfs;
mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use loopfs::can_make;
use support::s;

/// Waits for `child` at most `limit`; kills it and fails after that.
fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dbio age took longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// No loop device on an image under `dir`, no mount under it, and nothing
/// in it but the result files.
fn nothing_left(dir: &Path, results: &[&str]) {
    let o = Command::new("losetup").arg("-a").output().unwrap();
    let loops = String::from_utf8_lossy(&o.stdout);
    assert!(!loops.contains(s(dir)), "loop device left behind: {loops}");
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(s(dir)), "mount left behind: {mounts}");
    let mut left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !results.contains(&n.as_str()))
        .collect();
    left.sort();
    assert!(left.is_empty(), "left in {}: {left:?}", dir.display());
}

fn report_reads(json: &Path) -> String {
    let o = support::dbio(&["report", s(json)]);
    assert!(o.status.success(), "dbio report: {o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Two rounds of 3,000 random 8 KiB writes: btrfs (copy on write) ends
/// with far more extents per data file than ext4, which overwrites in place.
#[test]
fn btrfs_ages_into_far_more_extents_than_ext4_and_nothing_is_left() {
    if !can_make("btrfs") || !can_make("ext4") {
        return;
    }
    let dir = support::scratch();
    let json = dir.path().join("age.json");
    let csv = dir.path().join("age.csv");
    let html = dir.path().join("age.html");
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args([
            "age",
            "--fs",
            "btrfs,ext4",
            "--fill",
            "50",
            "--size",
            "64MiB",
            "--rounds",
            "2",
            "--updates",
            "3000",
            "--measure-time",
            "1s",
            "--dir",
            s(dir.path()),
            "--json",
            s(&json),
            "--csv",
            s(&csv),
            "--html",
            s(&html),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let st = wait_bounded(&mut child, Duration::from_secs(60));
    assert!(st.success(), "dbio age: {st:?}\n{out}");
    assert!(out.contains("slowdown"), "{out}");
    let v = support::json(&json);
    assert_eq!(v["kind"], "age");
    assert_eq!(v["interrupted"], false);
    let series = v["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    let last_extents = |i: usize| {
        let pts = series[i]["points"].as_array().unwrap();
        assert_eq!(pts.len(), 3, "rounds 0, 1, 2: {pts:?}");
        assert_eq!(pts[2]["updates"].as_u64(), Some(6000));
        assert!(pts[2]["read_mean_us"].as_f64().unwrap() > 0.0);
        assert!(pts[2]["redo_mean_us"].as_f64().unwrap() > 0.0);
        assert!(pts[2]["scan_mbps"].as_f64().unwrap() > 0.0);
        pts[2]["extents_per_file"].as_f64().unwrap()
    };
    assert_eq!(series[0]["fs"], "btrfs");
    assert_eq!(series[1]["fs"], "ext4");
    let (btrfs, ext4) = (last_extents(0), last_extents(1));
    eprintln!("after 6,000 random 8 KiB writes: btrfs {btrfs} extents per file, ext4 {ext4}");
    assert!(btrfs >= 500.0, "btrfs: {btrfs}");
    assert!(ext4 <= 10.0, "ext4: {ext4}");
    assert!(btrfs >= 20.0 * ext4);
    for s in series {
        let fill = s["fill_measured_pct"].as_f64().unwrap();
        assert!((45.0..70.0).contains(&fill), "fill {fill}%");
    }
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv_text.lines().count(), 1 + 2 * 3, "{csv_text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Extents per data file against rounds"));
    assert!(report_reads(&json).contains("btrfs"));
    nothing_left(dir.path(), &["age.json", "age.csv", "age.html"]);
}

/// SIGINT once round 1 is reported: partial results marked interrupted,
/// readable by `dbio report`, and nothing left behind.
#[test]
fn an_interrupted_age_writes_partial_results_and_leaves_nothing() {
    if !can_make("btrfs") {
        return;
    }
    let dir = support::scratch();
    let json = dir.path().join("age.json");
    let mut child = support::spawn(&[
        "age",
        "--fs",
        "btrfs",
        "--fill",
        "50",
        "--size",
        "64MiB",
        "--rounds",
        "1000",
        "--updates",
        "2000",
        "--measure-time",
        "1s",
        "--dir",
        s(dir.path()),
        "--json",
        s(&json),
    ]);
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let t0 = Instant::now();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen += &line;
        if line.contains("round 1/") {
            assert_eq!(support::signal(&child, libc::SIGINT), 0);
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{seen}");
    }
    assert!(seen.contains("round 1/"), "{seen}");
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let st = wait_bounded(&mut child, Duration::from_secs(60));
    assert_eq!(st.code(), Some(130), "{seen}{rest}");
    let v = support::json(&json);
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["stop_reason"], "interrupted by signal");
    let pts = v["series"][0]["points"].as_array().unwrap();
    assert!(
        (2..=3).contains(&pts.len()),
        "rounds 0 and 1 (maybe 2): {pts:?}"
    );
    assert!(report_reads(&json).contains("INTERRUPTED"));
    nothing_left(dir.path(), &["age.json"]);
}

/// A directory on tmpfs is refused before anything is made.
#[test]
fn a_dir_in_memory_is_refused() {
    let Some(shm) = ["/dev/shm", "/run"].iter().map(Path::new).find(|p| {
        p.is_dir()
            && std::fs::read_to_string("/proc/mounts").is_ok_and(|m| {
                m.lines()
                    .any(|l| l.split(' ').nth(1) == p.to_str() && l.contains(" tmpfs "))
            })
    }) else {
        eprintln!("skipped: no tmpfs at /dev/shm or /run");
        return;
    };
    if !can_make("ext4") {
        return;
    }
    let o = support::dbio(&["age", "--fs", "ext4", "--dir", s(shm), "--rounds", "1"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tmpfs"), "{err}");
}

/// `--target`: the user's own file system, no root needed; the data set
/// goes into a new directory that is removed at the end.
#[test]
fn age_on_the_users_own_directory_leaves_it_as_it_was() {
    let dir = support::scratch();
    let out = support::scratch();
    let json = out.path().join("own.json");
    let o = support::dbio(&[
        "age",
        "--target",
        s(dir.path()),
        "--rounds",
        "1",
        "--updates",
        "500",
        "--dataset",
        "4MiB",
        "--measure-time",
        "200ms",
        "--json",
        s(&json),
    ]);
    assert!(o.status.success(), "{o:?}");
    let v = support::json(&json);
    assert_eq!(v["own_target"], true);
    let pts = v["series"][0]["points"].as_array().unwrap();
    assert_eq!(pts.len(), 2);
    assert_eq!(pts[1]["updates"].as_u64(), Some(500));
    nothing_left(dir.path(), &[]);
}
