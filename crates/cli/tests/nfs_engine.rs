//! `dbio run --target nfs://...` against nfs-ganesha: the NFS engine, its
//! connection pool (one vs several channels, all carrying traffic), the
//! dNFS views in the result, and data written through the engine read back
//! identical by an independent client (libnfs's nfs-cat).

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

use dbio_workload::content::fill_blocks;
use dbio_workload::verify::{check_unit, stamp_unit};
use serde_json::Value;

mod support;
use support::run_ok;

fn calls(r: &Value, procedure: &str) -> u64 {
    r["nfs"]["stats"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["procedure"] == procedure)
        .map_or(0, |c| c["calls"].as_u64().unwrap())
}

fn nfs_cat(url: &str) -> Option<Vec<u8>> {
    match Command::new("nfs-cat").arg(url).output() {
        Ok(o) if o.status.success() => Some(o.stdout),
        Ok(o) => panic!("nfs-cat {url}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) if common::require_peers() => panic!("DBIO_REQUIRE_PEERS=1 but nfs-cat: {e}"),
        Err(e) => {
            eprintln!("note: skipping the nfs-cat read-back, nfs-cat cannot run: {e}");
            None
        }
    }
}

#[test]
fn nfs_engine_runs_with_views_channels_and_readback() {
    let Some(server) = common::Server::start("eng") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = |name: &str| tmp.path().join(name).display().to_string();
    let url = server.url("/export/dbio");

    // A read class and a write class on one connection; 64 KiB RPCs so that
    // the data set's 1 MiB writes and the multiblock reads are split.
    let one = out("one.json");
    let r = run_ok(&[
        "--target",
        &url,
        "--size",
        "8MiB",
        "--workload",
        "single-block-read,multiblock-read,dbwr-write",
        "--scan-pct",
        "30",
        "--update-pct",
        "30",
        "--users",
        "2",
        "--outstanding",
        "4",
        "--conns",
        "1",
        "--rwsize",
        "64k",
        "--time",
        "1s",
        "--json",
        &one,
    ]);
    assert_eq!(r["config"]["engine"], "nfs");
    assert_eq!(r["failed_ios"], 0);
    assert!(r["ios"].as_u64().unwrap() > 0);
    let srv = &r["nfs"]["servers"][0];
    assert_eq!(srv["export"], "/export");
    assert_eq!(srv["nfs_version"], "3");
    assert_eq!(srv["rsize"], 65536);
    assert!(srv["rtmax"].as_u64().unwrap() >= 65536);
    let chans = r["nfs"]["channels"].as_array().unwrap();
    assert_eq!(chans.len(), 1, "--conns 1 gives one channel");
    assert!(chans[0]["sends"].as_u64().unwrap() > 0);
    assert_eq!(chans[0]["sends"], chans[0]["receives"]);
    assert!(calls(&r, "READ") > 0 && calls(&r, "WRITE") > 0);
    // Multiblock reads of up to 1 MiB went as several 64 KiB READs.
    let classes = r["classes"].as_array().unwrap();
    let mb = classes
        .iter()
        .find(|c| c["class"] == "multiblock-read")
        .unwrap();
    assert!(mb["bytes"].as_u64().unwrap() / mb["ios"].as_u64().unwrap() > 65536);
    assert!(r["nfs"]["stats"]["read_bytes"].as_u64().unwrap() > 0);
    assert_eq!(r["nfs"]["events"], Value::Array(vec![]));
    let files = r["nfs"]["files"].as_array().unwrap();
    assert_eq!(files.len(), r["files"].as_array().unwrap().len());
    for (f, of) in files.iter().zip(r["files"].as_array().unwrap()) {
        assert_eq!(f["server"], server.addr.as_str());
        assert_eq!(f["name"], of["name"]);
    }

    // Four connections: four channels, each carrying READs.
    let four = out("four.json");
    let r = run_ok(&[
        "--target",
        &url,
        "--size",
        "8MiB",
        "--workload",
        "single-block-read",
        "--users",
        "1",
        "--outstanding",
        "32",
        "--conns",
        "4",
        "--time",
        "1s",
        "--json",
        &four,
    ]);
    let chans = r["nfs"]["channels"].as_array().unwrap();
    assert_eq!(chans.len(), 4, "--conns 4 gives four channels");
    let sends: Vec<u64> = chans.iter().map(|c| c["sends"].as_u64().unwrap()).collect();
    let total: u64 = sends.iter().sum();
    for s in &sends {
        assert!(
            *s * 10 > total / 4,
            "each channel carries a fair share: {sends:?}"
        );
    }
    assert_eq!(r["failed_ios"], 0);

    // A fresh data set written through the engine (64 KiB WRITEs) reads
    // back as its generator made it, through libnfs.
    let fresh = server.url("/export/fresh");
    let f = out("fresh.json");
    run_ok(&[
        "--target",
        &fresh,
        "--size",
        "4MiB",
        "--workload",
        "single-block-read",
        "--rwsize",
        "64k",
        "--loops",
        "10",
        "--json",
        &f,
    ]);
    let manifest = std::fs::read(server.export_dir.join("fresh/dbio-dataset.json")).unwrap();
    let m: Value = serde_json::from_slice(&manifest).unwrap();
    let id = u64::from_str_radix(m["id"].as_str().unwrap(), 16).unwrap();
    let name = m["files"][0]["name"].as_str().unwrap();
    let Some(data) = nfs_cat(&server.url(&format!("/export/fresh/{name}"))) else {
        return;
    };
    assert_eq!(data.len() as u64, m["files"][0]["size"].as_u64().unwrap());
    let bs = 8192usize;
    for block in [1usize, 7, 100, data.len() / bs - 1] {
        // As the data set writes it: generator content, then the verify stamp.
        let mut want = vec![0u8; bs];
        fill_blocks(&mut want, bs, id, 0, block as u64, 0);
        stamp_unit(&mut want, id, 0, block as u64, 0);
        let got = &data[block * bs..(block + 1) * bs];
        assert_eq!(check_unit(got, id, 0, block as u64), Ok(0), "block {block}");
        assert!(
            data[block * bs..(block + 1) * bs] == want[..],
            "block {block} of {name} differs"
        );
    }
    let header = String::from_utf8_lossy(&data[..64]).into_owned();
    assert!(header.starts_with("DBIO-DATASET"), "{header}");
    assert!(Path::new(&server.export_dir.join("fresh")).is_dir());
}

#[test]
fn oranfstab_mount_point_reaches_the_server_over_every_path() {
    let Some(server) = common::Server::start("ora") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let tab = tmp.path().join("oranfstab");
    // Two paths to the same server (ports from its portmapper), and a
    // keyword that is accepted and ignored.
    std::fs::write(
        &tab,
        format!(
            "server: filer1\npath: {a}\npath: {a}\nexport: /export mount: /u02/oradata\n\
             community: public\n",
            a = server.addr
        ),
    )
    .unwrap();
    let json = tmp.path().join("ora.json").display().to_string();
    let r = run_ok(&[
        "--oranfstab",
        tab.to_str().unwrap(),
        "--target",
        "/u02/oradata/dbio",
        "--size",
        "8MiB",
        "--workload",
        "single-block-read",
        "--outstanding",
        "16",
        "--conns",
        "2",
        "--time",
        "1s",
        "--json",
        &json,
    ]);
    assert_eq!(r["config"]["engine"], "nfs");
    assert_eq!(r["nfs"]["servers"][0]["name"], "filer1");
    assert_eq!(r["nfs"]["servers"][0]["paths"].as_array().unwrap().len(), 2);
    let chans = r["nfs"]["channels"].as_array().unwrap();
    assert_eq!(chans.len(), 4, "2 paths x 2 connections");
    for path in [0, 1] {
        let on_path: u64 = chans
            .iter()
            .filter(|c| c["path"] == path)
            .map(|c| c["sends"].as_u64().unwrap())
            .sum();
        assert!(on_path > 0, "path {path} carried no calls");
    }
    assert!(server.export_dir.join("dbio/dbio-dataset.json").is_file());

    // A bad line: one line naming the file and the line, exit 2.
    std::fs::write(
        &tab,
        "server: filer1\nlocal: 10.0.0.1\nexport: /x mount: /y\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args([
            "run",
            "--oranfstab",
            tab.to_str().unwrap(),
            "--target",
            "/y/dbio",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("oranfstab:"), "{err}");
}

/// Connections per path from each source: `--conns` wins over the URL's `conns=`, which
/// wins over the default (4).
#[test]
fn the_command_line_wins_over_the_url_which_wins_over_the_default() {
    let Some(server) = common::Server::start("precedence") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let base = server.url("/export/precedence");
    let with_conns = format!("{base}&conns=3");
    for (i, (url, flag, want)) in [
        (&with_conns, Some("2"), 2),
        (&with_conns, None, 3),
        (&base, None, 4),
    ]
    .into_iter()
    .enumerate()
    {
        let json = tmp.path().join(format!("{i}.json")).display().to_string();
        let mut args = vec![
            "--target",
            url.as_str(),
            "--size",
            "4MiB",
            "--workload",
            "single-block-read",
            "--time",
            "1s",
            "--json",
            &json,
        ];
        if let Some(n) = flag {
            args.extend(["--conns", n]);
        }
        let r = run_ok(&args);
        let chans = r["nfs"]["channels"].as_array().unwrap();
        assert_eq!(chans.len(), want, "{url} --conns {flag:?}");
        assert_eq!(r["failed_ios"], 0);
    }
}
