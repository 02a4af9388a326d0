//! Planning a run: from the options a user gives (profile, then overrides)
//! to a checked plan, before anything is opened or written; then from the
//! plan, the opened data set and the engine to a [`RunSpec`].

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dbio_engine::EngineKind;
use dbio_stats::{RunConfig, RunResult, FORMAT_VERSION, RUN_KIND};
use dbio_workload::units::format_size;
use dbio_workload::verify::GenMap;
use dbio_workload::{
    Arrivals, Dataset, DatasetSpec, Generator, GeneratorError, Hotspot, IoClass, Layout, Profile,
    Rates, RedoFlush, RedoStress, Think, WorkloadConfig,
};

use crate::{ExperimentError, OpenLoop, RunSpec};

/// Run time when neither a time nor a number of loops is given (SLOB's
/// RUN_TIME is of that order).
pub const DEFAULT_TIME: Duration = Duration::from_secs(30);
/// Data-set size when neither a size nor a scale is given.
pub const DEFAULT_SIZE: u64 = 1 << 30;

/// What the user asked for, option by option (`None`: the profile's or
/// the default value). Names follow `dbio run`'s options.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub profile: Option<Profile>,
    /// Classes replacing the profile's; empty: the profile's.
    pub classes: Vec<IoClass>,
    pub update_pct: Option<u32>,
    pub scan_pct: Option<u32>,
    pub redo_stress: Option<RedoStress>,
    /// How redo writes are made durable (`--redo-flush`).
    pub redo_flush: RedoFlush,
    /// The redo log through the page cache (`--redo-buffered`).
    pub redo_buffered: bool,
    /// The redo log with O_DIRECT while the data files go through the page cache
    /// (a replay's `--page-cache`).
    pub redo_direct: bool,
    /// Size of a multiblock read; None: the profile's (1 MiB). A slob.conf's
    /// SCAN_TABLE_SZ sets it.
    pub multiblock_bytes: Option<u32>,
    /// Hot spot in MiB (0: none), its offset in MiB, every Nth operation.
    pub hotspot_mb: u64,
    pub hotspot_offset_mb: u64,
    pub hotspot_frequency: u32,
    /// Think time; only used with a frequency above 0.
    pub think_min: Duration,
    pub think_max: Duration,
    pub think_frequency: u32,
    pub block_size: u64,
    /// Data-set size, or size per user (`scale`).
    pub size: Option<u64>,
    pub scale: Option<u64>,
    pub users: u32,
    pub outstanding: u32,
    pub time: Option<Duration>,
    /// Load before the measurement starts (not recorded, not in --time).
    pub warmup: Duration,
    pub loops: Option<u64>,
    pub seed: Option<u64>,
    /// O_DIRECT (not `--buffered`).
    pub direct: bool,
    pub verify: bool,
    pub verify_sync: bool,
    /// Keep the recorder's raw form in the result (not `--no-raw`).
    pub raw: bool,
    /// Open loop: I/Os per second asked (`--rate`); None: a closed loop.
    pub rate: Option<Rates>,
    pub arrivals: Arrivals,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            profile: None,
            classes: Vec::new(),
            update_pct: None,
            scan_pct: None,
            redo_stress: None,
            redo_flush: RedoFlush::Dsync,
            redo_buffered: false,
            redo_direct: false,
            multiblock_bytes: None,
            hotspot_mb: 0,
            hotspot_offset_mb: 0,
            hotspot_frequency: 3,
            think_min: Duration::from_millis(100),
            think_max: Duration::from_millis(500),
            think_frequency: 0,
            block_size: 8192,
            size: None,
            scale: None,
            users: 1,
            outstanding: 1,
            time: None,
            warmup: Duration::ZERO,
            loops: None,
            seed: None,
            direct: true,
            verify: false,
            verify_sync: false,
            raw: true,
            rate: None,
            arrivals: Arrivals::default(),
        }
    }
}

/// A checked run, waiting for its data set and engine.
#[derive(Clone, Debug)]
pub struct RunPlan {
    /// Profile name, or "custom" when only classes were given.
    pub profile: String,
    pub workload: WorkloadConfig,
    pub dataset: DatasetSpec,
    pub users: u32,
    pub outstanding: u32,
    pub time: Option<Duration>,
    pub warmup: Duration,
    pub loops: Option<u64>,
    pub seed: u64,
    pub direct: bool,
    pub verify: bool,
    pub verify_sync: bool,
    pub raw: bool,
    pub open_loop: Option<OpenLoop>,
    /// Count which synchronous calls slept (a replay whose model adds a CPU wait).
    pub count_sleeps: bool,
}

