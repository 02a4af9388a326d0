//! `dbio age`: copy-on-write aging, measured. For each file system and fill
//! level: a loop file system made on dbio's own image, filled with filler
//! files, a data set created through the shared prepare, then rounds of
//! random block writes, each followed by measurements of single-block
//! reads, redo writes, a sequential scan and the extents of the data files.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, ensure, Context};
use dbio_diag::frag::{file_frag, fs_fill};
use dbio_diag::loopfs::{cannot_make, in_memory, min_size, LoopFs};
use dbio_engine::EngineKind;
use dbio_experiment::{run, RunOptions, RunPlan};
use dbio_report::age::{age_terminal, write_age, AgeOutputs};
use dbio_stats::{AgePoint, AgeResult, AgeSeries, RunResult, AGE_KIND, FORMAT_VERSION};
use dbio_workload::namespace::{LocalDir, Namespace};
use dbio_workload::units::format_size;
use dbio_workload::{Dataset, DatasetError, DatasetSpec, FileKind, IoClass, PrepareOptions};

use crate::common::{self, duration_arg, engine_arg, size_arg, LabelArgs, EXIT_INTERRUPTED};

/// Block size of the data set and of the updates and single-block reads.
const BLOCK: u32 = 8192;
/// Sequential scan read size.
const SCAN_IO: usize = 1 << 20;
/// Filler files are written in chunks of this size, at most this many per file.
const FILLER_CHUNK: usize = 1 << 20;
const FILLER_FILE_CHUNKS: u64 = 64;

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

