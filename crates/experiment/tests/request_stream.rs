//! Each level of calibrate's IOPS curve is the I/O of `dbio run` at that
//! load: the same requests, in the same order, for the same seed.

use std::path::Path;
use std::time::Duration;

use dbio_engine::EngineKind;
use dbio_experiment::{level_requests, run_requests, CalibrateSpec, RunOptions, RunPlan};
use dbio_workload::{Dataset, DatasetSpec, FileKind, IoClass};

const PER_USER: usize = 20_000;

fn dataset() -> Dataset {
    let spec = DatasetSpec::new(1 << 30, 8192).expect("a 1 GiB data set");
    Dataset::planned(Path::new("/nonexistent/dbio-ds"), &spec)
}

fn calibration(engine: EngineKind, seed: u64) -> CalibrateSpec {
    CalibrateSpec {
        target: "ds".into(),
        dataset: dataset(),
        engine,
        direct: true,
        max_latency_us: 20_000.0,
        max_outstanding: 256,
        time: Duration::from_secs(25),
        cores: 2,
        seed,
        machine: None,
    }
}

/// `dbio run --workload single-block-read --engine E --users U
/// --outstanding O --seed S` on the same data set.
fn run(engine: EngineKind, users: u32, outstanding: u32, seed: u64) -> dbio_experiment::Requests {
    let options = RunOptions {
        classes: vec![IoClass::SingleBlockRead],
        users,
        outstanding,
        seed: Some(seed),
        time: Some(Duration::from_secs(25)),
        ..Default::default()
    };
    let plan = RunPlan::new(&options).expect("a valid run");
    let spec = plan.spec("ds", dataset(), engine, None);
    run_requests(&spec, PER_USER).expect("the run's requests")
}

#[test]
fn each_iops_level_issues_the_requests_of_dbio_run_at_that_depth() {
    let seed = 0x5eed;
    let cal = calibration(EngineKind::IoUring, seed);
    for depth in [1, 4, 16, 32, 64, 128, 256] {
        let level = level_requests(&cal, depth, PER_USER).expect("the level's requests");
        assert_eq!(level.users, 1, "depth {depth}: one thread");
        assert_eq!(level.outstanding, depth);
        assert_eq!(
            level,
            run(EngineKind::IoUring, 1, depth, seed),
            "depth {depth}"
        );
    }
}

#[test]
fn a_synchronous_engine_s_level_is_a_run_with_that_many_users() {
    let cal = calibration(EngineKind::Psync, 7);
    let level = level_requests(&cal, 2, PER_USER).expect("the level's requests");
    assert_eq!(level, run(EngineKind::Psync, 2, 1, 7));
}

#[test]
fn the_streams_differ_with_the_seed_and_cover_the_data_set() {
    // The comparison above means something only if a different seed or
    // depth would be seen: the stream depends on the seed, and its reads
    // spread over every data file.
    let cal = calibration(EngineKind::IoUring, 1);
    let a = level_requests(&cal, 32, PER_USER).unwrap();
    assert_ne!(a, run(EngineKind::IoUring, 1, 32, 2));
    assert_ne!(a, run(EngineKind::IoUring, 1, 64, 1));
    let data_files = dataset()
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Data)
        .count();
    let mut seen = vec![false; dataset().files.len()];
    for op in &a.ops[0] {
        assert_eq!(op.len, 8192);
        assert_eq!(op.offset % 8192, 0);
        seen[op.file as usize] = true;
    }
    assert_eq!(seen.iter().filter(|&&s| s).count(), data_files);
}