impl RunPlan {
    /// Applies the options over the profile and checks everything that can
    /// be checked before the target is opened: a bad option fails before
    /// anything is written.
    pub fn new(o: &RunOptions) -> Result<RunPlan, ExperimentError> {
        let bad = |s: String| ExperimentError::Config(s);
        if o.time.is_some_and(|t| t.is_zero()) {
            return Err(bad("--time must be longer than zero".into()));
        }
        let block_size = u32::try_from(o.block_size)
            .ok()
            .filter(|b| b.is_power_of_two() && (2048..=32768).contains(b))
            .ok_or_else(|| {
                bad(format!(
                    "--block-size {}: must be a power of two from 2k to 32k",
                    o.block_size
                ))
            })?;
        let mut workload = o.profile.unwrap_or(Profile::Oltp).config(block_size);
        if !o.classes.is_empty() {
            let mut classes = o.classes.clone();
            classes.sort();
            classes.dedup();
            workload.classes = classes;
        }
        workload.update_pct = o.update_pct.unwrap_or(workload.update_pct);
        workload.scan_pct = o.scan_pct.unwrap_or(workload.scan_pct);
        workload.redo_stress = o.redo_stress.unwrap_or(workload.redo_stress);
        workload.redo_flush = o.redo_flush;
        workload.redo_buffered = o.redo_buffered && !o.redo_direct;
        workload.redo_direct = o.redo_direct;
        workload.multiblock_bytes = o.multiblock_bytes.unwrap_or(workload.multiblock_bytes);
        if o.hotspot_mb > 0 {
            workload.hotspot = Some(Hotspot {
                offset: o.hotspot_offset_mb << 20,
                size: o.hotspot_mb << 20,
                frequency: o.hotspot_frequency,
            });
        }
        if let Some(rates) = o.rate.as_ref().filter(|r| !r.is_total()) {
            // A rate per class says which classes run.
            let named: Vec<IoClass> = rates.classes().map(|(c, _)| c).collect();
            if let Some(c) = named
                .iter()
                .find(|c| !o.classes.is_empty() && !o.classes.contains(c))
            {
                return Err(bad(format!(
                    "--rate gives {} a rate, but --workload leaves it out",
                    c.name()
                )));
            }
            workload.classes = named;
        }
        if o.rate.is_some() && o.think_frequency > 0 {
            return Err(bad(
                "--think-frequency and --rate: think times pace a closed loop; \
                 with a rate, arrivals are paced by it"
                    .into(),
            ));
        }
        if o.think_frequency > 0 {
            if o.think_min > o.think_max {
                return Err(bad(format!(
                    "--think-min {:?} is above --think-max {:?}",
                    o.think_min, o.think_max
                )));
            }
            workload.think = Some(Think {
                min: o.think_min,
                max: o.think_max,
                frequency: o.think_frequency,
            });
        }
        let size = match (o.size, o.scale) {
            (Some(s), _) => s,
            (None, Some(per_user)) => per_user.saturating_mul(u64::from(o.users)),
            (None, None) => DEFAULT_SIZE,
        };
        let dataset =
            DatasetSpec::new(size, block_size).map_err(|e| bad(format!("--size: {e}")))?;
        // The generator would refuse a hot spot outside the data later, after
        // the data set was written: ask it now.
        let planned = Dataset::planned(Path::new(""), &dataset);
        Generator::new(&workload, &Layout::of(&planned), 0, 1, 0).map_err(|e| match e {
            GeneratorError::Hotspot { data, .. } => bad(format!(
                "--hotspot-mb {} at --hotspot-offset-mb {} lies outside the {} of data",
                o.hotspot_mb,
                o.hotspot_offset_mb,
                format_size(data)
            )),
            e => ExperimentError::Workload(e),
        })?;
        let profile = match (o.profile, o.classes.is_empty()) {
            (None, false) => "custom".to_string(),
            (p, _) => p.unwrap_or(Profile::Oltp).name().to_string(),
        };
        Ok(RunPlan {
            profile,
            workload,
            dataset,
            users: o.users,
            outstanding: o.outstanding,
            time: match (o.time, o.loops) {
                (None, None) => Some(DEFAULT_TIME),
                (t, _) => t,
            },
            warmup: o.warmup,
            loops: o.loops,
            seed: o.seed.unwrap_or_else(seed_from_clock),
            direct: o.direct,
            verify: o.verify,
            verify_sync: o.verify_sync,
            raw: o.raw,
            open_loop: o.rate.clone().map(|rates| OpenLoop {
                rates,
                arrivals: o.arrivals,
            }),
            count_sleeps: false,
        })
    }

