//! `dbio run --verify` and `dbio verify`: healthy storage verifies clean;
//! damage done behind dbio's back (a flipped byte, a block copied over
//! another, an old copy put back) is found and named; kill -9 and
//! SIGINT/SIGTERM at any moment leave a data set that verifies and a
//! results file that says it is partial. Direct-path writes verify too.

mod support;

use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{dbio, json, s, scratch, signal, spawn};

const BS: u64 = 8192;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A verified update-heavy run on a small data set (one 8 MiB data file).
fn verified_run(dir: &Path, json: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--target",
        s(dir),
        "--size",
        "8MiB",
        "--profile",
        "mixed",
        "--update-pct",
        "60",
        "--users",
        "2",
        "--outstanding",
        "4",
        "--verify",
        "--json",
        s(json),
    ];
    args.extend_from_slice(extra);
    dbio(&args)
}

fn verify_of(results: &Path) -> Value {
    json(results)["verify"].clone()
}

fn data_file(dir: &Path) -> PathBuf {
    dir.join("dbio-data-01.dbf")
}

fn read_block(path: &Path, block: u64) -> Vec<u8> {
    let mut b = vec![0u8; BS as usize];
    fs::File::open(path)
        .unwrap()
        .read_exact_at(&mut b, block * BS)
        .unwrap();
    b
}

fn write_block(path: &Path, block: u64, data: &[u8]) {
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(data, block * BS).unwrap();
    f.sync_all().unwrap();
}

/// `dbio verify` exit code and output.
fn verify(dir: &Path) -> (i32, String) {
    let o = dbio(&["verify", s(dir)]);
    (o.status.code().unwrap_or(-1), text(&o))
}

