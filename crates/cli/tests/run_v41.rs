//! `dbio run` over NFSv4.1 against nfs-ganesha: the data set is created through
//! NFSv4.1 (OPEN with exclusive create, SETATTR, WRITE, COMMIT), a verified run reads
//! and writes it through the v4.1 data path, the blocks check when read back over
//! NFSv3 and on the export's directory, and the result's servers view says 4.1 with
//! its sessions. Skips without ganesha unless DBIO_REQUIRE_PEERS=1.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::process::Command;

use serde_json::Value;

fn dbio(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    (o.status.code(), text + &String::from_utf8_lossy(&o.stderr))
}

#[test]
fn a_run_over_v41_writes_a_data_set_that_v3_reads_back() {
    let Some(server) = common::Server::start("runv41") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("v41.json").display().to_string();
    let v41 = format!("nfs://{}/export/dbio?version=4.1", server.addr);
    let (code, out) = dbio(&[
        "run",
        "--target",
        &v41,
        "--size",
        "8MiB",
        "--profile",
        "mixed",
        "--update-pct",
        "50",
        "--users",
        "2",
        "--outstanding",
        "8",
        "--conns",
        "2",
        "--loops",
        "1500",
        "--verify",
        "--json",
        &json,
    ]);
    assert_eq!(code, Some(0), "{out}");
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let v = &r["verify"];
    for k in ["lost", "torn", "misdirected", "checksum"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
    assert_eq!(v["final_pass_complete"], true, "{v}");
    let server_row = &r["nfs"]["servers"][0];
    assert_eq!(server_row["nfs_version"], "4.1", "{server_row}");
    let sessions = server_row["sessions"].as_array().unwrap();
    assert!(!sessions.is_empty(), "{server_row}");
    assert!(sessions.iter().all(|s| s["slots"].as_u64() > Some(0)));
    let calls = &r["nfs"]["stats"]["calls"];
    let count = |name: &str| {
        calls
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["procedure"] == name)
            .and_then(|c| c["calls"].as_u64())
            .unwrap_or(0)
    };
    assert!(count("READ4") > 0 && count("WRITE4") > 0, "{calls}");

    // The same blocks through NFSv3, and on the server's own directory: consistent.
    let v3 = server.url("/export/dbio");
    let (code, out) = dbio(&["verify", &v3]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("checksum 0"), "{out}");
    let files: Vec<_> = std::fs::read_dir(server.export_dir.join("dbio"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(files.iter().any(|f| f == "dbio-dataset.json"), "{files:?}");

    // Reused, not created again: a second run over v4.1 finds the manifest.
    let (code, out) = dbio(&[
        "run",
        "--target",
        &v41,
        "--size",
        "8MiB",
        "--profile",
        "mixed",
        "--loops",
        "200",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("creating"), "{out}");
}
