//! A MariaDB 10.11 capture to test with, here and in the crates that read captures
//! (dbio-compare's tests, through the `fixtures` feature).

use super::{FileIo, MyCapture, MyServer, MySnapshot, CAPTURE_FORMAT, CAPTURE_KIND, DATA_FILE};
use crate::pg::Sessions;

pub fn io(event: &str, n: [u64; 3], timers_ps: [u64; 3], bytes: [u64; 2]) -> FileIo {
    FileIo {
        event: event.into(),
        file: None,
        count_read: n[0],
        count_write: n[1],
        count_misc: n[2],
        sum_timer_read: timers_ps[0],
        sum_timer_write: timers_ps[1],
        sum_timer_misc: timers_ps[2],
        bytes_read: bytes[0],
        bytes_written: bytes[1],
    }
}

pub fn status(pairs: &[(&str, u64)]) -> std::collections::BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// MariaDB 10.11 over 100 s: 20,000 page reads of 16 KiB taking 2 s (100 us each),
/// 10,000 log writes of 2,560,000 bytes, each then fsync'd (10.11 counts no log fsyncs
/// apart and times no log I/O), 8,000 pages written, 125 doublewrite batches of 64
/// pages, 300 data file fsyncs.
pub fn mariadb() -> MyCapture {
    let server = MyServer {
        version: "10.11.19-MariaDB-0+deb12u1".into(),
        comment: "Debian 12".into(),
        target: "127.0.0.1:3306 as dbio".into(),
        settings: [
            ("innodb_flush_method", "O_DIRECT"),
            ("innodb_page_size", "16384"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_doublewrite", "ON"),
            ("innodb_log_file_buffering", "OFF"),
            ("performance_schema", "ON"),
            ("log_bin", "OFF"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        schema_bytes: [
            ("sbtest".to_string(), 1 << 30),
            ("mysql".to_string(), 1 << 20),
        ]
        .into_iter()
        .collect(),
    };
    let begin = MySnapshot {
        taken_at: 1000.0,
        status: status(&[
            ("Uptime", 500),
            ("Innodb_data_reads", 1000),
            ("Innodb_data_read", 1000 * 16384),
            ("Innodb_os_log_written", 1 << 20),
            ("Innodb_log_writes", 200),
            ("Innodb_pages_written", 400),
            ("Innodb_dblwr_writes", 5),
            ("Innodb_dblwr_pages_written", 320),
            ("Innodb_data_fsyncs", 150),
            ("Innodb_buffer_pool_read_ahead", 0),
        ]),
        file_events: vec![io(
            DATA_FILE,
            [1000, 400, 10],
            [100_000_000, 0, 0],
            [1000 * 16384, 400 * 16384],
        )],
        file_instances: vec![],
        statements: None,
        session_data_file: None,
        performance_schema_missing: None,
        server_process: None,
        server_process_missing: None,
    };
    let mut end = begin.clone();
    end.taken_at = 1100.0;
    end.status = status(&[
        ("Uptime", 600),
        ("Innodb_data_reads", 21_000),
        ("Innodb_data_read", 21_000 * 16384),
        ("Innodb_os_log_written", (1 << 20) + 2_560_000),
        ("Innodb_log_writes", 10_200),
        ("Innodb_pages_written", 8400),
        ("Innodb_dblwr_writes", 130),
        ("Innodb_dblwr_pages_written", 320 + 8000),
        ("Innodb_data_fsyncs", 150 + 10_000 + 300),
        ("Innodb_buffer_pool_read_ahead", 0),
    ]);
    end.file_events = vec![io(
        DATA_FILE,
        [21_000, 8400, 310],
        [100_000_000 + 2_000_000_000_000, 0, 0],
        [21_000 * 16384, 8400 * 16384],
    )];
    MyCapture {
        kind: CAPTURE_KIND.into(),
        format: CAPTURE_FORMAT,
        server,
        sessions: Sessions {
            max: 8,
            mean: 7.5,
            max_active: 6,
            samples: 100,
        },
        begin,
        end,
    }
}
