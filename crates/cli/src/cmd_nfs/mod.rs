//! `dbio nfs`: a direct NFS client (ping, ls, stat, cat, cp, df, mkdir, rm), written
//! once over the version-neutral file API (`dbio_nfs::Fs`) and data path of a pool:
//! the URL's `version=` picks NFSv3 or NFSv4.1, nothing here does.
//!
//! Every command opens the URL with a pool, does its work over dbio's own connections
//! and prints the outcome; any failure is one line naming the procedure and path, exit
//! code 2. Ending the pool's state on the server afterwards (UMNT, DESTROY_SESSION) is
//! done too, and a failure there is only a warning: the work is done.

mod cp;
mod files;
mod ping;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::anyhow;
use dbio_nfs::copy::CopyError;
use dbio_nfs::fs::Stable;
use dbio_nfs::pool::Pool;
use dbio_nfs::{ClientConfig, Fs, NfsError, NfsUrl, Settings};

use crate::common::{duration_arg, size_arg, EXIT_INTERRUPTED};

const URL_HELP: &str =
    "nfs://HOST[:PORT]/EXPORT/PATH[?version=3|4.1&mountport=N&nfsport=N&uid=N&gid=N&conns=N]";

#[derive(clap::Args)]
#[command(after_help = "URLs look like libnfs's: \
    nfs://HOST[:PORT]/EXPORT/PATH?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N \
    (ports not given are asked from the server's portmapper). version=4.1 (or 4) speaks \
    NFSv4.1 (a session on port 2049, or nfsport=N); every subcommand works the same over \
    both. Ctrl-C stops cp, cat and ping at once (exit 130; a partial copy is removed).\n\n\
    Examples:\n  \
    dbio nfs ls 'nfs://127.0.0.1/export/?version=3&mountport=20048&nfsport=2049'\n  \
    dbio nfs ls 'nfs://127.0.0.1/export/?version=4.1'")]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
    #[command(flatten)]
    conn: ConnArgs,
}

#[derive(clap::Args)]
struct ConnArgs {
    /// Time to wait for a reply before retransmitting (same XID); a call
    /// fails after TIMEOUT x (RETRIES + 1). Also bounds each connect.
    #[arg(long, global = true, default_value = "5s", value_parser = duration_arg)]
    timeout: Duration,
    /// Retransmissions (or reconnects) before a call fails.
    #[arg(long, global = true, default_value_t = 2)]
    retries: u32,
    /// AUTH_SYS user id (default: yours, or uid= in the URL).
    #[arg(long, global = true)]
    uid: Option<u32>,
    /// AUTH_SYS group id (default: yours, or gid= in the URL).
    #[arg(long, global = true)]
    gid: Option<u32>,
    /// AUTH_SYS supplementary group ids, comma separated (at most 16).
    #[arg(long, global = true, value_delimiter = ',')]
    gids: Vec<u32>,
    /// Connect from a port below 1024 (needs root); many servers require it.
    #[arg(long, global = true)]
    reserved_port: bool,
    /// Replies a connection may gather before the kernel wakes it: at most half of the
    /// calls outstanding, only while 8 or more are, read anyway after 2 ms. Less CPU per
    /// call; the server then sees half to all of the outstanding calls. 1 wakes for every
    /// reply.
    #[arg(long, global = true, value_name = "N", default_value_t = dbio_nfs::DEFAULT_REPLY_BATCH,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    reply_batch: usize,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// RPC NULL round trips (procedure 0 of the NFS program, the same for NFSv3 and
    /// NFSv4.1: no work on the server beyond the RPC layer), or READs with --read:
    /// latency and calls per second.
    Ping {
        #[arg(help = URL_HELP)]
        url: String,
        /// Calls to make.
        #[arg(long, default_value_t = 10)]
        count: u64,
        /// Calls in flight at once.
        #[arg(long, default_value_t = 1)]
        outstanding: u32,
        /// Instead of NULL, READ this many bytes at random aligned offsets of
        /// the file the URL names.
        #[arg(long, value_parser = size_arg)]
        read: Option<u64>,
    },
    /// List a directory, like ls -l (owner columns show "-" where the version does not
    /// carry them).
    Ls {
        #[arg(help = URL_HELP)]
        url: String,
    },
    /// Attributes of a file or directory (GETATTR, ACCESS).
    Stat {
        #[arg(help = URL_HELP)]
        url: String,
    },
    /// Write a file to standard output (up to the size its attributes give).
    Cat {
        #[arg(help = URL_HELP)]
        url: String,
    },
    /// Copy a local file to NFS or an NFS file to local, pipelined.
    Cp {
        /// Local file or nfs:// URL to copy from.
        src: String,
        /// Local path or nfs:// URL to copy to (a directory keeps the name).
        dst: String,
        /// READs or WRITEs in flight.
        #[arg(long, default_value_t = 16)]
        depth: u32,
        /// Largest READ/WRITE (also bounded by the server's limits).
        #[arg(long, default_value = "1MiB", value_parser = size_arg)]
        io_size: u64,
        /// WRITE stability: unstable (then COMMIT, and a resend if the server
        /// restarted), data-sync or file-sync.
        #[arg(long, default_value = "unstable", value_parser = stable_arg)]
        stable: Stable,
    },
    /// File system size and free space.
    Df {
        #[arg(help = URL_HELP)]
        url: String,
    },
    /// Create a directory (with -p, also its missing parents).
    Mkdir {
        #[arg(help = URL_HELP)]
        url: String,
        #[arg(short = 'p', long)]
        parents: bool,
    },
    /// Remove a file, or an empty directory.
    Rm {
        #[arg(help = URL_HELP)]
        url: String,
    },
}

