//! `age`: copy-on-write aging, measured. For each file system and fill
//! level: a file system made on a loop device, filled with filler files, a
//! data set created through the shared prepare, then rounds of random block
//! writes, each followed by measurements of single-block reads, redo
//! writes, a sequential scan and the extents of the data files.
//!
//! The loop file systems, fill levels and extents come from the caller
//! through [`FileSystems`] (the machine's side lives in `diag`, which only
//! the CLI uses); what a user should see goes out as [`AgeEvent`]s.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dbio_engine::EngineKind;
use dbio_stats::{AgePoint, AgeResult, AgeSeries, Labels, RunResult, AGE_KIND, FORMAT_VERSION};
use dbio_workload::namespace::{LocalDir, Namespace};
use dbio_workload::{Dataset, DatasetError, DatasetSpec, FileKind, IoClass, PrepareOptions};

use crate::{run, ExperimentError, RunOptions, RunPlan};

/// Block size of the data set and of the updates and single-block reads.
pub const BLOCK: u32 = 8192;
/// Sequential scan read size.
const SCAN_IO: usize = 1 << 20;
/// Filler files are written in chunks of this size, at most this many per file.
const FILLER_CHUNK: usize = 1 << 20;
const FILLER_FILE_CHUNKS: u64 = 64;

/// An error of the caller's [`FileSystems`] (a mkfs refused, a mount failed).
pub type HostError = Box<dyn std::error::Error + Send + Sync>;

/// Errors of an aging run; each names what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum AgeError {
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// `what` names the operation and the path ("cannot write /m/filler-0001").
    #[error("{what}: {err}")]
    Io { what: String, err: std::io::Error },
    #[error(transparent)]
    Host(HostError),
}

fn io(what: impl FnOnce() -> String) -> impl FnOnce(std::io::Error) -> AgeError {
    move |err| AgeError::Io { what: what(), err }
}

/// How full a file system is, as `df` shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fill {
    pub used: u64,
    /// Bytes available to unprivileged users.
    pub available: u64,
    pub pct: f64,
}

/// The machine's side of aging, given by the caller.
pub trait FileSystems {
    /// Makes a file system `fs` of `bytes` on a loop device of an image of
    /// its own named after `name`, and mounts it. With `direct_io` the loop
    /// device reads its image with O_DIRECT where it can.
    fn make(
        &mut self,
        fs: &str,
        name: &str,
        bytes: u64,
        direct_io: bool,
    ) -> Result<Box<dyn Mounted>, HostError>;
    /// The fill level of the file system holding `path`.
    fn fill(&self, path: &Path) -> Result<Fill, HostError>;
    /// Extents of `file`, counted as filefrag counts them.
    fn fragments(&self, file: &Path) -> Result<u64, HostError>;
    /// Whether `fs` copies on write (a full one then gets an explanation).
    fn copies_on_write(&self, fs: &str) -> bool;
}

/// A mounted loop file system; a guard that takes it down when dropped.
pub trait Mounted {
    fn mnt(&self) -> &Path;
    /// Whether the loop device reads and writes its image with O_DIRECT.
    fn direct_io(&self) -> bool;
    /// Unmounts, detaches and removes what was made; done here, not only in
    /// Drop, so that a failure is reported.
    fn take_down(&mut self) -> Result<(), HostError>;
}

/// One file system to make, at every fill level.
#[derive(Clone, Debug)]
pub struct LoopImage {
    pub fs: String,
    /// Image size: the size asked for, raised to the file system's minimum.
    pub bytes: u64,
}

/// Where the data sets live.
#[derive(Clone, Debug)]
pub enum AgeOn {
    /// Loop file systems made for the run, one series per file system and
    /// fill level (percent); `size` is the size asked for.
    Loops {
        images: Vec<LoopImage>,
        fills: Vec<u32>,
        size: u64,
    },
    /// The user's own file system of type `fs`: one series, a data set in
    /// `dir` (a new directory), neither made nor filled.
    Own { fs: String, dir: PathBuf },
}

