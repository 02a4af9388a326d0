//! Captures of MariaDB 10.11, MySQL 8.0 and MySQL 8.4 written here, with round
//! figures whose model is known.

use super::fixtures::{io, mariadb};
use super::*;
use crate::pg::Sessions;

/// The same I/O as MySQL 8.0.40 counts it: 5,000 log flushes (write + fsync) of the
/// 10,000 writes, taking 1.5 s of writes and 1 s of fsyncs (500 us a flush), the log
/// through the page cache (no innodb_log_file_buffering), the doublewrite buffer in
/// files of its own.
fn mysql80() -> MyCapture {
    let mut c = mariadb();
    c.begin.status.insert("Innodb_os_log_fsyncs".into(), 100);
    c.end.status.insert("Innodb_os_log_fsyncs".into(), 5100);
    c.end
        .status
        .insert("Innodb_data_fsyncs".into(), 150 + 5000 + 300);
    c.begin
        .file_events
        .push(io(LOG_FILE, [0, 200, 100], [0, 0, 0], [0, 1 << 20]));
    c.end.file_events.push(io(
        LOG_FILE,
        [0, 10_200, 5100],
        [0, 1_500_000_000_000, 1_000_000_000_000],
        [0, (1 << 20) + 2_560_000],
    ));
    c.server.version = "8.0.40".into();
    c.server.comment = "MySQL Community Server - GPL".into();
    c.server.settings.remove("innodb_log_file_buffering");
    c.server
        .settings
        .insert("innodb_flush_method".into(), "fsync".into());
    c.server.settings.insert("log_bin".into(), "ON".into());
    for (s, n) in [(&mut c.begin, 5u64), (&mut c.end, 130)] {
        s.file_events
            .push(io(DBLWR_FILE, [0, n, 0], [0, 0, 0], [0, n * 64 * 16384]));
    }
    c
}

fn class<'a>(m: &'a crate::model::WorkloadModel, name: &str) -> &'a crate::model::ModelClass {
    m.classes
        .iter()
        .find(|k| k.class == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", m.classes))
}

#[test]
fn mariadb_reads_flushes_and_writes() {
    let m = model_of(&mariadb(), "c.json").unwrap();
    assert_eq!(m.block_size, 16384);
    assert_eq!(m.users, Some(8));
    assert_eq!(m.dataset_bytes, Some((1 << 30) + (1 << 20)));
    assert!(!m.data_buffered, "O_DIRECT");
    assert!(m.source.contains("MariaDB 10.11.19"), "{}", m.source);
    let r = class(&m, "single-block-read");
    assert_eq!((r.rate, r.size), (200.0, 16384));
    assert_eq!(r.event, DATA_FILE);
    assert!((r.production_mean_us.unwrap() - 100.0).abs() < 1e-9);
    let w = class(&m, "redo-write");
    assert_eq!(w.rate, 100.0);
    // 2,560,000 bytes over 10,000 flushes: 256 a flush, in one 512-byte log block.
    assert_eq!(w.size, 512);
    assert_eq!(w.flush.as_deref(), Some("fdatasync"));
    assert_eq!(w.buffered, Some(false));
    assert_eq!(w.production_mean_us, None);
    assert!(
        w.mean_source
            .as_deref()
            .unwrap()
            .contains("times no redo log I/O"),
        "{:?}",
        w.mean_source
    );
    let d = class(&m, "dbwr-write");
    assert_eq!((d.rate, d.size, d.production_mean_us), (80.0, 16384, None));
    let b = class(&m, "direct-write");
    assert_eq!((b.rate, b.size), (1.25, 64 * 16384));
    assert_eq!(b.event, format!("{DATA_FILE} (doublewrite)"));
    assert!(
        m.not_replayed
            .iter()
            .any(|n| n.starts_with("data file fsyncs: 3.00/s")),
        "{:?}",
        m.not_replayed
    );
}

