//! `calibrate`: max IOPS at a latency cap and max MB/s, like CALIBRATE_IO
//! without its flaws. Load grows as outstanding asynchronous I/Os from one
//! thread (never as more processes than the cores can drive), each level
//! is measured after a warm-up, both ramps go up to their highest load (the
//! IOPS ramp stops earlier at the latency cap), and every level is kept as a
//! point of the curve. A level is the I/O of `dbio run` at that load.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dbio_engine::EngineKind;
use dbio_stats::{
    CalibrateResult, CpuUsage, CurvePoint, HistogramBucket, Live, Recorder, CALIBRATE_KIND,
    FORMAT_VERSION,
};
use dbio_workload::{Dataset, IoClass, WorkloadConfig};

use crate::drive::{drive, Load};
use crate::hooks::{WindowEdge, WindowHook};
use crate::requests::Requests;
use crate::{ExperimentError, ProgressFn};

/// Largest outstanding count of the 1 MiB ramp: enough to saturate any
/// device here without tying up gigabytes of buffers.
const MBPS_MAX_OUTSTANDING: u32 = 64;
/// Warm-up of a ramp's first level: fills the queue and the device's caches
/// of metadata. Levels after it follow a running load, whose queue is full
/// within milliseconds: they need less.
const FIRST_WARMUP: Duration = Duration::from_millis(300);
const NEXT_WARMUP: Duration = Duration::from_millis(100);
/// Share of the time budget given to the IOPS ramp; the rest is for MB/s.
const IOPS_SHARE: f64 = 0.7;
/// Below this share of idle CPU time on the host, a level's figure may be the
/// CPU's limit rather than the storage's.
const IDLE_FLOOR_PCT: f64 = 5.0;
/// Above this share of its time busy, dbio's own I/O thread may be the limit.
const THREAD_BUSY_CEILING: f64 = 0.95;

/// What to calibrate.
#[derive(Clone, Debug)]
pub struct CalibrateSpec {
    /// Target as the user named it (for the result).
    pub target: String,
    pub dataset: Dataset,
    pub engine: EngineKind,
    pub direct: bool,
    /// Mean-latency cap for max IOPS, microseconds.
    pub max_latency_us: f64,
    /// Highest outstanding count to try.
    pub max_outstanding: u32,
    /// Bound on the whole calibration.
    pub time: Duration,
    /// Cores: synchronous engines get at most one thread per core.
    pub cores: u32,
    pub seed: u64,
    /// This host's idle CPU over each level, for a figure the host's CPU may
    /// have set; None leaves the levels' `machine_idle_pct` out.
    pub machine: Option<Arc<dyn MachineIdle>>,
}

/// Reads this host's CPU at a level's measured window's edges (the CLI reads
/// /proc/stat): the share of it that was idle between them.
pub trait MachineIdle: Send + Sync {
    /// Reads the CPU times at the window's start (`true`) or end.
    fn edge(&self, start: bool);
    /// Percent of all CPUs' time idle between the last two edges.
    fn idle_pct(&self) -> Option<f64>;
}

impl std::fmt::Debug for dyn MachineIdle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MachineIdle")
    }
}

/// The outstanding counts of a ramp: 1, 2, 4, ... and `max` itself.
pub fn levels(max: u32) -> Vec<u32> {
    let mut v: Vec<u32> = std::iter::successors(Some(1u32), |&l| l.checked_mul(2))
        .take_while(|&l| l <= max.max(1))
        .collect();
    if v.last() != Some(&max.max(1)) {
        v.push(max.max(1));
    }
    v
}

/// Holds the processes of a calibration over several hosts in step (MPI
/// ranks): each level starts on all of them together, and every decision
/// (next level, knee, latency cap) is taken on the total load, the same on
/// each. A single process uses [`Alone`].
pub trait Step {
    /// Processes taking part; the outstanding counts of the curve are
    /// theirs summed.
    fn processes(&self) -> u32;
    /// The largest of every process's `code` (every process calls it at
    /// the same points; it is also where they wait for each other).
    fn agree(&mut self, code: u8) -> Result<u8, ExperimentError>;
    /// The whole load of a level from this process's part of it: every
    /// process's recorder merged exactly, the longest measured time, CPU
    /// time summed.
    fn total(
        &mut self,
        level: Recorder,
        measured: Duration,
        cpu: CpuUsage,
    ) -> Result<(Recorder, Duration, CpuUsage), ExperimentError>;
}

