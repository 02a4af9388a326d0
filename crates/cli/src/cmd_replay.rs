//! `dbio replay`: an AWR report's I/O run open loop against this storage, and the
//! report's own figures set beside what this storage did.

use std::path::PathBuf;
use std::time::Duration;

use dbio_compare::replay::memory::memory_step;
use dbio_compare::replay::{judge, Answer};
use dbio_engine::EngineKind;
use dbio_experiment::plan::DEFAULT_SIZE;
use dbio_experiment::replay::replay_plan;
use dbio_experiment::RunOptions;
use dbio_sources::WorkloadModel;
use dbio_workload::units::format_size;
use dbio_workload::Arrivals;

use crate::cmd_run::measure;
use crate::common::{self, duration_arg, engine_arg, size_arg};
use crate::run_flags::RunFlags;

#[derive(clap::Args)]
#[command(
    about = "Replay an AWR report's or a PostgreSQL capture's I/O against this storage and compare, event by event",
    long_about = "Turn an Oracle AWR report (text or HTML, 11.2 to 19c) or a PostgreSQL capture \
        (`dbio pg capture`) into a workload model (per I/O class: the rate and size production \
        asked, and the section, view or columns each figure came from), run it open loop \
        against --target, and set production's own figures beside this storage's, per wait \
        event: mean, histogram, rate asked and achieved, and how many times better or worse \
        (as `dbio compare` says it).\n\n\
        A PostgreSQL capture replays as PostgreSQL does its I/O: one session per client \
        backend seen, each waiting for its own read (--engine psync, --outstanding 1), WAL \
        written through the page cache and fdatasync'd (as its wal_sync_method says), and \
        PostgreSQL's read and WAL times (call to return) set beside this storage's service \
        times (latency less any wait for the session). Block writes are replayed for their \
        load, not judged: PostgreSQL's write times are copies into the page cache. Where \
        the capture read the server's processes' /proc/PID/schedstat, the prediction for \
        reads and WAL flushes is the storage's mean plus the time those processes waited \
        for a CPU per timeslice beyond what the replay's own I/O threads waited, times the \
        share of the replay's calls that slept (only a call that sleeps waits to be woken: \
        a read from RAM-backed storage does not), shown as its own term; and the backends' \
        minor page faults per read are replayed (reads into shared memory with that share \
        of their pages unmapped).\n\n\
        The report opens with one answer: will this storage serve production's load at \
        production's latency? \"No: at 1.0x production's load, db file sequential read is \
        5.0x slower than production (254 µs against 47 µs)\", or \"Yes: serves production's \
        load up to 2.0x with every event within production's latency\". Production's \
        latency is its objectives: by default each event's mean no slower than \
        production's own, for the events with at least 30 I/Os in production's window and \
        in the step (fewer are named as too few to judge and decide nothing); --slo \
        CLASS=LATENCY[@pXX] sets a class's own. Exit code 3 when the answer is no (an \
        objective missed or production's rate not kept), 0 otherwise.\n\n\
        --scale 1,1.5,2,3 runs a ramp: the answer's \"up to\" is the largest scale at which \
        every step kept its rates and met its objectives; the headroom, the largest at \
        which every class kept its rate (within 2%) and its mean within 2x of its own at \
        1x, is the ramp's line.\n\n\
        The model can be saved (--save-model m.toml), edited, and run again (--model \
        m.toml). AWR prints no database size: the data set is --size (default 1 GiB); a \
        PostgreSQL or MySQL capture gives its data's size.\n\n\
        --slob-conf slob.conf takes SLOB 2.5's sessions, RUN_TIME, SCALE and hot spot; \
        the model decides the mix.\n\n\
        Examples:\n  dbio replay awrrpt_1_100_101.html --target /data/dbio --time 30s\n  \
        dbio replay awrrpt.txt --target nfs://filer/export/dbio?version=3 --scale 1,1.5,2,3 \
        --html replay.html\n  dbio replay awrrpt.txt --save-model m.toml --dry-run\n  \
        dbio pg capture 'host=db1 user=monitor' --time 10m --out prod.json\n  \
        dbio replay prod.json --target /data/dbio --time 60s --html replay.html"
)]
pub struct Args {
    #[command(flatten)]
    flags: RunFlags,
    /// The AWR report (awrrpt.sql output, text or HTML), a PostgreSQL capture (`dbio pg
    /// capture`) or a MySQL or MariaDB capture (`dbio mysql capture`)
    #[arg(
        value_name = "REPORT",
        required_unless_present = "model",
        conflicts_with = "model"
    )]
    report: Option<PathBuf>,
    /// Run this workload model (TOML, as --save-model writes it) instead of a report's
    #[arg(long, value_name = "FILE.toml")]
    model: Option<PathBuf>,
    /// Write the workload model to FILE as an editable TOML profile
    #[arg(long, value_name = "FILE.toml")]
    save_model: Option<PathBuf>,
    /// Show (and save) the model, run nothing
    #[arg(long)]
    dry_run: bool,
    /// Times production's rates, one step or a ramp: 1.5, or 1,1.5,2,3
    #[arg(long, value_name = "X[,X...]", value_delimiter = ',', default_value = "1", value_parser = scale_arg)]
    scale: Vec<f64>,
    /// How long each step runs
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration_arg)]
    time: Duration,
    /// I/O engine: io_uring, psync, null [default: the model's (psync for PostgreSQL),
    /// else io_uring]
    #[arg(long, value_name = "ENGINE", value_parser = engine_arg)]
    engine: Option<EngineKind>,
    /// Users the rates are spread over (sessions, one thread each) [default: the
    /// model's sessions, else 4]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    users: Option<u32>,
    /// How arrivals are spaced: poisson or fixed
    #[arg(long, value_name = "KIND", default_value = "poisson", value_parser = arrivals_arg)]
    arrivals: Arrivals,
    /// Data-set size (AWR reports do not give the database's)
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    size: Option<u64>,
    /// Read through a page cache of SIZE, as a server with that much page cache does
    /// (implies --buffered): dbio runs in a memory cgroup of its own whose limit is SIZE
    /// above its own memory, and drops the data set's pages before each step. The log
    /// (WAL) is written O_DIRECT and fdatasync'd, outside that cache. Needs root (or a
    /// delegated cgroup); local targets only [default: for a PostgreSQL capture that
    /// read through the page cache, the size the capture found, as root]
    /// Several sizes (--page-cache 256M,512M,1G) show a new host's memory as a ramp
    /// shows load: each size is run at the reference scale, the first judged.
    #[arg(long, value_name = "SIZE[,SIZE...]", value_delimiter = ',', value_parser = size_arg)]
    page_cache: Vec<u64>,
    /// Write the replay as JSON to FILE
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the replay as Markdown to FILE
    #[arg(long, value_name = "FILE")]
    md: Option<PathBuf>,
    /// Write the replay as one HTML page to FILE
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

