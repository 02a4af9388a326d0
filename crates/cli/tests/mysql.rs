//! `dbio mysql` against real MariaDB 10.11 servers started by `scripts/mariadb-lab`: a
//! cold table scan counted by the capture page for page against the table's size, a
//! capture while sysbench runs, and the errors a user meets: an unreachable server, a
//! refused login, performance_schema off, a restart between snapshots.
//!
//! Skips with one line where MariaDB is missing; DBIO_REQUIRE_PEERS=1 fails instead.

mod support;

use std::process::Command;

use support::mariadb_lab::Server;
use support::{dbio, s};

fn ok(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "dbio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn read_capture(path: &std::path::Path) -> dbio_sources::mysql::MyCapture {
    dbio_sources::mysql::read(&std::fs::read_to_string(path).unwrap(), "cap").unwrap()
}

#[test]
fn a_cold_scan_reads_the_tables_pages() {
    let Some(srv) = Server::start(&[]) else {
        return;
    };
    srv.sql(
        "CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(600)) ENGINE=InnoDB; \
         INSERT INTO t SELECT seq, REPEAT('x', 500) FROM seq_1_to_20000; ANALYZE TABLE t",
    );
    // Cold: the lab keeps no buffer pool dump, and 8 MiB holds a third of the table.
    srv.restart();
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    ok(&dbio(&[
        "mysql",
        "snapshot",
        &srv.url(),
        "--out",
        s(&p("b.json")),
    ]));
    let sum = srv.sql("SELECT SUM(LENGTH(pad)) FROM t");
    assert!(sum.ends_with("10000000"), "{sum}");
    ok(&dbio(&[
        "mysql",
        "snapshot",
        &srv.url(),
        "--out",
        s(&p("e.json")),
    ]));
    let out = ok(&dbio(&[
        "mysql",
        "join",
        s(&p("b.json")),
        s(&p("e.json")),
        "--out",
        s(&p("cap.json")),
    ]));
    assert!(out.contains("single-block-read"), "{out}");
    let c = read_capture(&p("cap.json"));
    let m = dbio_sources::mysql::model_of(&c, "cap").unwrap();
    // The session that scanned read some pages itself (the rest were read ahead by
    // background threads): the per-user summary counts its calls, no more than all.
    let (own, _) = c.session_data_file_delta().expect("the users' summary");
    let all = c
        .file_delta("wait/io/file/innodb/innodb_data_file")
        .unwrap();
    assert!(
        own > 0.0 && own <= (all.count_read + all.count_write + all.count_misc) as f64,
        "the session's {own} calls of {all:?}"
    );
    // The capture ran on the server's host: it read the server's process, and the
    // pages read ahead (asynchronously) are no read calls of it.
    let proc_ = c
        .end
        .server_process
        .expect("the server's process on this host");
    let pid = std::fs::read_to_string(format!("/proc/{}/comm", proc_.pid)).unwrap();
    assert!(matches!(pid.trim(), "mariadbd" | "mysqld"), "{pid}");
    let ahead = c
        .status_delta("Innodb_buffer_pool_read_ahead")
        .unwrap_or(0.0);
    let reads = c.status_delta("Innodb_data_reads").unwrap();
    let submitted = reads - c.server_syscr_delta().expect("read calls counted");
    let share = m
        .class("single-block-read")
        .and_then(|k| k.async_share)
        .expect("the share submitted");
    assert!(
        (share - (submitted / reads).max(0.0)).abs() < 1e-9,
        "{share} of {reads} reads, {submitted} submitted"
    );
    if ahead > 100.0 {
        assert!(submitted > 0.0, "{ahead} pages read ahead, none submitted?");
    }
    // Pages read, whether by a session or read ahead, against the table's file.
    let pages: f64 = m
        .classes
        .iter()
        .filter(|k| k.class.ends_with("-read"))
        .map(|k| k.production_ios.unwrap() * f64::from(k.size / m.block_size))
        .sum();
    // The clustered index's pages, as InnoDB itself sizes the table.
    let data = srv.sql(
        "SELECT DATA_LENGTH FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = 'sbtest' AND TABLE_NAME = 't'",
    );
    let table_pages = data.lines().last().unwrap().parse::<f64>().unwrap() / 16384.0;
    assert!(
        pages > 0.9 * table_pages && pages < 1.15 * table_pages,
        "the scan read {pages} pages of a {table_pages}-page table: {:?}",
        m.classes
    );
    let file = std::fs::metadata(srv.dir.join("sbtest/t.ibd"))
        .unwrap()
        .len();
    let bytes = m.dataset_bytes.unwrap();
    assert!(bytes >= file, "data set {bytes} < the table's {file}");
}

