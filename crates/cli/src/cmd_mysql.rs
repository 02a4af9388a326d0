//! `dbio mysql`: a MySQL or MariaDB server's own InnoDB I/O, captured over a time (two
//! snapshots of its counters and performance_schema) for `dbio replay` and `dbio
//! compare`.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use dbio_sources::mysql::conn::{self as mysql_conn, Server, ServerNamed};
use dbio_sources::mysql::{model_of, MyCapture, MySnapshot, MySnapshotFile};
use dbio_sources::pg::SessionSampler;

use crate::common::{self, duration_arg};
use crate::db_capture;

#[derive(clap::Args)]
#[command(
    about = "Capture a MySQL or MariaDB server's InnoDB I/O, for dbio replay",
    long_about = "Capture a MySQL (5.7 and later) or MariaDB (10.2 and later) server's InnoDB \
        I/O: two snapshots of SHOW GLOBAL STATUS (Innodb_data_reads, Innodb_os_log_fsyncs, \
        Innodb_pages_written, the doublewrite buffer's counters, ...) and, where \
        performance_schema is on, of its file I/O summaries for InnoDB's data, log and \
        doublewrite files (counts, bytes and times), with the settings that shape InnoDB's \
        I/O (innodb_flush_method, innodb_page_size, innodb_flush_log_at_trx_commit, ...), the \
        InnoDB tables' size and the client sessions seen between them. A monitoring account \
        is enough: PROCESS to see the sessions, SELECT on performance_schema.\n\n\
        Latencies come from performance_schema only: with it off, a capture gives rates and \
        sizes and says the latencies are missing.\n\n\
        The server is named as MySQL's clients name it: a mysql:// URL, then --socket, then \
        the [client] group of --defaults-file (else ~/.my.cnf), then MYSQL_HOST, \
        MYSQL_TCP_PORT, MYSQL_UNIX_PORT and MYSQL_PWD. Without a host, or with localhost, \
        the client goes through the socket (default /run/mysqld/mysqld.sock).\n\n\
        `dbio replay CAPTURE.json --target DIR` then runs the same I/O against other storage \
        and sets InnoDB's own read and log flush times beside the storage's.\n\n\
        Examples:\n  dbio mysql capture mysql://monitor:secret@db1:3306/ --time 10m --out prod.json\n  \
        dbio mysql capture --defaults-file ~/monitor.cnf --time 10m --out prod.json\n  \
        dbio mysql snapshot --socket /run/mysqld/mysqld.sock --out before.json\n  \
        dbio mysql join before.json after.json --out prod.json\n  \
        dbio replay prod.json --target /data/dbio --time 60s"
)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Two snapshots --time apart, the sessions sampled between them
    Capture(CaptureArgs),
    /// One snapshot now, to be joined with a later one
    Snapshot(SnapshotArgs),
    /// Two snapshots of one server as a capture
    Join(db_capture::JoinArgs),
}

#[derive(clap::Args)]
struct CaptureArgs {
    #[command(flatten)]
    conn: ConnArgs,
    /// Time between the snapshots (Ctrl-C ends it early and keeps what was seen)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = duration_arg)]
    time: Duration,
    /// How often the processlist is read for the sessions
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = duration_arg)]
    interval: Duration,
    /// The capture file to write (JSON)
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

#[derive(clap::Args)]
struct SnapshotArgs {
    #[command(flatten)]
    conn: ConnArgs,
    /// The snapshot file to write (JSON)
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    match args.command {
        Sub::Capture(a) => capture(a),
        Sub::Snapshot(a) => snapshot(a),
        Sub::Join(a) => join(a),
    }
}

/// Says once what a capture will lack without performance_schema's file I/O.
fn warn_missing(s: &MySnapshot) {
    if let Some(why) = &s.performance_schema_missing {
        eprintln!(
            "dbio mysql: {why}: the capture gives rates and sizes but no read or log flush \
             latency (performance_schema = ON in the server's my.cnf, then a restart)"
        );
    }
}

/// How to reach the server, as `dbio mysql` takes it.
#[derive(clap::Args, Clone, Debug)]
pub struct ConnArgs {
    /// mysql://USER:PASSWORD@HOST:PORT/DATABASE (mariadb:// too; ?socket=PATH for a
    /// socket). What it leaves out comes from the option files and MYSQL_HOST,
    /// MYSQL_TCP_PORT, MYSQL_UNIX_PORT and MYSQL_PWD
    #[arg(value_name = "URL")]
    pub url: Option<String>,
    /// Read the [client] group of this option file only (not ~/.my.cnf)
    #[arg(long, value_name = "FILE")]
    pub defaults_file: Option<PathBuf>,
    /// The server's Unix socket (for localhost)
    #[arg(long, value_name = "PATH")]
    pub socket: Option<String>,
}