fn stable_arg(s: &str) -> Result<Stable, String> {
    match s {
        "unstable" => Ok(Stable::Unstable),
        "data-sync" => Ok(Stable::DataSync),
        "file-sync" => Ok(Stable::FileSync),
        _ => Err(format!(
            "unknown stability {s:?} (unstable, data-sync, file-sync)"
        )),
    }
}

/// NfsError already carries its cause in its message: flatten it so the
/// one-line report does not repeat the cause.
fn flat(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("{e}")
}

/// What a command's work came to: done, or stopped by a signal.
enum Done {
    Ok,
    Stopped(String),
}

/// A copy's error as the command reports it; a stop is not a failure.
fn copy_result<T>(r: Result<T, CopyError>) -> anyhow::Result<Result<T, Done>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(CopyError::Stopped(what)) => Ok(Err(Done::Stopped(what))),
        Err(e) => Err(flat(e)),
    }
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    keep_freed_memory();
    let conn = &args.conn;
    let done = match &args.command {
        Sub::Ping {
            url,
            count,
            outstanding,
            read,
        } => ping::ping(conn, url, *count, *outstanding, *read),
        Sub::Ls { url } => files::ls(conn, url),
        Sub::Stat { url } => files::stat(conn, url),
        Sub::Cat { url } => cp::cat(conn, url),
        Sub::Cp {
            src,
            dst,
            depth,
            io_size,
            stable,
        } => cp::cp(conn, src, dst, cp::options(*depth, *io_size, *stable)),
        Sub::Df { url } => files::df(conn, url),
        Sub::Mkdir { url, parents } => files::mkdir(conn, url, *parents),
        Sub::Rm { url } => files::rm(conn, url),
    };
    match done {
        Ok(Done::Ok) => Ok(0),
        Ok(Done::Stopped(what)) => {
            eprintln!("dbio: {what}: interrupted");
            Ok(EXIT_INTERRUPTED)
        }
        // The reader of our output went away (`| head`): not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(0)
        }
        Err(e) => Err(e),
    }
}

/// Reply records of up to 1 MiB are allocated and freed all the time;
/// glibc would hand large ones back to the kernel (trim, munmap) and fault
/// fresh pages in for the next, which costs more than the copy itself.
/// Keep freed memory in the heap instead.
fn keep_freed_memory() {
    // SAFETY: mallopt only changes allocator tuning; called before any
    // threads are started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// The client's configuration: the command line over the URL's parameters over one
/// connection (one caller, one request at a time, needs no more unless the URL's
/// `conns=` asks).
fn client_config(conn: &ConnArgs, parsed: NfsUrl) -> ClientConfig {
    let command_line = Settings {
        uid: conn.uid,
        gid: conn.gid,
        gids: Some(conn.gids.clone()),
        timeout: Some(conn.timeout),
        retries: Some(conn.retries),
        reserved_port: Some(conn.reserved_port),
        reply_batch: Some(conn.reply_batch),
        ..Settings::default()
    };
    let below = Settings {
        conns: Some(1),
        ..Settings::default()
    };
    ClientConfig {
        // No threads of its own: see `Remote::open`.
        workers: 0,
        ..ClientConfig::layered(parsed, command_line, below)
    }
}

/// An opened URL: the pool, its file API, and the path from the file API's root.
struct Remote {
    pool: Pool,
    fs: Fs,
    rel: String,
    url: NfsUrl,
}

impl Remote {
    /// Opens the URL's export over a pool whose connections move while this thread
    /// waits (no threads of its own: the cheapest way per RPC for one caller).
    fn open(conn: &ConnArgs, url: &str) -> anyhow::Result<Remote> {
        let config = client_config(conn, NfsUrl::parse(url).map_err(flat)?);
        let (pool, rel) = Pool::open(&config).map_err(flat)?;
        let fs = pool.fs();
        Ok(Remote {
            pool,
            fs,
            rel,
            url: config.url,
        })
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.pool.block_on(f)
    }

    /// `server:/path` of `rel`.
    fn display(&self, rel: &str) -> String {
        self.fs.display(rel)
    }

    /// Ends the pool's state on the server; the work is done, so a failure is a
    /// warning.
    fn close(self) -> anyhow::Result<Done> {
        if let Err(e) = self.pool.close() {
            warn(&e);
        }
        Ok(Done::Ok)
    }
}

/// A one-line warning on standard error.
fn warn(e: &NfsError) {
    eprintln!("dbio: warning: {e}");
}

/// The stop flag for commands that move data; SIGINT or SIGTERM sets it.
fn stop_flag() -> &'static AtomicBool {
    crate::common::stop_flag()
}

/// UTC `YYYY-MM-DD HH:MM`.
fn format_time(secs: i64) -> String {
    let t = dbio_report::UtcTime::from_unix(secs);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_stabilities_parse() {
        assert_eq!(format_time(0), "1970-01-01 00:00");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00");
        assert_eq!(stable_arg("data-sync"), Ok(Stable::DataSync));
        assert!(stable_arg("sync").unwrap_err().contains("file-sync"));
    }
}