fn scale_arg(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('x').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err(format!("{s:?} is not a scale (a number above 0, e.g. 1.5)")),
    }
}

fn arrivals_arg(s: &str) -> Result<Arrivals, String> {
    Arrivals::parse(s).ok_or_else(|| format!("unknown arrivals {s:?} (poisson or fixed)"))
}

/// The page cache the replay reads through: `--page-cache`, else production's where
/// its reads went through one and dbio can confine its own (root, a local target);
/// with what the report must say of it.
fn page_cache(model: &WorkloadModel, args: &Args) -> (Option<u64>, Option<String>) {
    let said = |bytes: u64, whose: &str| {
        format!(
            "reads: replayed through a page cache of {} ({whose}: dbio in a memory cgroup \
             whose limit is that above dbio's own memory, the data set's pages dropped \
             before each step); the log written O_DIRECT, then fdatasync'd, outside that \
             cache",
            format_size(bytes)
        )
    };
    if let Some(&bytes) = args.page_cache.first() {
        return (Some(bytes), Some(said(bytes, "--page-cache")));
    }
    if !model.data_buffered || args.flags.buffered {
        return (None, None);
    }
    let production = model.page_cache.as_ref().and_then(|p| p.bytes);
    let nfs = args
        .flags
        .target
        .as_ref()
        .is_some_and(|t| t.to_string_lossy().starts_with("nfs://"));
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    match production {
        Some(bytes) if !nfs && root => (Some(bytes), Some(said(bytes, "production's"))),
        Some(bytes) => (
            None,
            Some(format!(
                "reads: replayed O_DIRECT: production read through a page cache of {}, \
                 which dbio reproduces only {} (--page-cache SIZE)",
                format_size(bytes),
                if nfs { "on a local target" } else { "as root" }
            )),
        ),
        None => (
            None,
            Some(
                "reads: replayed O_DIRECT (no --page-cache, and production's page cache is \
                 not known): each goes to the device without the page cache's own cost per \
                 miss, which production's times include"
                    .into(),
            ),
        ),
    }
}

