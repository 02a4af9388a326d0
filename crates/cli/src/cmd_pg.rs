//! `dbio pg`: a PostgreSQL server's own I/O statistics, captured over a time (two
//! snapshots of its statistics views) for `dbio replay` and `dbio compare`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use dbio_sources::pg::conn as pg_conn;
use dbio_sources::pg::{model_of, PgCapture, PgSnapshotFile, SessionSampler};

use crate::common;
use crate::common::duration_arg;
use crate::db_capture;

#[derive(clap::Args)]
#[command(
    about = "Capture a PostgreSQL server's I/O from its statistics views, for dbio replay",
    long_about = "Capture a PostgreSQL server's I/O (14 and later) from its own statistics \
        views: two snapshots of pg_stat_database, pg_stat_wal, pg_stat_bgwriter, \
        pg_stat_checkpointer and pg_stat_io, with the settings that shape its I/O, its \
        databases' sizes and the client sessions seen between them. Nothing but statistics \
        views is read from the server; a role with pg_monitor is enough.\n\n\
        Where the server runs on this host, each snapshot also reads /proc/PID/schedstat of \
        the processes pg_stat_activity lists: the time they waited for a CPU, which is in \
        PostgreSQL's read and WAL times and which the replay adds to the storage's for the \
        calls that sleep. A \
        remote server gives no such figure, and the capture says why.\n\n\
        `dbio replay CAPTURE.json --target DIR` then runs the same I/O against other storage \
        and sets PostgreSQL's own read and WAL flush times beside the storage's.\n\n\
        Latencies need track_io_timing (reads) and track_wal_io_timing (WAL) on: without them \
        a capture still gives rates and sizes, and says the latencies are missing.\n\n\
        CONNINFO is a libpq conninfo (host=db1 port=5432 user=monitor dbname=app) or URI \
        (postgresql://monitor@db1/app); what it leaves out comes from PGHOST, PGPORT, PGUSER, \
        PGDATABASE, PGPASSWORD and ~/.pgpass (or PGPASSFILE), as psql takes them.\n\n\
        Examples:\n  dbio pg capture 'host=db1 user=monitor dbname=app' --time 10m --out prod.json\n  \
        dbio pg snapshot postgresql://monitor@db1/app --out before.json\n  \
        dbio pg snapshot postgresql://monitor@db1/app --out after.json\n  \
        dbio pg join before.json after.json --out prod.json\n  \
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
    /// libpq conninfo or postgresql:// URI
    #[arg(value_name = "CONNINFO")]
    conninfo: String,
    /// Time between the snapshots (Ctrl-C ends it early and keeps what was seen)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = duration_arg)]
    time: Duration,
    /// How often pg_stat_activity is read for the sessions
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = duration_arg)]
    interval: Duration,
    /// The capture file to write (JSON)
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

#[derive(clap::Args)]
struct SnapshotArgs {
    /// libpq conninfo or postgresql:// URI
    #[arg(value_name = "CONNINFO")]
    conninfo: String,
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

/// Says once what a capture will lack when the server does not time its I/O.
fn warn_timing(settings: &std::collections::BTreeMap<String, dbio_sources::pg::PgSetting>) {
    for (name, what) in [
        ("track_io_timing", "read latency"),
        ("track_wal_io_timing", "WAL flush latency"),
    ] {
        if settings.get(name).is_some_and(|s| s.setting != "on") {
            eprintln!(
                "dbio pg: {name} is off on the server: the capture gives rates and sizes but \
                 no {what} (ALTER SYSTEM SET {name} = on; SELECT pg_reload_conf();)"
            );
        }
    }
}

fn capture(a: CaptureArgs) -> anyhow::Result<i32> {
    // A stop during the login or a snapshot (a server that does not answer) ends the
    // command within 1.5 s; the wait between snapshots looks at the flag itself.
    let stop = common::stop_flag_within(Duration::from_millis(1500));
    db_capture::check_out(&a.out)?;
    let mut s = pg_conn::connect(&a.conninfo)?;
    let settings = pg_conn::settings(&mut s)?;
    warn_timing(&settings);
    let begin = pg_conn::snapshot(&mut s)?;
    eprintln!(
        "dbio pg: capturing {} at {} for {:?} (Ctrl-C ends it early and keeps it)",
        s.version.split(" on ").next().unwrap_or(&s.version),
        s.target,
        a.time
    );
    let start = Instant::now();
    let mut seen = SessionSampler::default();
    let mut next_progress = Duration::from_secs(10);
    let interval = a.interval.max(Duration::from_millis(100));
    while start.elapsed() < a.time && !stop.load(Ordering::SeqCst) {
        seen.add(pg_conn::sessions(&mut s)?);
        let left = a.time.saturating_sub(start.elapsed());
        db_capture::sleep_unless_stopped(interval.min(left), stop);
        if start.elapsed() >= next_progress {
            eprintln!(
                "dbio pg: {:.0} s of {:.0} s, {} sessions",
                start.elapsed().as_secs_f64(),
                a.time.as_secs_f64(),
                seen.last
            );
            next_progress += Duration::from_secs(10);
        }
    }
    let interrupted = stop.load(Ordering::SeqCst);
    seen.add(pg_conn::sessions(&mut s)?);
    let end = pg_conn::snapshot(&mut s)?;
    common::finishing();
    let c = pg_conn::capture(&mut s, begin, end, seen.sessions())?;
    c.check()
        .map_err(|e| anyhow!("PostgreSQL at {}: {e}", s.target))?;
    db_capture::write_json(&a.out, &c)?;
    summary(&c, &a.out)?;
    if interrupted {
        eprintln!(
            "dbio pg: interrupted after {:.0} s; the capture of that time is written",
            c.elapsed_s()
        );
        return Ok(common::EXIT_INTERRUPTED);
    }
    Ok(0)
}

fn snapshot(a: SnapshotArgs) -> anyhow::Result<i32> {
    db_capture::check_out(&a.out)?;
    let mut s = pg_conn::connect(&a.conninfo)?;
    let settings = pg_conn::settings(&mut s)?;
    warn_timing(&settings);
    let f = pg_conn::snapshot_file(&mut s, settings)?;
    db_capture::write_json(&a.out, &f)?;
    common::wrote(vec![a.out]);
    Ok(0)
}

fn join(a: db_capture::JoinArgs) -> anyhow::Result<i32> {
    db_capture::check_out(&a.out)?;
    let b: PgSnapshotFile = db_capture::read_json(&a.begin)?;
    let e: PgSnapshotFile = db_capture::read_json(&a.end)?;
    let c = b
        .join(e)
        .map_err(|e| anyhow!("{} and {}: {e}", a.begin.display(), a.end.display()))?;
    db_capture::write_json(&a.out, &c)?;
    summary(&c, &a.out)?;
    Ok(0)
}

/// The model the capture gives, as `dbio replay --dry-run` shows it.
fn summary(c: &PgCapture, out: &Path) -> anyhow::Result<()> {
    let m =
        model_of(c, &db_capture::file_name(out)).map_err(|e| anyhow!("{}: {e}", out.display()))?;
    db_capture::summary(&m, out)
}
