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
    let url = format!(
        "nfs://{}/gv0/dbio?version=pnfs&layout_refresh=1",
        lab.host("1")
    );
    // The data set first (one data file), so that the run's time is all I/O.
    let st = support::dbio(&[
        "run",
        "--target",
        &url,
        "--size",
        "16MiB",
        "--workload",
        "single-block-read",
        "--loops",
        "10",
    ]);
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    // Several users, each with more outstanding I/O than a data server session has
    // slots for half of: every one still reaches the data servers (more sessions).
    let many = tmp.path().join("many.json").display().to_string();
    let r = support::run_ok(&[
        "--target",
        &url,
        "--size",
        "16MiB",
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

    let file = "dbio/dbio-data-01.dbf";
    let before = lab.holder(file);

    let mut run = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(["run", "--target", &url, "--size", "16MiB", "--workload"])
        .args(["single-block-read", "--outstanding", "8"])
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
