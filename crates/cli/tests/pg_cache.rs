//! The capture's page-cache figures against a real PostgreSQL 18 as shipped
//! (io_method=worker, reads through the OS page cache), in a memory cgroup that
//! bounds its page cache, whose hit share is known by construction:
//! - a hot table larger than a quarter of shared_buffers (so each scan reads it
//!   through a ring of buffers, asking the kernel for every block) but far smaller
//!   than the page cache, scanned over and over: the page cache serves it all;
//! - a cold table whose pages were dropped from the page cache first, scanned once:
//!   the device delivers every byte, in reads the read-ahead made large.
//!
//! Skips with one line where PostgreSQL 18 or a memory cgroup is missing;
//! DBIO_REQUIRE_PEERS=1 fails instead.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use dbio_sources::pg::PgCapture;
use support::pg_lab::{lab, Server};
use support::{dbio, s};

/// One psql session kept open: its backend lives across the snapshots, as a pooled
/// connection's does, so its /proc/PID/io counts are read at both.
struct Session {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    n: u32,
}

impl Session {
    fn open(srv: &Server) -> Session {
        let mut child = Command::new(lab())
            .args([
                "psql",
                "--dir",
                s(&srv.dir),
                "--",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("psql");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Session {
            child,
            input,
            output,
            n: 0,
        }
    }

    /// Runs `sql` and waits for it to end, its statistics flushed.
    fn run(&mut self, sql: &str) {
        self.n += 1;
        let mark = format!("done {}", self.n);
        writeln!(
            self.input,
            "{sql};\nSELECT pg_stat_force_next_flush();\nSELECT 1;\n\\echo {mark}"
        )
        .unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            let got = self.output.read_line(&mut line).unwrap();
            assert!(got > 0, "psql ended before {mark}");
            if line.trim() == mark {
                return;
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Drops `rel`'s pages from the page cache (clean ones: a CHECKPOINT first).
fn evict(srv: &Server, rel: &str) {
    let file = srv.sql(&[&format!("SELECT pg_relation_filepath('{rel}')")]);
    let path = srv.dir.join(file);
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // SAFETY: a valid descriptor; the advice only drops cached pages.
    let rc = unsafe {
        libc::posix_fadvise(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            0,
            0,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    assert_eq!(rc, 0, "posix_fadvise {}", path.display());
}

fn capture(begin: &Path, end: &Path, out: &Path) -> PgCapture {
    let o = dbio(&["pg", "join", s(begin), s(end), "--out", s(out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dbio_sources::pg::read(&std::fs::read_to_string(out).unwrap(), "cap").unwrap()
}

#[test]
fn pg18_page_cache_share_of_a_hot_and_a_cold_table() {
    // 16 MB of shared buffers and 112 MB of page cache at most.
    let Some(srv) = Server::start_with("18", &[], &["--memory-limit", "128M"]) else {
        return;
    };
    srv.sql(&[
        // 8 MB: over a quarter of shared_buffers, so a scan uses a ring.
        "CREATE TABLE hot AS SELECT g, repeat('h', 200) AS pad FROM generate_series(1, 32000) g",
        // 160 MB: more than the page cache can hold.
        "CREATE TABLE cold AS SELECT g, repeat('c', 200) AS pad FROM generate_series(1, 640000) g",
        "VACUUM ANALYZE",
        "CHECKPOINT",
    ]);
    let tmp = support::scratch();
    let snap = |name: &str| {
        let p = tmp.path().join(name);
        srv.snapshot(&p);
        p
    };
    let mut session = Session::open(&srv);
    // The hot table in the page cache before the first snapshot.
    session.run("SELECT count(*) FROM hot");
    let b = snap("b.json");
    for _ in 0..20 {
        session.run("SELECT count(*) FROM hot");
    }
    let m1 = snap("m1.json");
    evict(&srv, "cold");
    session.run("SELECT count(*) FROM cold");
    let e = snap("e.json");

    let hot = capture(&b, &m1, &tmp.path().join("hot.json"));
    let model = dbio_sources::pg::model_of(&hot, "hot").unwrap();
    let reads = model
        .class("single-block-read")
        .or(model.class("multiblock-read"));
    let n = reads.and_then(|r| r.production_ios).unwrap_or(0.0);
    assert!(
        n > 100.0,
        "the hot scans asked the kernel: {:?}",
        model.classes
    );
    let p = model.page_cache.as_ref().expect("page cache figures");
    let hit = p.hit_share.unwrap_or_else(|| panic!("{}", p.hit_source));
    assert!(hit >= 0.95, "hot table: hit share {hit} ({})", p.hit_source);
    assert!(
        p.fetched_share.is_some_and(|f| f <= 0.05),
        "{}",
        p.hit_source
    );
    let bytes = p.bytes.unwrap_or_else(|| panic!("{}", p.bytes_source));
    assert!(
        (32 << 20..=128 << 20).contains(&bytes),
        "page cache {bytes} bytes: {}",
        p.bytes_source
    );
    assert!(
        p.bytes_source.starts_with("memory cgroup"),
        "{}",
        p.bytes_source
    );
    // The hot table is the most accessed (its shares are of accesses, hits and reads,
    // beside the catalog's), and shared buffers missed it on every scan's ring.
    let top = &model.relations[0];
    assert!(
        top.name == "public.hot" && top.share > 0.5,
        "{:?}",
        model.relations
    );
    assert!(top.hit_share.is_some_and(|h| h < 0.9), "{top:?}");

    let cold = capture(&m1, &e, &tmp.path().join("cold.json"));
    let model = dbio_sources::pg::model_of(&cold, "cold").unwrap();
    let p = model.page_cache.as_ref().expect("page cache figures");
    // Every byte came from the device, in reads the read-ahead made larger than
    // PostgreSQL's (so that most of its reads found their blocks already there).
    let fetched = p
        .fetched_share
        .unwrap_or_else(|| panic!("{}", p.hit_source));
    assert!(
        fetched >= 0.9,
        "cold table: {fetched} of the bytes fetched ({})",
        p.hit_source
    );
    assert!(
        p.device_read_bytes.is_some_and(|b| b > 8192),
        "{}",
        p.hit_source
    );
    assert_eq!(
        model.relations[0].name, "public.cold",
        "{:?}",
        model.relations
    );
}