#[test]
fn mysql_80_and_84_name_their_own_files() {
    let m = model_of(&mysql80(), "c.json").unwrap();
    assert!(m.source.contains("MySQL 8.0.40"), "{}", m.source);
    let w = class(&m, "redo-write");
    assert_eq!((w.rate, w.size), (50.0, 512));
    assert!((w.production_mean_us.unwrap() - 500.0).abs() < 1e-9);
    assert!(m
        .notes
        .iter()
        .any(|n| n.contains("2.00 log writes per flush")));
    assert!(
        m.not_replayed
            .iter()
            .any(|n| n.starts_with("data file fsyncs: 3.00/s")),
        "{:?}",
        m.not_replayed
    );
    assert!(
        m.data_buffered,
        "innodb_flush_method fsync reads through the page cache"
    );
    assert_eq!(class(&m, "redo-write").buffered, Some(true));
    assert_eq!(class(&m, "direct-write").event, DBLWR_FILE);
    assert!(m.not_replayed.iter().any(|n| n.contains("binary log")));
    let mut c84 = mysql80();
    c84.server.version = "8.4.3".into();
    c84.server
        .settings
        .insert("innodb_flush_method".into(), "O_DIRECT".into());
    let m = model_of(&c84, "c.json").unwrap();
    assert!(!m.data_buffered);
    assert_eq!(class(&m, "single-block-read").rate, 200.0);
}

#[test]
fn without_performance_schema_rates_and_sizes_but_no_latency() {
    let mut c = mariadb();
    for s in [&mut c.begin, &mut c.end] {
        s.file_events.clear();
        s.performance_schema_missing = Some("performance_schema was OFF".into());
    }
    let m = model_of(&c, "c.json").unwrap();
    let r = class(&m, "single-block-read");
    assert_eq!((r.rate, r.size, r.production_mean_us), (200.0, 16384, None));
    assert!(r.mean_source.as_deref().unwrap().starts_with("missing"));
    assert_eq!(class(&m, "redo-write").production_mean_us, None);
    assert!(
        m.notes
            .iter()
            .any(|n| n.starts_with("latency: performance_schema was OFF")),
        "{:?}",
        m.notes
    );
}

#[test]
fn read_ahead_is_read_by_extents_and_not_judged_with_the_waits() {
    let mut c = mariadb();
    c.end
        .status
        .insert("Innodb_buffer_pool_read_ahead".into(), 6400);
    let m = model_of(&c, "c.json").unwrap();
    let r = class(&m, "single-block-read");
    assert_eq!(r.rate, (20_000.0 - 6400.0) / 100.0);
    assert_eq!(r.production_mean_us, None, "times mixed with read-ahead's");
    let mb = class(&m, "multiblock-read");
    assert_eq!((mb.rate, mb.size), (1.0, 1 << 20));
}

#[test]
fn a_restart_a_reset_and_old_servers_are_refused() {
    let mut c = mariadb();
    c.end.status.insert("Uptime".into(), 30);
    let e = c.check().unwrap_err().to_string();
    assert!(
        e.starts_with("the server restarted between the snapshots"),
        "{e}"
    );
    let mut c = mariadb();
    c.end.file_events[0].count_read = 5;
    let e = c.check().unwrap_err().to_string();
    assert!(e.contains("innodb_data_file COUNT_READ went down"), "{e}");
    for old in ["5.6.51-log", "10.1.48-MariaDB"] {
        let mut c = mariadb();
        c.server.version = old.into();
        let e = c.check().unwrap_err().to_string();
        assert!(e.contains("older than MySQL 5.7 and MariaDB 10.2"), "{e}");
    }
    let mut c = mariadb();
    c.end.taken_at = c.begin.taken_at;
    assert!(matches!(c.check(), Err(CaptureError::Order { .. })));
}

#[test]
fn snapshots_join_into_the_capture() {
    let c = mariadb();
    let file = |snapshot: MySnapshot| MySnapshotFile {
        kind: SNAPSHOT_KIND.into(),
        format: CAPTURE_FORMAT,
        server: c.server.clone(),
        sessions: Sessions {
            max: 3,
            mean: 3.0,
            max_active: 1,
            samples: 1,
        },
        snapshot,
    };
    let joined = file(c.begin.clone()).join(file(c.end.clone())).unwrap();
    assert_eq!(joined.elapsed_s(), 100.0);
    assert_eq!(joined.sessions.samples, 2);
    let mut other = file(c.end.clone());
    other.server.target = "db2:3306 as dbio".into();
    let e = file(c.begin.clone()).join(other).unwrap_err();
    assert!(matches!(e, CaptureError::Servers(..)), "{e}");
}