/// A directory made for this run; removed when dropped if empty (images
/// kept with --keep stay in it).
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn make(parent: &Path) -> anyhow::Result<PrivateDir> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let p = parent.join(format!("dbio-age-{}-{nanos:08x}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&p)
            .with_context(|| format!("cannot create {}", p.display()))?;
        Ok(PrivateDir(p))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Everything a series needs, fixed for the whole run.
struct Setup<'a> {
    spec: DatasetSpec,
    engine: EngineKind,
    direct: bool,
    rounds: u32,
    updates: u64,
    measure: Duration,
    stop: &'a AtomicBool,
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
    let total: u64 = spec.files().iter().map(|f| f.size).sum();
    let mut notes = Vec::new();
    let own = args.target.is_some();
    let dir = match (&args.target, &args.dir) {
        (Some(t), _) => {
            ensure!(t.is_dir(), "--target {}: not a directory", t.display());
            t.clone()
        }
        (None, Some(d)) => {
            ensure!(d.is_dir(), "--dir {}: not a directory", d.display());
            ensure!(
                !in_memory(d),
                "--dir {}: on tmpfs, the images would live in memory and the figures show memory, \
                 not storage; name a directory on a disk",
                d.display()
            );
            d.clone()
        }
        (None, None) => {
            let t = std::env::temp_dir();
            if in_memory(&t) {
                notes.push(format!(
                    "{} is in memory (tmpfs): the images went to /var/tmp",
                    t.display()
                ));
                PathBuf::from("/var/tmp")
            } else {
                t
            }
        }
    };
    let mut fss: Vec<String> = Vec::new();
    if !own {
        for f in &args.fs {
            let f = f.trim().to_string();
            if !fss.contains(&f) {
                fss.push(f);
            }
        }
        ensure!(!fss.is_empty(), "--fs: name at least one file system");
        for f in &fss {
            if let Some(why) = cannot_make(f) {
                bail!("--fs {f}: {why}");
            }
            let img = args.size.max(min_size(f));
            if img > args.size {
                notes.push(format!(
                    "{f}: the image is {} (the smallest {f} that mkfs makes), not {}",
                    format_size(img),
                    format_size(args.size)
                ));
            }
        }
        for fill in &args.fill {
            let pct = total as f64 * 100.0 / args.size as f64;
            ensure!(
                pct < f64::from(*fill),
                "--fill {fill}: the data set ({} with its redo log) alone fills {pct:.0}% of {}; \
                 give a smaller --dataset or a larger --size",
                format_size(total),
                format_size(args.size)
            );
        }
        let free = fs_fill(&dir).map_or(u64::MAX, |f| f.available);
        let largest = fss
            .iter()
            .map(|f| args.size.max(min_size(f)))
            .max()
            .unwrap_or(0);
        ensure!(
            free >= largest,
            "--dir {}: {} free, an image needs up to {}",
            dir.display(),
            format_size(free),
            format_size(largest)
        );
    }
    let stop = common::stop_flag();
    let setup = Setup {
        spec,
        engine: args.engine,
        direct: !args.buffered,
        rounds: args.rounds,
        updates: args.updates,
        measure: args.measure_time,
        stop,
    };
    let t0 = Instant::now();
    let mut result = AgeResult {
        kind: AGE_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        started_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
        dir: dir.display().to_string(),
        own_target: own,
        engine: args.engine.name().into(),
        direct: setup.direct,
        block_size: BLOCK,
        size_bytes: if own { 0 } else { args.size },
        dataset_bytes: data_bytes,
        rounds: args.rounds,
        updates_per_round: args.updates,
        measure_s: args.measure_time.as_secs_f64(),
        notes,
        labels: args.label.labels(),
        ..Default::default()
    };
    let mut error = None;
    let mut failed = false;
    {
        let private = PrivateDir::make(&dir)?;
        if own {
            let fs = dbio_diag::blockdev::mount_of(&dir)
                .map(|m| m.fs_type)
                .unwrap_or_else(|| "?".into());
            result.series.push(AgeSeries {
                fs,
                ..Default::default()
            });
            let series = result.series.last_mut().expect("pushed");
            let ds_dir = private.0.join("ds");
            if let Err(e) = age_series(&setup, &ds_dir, series) {
                error = Some(e);
            }
            if !args.keep {
                let _ = std::fs::remove_dir_all(&ds_dir);
            } else {
                eprintln!("kept the data set in {}", ds_dir.display());
                std::mem::forget(private);
            }
        } else {
            'all: for fs in &fss {
                for fill in &args.fill {
                    if stop.load(Ordering::Relaxed) {
                        break 'all;
                    }
                    let size = args.size.max(min_size(fs));
                    result.series.push(AgeSeries {
                        fs: fs.clone(),
                        fill_pct: *fill,
                        image_bytes: size,
                        ..Default::default()
                    });
                    let series = result.series.last_mut().expect("pushed");
                    let r = on_loop(
                        &setup, &private.0, fs, *fill, size, total, args.keep, series,
                    );
                    // A series that fails (a file system full, a mkfs refused)
                    // says why; the others still run.
                    if let Err(e) = r {
                        let e = series_error(&e, fs);
                        eprintln!("dbio: {fs} {fill}%: {e}");
                        series.error = Some(e);
                        failed = true;
                    }
                }
            }
            if args.keep {
                eprintln!("kept the images in {}", private.0.display());
            }
        }
    }
    result.elapsed_s = t0.elapsed().as_secs_f64();
    let stopped = stop.load(Ordering::Relaxed);
    if let Some(e) = &error {
        result.interrupted = true;
        result.stop_reason = Some(format!("error: {e:#}"));
    } else if stopped {
        result.interrupted = true;
        result.stop_reason = Some("interrupted by signal".into());
    }
    print!("{}", age_terminal(&result));
    write_age(
        &result,
        &AgeOutputs {
            json: args.json.clone(),
            csv: args.csv.clone(),
            html: args.html.clone(),
        },
    )?;
    if let Some(e) = error {
        return Err(e);
    }
    Ok(if stopped {
        EXIT_INTERRUPTED
    } else if failed {
        1
    } else {
        0
    })
}

/// What ended a series, on one line: each cause once, and why a file
/// system that copies on write ran full.
fn series_error(e: &anyhow::Error, fs: &str) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    if line.contains("No space left") && dbio_diag::frag::copy_on_write(fs) {
        line.push_str(
            " (copy on write allocates anew for every overwrite, and the old blocks stay \
             referenced until whole extents are free: a fuller file system runs out first)",
        );
    }
    line
}

