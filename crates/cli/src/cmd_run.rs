//! `dbio run`: database-shaped I/O, SLOB-style, for a time or a number of loops.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use dbio_engine::EngineKind;
use dbio_experiment::verify_map::prepare_map;
use dbio_experiment::{run, ExperimentError, RunOptions, RunPlan};
use dbio_report::AnyResult;
use dbio_stats::slo::evaluate;
use dbio_stats::RunResult;
use dbio_storage::Target;
use dbio_workload::{Arrivals, IoClass, Profile, Rates, RedoFlush, RedoStress};

use crate::common::{self, duration_arg, engine_arg, size_arg, OutputArgs, EXIT_INTERRUPTED};
use crate::nfs_target::views_printer;
use crate::run_flags::{RunFlags, Setup};

#[derive(clap::Args)]
#[command(
    about = "Drive database-shaped I/O (SLOB-style) for a time or a number of loops",
    long_about = "Drive the I/O an Oracle instance does against a dbio data set: each user (a \
        session, one thread) keeps --outstanding I/Os in flight and draws from the workload \
        classes: single-block-read (random 8 KiB, \"db file sequential read\"), multiblock-read \
        (up to 1 MiB, \"db file scattered read\"), direct-read (large asynchronous reads, \
        \"direct path read\"), dbwr-write (random block writes in batches, \"db file parallel \
        write\"), redo-write (sequential synchronous writes of 512 B to 1 MiB, \"log file \
        parallel write\"), direct-write (large asynchronous writes that bypass the buffer \
        cache, \"direct path write\"; in a mix, a share of --scan-pct).\n\nClosed loop (the default): a user issues its next I/O when one completes, so a \
        stalled storage is simply asked for less and the stall hides from the latencies.\nOpen \
        loop (--rate): I/Os arrive on schedule whatever became of earlier ones, and latency \
        counts from each I/O's intended start, so waits behind a stall are measured.\n\nThe data set is created in --target on first use (or reused when \
        it matches); dbio only ever writes to files it created. Ctrl-C stops the run within a \
        second and still writes the results measured so far, marked as interrupted (exit code \
        130).\n\nExample: dbio run --target /data/dbio --profile oltp --users 4 --outstanding 8 \
        --time 30s --json run.json\n\nOpen loop: dbio run --target /data/dbio --profile oltp --rate \
        5000 --users 4 --outstanding 32 (5000 I/Os per second split by the oltp mix; the result \
        sets asked against achieved rates and says whether the storage fell behind)\n\nSeveral hosts: under mpirun (Open MPI, found at run time) \
        each rank is one dbio process with its own part of the data set (TARGET/rank-R, or \
        .../rank-R in an nfs:// URL) and its own --users; the ranks start and stop together \
        and rank 0 writes one result, merged exactly, with a per-rank breakdown. Example: \
        mpirun -n 4 dbio run --target /data/dbio --profile oltp --users 2 --time 30s --json \
        all.json"
)]
pub struct Args {
    #[command(flatten)]
    pub flags: RunFlags,
    /// With an nfs:// target: show the dNFS views (channels, calls, events) under the
    /// progress line, refreshed every second. With a target on a kernel NFS mount: the
    /// kernel client's last second there (calls, round trip, backlog), from
    /// /proc/self/mountstats; its views are in the result either way
    #[arg(long)]
    views: bool,
    /// Workload shortcut: oltp (single-block reads, 25% updates: DBWR and redo writes), olap
    /// (multiblock and direct-path reads), redo (heavy redo writes only), mixed (every class but
    /// direct-write, 25% updates, 10% scans) [default: oltp, or custom with --workload]
    #[arg(long, value_name = "NAME", value_parser = profile_arg)]
    profile: Option<Profile>,
    /// I/O classes to run, repeatable or comma-separated: single-block-read, multiblock-read,
    /// direct-read, dbwr-write, redo-write, direct-write (overrides the profile's classes)
    #[arg(long, value_name = "CLASS", value_delimiter = ',', value_parser = class_arg)]
    workload: Vec<IoClass>,
    /// I/O engine: io_uring (many outstanding I/Os per thread), psync (pread/pwrite, one I/O
    /// at a time per user), null (no device: measures dbio's own overhead)
    #[arg(long, value_name = "ENGINE", default_value = "io_uring", value_parser = engine_arg)]
    engine: EngineKind,
    /// Concurrent users (sessions), one thread each (SLOB: sessions per schema). Under
    /// mpirun this is per rank: `mpirun -n 4 dbio run --users 2` runs 8 users in all
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    users: u32,
    /// Open loop: I/Os per second for the whole run, split by the workload's mix (e.g. 5000),
    /// or per class (e.g. single-block-read=800,redo-write=120: only those classes run),
    /// spread evenly over the users. Latency then counts from each I/O's intended start
    /// [default: closed loop]
    #[arg(long, value_name = "IOPS|CLASS=IOPS,...", value_parser = rate_arg)]
    rate: Option<Box<Rates>>,
    /// With --rate, how arrivals are spaced: poisson (independent arrivals, as many sessions
    /// make them: bursts happen) or fixed (every 1/rate seconds exactly)
    #[arg(long, value_name = "KIND", default_value = "poisson", value_parser = arrivals_arg, requires = "rate")]
    arrivals: Arrivals,
    /// How long to run, e.g. 30s, 2m, 500ms (SLOB RUN_TIME) [default: 30s unless --loops]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    time: Option<Duration>,
    /// Stop after this many I/Os per user (SLOB WORK_LOOP); with --time, whichever comes first
    #[arg(long, value_name = "N", value_parser = common::count_arg)]
    loops: Option<u64>,
    /// Percent of block operations that are updates: a DBWR write (batched) and a redo
    /// write each (SLOB UPDATE_PCT) [default: from the profile, oltp 25]
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100))]
    update_pct: Option<u32>,
    /// Percent of reads that are scans: multiblock or direct-path reads (SLOB SCAN_PCT)
    /// [default: from the profile, oltp 0]
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100))]
    scan_pct: Option<u32>,
    /// Redo write size: lite (512 B to 16 KiB, small commits) or heavy (64 KiB to 1 MiB)
    /// (SLOB REDO_STRESS) [default: from the profile]
    #[arg(long, value_name = "LEVEL", value_parser = redo_arg)]
    redo_stress: Option<RedoStress>,
    /// How a redo write is made durable: dsync (the write itself, O_DSYNC, as Oracle's LGWR
    /// and PostgreSQL's open_datasync) or fdatasync (written, then the log fdatasync'ed,
    /// one wait: PostgreSQL's default wal_sync_method on Linux)
    #[arg(long, value_name = "METHOD", default_value = "dsync", value_parser = redo_flush_arg)]
    redo_flush: RedoFlush,
    /// Write the redo log through the page cache while the data files stay O_DIRECT
    /// (PostgreSQL's WAL without direct I/O, as it is by default)
    #[arg(long)]
    redo_buffered: bool,
    /// Size of a hot spot in MiB that gets every --hotspot-frequency-th block operation
    /// (SLOB DO_HOTSPOT/HOTSPOT_MB) [default: 0, no hot spot]
    #[arg(long, value_name = "MIB", default_value_t = 0)]
    hotspot_mb: u64,
    /// Where the hot spot starts, MiB into the data (SLOB HOTSPOT_OFFSET_MB)
    #[arg(long, value_name = "MIB", default_value_t = 0)]
    hotspot_offset_mb: u64,
    /// Every Nth block operation goes to the hot spot (SLOB HOTSPOT_FREQUENCY)
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = common::count32_arg)]
    hotspot_frequency: u32,
    /// Shortest think time, e.g. 100ms (SLOB THINK_TM_MIN)
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = duration_arg)]
    think_min: Duration,
    /// Longest think time (SLOB THINK_TM_MAX)
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = duration_arg)]
    think_max: Duration,
    /// Every Nth operation of a user waits a think time first; 0 = never
    /// (SLOB THINK_TM_FREQUENCY)
    #[arg(long, value_name = "N", default_value_t = 0)]
    think_frequency: u32,
    /// Database block size: the size of single-block reads and DBWR writes (db_block_size)
    #[arg(long, value_name = "SIZE", default_value = "8k", value_parser = size_arg)]
    block_size: u64,
    /// Total size of the data files [default: 1GiB]
    #[arg(long, value_name = "SIZE", value_parser = size_arg, conflicts_with = "scale")]
    size: Option<u64>,
    /// Data per user, the data set being --scale x --users (SLOB SCALE)
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    scale: Option<u64>,
    /// Go through a page cache of SIZE (implies --buffered): dbio runs in a memory cgroup
    /// of its own whose limit is SIZE above its own memory, and drops the data set's
    /// pages first, so reads miss as on a server with that much page cache and pay what a miss
    /// costs there. Needs root (or a delegated cgroup); local targets only
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    page_cache: Option<u64>,
    /// Verify the data: every written block carries its data set, file, block number, write
    /// generation and a checksum; every read checks them, and a final pass reads back every
    /// block. The result counts lost, torn and misdirected blocks and checksum failures
    /// (all zero on healthy storage); `dbio verify DIR` checks again later, even after a crash
    #[arg(long)]
    verify: bool,
    /// With --verify: write the journal of in-flight writes to stable storage before each
    /// batch of writes is issued, so that even a power loss leaves every block either
    /// verified or known to have had a write in flight (costs a flush per batch)
    #[arg(long, requires = "verify")]
    verify_sync: bool,
    /// Leave the raw recorder (exact latency histograms, per-second counters) out of the
    /// JSON result; without it, results of several runs cannot be merged exactly
    #[arg(long)]
    pub no_raw: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn profile_arg(s: &str) -> Result<Profile, String> {
    Profile::parse(s)
        .ok_or_else(|| format!("unknown profile {s:?} (one of oltp, olap, redo, mixed)"))
}

