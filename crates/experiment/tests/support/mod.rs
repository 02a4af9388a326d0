//! What the experiment tests share: a small prepared data set and a run
//! spec over it.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use dbio_engine::EngineKind;
use dbio_experiment::RunSpec;
use dbio_workload::dataset::prepare;
use dbio_workload::{Dataset, DatasetSpec, PrepareOptions, WorkloadConfig};

/// An 8 MiB data set in `dir`, written with psync through the page cache.
pub fn small_dataset(dir: &Path) -> Dataset {
    let opts = PrepareOptions {
        engine: EngineKind::Psync,
        direct: false,
        force_overwrite: false,
    };
    let spec = DatasetSpec::new(8 << 20, 8192).unwrap();
    prepare(dir, &spec, &opts, &AtomicBool::new(false), &mut |_, _| {}).unwrap()
}

/// 2 users x 4 outstanding, 1000 loops each, through the page cache.
pub fn spec(ds: Dataset, engine: EngineKind, workload: WorkloadConfig) -> RunSpec {
    RunSpec {
        warmup: std::time::Duration::ZERO,
        target: ds.dir.display().to_string(),
        dataset: ds,
        engine,
        profile: "custom".into(),
        workload,
        users: 2,
        outstanding: 4,
        direct: false,
        time: None,
        loops: Some(1000),
        seed: 1,
        verify: None,
        on_final_pass: None,
        verify_sync: false,
        raw: true,
        open_loop: None,
        on_window: None,
        count_sleeps: false,
    }
}