/// A calibration in one process.
pub struct Alone;

impl Step for Alone {
    fn processes(&self) -> u32 {
        1
    }
    fn agree(&mut self, code: u8) -> Result<u8, ExperimentError> {
        Ok(code)
    }
    fn total(
        &mut self,
        level: Recorder,
        measured: Duration,
        cpu: CpuUsage,
    ) -> Result<(Recorder, Duration, CpuUsage), ExperimentError> {
        Ok((level, measured, cpu))
    }
}

/// What [`Step::agree`] settles before and after each level, by priority.
const GO_ON: u8 = 0;
const OUT_OF_TIME: u8 = 1;
const STOPPED: u8 = 2;

struct Ramp {
    points: Vec<CurvePoint>,
    stop: &'static str,
    best_histogram: Vec<HistogramBucket>,
}

/// Runs the two ramps within `spec.time` and reports the results.
pub fn calibrate(
    spec: &CalibrateSpec,
    stop: &AtomicBool,
    progress: Option<ProgressFn>,
) -> Result<CalibrateResult, ExperimentError> {
    calibrate_in_step(spec, stop, progress, &mut Alone)
}

/// [`calibrate`] as one of several processes held in step by `step`: the
/// curve, the knee and the answers are those of the total load.
pub fn calibrate_in_step(
    spec: &CalibrateSpec,
    stop: &AtomicBool,
    progress: Option<ProgressFn>,
    step: &mut dyn Step,
) -> Result<CalibrateResult, ExperimentError> {
    if spec.max_outstanding == 0 {
        return Err(ExperimentError::Config(
            "--max-outstanding must be at least 1".into(),
        ));
    }
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let t0 = Instant::now();
    let end = t0 + spec.time;
    let sync_cap = if is_async(spec.engine) {
        u32::MAX
    } else {
        spec.cores.max(1)
    };
    let iops_levels = levels(spec.max_outstanding.min(sync_cap));
    let mbps_levels = levels(spec.max_outstanding.min(MBPS_MAX_OUTSTANDING).min(sync_cap));
    let budget = spec.time.as_secs_f64();
    let iops_level_s = level_seconds(budget * IOPS_SHARE, iops_levels.len());
    let mbps_level_s = level_seconds(budget * (1.0 - IOPS_SHARE), mbps_levels.len());

    let small = iops_workload(spec.dataset.block_size);
    // The IOPS ramp may not eat into the time reserved for the MB/s ramp.
    let iops_end = t0 + spec.time.mul_f64(IOPS_SHARE);
    let iops = ramp(
        spec,
        &small,
        &iops_levels,
        iops_level_s,
        iops_end,
        stop,
        progress,
        Measure::Iops,
        step,
    )?;

    let mut large = WorkloadConfig::new(spec.dataset.block_size);
    large.classes = vec![IoClass::MultiblockRead];
    large.multiblock_random = true;
    large.multiblock_bytes = 1 << 20;
    // Stopped: the ramp ends before its first level ("interrupted"), on
    // every process at the same point.
    let mbps = ramp(
        spec,
        &large,
        &mbps_levels,
        mbps_level_s,
        end,
        stop,
        progress,
        Measure::Mbps,
        step,
    )?;

    let best = best_iops(&iops.points);
    let best_mb = mbps
        .points
        .iter()
        .max_by(|a, b| a.mbps.total_cmp(&b.mbps))
        .cloned()
        .unwrap_or_default();
    let threads = |p: &CurvePoint| {
        if is_async(spec.engine) {
            step.processes()
        } else {
            p.outstanding
        }
    };
    let limits: Vec<String> = [("max_iops", best.as_ref()), ("max_mbps", Some(&best_mb))]
        .into_iter()
        .filter_map(|(name, p)| host_limit(name, p?, threads(p?)))
        .collect();
    Ok(CalibrateResult {
        kind: CALIBRATE_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        started_unix,
        elapsed_s: t0.elapsed().as_secs_f64(),
        interrupted: stop.load(Ordering::Relaxed),
        target: spec.target.clone(),
        engine: spec.engine.name().into(),
        dataset_bytes: spec.dataset.data_bytes(),
        max_latency_us: spec.max_latency_us,
        max_iops: best.as_ref().map_or(0.0, |p| p.iops),
        max_iops_outstanding: best.as_ref().map_or(0, |p| p.outstanding),
        latency_us: best.as_ref().map_or(0.0, |p| p.mean_us),
        latency_p99_us: best.as_ref().map_or(0.0, |p| p.p99_us),
        max_mbps: best_mb.mbps,
        max_mbps_outstanding: best_mb.outstanding,
        iops_stop: iops.stop.into(),
        mbps_stop: mbps.stop.into(),
        iops_curve: iops.points,
        mbps_curve: mbps.points,
        histogram: iops.best_histogram,
        labels: Default::default(),
        cache: None,
        devices: None,
        host_limit: (!limits.is_empty()).then(|| {
            format!(
                "this host's CPU may have set these figures, not the storage: {}",
                limits.join("; ")
            )
        }),
    })
}

