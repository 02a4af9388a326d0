//! `dbio nfs`: a direct NFS client (ping, ls, stat, cat, cp, df, mkdir, rm) over NFSv3,
//! or over NFSv4.1 with `?version=4.1` (`cmd_nfs_v41.rs`, `cmd_nfs_v41_files.rs`).
//!
//! Every command mounts the export named by its URL, does its work over
//! dbio's own connections and prints the outcome; any failure is one line
//! naming the procedure and path, exit code 2.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use dbio_nfs::proto::nfs3::{self, CreateHow, Fattr3, Ftype3, Sattr3, StableHow};
use dbio_nfs::transfer::{self, TransferOptions};
use dbio_nfs::{ClientOptions, Nfs3Client, NfsError, NfsUrl};

use crate::common::{duration_arg, size_arg};

#[derive(clap::Args)]
#[command(after_help = "URLs look like libnfs's: \
    nfs://HOST[:PORT]/EXPORT/PATH?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N \
    (ports not given are asked from the server's portmapper). version=4.1 (or 4) speaks \
    NFSv4.1 (a session on port 2049, or nfsport=N) for every subcommand; ping then times \
    SEQUENCE round trips.\n\nExamples:\n  \
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
    #[arg(long, global = true, value_name = "N", default_value_t = dbio_rpc::conn::DEFAULT_REPLY_BATCH,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    reply_batch: usize,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// NULL round trips (or READs with --read): latency and calls per second.
    Ping {
        /// nfs://HOST[:PORT]/EXPORT/PATH[?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N]
        url: String,
        /// Calls to make.
        #[arg(long, default_value_t = 10)]
        count: u64,
        /// Calls in flight at once.
        #[arg(long, default_value_t = 1)]
        outstanding: usize,
        /// Instead of NULL, READ this many bytes at random aligned offsets of
        /// the file the URL names.
        #[arg(long, value_parser = size_arg)]
        read: Option<u64>,
    },
    /// List a directory (READDIRPLUS), like ls -l.
    Ls {
        /// nfs://HOST[:PORT]/EXPORT/PATH[?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N]
        url: String,
    },
    /// Attributes of a file or directory (GETATTR, ACCESS).
    Stat {
        /// nfs://HOST[:PORT]/EXPORT/PATH[?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N]
        url: String,
    },
    /// Write a file to standard output.
    Cat {
        /// nfs://HOST[:PORT]/EXPORT/PATH[?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N]
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
        depth: usize,
        /// Largest READ/WRITE (also bounded by the server's rtmax/wtmax).
        #[arg(long, default_value = "1MiB", value_parser = size_arg)]
        io_size: u64,
        /// WRITE stability: unstable (then COMMIT), data-sync or file-sync.
        #[arg(long, default_value = "unstable", value_parser = stable_arg)]
        stable: StableHow,
    },
    /// File system size and free space (FSSTAT, FSINFO, PATHCONF).
    Df {
        /// nfs://HOST[:PORT]/EXPORT/PATH[?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N]
        url: String,
    },
    /// Create a directory (with -p, also its missing parents).
    Mkdir {
        /// nfs://HOST[:PORT]/EXPORT/PATH[?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N]
        url: String,
        #[arg(short = 'p', long)]
        parents: bool,
    },
    /// Remove a file, or an empty directory.
    Rm {
        /// nfs://HOST[:PORT]/EXPORT/PATH[?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N]
        url: String,
    },
}

fn stable_arg(s: &str) -> Result<StableHow, String> {
    match s {
        "unstable" => Ok(StableHow::Unstable),
        "data-sync" => Ok(StableHow::DataSync),
        "file-sync" => Ok(StableHow::FileSync),
        _ => Err(format!(
            "unknown stability {s:?} (unstable, data-sync, file-sync)"
        )),
    }
}

/// NfsError already carries its cause in its message: flatten it so the
/// one-line report does not repeat the cause.
fn flat(e: NfsError) -> anyhow::Error {
    anyhow!("{e}")
}

