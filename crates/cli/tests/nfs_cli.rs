//! `dbio nfs` against nfs-ganesha: the commands as users type them, over NFSv3 and
//! NFSv4.1 alike, interop with libnfs (nfs-cat, nfs-cp), one-line errors with exit
//! code 2, the server going away in the middle of a copy, and Ctrl-C.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;
#[path = "../../nfs/tests/hostile/server.rs"]
#[allow(dead_code)]
mod scripted;

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

/// Every subcommand over NFSv3 and NFSv4.1 alike, as users type them: the same
/// output, copies both ways byte for byte (read back by libnfs's nfs-cat over NFSv3).
#[test]
fn nfs_commands_over_both_versions() {
    let Some(s) = common::Server::start("nfscli") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let local = |n: &str| tmp.path().join(n).to_string_lossy().into_owned();
    let host = |p: &str| s.export_dir.join(p);
    std::fs::write(host("small.txt"), b"hello from ganesha\n").unwrap();
    let libnfs = libnfs_available();
    for (version, status) in [("3", "NFS3ERR"), ("4.1", "NFS4ERR")] {
        let url = |p: &str| match version {
            "3" => s.url(p),
            v => format!("nfs://{}{p}?version={v}", s.addr),
        };
        let out = ok(dbio(&["nfs", "ping", &url("/export"), "--count", "20"]));
        assert!(
            out.contains("20 NULL calls") && out.contains(&format!("NFS version {version}")),
            "{out}"
        );
        assert!(out.contains("latency us"), "{out}");
        let out = ok(dbio(&[
            "nfs",
            "ping",
            &url("/export/small.txt"),
            "--read",
            "8",
            "--count",
            "30",
            "--outstanding",
            "4",
        ]));
        assert!(
            out.contains("30 READ calls") && out.contains("4 outstanding"),
            "{out}"
        );

        let out = ok(dbio(&["nfs", "ls", &url("/export/")]));
        let line = out
            .lines()
            .find(|l| l.ends_with(" small.txt"))
            .unwrap_or_default();
        assert!(line.starts_with("-rw-") && line.contains(" 19 "), "{out}");
        // The same columns whatever the version: owner and group as the server's
        // file system has them (ganesha sends NFSv4.1 owners as numbers).
        let meta = {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::metadata(host("small.txt")).unwrap();
            (m.uid(), m.gid())
        };
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            (cols[2], cols[3]),
            (meta.0.to_string().as_str(), meta.1.to_string().as_str()),
            "NFS{version} ls: {line}"
        );
        assert_eq!(
            ok(dbio(&["nfs", "cat", &url("/export/small.txt")])),
            "hello from ganesha\n"
        );
        let out = ok(dbio(&["nfs", "stat", &url("/export/small.txt")]));
        assert!(
            out.contains("size: 19") && out.contains("type: Regular"),
            "{out}"
        );
        assert!(
            out.contains("access: read,") && out.contains("mtime: 2"),
            "{out}"
        );
        for needle in [
            format!("uid: {}  gid: {}", meta.0, meta.1),
            "atime: 2".into(),
            "ctime: 2".into(),
        ] {
            assert!(
                out.contains(&needle),
                "NFS{version} stat lacks {needle}: {out}"
            );
        }
        assert!(!out.contains("used: -"), "NFS{version} stat: {out}");
        let out = ok(dbio(&["nfs", "df", &url("/export")]));
        assert!(
            out.contains("avail GiB") && out.contains("maxread"),
            "{out}"
        );

        // cp both ways, several pipelined WRITEs and READs per file.
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
        assert!(
            std::fs::read(host("big.bin")).unwrap() == data,
            "NFSv{version} upload"
        );
        ok(dbio(&[
            "nfs",
            "cp",
            &url("/export/big.bin"),
            &local("copy.bin"),
            "--io-size",
            "128k",
        ]));
        assert!(
            std::fs::read(local("copy.bin")).unwrap() == data,
            "NFSv{version} download"
        );
        let cat = dbio(&["nfs", "cat", &url("/export/big.bin")]);
        assert!(
            cat.status.success() && cat.stdout == data,
            "NFSv{version} cat"
        );
        if libnfs {
            let cat = Command::new("nfs-cat")
                .arg(s.url("/export/big.bin"))
                .output()
                .unwrap();
            assert!(
                cat.status.success() && cat.stdout == data,
                "nfs-cat read back different bytes than NFSv{version} wrote"
            );
        }
        // A shorter file copied onto a longer one leaves no tail of the old one.
        let short = pattern(70_000, 2);
        std::fs::write(local("short.bin"), &short).unwrap();
        ok(dbio(&[
            "nfs",
            "cp",
            &local("short.bin"),
            &url("/export/big.bin"),
            "--stable",
            "file-sync",
        ]));
        assert!(std::fs::read(host("big.bin")).unwrap() == short);

        // Into a directory, on both sides: the file keeps its name.
        ok(dbio(&["nfs", "mkdir", "-p", &url("/export/d1/d2")]));
        ok(dbio(&["nfs", "mkdir", "-p", &url("/export/d1/d2")]));
        let e = fails(dbio(&["nfs", "mkdir", &url("/export/d1")]));
        assert!(
            e.contains(&format!("{status}_EXIST")) && e.contains("/export/d1"),
            "{e}"
        );
        ok(dbio(&[
            "nfs",
            "cp",
            &local("big.bin"),
            &url("/export/d1/d2/"),
        ]));
        assert!(std::fs::read(host("d1/d2/big.bin")).unwrap() == data);
        let into = tmp.path().join(format!("into{version}"));
        std::fs::create_dir(&into).unwrap();
        ok(dbio(&[
            "nfs",
            "cp",
            &url("/export/d1/d2/big.bin"),
            into.to_str().unwrap(),
        ]));
        assert!(std::fs::read(into.join("big.bin")).unwrap() == data);

        // rm: files and empty directories; a full directory stays.
        let e = fails(dbio(&["nfs", "rm", &url("/export/d1")]));
        assert!(e.contains(&format!("{status}_NOTEMPTY")), "{e}");
        ok(dbio(&["nfs", "rm", &url("/export/d1/d2/big.bin")]));
        ok(dbio(&["nfs", "rm", &url("/export/d1/d2")]));
        ok(dbio(&["nfs", "rm", &url("/export/d1")]));
        assert!(!host("d1").exists());
        ok(dbio(&["nfs", "rm", &url("/export/big.bin")]));

        // Errors: one line, exit 2, naming what went wrong and where.
        let e = fails(dbio(&["nfs", "cat", &url("/export/missing.txt")]));
        assert!(
            e.contains(&format!("{status}_NOENT")) && e.contains("/export/missing.txt"),
            "{e}"
        );
        let e = fails(dbio(&[
            "nfs",
            "cp",
            &url("/export/d1/big.bin"),
            &local("gone.bin"),
        ]));
        assert!(
            e.contains(&format!("{status}_NOENT")) && e.contains("/export/d1"),
            "{e}"
        );
        assert!(!Path::new(&local("gone.bin")).exists());
        let e = fails(dbio(&[
            "nfs",
            "cp",
            &local("missing.bin"),
            &url("/export/"),
        ]));
        assert!(e.contains("cp: ") && e.contains("missing.bin"), "{e}");
        let e = fails(dbio(&["nfs", "cp", &url("/export/"), &local("dir.bin")]));
        assert!(e.contains("is a directory"), "{e}");
        let e = fails(dbio(&[
            "nfs",
            "cp",
            &url("/export/small.txt"),
            &s.url("/export/x"),
        ]));
        assert!(e.contains("one side must be a local path"), "{e}");
        // The root of the file API: the export for NFSv3, the server's for NFSv4.1.
        let root = if version == "3" { "/export/" } else { "/" };
        let e = fails(dbio(&["nfs", "rm", &url(root)]));
        assert!(e.contains("will not remove the root"), "{e}");
    }
    assert!(host("small.txt").exists());

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

    // Errors of reaching the server.
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
    std::fs::create_dir(host("private")).unwrap();
    std::fs::set_permissions(
        host("private"),
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

    // dbio reads what libnfs wrote, byte for byte.
    if libnfs {
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

/// Sends SIGINT to a running `dbio` after `after`; returns its output.
fn interrupt(args: &[&str], after: Duration) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    child.wait_with_output().unwrap()
}

/// Ctrl-C stops ping and cp at once with exit code 130, over both versions; a copy
/// either way leaves no partial file behind.
#[test]
fn ctrl_c_stops_ping_and_cp() {
    let Some(s) = common::Server::start("nfsint") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(s.export_dir.join("big.bin"), pattern(64 << 20, 5)).unwrap();
    let local_big = tmp.path().join("big.bin").to_string_lossy().into_owned();
    std::fs::write(&local_big, pattern(64 << 20, 6)).unwrap();
    for version in ["3", "4.1"] {
        let url = |p: &str| match version {
            "3" => s.url(p),
            v => format!("nfs://{}{p}?version={v}", s.addr),
        };
        let t0 = Instant::now();
        let out = interrupt(
            &["nfs", "ping", &url("/export"), "--count", "100000000"],
            Duration::from_millis(500),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{err}");
        assert!(err.contains("interrupted"), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(5));
        let target = tmp.path().join(format!("down{version}.bin"));
        let out = interrupt(
            &[
                "nfs",
                "cp",
                &url("/export/big.bin"),
                target.to_str().unwrap(),
                "--io-size",
                "4k",
                "--depth",
                "1",
            ],
            Duration::from_millis(300),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!target.exists(), "a partial copy was left");
        // The other way: the partial file on the server is removed.
        let up = format!("up{version}.bin");
        let out = interrupt(
            &[
                "nfs",
                "cp",
                &local_big,
                &url(&format!("/export/{up}")),
                "--io-size",
                "4k",
                "--depth",
                "1",
            ],
            Duration::from_millis(300),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{err}");
        assert!(
            !s.export_dir.join(&up).exists(),
            "a partial upload was left"
        );
    }
}

/// A scripted NFSv3 server with a file of `size` bytes whose READs bring `extra` bytes
/// more than asked and never say EOF.
fn never_ending_file(size: u64, extra: usize) -> scripted::Server {
    use dbio_nfs::proto::nfs3;
    use dbio_xdr::{BufMut, XdrDecode, XdrPut};
    scripted::nfs_server(move |call, peer| {
        if call.prog != nfs3::PROGRAM {
            return scripted::Step::Default;
        }
        let mut res = Vec::new();
        match call.proc_ {
            1 => nfs3::encode_res_ok(
                &mut res,
                &nfs3::GetattrOk {
                    attributes: scripted::attrs(nfs3::Ftype3::Reg, size),
                },
            ),
            6 => {
                let Ok(args) = nfs3::ReadArgs::from_xdr(&call.args) else {
                    return scripted::Step::Close;
                };
                // OK, no attributes, count, eof false, data.
                let data = vec![b'x'; args.count as usize + extra];
                res.put_u32(0);
                res.put_xdr_bool(false);
                res.put_u32(data.len() as u32);
                res.put_xdr_bool(false);
                res.put_opaque(&data);
            }
            _ => return scripted::Step::Default,
        }
        peer.reply(call.xid, &res);
        scripted::Step::Done
    })
}

/// Against a scripted server: a file whose READs bring all they ask, past its size, and
/// never say EOF is printed up to its size and no further; the server then refuses
/// UMNT, which after the work is a warning, not a failure.
#[test]
fn cat_stops_at_the_size_and_a_refused_unmount_is_a_warning() {
    const SIZE: u64 = 150_000;
    let server = never_ending_file(SIZE, 0);
    let p = server.addr.port();
    let url = format!("nfs://127.0.0.1/export?mountport={p}&nfsport={p}");
    let t0 = Instant::now();
    let out = dbio(&["nfs", "cat", &url, "--timeout", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(out.stdout.len() as u64, SIZE);
    assert!(out.stdout.iter().all(|b| *b == b'x'));
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("dbio: warning: ") && err.contains("/export"),
        "{err}"
    );
}

/// A READ reply longer than asked fails `cat` with one line naming the file and both
/// lengths (it was cut silently before).
#[test]
fn cat_refuses_a_read_longer_than_asked() {
    let server = never_ending_file(150_000, 100);
    let p = server.addr.port();
    let url = format!("nfs://127.0.0.1/export?mountport={p}&nfsport={p}");
    let out = dbio(&["nfs", "cat", &url, "--timeout", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    let line = err.lines().find(|l| l.contains("READ")).unwrap_or_default();
    assert!(
        line.starts_with("dbio: ")
            && line.contains("/export")
            && line.contains("bytes, ")
            && line.contains(" were asked"),
        "{err}"
    );
}
