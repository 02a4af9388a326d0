//! `--target nfs://...`: dbio's own NFS client as the engine of run and
//! calibrate. One connection pool per run, shared by all users.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use std::net::ToSocketAddrs;

use anyhow::Context;
use dbio_engine::EngineKind;
use dbio_nfs::config::{default_candidates, NfsConfig, NfsVersion};
use dbio_nfs::path::PathSpec;
use dbio_nfs_engine::{dataset, views, NfsTarget, TargetOptions};
use dbio_stats::RunResult;
use dbio_workload::{Dataset, DatasetSpec};

use crate::common::Progress;

/// Connections per path unless `--conns` says otherwise; see the help text.
pub const DEFAULT_CONNS: u32 = 4;

/// Options of NFS targets, shared by run and calibrate.
#[derive(clap::Args, Debug, Clone)]
pub struct NfsArgs {
    /// NFS connections per network path (nfs:// targets only). Requests go to the connection
    /// with the fewest outstanding. 1 behaves like a kernel mount's single connection; the
    /// default 4 lets the server work on more requests at once (servers commonly serve each
    /// connection from one thread at a time): against nfs-ganesha here, 4 gave about a fifth
    /// more IOPS than 1, at more client CPU per I/O, since each connection then gathers
    /// fewer replies per wake-up (see --reply-batch and BENCHMARKS.md). A `conns=N` in the
    /// URL wins.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONNS,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub conns: u32,
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
    /// only): at most half of the I/Os outstanding on it, only while 8 or more are, read
    /// anyway after 2 ms. One wake-up per batch instead of per reply takes most of the CPU
    /// an I/O costs off the client (BENCHMARKS.md). Gathered replies are I/Os not yet
    /// replaced, so the server works on half to all of --outstanding (three quarters on
    /// average): a server saturated below that keeps its rate and latency. 1 wakes for
    /// every reply and keeps the depth exact
    #[arg(long, value_name = "N", default_value_t = dbio_rpc::conn::DEFAULT_REPLY_BATCH,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub reply_batch: usize,
}

/// The target names an NFS export (`nfs://server/export/dir?...`).
pub fn is_nfs(target: &Path) -> bool {
    target.to_str().is_some_and(|t| t.starts_with("nfs://"))
}

/// How to reach an NFS target: its URL, paths and server name.
struct Plan {
    url: String,
    paths: Vec<PathSpec>,
    server_name: Option<String>,
    /// The oranfstab entry's `dontroute` and `mnt_timeout`.
    dontroute: bool,
    mount_timeout: Option<std::time::Duration>,
}

/// An `nfs://` target, or a path under a mount point of the oranfstab
/// (`--oranfstab`, else `./oranfstab`, else `/etc/oranfstab`); `None` for
/// local files.
fn plan(target: &Path, args: &NfsArgs) -> anyhow::Result<Option<Plan>> {
    if is_nfs(target) {
        let url = target.to_str().context("--target: not UTF-8")?;
        return Ok(Some(Plan {
            url: url.to_string(),
            paths: Vec::new(),
            server_name: None,
            dontroute: false,
            mount_timeout: None,
        }));
    }
    let Some(cfg) = NfsConfig::load(args.oranfstab.as_deref(), &default_candidates())? else {
        return Ok(None);
    };
    let Some(m) = cfg.resolve(target) else {
        anyhow::ensure!(
            args.oranfstab.is_none(),
            "--target {}: no mount point of {} covers it",
            target.display(),
            args.oranfstab.as_deref().unwrap_or(Path::new("")).display()
        );
        return Ok(None);
    };
    for w in &cfg.warnings {
        eprintln!("note: {w}");
    }
    let server = m.server;
    anyhow::ensure!(
        server.nfs_version == NfsVersion::V3,
        "server {}: nfs_version {:?} is not supported yet (only nfsv3)",
        server.name,
        server.nfs_version
    );
    let mut paths = Vec::new();
    for p in &server.paths {
        let remote = match p.remote_ip() {
            Some(ip) => ip,
            None => (p.remote.as_str(), 0)
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .map(|a| a.ip())
                .with_context(|| {
                    format!("server {}: cannot resolve path {}", server.name, p.remote)
                })?,
        };
        let local = match &p.local {
            None => None,
            Some(l) => Some(p.local_ip().with_context(|| {
                format!(
                    "server {}: local {l}: give an IP address (interface names are not supported)",
                    server.name
                )
            })?),
        };
        paths.push(PathSpec {
            local,
            server: remote,
        });
    }
    let first = paths.first().context("server entry without a path")?;
    let host = match first.server {
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        std::net::IpAddr::V4(v4) => v4.to_string(),
    };
    Ok(Some(Plan {
        url: format!("nfs://{host}{}", m.remote_path()),
        paths,
        server_name: Some(server.name.clone()),
        dontroute: server.dontroute,
        mount_timeout: Some(server.mnt_timeout),
    }))
}

