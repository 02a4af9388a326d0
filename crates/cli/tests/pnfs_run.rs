//! `dbio run` with `version=pnfs` against the pNFS lab (scripts/pnfs-lab: GlusterFS,
//! ganesha's Gluster backend, two hosts): the I/O goes to the data server that holds
//! each file, and when the file's data moves to the other host during the run, the I/O
//! follows it (periodic layout refresh) without a failed I/O. Against the VFS ganesha,
//! which gives no layouts, the same URL goes through the metadata server and says so.
//! Skips without the lab or ganesha unless DBIO_REQUIRE_PEERS=1.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;
#[path = "../../nfs/tests/common/pnfs_lab.rs"]
mod lab;
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::pnfs_lab;

fn json(path: &str) -> Value {
    support::json(std::path::Path::new(path))
}

/// `(file, server, ios, first_s)` rows of the result's pNFS view.
fn file_servers(r: &Value) -> Vec<(String, String, u64, f64)> {
    r["nfs"]["file_servers"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    (
                        f["file"].as_str().unwrap_or("").to_string(),
                        f["server"].as_str().unwrap_or("").to_string(),
                        f["ios"].as_u64().unwrap_or(0),
                        f["first_s"].as_f64().unwrap_or(0.0),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn io_goes_to_the_data_server_and_follows_moved_data() {
    let Some(lab) = lab::Lab::start() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("pnfs.json").display().to_string();
    let url = pnfs_lab::url(&lab.host("1"), 1);
    // The data set first (one data file), so that the run's time is all I/O.
    pnfs_lab::prepare(&url, &[]);
    // Several users, each with more outstanding I/O than a data server session has
    // slots for half of: every one still reaches the data servers (more sessions).
    let many = tmp.path().join("many.json").display().to_string();
    let r = support::run_ok(&[
        "--target",
        &url,
        "--size",
        pnfs_lab::SIZE,
        "--workload",
        "single-block-read",
        "--users",
        "3",
        "--outstanding",
        "48",
        "--loops",
        "200",
        "--json",
        &many,
    ]);
    assert_eq!(r["failed_ios"], 0);
    let rows = file_servers(&r);
    assert!(
        !rows.is_empty() && rows.iter().all(|f| f.1 != "MDS"),
        "I/O through the metadata server: {rows:?}"
    );

    let file = pnfs_lab::DATA_FILE;
    // Every file on one host, so that the run meets the other only when the data
    // file moves there: a data server first named by a later layout.
    lab.place(file, &lab.holder("dbio/dbio-redo-01.log"));
    let before = lab.holder(file);

    let mut run = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args([
            "run",
            "--target",
            &url,
            "--size",
            pnfs_lab::SIZE,
            "--workload",
        ])
        .args(["single-block-read", "--users", "2", "--outstanding", "48"])
        .args(["--time", "30s", "--json", &out])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let t0 = Instant::now();
    lab.run(&["move", file]);
    eprintln!("move took {:.1} s", t0.elapsed().as_secs_f64());
    let after = lab.holder(file);
    assert_ne!(before, after, "the move left {file} on {before}");
    let st = run.wait().unwrap();
    assert!(st.success(), "dbio run failed");

    let r = json(&out);
    assert_eq!(r["failed_ios"], 0, "{}", r["nfs"]);
    let rows: Vec<_> = file_servers(&r)
        .into_iter()
        .filter(|f| f.0.ends_with("dbio-data-01.dbf"))
        .collect();
    eprintln!("{rows:?}\n{}", r["nfs"]["layout_events"]);
    // First the old holder, then the new one: both served I/O.
    let on = |host: &str| rows.iter().find(|f| f.1.starts_with(&format!("{host}:")));
    let (old, new) = (on(&before), on(&after));
    let (Some(old), Some(new)) = (old, new) else {
        panic!("I/O did not go to {before} then {after}: {rows:?}");
    };
    assert!(old.2 > 0 && new.2 > 0, "{rows:?}");
    assert!(new.3 > old.3, "{rows:?}");
    // The new holder was first named by a refresh: both users got slots on it (more
    // than one session grants), so no I/O stayed on the metadata server.
    let late = r["nfs"]["file_servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["server"] == "MDS" && f["file"].as_str().unwrap_or("").ends_with("01.dbf"))
        .filter_map(|f| f["last_s"].as_f64())
        .fold(0.0, f64::max);
    assert!(
        late < new.3 + 1.0,
        "I/O through the metadata server until {late:.1} s, after the move at {:.1} s: {rows:?}",
        new.3
    );
    let events = r["nfs"]["layout_events"].as_array().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["from"].as_str().unwrap_or("").starts_with(&before)
                && e["to"].as_str().unwrap_or("").starts_with(&after)),
        "no layout event from {before} to {after}: {events:?}"
    );
}

#[test]
fn without_layouts_io_goes_through_the_metadata_server() {
    let Some(server) = common::Server::start("pnfsmds") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mds.json").display().to_string();
    let url = format!("nfs://{}/export/dbio?version=pnfs", server.addr);
    let r = support::run_ok(&[
        "--target",
        &url,
        "--size",
        "8MiB",
        "--profile",
        "mixed",
        "--loops",
        "500",
        "--json",
        &out,
    ]);
    assert_eq!(r["failed_ios"], 0);
    assert_eq!(r["nfs"]["servers"][0]["nfs_version"], "pnfs");
    let rows = file_servers(&r);
    assert!(
        !rows.is_empty() && rows.iter().all(|f| f.1 == "MDS"),
        "{rows:?}"
    );
    let events = r["nfs"]["layout_events"].as_array().unwrap();
    assert!(
        events.iter().all(|e| e["to"] == "MDS"
            && e["why"]
                .as_str()
                .unwrap_or("")
                .contains("LAYOUTUNAVAILABLE")),
        "{events:?}"
    );
}

/// `(path, what, t_s, unix_s)` of the result's path events.
fn path_events(r: &Value) -> Vec<(String, String, f64, f64)> {
    r["nfs"]["events"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["path"].as_str().unwrap_or("").to_string(),
                        e["what"].as_str().unwrap_or("").to_string(),
                        e["t_s"].as_f64().unwrap_or(0.0),
                        e["unix_s"].as_f64().unwrap_or(0.0),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn a_data_server_that_restarts_mid_run_loses_no_io_and_gets_it_back() {
    let Some(lab) = lab::Lab::start() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("restart.json").display().to_string();
    // Layouts are fetched once: the I/O comes back to the data server by its path
    // rejoining, not by a refresh.
    let url = pnfs_lab::url(&lab.host("1"), 0);
    let base = ["--target", &url, "--size", pnfs_lab::SIZE];
    // Written verifiable now, so that the timed run starts its I/O at once and the
    // restart falls in it.
    pnfs_lab::prepare(&url, &["--verify"]);
    // The file's data on host 2, which is only a data server (host 1 is the metadata
    // server too, whose restart is another matter).
    lab.place(pnfs_lab::DATA_FILE, &lab.host("2"));
    let ds = format!("{}:2049", lab.host("2"));

    let run = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .arg("run")
        .args(base)
        .args(["--profile", "mixed", "--outstanding", "8", "--verify"])
        .args(["--time", "14s", "--json", &out])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    lab.run(&["down", "2"]);
    std::thread::sleep(Duration::from_secs(3));
    // `up` returns once the server answers.
    lab.run(&["up", "2"]);
    let answering = unix_now();
    let done = run.wait_with_output().unwrap();
    let r = json(&out);
    assert!(
        done.status.success(),
        "dbio run failed: {}\nfailed_ios {} verify {} events {}",
        String::from_utf8_lossy(&done.stderr),
        r["failed_ios"],
        r["verify"],
        r["nfs"]["events"]
    );
    assert_eq!(r["failed_ios"], 0, "{}", r["nfs"]);
    let events = path_events(&r);
    eprintln!("{events:?}\n{}", r["nfs"]["layout_events"]);
    let label = format!("DS {ds}");
    let down = events
        .iter()
        .find(|e| e.0 == label && e.1.starts_with("down"));
    let up = events.iter().find(|e| e.0 == label && e.1 == "up");
    let (Some(_), Some(up)) = (down, up) else {
        panic!("no down and up events of {label}: {events:?}");
    };
    // Its restart lost the session: a new one was made.
    assert!(
        events.iter().any(|e| e.0 == label
            && e.1
                .starts_with("new session (SEQUENCE: NFS4ERR_BADSESSION)")),
        "{events:?}"
    );
    // The probe found it within 2 s of it answering.
    assert!(
        up.3 - answering <= 2.0,
        "{label} rejoined {:.2} s after it answered",
        up.3 - answering
    );
    // And I/O went back to it: the file's I/O on it went on past the rejoin.
    let last_on_ds = r["nfs"]["file_servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["server"].as_str() == Some(ds.as_str()))
        .filter_map(|f| f["last_s"].as_f64())
        .fold(0.0, f64::max);
    assert!(
        last_on_ds > up.2 + 1.0,
        "no I/O on {ds} after it rejoined at {:.1} s (last at {last_on_ds:.1} s)",
        up.2
    );
}
