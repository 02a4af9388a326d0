//! `run`: a workload for a time or a number of loops.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dbio_engine::EngineKind;
use dbio_stats::{
    Live, Progress, RunConfig, RunResult, VerifyBadBlock, VerifySummary, FORMAT_VERSION, RUN_KIND,
};
use dbio_workload::verify::{GenMap, VerifyCounts};
use dbio_workload::verify_scan::{scan, ScanOptions};
use dbio_workload::{Dataset, FileKind, RedoFlush, WorkloadConfig};

use crate::drive::{class_descs, drive, Load};
use crate::hooks::{ProgressFn, WindowHook};
use crate::requests::Requests;
use crate::ExperimentError;

/// What to run.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Target as the user named it (for the result).
    pub target: String,
    pub dataset: Dataset,
    pub engine: EngineKind,
    /// Profile name, or "custom".
    pub profile: String,
    pub workload: WorkloadConfig,
    /// Users (sessions), one thread each.
    pub users: u32,
    /// Outstanding I/Os per user.
    pub outstanding: u32,
    /// O_DIRECT.
    pub direct: bool,
    pub time: Option<Duration>,
    /// Load before the measurement starts: its I/Os and CPU time are not recorded, and
    /// `time` counts from its end.
    pub warmup: Duration,
    /// I/Os per user.
    pub loops: Option<u64>,
    pub seed: u64,
    /// Verify mode: the generation map of the data set (see
    /// [`dbio_workload::verify`]); reads check blocks and a final pass
    /// checks every block.
    pub verify: Option<std::sync::Arc<GenMap>>,
    /// Verify mode: flush the journal of in-flight writes before each batch
    /// of writes (exact even after a power loss, at a cost).
    pub verify_sync: bool,
    /// Told when the final verify pass starts (the caller may say so).
    pub on_final_pass: Option<fn()>,
    /// Keep the recorder's raw form in the result (`RunResult::raw`), so
    /// that results merge exactly later.
    pub raw: bool,
    /// Open loop (`--rate`): I/Os arrive on a schedule; None: each user
    /// issues the next I/O when one completes.
    pub open_loop: Option<crate::OpenLoop>,
    /// Told at the measured window's edges, for counters read beside the run.
    pub on_window: Option<WindowHook>,
    /// Count which calls of a synchronous engine slept (`RunResult::io_threads`'
    /// `calls`), for a prediction that adds a database's wake-up wait.
    pub count_sleeps: bool,
}

/// A run's result, and the I/O error that ended it early, if one did.
pub struct RunOutput {
    pub result: RunResult,
    pub error: Option<ExperimentError>,
}

/// The load a run drives.
fn load_of<'a>(spec: &'a RunSpec, workload: &'a WorkloadConfig) -> Load<'a> {
    Load {
        dataset: &spec.dataset,
        engine: spec.engine,
        direct: spec.direct,
        workload,
        users: spec.users,
        outstanding: spec.outstanding,
        duration: spec.time,
        warmup: spec.warmup,
        loops: spec.loops,
        seed: spec.seed,
        verify: spec.verify.as_deref(),
        verify_sync: spec.verify_sync,
        open_loop: spec.open_loop.as_ref(),
        on_window: spec.on_window.as_ref(),
        count_sleeps: spec.count_sleeps,
    }
}

/// The first `per_user` I/Os each user of `spec` issues (closed loop).
pub fn run_requests(spec: &RunSpec, per_user: usize) -> Result<Requests, ExperimentError> {
    let workload = with_redo_unit(spec);
    load_of(spec, &workload).requests(per_user)
}

/// The workload with its redo writes in whole units of the log's direct-I/O
/// alignment, where the log is written O_DIRECT on a local file system that
/// needs more than 512 bytes (ext4 on zram, on a 4Kn drive): a 512-byte
/// O_DIRECT write there fails, and a database's log writes there are 4 KiB.
fn with_redo_unit(spec: &RunSpec) -> WorkloadConfig {
    let mut w = spec.workload.clone();
    let direct_log = w.redo_direct || (spec.direct && !w.redo_buffered);
    let redo = spec.dataset.files.iter().find(|f| f.kind == FileKind::Redo);
    if let (true, Some(redo)) = (direct_log, redo) {
        let path = spec.dataset.dir.join(&redo.name);
        if let Some(unit) = dbio_engine::direct_io_alignment(&path) {
            w.redo_unit = unit.max(512);
        }
    }
    w
}

