//! `dbio nfs` against nfs-ganesha: the commands as users type them, interop
//! with libnfs (nfs-cat, nfs-cp), one-line errors with exit code 2, and the
//! server going away in the middle of a copy.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

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

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect()
}

fn libnfs_available() -> bool {
    let found = Command::new("sh")
        .args(["-c", "command -v nfs-cat && command -v nfs-cp"])
        .output();
    let yes = matches!(found, Ok(o) if o.status.success());
    if !yes && common::require_peers() {
        panic!("DBIO_REQUIRE_PEERS=1 but libnfs-utils (nfs-cat, nfs-cp) is missing");
    }
    yes
}

#[test]
fn nfs_commands_against_ganesha() {
    let Some(s) = common::Server::start("nfscli") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let local = |n: &str| tmp.path().join(n).to_string_lossy().into_owned();
    std::fs::write(s.export_dir.join("small.txt"), b"hello from ganesha\n").unwrap();

    let out = ok(dbio(&["nfs", "ping", &s.url("/export"), "--count", "20"]));
    assert!(
        out.contains("20 NULL calls") && out.contains("latency us"),
        "{out}"
    );
    let out = ok(dbio(&["nfs", "ls", &s.url("/export/")]));
    assert!(out.contains("small.txt") && out.contains("-rw-"), "{out}");
    assert_eq!(
        ok(dbio(&["nfs", "cat", &s.url("/export/small.txt")])),
        "hello from ganesha\n"
    );
    let out = ok(dbio(&["nfs", "stat", &s.url("/export/small.txt")]));
    assert!(
        out.contains("size: 19") && out.contains("type: Reg"),
        "{out}"
    );
    let out = ok(dbio(&["nfs", "df", &s.url("/export")]));
    assert!(out.contains("avail GiB") && out.contains("rtmax"), "{out}");

    // cp both ways, several pipelined WRITEs and READs per file.
    let data = pattern(5 << 20 | 123, 1);
    std::fs::write(local("big.bin"), &data).unwrap();
    ok(dbio(&[
        "nfs",
        "cp",
        &local("big.bin"),
        &s.url("/export/big.bin"),
        "--io-size",
        "256k",
    ]));
    assert!(std::fs::read(s.export_dir.join("big.bin")).unwrap() == data);
    ok(dbio(&[
        "nfs",
        "cp",
        &s.url("/export/big.bin"),
        &local("copy.bin"),
    ]));
    assert!(std::fs::read(local("copy.bin")).unwrap() == data);
    // Into a directory: the file keeps its name.
    ok(dbio(&["nfs", "mkdir", "-p", &s.url("/export/d1/d2")]));
    ok(dbio(&[
        "nfs",
        "cp",
        &local("big.bin"),
        &s.url("/export/d1/d2/"),
    ]));
    assert!(s.export_dir.join("d1/d2/big.bin").exists());
    ok(dbio(&["nfs", "rm", &s.url("/export/d1/d2/big.bin")]));
    fails(dbio(&["nfs", "rm", &s.url("/export/d1")]));
    ok(dbio(&["nfs", "rm", &s.url("/export/d1/d2")]));
    ok(dbio(&["nfs", "rm", &s.url("/export/d1")]));
    assert!(!s.export_dir.join("d1").exists());

    // The README's form: 127.0.0.1 inside the server's namespace.
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            &s.netns,
            env!("CARGO_BIN_EXE_dbio"),
            "nfs",
            "cat",
        ])
        .arg("nfs://127.0.0.1/export/small.txt?version=3&mountport=20048&nfsport=2049")
        .output()
        .unwrap();
    assert_eq!(ok(out), "hello from ganesha\n");

    // Errors: one line, exit 2, naming what went wrong.
    let e = fails(dbio(&["nfs", "cat", &s.url("/export/missing.txt")]));
    assert!(
        e.contains("NFS3ERR_NOENT") && e.contains("/export/missing.txt"),
        "{e}"
    );
    let e = fails(dbio(&["nfs", "ls", &s.url("/wrong/")]));
    assert!(e.contains("no export") && e.contains("/wrong"), "{e}");
    let e = fails(dbio(&[
        "nfs",
        "ls",
        "nfs://127.0.0.1/export/?mountport=1&nfsport=1",
    ]));
    assert!(e.contains("cannot connect"), "{e}");
    let e = fails(dbio(&[
        "nfs",
        "ls",
        "nfs://127.0.0.1/export/?mountport=99999",
    ]));
    assert!(e.contains("out of range"), "{e}");
    let e = fails(dbio(&["nfs", "ls", "nfs://127.0.0.1/export/?bogus=1"]));
    assert!(e.contains("unknown NFS URL parameter"), "{e}");
    std::fs::create_dir(s.export_dir.join("private")).unwrap();
    std::fs::set_permissions(
        s.export_dir.join("private"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let e = fails(dbio(&[
        "nfs",
        "ls",
        &s.url("/export/private/"),
        "--uid",
        "4321",
        "--gid",
        "4321",
    ]));
    assert!(e.contains("NFS3ERR_ACCES"), "{e}");
    // Nothing answers at all: fails within the timeout.
    let t0 = Instant::now();
    let e = fails(dbio(&[
        "nfs",
        "ping",
        "nfs://10.213.255.254/export?mountport=20048&nfsport=2049",
        "--timeout",
        "1s",
    ]));
    assert!(t0.elapsed() < Duration::from_secs(5), "{e}");

    // Interop with libnfs, both directions, byte for byte.
    if libnfs_available() {
        let cat = Command::new("nfs-cat")
            .arg(s.url("/export/big.bin"))
            .output()
            .unwrap();
        assert!(
            cat.status.success() && cat.stdout == data,
            "nfs-cat read back different bytes"
        );
        let other = pattern(3 << 20 | 77, 2);
        std::fs::write(local("libnfs.bin"), &other).unwrap();
        let cp = Command::new("nfs-cp")
            .arg(local("libnfs.bin"))
            .arg(s.url("/export/libnfs.bin"))
            .output()
            .unwrap();
        assert!(
            cp.status.success(),
            "nfs-cp: {}",
            String::from_utf8_lossy(&cp.stderr)
        );
        ok(dbio(&[
            "nfs",
            "cp",
            &s.url("/export/libnfs.bin"),
            &local("back.bin"),
        ]));
        assert!(
            std::fs::read(local("back.bin")).unwrap() == other,
            "dbio read back different bytes"
        );
    }
}

/// Runs `dbio nfs cp` on a thread; returns its output and when it ended.
fn cp_thread(args: Vec<String>) -> std::thread::JoinHandle<(Output, Instant)> {
    std::thread::spawn(move || {
        let out = Command::new(env!("CARGO_BIN_EXE_dbio"))
            .args(["nfs", "cp"])
            .args(&args)
            .output()
            .unwrap();
        (out, Instant::now())
    })
}

/// Slows both directions of the server's path so a copy lasts about a
/// second; where `tc` cannot (no tbf in the kernel), small sequential I/Os
/// slow the copy instead. Returns extra `cp` arguments.
fn slow_path(s: &common::Server) -> Vec<String> {
    let shape = |cmd: String| {
        Command::new("sh")
            .args(["-c", &cmd])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let tbf = "root tbf rate 100mbit burst 64kb latency 500ms";
    if shape(format!("tc qdisc add dev {} {tbf}", s.host_dev))
        && shape(format!(
            "ip netns exec {} tc qdisc add dev srv0 {tbf}",
            s.netns
        ))
    {
        return Vec::new();
    }
    eprintln!("note: tc tbf unavailable, slowing the copy with 4 KiB I/Os instead");
    ["--io-size", "4k", "--depth", "1"]
        .map(String::from)
        .to_vec()
}

/// The server is killed during a copy and comes back: the copy resumes and
/// the result is complete. If it stays away, the copy fails with one line
/// after its timeout, without hanging.
#[test]
fn copy_survives_a_server_restart() {
    let Some(s) = common::Server::start("nfsrs") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src.bin").to_string_lossy().into_owned();
    let dst = tmp.path().join("down.bin").to_string_lossy().into_owned();
    let slow = slow_path(&s);
    // Without shaping, 4 KiB RPCs one at a time need more data to last.
    let data = pattern(if slow.is_empty() { 12 << 20 } else { 64 << 20 }, 3);
    std::fs::write(&src, &data).unwrap();
    let args = |from: &str, to: &str, timeout: &str, retries: &str| {
        let mut a: Vec<String> = ["--timeout", timeout, "--retries", retries]
            .map(String::from)
            .to_vec();
        a.extend(slow.iter().cloned());
        a.extend([from.to_string(), to.to_string()]);
        a
    };

    // Upload, then download, each across a crash of the server.
    for (from, to) in [
        (src.clone(), s.url("/export/up.bin")),
        (s.url("/export/up.bin"), dst.clone()),
    ] {
        let t = cp_thread(args(&from, &to, "1s", "5"));
        std::thread::sleep(Duration::from_millis(300));
        s.restart(0.5);
        let back = Instant::now();
        let (out, ended) = t.join().unwrap();
        ok(out);
        assert!(ended > back, "the copy ended before the server came back");
    }
    assert!(
        std::fs::read(s.export_dir.join("up.bin")).unwrap() == data,
        "upload differs after restart"
    );
    assert!(
        std::fs::read(&dst).unwrap() == data,
        "download differs after restart"
    );

    // Server away for longer than the copy's deadline (0.2 s x 3).
    let t0 = Instant::now();
    let never = tmp.path().join("never.bin").to_string_lossy().into_owned();
    let t = cp_thread(args(&s.url("/export/up.bin"), &never, "200ms", "2"));
    std::thread::sleep(Duration::from_millis(300));
    s.restart(1.5);
    let e = fails(t.join().unwrap().0);
    assert!(
        e.contains("READ") && (e.contains("lost") || e.contains("no reply")),
        "{e}"
    );
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(Path::new(&s.export_dir).join("up.bin").exists());
}

#[test]
fn nfs_ls_stat_cat_over_nfs41() {
    let Some(s) = common::Server::start("nfscli41") else {
        return;
    };
    std::fs::write(s.export_dir.join("small.txt"), b"hello over v4.1\n").unwrap();
    let big = pattern(3 << 20, 7);
    std::fs::write(s.export_dir.join("big.bin"), &big).unwrap();
    std::fs::create_dir(s.export_dir.join("sub")).unwrap();
    let url = |p: &str| format!("nfs://{}{p}?version=4.1", s.addr);

    let out = ok(dbio(&["nfs", "ls", &url("/export/")]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("-rw") && lines[0].ends_with(" big.bin"),
        "{out}"
    );
    assert!(
        lines[2].starts_with('d') && lines[2].ends_with(" sub"),
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
        out.contains("type: Reg") && out.contains("size: 16"),
        "{out}"
    );
    assert!(out.contains("access: read,modify,extend"), "{out}");
    assert_eq!(
        ok(dbio(&["nfs", "cat", &url("/export/small.txt")])),
        "hello over v4.1\n"
    );
    let cat = dbio(&["nfs", "cat", &url("/export/big.bin")]);
    assert!(cat.status.success());
    assert!(
        cat.stdout == big,
        "cat of big.bin: {} bytes",
        cat.stdout.len()
    );

    let err = fails(dbio(&["nfs", "stat", &url("/export/missing")]));
    assert!(
        err.contains(&format!(
            "LOOKUP {}:2049:/export/missing: NFS4ERR_NOENT",
            s.addr
        )),
        "{err}"
    );
    let out = ok(dbio(&["nfs", "df", &url("/export")]));
    assert!(
        out.contains("avail GiB") && out.contains("maxwrite"),
        "{out}"
    );
}