#[test]
fn a_capture_is_known_by_its_kind_and_read_back() {
    let text = serde_json::to_string_pretty(&mariadb()).unwrap();
    assert!(is_capture(&text));
    assert!(!crate::pg::is_capture(&text));
    assert_eq!(
        crate::source::Source::of(&text),
        crate::source::Source::Mysql
    );
    assert_eq!(read(&text, "c.json").unwrap(), mariadb());
    let bad = read("{\"kind\": \"dbio-mysql-capture\"}", "c.json").unwrap_err();
    assert!(bad.starts_with("c.json: missing field"), "{bad}");
}

#[test]
fn the_buffer_pool_hit_share_gives_the_skew_of_the_accesses() {
    // 64 MiB of pool over 1 GiB that served 94% of 320,000 page accesses: far more
    // than uniform accesses would hit (about 6%), so a steep Zipf law fitted to it.
    let mut c = mariadb();
    c.server
        .settings
        .insert("innodb_buffer_pool_size".into(), (64u64 << 20).to_string());
    c.begin
        .status
        .insert("Innodb_buffer_pool_read_requests".into(), 10_000);
    c.end
        .status
        .insert("Innodb_buffer_pool_read_requests".into(), 330_000);
    c.begin
        .status
        .insert("Innodb_buffer_pool_reads".into(), 1000);
    c.end
        .status
        .insert("Innodb_buffer_pool_reads".into(), 20_200);
    let m = model_of(&c, "x.json").unwrap();
    let p = m.page_cache.as_ref().expect("the buffer pool's shape");
    assert_eq!(p.buffer_pool_bytes, Some(64 << 20));
    assert_eq!(p.buffer_pool_hit_share, Some(0.94));
    let s = p.skew.expect("a fitted skew");
    assert!(s > 0.5 && s < 3.0, "{s}: {}", p.skew_source);
    // The fitted law gives the hit share back in a pool of that many pages.
    let blocks = [((m.dataset_bytes.unwrap() / 16384), 1.0)];
    let got = crate::model::shape::hit_share(&blocks, s, 4096.0);
    assert!((got - 0.94).abs() < 0.005, "{got}");
    assert!(
        p.skew_source.contains("Innodb_buffer_pool_reads"),
        "{}",
        p.skew_source
    );
    assert!(p.bytes_source.contains("O_DIRECT"), "{}", p.bytes_source);
    // Without the pool's size, or its counters, there is no shape.
    let mut bare = c.clone();
    bare.server.settings.remove("innodb_buffer_pool_size");
    assert!(model_of(&bare, "x.json").unwrap().page_cache.is_none());
    assert!(model_of(&mariadb(), "x.json").unwrap().page_cache.is_none());
}

