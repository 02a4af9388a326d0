//! What every subcommand of `dbio nfs` shares: the connection options, an opened URL
//! (its pool, file API and path), the outcome of a command's work, and one-line
//! errors and warnings. Below the subcommands and the dispatch in `mod.rs`.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::anyhow;
use dbio_nfs::copy::CopyError;
use dbio_nfs::pool::Pool;
use dbio_nfs::{ClientConfig, Fs, NfsError, NfsUrl, Settings};

use crate::common::duration_arg;

#[derive(clap::Args)]
pub(super) struct ConnArgs {
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

/// NfsError already carries its cause in its message: flatten it so the
/// one-line report does not repeat the cause.
pub(super) fn flat(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("{e}")
}

/// What a command's work came to: done, or stopped by a signal.
pub(super) enum Done {
    Ok,
    Stopped(String),
}

/// A copy's error as the command reports it; a stop is not a failure.
pub(super) fn copy_result<T>(r: Result<T, CopyError>) -> anyhow::Result<Result<T, Done>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(CopyError::Stopped(what)) => Ok(Err(Done::Stopped(what))),
        Err(e) => Err(flat(e)),
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
pub(super) struct Remote {
    pub(super) pool: Pool,
    pub(super) fs: Fs,
    pub(super) rel: String,
    pub(super) url: NfsUrl,
}

impl Remote {
    /// Opens the URL's export over a pool whose connections move while this thread
    /// waits (no threads of its own: the cheapest way per RPC for one caller).
    pub(super) fn open(conn: &ConnArgs, url: &str) -> anyhow::Result<Remote> {
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

    pub(super) fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.pool.block_on(f)
    }

    /// `server:/path` of `rel`.
    pub(super) fn display(&self, rel: &str) -> String {
        self.fs.display(rel)
    }

    /// Ends the pool's state on the server; the work is done, so a failure is a
    /// warning.
    pub(super) fn close(self) -> anyhow::Result<Done> {
        if let Err(e) = self.pool.close() {
            warn(&e);
        }
        Ok(Done::Ok)
    }
}

/// A one-line warning on standard error.
pub(super) fn warn(e: &NfsError) {
    eprintln!("dbio: warning: {e}");
}

/// The stop flag for commands that move data; SIGINT or SIGTERM sets it.
pub(super) fn stop_flag() -> &'static AtomicBool {
    crate::common::stop_flag()
}

/// UTC `YYYY-MM-DD HH:MM`.
pub(super) fn format_time(secs: i64) -> String {
    let t = dbio_report::UtcTime::from_unix(secs);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute
    )
}