    /// The run on an opened data set with its engine and, in verify mode,
    /// its generation map.
    pub fn spec(
        &self,
        target: &str,
        dataset: Dataset,
        engine: EngineKind,
        verify: Option<Arc<GenMap>>,
    ) -> RunSpec {
        RunSpec {
            target: target.to_string(),
            dataset,
            engine,
            profile: self.profile.clone(),
            workload: self.workload.clone(),
            users: self.users,
            outstanding: self.outstanding,
            direct: self.direct,
            time: self.time,
            warmup: self.warmup,
            loops: self.loops,
            seed: self.seed,
            verify,
            verify_sync: self.verify_sync,
            on_final_pass: None,
            raw: self.raw,
            open_loop: self.open_loop.clone(),
            on_window: None,
            count_sleeps: self.count_sleeps,
        }
    }

    /// The result of this run when it was stopped before its first I/O
    /// (while its data set was being created or made verifiable): empty,
    /// marked interrupted.
    pub fn interrupted_result(&self, target: &str, engine: EngineKind) -> RunResult {
        RunResult {
            kind: RUN_KIND.into(),
            format_version: FORMAT_VERSION,
            dbio_version: env!("CARGO_PKG_VERSION").into(),
            started_unix: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
            interrupted: true,
            stop_reason: Some("interrupted by signal while preparing the data set".into()),
            config: RunConfig {
                target: target.into(),
                engine: engine.name().into(),
                profile: self.profile.clone(),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

fn seed_from_clock() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_override_the_profile_and_are_checked_first() {
        let o = RunOptions {
            profile: Some(Profile::Oltp),
            update_pct: Some(50),
            scale: Some(64 << 20),
            users: 4,
            ..RunOptions::default()
        };
        let p = RunPlan::new(&o).unwrap();
        assert_eq!(p.profile, "oltp");
        assert_eq!(p.workload.update_pct, 50);
        assert_eq!(p.dataset, DatasetSpec::new(256 << 20, 8192).unwrap());
        assert_eq!(p.time, Some(DEFAULT_TIME));

        let custom = RunOptions {
            classes: vec![IoClass::RedoWrite, IoClass::RedoWrite],
            loops: Some(10),
            ..RunOptions::default()
        };
        let p = RunPlan::new(&custom).unwrap();
        assert_eq!(p.profile, "custom");
        assert_eq!(p.workload.classes, vec![IoClass::RedoWrite]);
        assert_eq!(p.time, None);

        let err = |o: RunOptions| RunPlan::new(&o).unwrap_err().to_string();
        assert_eq!(
            err(RunOptions {
                block_size: 3000,
                ..RunOptions::default()
            }),
            "--block-size 3000: must be a power of two from 2k to 32k"
        );
        assert_eq!(
            err(RunOptions {
                size: Some(64 << 20),
                hotspot_mb: 128,
                ..RunOptions::default()
            }),
            "--hotspot-mb 128 at --hotspot-offset-mb 0 lies outside the 64.0 MiB of data"
        );
        assert!(err(RunOptions {
            think_frequency: 2,
            think_min: Duration::from_secs(2),
            think_max: Duration::from_secs(1),
            ..RunOptions::default()
        })
        .starts_with("--think-min 2s is above --think-max 1s"));
    }

    #[test]
    fn redo_flush_and_buffering_reach_the_redo_writes() {
        let p = RunPlan::new(&RunOptions::default()).unwrap();
        assert_eq!(p.workload.redo_flush, RedoFlush::Dsync);
        assert!(!p.workload.redo_buffered);
        let o = RunOptions {
            profile: Some(Profile::Redo),
            redo_flush: RedoFlush::Fdatasync,
            redo_buffered: true,
            ..RunOptions::default()
        };
        let p = RunPlan::new(&o).unwrap();
        assert_eq!(p.workload.redo_flush, RedoFlush::Fdatasync);
        assert!(p.workload.redo_buffered);
        let planned = Dataset::planned(Path::new("/x"), &p.dataset);
        let mut g = Generator::new(&p.workload, &Layout::of(&planned), 0, 1, 3).unwrap();
        let op = g.next_op();
        assert_eq!(op.class, IoClass::RedoWrite);
        assert_eq!(op.durability, dbio_engine::Durability::Fdatasync);
        let files = planned.run_files(&p.workload);
        let buffered: Vec<_> = files.iter().filter(|f| f.buffered).collect();
        assert_eq!(buffered.len(), 1, "only the redo log: {files:?}");
        assert!(buffered[0].path.ends_with("dbio-redo-01.log"));
        assert!(files.iter().all(|f| !f.direct));
        // A run through the page cache with its log around it: the log alone O_DIRECT.
        let p = RunPlan::new(&RunOptions {
            direct: false,
            redo_direct: true,
            ..o
        })
        .unwrap();
        let files = planned.run_files(&p.workload);
        let direct: Vec<_> = files.iter().filter(|f| f.direct).collect();
        assert_eq!(direct.len(), 1, "only the redo log: {files:?}");
        assert!(direct[0].path.ends_with("dbio-redo-01.log") && !direct[0].buffered);
    }
}