/// One file system at one fill level: made, filled, aged, taken down.
#[allow(clippy::too_many_arguments)]
fn on_loop(
    setup: &Setup,
    private: &Path,
    fs: &str,
    fill: u32,
    size: u64,
    dataset_total: u64,
    keep: bool,
    series: &mut AgeSeries,
) -> anyhow::Result<()> {
    let name = format!("{fs}-{fill}");
    let image = private.join(format!("{name}.img"));
    let mnt = private.join(format!("{name}.mnt"));
    eprintln!(
        "{fs} {fill}%: making a {} {fs} on a loop device",
        format_size(size)
    );
    let mut lfs = LoopFs::make(fs, &image, &mnt, size, setup.direct)?;
    lfs.keep_image(keep);
    series.loop_direct_io = lfs.direct_io();
    let r = fill_and_age(setup, lfs.mnt(), fill, dataset_total, series);
    // Taken down here (not only in Drop) so that a failure is reported.
    let down = lfs.take_down();
    r?;
    down?;
    Ok(())
}

fn fill_and_age(
    setup: &Setup,
    mnt: &Path,
    fill: u32,
    dataset_total: u64,
    series: &mut AgeSeries,
) -> anyhow::Result<()> {
    let f = fs_fill(mnt)?;
    let cap = f.used + f.available;
    let want = cap * u64::from(fill) / 100;
    let filler = want.saturating_sub(f.used + dataset_total);
    if filler > 0 {
        write_filler(&mnt.join("filler"), filler, setup.stop)?;
    }
    if setup.stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    age_series(setup, &mnt.join("ds"), series)
}

/// Filler files of `bytes` together, 64 MiB each at most, synced.
fn write_filler(dir: &Path, bytes: u64, stop: &AtomicBool) -> anyhow::Result<()> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    eprintln!("  filling: {} of filler files", format_size(bytes));
    let mut chunk = vec![0u8; FILLER_CHUNK];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for b in chunk.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.copy_from_slice(&x.to_le_bytes()[..b.len()]);
    }
    let chunks = bytes.div_ceil(FILLER_CHUNK as u64);
    let mut i = 0u64;
    let mut n = 0;
    while i < chunks {
        let p = dir.join(format!("filler-{n:04}"));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&p)
            .with_context(|| format!("cannot create {}", p.display()))?;
        for _ in 0..FILLER_FILE_CHUNKS.min(chunks - i) {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            f.write_all(&chunk)
                .with_context(|| format!("cannot write {}", p.display()))?;
            i += 1;
        }
        f.sync_all()
            .with_context(|| format!("cannot sync {}", p.display()))?;
        n += 1;
    }
    Ok(())
}

