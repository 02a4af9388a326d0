//! Ctrl-C while an NFS server never answers: `dbio run` against a scripted server on
//! loopback that accepts connections and never replies (so the NFSv4.1 session setup
//! waits). The first SIGINT ends the run within 2 s, with the results written and
//! marked interrupted, exit code 130 and one line on stderr; a second SIGINT ends it
//! at once, without writing them.

mod support;

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

use support::{json, s, scratch, signal, spawn};

/// A server that accepts every connection and never answers.
fn silent_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        while let Ok((s, _)) = l.accept() {
            held.push(s);
        }
    });
    addr
}

fn start_run(addr: SocketAddr, out: &std::path::Path) -> Child {
    let port = addr.port();
    let target = format!("nfs://127.0.0.1:{port}/export/ds?version=4.1&nfsport={port}");
    spawn(&[
        "run",
        "--target",
        &target,
        "--size",
        "8MiB",
        "--time",
        "1s",
        "--json",
        s(out),
    ])
}

/// Waits for `child` to end, at most `limit`; its exit code and how long it took.
fn wait_for(child: &mut Child, limit: Duration) -> (Option<i32>, Duration) {
    let t = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return (st.code(), t.elapsed());
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn one_sigint_ends_a_run_stuck_on_a_silent_server_with_its_results() {
    let dir = scratch();
    let out = dir.path().join("r.json");
    let addr = silent_server();
    let mut child = start_run(addr, &out);
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before the signal"
    );
    assert_eq!(signal(&child, libc::SIGINT), 0);
    let (code, took) = wait_for(&mut child, Duration::from_secs(10));
    let err = stderr_of(&mut child);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(2), "took {took:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("dbio: interrupted"), "{err}");
    // What it waited for, and how long.
    let server = format!("waiting for a reply from {addr}");
    assert!(lines[0].contains(&server), "{err}");
    assert!(lines[0].to_uppercase().contains("EXCHANGE_ID"), "{err}");
    let r = json(&out);
    assert_eq!(r["interrupted"], true, "{r}");
}

#[test]
fn a_second_sigint_ends_the_run_at_once() {
    let dir = scratch();
    let out = dir.path().join("r.json");
    let addr = silent_server();
    let mut child = start_run(addr, &out);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(signal(&child, libc::SIGINT), 0);
    // The first signal lets a wait go on for a moment (a server that answers still
    // sees the end of the work); the second does not.
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        child.try_wait().unwrap().is_none(),
        "ended on the first signal"
    );
    assert_eq!(signal(&child, libc::SIGINT), 0);
    let (code, took) = wait_for(&mut child, Duration::from_secs(5));
    assert_eq!(code, Some(130), "{}", stderr_of(&mut child));
    assert!(took < Duration::from_millis(300), "took {took:?}");
    // At once: no results written.
    assert!(!out.exists(), "results written after a second signal");
}