#[test]
fn a_transactions_reads_come_in_a_burst_spaced_by_its_statements_time() {
    // 20,000 page reads (the fixture's) in 5,000 commits: 4 each; the statements took
    // 7.5 s, 1,500 us per transaction, so its reads come 375 us apart.
    let mut c = mariadb();
    c.begin.status.insert("Com_commit".into(), 1000);
    c.end.status.insert("Com_commit".into(), 6000);
    c.begin.statements = Some(TimerSum {
        count: 10,
        sum_timer_wait: 1_000_000,
    });
    c.end.statements = Some(TimerSum {
        count: 70_010,
        sum_timer_wait: 1_000_000 + 7_500_000_000_000,
    });
    let m = model_of(&c, "x.json").unwrap();
    let r = class(&m, "single-block-read");
    assert_eq!(r.burst_reads, Some(4.0));
    let gap = r.burst_gap_us.unwrap();
    assert!((gap - 375.0).abs() < 1e-6, "{gap}");
    let src = r.burst_source.as_deref().unwrap();
    assert!(
        src.contains("Com_commit 5000") && src.contains("SUM_TIMER_WAIT"),
        "{src}"
    );
    assert!(m.check().is_ok());
    // The replay's plan takes it from the saved model.
    let back = crate::model::WorkloadModel::from_toml(&m.to_toml(), "m.toml").unwrap();
    assert_eq!(class(&back, "single-block-read").burst_reads, Some(4.0));
    assert_eq!(r.burst_alone, None);
    // The users' summary says the sessions read 16,000 themselves: 3.2 per
    // transaction, 469 us apart, and the other 20% alone.
    let mut split = c.clone();
    split.begin.session_data_file = Some(TimerSum {
        count: 500,
        sum_timer_wait: 0,
    });
    split.end.session_data_file = Some(TimerSum {
        count: 16_500,
        sum_timer_wait: 400_000_000_000,
    });
    let m = model_of(&split, "x.json").unwrap();
    let r = class(&m, "single-block-read");
    assert_eq!(r.burst_reads, Some(3.2));
    assert!((r.burst_gap_us.unwrap() - 468.75).abs() < 1e-6);
    assert!((r.burst_alone.unwrap() - 0.2).abs() < 1e-9);
    let src = r.burst_source.as_deref().unwrap();
    assert!(
        src.contains("16000 of the 20000") && src.contains("by_user"),
        "{src}"
    );
    assert!(m.check().is_ok());
    let back = crate::model::WorkloadModel::from_toml(&m.to_toml(), "m.toml").unwrap();
    assert_eq!(class(&back, "single-block-read").burst_alone, r.burst_alone);
    // A hand-edited share of 1 (no transaction's read) is refused.
    let edited = m
        .to_toml()
        .replace("burst_alone = 0.2", "burst_alone = 1.0");
    let e = crate::model::WorkloadModel::from_toml(&edited, "m.toml").unwrap_err();
    assert!(e.to_string().contains("burst_alone 1"), "{e}");
    // Commits but no statement time: said, and no bursts.
    let mut untimed = c.clone();
    untimed.end.statements = None;
    let m = model_of(&untimed, "x.json").unwrap();
    assert_eq!(class(&m, "single-block-read").burst_reads, None);
    assert!(
        m.notes.iter().any(|n| n.contains("not how far apart")),
        "{:?}",
        m.notes
    );
    // Neither commits nor statements (an old capture): nothing claimed.
    let m = model_of(&mariadb(), "x.json").unwrap();
    assert_eq!(class(&m, "single-block-read").burst_reads, None);
    assert!(!m.notes.iter().any(|n| n.starts_with("reads: in bursts")));
}

#[test]
fn reads_no_read_call_made_were_submitted_and_are_replayed_so() {
    // 20,000 page reads, 16,500 read calls of the server's process: 3,500 (17.5%)
    // submitted asynchronously.
    let mut c = mariadb();
    c.server
        .settings
        .insert("innodb_use_native_aio".into(), "ON".into());
    c.begin.server_process = Some(ServerProcess {
        pid: 42,
        syscr: 500,
    });
    c.end.server_process = Some(ServerProcess {
        pid: 42,
        syscr: 17_000,
    });
    let m = model_of(&c, "x.json").unwrap();
    let r = class(&m, "single-block-read");
    assert!((r.async_share.unwrap() - 0.175).abs() < 1e-9);
    let src = r.async_source.as_deref().unwrap();
    assert!(
        src.contains("16500") && src.contains("/proc/42/io syscr"),
        "{src}"
    );
    assert_eq!(class(&m, "dbwr-write").async_share, Some(1.0));
    assert!(m.check().is_ok());
    let back = crate::model::WorkloadModel::from_toml(&m.to_toml(), "m.toml").unwrap();
    assert_eq!(class(&back, "single-block-read").async_share, r.async_share);
    // On a class it does not apply to, or out of range, an edit is refused.
    let edited = m
        .to_toml()
        .replace("async_share = 0.175", "async_share = 1.5");
    let e = crate::model::WorkloadModel::from_toml(&edited, "m.toml").unwrap_err();
    assert!(e.to_string().contains("async_share 1.5"), "{e}");
    // Another process at the end (a restart the uptime missed, another server): not
    // known, and said why; so from another host.
    let mut moved = c.clone();
    moved.end.server_process = Some(ServerProcess {
        pid: 43,
        syscr: 17_000,
    });
    let m = model_of(&moved, "x.json").unwrap();
    assert_eq!(class(&m, "single-block-read").async_share, None);
    let mut remote = c.clone();
    remote.end.server_process = None;
    remote.end.server_process_missing =
        Some("pid file /run/mysqld/mysqld.pid: No such file".into());
    let m = model_of(&remote, "x.json").unwrap();
    assert_eq!(class(&m, "single-block-read").async_share, None);
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains("is not known: pid file /run/mysqld")),
        "{:?}",
        m.notes
    );
    // Without native AIO the page writes are waited for by InnoDB's own threads.
    assert_eq!(
        class(&model_of(&mariadb(), "x.json").unwrap(), "dbwr-write").async_share,
        None
    );
}