pub fn main(args: Args) -> anyhow::Result<()> {
    keep_freed_memory();
    // One thread runs both this command and the connection task: the
    // cheapest way per RPC, and file I/O here is short.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match rt.block_on(run(args)) {
        // The reader of our output went away (`| head`): not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        other => other,
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let conn = &args.conn;
    if let Some(r) = run_v41(&args).await {
        return r;
    }
    match &args.command {
        Sub::Ping {
            url,
            count,
            outstanding,
            read,
        } => ping(conn, url, *count, *outstanding, *read).await,
        Sub::Ls { url } => ls(conn, url).await,
        Sub::Stat { url } => stat(conn, url).await,
        Sub::Cat { url } => cat(conn, url).await,
        Sub::Cp {
            src,
            dst,
            depth,
            io_size,
            stable,
        } => cp(conn, src, dst, cp_options(*depth, *io_size, *stable)).await,
        Sub::Df { url } => df(conn, url).await,
        Sub::Mkdir { url, parents } => mkdir(conn, url, *parents).await,
        Sub::Rm { url } => rm(conn, url).await,
    }
}

fn cp_options(depth: usize, io_size: u64, stable: StableHow) -> TransferOptions {
    TransferOptions {
        depth: depth.clamp(1, 1024),
        max_io: io_size.clamp(4096, 16 << 20) as u32,
        stable,
        ..TransferOptions::default()
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

/// The subcommand over NFSv4.1 when its URL asks for it (`None`: NFSv3).
async fn run_v41(args: &Args) -> Option<anyhow::Result<()>> {
    let urls: Vec<&String> = match &args.command {
        Sub::Ping { url, .. }
        | Sub::Ls { url }
        | Sub::Stat { url }
        | Sub::Cat { url }
        | Sub::Df { url }
        | Sub::Mkdir { url, .. }
        | Sub::Rm { url } => vec![url],
        Sub::Cp { src, dst, .. } => vec![src, dst],
    };
    let parsed = urls
        .iter()
        .filter_map(|u| NfsUrl::parse(u).ok())
        .find(|u| u.version.is_v41())?;
    let conn = &args.conn;
    Some(match &args.command {
        Sub::Ping {
            count,
            outstanding,
            read,
            ..
        } => v41_files::ping(conn, &parsed, *count, *outstanding, *read).await,
        Sub::Ls { .. } => v41::ls(conn, &parsed).await,
        Sub::Stat { .. } => v41::stat(conn, &parsed).await,
        Sub::Cat { .. } => v41::cat(conn, &parsed).await,
        Sub::Cp {
            src,
            dst,
            depth,
            io_size,
            stable,
        } => v41_files::cp(conn, src, dst, cp_options(*depth, *io_size, *stable)).await,
        Sub::Df { .. } => v41_files::df(conn, &parsed).await,
        Sub::Mkdir { parents, .. } => v41_files::mkdir(conn, &parsed, *parents).await,
        Sub::Rm { .. } => v41_files::rm(conn, &parsed).await,
    })
}

#[path = "cmd_nfs_v41.rs"]
mod v41;
#[path = "cmd_nfs_v41_files.rs"]
mod v41_files;

/// Client options from the command line and the URL.
fn client_options(conn: &ConnArgs, parsed: &NfsUrl) -> ClientOptions {
    let mut options = ClientOptions::default().with_url(parsed);
    options.uid = conn.uid.unwrap_or(options.uid);
    options.gid = conn.gid.unwrap_or(options.gid);
    options.gids = conn.gids.clone();
    options.conn.timeout = conn.timeout;
    options.conn.connect_timeout = conn.timeout;
    options.conn.retries = conn.retries;
    options.conn.reserved_port = conn.reserved_port;
    options.conn.reply_batch = conn.reply_batch;
    options
}

/// Mounts the URL's export; returns the client and the path inside it.
async fn mount(conn: &ConnArgs, url: &str) -> anyhow::Result<(Nfs3Client, String, NfsUrl)> {
    let parsed = NfsUrl::parse(url).map_err(|e| anyhow!("{e}"))?;
    let options = client_options(conn, &parsed);
    let (client, rest) = Nfs3Client::mount(&parsed, options).await.map_err(flat)?;
    Ok((client, rest, parsed))
}

/// Splits `a/b/c` into (`a/b`, `c`).
fn split_parent(rel: &str) -> (&str, &str) {
    match rel.rfind('/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => ("", rel),
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

async fn ping(
    conn: &ConnArgs,
    url: &str,
    count: u64,
    outstanding: usize,
    read: Option<u64>,
) -> anyhow::Result<()> {
    let (client, rest, _) = mount(conn, url).await?;
    let read = match read {
        None => None,
        Some(size) => {
            let (fh, attrs) = client.lookup_path(&rest).await.map_err(flat)?;
            let size = size.clamp(1, u64::from(client.fsinfo().rtmax.max(4096)));
            if attrs.size < size {
                bail!(
                    "{}: file of {} bytes is smaller than one READ of {size}",
                    client.full_path(&rest),
                    attrs.size
                );
            }
            Some((fh, size as u32, attrs.size / size))
        }
    };
    let mut calls = PingCalls {
        client: &client,
        rest: &rest,
        read,
        rng: 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(std::process::id()),
    };
    let r = dbio_experiment::ping::ping(&mut calls, count, outstanding)
        .await
        .map_err(|e| anyhow!(e))?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} {} calls to {} ({}), {} outstanding: {:.0} calls/s, client CPU {:.2} us/call",
        r.calls,
        calls.name(),
        client.server(),
        client.export(),
        r.outstanding,
        r.calls_per_s(),
        r.cpu_us_per_call(),
    )?;
    write_latency(&mut out, &r)?;
    Ok(())
}

/// The latency line of a ping, in microseconds.
pub(super) fn write_latency(
    out: &mut impl Write,
    r: &dbio_experiment::ping::PingResult,
) -> std::io::Result<()> {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    writeln!(
        out,
        "latency us: min {:.1}  avg {:.1}  p50 {:.1}  p99 {:.1}  max {:.1}",
        us(r.min),
        us(r.mean),
        us(r.p50),
        us(r.p99),
        us(r.max),
    )
}

/// NULL calls, or READs at random aligned offsets of one file
/// (handle, size of a READ, READs that fit in the file).
struct PingCalls<'a> {
    client: &'a Nfs3Client,
    rest: &'a str,
    read: Option<(nfs3::FileHandle, u32, u64)>,
    rng: u64,
}

impl PingCalls<'_> {
    fn name(&self) -> &'static str {
        if self.read.is_some() {
            "READ"
        } else {
            "NULL"
        }
    }
}

