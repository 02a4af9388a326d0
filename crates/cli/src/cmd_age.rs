//! `dbio age`: the options, the plan for the experiment
//! (`dbio_experiment::age`), its progress on stderr and the report; the
//! machine's side (loop file systems over `diag`) is in `age_loops`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::ensure;
use dbio_engine::EngineKind;
use dbio_experiment::age::{age, AgeEvent, AgeOn, AgePlan, BLOCK};
use dbio_report::age::{age_terminal, write_age, AgeOutputs};
use dbio_workload::units::format_size;
use dbio_workload::DatasetSpec;

use crate::age_loops::{loops, work_dir, LoopFileSystems, PrivateDir};
use crate::common::{self, duration_arg, engine_arg, size_arg, LabelArgs, EXIT_INTERRUPTED};

#[derive(clap::Args)]
#[command(
    about = "Age file systems with random block writes and measure how latency and extents grow",
    long_about = "Copy-on-write aging, measured. For each file system (--fs) and fill level \
        (--fill), dbio makes an image file in --dir, attaches it to a loop device, makes the \
        file system, mounts it on a private mount point, fills it to the fill level with filler \
        files, and creates its data set. Then, round after round, --updates random 8 KiB block \
        writes (as a database writer does), followed by measurements: single-block read latency \
        (mean, p99), redo write latency (sequential synchronous writes), a sequential scan in \
        1 MiB reads, and extents per data file (FIEMAP, counted as filefrag does). Round 0 is \
        the data set as created.\n\n\
        Needs root and losetup, mount and mkfs.<fs>. Only ever touches the loop devices it \
        attached to its own image files; at the end (also after an error or Ctrl-C) it \
        unmounts, detaches and removes the images, unless --keep (then the images stay, \
        unmounted). A Ctrl-C stops at the next step and still writes the rounds measured, \
        marked interrupted.\n\n\
        --target DIR ages a data set on the user's own file system instead (no mkfs, no fill), \
        in a new directory inside DIR that is removed at the end unless --keep.\n\n\
        Example: dbio age --fs btrfs,xfs,ext4 --fill 50,82 --size 512MiB --rounds 10 --html age.html"
)]
pub struct Args {
    /// File systems to make, comma-separated: btrfs, xfs, ext4
    #[arg(
        long,
        value_name = "FS,...",
        value_delimiter = ',',
        default_value = "btrfs,xfs,ext4",
        conflicts_with = "target"
    )]
    fs: Vec<String>,
    /// Fill levels in percent, comma-separated: filler files and data set together
    #[arg(long, value_name = "PCT,...", value_delimiter = ',', default_value = "50",
        value_parser = clap::value_parser!(u32).range(1..=95), conflicts_with = "target")]
    fill: Vec<u32>,
    /// Size of each file system (raised to a file system's minimum: xfs 320 MiB)
    #[arg(long, value_name = "SIZE", default_value = "512MiB", value_parser = size_arg)]
    size: u64,
    /// Data-set size (data files; a redo log of an eighth comes with it) [default: a quarter of --size]
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    dataset: Option<u64>,
    /// Rounds of updates
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    rounds: u32,
    /// Random 8 KiB block writes per round
    #[arg(long, value_name = "N", default_value_t = 20_000, value_parser = common::count_arg)]
    updates: u64,
    /// Length of each latency measurement (single-block reads, redo writes) per round
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = duration_arg)]
    measure_time: Duration,
    /// Directory for the image files and mount points [default: the system temp dir, or
    /// /var/tmp when that is in memory]; refused on tmpfs
    #[arg(long, value_name = "DIR", conflicts_with = "target")]
    dir: Option<PathBuf>,
    /// Age a data set on this directory's own file system (no mkfs, no fill)
    #[arg(long, value_name = "DIR")]
    target: Option<PathBuf>,
    /// Keep the image files (unmounted, detached), or the data set with --target
    #[arg(long)]
    keep: bool,
    /// I/O engine: io_uring or psync
    #[arg(long, value_name = "ENGINE", default_value = "io_uring", value_parser = engine_arg)]
    engine: EngineKind,
    /// Go through the page cache instead of O_DIRECT
    #[arg(long)]
    buffered: bool,
    /// Write the result as JSON to FILE
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write one row per file system, fill level and round as CSV to FILE
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write a self-contained HTML report with line charts to FILE
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    label: LabelArgs,
}