#[test]
fn a_capture_while_sysbench_runs() {
    let Some(srv) = Server::start(&[]) else {
        return;
    };
    let bench = |args: &[&str]| {
        let mut c = Command::new(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mariadb-lab"),
        );
        c.args(["sysbench", "--dir", s(&srv.dir), "--", "oltp_point_select"])
            .args(["--tables=1", "--table-size=30000"])
            .args(args);
        c
    };
    let prep = bench(&["prepare"]).output().unwrap();
    assert!(
        prep.status.success(),
        "{}",
        String::from_utf8_lossy(&prep.stderr)
    );
    srv.restart();
    let mut load = bench(&["--threads=2", "--rate=300", "--time=6", "run"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let tmp = tempfile::tempdir().unwrap();
    let cap = tmp.path().join("cap.json");
    let o = dbio(&[
        "mysql",
        "capture",
        &srv.url(),
        "--time",
        "3s",
        "--interval",
        "200ms",
        "--out",
        s(&cap),
    ]);
    let _ = load.wait();
    ok(&o);
    let c = read_capture(&cap);
    assert!(c.sessions.max >= 2, "{:?}", c.sessions);
    let m = dbio_sources::mysql::model_of(&c, "cap").unwrap();
    let r = m
        .classes
        .iter()
        .find(|k| k.class == "single-block-read")
        .unwrap_or_else(|| panic!("no reads: {:?}", m.classes));
    assert_eq!(r.size, 16384);
    assert!(r.rate > 10.0, "{r:?}");
    let mean = r
        .production_mean_us
        .expect("performance_schema timed the reads");
    assert!(mean > 0.5 && mean < 1e6, "{mean}");
    // The replay takes the capture as it takes any source.
    let dry = ok(&dbio(&["replay", s(&cap), "--dry-run"]));
    assert!(
        dry.contains("wait/io/file/innodb/innodb_data_file"),
        "{dry}"
    );
}

#[test]
fn bad_servers_get_one_line() {
    let one_line = |o: &std::process::Output, what: &str| {
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(what), "{what}: {err}");
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x.json");
    // Nothing listens on port 1.
    one_line(
        &dbio(&[
            "mysql",
            "snapshot",
            "mysql://dbio@127.0.0.1:1/",
            "--out",
            s(&out),
        ]),
        "cannot connect to MySQL at 127.0.0.1:1 as dbio",
    );
    let Some(srv) = Server::start(&[]) else {
        return;
    };
    let wrong = format!("mysql://dbio:wrong@127.0.0.1:{}/", srv.port);
    one_line(
        &dbio(&["mysql", "snapshot", &wrong, "--out", s(&out)]),
        "refused the login",
    );
    assert!(!out.exists());
    // A restart between the snapshots: the counters started again.
    let (b, e) = (tmp.path().join("b.json"), tmp.path().join("e.json"));
    ok(&dbio(&["mysql", "snapshot", &srv.url(), "--out", s(&b)]));
    std::thread::sleep(std::time::Duration::from_secs(2));
    srv.restart();
    ok(&dbio(&["mysql", "snapshot", &srv.url(), "--out", s(&e)]));
    one_line(
        &dbio(&["mysql", "join", s(&b), s(&e), "--out", s(&out)]),
        "the server restarted between the snapshots",
    );
    drop(srv);
    // performance_schema off: rates and sizes, and a line saying what is missing.
    let Some(off) = Server::start(&["--set", "performance_schema=OFF"]) else {
        return;
    };
    let o = dbio(&[
        "mysql",
        "capture",
        &off.url(),
        "--time",
        "1s",
        "--out",
        s(&out),
    ]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("performance_schema was OFF"), "{err}");
    let c = read_capture(&out);
    assert!(!c.has_file_io());
    let m = dbio_sources::mysql::model_of(&c, "cap").unwrap();
    assert!(
        m.classes.iter().all(|k| k.production_mean_us.is_none()),
        "{:?}",
        m.classes
    );
}
