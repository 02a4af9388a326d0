//! Verify mode on healthy storage finds nothing wrong, on every engine that
//! moves data, and the final pass checks every block.

mod support;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dbio_engine::EngineKind;
use dbio_experiment::{run, RunSpec};
use dbio_workload::verify::GenMap;
use dbio_workload::Profile;
use support::small_dataset;

fn verified_run(engine: EngineKind, verify_sync: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let ds = small_dataset(tmp.path());
    let map = Arc::new(
        GenMap::open(&ds)
            .unwrap()
            .expect("fresh data set has a map"),
    );
    // Update-heavy on a small data set: blocks are rewritten many times and
    // read while other users write them.
    let mut workload = Profile::Mixed.config(8192);
    workload.update_pct = 60;
    let spec = RunSpec {
        warmup: std::time::Duration::ZERO,
        profile: "mixed".into(),
        users: 3,
        loops: Some(3000),
        seed: 7,
        verify: Some(map.clone()),
        verify_sync,
        ..support::spec(ds.clone(), engine, workload)
    };
    let out = run(&spec, &AtomicBool::new(false), None).unwrap();
    assert!(out.error.is_none());
    let v = out.result.verify.expect("verify summary");
    assert_eq!(
        (v.lost, v.torn, v.misdirected, v.checksum),
        (0, 0, 0, 0),
        "{v:?}"
    );
    assert!(v.final_pass_complete);
    // Data blocks after the header, plus redo sectors after the header.
    let want: u64 = ds
        .files
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let (units, us) = map.units(i as u32);
            units - ds.header_len() / u64::from(us)
        })
        .sum();
    assert_eq!(v.final_pass_blocks, want);
    assert!(
        v.blocks_checked > want,
        "reads of the run checked blocks too"
    );
    // The writes moved generations on.
    let moved = (0..map.units(0).0).filter(|&u| map.get(0, u) > 0).count();
    assert!(moved > 100, "only {moved} blocks rewritten");
}

#[test]
fn healthy_psync_run_verifies_clean() {
    verified_run(EngineKind::Psync, false);
}

#[test]
fn healthy_io_uring_run_verifies_clean() {
    verified_run(EngineKind::IoUring, false);
}

#[test]
fn journal_flushed_before_each_batch_verifies_clean() {
    verified_run(EngineKind::IoUring, true);
    verified_run(EngineKind::Psync, true);
}