impl dbio_experiment::ping::RoundTrip for PingCalls<'_> {
    type Reply = Result<dbio_rpc::conn::CallResult, tokio::sync::oneshot::error::RecvError>;
    type Pending = tokio::sync::oneshot::Receiver<dbio_rpc::conn::CallResult>;

    fn send(&mut self) -> Self::Pending {
        let call = match self.read {
            None => self.client.encode(nfs3::Proc::Null, |_| {}),
            Some((fh, size, blocks)) => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                self.client
                    .read_call(fh, (self.rng % blocks) * u64::from(size), size)
            }
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let proc_ = if self.read.is_some() {
            nfs3::Proc::Read
        } else {
            nfs3::Proc::Null
        };
        self.client
            .submit(proc_, call, dbio_rpc::conn::ReplyTo::Once(tx));
        rx
    }

    fn check(&mut self, reply: Self::Reply) -> Result<(), String> {
        let path = self.client.full_path(self.rest);
        let name = self.name();
        let reply = reply
            .map_err(|_| format!("connection to {} closed", self.client.server()))?
            .map_err(|e| format!("{name} {path}: {e}"))?;
        let res = dbio_nfs::channel::Results::from_record(reply.record)
            .map_err(|e| format!("{name} {path}: {e}"))?;
        if self.read.is_some() {
            let r = self
                .client
                .decode_read(&res, self.rest)
                .map_err(|e| e.to_string())?;
            std::hint::black_box(r.data.len());
        }
        Ok(())
    }
}

fn mode_string(a: &Fattr3) -> String {
    let kind = match a.ftype {
        Ftype3::Dir => 'd',
        Ftype3::Lnk => 'l',
        Ftype3::Blk => 'b',
        Ftype3::Chr => 'c',
        Ftype3::Sock => 's',
        Ftype3::Fifo => 'p',
        Ftype3::Reg => '-',
    };
    kind_and_mode(kind, a.mode)
}

