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
mod remote;

use dbio_nfs::fs::Stable;

use crate::common::{size_arg, EXIT_INTERRUPTED};
use remote::{ConnArgs, Done};

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

#[cfg(test)]
mod tests {
    use super::remote::format_time;
    use super::*;

    #[test]
    fn dates_and_stabilities_parse() {
        assert_eq!(format_time(0), "1970-01-01 00:00");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00");
        assert_eq!(stable_arg("data-sync"), Ok(Stable::DataSync));
        assert!(stable_arg("sync").unwrap_err().contains("file-sync"));
    }
}
