//! `dbio run`: database-shaped I/O, SLOB-style, for a time or a number of loops.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use dbio_engine::EngineKind;
use dbio_experiment::{run, RunSpec};
use dbio_report::AnyResult;
use dbio_workload::{DatasetSpec, Hotspot, IoClass, Profile, RedoStress, Think};

use crate::common::{self, duration_arg, engine_arg, size_arg, OutputArgs, EXIT_INTERRUPTED};

#[derive(clap::Args)]
#[command(
    about = "Drive database-shaped I/O (SLOB-style) for a time or a number of loops",
    long_about = "Drive the I/O an Oracle instance does against a dbio data set: each user (a \
        session, one thread) keeps --outstanding I/Os in flight and draws from the workload \
        classes: single-block-read (random 8 KiB, \"db file sequential read\"), multiblock-read \
        (up to 1 MiB, \"db file scattered read\"), direct-read (large asynchronous reads, \
        \"direct path read\"), dbwr-write (random block writes in batches, \"db file parallel \
        write\"), redo-write (sequential synchronous writes of 512 B to 1 MiB, \"log file \
        parallel write\").\n\nThe data set is created in --target on first use (or reused when \
        it matches); dbio only ever writes to files it created. Ctrl-C stops the run within a \
        second and still writes the results measured so far, marked as interrupted (exit code \
        130).\n\nExample: dbio run --target /data/dbio --profile oltp --users 4 --outstanding 8 \
        --time 30s --json run.json"
)]
pub struct Args {
    /// Directory of the data set; created if its parent exists [default: /var/tmp/dbio-<uid>].
    /// An nfs://server/export/dir?version=3&mountport=M&nfsport=N URL drives the server
    /// through dbio's own NFS client (engine "nfs"), the data set being created through NFS
    #[arg(long, value_name = "PATH")]
    target: Option<PathBuf>,
    #[command(flatten)]
    nfs: crate::nfs_target::NfsArgs,
    /// With an nfs:// target: show the dNFS views (channels, calls, events) under the
    /// progress line, refreshed every second
    #[arg(long)]
    views: bool,
    /// Workload shortcut: oltp (single-block reads, 25% updates: DBWR and redo writes), olap
    /// (multiblock and direct-path reads), redo (heavy redo writes only), mixed (every class,
    /// 25% updates, 10% scans) [default: oltp, or custom with --workload]
    #[arg(long, value_name = "NAME", value_parser = profile_arg)]
    profile: Option<Profile>,
    /// I/O classes to run, repeatable or comma-separated: single-block-read, multiblock-read,
    /// direct-read, dbwr-write, redo-write (overrides the profile's classes)
    #[arg(long, value_name = "CLASS", value_delimiter = ',', value_parser = class_arg)]
    workload: Vec<IoClass>,
    /// I/O engine: io_uring (many outstanding I/Os per thread), psync (pread/pwrite, one I/O
    /// at a time per user), null (no device: measures dbio's own overhead)
    #[arg(long, value_name = "ENGINE", default_value = "io_uring", value_parser = engine_arg)]
    engine: EngineKind,
    /// Concurrent users (sessions), one thread each (SLOB: sessions per schema)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    users: u32,
    /// I/Os each user keeps in flight (1 = a session waiting on each I/O, like a foreground
    /// process; more = asynchronous I/O like DBWR or parallel query)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65536))]
    outstanding: u32,
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
    /// Go through the page cache instead of O_DIRECT (figures then show memory, not storage)
    #[arg(long)]
    buffered: bool,
    /// Let dbio overwrite files in --target that it did not create
    #[arg(long)]
    force_overwrite: bool,
    /// Seed of the I/O generators (the same seed replays the same offsets)
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
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
    #[command(flatten)]
    output: OutputArgs,
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

fn redo_arg(s: &str) -> Result<RedoStress, String> {
    RedoStress::parse(s).ok_or_else(|| format!("unknown redo stress {s:?} (lite or heavy)"))
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    args.output.check()?;
    anyhow::ensure!(
        args.time.is_none_or(|t| !t.is_zero()),
        "--time must be longer than zero"
    );
    let block_size = u32::try_from(args.block_size)
        .ok()
        .filter(|b| b.is_power_of_two() && (2048..=32768).contains(b))
        .with_context(|| {
            format!(
                "--block-size {}: must be a power of two from 2k to 32k",
                args.block_size
            )
        })?;
    let profile = args.profile.unwrap_or(Profile::Oltp);
    let mut workload = profile.config(block_size);
    if !args.workload.is_empty() {
        let mut classes = args.workload.clone();
        classes.sort();
        classes.dedup();
        workload.classes = classes;
    }
    if let Some(p) = args.update_pct {
        workload.update_pct = p;
    }
    if let Some(p) = args.scan_pct {
        workload.scan_pct = p;
    }
    if let Some(r) = args.redo_stress {
        workload.redo_stress = r;
    }
    if args.hotspot_mb > 0 {
        workload.hotspot = Some(Hotspot {
            offset: args.hotspot_offset_mb << 20,
            size: args.hotspot_mb << 20,
            frequency: args.hotspot_frequency,
        });
    }
    if args.think_frequency > 0 {
        anyhow::ensure!(
            args.think_min <= args.think_max,
            "--think-min {:?} is above --think-max {:?}",
            args.think_min,
            args.think_max
        );
        workload.think = Some(Think {
            min: args.think_min,
            max: args.think_max,
            frequency: args.think_frequency,
        });
    }
    let size = match (args.size, args.scale) {
        (Some(s), _) => s,
        (None, Some(per_user)) => per_user.saturating_mul(u64::from(args.users)),
        (None, None) => 1 << 30,
    };
    let spec = DatasetSpec::new(size, block_size).map_err(|e| anyhow::anyhow!("--size: {e}"))?;
    // Checked before anything is written (the generator would refuse it later).
    let planned = dbio_workload::Dataset::planned(Path::new(""), &spec);
    dbio_workload::Generator::new(&workload, &dbio_workload::Layout::of(&planned), 0, 1, 0)
        .map_err(|e| match e {
            dbio_workload::GeneratorError::Hotspot { data, .. } => anyhow::anyhow!(
                "--hotspot-mb {} at --hotspot-offset-mb {} lies outside the {} of data",
                args.hotspot_mb,
                args.hotspot_offset_mb,
                dbio_workload::units::format_size(data)
            ),
            e => anyhow::anyhow!("{e}"),
        })?;
    let target = args.target.clone().unwrap_or_else(common::default_target);
    let stop = common::stop_flag();
    let direct = !args.buffered;
    let (nfs, engine) = crate::nfs_target::open_with_engine(
        &target,
        &args.nfs,
        &spec,
        args.force_overwrite,
        stop,
        args.engine,
    )?;
    let profile_name = match (args.profile, args.workload.is_empty()) {
        (None, false) => "custom".to_string(),
        (p, _) => p.unwrap_or(Profile::Oltp).name().to_string(),
    };
    let target_name = target.display().to_string();
    let outputs = args.output.outputs();
    let partial =
        || crate::verify_run::exit_interrupted(&target_name, engine, &profile_name, &outputs);
    let dataset = match &nfs {
        Some((_, ds)) => ds.clone(),
        None => match common::prepare_dataset(
            &target,
            &spec,
            args.engine,
            direct,
            args.force_overwrite,
            stop,
        )? {
            Some(ds) => ds,
            None => return partial(),
        },
    };
    let writes = workload.writes();
    let verify =
        match crate::verify_run::prepare(&dataset, engine, direct, args.verify, writes, stop) {
            Ok(v) => v,
            Err(e) if crate::verify_run::is_interrupted(&e) => return partial(),
            Err(e) => return Err(e),
        };
    let time = match (args.time, args.loops) {
        (None, None) => Some(Duration::from_secs(30)),
        (t, _) => t,
    };
    let spec = RunSpec {
        target: target.display().to_string(),
        dataset,
        engine,
        profile: profile_name.clone(),
        workload,
        users: args.users,
        outstanding: args.outstanding,
        direct,
        time,
        loops: args.loops,
        seed: args.seed.unwrap_or_else(seed_from_clock),
        verify,
        verify_sync: args.verify_sync,
        on_final_pass: Some(|| eprintln!("verifying every block of the data set")),
    };
    if stop.load(Ordering::Relaxed) {
        return partial();
    }
    let printer = common::progress_printer();
    let views = match &nfs {
        Some((t, _)) if args.views => Some(crate::nfs_target::views_printer(t.clone())),
        _ => None,
    };
    let progress: Option<&(dyn Fn(&str) + Sync)> = match (&views, &printer) {
        (Some(v), _) => Some(v),
        (None, Some(p)) => Some(p),
        _ => None,
    };
    let mut out = run(&spec, stop, progress)?;
    if let Some((t, _)) = &nfs {
        crate::nfs_target::fill_views(&mut out.result, t);
    }
    let interrupted = out.result.interrupted;
    let corrupt = out
        .result
        .verify
        .as_ref()
        .is_some_and(|v| v.lost + v.torn + v.misdirected + v.checksum > 0);
    let result = AnyResult::Run(out.result);
    print!("{}", dbio_report::terminal(&result));
    dbio_report::write_outputs(&result, &args.output.outputs())?;
    if let Some(e) = out.error {
        return Err(e.into());
    }
    Ok(match (interrupted, corrupt) {
        (true, _) => EXIT_INTERRUPTED,
        // Bad blocks: the exit code of `dbio verify` finding corruption.
        (false, true) => 1,
        _ => 0,
    })
}

fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}