/// `ls -l`'s mode column: the file type letter, then rwx for owner, group, others.
pub(crate) fn kind_and_mode(kind: char, mode: u32) -> String {
    let mut s = String::from(kind);
    for shift in [6, 3, 0] {
        let bits = (mode >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        s.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    s
}

/// The access an ACCESS reply granted, by name ("none" for nothing). NFSv3 and NFSv4
/// number the access bits alike.
pub(crate) fn access_names(granted: u32) -> String {
    let names: Vec<&str> = [
        (nfs3::access::READ, "read"),
        (nfs3::access::LOOKUP, "lookup"),
        (nfs3::access::MODIFY, "modify"),
        (nfs3::access::EXTEND, "extend"),
        (nfs3::access::DELETE, "delete"),
        (nfs3::access::EXECUTE, "execute"),
    ]
    .iter()
    .filter(|(bit, _)| granted & bit != 0)
    .map(|(_, name)| *name)
    .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(",")
    }
}

fn ls_line(a: &Fattr3, name: &str) -> String {
    format!(
        "{} {:>3} {:>6} {:>6} {:>14} {} {}",
        mode_string(a),
        a.nlink,
        a.uid,
        a.gid,
        a.size,
        format_time(a.mtime.seconds),
        name
    )
}

/// UTC `YYYY-MM-DD HH:MM`.
fn format_time(secs: u32) -> String {
    let t = dbio_report::UtcTime::from_unix(i64::from(secs));
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute
    )
}

async fn ls(conn: &ConnArgs, url: &str) -> anyhow::Result<()> {
    let (client, rest, _) = mount(conn, url).await?;
    let (fh, attrs) = client.lookup_path(&rest).await.map_err(flat)?;
    let mut out = std::io::stdout().lock();
    if attrs.ftype != Ftype3::Dir {
        writeln!(out, "{}", ls_line(&attrs, split_parent(&rest).1))?;
        return Ok(());
    }
    let fs = dbio_nfs::Fs::v3(std::sync::Arc::new(client));
    let dir = dbio_nfs::fs::Handle::new(fh.as_bytes()).unwrap_or_default();
    let mut entries = fs.readdir(&dir, &rest).await.map_err(flat)?;
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for e in entries {
        let rel = join(&rest, &e.name);
        let a = match (e.attr, e.handle) {
            (Some(a), _) => a,
            (None, Some(h)) => fs.getattr(&h, &rel).await.map_err(flat)?,
            (None, None) => fs.lookup_path(&rel).await.map_err(flat)?.1,
        };
        writeln!(
            out,
            "{} {:>3} {:>6} {:>6} {:>14} {} {}",
            kind_and_mode(a.ftype.letter(), a.mode),
            a.nlink,
            a.uid.unwrap_or(0),
            a.gid.unwrap_or(0),
            a.size,
            format_time(
                a.mtime
                    .map_or(0, |t| t.seconds.clamp(0, i64::from(u32::MAX)) as u32)
            ),
            e.name
        )?;
    }
    Ok(())
}

async fn stat(conn: &ConnArgs, url: &str) -> anyhow::Result<()> {
    let (client, rest, _) = mount(conn, url).await?;
    let (fh, a) = client.lookup_path(&rest).await.map_err(flat)?;
    let access = client
        .access(fh, nfs3::access::ALL, &rest)
        .await
        .map_err(flat)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "  path: {}", client.full_path(&rest))?;
    writeln!(
        out,
        "  type: {:?}  mode: {} ({:04o})",
        a.ftype,
        mode_string(&a),
        a.mode & 0o7777
    )?;
    writeln!(out, "  size: {}  used: {}", a.size, a.used)?;
    writeln!(out, "  uid: {}  gid: {}  nlink: {}", a.uid, a.gid, a.nlink)?;
    writeln!(out, "  fileid: {}  fsid: {:#x}", a.fileid, a.fsid)?;
    writeln!(
        out,
        "  atime: {}  mtime: {}  ctime: {} (UTC)",
        format_time(a.atime.seconds),
        format_time(a.mtime.seconds),
        format_time(a.ctime.seconds)
    )?;
    writeln!(out, "  access: {}", access_names(access))?;
    Ok(())
}

async fn cat(conn: &ConnArgs, url: &str) -> anyhow::Result<()> {
    let (client, rest, _) = mount(conn, url).await?;
    let (fh, attrs) = client.lookup_path(&rest).await.map_err(flat)?;
    if attrs.ftype == Ftype3::Dir {
        bail!("{}: is a directory", client.full_path(&rest));
    }
    let mut out = std::io::stdout().lock();
    transfer::download(
        &client,
        fh,
        &rest,
        attrs.size,
        TransferOptions::default(),
        |_, data| {
            out.write_all(data)
                .map_err(|e| local_error("standard output", e))
        },
    )
    .await
    .map_err(flat)?;
    out.flush()?;
    Ok(())
}