/// What to age and how.
#[derive(Clone, Debug)]
pub struct AgePlan {
    pub on: AgeOn,
    pub spec: DatasetSpec,
    pub engine: EngineKind,
    pub direct: bool,
    pub rounds: u32,
    /// Random block writes per round.
    pub updates: u64,
    /// Length of each latency measurement per round.
    pub measure: Duration,
    /// Where the images or the data set went, as the result names it.
    pub dir: String,
    pub notes: Vec<String>,
    pub labels: Labels,
}

/// What happens, for the caller to show.
#[derive(Debug)]
pub enum AgeEvent<'a> {
    /// A loop file system is about to be made.
    Making { fs: &'a str, fill: u32, bytes: u64 },
    /// Filler files of `bytes` together are about to be written.
    Filling { bytes: u64 },
    /// Bytes of the data set written so far.
    Creating {
        dir: &'a Path,
        done: u64,
        total: u64,
    },
    /// The data set is ready.
    Created,
    /// A round was measured.
    Round {
        label: &'a str,
        rounds: u32,
        point: &'a AgePoint,
    },
    /// A series ended early with `error` (one line); the others still run.
    SeriesFailed {
        fs: &'a str,
        fill: u32,
        error: &'a str,
    },
}

/// The result, whatever ended it.
#[derive(Debug)]
pub struct AgeOutput {
    /// Every round measured; marked interrupted after a stop or `error`.
    pub result: AgeResult,
    /// What ended aging the user's own file system.
    pub error: Option<AgeError>,
    /// Some series of loop file systems failed (each says why).
    pub failed: bool,
}

/// Everything a series needs, fixed for the whole run.
struct Ctx<'a> {
    plan: &'a AgePlan,
    fss: &'a mut dyn FileSystems,
    stop: &'a AtomicBool,
    on: &'a mut dyn FnMut(AgeEvent),
}

/// Ages per `plan` until done or `stop` is set.
pub fn age(
    plan: &AgePlan,
    fss: &mut dyn FileSystems,
    stop: &AtomicBool,
    on: &mut dyn FnMut(AgeEvent),
) -> AgeOutput {
    let t0 = Instant::now();
    let own = matches!(plan.on, AgeOn::Own { .. });
    let mut result = AgeResult {
        kind: AGE_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        started_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
        dir: plan.dir.clone(),
        own_target: own,
        engine: plan.engine.name().into(),
        direct: plan.direct,
        block_size: BLOCK,
        size_bytes: match &plan.on {
            AgeOn::Loops { size, .. } => *size,
            AgeOn::Own { .. } => 0,
        },
        dataset_bytes: plan.spec.data_bytes,
        rounds: plan.rounds,
        updates_per_round: plan.updates,
        measure_s: plan.measure.as_secs_f64(),
        notes: plan.notes.clone(),
        labels: plan.labels.clone(),
        ..Default::default()
    };
    let mut cx = Ctx {
        plan,
        fss,
        stop,
        on,
    };
    let mut error = None;
    let mut failed = false;
    match &plan.on {
        AgeOn::Own { fs, dir } => {
            result.series.push(AgeSeries {
                fs: fs.clone(),
                ..Default::default()
            });
            let series = result.series.last_mut().expect("pushed");
            error = age_series(&mut cx, dir, series).err();
        }
        AgeOn::Loops { images, fills, .. } => {
            let total: u64 = plan.spec.files().iter().map(|f| f.size).sum();
            'all: for img in images {
                for &fill in fills {
                    if stop.load(Ordering::Relaxed) {
                        break 'all;
                    }
                    result.series.push(AgeSeries {
                        fs: img.fs.clone(),
                        fill_pct: fill,
                        image_bytes: img.bytes,
                        ..Default::default()
                    });
                    let series = result.series.last_mut().expect("pushed");
                    // A series that fails (a file system full, a mkfs refused)
                    // says why; the others still run.
                    if let Err(e) = on_loop(&mut cx, img, fill, total, series) {
                        let line = series_error(&e, &img.fs, &*cx.fss);
                        (cx.on)(AgeEvent::SeriesFailed {
                            fs: &img.fs,
                            fill,
                            error: &line,
                        });
                        series.error = Some(line);
                        failed = true;
                    }
                }
            }
        }
    }
    result.elapsed_s = t0.elapsed().as_secs_f64();
    if let Some(e) = &error {
        result.interrupted = true;
        result.stop_reason = Some(format!("error: {}", one_line(e)));
    } else if stop.load(Ordering::Relaxed) {
        result.interrupted = true;
        result.stop_reason = Some("interrupted by signal".into());
    }
    AgeOutput {
        result,
        error,
        failed,
    }
}

