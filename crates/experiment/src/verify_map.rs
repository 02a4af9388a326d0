//! The verify policy of a run: which generation map it needs, and what
//! must happen to the data set before its first I/O.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dbio_engine::EngineKind;
use dbio_workload::dataset::{reformat, write_content};
use dbio_workload::verify::{GenMap, MapError, VerifyCounts, MAP_NAME};
use dbio_workload::verify_scan::{scan, ScanOptions};
use dbio_workload::{Dataset, PrepareOptions};

use crate::ExperimentError;

/// The generation map of a run on `ds`: `None` when the run does not
/// verify. Content whose generations are not known (a data set written
/// without `--verify`) is rewritten first; a map left by a run that was
/// killed is settled by a pass over every block. A run that writes without
/// verifying makes the map's generations unknown, so it forgets the map.
/// `progress(place, done, total)` follows a rewrite.
pub fn prepare_map(
    ds: &Dataset,
    engine: EngineKind,
    direct: bool,
    verify: bool,
    writes: bool,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Path, u64, u64),
) -> Result<Option<Arc<GenMap>>, ExperimentError> {
    let local = ds.backend.is_none();
    if !verify {
        if writes && local && engine != EngineKind::Null {
            GenMap::forget(&ds.dir)?;
        }
        return Ok(None);
    }
    if engine == EngineKind::Null {
        return Err(ExperimentError::Config(
            "--verify: the null engine moves no data; use io_uring or psync".into(),
        ));
    }
    let opts = PrepareOptions {
        engine,
        direct,
        force_overwrite: false,
    };
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
            if counts.faults() > 0 {
                return Err(ExperimentError::Config(format!(
                    "{}: the data set does not verify ({} bad blocks); see `dbio verify {}`",
                    ds.dir.display(),
                    counts.faults(),
                    ds.dir.display()
                )));
            }
            map
        }
        None => reformat(ds, &opts, stop, &mut |d, t| progress(&ds.dir, d, t))?,
    };
    Ok(Some(Arc::new(map)))
}

/// What a check of a whole data set found.
#[derive(Debug)]
pub struct Check {
    pub counts: VerifyCounts,
    /// Every block was read (false when `stop` ended the pass).
    pub complete: bool,
    /// Write generations were checked against a map kept between runs
    /// (local data sets); otherwise only each block's own consistency.
    pub generations: bool,
}

/// Reads back every block of a data set written with `--verify` (`dbio
/// verify`). A local data set is checked against the map kept beside it
/// (blocks whose write was in flight when dbio stopped may hold either
/// generation, and the map is settled); storage reached through a backend
/// keeps no map between runs, so there each block's checksum, position and
/// sectors are checked, not its generation.
pub fn check(
    ds: &Dataset,
    engine: EngineKind,
    direct: bool,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Check, ExperimentError> {
    let local = ds.backend.is_none();
    let map = if local {
        let map = local_map(ds)?;
        map.let_crash_settle();
        map
    } else {
        GenMap::in_memory(ds)?
    };
    let opts = ScanOptions {
        engine,
        direct,
        settle: local,
        any_generation: !local,
    };
    let (counts, complete) = scan(ds, &map, &opts, stop, progress)?;
    map.flush()?;
    Ok(Check {
        counts,
        complete,
        generations: local,
    })
}

/// The local data set's files as the manifest lists them, and its map.
fn local_map(ds: &Dataset) -> Result<GenMap, ExperimentError> {
    for f in ds.engine_files() {
        let meta = std::fs::metadata(&f.path).map_err(|e| {
            ExperimentError::Config(format!("{}: data-set file missing: {e}", f.path.display()))
        })?;
        if meta.len() != f.size {
            return Err(ExperimentError::Config(format!(
                "{}: size {} bytes, the manifest says {}",
                f.path.display(),
                meta.len(),
                f.size
            )));
        }
    }
    let map = GenMap::open_checked(ds).map_err(|e| match e {
        MapError::Corrupt { .. } => ExperimentError::Config(format!(
            "{e}: what its blocks should hold is not known; `dbio run --verify --target {}` \
             writes the data set's content and its map again",
            ds.dir.display()
        )),
        e => e.into(),
    })?;
    map.ok_or_else(|| {
        ExperimentError::Config(format!(
            "{}: no verify map ({MAP_NAME}) for data set {:016x}: it was last written without \
             --verify, so what its blocks should hold is not known",
            ds.dir.display(),
            ds.id
        ))
    })
}
