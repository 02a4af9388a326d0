//! SIGTERM at each step of setting an NFS client up ends `dbio run` within 2 s: the
//! server (nfs-ganesha behind a proxy that holds the chosen step's call, or a listener
//! that never answers or never accepts) leaves the step waiting. One line on stderr
//! says what was waited for and for how long; the results are written, marked
//! interrupted; exit code 130.

mod support;

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::io::Read;
use std::net::SocketAddr;
use std::process::Child;
use std::time::{Duration, Instant};

use support::stall::{self, Step};
use support::{json, s, scratch, signal, spawn};

/// The bound the issue sets on ending after a signal, whatever the command waits for.
const WITHIN: Duration = Duration::from_secs(2);

fn start_run(url: &str, out: &std::path::Path) -> Child {
    spawn(&[
        "run",
        "--target",
        url,
        "--size",
        "8MiB",
        "--time",
        "1s",
        "--json",
        s(out),
    ])
}

/// Sends SIGTERM to `child` and checks how it ends: within [`WITHIN`], exit code 130,
/// one line that names `waiting_for` (and how long), the results marked interrupted.
fn sigterm_ends_it(mut child: Child, out: &std::path::Path, waiting_for: &str) -> Duration {
    assert!(
        child.try_wait().unwrap().is_none(),
        "ended before the signal"
    );
    assert_eq!(signal(&child, libc::SIGTERM), 0);
    let t = Instant::now();
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        if t.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running 10 s after SIGTERM (waiting for {waiting_for})");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = t.elapsed();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(code, Some(130), "{err}");
    assert!(took < WITHIN, "took {took:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("dbio:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    let line = lines[0];
    assert!(line.starts_with("dbio: interrupted: "), "{err}");
    assert!(
        line.contains(waiting_for),
        "not waiting for {waiting_for}: {err}"
    );
    assert!(line.contains("stopped after "), "{err}");
    assert!(
        line.ends_with("results written, marked interrupted"),
        "{err}"
    );
    assert_eq!(json(out)["interrupted"], true);
    eprintln!("{waiting_for}: ended {took:?} after SIGTERM: {line}");
    took
}

/// Starts a run of `url`, waits until the proxy holds a call (`held`), or `settle`
/// without a proxy, then a little more so that the run waits for it, and stops it.
fn stop_while_held(url: &str, held: Option<&std::sync::mpsc::Receiver<Step>>, what: &str) {
    let dir = scratch();
    let out = dir.path().join("r.json");
    let child = start_run(url, &out);
    match held {
        Some(rx) => {
            let step = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("the run never reached the held step ({what})"));
            eprintln!("holding {step:?}");
        }
        None => std::thread::sleep(Duration::from_millis(700)),
    }
    std::thread::sleep(Duration::from_millis(300));
    sigterm_ends_it(child, &out, what);
}

fn ganesha(tag: &str) -> Option<(common::Server, SocketAddr, SocketAddr)> {
    let s = common::Server::start(tag)?;
    let ip: std::net::IpAddr = s.addr.parse().unwrap();
    let (nfs, mnt) = (SocketAddr::new(ip, 2049), SocketAddr::new(ip, 20048));
    Some((s, nfs, mnt))
}

#[test]
fn v3_connect_to_a_server_that_drops_syns() {
    let u = stall::Unreachable::new();
    let url = format!(
        "nfs://127.0.0.1/export/ds?version=3&mountport={}&nfsport={}",
        u.addr.port(),
        u.addr.port()
    );
    stop_while_held(&url, None, &format!("a connection to {}", u.addr));
}

#[test]
fn v3_portmapper_that_never_answers() {
    // A loopback address of this test's own, for port 111.
    let pid = std::process::id();
    let ip = format!("127.{}.{}.111", (pid >> 8) & 0xff, pid & 0xff);
    let Ok(pm) = stall::silent(&ip, 111) else {
        eprintln!("note: skipping the portmapper case, {ip}:111 cannot be bound");
        return;
    };
    let url = format!("nfs://{ip}/export/ds?version=3");
    stop_while_held(&url, None, &format!("a reply from {pm}"));
}

#[test]
fn v3_mount_and_fsinfo_and_create_that_never_answer() {
    let Some((_s, nfs, mnt)) = ganesha("stallv3") else {
        return;
    };
    // MNT held (EXPORT answered; the NFS connections, made first, reach the server).
    let (m, held) = stall::proxy(mnt, |s| s.prog == 100005 && s.proc_ == 1);
    let (n, _) = stall::proxy(nfs, |_| false);
    let url = format!(
        "nfs://127.0.0.1/export/ds?version=3&mountport={}&nfsport={}",
        m.port(),
        n.port()
    );
    stop_while_held(&url, Some(&held), &format!("a reply from {m}"));
    // FSINFO held (the mount answered).
    let (n, held) = stall::proxy(nfs, |s| s.prog == 100003 && s.proc_ == 19);
    let (m, _) = stall::proxy(mnt, |_| false);
    let url = format!(
        "nfs://127.0.0.1/export/ds?version=3&mountport={}&nfsport={}",
        m.port(),
        n.port()
    );
    stop_while_held(&url, Some(&held), "FSINFO /export: stopped after");
    // CREATE of the data set's first file held.
    let (n, held) = stall::proxy(nfs, |s| s.prog == 100003 && s.proc_ == 8);
    let url = format!(
        "nfs://127.0.0.1/export/ds?version=3&mountport={}&nfsport={}",
        m.port(),
        n.port()
    );
    stop_while_held(&url, Some(&held), &format!("a reply from {n}"));
}

#[test]
fn v41_session_and_opens_that_never_answer() {
    let Some((_s, nfs, _)) = ganesha("stallv41") else {
        return;
    };
    for (op, name) in [
        (42, "EXCHANGE_ID"),
        (43, "CREATE_SESSION"),
        (58, "RECLAIM_COMPLETE"),
        (18, "OPEN"),
    ] {
        let (n, held) = match op {
            42 => stall::proxy(nfs, |s| s.op == Some(42)),
            43 => stall::proxy(nfs, |s| s.op == Some(43)),
            58 => stall::proxy(nfs, |s| s.op == Some(58)),
            _ => stall::proxy(nfs, |s| s.op == Some(18)),
        };
        let url = format!(
            "nfs://127.0.0.1:{p}/export/ds?version=4.1&nfsport={p}",
            p = n.port()
        );
        eprintln!("-- {name}");
        stop_while_held(&url, Some(&held), &format!("a reply from {n}"));
    }
}