/// An error and its causes on one line, each cause once.
fn one_line(e: &dyn std::error::Error) -> String {
    let mut line = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

/// What ended a series, on one line, and why a file system that copies on
/// write ran full.
fn series_error(e: &AgeError, fs: &str, fss: &dyn FileSystems) -> String {
    let mut line = one_line(e);
    if line.contains("No space left") && fss.copies_on_write(fs) {
        line.push_str(
            " (copy on write allocates anew for every overwrite, and the old blocks stay \
             referenced until whole extents are free: a fuller file system runs out first)",
        );
    }
    line
}

/// One file system at one fill level: made, filled, aged, taken down.
fn on_loop(
    cx: &mut Ctx,
    img: &LoopImage,
    fill: u32,
    dataset_total: u64,
    series: &mut AgeSeries,
) -> Result<(), AgeError> {
    let fs = &img.fs;
    (cx.on)(AgeEvent::Making {
        fs,
        fill,
        bytes: img.bytes,
    });
    let mut lfs = cx
        .fss
        .make(fs, &format!("{fs}-{fill}"), img.bytes, cx.plan.direct)
        .map_err(AgeError::Host)?;
    series.loop_direct_io = lfs.direct_io();
    let r = fill_and_age(cx, lfs.mnt(), fill, dataset_total, series);
    let down = lfs.take_down().map_err(AgeError::Host);
    r?;
    down
}

fn fill_and_age(
    cx: &mut Ctx,
    mnt: &Path,
    fill: u32,
    dataset_total: u64,
    series: &mut AgeSeries,
) -> Result<(), AgeError> {
    let f = cx.fss.fill(mnt).map_err(AgeError::Host)?;
    let cap = f.used + f.available;
    let want = cap * u64::from(fill) / 100;
    let filler = want.saturating_sub(f.used + dataset_total);
    if filler > 0 {
        (cx.on)(AgeEvent::Filling { bytes: filler });
        write_filler(&mnt.join("filler"), filler, cx.stop)?;
    }
    if cx.stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    age_series(cx, &mnt.join("ds"), series)
}

/// Filler files of `bytes` together, 64 MiB each at most, synced.
fn write_filler(dir: &Path, bytes: u64, stop: &AtomicBool) -> Result<(), AgeError> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .map_err(io(|| format!("cannot create {}", dir.display())))?;
    let mut chunk = vec![0u8; FILLER_CHUNK];
    // Incompressible, so that a compressing file system fills as asked.
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
            .map_err(io(|| format!("cannot create {}", p.display())))?;
        for _ in 0..FILLER_FILE_CHUNKS.min(chunks - i) {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            f.write_all(&chunk)
                .map_err(io(|| format!("cannot write {}", p.display())))?;
            i += 1;
        }
        f.sync_all()
            .map_err(io(|| format!("cannot sync {}", p.display())))?;
        n += 1;
    }
    Ok(())
}