/// Shows the experiment's progress on stderr.
fn show(progress: &mut Option<common::Progress>, ev: AgeEvent) {
    match ev {
        AgeEvent::Making { fs, fill, bytes } => {
            *progress = None;
            eprintln!(
                "{fs} {fill}%: making a {} {fs} on a loop device",
                format_size(bytes)
            );
        }
        AgeEvent::Filling { bytes } => {
            eprintln!("  filling: {} of filler files", format_size(bytes))
        }
        AgeEvent::Creating { dir, done, total } => progress
            .get_or_insert_with(common::Progress::new)
            .creating(&dir.display(), done, total),
        AgeEvent::Created => {
            if let Some(p) = progress.take() {
                p.end_line();
            }
        }
        AgeEvent::Round {
            label,
            rounds,
            point: p,
        } => eprintln!(
            "{label}: round {}/{rounds}: {} updates; read {:.0} us (p99 {:.0}), redo {:.0} us, \
             scan {} MB/s, {:.1} extents per data file on average (most {})",
            p.round,
            p.updates,
            p.read_mean_us,
            p.read_p99_us,
            p.redo_mean_us,
            p.scan_mbps.round(),
            p.extents_per_file,
            p.extents_max
        ),
        AgeEvent::SeriesFailed { fs, fill, error } => eprintln!("dbio: {fs} {fill}%: {error}"),
    }
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    for p in [&args.json, &args.csv, &args.html].into_iter().flatten() {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        ensure!(
            dir.is_dir(),
            "{}: directory {} does not exist",
            p.display(),
            dir.display()
        );
    }
    ensure!(
        args.engine != EngineKind::Null && args.engine != EngineKind::Nfs,
        "--engine {}: dbio age measures local file systems (io_uring or psync)",
        args.engine.name()
    );
    let data_bytes = args
        .dataset
        .unwrap_or(args.size / 4 / (1 << 20) * (1 << 20));
    let spec =
        DatasetSpec::new(data_bytes, BLOCK).map_err(|e| anyhow::anyhow!("--dataset: {e}"))?;
    let mut notes = Vec::new();
    let dir = work_dir(args.target.as_deref(), args.dir.as_deref(), &mut notes)?;
    let images = match &args.target {
        Some(_) => None,
        None => Some(loops(
            &args.fs, &args.fill, args.size, &spec, &dir, &mut notes,
        )?),
    };
    let private = PrivateDir::make(&dir)?;
    let on = images.unwrap_or_else(|| AgeOn::Own {
        fs: dbio_diag::blockdev::mount_of(&dir).map_or_else(|| "?".into(), |m| m.fs_type),
        dir: private.0.join("ds"),
    });
    let plan = AgePlan {
        on,
        spec,
        engine: args.engine,
        direct: !args.buffered,
        rounds: args.rounds,
        updates: args.updates,
        measure: args.measure_time,
        dir: dir.display().to_string(),
        notes,
        labels: args.label.labels(),
    };
    let stop = common::stop_flag();
    let mut fss = LoopFileSystems::new(&private.0, args.keep);
    let mut progress = None;
    let out = age(&plan, &mut fss, stop, &mut |ev| show(&mut progress, ev));
    match &plan.on {
        AgeOn::Own { dir: ds, .. } if args.keep => {
            eprintln!("kept the data set in {}", ds.display());
            std::mem::forget(private);
        }
        AgeOn::Own { dir: ds, .. } => {
            let _ = std::fs::remove_dir_all(ds);
        }
        AgeOn::Loops { .. } if args.keep => {
            eprintln!("kept the images in {}", private.0.display())
        }
        AgeOn::Loops { .. } => {}
    }
    print!("{}", age_terminal(&out.result));
    let outputs = AgeOutputs {
        json: args.json.clone(),
        csv: args.csv.clone(),
        html: args.html.clone(),
    };
    common::wrote(write_age(&out.result, &outputs)?);
    if let Some(e) = out.error {
        return Err(e.into());
    }
    Ok(if stop.load(Ordering::Relaxed) {
        EXIT_INTERRUPTED
    } else if out.failed {
        1
    } else {
        0
    })
}
