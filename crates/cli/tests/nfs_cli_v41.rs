//! `dbio nfs` with `?version=4.1` against nfs-ganesha: what only NFSv4.1 has. Every
//! subcommand runs over both versions in `nfs_cli.rs`; here, `version=4` means 4.1,
//! listings, and errors that name the NFSv4.1 op and the path.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::process::{Command, Output};

fn dbio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Fails with exit code 2 and exactly one line on stderr; returns it.
fn fails(out: Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

#[test]
fn nfs41_listings_and_errors_name_the_op_and_path() {
    let Some(s) = common::Server::start("nfscli41") else {
        return;
    };
    let host = |p: &str| s.export_dir.join(p);
    std::fs::write(host("small.txt"), b"hello over v4.1\n").unwrap();
    std::fs::write(host("big.bin"), vec![7u8; 3 << 20]).unwrap();
    std::fs::create_dir(host("sub")).unwrap();
    let url = |p: &str| format!("nfs://{}{p}?version=4.1", s.addr);

    // Sorted by name, one line each, the type in the mode column.
    let out = ok(dbio(&["nfs", "ls", &url("/export/")]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("-rw") && lines[0].ends_with(" big.bin"),
        "{out}"
    );
    assert!(lines[0].contains(&format!(" {} ", 3 << 20)), "{out}");
    assert!(
        lines[2].starts_with('d') && lines[2].ends_with(" sub"),
        "{out}"
    );
    // A file lists as itself.
    let out = ok(dbio(&["nfs", "ls", &url("/export/small.txt")]));
    assert!(
        out.trim_end().ends_with(" small.txt") && out.lines().count() == 1,
        "{out}"
    );
    // version=4 means 4.1 too.
    let out = ok(dbio(&[
        "nfs",
        "ls",
        &format!("nfs://{}/export/?version=4", s.addr),
    ]));
    assert!(out.contains("small.txt"), "{out}");
    let out = ok(dbio(&["nfs", "stat", &url("/export/small.txt")]));
    assert!(
        out.contains("(NFS version 4.1)") && out.contains("size: 16"),
        "{out}"
    );
    assert!(out.contains("access: read,modify,extend"), "{out}");

    let e = fails(dbio(&["nfs", "stat", &url("/export/missing")]));
    assert!(
        e.contains(&format!(
            "LOOKUP {}:2049:/export/missing: NFS4ERR_NOENT",
            s.addr
        )),
        "{e}"
    );
    ok(dbio(&["nfs", "mkdir", "-p", &url("/export/d1/d2")]));
    assert!(host("d1/d2").is_dir());
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
    let e = fails(dbio(&["nfs", "rm", &url("/export/d1")]));
    assert!(
        e.contains(&format!(
            "REMOVE {}:2049:/export/d1: NFS4ERR_NOTEMPTY",
            s.addr
        )),
        "{e}"
    );
    ok(dbio(&["nfs", "rm", &url("/export/d1/d2")]));
    ok(dbio(&["nfs", "rm", &url("/export/d1")]));
    let e = fails(dbio(&["nfs", "rm", &url("/export/d1")]));
    assert!(e.contains("/export/d1: NFS4ERR_NOENT"), "{e}");
    let e = fails(dbio(&[
        "nfs",
        "cp",
        &url("/export/d1/d2/big.bin"),
        s.export_dir.join("x").to_str().unwrap(),
    ]));
    assert!(
        e.contains(&format!(
            "LOOKUP {}:2049:/export/d1/d2/big.bin: NFS4ERR_NOENT",
            s.addr
        )),
        "{e}"
    );
}