/// Why the figure `name`, measured at `p` by `threads` I/O threads, may be this
/// host's CPU limit: the machine had almost no idle time, or dbio's own threads
/// were busy almost all of it. Such a figure says what this host can drive.
fn host_limit(name: &str, p: &CurvePoint, threads: u32) -> Option<String> {
    if p.ios == 0 {
        return None;
    }
    let mut why = Vec::new();
    if let Some(idle) = p.machine_idle_pct.filter(|&i| i < IDLE_FLOOR_PCT) {
        why.push(format!("the machine was {idle:.1}% idle"));
    }
    let busy = p.cpu_us_per_io * p.iops / 1e6 / f64::from(threads.max(1));
    if busy >= THREAD_BUSY_CEILING {
        why.push(format!(
            "dbio's I/O thread{} busy {:.0}% of the time",
            if threads > 1 { "s were" } else { " was" },
            busy.min(1.0) * 100.0
        ));
    }
    (!why.is_empty()).then(|| {
        format!(
            "at {name}'s load ({} outstanding) {}",
            p.outstanding,
            why.join(" and ")
        )
    })
}

/// The point with the highest IOPS among those within the latency cap.
pub fn best_iops(points: &[CurvePoint]) -> Option<CurvePoint> {
    points
        .iter()
        .filter(|p| p.within_cap)
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
        .cloned()
}

fn is_async(kind: EngineKind) -> bool {
    !matches!(kind, EngineKind::Psync)
}

/// Whether a level of `level` may start `now`: it must end by `end`, except a ramp's
/// first level, which always runs. On a loaded machine the IOPS ramp can overrun its
/// share of the time, and a calibration with no MB/s point at all says nothing.
fn may_start(first: bool, now: Instant, level: Duration, end: Instant) -> bool {
    first || now + level <= end
}

/// Seconds per level so that a full ramp fits in `budget`, keeping 5% for the first
/// level's set-up and the ramps' own (later set-ups come out of the levels: see
/// [`level_span`]); at least half a second (shorter levels are mostly warm-up), at
/// most five.
fn level_seconds(budget: f64, levels: usize) -> f64 {
    (budget * 0.95 / levels.max(1) as f64).clamp(0.5, 5.0)
}

