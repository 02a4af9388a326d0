//! `dbio nfs cp|mkdir|rm|df|ping` with `?version=4.1` against nfs-ganesha: copies both
//! ways byte for byte (read back over NFSv3 by dbio and by libnfs's nfs-cat), a copy
//! onto a longer file truncates it, directories made and removed, and one-line errors
//! with exit code 2 that name the op and the path.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::process::{Command, Output};

fn dbio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Fails with exit code 2 and exactly one line on stderr; returns it.
fn fails(out: Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

/// Pseudo-random bytes (xorshift), different for each seed.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn nfs_cp_mkdir_rm_over_nfs41() {
    let Some(s) = common::Server::start("nfscli41f") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let local = |n: &str| tmp.path().join(n).to_string_lossy().into_owned();
    let url = |p: &str| format!("nfs://{}{p}?version=4.1", s.addr);
    let host = |p: &str| s.export_dir.join(p);

    // mkdir -p makes the missing parents; without -p a missing parent is an error.
    ok(dbio(&["nfs", "mkdir", "-p", &url("/export/d1/d2")]));
    assert!(host("d1/d2").is_dir());
    ok(dbio(&["nfs", "mkdir", "-p", &url("/export/d1/d2")]));
    let e = fails(dbio(&["nfs", "mkdir", &url("/export/d1")]));
    assert!(
        e.contains(&format!("CREATE {}:2049:/export/d1: NFS4ERR_EXIST", s.addr)),
        "{e}"
    );
    let e = fails(dbio(&["nfs", "mkdir", &url("/export/nope/d")]));
    assert!(
        e.contains(&format!(
            "LOOKUP {}:2049:/export/nope: NFS4ERR_NOENT",
            s.addr
        )),
        "{e}"
    );

    // cp to NFS, several pipelined WRITEs, and back.
    let data = pattern(5 << 20 | 123, 1);
    std::fs::write(local("big.bin"), &data).unwrap();
    ok(dbio(&[
        "nfs",
        "cp",
        &local("big.bin"),
        &url("/export/big.bin"),
        "--io-size",
        "256k",
    ]));
    assert!(std::fs::read(host("big.bin")).unwrap() == data);
    ok(dbio(&[
        "nfs",
        "cp",
        &url("/export/big.bin"),
        &local("copy.bin"),
        "--io-size",
        "128k",
    ]));
    assert!(std::fs::read(local("copy.bin")).unwrap() == data);
    // Into a directory, on both sides: the file keeps its name.
    ok(dbio(&[
        "nfs",
        "cp",
        &local("big.bin"),
        &url("/export/d1/d2/"),
        "--stable",
        "file-sync",
    ]));
    assert!(std::fs::read(host("d1/d2/big.bin")).unwrap() == data);
    let into = tmp.path().join("into");
    std::fs::create_dir(&into).unwrap();
    ok(dbio(&[
        "nfs",
        "cp",
        &url("/export/d1/d2/big.bin"),
        into.to_str().unwrap(),
    ]));
    assert!(std::fs::read(into.join("big.bin")).unwrap() == data);
    // A shorter file copied onto a longer one leaves no tail of the old one.
    let short = pattern(70_000, 2);
    std::fs::write(local("short.bin"), &short).unwrap();
    ok(dbio(&[
        "nfs",
        "cp",
        &local("short.bin"),
        &url("/export/big.bin"),
    ]));
    assert!(std::fs::read(host("big.bin")).unwrap() == short);
    // What NFSv4.1 wrote reads the same over NFSv3.
    let v3 = s.url("/export/d1/d2/big.bin");
    assert!(ok(dbio(&["nfs", "cat", &v3])) == data);
    if libnfs_available() {
        let cat = Command::new("nfs-cat").arg(&v3).output().unwrap();
        assert!(
            cat.status.success() && cat.stdout == data,
            "nfs-cat read back {} other bytes",
            cat.stdout.len()
        );
    }

    let out = String::from_utf8(ok(dbio(&[
        "nfs",
        "ping",
        &url("/export"),
        "--count",
        "20",
        "--outstanding",
        "4",
    ])))
    .unwrap();
    assert!(
        out.contains("20 SEQUENCE calls") && out.contains("latency us"),
        "{out}"
    );

    // rm: files and empty directories; a full directory stays.
    let e = fails(dbio(&["nfs", "rm", &url("/export/d1")]));
    assert!(
        e.contains(&format!(
            "REMOVE {}:2049:/export/d1: NFS4ERR_NOTEMPTY",
            s.addr
        )),
        "{e}"
    );
    ok(dbio(&["nfs", "rm", &url("/export/d1/d2/big.bin")]));
    ok(dbio(&["nfs", "rm", &url("/export/d1/d2")]));
    ok(dbio(&["nfs", "rm", &url("/export/d1")]));
    assert!(!host("d1").exists());
    let e = fails(dbio(&["nfs", "rm", &url("/export/d1")]));
    assert!(
        e.contains(&format!("REMOVE {}:2049:/export/d1: NFS4ERR_NOENT", s.addr)),
        "{e}"
    );
    // Reading the removed file fails, naming it.
    let e = fails(dbio(&[
        "nfs",
        "cp",
        &url("/export/d1/d2/big.bin"),
        &local("gone.bin"),
    ]));
    assert!(
        e.contains(&format!(
            "LOOKUP {}:2049:/export/d1/d2/big.bin: NFS4ERR_NOENT",
            s.addr
        )),
        "{e}"
    );

    // Errors as the NFSv3 commands give them.
    let e = fails(dbio(&[
        "nfs",
        "cp",
        &local("missing.bin"),
        &url("/export/"),
    ]));
    assert!(e.contains("cp: ") && e.contains("missing.bin"), "{e}");
    let e = fails(dbio(&["nfs", "cp", &url("/export/"), &local("dir.bin")]));
    assert!(e.contains("is a directory"), "{e}");
    let e = fails(dbio(&["nfs", "cp", &url("/export/big.bin"), &v3]));
    assert!(e.contains("one side must be a local path"), "{e}");
    let e = fails(dbio(&["nfs", "rm", &url("/")]));
    assert!(e.contains("will not remove the root"), "{e}");
    assert!(host("big.bin").exists());
}

fn libnfs_available() -> bool {
    let found = Command::new("sh")
        .args(["-c", "command -v nfs-cat"])
        .output();
    let yes = matches!(found, Ok(o) if o.status.success());
    if !yes && common::require_peers() {
        panic!("DBIO_REQUIRE_PEERS=1 but libnfs-utils (nfs-cat) is missing");
    }
    yes
}
