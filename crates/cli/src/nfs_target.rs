//! The options of NFS targets (`--target nfs://...` or a path under an
//! oranfstab mount point) and the live dNFS views under the progress line.

use std::io::{IsTerminal, Write};

use dbio_nfs::Settings;
use dbio_storage::{NfsOptions, Target};

/// Options of NFS targets, shared by run and calibrate. Each is the command line's
/// setting of the client, over the URL's parameters and the oranfstab entry: a flag not
/// given leaves the setting to them, then to the default.
#[derive(clap::Args, Debug, Clone)]
pub struct NfsArgs {
    /// NFS connections per network path (nfs:// targets only). Requests go to the connection
    /// with the fewest outstanding, a batch at a time (up to 16 requests or 256 KiB, sent in
    /// one system call). 1 behaves like a kernel mount's single connection; the default 4
    /// lets the server work on more requests at once (servers commonly serve each connection
    /// from one thread at a time): against nfs-ganesha here, 4 gave a fifth or more IOPS
    /// than 1, at about 1.3x the client CPU per 8 KiB read (see --reply-batch and
    /// BENCHMARKS.md). Wins over a `conns=N` in the URL [default: 4]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub conns: Option<u32>,
    /// Largest NFS READ or WRITE per RPC, like the rsize/wsize mount options (nfs:// targets
    /// only); larger I/Os are split. Also bounded by the server's rtmax/wtmax [default: 1MiB]
    #[arg(long, value_name = "SIZE", value_parser = crate::common::size_arg)]
    pub rwsize: Option<u64>,
    /// Oracle's oranfstab (or its TOML equivalent) naming servers, paths (local: + path:,
    /// several paths share the load) and export/mount pairs; a --target under a mount point
    /// is then reached through dbio's NFS client. Without it, ./oranfstab then
    /// /etc/oranfstab are looked for, as Oracle does. Several paths without a file: add
    /// `path=SERVER` (or `path=LOCAL->SERVER`, IP addresses) to the nfs:// URL once per extra
    /// path, e.g. nfs://10.213.1.2/export/dbio?version=3&mountport=20048&nfsport=2049&path=10.213.2.2.
    /// With several paths, a path silent for `timeo=N` tenths of a second (default 20), reset
    /// or refused is taken out and its requests move to the others at once; it is probed in
    /// the background and rejoins when it answers (events in the report)
    #[arg(long, value_name = "FILE")]
    pub oranfstab: Option<std::path::PathBuf>,
    /// Replies each NFS connection may gather before the kernel wakes it (nfs:// targets
    /// only): at most half of the I/Os outstanding on all the connections together, only
    /// while 8 or more are, read anyway after 2 ms (or when another of them wakes). One wake-up per batch instead of per reply takes most of the CPU
    /// an I/O costs off the client (BENCHMARKS.md). Gathered replies are I/Os not yet
    /// replaced, so the server works on half to all of --outstanding (three quarters on
    /// average): a server saturated below that keeps its rate and latency. 1 wakes for
    /// every reply and keeps the depth exact [default: 16]
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub reply_batch: Option<usize>,
}

impl NfsArgs {
    /// The target layer's options: the oranfstab to read, and the flags given as the
    /// command line's settings of the client.
    pub fn options(&self) -> NfsOptions {
        NfsOptions {
            oranfstab: self.oranfstab.clone(),
            command_line: Settings {
                conns: self.conns,
                max_transfer: self.rwsize.map(|s| s.min(u64::from(u32::MAX)) as u32),
                reply_batch: self.reply_batch,
                ..Settings::default()
            },
        }
    }
}

/// A progress printer that shows the target's live views (dNFS channels,
/// calls, events) under each progress line; on a terminal the block is
/// redrawn in place.
pub fn views_printer(t: &Target) -> impl Fn(&str) + Sync + '_ {
    let tty = std::io::stderr().is_terminal();
    let drawn = std::sync::atomic::AtomicUsize::new(0);
    move |line: &str| {
        let text = format!("{line}\n{}", t.live_views().unwrap_or_default());
        let mut err = std::io::stderr().lock();
        let prev = drawn.swap(text.lines().count(), std::sync::atomic::Ordering::Relaxed);
        if tty && prev > 0 {
            let _ = write!(err, "\x1b[{prev}A\x1b[J");
        }
        let _ = err.write_all(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::NfsArgs;

    #[derive(clap::Parser)]
    struct Args {
        #[command(flatten)]
        nfs: NfsArgs,
    }

    /// A flag not given says nothing (the URL, the oranfstab or the default decide),
    /// and `--help` shows the default the configuration applies.
    #[test]
    fn flags_not_given_are_unset_and_help_shows_the_defaults() {
        let none = Args::parse_from(["dbio"]).nfs.options().command_line;
        assert_eq!(none, dbio_nfs::Settings::default());
        let given = Args::parse_from([
            "dbio",
            "--conns",
            "2",
            "--rwsize",
            "64k",
            "--reply-batch",
            "1",
        ])
        .nfs
        .options()
        .command_line;
        assert_eq!(
            (given.conns, given.max_transfer, given.reply_batch),
            (Some(2), Some(65536), Some(1))
        );
        let help = Args::command().render_long_help().to_string();
        for default in [
            format!("[default: {}]", dbio_nfs::client_config::DEFAULT_CONNS),
            format!("[default: {}]", dbio_nfs::DEFAULT_REPLY_BATCH),
        ] {
            assert!(help.contains(&default), "{default} not in {help}");
        }
    }
}
