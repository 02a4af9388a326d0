//! A missing export is refused in one line (the bad-input catalogue's case
//! that needs a server).
//!
//! `dbio run --verify` on an `nfs://` target: blocks written and read through
//! dbio's NFS client verify, in the run and in the final pass, on a fresh
//! data set and on a reused one (rewritten at generation 0 first).

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::process::Command;

use serde_json::Value;

fn verified_run(url: &str, json: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args([
            "run",
            "--target",
            url,
            "--size",
            "8MiB",
            "--profile",
            "mixed",
            "--update-pct",
            "50",
            "--users",
            "2",
            "--outstanding",
            "4",
            "--loops",
            "1500",
            "--verify",
            "--json",
            json,
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    r["verify"].clone()
}

#[test]
fn verify_run_through_the_nfs_engine_is_clean() {
    let Some(server) = common::Server::start("vfy") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let url = server.url("/export/dbio");
    let json = tmp.path().join("v.json").display().to_string();
    for round in ["fresh", "reused"] {
        let v = verified_run(&url, &json);
        for k in ["lost", "torn", "misdirected", "checksum"] {
            assert_eq!(v[k], 0, "{round} {k}: {v}");
        }
        assert_eq!(v["final_pass_complete"], true, "{round}: {v}");
        // One 8 MiB data file of 8 KiB blocks and a redo log of 512 B
        // sectors, headers left out.
        assert!(
            v["final_pass_blocks"].as_u64().unwrap() > 1000,
            "{round}: {v}"
        );
        assert!(v["blocks_checked"].as_u64() > v["final_pass_blocks"].as_u64());
    }
    // `dbio verify` through NFS: every block consistent.
    let verify = || {
        let o = Command::new(env!("CARGO_BIN_EXE_dbio"))
            .args(["verify", &url])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        (o.status.code(), text + &String::from_utf8_lossy(&o.stderr))
    };
    let (code, out) = verify();
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("lost 0, torn 0, misdirected 0, checksum 0"),
        "{out}"
    );
    assert!(out.contains("generations not checked"), "{out}");
    // A byte flipped in the file on the server's disk, behind its back.
    use std::os::unix::fs::FileExt;
    let path = server.export_dir.join("dbio/dbio-data-01.dbf");
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, 50 * 8192 + 3000).unwrap();
    b[0] ^= 0x10;
    f.write_all_at(&b, 50 * 8192 + 3000).unwrap();
    f.sync_all().unwrap();
    let (code, out) = verify();
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("dbio-data-01.dbf block 50: checksum"), "{out}");
}

#[test]
fn missing_export_is_one_line_exit_2() {
    let Some(server) = common::Server::start("vfx") else {
        return;
    };
    let url = server.url("/nosuch/dbio");
    let out = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(["run", "--target", &url, "--size", "8MiB", "--loops", "10"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let line = err.trim_end();
    assert!(
        line.starts_with(&format!("dbio: --target {url}: no export of "))
            && line.ends_with(":20048 contains /nosuch/dbio (exports: /export)"),
        "{line}"
    );
}