fn connect(conn: &ConnArgs) -> anyhow::Result<Server> {
    let named = ServerNamed {
        url: conn.url.clone(),
        defaults_file: conn.defaults_file.clone(),
        socket: conn.socket.clone(),
    };
    mysql_conn::connect(&mysql_conn::endpoint(&named)?)
}

fn capture(a: CaptureArgs) -> anyhow::Result<i32> {
    // A stop during the login or a snapshot (a server that does not answer) ends the
    // command within 1.5 s; the wait between snapshots looks at the flag itself.
    let stop = common::stop_flag_within(Duration::from_millis(1500));
    db_capture::check_out(&a.out)?;
    let mut s = connect(&a.conn)?;
    let begin = s.snapshot()?;
    warn_missing(&begin);
    eprintln!(
        "dbio mysql: capturing {} at {} for {:?} (Ctrl-C ends it early and keeps it)",
        s.version, s.target, a.time
    );
    let start = Instant::now();
    let mut seen = SessionSampler::default();
    let mut next_progress = Duration::from_secs(10);
    let interval = a.interval.max(Duration::from_millis(100));
    let mut lost: Option<String> = None;
    while start.elapsed() < a.time && !stop.load(Ordering::SeqCst) {
        // A connection that broke (the server restarting) is made again; the second
        // snapshot's uptime then tells whether the counters started again.
        match s.sessions() {
            Ok(n) => seen.add(n),
            Err(e) => {
                if lost.is_none() {
                    eprintln!("dbio mysql: {e}; connecting again");
                }
                lost = Some(e.to_string());
                let _ = s.reconnect();
            }
        }
        let left = a.time.saturating_sub(start.elapsed());
        db_capture::sleep_unless_stopped(interval.min(left), stop);
        if start.elapsed() >= next_progress {
            eprintln!(
                "dbio mysql: {:.0} s of {:.0} s, {} sessions",
                start.elapsed().as_secs_f64(),
                a.time.as_secs_f64(),
                seen.last
            );
            next_progress += Duration::from_secs(10);
        }
    }
    let interrupted = stop.load(Ordering::SeqCst);
    let end = match s.snapshot() {
        Ok(e) => e,
        Err(_) if lost.is_some() => {
            s.reconnect()?;
            s.snapshot()?
        }
        Err(e) => return Err(e),
    };
    if let Ok(n) = s.sessions() {
        seen.add(n);
    }
    common::finishing();
    let c = s.capture(begin, end, seen.sessions())?;
    c.check()
        .map_err(|e| anyhow!("MySQL at {}: {e}", s.target))?;
    db_capture::write_json(&a.out, &c)?;
    summary(&c, &a.out)?;
    if interrupted {
        eprintln!(
            "dbio mysql: interrupted after {:.0} s; the capture of that time is written",
            c.elapsed_s()
        );
        return Ok(common::EXIT_INTERRUPTED);
    }
    Ok(0)
}

fn snapshot(a: SnapshotArgs) -> anyhow::Result<i32> {
    db_capture::check_out(&a.out)?;
    let mut s = connect(&a.conn)?;
    let snapshot = s.snapshot()?;
    warn_missing(&snapshot);
    let f = s.snapshot_file(snapshot)?;
    db_capture::write_json(&a.out, &f)?;
    common::wrote(vec![a.out]);
    Ok(0)
}

fn join(a: db_capture::JoinArgs) -> anyhow::Result<i32> {
    db_capture::check_out(&a.out)?;
    let b: MySnapshotFile = db_capture::read_json(&a.begin)?;
    let e: MySnapshotFile = db_capture::read_json(&a.end)?;
    let c = b
        .join(e)
        .map_err(|e| anyhow!("{} and {}: {e}", a.begin.display(), a.end.display()))?;
    db_capture::write_json(&a.out, &c)?;
    summary(&c, &a.out)?;
    Ok(0)
}

/// The model the capture gives, as `dbio replay --dry-run` shows it.
fn summary(c: &MyCapture, out: &std::path::Path) -> anyhow::Result<()> {
    let m =
        model_of(c, &db_capture::file_name(out)).map_err(|e| anyhow!("{}: {e}", out.display()))?;
    db_capture::summary(&m, out)
}