/// Direct-path writes (1 MiB, several blocks each) stamp every block they
/// write: the single-block reads beside them and the final pass find each
/// block as last written, and `dbio verify` agrees.
#[test]
fn direct_writes_verify_clean() {
    let tmp = scratch();
    let (dir, json_out) = (tmp.path().join("ds"), tmp.path().join("v.json"));
    let o = dbio(&[
        "run",
        "--target",
        s(&dir),
        "--size",
        "8MiB",
        "--workload",
        "single-block-read,direct-write",
        "--scan-pct",
        "30",
        "--users",
        "2",
        "--outstanding",
        "4",
        "--verify",
        "--loops",
        "1000",
        "--json",
        s(&json_out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = json(&json_out);
    let class = |name: &str| {
        r["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["class"] == name)
            .unwrap_or_else(|| panic!("no {name}: {r}"))
            .clone()
    };
    let w = class("direct-write");
    assert!(w["ios"].as_u64().unwrap() > 100, "{w}");
    assert_eq!(w["wait_event"], "direct path write", "{w}");
    assert!(class("single-block-read")["ios"].as_u64().unwrap() > 100);
    let v = &r["verify"];
    for k in ["lost", "torn", "misdirected", "checksum"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
    assert_eq!(v["final_pass_complete"], true);
    let (code, out) = verify(&dir);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("lost 0, torn 0, misdirected 0, checksum 0"),
        "{out}"
    );
}

#[test]
fn healthy_run_counts_nothing_and_verify_exits_zero() {
    let tmp = scratch();
    let (dir, json) = (tmp.path().join("ds"), tmp.path().join("v.json"));
    let o = verified_run(&dir, &json, &["--loops", "3000"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = verify_of(&json);
    for k in ["lost", "torn", "misdirected", "checksum"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
    assert_eq!(v["final_pass_complete"], true);
    assert!(v["blocks_checked"].as_u64().unwrap() > v["final_pass_blocks"].as_u64().unwrap());
    let out = text(&o);
    assert!(out.contains("Data verification"), "{out}");
    let (code, out) = verify(&dir);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("lost 0, torn 0, misdirected 0, checksum 0"),
        "{out}"
    );
    // Data sets and the map are owner-only.
    for name in [
        "",
        "dbio-data-01.dbf",
        "dbio-verify.map",
        "dbio-dataset.json",
    ] {
        let mode = fs::metadata(dir.join(name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "{name} is {mode:o}");
    }
}

#[test]
fn flipped_byte_copied_block_and_old_copy_are_each_named() {
    let tmp = scratch();
    let (dir, json) = (tmp.path().join("ds"), tmp.path().join("v.json"));
    let o = verified_run(&dir, &json, &["--loops", "10"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let file = data_file(&dir);
    let before: Vec<Vec<u8>> = (0..1024).map(|b| read_block(&file, b)).collect();
    let o = verified_run(&dir, &json, &["--loops", "4000"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(verify(&dir).0, 0);

    // A corrupted byte in the middle of block 100.
    let mut b = read_block(&file, 100);
    b[3000] ^= 0x40;
    write_block(&file, 100, &b);
    let (code, out) = verify(&dir);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("checksum 1"), "{out}");
    assert!(
        out.contains("dbio-data-01.dbf block 100: checksum"),
        "{out}"
    );
    b[3000] ^= 0x40;
    write_block(&file, 100, &b);
    assert_eq!(verify(&dir).0, 0);

    // Block 200 copied over block 300.
    let b200 = read_block(&file, 200);
    let b300 = read_block(&file, 300);
    write_block(&file, 300, &b200);
    let (code, out) = verify(&dir);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("misdirected 1"), "{out}");
    assert!(
        out.contains("block 300: misdirected (holds block 200"),
        "{out}"
    );
    write_block(&file, 300, &b300);

    // An old copy of a block the second run rewrote, put back.
    let changed = (1..1024u64)
        .find(|&b| read_block(&file, b) != before[b as usize])
        .expect("the run rewrote some block");
    write_block(&file, changed, &before[changed as usize]);
    let (code, out) = verify(&dir);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("lost 1"), "{out}");
    assert!(
        out.contains(&format!("block {changed}: lost (generation")),
        "{out}"
    );
}

#[test]
fn verify_refuses_what_is_not_a_verifiable_data_set() {
    let tmp = scratch();
    let o = dbio(&["verify", s(&tmp.path().join("absent"))]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("absent: cannot open the data set"),
        "{}",
        text(&o)
    );
    let o = dbio(&["verify", s(tmp.path())]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("not a dbio data set"), "{}", text(&o));
    // Written without --verify since: generations unknown.
    let dir = tmp.path().join("ds");
    let o = dbio(&[
        "run",
        "--target",
        s(&dir),
        "--size",
        "8MiB",
        "--loops",
        "200",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = dbio(&["verify", s(&dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no verify map"), "{}", text(&o));
    // A verify run makes it verifiable again.
    let json = tmp.path().join("v.json");
    assert_eq!(
        verified_run(&dir, &json, &["--loops", "100"]).status.code(),
        Some(0)
    );
    assert_eq!(verify(&dir).0, 0);
}

/// Waits until `child` prints a line holding `needle` on stderr; the rest
/// of stderr is drained in the background.
fn wait_line(child: &mut Child, needle: &str) {
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let needle = needle.to_string();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if line.contains(&needle) {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("phase line on stderr");
}

fn wait(child: &mut Child) -> i32 {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st.code().unwrap_or(-1);
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "dbio did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn kill_9_during_a_verify_run_leaves_no_corruption() {
    let tmp = scratch();
    let (dir, json) = (tmp.path().join("ds"), tmp.path().join("v.json"));
    assert_eq!(
        verified_run(&dir, &json, &["--loops", "10"]).status.code(),
        Some(0)
    );
    let mut in_flight = false;
    for round in 0..3 {
        let mut child = spawn(&[
            "run",
            "--target",
            s(&dir),
            "--size",
            "8MiB",
            "--profile",
            "mixed",
            "--update-pct",
            "80",
            "--users",
            "4",
            "--outstanding",
            "8",
            "--verify",
            "--time",
            "20s",
        ]);
        std::thread::sleep(Duration::from_millis(400 + 150 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        let (code, out) = verify(&dir);
        assert_eq!(code, 0, "round {round}: {out}");
        in_flight |= out.contains("had a write in flight");
    }
    // The journal was exercised: some write was in flight at a kill.
    assert!(in_flight, "no write was in flight at any kill");
    // A verify run over a killed one starts from the settled map.
    let after = verified_run(&dir, &json, &["--loops", "500"]);
    assert_eq!(
        after.status.code(),
        Some(0),
        "run after the kills: {}{}",
        String::from_utf8_lossy(&after.stdout),
        String::from_utf8_lossy(&after.stderr)
    );
}

/// Sends `sig` to a run writing its results to `results`: it exits 130 and
/// its results say they are partial.
fn interrupt(child: &mut Child, sig: i32, results: &Path, phase: &str) -> Value {
    signal(child, sig);
    assert_eq!(wait(child), 130, "phase {phase}");
    let r = json(results);
    assert_eq!(r["interrupted"], true, "{phase}: {r}");
    r
}

/// SIGINT or SIGTERM when `phase` is printed: exit 130, a results file that
/// parses and says it is partial, a data set that verifies.
fn interrupt_at(phase: &str, sig: i32, size: &str, time: &str) {
    let tmp = scratch();
    let (dir, json) = (tmp.path().join("ds"), tmp.path().join("v.json"));
    if !phase.starts_with("creating") {
        let o = dbio(&[
            "run",
            "--target",
            s(&dir),
            "--size",
            size,
            "--verify",
            "--loops",
            "10",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    let mut child = spawn(&[
        "run",
        "--target",
        s(&dir),
        "--size",
        size,
        "--profile",
        "mixed",
        "--verify",
        "--time",
        time,
        "--json",
        s(&json),
    ]);
    if phase.is_empty() {
        // In the middle of the load.
        std::thread::sleep(Duration::from_millis(700));
    } else {
        wait_line(&mut child, phase);
    }
    let r = interrupt(&mut child, sig, &json, phase);
    assert!(r["stop_reason"].as_str().unwrap().contains("interrupted"));
    if phase.starts_with("verifying") {
        assert_eq!(r["verify"]["final_pass_complete"], false, "{r}");
    }
    let (code, out) = verify(&dir);
    assert_eq!(code, 0, "{phase}: {out}");
}

#[test]
fn sigint_while_creating_the_data_set() {
    interrupt_at("creating data set", libc::SIGINT, "1GiB", "2s");
}

#[test]
fn sigterm_during_the_run() {
    interrupt_at("", libc::SIGTERM, "8MiB", "20s");
}

#[test]
fn sigint_during_the_final_verify_pass() {
    interrupt_at("verifying every block", libc::SIGINT, "1GiB", "200ms");
}

#[test]
fn sigint_while_making_content_verifiable() {
    let tmp = scratch();
    let (dir, json) = (tmp.path().join("ds"), tmp.path().join("v.json"));
    // Written without --verify: the next verify run rewrites the content.
    let o = dbio(&[
        "run",
        "--target",
        s(&dir),
        "--size",
        "1GiB",
        "--loops",
        "100",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut child = spawn(&[
        "run",
        "--target",
        s(&dir),
        "--size",
        "1GiB",
        "--verify",
        "--time",
        "5s",
        "--json",
        s(&json),
    ]);
    wait_line(&mut child, "writing verifiable content");
    interrupt(&mut child, libc::SIGINT, &json, "rewrite");
    // Half-rewritten content is marked incomplete: created again on next use.
    let (code, out) = verify(&dir);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("did not finish"), "{out}");
}