fn class_arg(s: &str) -> Result<IoClass, String> {
    IoClass::parse(s).ok_or_else(|| {
        let names: Vec<&str> = IoClass::ALL.iter().map(|c| c.name()).collect();
        format!("unknown workload {s:?} (one of {})", names.join(", "))
    })
}

fn rate_arg(s: &str) -> Result<Box<Rates>, String> {
    Rates::parse(s).map(Box::new).map_err(|e| e.to_string())
}

fn arrivals_arg(s: &str) -> Result<Arrivals, String> {
    Arrivals::parse(s).ok_or_else(|| format!("unknown arrivals {s:?} (poisson or fixed)"))
}

/// Outstanding I/Os per user when not given: a closed loop's session waits
/// on each I/O; an open loop needs room for arrivals that come together.
const OPEN_LOOP_OUTSTANDING: u32 = 32;

fn redo_arg(s: &str) -> Result<RedoStress, String> {
    RedoStress::parse(s).ok_or_else(|| format!("unknown redo stress {s:?} (lite or heavy)"))
}

fn redo_flush_arg(s: &str) -> Result<RedoFlush, String> {
    RedoFlush::parse(s).ok_or_else(|| format!("unknown redo flush {s:?} (dsync or fdatasync)"))
}

impl Args {
    pub fn options(&self) -> RunOptions {
        RunOptions {
            profile: self.profile,
            classes: self.workload.clone(),
            update_pct: self.update_pct,
            scan_pct: self.scan_pct,
            redo_stress: self.redo_stress,
            redo_flush: self.redo_flush,
            redo_buffered: self.redo_buffered,
            redo_direct: false,
            multiblock_bytes: None,
            hotspot_mb: self.hotspot_mb,
            hotspot_offset_mb: self.hotspot_offset_mb,
            hotspot_frequency: self.hotspot_frequency,
            think_min: self.think_min,
            think_max: self.think_max,
            think_frequency: self.think_frequency,
            block_size: self.block_size,
            size: self.size,
            scale: self.scale,
            users: self.users,
            outstanding: self.flags.outstanding.unwrap_or(if self.rate.is_some() {
                OPEN_LOOP_OUTSTANDING
            } else {
                1
            }),
            time: self.time,
            warmup: self.flags.warmup,
            loops: self.loops,
            seed: self.flags.seed,
            direct: !(self.flags.buffered || self.page_cache.is_some()),
            verify: self.verify,
            verify_sync: self.verify_sync,
            raw: !self.no_raw,
            rate: self.rate.as_deref().cloned(),
            arrivals: self.arrivals,
        }
    }
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    // Under mpirun: one rank of a run over several hosts (crate::mpi_run).
    if let Some(world) = dbio_mpi::World::from_env()? {
        if world.size() > 1 {
            return crate::mpi_run::main(&args, world);
        }
        world.finalize()?;
    }
    args.output.check()?;
    // Every option is checked before the target is opened or anything written.
    let mut options = args.options();
    if let Some(conf) = &args.flags.slob_conf {
        crate::slob_conf::apply::<Args>(conf, &mut options, true)?;
    }
    let plan = RunPlan::new(&options)?;
    let name = args.flags.target_or_default();
    let outputs = args.output.outputs();
    {
        // Written if a signal comes while a step that cannot be stopped (a server
        // that never answers) holds the run past its grace.
        let nfs = name.to_string_lossy().starts_with("nfs://");
        let engine = if nfs { EngineKind::Nfs } else { args.engine };
        let result = AnyResult::Run(plan.interrupted_result(&name.display().to_string(), engine));
        let outputs = outputs.clone();
        common::results_if_stuck(move || dbio_report::write_outputs(&result, &outputs).is_ok());
    }
    let mut m = measure(&args.setup(), &plan, &name, &mut |stopped| Ok(stopped))?;
    common::finishing();
    if m.before_start {
        return common::exit_interrupted(m.result, &outputs);
    }
    m.result.slo = evaluate(&args.flags.slo, &m.result.classes);
    let code = match exit_code(&m.result) {
        0 => dbio_stats::slo::exit_code(&m.result.slo),
        c => c,
    };
    let keeps = (args.flags.target.is_none() && m.result.config.engine != EngineKind::Null.name())
        .then_some(m.result.config.dataset_bytes);
    let result = AnyResult::Run(m.result);
    print!("{}", dbio_report::terminal(&result));
    common::wrote(dbio_report::write_outputs(&result, &outputs)?);
    if let Some(bytes) = keeps {
        common::default_data_set_stays(&name, bytes);
    }
    if let Some(e) = m.error {
        return Err(e.into());
    }
    Ok(code)
}