/// Runs `spec` until its time or loops are done, or `stop` is set (then
/// the result is marked interrupted). With `progress`, a line a second.
pub fn run(
    spec: &RunSpec,
    stop: &AtomicBool,
    progress: Option<ProgressFn>,
) -> Result<RunOutput, ExperimentError> {
    if spec.time.is_none() && spec.loops.is_none() {
        return Err(ExperimentError::Config(
            "a run needs a time limit or a number of loops".into(),
        ));
    }
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let workload = with_redo_unit(spec);
    let load = load_of(spec, &workload);
    let live = Live::new();
    let t0 = Instant::now();
    let mut meter = Progress::new(&live, t0);
    let mut next = t0 + Duration::from_secs(1);
    let mut tick = |now: Instant| {
        if now >= next {
            if let Some(p) = progress {
                p(&meter.line(&live, now));
            }
            next += Duration::from_secs(1);
        }
    };
    let out = drive(&load, stop, &live, &mut tick)?;
    let (classes, mut files, series) = out.recorder.finish(out.measured);
    let open_loop = match (&spec.open_loop, &out.lateness) {
        (Some(o), Some(l)) => Some(Box::new(l.section(
            &class_descs(),
            &o.rates.asked(&spec.workload),
            &classes,
            o.arrivals.name(),
        ))),
        _ => None,
    };
    for (f, d) in files.iter_mut().zip(&spec.dataset.files) {
        f.name = d.name.clone();
        f.size = d.size;
    }
    let mut error = out.error;
    let verify = match (&spec.verify, out.verify) {
        (Some(map), Some(during)) => {
            Some(Box::new(final_pass(spec, map, during, stop, &mut error)))
        }
        _ => None,
    };
    let interrupted = stop.load(Ordering::Relaxed) || error.is_some();
    let stop_reason = match (&error, stop.load(Ordering::Relaxed)) {
        (Some(e), _) => Some(format!("I/O error: {e}")),
        (None, true) => Some("interrupted by signal".to_string()),
        _ => None,
    };
    let mut result = RunResult {
        kind: RUN_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        started_unix,
        elapsed_s: out.measured.as_secs_f64(),
        interrupted,
        stop_reason,
        config: RunConfig {
            target: spec.target.clone(),
            engine: spec.engine.name().into(),
            profile: spec.profile.clone(),
            workloads: spec
                .workload
                .classes
                .iter()
                .map(|c| c.name().to_string())
                .collect(),
            users: spec.users,
            outstanding: out.outstanding,
            block_size: spec.workload.block_size,
            direct: spec.direct,
            time_s: spec.time.map(|t| t.as_secs_f64()),
            loops: spec.loops,
            rate: spec.open_loop.as_ref().map(|o| o.rates.to_arg()),
            update_pct: spec.workload.update_pct,
            scan_pct: spec.workload.scan_pct,
            redo_stress: spec.workload.redo_stress.name().into(),
            redo_flush: (spec.workload.redo_flush != RedoFlush::Dsync)
                .then(|| spec.workload.redo_flush.name().into()),
            redo_buffered: spec.workload.redo_buffered,
            dataset_bytes: spec.dataset.data_bytes(),
        },
        failed_ios: out.recorder.failed(),
        cpu: out.cpu,
        classes,
        files,
        series,
        verify,
        raw: spec.raw.then(|| Box::new(out.recorder.to_raw())),
        open_loop,
        io_threads: out.sched,
        ..Default::default()
    };
    result.fill_totals();
    Ok(RunOutput { result, error })
}

/// Verify mode after the load: every block is read back and checked (not
/// after an I/O error or a stop signal, when the pass is left out and the
/// summary says so), and the map is written to the storage.
fn final_pass(
    spec: &RunSpec,
    map: &GenMap,
    during: VerifyCounts,
    stop: &AtomicBool,
    error: &mut Option<ExperimentError>,
) -> VerifySummary {
    let mut counts = during;
    let mut pass = VerifyCounts::default();
    let mut complete = false;
    if error.is_none() && !stop.load(Ordering::Relaxed) {
        if let Some(f) = spec.on_final_pass {
            f();
        }
        let opts = ScanOptions {
            engine: spec.engine,
            direct: spec.direct,
            settle: false,
            any_generation: false,
        };
        match scan(&spec.dataset, map, &opts, stop, &mut |_, _| {}) {
            Ok((c, done)) => {
                pass = c;
                complete = done;
            }
            Err(e) => *error = Some(ExperimentError::Config(format!("verify pass: {e}"))),
        }
    }
    if let Err(e) = map.flush() {
        error.get_or_insert(ExperimentError::Config(e.to_string()));
    }
    counts.merge(&pass);
    VerifySummary {
        blocks_checked: counts.blocks_checked,
        final_pass_blocks: pass.blocks_checked,
        final_pass_complete: complete,
        lost: counts.lost,
        torn: counts.torn,
        misdirected: counts.misdirected,
        checksum: counts.checksum,
        bad: counts
            .bad
            .iter()
            .map(|b| VerifyBadBlock {
                file: b.file.clone(),
                block: b.block,
                kind: b.fault.name().into(),
                detail: b.detail.clone(),
            })
            .collect(),
    }
}
