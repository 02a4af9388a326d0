//! `dbio run --verify`: the generation map a verified run needs, and the
//! results file of a run interrupted before it started.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dbio_engine::EngineKind;
use dbio_stats::{RunConfig, RunResult, FORMAT_VERSION, RUN_KIND};
use dbio_workload::dataset::{reformat, write_content};
use dbio_workload::verify::GenMap;
use dbio_workload::verify_scan::{scan, ScanOptions};
use dbio_workload::{Dataset, DatasetError, PrepareOptions};

use crate::common::EXIT_INTERRUPTED;

/// The map of a verify run on `ds`, and the map forgotten by a write run
/// without verification (its generations become unknown). `None` when the
/// run does not verify. Content whose generations are not known (a data set
/// written without `--verify`) is rewritten first; a map left by a run that
/// was killed is settled by a pass over every block.
pub fn prepare(
    ds: &Dataset,
    engine: EngineKind,
    direct: bool,
    verify: bool,
    writes: bool,
    stop: &AtomicBool,
) -> anyhow::Result<Option<Arc<GenMap>>> {
    let local = ds.backend.is_none();
    if !verify {
        if writes && local && engine != EngineKind::Null {
            GenMap::forget(&ds.dir)?;
        }
        return Ok(None);
    }
    anyhow::ensure!(
        engine != EngineKind::Null,
        "--verify: the null engine moves no data; use io_uring or psync"
    );
    let opts = PrepareOptions {
        engine,
        direct,
        force_overwrite: false,
    };
    let mut progress = progress_line("writing verifiable content to");
    if !local {
        // Storage reached through a backend keeps no map between runs: a
        // reused data set is rewritten at generation 0 first.
        let map = GenMap::in_memory(ds)?;
        if !ds.created {
            write_content(ds, &opts, stop, &mut |d, t| progress(&ds.dir, d, t))?;
        }
        return Ok(Some(Arc::new(map)));
    }
    let map = match GenMap::open(ds)? {
        Some(map) if !map.any_in_flight() => map,
        Some(map) => {
            // A run killed with writes in flight: find which generation
            // each of those blocks holds before writing again.
            map.let_crash_settle();
            let opts = ScanOptions {
                engine,
                direct,
                settle: true,
                any_generation: false,
            };
            let (counts, _) = scan(ds, &map, &opts, stop, &mut |_, _| {})?;
            anyhow::ensure!(
                counts.faults() == 0,
                "{}: the data set does not verify ({} bad blocks); see `dbio verify {}`",
                ds.dir.display(),
                counts.faults(),
                ds.dir.display()
            );
            map
        }
        None => reformat(ds, &opts, stop, &mut |d, t| progress(&ds.dir, d, t))?,
    };
    Ok(Some(Arc::new(map)))
}

/// True when `e` is an interruption of data-set preparation.
pub fn is_interrupted(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<DatasetError>(),
        Some(DatasetError::Interrupted)
    )
}

fn progress_line(what: &'static str) -> impl FnMut(&Path, u64, u64) {
    let tty = std::io::stderr().is_terminal();
    let mut announced = false;
    let mut last = 0u64;
    move |dir, done, total| {
        if !announced {
            eprintln!("{what} {}", dir.display());
            announced = true;
        }
        let pct = done * 100 / total.max(1);
        if tty && pct != last {
            last = pct;
            eprint!("\r\x1b[K  {pct:>3}%");
            if done == total {
                eprintln!();
            }
        }
    }
}

/// The results of a run stopped before its first I/O (while the data set
/// was being created or made verifiable): empty, marked interrupted.
pub fn interrupted_result(target: &str, engine: EngineKind, profile: &str) -> RunResult {
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    RunResult {
        kind: RUN_KIND.into(),
        format_version: FORMAT_VERSION,
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        started_unix,
        interrupted: true,
        stop_reason: Some("interrupted by signal while preparing the data set".into()),
        config: RunConfig {
            target: target.into(),
            engine: engine.name().into(),
            profile: profile.into(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Exit code of a run interrupted before it started, after its partial
/// results were written.
pub fn exit_interrupted(
    target: &str,
    engine: EngineKind,
    profile: &str,
    outputs: &dbio_report::Outputs,
) -> anyhow::Result<i32> {
    eprintln!(
        "dbio: interrupted while preparing the data set; it will be prepared again next time"
    );
    let result = dbio_report::AnyResult::Run(interrupted_result(target, engine, profile));
    dbio_report::write_outputs(&result, outputs)?;
    Ok(EXIT_INTERRUPTED)
}