/// Creates the data set in `ds_dir` and ages it round by round, each
/// point pushed as soon as it is measured.
fn age_series(setup: &Setup, ds_dir: &Path, series: &mut AgeSeries) -> anyhow::Result<()> {
    let stop = setup.stop;
    let ns = LocalDir::new(ds_dir);
    let opts = PrepareOptions {
        engine: setup.engine,
        direct: setup.direct,
        force_overwrite: false,
    };
    let mut progress = common::Progress::new();
    let ds = match dbio_workload::prepare::prepare(&ns, &setup.spec, &opts, stop, &mut |d, t| {
        progress.creating(&ns.dir().display(), d, t)
    }) {
        Ok(ds) => ds,
        Err(DatasetError::Interrupted) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    progress.end_line();
    series.data_files = ds.files.iter().filter(|f| f.kind == FileKind::Data).count() as u32;
    series.fill_measured_pct = fs_fill(ds_dir)?.fill_pct;
    let label = series.label();
    let mut updates = 0u64;
    for round in 0..=setup.rounds {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut update_mean_us = 0.0;
        if round > 0 {
            let r = phase(setup, &ds, IoClass::DbwrWrite, round)?;
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let c = class(&r, IoClass::DbwrWrite);
            updates += c.map_or(0, |c| c.ios);
            update_mean_us = c.map_or(0.0, |c| c.mean_us);
        }
        let Some(point) = measure(setup, &ds, round, updates, update_mean_us)? else {
            break;
        };
        eprintln!(
            "{label}: round {round}/{}: {} updates; read {} us (p99 {}), redo {} us, scan {} MB/s, \
             {:.0} extents per data file (most {})",
            setup.rounds,
            updates,
            fmt_us(point.read_mean_us),
            fmt_us(point.read_p99_us),
            fmt_us(point.redo_mean_us),
            point.scan_mbps.round(),
            point.extents_per_file,
            point.extents_max
        );
        series.points.push(point);
    }
    Ok(())
}

fn fmt_us(v: f64) -> String {
    format!("{v:.0}")
}

fn class(r: &RunResult, c: IoClass) -> Option<&dbio_stats::ClassResult> {
    r.classes.iter().find(|x| x.class == c.name())
}

/// One measured phase of class `c` through the run driver: a fixed number
/// of updates, or a timed read or redo measurement.
fn phase(setup: &Setup, ds: &Dataset, c: IoClass, round: u32) -> anyhow::Result<RunResult> {
    let update = c == IoClass::DbwrWrite;
    let plan = RunPlan::new(&RunOptions {
        classes: vec![c],
        size: Some(setup.spec.data_bytes),
        block_size: u64::from(BLOCK),
        users: 1,
        outstanding: if update { 4 } else { 1 },
        time: (!update).then_some(setup.measure),
        loops: update.then_some(setup.updates),
        seed: Some(0xa9e0 + u64::from(round) * 7919 + c.index() as u64),
        direct: setup.direct,
        raw: false,
        ..RunOptions::default()
    })?;
    let spec = plan.spec(
        &ds.dir.display().to_string(),
        ds.clone(),
        setup.engine,
        None,
    );
    let out = run(&spec, setup.stop, None)?;
    if let Some(e) = out.error {
        return Err(e.into());
    }
    Ok(out.result)
}

/// The measurements after a round; None when a stop signal cut them short.
fn measure(
    setup: &Setup,
    ds: &Dataset,
    round: u32,
    updates: u64,
    update_mean_us: f64,
) -> anyhow::Result<Option<AgePoint>> {
    let stop = setup.stop;
    let reads = phase(setup, ds, IoClass::SingleBlockRead, round)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let redo = phase(setup, ds, IoClass::RedoWrite, round)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let data: Vec<PathBuf> = ds
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Data)
        .map(|f| ds.dir.join(&f.name))
        .collect();
    let Some(scan_mbps) = scan(&data, setup.direct, stop)? else {
        return Ok(None);
    };
    let mut frags = Vec::new();
    for p in &data {
        frags.push(file_frag(p)?.fragments);
    }
    let r = class(&reads, IoClass::SingleBlockRead);
    let w = class(&redo, IoClass::RedoWrite);
    Ok(Some(AgePoint {
        round,
        updates,
        update_mean_us,
        read_mean_us: r.map_or(0.0, |c| c.mean_us),
        read_p99_us: r.map_or(0.0, |c| c.p99_us),
        read_iops: r.map_or(0.0, |c| c.iops),
        redo_mean_us: w.map_or(0.0, |c| c.mean_us),
        redo_p99_us: w.map_or(0.0, |c| c.p99_us),
        scan_mbps,
        extents_per_file: frags.iter().sum::<u64>() as f64 / frags.len().max(1) as f64,
        extents_max: frags.iter().copied().max().unwrap_or(0),
        fill_pct: fs_fill(&ds.dir)?.fill_pct,
    }))
}

/// Reads the files from start to end in 1 MiB reads; MB/s (10^6 bytes),
/// or None when stopped.
fn scan(files: &[PathBuf], direct: bool, stop: &AtomicBool) -> anyhow::Result<Option<f64>> {
    // A buffer aligned for O_DIRECT inside a larger allocation.
    let mut raw = vec![0u8; SCAN_IO + 4096];
    let skip = raw.as_ptr().align_offset(4096);
    let buf = &mut raw[skip..skip + SCAN_IO];
    let t0 = Instant::now();
    let mut bytes = 0u64;
    for p in files {
        let mut f = File::options()
            .read(true)
            .custom_flags(if direct { libc::O_DIRECT } else { 0 })
            .open(p)
            .with_context(|| format!("cannot open {}", p.display()))?;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let n = f
                .read(buf)
                .with_context(|| format!("cannot read {}", p.display()))?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
        }
    }
    let s = t0.elapsed().as_secs_f64().max(1e-9);
    Ok(Some(bytes as f64 / s / 1e6))
}