/// How long a level runs (warm-up and measurement) in a slot of `slot` when the last
/// level's set-up and ending took `setup`: the slot less that, so that set-ups do not
/// lengthen a calibration; never under half a slot.
fn level_span(slot: Duration, setup: Duration) -> Duration {
    slot.saturating_sub(setup).max(slot / 2)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Measure {
    Iops,
    Mbps,
}

/// A level of a ramp at `outstanding`: the load of `dbio run` with the same
/// workload, engine, outstanding I/Os (users, for a synchronous engine) and
/// seed, so that the curve's point is what a run at that load gets.
fn level_load<'a>(
    spec: &'a CalibrateSpec,
    workload: &'a WorkloadConfig,
    outstanding: u32,
    level: Duration,
    warmup: Duration,
) -> Load<'a> {
    Load::closed(
        &spec.dataset,
        spec.engine,
        spec.direct,
        workload,
        outstanding,
        level,
        warmup,
        spec.seed,
    )
}

/// The 8 KiB random reads of the IOPS ramp: `dbio run --workload
/// single-block-read`.
fn iops_workload(block_size: u32) -> WorkloadConfig {
    let mut w = WorkloadConfig::new(block_size);
    w.classes = vec![IoClass::SingleBlockRead];
    w
}

/// The first `per_user` I/Os each user issues in the IOPS ramp's level at
/// `outstanding` (see [`Requests`]).
pub fn level_requests(
    spec: &CalibrateSpec,
    outstanding: u32,
    per_user: usize,
) -> Result<Requests, ExperimentError> {
    let workload = iops_workload(spec.dataset.block_size);
    level_load(spec, &workload, outstanding, Duration::ZERO, Duration::ZERO).requests(per_user)
}