/// The exit code of a finished run: 130 when interrupted, 1 when bad
/// blocks were found (as `dbio verify`), else 0.
pub fn exit_code(result: &RunResult) -> i32 {
    let corrupt = result
        .verify
        .as_ref()
        .is_some_and(|v| v.lost + v.torn + v.misdirected + v.checksum > 0);
    match (result.interrupted, corrupt) {
        (true, _) => EXIT_INTERRUPTED,
        // Bad blocks: the exit code of `dbio verify` finding corruption.
        (false, true) => 1,
        _ => 0,
    }
}

/// What one process measured.
pub struct Measured {
    pub result: RunResult,
    /// The I/O error that ended the run early.
    pub error: Option<ExperimentError>,
    /// Stopped by a signal before the first I/O (`result` is then empty).
    pub before_start: bool,
}

impl Args {
    pub fn setup(&self) -> Setup {
        self.flags.setup(self.engine, self.views, self.page_cache)
    }
}

/// Opens `name`, prepares the data set, then calls `start` with whether a
/// signal stopped the preparation; `start` says whether to stop (a run over
/// several hosts waits there for every rank and stops when any rank was
/// stopped). Then runs the plan.
pub fn measure(
    args: &Setup,
    plan: &RunPlan,
    name: &Path,
    start: &mut dyn FnMut(bool) -> anyhow::Result<bool>,
) -> anyhow::Result<Measured> {
    let stop = common::stop_flag();
    let target = Target::open(name, &args.nfs)?;
    let engine = target.engine(args.engine)?;
    let name = name.display().to_string();
    let labels = args.labels.clone();
    let direct = plan.direct;
    let force = args.force_overwrite;
    let mut prepared = None;
    if let Some(dataset) = common::prepare(&target, &plan.dataset, engine, direct, force, stop)? {
        let mut rewrite = common::progress_line("writing verifiable content to");
        let writes = plan.workload.writes();
        match prepare_map(
            &dataset,
            engine,
            direct,
            plan.verify,
            writes,
            stop,
            &mut rewrite,
        ) {
            Ok(v) => prepared = Some((dataset, v)),
            Err(e) if e.is_interrupted() => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Held until the run ends: dbio leaves the memory cgroup when it drops.
    let confined = match (args.page_cache, &prepared) {
        (Some(bytes), Some((dataset, _))) => Some(page_cache_for(&target, bytes, dataset)?),
        _ => None,
    };
    let stopped = prepared.is_none() || stop.load(Ordering::Relaxed);
    let (false, Some((dataset, verify))) = (start(stopped)?, prepared) else {
        let mut result = plan.interrupted_result(&name, engine);
        result.labels = labels;
        return Ok(Measured {
            result,
            error: None,
            before_start: true,
        });
    };
    let cache = common::cache_check(
        &target,
        engine,
        direct,
        &dataset,
        confined.as_ref().map(|c| c.bytes),
    );
    let mut spec = plan.spec(&name, dataset, engine, verify);
    spec.on_final_pass = Some(|| eprintln!("verifying every block of the data set"));
    // The kernel NFS client's counters of the mount, for a target on one.
    let knfs = target.device_dir().and_then(crate::kernel_views::start);
    let machine = std::sync::Arc::new(dbio_diag::hostcpu::WindowTicks::default());
    spec.on_window = Some(crate::kernel_views::hook(
        knfs.as_ref(),
        std::sync::Arc::clone(&machine),
    ));
    let printer = common::progress_printer();
    // Device and CPU statistics beside the run, for a target on local devices.
    let sampler = target.device_dir().and_then(device_sampler);
    let out = {
        let views = (args.views && target.has_live_views()).then(|| views_printer(&target));
        let knfs_views = match (&knfs, args.views) {
            (Some(k), true) => Some(crate::kernel_views::printer(k)),
            _ => None,
        };
        let progress: Option<&(dyn Fn(&str) + Sync)> = match (&views, &knfs_views, &printer) {
            (Some(v), _, _) => Some(v),
            (None, Some(k), _) => Some(k),
            (None, None, Some(p)) => Some(p),
            _ => None,
        };
        run(&spec, stop, progress)
    };
    let knfs = knfs.and_then(crate::kernel_views::finish);
    common::print_notices(&target);
    let mut out = out?;
    out.result.kernel_nfs = knfs.map(Box::new);
    out.result.machine_cpu = machine.section(out.result.ios);
    if let Some(s) = sampler {
        let section = s.finish();
        if !section.devices.is_empty() || !section.cpu.is_empty() {
            out.result.devices = Some(Box::new(section));
        }
    }
    target.fill_views(&mut out.result);
    crate::provenance::record(&mut out.result, &target);
    out.result.labels = labels;
    out.result.cache = cache;
    Ok(Measured {
        result: out.result,
        error: out.error,
        before_start: false,
    })
}

/// dbio in a page cache of `bytes` ([`dbio_diag::pagecache`]), with the data files of
/// `dataset` evicted from it so that the run's reads start cold.
fn page_cache_for(
    target: &Target,
    bytes: u64,
    dataset: &dbio_workload::Dataset,
) -> anyhow::Result<dbio_diag::pagecache::PageCacheLimit> {
    use dbio_diag::pagecache::{drop_cached, PageCacheLimit};
    anyhow::ensure!(
        target.nfs().is_none(),
        "--page-cache: applies to a local directory; an NFS target's page cache is the server's"
    );
    let limit = PageCacheLimit::confine(bytes).map_err(|e| {
        anyhow::anyhow!(
            "--page-cache: cannot confine dbio's page cache to {}: {e} (run as root, or \
             read O_DIRECT without --page-cache)",
            dbio_workload::units::format_size(bytes)
        )
    })?;
    let data: Vec<_> = dataset.engine_files().into_iter().map(|f| f.path).collect();
    drop_cached(&data).map_err(|e| anyhow::anyhow!("--page-cache: evicting the data set: {e}"))?;
    Ok(limit)
}

/// The sampler of the devices under `dir` (and the machine's CPU), once a
/// second; none when it cannot start (the run goes on without it).
pub fn device_sampler(dir: &Path) -> Option<dbio_diag::Sampler> {
    let devices = dbio_diag::devices_under(dir).unwrap_or_default();
    dbio_diag::Sampler::start(devices, Duration::from_secs(1)).ok()
}