/// Mounts the planned target with the options given on the command line.
fn mount(plan: Plan, args: &NfsArgs) -> anyhow::Result<Arc<NfsTarget>> {
    let opts = TargetOptions {
        conns: args.conns,
        // No connection threads: each user runs the connections while it waits for its
        // replies, so a reply reaches its engine without a hand-over between threads.
        workers: 0,
        paths: plan.paths,
        max_transfer: args.rwsize.map_or(dbio_nfs_engine::MAX_TRANSFER, |s| {
            s.min(u64::from(u32::MAX)) as u32
        }),
        server_name: plan.server_name,
        reply_batch: args.reply_batch,
        dontroute: plan.dontroute,
        mount_timeout: plan.mount_timeout,
    };
    Ok(NfsTarget::open(&plan.url, &opts)?)
}

/// A mounted NFS target and its prepared data set.
pub type Opened = (Arc<NfsTarget>, Dataset);

/// Mounts the export and prepares the data set through NFS; `None` when
/// the target is local.
pub fn open(
    target: &Path,
    args: &NfsArgs,
    spec: &DatasetSpec,
    force_overwrite: bool,
    stop: &AtomicBool,
) -> anyhow::Result<Option<Opened>> {
    let Some(plan) = plan(target, args)? else {
        return Ok(None);
    };
    let t = mount(plan, args)?;
    let mut progress = Progress::new();
    let ds = dataset::prepare(&t, spec, force_overwrite, stop, &mut |done, total| {
        progress.creating(&t.display_path(&t.dir), done, total)
    })?;
    progress.ready(&ds);
    Ok(Some((t, ds)))
}

/// [`open`], and the engine that runs on the target: nfs for an NFS
/// target, else `engine`, which may name nfs only for an NFS target.
pub fn open_with_engine(
    target: &Path,
    args: &NfsArgs,
    spec: &DatasetSpec,
    force_overwrite: bool,
    stop: &AtomicBool,
    engine: EngineKind,
) -> anyhow::Result<(Option<Opened>, EngineKind)> {
    let nfs = open(target, args, spec, force_overwrite, stop)?;
    anyhow::ensure!(
        nfs.is_some() || engine != EngineKind::Nfs,
        "--engine nfs: needs an nfs:// target or a path under an oranfstab mount point"
    );
    let engine = if nfs.is_some() {
        EngineKind::Nfs
    } else {
        engine
    };
    Ok((nfs, engine))
}

/// Mounts the export of an NFS target and reads its data set's manifest
/// without preparing anything (for `dbio verify`); `None` when the target
/// is local. Also returns whether the data set's creation finished.
pub fn open_existing(
    target: &Path,
    args: &NfsArgs,
) -> anyhow::Result<Option<(Arc<NfsTarget>, Dataset, bool)>> {
    let Some(plan) = plan(target, args)? else {
        return Ok(None);
    };
    let t = mount(plan, args)?;
    let (ds, complete) = dataset::open_existing(&t)?;
    Ok(Some((t, ds, complete)))
}

/// Adds the dNFS views to a run's result.
pub fn fill_views(result: &mut RunResult, t: &NfsTarget) {
    views::fill(result, t);
}

/// A progress printer that shows the live dNFS views under each progress
/// line; on a terminal the block is redrawn in place.
pub fn views_printer(t: Arc<NfsTarget>) -> impl Fn(&str) + Sync {
    let tty = std::io::stderr().is_terminal();
    let drawn = std::sync::atomic::AtomicUsize::new(0);
    move |line: &str| {
        let text = format!("{line}\n{}", views::live_text(&t));
        let mut err = std::io::stderr().lock();
        let prev = drawn.swap(text.lines().count(), std::sync::atomic::Ordering::Relaxed);
        if tty && prev > 0 {
            let _ = write!(err, "\x1b[{prev}A\x1b[J");
        }
        let _ = err.write_all(text.as_bytes());
    }
}