fn local_error(path: &str, e: std::io::Error) -> NfsError {
    NfsError::Invalid {
        path: path.to_string(),
        reason: e.to_string(),
    }
}

#[path = "cmd_nfs_cp.rs"]
mod cp_impl;
use cp_impl::cp;

async fn df(conn: &ConnArgs, url: &str) -> anyhow::Result<()> {
    let (client, rest, _) = mount(conn, url).await?;
    let (fh, _) = client.lookup_path(&rest).await.map_err(flat)?;
    let s = client.fsstat(fh, &rest).await.map_err(flat)?;
    let p = client.pathconf(fh, &rest).await.map_err(flat)?;
    let i = client.fsinfo();
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<28} {:>10} {:>10} {:>10} {:>5}",
        "export", "size GiB", "used GiB", "avail GiB", "use%"
    )?;
    let used = s.tbytes.saturating_sub(s.fbytes);
    let pct = if s.tbytes == 0 {
        0.0
    } else {
        used as f64 * 100.0 / s.tbytes as f64
    };
    writeln!(
        out,
        "{:<28} {:>10.2} {:>10.2} {:>10.2} {:>4.0}%",
        format!("{}:{}", client.server(), client.export()),
        gib(s.tbytes),
        gib(used),
        gib(s.abytes),
        pct
    )?;
    writeln!(
        out,
        "files: {} total, {} free, {} available to you",
        s.tfiles, s.ffiles, s.afiles
    )?;
    writeln!(
        out,
        "rtmax {} rtpref {} wtmax {} wtpref {} dtpref {}; name_max {}, linkmax {}",
        i.rtmax, i.rtpref, i.wtmax, i.wtpref, i.dtpref, p.name_max, p.linkmax
    )?;
    Ok(())
}

async fn mkdir(conn: &ConnArgs, url: &str, parents: bool) -> anyhow::Result<()> {
    let (client, rest, _) = mount(conn, url).await?;
    if rest.is_empty() {
        bail!("{}: the export root exists already", client.full_path(""));
    }
    if !parents {
        let (dir, name) = split_parent(&rest);
        let (dfh, _) = client.lookup_path(dir).await.map_err(flat)?;
        client.mkdir(dfh, name, 0o755, &rest).await.map_err(flat)?;
        return Ok(());
    }
    let mut fh = client.root();
    let mut walked = String::new();
    for name in rest.split('/') {
        walked = join(&walked, name);
        fh = match client.lookup(fh, name, &walked).await {
            Ok((h, _)) => h,
            Err(e) if e.status() == Some(nfs3::Nfsstat3::NoEnt) => {
                client.mkdir(fh, name, 0o755, &walked).await.map_err(flat)?
            }
            Err(e) => return Err(flat(e)),
        };
    }
    Ok(())
}

async fn rm(conn: &ConnArgs, url: &str) -> anyhow::Result<()> {
    let (client, rest, _) = mount(conn, url).await?;
    if rest.is_empty() {
        bail!("{}: will not remove the export root", client.full_path(""));
    }
    let (dir, name) = split_parent(&rest);
    let (dfh, _) = client.lookup_path(dir).await.map_err(flat)?;
    let (_, attrs) = client.lookup(dfh, name, &rest).await.map_err(flat)?;
    let is_dir = attrs.map(|a| a.ftype == Ftype3::Dir).unwrap_or(false);
    if is_dir {
        client.rmdir(dfh, name, &rest).await.map_err(flat)
    } else {
        client.remove(dfh, name, &rest).await.map_err(flat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_modes_render() {
        assert_eq!(format_time(0), "1970-01-01 00:00");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00");
        let mut a = Fattr3 {
            ftype: Ftype3::Dir,
            mode: 0o750,
            nlink: 2,
            uid: 0,
            gid: 0,
            size: 0,
            used: 0,
            rdev: Default::default(),
            fsid: 0,
            fileid: 1,
            atime: Default::default(),
            mtime: Default::default(),
            ctime: Default::default(),
        };
        assert_eq!(mode_string(&a), "drwxr-x---");
        a.ftype = Ftype3::Reg;
        a.mode = 0o644;
        assert_eq!(mode_string(&a), "-rw-r--r--");
        assert_eq!(split_parent("a/b/c"), ("a/b", "c"));
        assert_eq!(split_parent("c"), ("", "c"));
    }
}
