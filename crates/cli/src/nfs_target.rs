//! `--target nfs://...`: dbio's own NFS client as the engine of run and
//! calibrate. One connection pool per run, shared by all users.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use dbio_nfs_engine::{dataset, views, NfsTarget, TargetOptions};
use dbio_stats::RunResult;
use dbio_workload::units::format_size;
use dbio_workload::{Dataset, DatasetSpec};

/// Connections per path unless `--conns` says otherwise; see the help text.
pub const DEFAULT_CONNS: u32 = 4;

/// Options of NFS targets, shared by run and calibrate.
#[derive(clap::Args, Debug, Clone)]
pub struct NfsArgs {
    /// NFS connections per network path (nfs:// targets only). Requests go to the connection
    /// with the fewest outstanding. 1 behaves like a kernel mount's single connection; the
    /// default 4 keeps dbio from being the bottleneck on a small machine: one connection
    /// tops out at what one connection task and the server's one socket can do, and 4 spread
    /// the work over the connection threads (there is one per core, at most one per
    /// connection) and the server's receive threads. More than 4 gained nothing here (see
    /// BENCHMARKS.md). A `conns=N` in the URL wins.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONNS,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub conns: u32,
    /// Largest NFS READ or WRITE per RPC, like the rsize/wsize mount options (nfs:// targets
    /// only); larger I/Os are split. Also bounded by the server's rtmax/wtmax [default: 1MiB]
    #[arg(long, value_name = "SIZE", value_parser = crate::common::size_arg)]
    pub rwsize: Option<u64>,
}

/// The target names an NFS export (`nfs://server/export/dir?...`).
pub fn is_nfs(target: &Path) -> bool {
    target.to_str().is_some_and(|t| t.starts_with("nfs://"))
}

/// Mounts the export and prepares the data set through NFS.
pub fn open(
    target: &Path,
    args: &NfsArgs,
    spec: &DatasetSpec,
    force_overwrite: bool,
    stop: &AtomicBool,
) -> anyhow::Result<(Arc<NfsTarget>, Dataset)> {
    let url = target.to_str().context("--target: not UTF-8")?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let opts = TargetOptions {
        conns: args.conns,
        workers: cores.min(args.conns as usize).max(1),
        paths: Vec::new(),
        max_transfer: args.rwsize.map_or(dbio_nfs_engine::MAX_TRANSFER, |s| {
            s.min(u64::from(u32::MAX)) as u32
        }),
    };
    let t = NfsTarget::open(url, &opts)?;
    let tty = std::io::stderr().is_terminal();
    let mut announced = false;
    let mut last = Instant::now();
    let t0 = Instant::now();
    let ds = dataset::prepare(&t, spec, force_overwrite, stop, &mut |done, total| {
        if !announced {
            eprintln!(
                "creating data set in {} ({})",
                t.display_path(&t.dir),
                format_size(total)
            );
            announced = true;
        }
        if tty && (last.elapsed() >= Duration::from_millis(200) || done == total) {
            last = Instant::now();
            eprint!(
                "\r\x1b[K  {:>3}%  {} of {}",
                done * 100 / total.max(1),
                format_size(done),
                format_size(total)
            );
        }
    })?;
    if ds.created {
        if tty {
            eprintln!();
        }
        eprintln!(
            "data set {:016x} ready: {} files, {} in {:.1} s",
            ds.id,
            ds.files.len(),
            format_size(ds.total_bytes()),
            t0.elapsed().as_secs_f64()
        );
    }
    Ok((t, ds))
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