#[allow(clippy::too_many_arguments)]
fn ramp(
    spec: &CalibrateSpec,
    workload: &WorkloadConfig,
    levels: &[u32],
    level_s: f64,
    end: Instant,
    stop: &AtomicBool,
    progress: Option<ProgressFn>,
    measure: Measure,
    step: &mut dyn Step,
) -> Result<Ramp, ExperimentError> {
    let mut r = Ramp {
        points: Vec::new(),
        stop: "max outstanding",
        best_histogram: Vec::new(),
    };
    let mut best = 0.0f64;
    // The warm-up is part of the level's time, and so is the set-up before it (see
    // `level_span`).
    let slot = Duration::from_secs_f64(level_s);
    let live = Live::new();
    let mut setup = Duration::ZERO;
    for &outstanding in levels {
        let now = Instant::now();
        // Ranks in step run levels of one length: each rank's set-up differs.
        let total = if step.processes() > 1 {
            slot
        } else {
            level_span(slot, setup)
        };
        let warmup = if r.points.is_empty() {
            FIRST_WARMUP
        } else {
            NEXT_WARMUP
        }
        .min(total / 5);
        let level = total - warmup;
        let here = if stop.load(Ordering::Relaxed) {
            STOPPED
        } else if !may_start(r.points.is_empty(), Instant::now(), level + warmup, end) {
            OUT_OF_TIME
        } else {
            GO_ON
        };
        match step.agree(here)? {
            GO_ON => {}
            OUT_OF_TIME => {
                r.stop = "time";
                break;
            }
            _ => {
                r.stop = "interrupted";
                break;
            }
        }
        let mut load = level_load(spec, workload, outstanding, level, warmup);
        // This host's CPU over the level's measured window: a figure taken with
        // no idle CPU left may be the host's limit.
        let hook = spec.machine.clone().map(|m| {
            WindowHook(Arc::new(move |e: WindowEdge| {
                m.edge(e == WindowEdge::Start)
            }))
        });
        load.on_window = hook.as_ref();
        let out = drive(&load, stop, &live, &mut |_| {})?;
        setup = now.elapsed().saturating_sub(total);
        if let Some(e) = out.error {
            return Err(e);
        }
        let (recorder, measured, cpu) = step.total(out.recorder, out.measured, out.cpu)?;
        let mut point = recorder.curve_point(
            outstanding * step.processes(),
            measured,
            &cpu,
            spec.max_latency_us,
        );
        point.machine_idle_pct = spec.machine.as_ref().and_then(|m| m.idle_pct());
        if let Some(p) = progress {
            p(&format!(
                "{:<11} outstanding {:>4}: {:>9.0} IOPS {:>8.1} MB/s  mean {:>9.1} us  p99 {:>9.1} us",
                if measure == Measure::Iops { "8k random" } else { "1M random" },
                point.outstanding,
                point.iops,
                point.mbps,
                point.mean_us,
                point.p99_us
            ));
        }
        let value = match measure {
            Measure::Iops => point.iops,
            Measure::Mbps => point.mbps,
        };
        let capped = measure == Measure::Iops && !point.within_cap;
        if !capped && value > best && measure == Measure::Iops {
            r.best_histogram = recorder.histogram();
        }
        r.points.push(point);
        if step.agree(if stop.load(Ordering::Relaxed) {
            STOPPED
        } else {
            GO_ON
        })? == STOPPED
        {
            r.stop = "interrupted";
            break;
        }
        if capped {
            r.stop = "latency cap";
            break;
        }
        best = best.max(value);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_with_no_idle_cpu_or_a_busy_thread_is_named_the_limit() {
        let p = |idle, cpu_us_per_io| CurvePoint {
            outstanding: 32,
            ios: 100_000,
            iops: 50_000.0,
            cpu_us_per_io,
            machine_idle_pct: idle,
            ..Default::default()
        };
        // 10 us of CPU per I/O at 50,000 IOPS: half of one thread.
        assert_eq!(host_limit("max_iops", &p(Some(40.0), 10.0), 1), None);
        assert_eq!(host_limit("max_iops", &p(None, 10.0), 1), None);
        let idle = host_limit("max_iops", &p(Some(0.4), 10.0), 1).unwrap();
        assert!(
            idle.contains("(32 outstanding) the machine was 0.4% idle"),
            "{idle}"
        );
        // 19.5 us per I/O: the one thread busy 97.5% of the time.
        let busy = host_limit("max_iops", &p(Some(40.0), 19.5), 1).unwrap();
        assert!(busy.contains("dbio's I/O thread was busy 98%"), "{busy}");
        // The same CPU over two threads is half of each.
        assert_eq!(host_limit("max_iops", &p(Some(40.0), 19.5), 2), None);
        let both = host_limit("max_mbps", &p(Some(1.0), 30.0), 1).unwrap();
        assert!(both.contains("idle and dbio's"), "{both}");
    }

    #[test]
    fn levels_double_up_to_max() {
        assert_eq!(levels(1), vec![1]);
        assert_eq!(levels(8), vec![1, 2, 4, 8]);
        assert_eq!(levels(12), vec![1, 2, 4, 8, 12]);
        assert_eq!(levels(0), vec![1]);
    }

    #[test]
    fn best_is_highest_within_cap() {
        let p = |o, iops, within_cap| CurvePoint {
            outstanding: o,
            iops,
            within_cap,
            ..Default::default()
        };
        let pts = vec![p(1, 100.0, true), p(2, 300.0, true), p(4, 500.0, false)];
        assert_eq!(best_iops(&pts).unwrap().outstanding, 2);
        assert!(best_iops(&[p(1, 1.0, false)]).is_none());
    }

    #[test]
    fn a_ramp_s_first_level_runs_even_out_of_time() {
        let now = Instant::now();
        let level = Duration::from_secs(1);
        assert!(may_start(true, now, level, now));
        assert!(!may_start(false, now, level, now));
        assert!(may_start(false, now, level, now + level));
    }

    #[test]
    fn level_time_fits_the_budget() {
        assert_eq!(level_seconds(45.0, 9), 45.0 * 0.95 / 9.0);
        assert_eq!(level_seconds(1.0, 9), 0.5);
        assert_eq!(level_seconds(100.0, 2), 5.0);
    }

    #[test]
    fn a_level_s_set_up_comes_out_of_its_slot() {
        let ms = Duration::from_millis;
        let slot = ms(1500);
        assert_eq!(level_span(slot, ms(0)), slot);
        assert_eq!(level_span(slot, ms(80)), ms(1420));
        // Never under half a slot.
        assert_eq!(level_span(slot, ms(900)), ms(750));
    }
}