/// Creates the data set in `ds_dir` and ages it round by round, each
/// point pushed as soon as it is measured.
fn age_series(cx: &mut Ctx, ds_dir: &Path, series: &mut AgeSeries) -> Result<(), AgeError> {
    let (plan, stop) = (cx.plan, cx.stop);
    let ns = LocalDir::new(ds_dir);
    let opts = PrepareOptions {
        engine: plan.engine,
        direct: plan.direct,
        force_overwrite: false,
    };
    let on = &mut *cx.on;
    let shown = ns.dir();
    let ds = match dbio_workload::prepare::prepare(&ns, &plan.spec, &opts, stop, &mut |d, t| {
        on(AgeEvent::Creating {
            dir: &shown,
            done: d,
            total: t,
        })
    }) {
        Ok(ds) => ds,
        Err(DatasetError::Interrupted) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    (cx.on)(AgeEvent::Created);
    series.data_files = ds.files.iter().filter(|f| f.kind == FileKind::Data).count() as u32;
    series.fill_measured_pct = cx.fss.fill(ds_dir).map_err(AgeError::Host)?.pct;
    let label = series.label();
    let mut updates = 0u64;
    for round in 0..=plan.rounds {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut update_mean_us = 0.0;
        if round > 0 {
            let r = phase(cx, &ds, IoClass::DbwrWrite, round)?;
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let c = class(&r, IoClass::DbwrWrite);
            updates += c.map_or(0, |c| c.ios);
            update_mean_us = c.map_or(0.0, |c| c.mean_us);
        }
        let Some(point) = measure(cx, &ds, round, updates, update_mean_us)? else {
            break;
        };
        (cx.on)(AgeEvent::Round {
            label: &label,
            rounds: plan.rounds,
            point: &point,
        });
        series.points.push(point);
    }
    Ok(())
}

fn class(r: &RunResult, c: IoClass) -> Option<&dbio_stats::ClassResult> {
    r.classes.iter().find(|x| x.class == c.name())
}

/// One measured phase of class `c` through the run driver: a fixed number
/// of updates, or a timed read or redo measurement.
fn phase(cx: &Ctx, ds: &Dataset, c: IoClass, round: u32) -> Result<RunResult, AgeError> {
    let plan = cx.plan;
    let update = c == IoClass::DbwrWrite;
    let run_plan = RunPlan::new(&RunOptions {
        classes: vec![c],
        size: Some(plan.spec.data_bytes),
        block_size: u64::from(BLOCK),
        users: 1,
        outstanding: if update { 4 } else { 1 },
        time: (!update).then_some(plan.measure),
        loops: update.then_some(plan.updates),
        seed: Some(0xa9e0 + u64::from(round) * 7919 + c.index() as u64),
        direct: plan.direct,
        raw: false,
        ..RunOptions::default()
    })?;
    let spec = run_plan.spec(&ds.dir.display().to_string(), ds.clone(), plan.engine, None);
    let out = run(&spec, cx.stop, None)?;
    if let Some(e) = out.error {
        return Err(e.into());
    }
    Ok(out.result)
}

/// The measurements after a round; None when a stop signal cut them short.
fn measure(
    cx: &Ctx,
    ds: &Dataset,
    round: u32,
    updates: u64,
    update_mean_us: f64,
) -> Result<Option<AgePoint>, AgeError> {
    let stop = cx.stop;
    let reads = phase(cx, ds, IoClass::SingleBlockRead, round)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let redo = phase(cx, ds, IoClass::RedoWrite, round)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let data: Vec<PathBuf> = ds
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Data)
        .map(|f| ds.dir.join(&f.name))
        .collect();
    let Some(scan_mbps) = scan(&data, cx.plan.direct, stop)? else {
        return Ok(None);
    };
    let mut frags = Vec::new();
    for p in &data {
        frags.push(cx.fss.fragments(p).map_err(AgeError::Host)?);
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
        fill_pct: cx.fss.fill(&ds.dir).map_err(AgeError::Host)?.pct,
    }))
}

/// Reads the files from start to end in 1 MiB reads; MB/s (10^6 bytes),
/// or None when stopped.
fn scan(files: &[PathBuf], direct: bool, stop: &AtomicBool) -> Result<Option<f64>, AgeError> {
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
            .map_err(io(|| format!("cannot open {}", p.display())))?;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let n = f
                .read(buf)
                .map_err(io(|| format!("cannot read {}", p.display())))?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
        }
    }
    let s = t0.elapsed().as_secs_f64().max(1e-9);
    Ok(Some(bytes as f64 / s / 1e6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot write /m/filler-0001")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn one_line_names_each_cause_once() {
        let e = AgeError::Host(Box::new(Outer(std::io::Error::from_raw_os_error(28))));
        let line = one_line(&e);
        assert!(
            line.starts_with("cannot write /m/filler-0001: No space left"),
            "{line}"
        );
        assert_eq!(line.matches("No space left").count(), 1, "{line}");
        let io = AgeError::Io {
            what: "cannot sync /m/f".into(),
            err: std::io::Error::from_raw_os_error(28),
        };
        assert_eq!(one_line(&io).matches("No space left").count(), 1);
    }
}
