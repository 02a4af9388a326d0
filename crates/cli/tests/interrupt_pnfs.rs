//! pNFS against the lab (scripts/pnfs-lab) when a server stops answering: SIGTERM while
//! the metadata server holds a LAYOUTGET or a GETDEVICEINFO (a proxy in front of it holds
//! the call) ends `dbio run` within 2 s; a data server that accepts and never answers
//! (its ganesha frozen) costs the run a bounded wait, after which its stripes go through
//! the metadata server with one warning line, and SIGTERM ends such a run within 2 s.
//! A device whose 32 addresses never answer (the metadata server's GETDEVICEINFO
//! replies rewritten by a proxy) costs a run one bounded wait and one warning line.
//! Skips without the lab unless DBIO_REQUIRE_PEERS=1.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;
#[path = "../../nfs/tests/common/pnfs_lab.rs"]
mod lab;
mod support;

use std::io::Read;
use std::net::SocketAddr;
use std::process::Child;
use std::time::{Duration, Instant};

use support::{pnfs_lab, stall};

const WITHIN: Duration = Duration::from_secs(2);

/// Sends SIGTERM, waits for the end; exit code, time it took, stderr.
fn sigterm(mut child: Child) -> (Option<i32>, Duration, String) {
    assert!(
        child.try_wait().unwrap().is_none(),
        "ended before the signal"
    );
    assert_eq!(support::signal(&child, libc::SIGTERM), 0);
    let t = Instant::now();
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        if t.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running 15 s after SIGTERM");
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
    (code, took, err)
}

/// Thaws the frozen host when the test ends, however it ends.
struct Frozen<'a>(&'a lab::Lab, &'a str);

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        self.0.run(&["thaw", self.1]);
    }
}

#[test]
fn stalled_metadata_and_data_servers_end_within_bounds() {
    let Some(lab) = lab::Lab::start() else {
        return;
    };
    let tmp = support::scratch();
    let out = tmp.path().join("r.json");
    let url = |host: &str| pnfs_lab::url(host, 0);
    let base = |host: &str| -> Vec<String> {
        ["run", "--target", &url(host), "--size", pnfs_lab::SIZE]
            .map(String::from)
            .to_vec()
    };
    let args = |v: &[String], more: &[&str]| -> Vec<String> {
        v.iter()
            .cloned()
            .chain(more.iter().map(|s| s.to_string()))
            .collect()
    };
    let mds = lab.host("1");
    // The data set first, its file's data on host 2 (a data server only).
    pnfs_lab::prepare(&url(&mds), &[]);
    lab.place(pnfs_lab::DATA_FILE, &lab.host("2"));

    // The metadata server holds LAYOUTGET, then GETDEVICEINFO.
    let upstream: SocketAddr = format!("{mds}:2049").parse().unwrap();
    for (op, name) in [(50, "LAYOUTGET"), (47, "GETDEVICEINFO")] {
        let (p, held) = if op == 50 {
            stall::proxy(upstream, |s| s.op == Some(50))
        } else {
            stall::proxy(upstream, |s| s.op == Some(47))
        };
        let host = format!("127.0.0.1:{}", p.port());
        let mut a = base(&host);
        a[2] = format!("{}&nfsport={}", url(&host), p.port());
        let a = args(&a, &["--time", "3s", "--json", support::s(&out)]);
        let child = support::spawn(&a.iter().map(String::as_str).collect::<Vec<_>>());
        held.recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("the run never sent {name}"));
        std::thread::sleep(Duration::from_millis(300));
        let (code, took, err) = sigterm(child);
        eprintln!("{name} held: ended {took:?} after SIGTERM: {err}");
        assert_eq!(code, Some(130), "{name}: {err}");
        assert!(took < WITHIN, "{name}: took {took:?}: {err}");
        let line: Vec<&str> = err.lines().filter(|l| l.starts_with("dbio:")).collect();
        assert_eq!(line.len(), 1, "{err}");
        assert!(
            line[0].contains(&format!("waiting for a reply from {p}")),
            "{err}"
        );
    }

    // Host 2 accepts connections and never answers.
    lab.run(&["freeze", "2"]);
    let _thaw = Frozen(&lab, "2");
    let _ = std::fs::remove_file(&out);
    let timed = args(&base(&mds), &["--time", "3s", "--json", support::s(&out)]);
    let timed: Vec<&str> = timed.iter().map(String::as_str).collect();
    let t = Instant::now();
    let done = support::dbio(&timed);
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&done.stderr).into_owned();
    eprintln!("frozen data server: the run took {took:?}: {err}");
    assert!(done.status.success(), "{err}");
    // 3 s of I/O, a data server's bound, and the set-up.
    assert!(took < Duration::from_secs(15), "took {took:?}: {err}");
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("cannot be reached"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains(&lab.host("2")), "{err}");
    let r = support::json(&out);
    assert_eq!(r["failed_ios"], 0, "{}", r["nfs"]);

    // SIGTERM at any moment of such a run ends it within 2 s.
    for after in [500, 1500, 2500] {
        let child = support::spawn(&timed);
        std::thread::sleep(Duration::from_millis(after));
        let (code, took, err) = sigterm(child);
        eprintln!("frozen data server, SIGTERM after {after} ms: ended {took:?} later: {err}");
        assert_eq!(code, Some(130), "{err}");
        assert!(
            took < WITHIN,
            "SIGTERM after {after} ms: took {took:?}: {err}"
        );
    }
}

#[test]
fn a_device_of_32_addresses_that_never_answer_costs_one_bounded_wait() {
    let Some(lab) = lab::Lab::start() else {
        return;
    };
    let tmp = support::scratch();
    let out = tmp.path().join("r.json");
    let mds = lab.host("1");
    pnfs_lab::prepare(&pnfs_lab::url(&mds, 0), &[]);

    // Every stripe's data server: 32 addresses, two distinct servers that accept and
    // never answer, taking turns.
    let silent = [
        stall::silent("127.0.0.1", 0).unwrap(),
        stall::silent("127.0.0.1", 0).unwrap(),
    ];
    let device: Vec<SocketAddr> = (0..32).map(|i| silent[i % 2]).collect();
    let upstream: SocketAddr = format!("{mds}:2049").parse().unwrap();
    let (p, rewritten) = support::device_proxy::proxy(upstream, device);
    let proxied = format!("127.0.0.1:{}", p.port());
    let url = format!("{}&nfsport={}", pnfs_lab::url(&proxied, 0), p.port());
    let t = Instant::now();
    let done = support::dbio(&[
        "run",
        "--target",
        &url,
        "--size",
        pnfs_lab::SIZE,
        "--time",
        "3s",
        "--json",
        support::s(&out),
    ]);
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&done.stderr).into_owned();
    eprintln!("a device of 32 silent addresses: the run took {took:?}: {err}");
    assert!(done.status.success(), "{err}");
    assert!(
        *rewritten.lock().unwrap() >= 1,
        "no GETDEVICEINFO went through the proxy"
    );
    // Within 10 s of its --time.
    assert!(took < Duration::from_secs(13), "took {took:?}: {err}");
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("cannot be reached"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    for a in silent {
        assert!(warnings[0].contains(&a.to_string()), "{err}");
    }
    let r = support::json(&out);
    assert_eq!(r["failed_ios"], 0, "{}", r["nfs"]);
}