pub fn main(args: Args) -> anyhow::Result<i32> {
    let (mut model, histograms) =
        dbio_sources::source::model_from(args.report.as_deref(), args.model.as_deref())?;
    let (cache, cache_note) = page_cache(&model, &args);
    let engine = match (args.engine, model.engine.as_deref()) {
        (Some(e), _) => e,
        (None, Some(e)) => engine_arg(e).map_err(|e| anyhow::anyhow!("the model's engine: {e}"))?,
        (None, None) => EngineKind::IoUring,
    };
    let mut base = RunOptions {
        users: args.users.or(model.users).unwrap_or(4),
        outstanding: args.flags.outstanding.or(model.outstanding).unwrap_or(32),
        time: Some(args.time),
        warmup: args.flags.warmup,
        seed: args.flags.seed,
        direct: !(args.flags.buffered || cache.is_some()),
        // The log around the cache: in a memory cgroup the size of the cache,
        // reclaim waits on the writeback each fdatasync starts, and reads and
        // flushes stalled behind it for milliseconds that the server did not see.
        redo_direct: cache.is_some(),
        raw: false,
        arrivals: args.arrivals,
        size: args.size,
        block_size: u64::from(model.block_size),
        ..RunOptions::default()
    };
    if let Some(conf) = &args.flags.slob_conf {
        crate::slob_conf::apply_to_replay::<Args>(conf, &mut base, true)?;
    }
    let (size, size_from) = match (args.size, base.size, model.dataset_bytes) {
        (Some(s), _, _) => (s, "--size".to_string()),
        (None, Some(s), _) => (s, "SCALE of --slob-conf".to_string()),
        (None, None, Some(s)) => (
            s,
            model
                .dataset_source
                .clone()
                .unwrap_or_else(|| "the model".into()),
        ),
        (None, None, None) => (
            DEFAULT_SIZE,
            "dbio's default (AWR gives no database size; set --size)".into(),
        ),
    };
    base.size = Some(size);
    let step_time = base.time.unwrap_or(args.time);
    print!(
        "{}",
        dbio_report::replay::model_text(&model, &format!("{} ({size_from})", format_size(size)))
    );
    if let Some(path) = &args.save_model {
        dbio_report::write_atomic(path, model.to_toml().as_bytes())?;
        common::wrote(vec![path.clone()]);
    }
    // Every step is planned (and so checked) before anything is written.
    let mut plans = Vec::new();
    for &scale in &args.scale {
        plans.push((scale, replay_plan(&model, scale, &base)?));
    }
    if args.dry_run {
        return Ok(0);
    }
    model.dataset_bytes = Some(size);
    model.dataset_source = Some(size_from);
    let setup = args.flags.setup(engine, false, cache);
    if let Some(note) = cache_note {
        model.notes.push(note);
    }
    let name = args.flags.target_or_default();
    let mut runs = Vec::new();
    for (i, (scale, plan)) in plans.iter().enumerate() {
        eprintln!(
            "step {}/{}: {scale}x production for {:?}",
            i + 1,
            plans.len(),
            step_time
        );
        let m = measure(&setup, plan, &name, &mut |stopped| Ok(stopped))?;
        common::finishing();
        let stopped = m.before_start || m.result.interrupted;
        if !m.before_start {
            runs.push((*scale, m.result));
        }
        if let Some(e) = m.error {
            return Err(e.into());
        }
        if stopped {
            eprintln!("dbio: replay interrupted; reporting the steps measured");
            break;
        }
    }
    if runs.is_empty() {
        return Ok(common::EXIT_INTERRUPTED);
    }
    let steps: Vec<(f64, &dbio_stats::RunResult)> = runs.iter().map(|(s, r)| (*s, r)).collect();
    let mut replay = judge(&model, &histograms, &steps, &args.flags.slo);
    if let Some(p) = replay.page_cache.as_mut() {
        p.replay_bytes = cache;
    }
    // The other page-cache sizes, each at the reference scale.
    if args.page_cache.len() > 1 && !runs.iter().any(|(_, r)| r.interrupted) {
        let reference = replay.reference_scale;
        let plan = &plans
            .iter()
            .find(|(s, _)| *s == reference)
            .unwrap_or(&plans[0])
            .1;
        replay.memory.push(memory_step(&replay, args.page_cache[0]));
        for (i, &bytes) in args.page_cache.iter().enumerate().skip(1) {
            eprintln!(
                "page cache {}/{}: {} at {reference}x production for {:?}",
                i + 1,
                args.page_cache.len(),
                format_size(bytes),
                step_time
            );
            let setup = crate::run_flags::Setup {
                page_cache: Some(bytes),
                ..setup.clone()
            };
            let m = measure(&setup, plan, &name, &mut |stopped| Ok(stopped))?;
            common::finishing();
            if m.before_start {
                break;
            }
            let interrupted = m.result.interrupted;
            let mut one = judge(
                &model,
                &histograms,
                &[(reference, &m.result)],
                &args.flags.slo,
            );
            if let Some(p) = one.page_cache.as_mut() {
                p.replay_bytes = Some(bytes);
            }
            replay.memory.push(memory_step(&one, bytes));
            if let Some(e) = m.error {
                return Err(e.into());
            }
            if interrupted {
                eprintln!("dbio: replay interrupted; reporting the sizes measured");
                break;
            }
        }
    }
    print!("{}", dbio_report::replay::terminal(&replay));
    let mut wrote = Vec::new();
    let version = env!("CARGO_PKG_VERSION");
    for (path, text) in [
        (&args.json, dbio_report::replay::json(&replay)),
        (&args.md, dbio_report::replay::markdown(&replay)),
        (&args.html, dbio_report::replay::html(&replay, version)),
    ] {
        if let Some(p) = path {
            dbio_report::write_atomic(p, text.as_bytes())?;
            wrote.push(p.clone());
        }
    }
    common::wrote(wrote);
    if runs.iter().any(|(_, r)| r.interrupted) {
        return Ok(common::EXIT_INTERRUPTED);
    }
    Ok(replay
        .answer
        .map_or(dbio_stats::slo::exit_code(&replay.slo), Answer::exit_code))
}
