mod support;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use dbio_engine::EngineKind;
use dbio_experiment::{calibrate, run, CalibrateSpec};
use dbio_workload::{Dataset, DatasetSpec, Profile, RedoFlush, WorkloadConfig};
use support::{small_dataset, spec};

#[test]
fn loops_count_every_io_of_every_user() {
    let ds = Dataset::planned(
        Path::new("/nowhere"),
        &DatasetSpec::new(64 << 20, 8192).unwrap(),
    );
    let s = spec(ds, EngineKind::Null, Profile::Mixed.config(8192));
    let out = run(&s, &AtomicBool::new(false), None).unwrap();
    let r = out.result;
    assert!(out.error.is_none());
    assert_eq!(r.ios, 2000);
    assert!(!r.interrupted);
    assert_eq!(r.classes.iter().map(|c| c.ios).sum::<u64>(), 2000);
    assert!(r.classes.len() >= 3, "mixed profile used several classes");
    assert_eq!(
        r.files.iter().map(|f| f.reads + f.writes).sum::<u64>(),
        2000
    );
}

#[test]
fn runs_carry_their_raw_recorder_and_merge_exactly() {
    let ds = Dataset::planned(
        Path::new("/nowhere"),
        &DatasetSpec::new(64 << 20, 8192).unwrap(),
    );
    let s = spec(ds, EngineKind::Null, Profile::Mixed.config(8192));
    let stop = AtomicBool::new(false);
    let a = run(&s, &stop, None).unwrap().result;
    let raw = a.raw.as_ref().expect("raw form by default");
    assert_eq!(raw.ios(), a.ios);
    let b = run(&s, &stop, None).unwrap().result;
    let m = dbio_stats::merge_runs(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(m.ios, a.ios + b.ios);
    for c in &m.classes {
        let part = |r: &dbio_stats::RunResult| {
            r.classes
                .iter()
                .find(|x| x.class == c.class)
                .map_or(0, |x| x.ios)
        };
        assert_eq!(c.ios, part(&a) + part(&b));
    }
    let same = dbio_stats::merge_runs(std::slice::from_ref(&a)).unwrap();
    assert_eq!(same.classes, a.classes, "one run merges into itself");

    let without = run(&dbio_experiment::RunSpec { raw: false, ..s }, &stop, None)
        .unwrap()
        .result;
    assert!(without.raw.is_none());
}

#[test]
fn timed_run_on_real_files_stops_on_time() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = small_dataset(tmp.path());
    let mut s = spec(ds, EngineKind::Psync, Profile::Oltp.config(8192));
    s.loops = None;
    s.time = Some(Duration::from_millis(300));
    let t = Instant::now();
    let out = run(&s, &AtomicBool::new(false), None).unwrap();
    assert!(out.error.is_none(), "{:?}", out.error);
    assert!(t.elapsed() < Duration::from_secs(3));
    let r = out.result;
    assert!(r.ios > 0 && r.elapsed_s >= 0.3);
    assert_eq!(r.config.outstanding, 1, "psync runs one I/O at a time");
    let names: Vec<&str> = r.classes.iter().map(|c| c.class.as_str()).collect();
    assert!(
        names.contains(&"single-block-read") && names.contains(&"redo-write"),
        "{names:?}"
    );
}

#[test]
fn stop_flag_ends_a_run_and_marks_it() {
    let ds = Dataset::planned(
        Path::new("/nowhere"),
        &DatasetSpec::new(64 << 20, 8192).unwrap(),
    );
    let mut s = spec(ds, EngineKind::Null, WorkloadConfig::new(8192));
    s.loops = None;
    s.time = Some(Duration::from_secs(60));
    let stop = AtomicBool::new(false);
    let t = Instant::now();
    let out = std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        run(&s, &stop, None).unwrap()
    });
    assert!(t.elapsed() < Duration::from_secs(2));
    assert!(out.result.interrupted);
    assert!(out.result.ios > 0);
}

/// A host whose CPU is 1% idle; counts the window edges it was told of.
struct NoIdle(std::sync::atomic::AtomicU32);

impl dbio_experiment::MachineIdle for NoIdle {
    fn edge(&self, _start: bool) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn idle_pct(&self) -> Option<f64> {
        Some(1.0)
    }
}

#[test]
fn calibrate_records_points_in_order_and_max_within_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = small_dataset(tmp.path());
    let edges = std::sync::Arc::new(NoIdle(Default::default()));
    let spec = CalibrateSpec {
        target: "t".into(),
        dataset: ds,
        engine: EngineKind::IoUring,
        direct: false,
        max_latency_us: 20_000.0,
        max_outstanding: 4,
        time: Duration::from_secs(4),
        cores: 2,
        seed: 1,
        machine: Some(edges.clone()),
    };
    let r = calibrate(&spec, &AtomicBool::new(false), None).unwrap();
    assert!(!r.iops_curve.is_empty() && !r.mbps_curve.is_empty());
    // Every level read the host's idle share at both edges of its window, and
    // a host with none left is named as what may have set the figures.
    let levels = r.iops_curve.len() + r.mbps_curve.len();
    assert_eq!(
        edges.0.load(std::sync::atomic::Ordering::Relaxed) as usize,
        2 * levels
    );
    assert!(r.iops_curve.iter().all(|p| p.machine_idle_pct == Some(1.0)));
    let limit = r.host_limit.as_deref().unwrap_or_default();
    assert!(
        limit.contains("at max_iops's load") && limit.contains("the machine was"),
        "{limit}"
    );
    for w in r.iops_curve.windows(2) {
        assert!(w[0].outstanding < w[1].outstanding);
    }
    let at = r.iops_curve.iter().find(|p| p.iops == r.max_iops).unwrap();
    assert!(at.within_cap && at.mean_us <= r.max_latency_us);
    assert_eq!(at.outstanding, r.max_iops_outstanding);
    assert_eq!(r.latency_us, at.mean_us);
    assert!(r.max_mbps > 0.0);
    assert!(r.elapsed_s <= 4.5);
}

#[test]
fn think_time_paces_a_user() {
    let ds = Dataset::planned(
        Path::new("/nowhere"),
        &DatasetSpec::new(64 << 20, 8192).unwrap(),
    );
    let mut w = WorkloadConfig::new(8192);
    w.think = Some(dbio_workload::Think {
        min: Duration::from_millis(10),
        max: Duration::from_millis(10),
        frequency: 1,
    });
    let mut s = spec(ds, EngineKind::Null, w);
    s.users = 1;
    s.loops = Some(20);
    let t = Instant::now();
    let out = run(&s, &AtomicBool::new(false), None).unwrap();
    assert_eq!(out.result.ios, 20);
    // Twenty 10 ms thinks, one before each I/O.
    assert!(
        t.elapsed() >= Duration::from_millis(190),
        "{:?}",
        t.elapsed()
    );
    assert!(t.elapsed() < Duration::from_secs(2));
}

/// PostgreSQL's default WAL flush on real files: redo written into the page
/// cache, then fdatasync'ed, while the data files stay O_DIRECT; the result
/// says so, and a default run's result leaves both out.
#[test]
fn redo_written_buffered_then_fdatasynced() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ds = small_dataset(tmp.path());
    for engine in [EngineKind::Psync, EngineKind::IoUring] {
        let mut w = Profile::Redo.config(8192);
        w.redo_stress = dbio_workload::RedoStress::Lite;
        w.redo_flush = RedoFlush::Fdatasync;
        w.redo_buffered = true;
        let mut s = spec(ds.clone(), engine, w);
        s.direct = true;
        s.loops = Some(100);
        let out = run(&s, &AtomicBool::new(false), None).unwrap();
        assert!(out.error.is_none(), "{engine:?}: {:?}", out.error);
        let r = out.result;
        let redo = r.classes.iter().find(|c| c.class == "redo-write").unwrap();
        assert_eq!(redo.ios, 200, "{engine:?}");
        assert_eq!(r.config.redo_flush.as_deref(), Some("fdatasync"));
        assert!(r.config.redo_buffered);
        let json = serde_json::to_string(&r.config).unwrap();
        assert!(json.contains(r#""redo_flush":"fdatasync","redo_buffered":true"#));
    }
    let s = spec(ds, EngineKind::Psync, Profile::Redo.config(8192));
    let r = run(&s, &AtomicBool::new(false), None).unwrap().result;
    let json = serde_json::to_string(&r.config).unwrap();
    assert!(!json.contains("redo_flush") && !json.contains("redo_buffered"));
}

#[test]
fn counted_calls_show_which_reads_slept_in_the_device() {
    // On the build's disk, not a tmpfs: O_DIRECT reads must reach a device.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ds = small_dataset(tmp.path());
    let mut s = spec(ds, EngineKind::Psync, WorkloadConfig::new(8192));
    s.loops = Some(200);
    s.count_sleeps = true;
    let share = |s: &dbio_experiment::RunSpec| {
        let out = run(s, &AtomicBool::new(false), None).unwrap();
        assert!(out.error.is_none(), "{:?}", out.error);
        let t = out.result.io_threads.expect("threads' figures");
        let c = t
            .calls
            .iter()
            .find(|c| c.class == "single-block-read")
            .unwrap();
        assert_eq!(c.calls, out.result.ios, "every recorded read counted");
        t.slept_share("single-block-read").unwrap()
    };
    // The data set was just written through the page cache: its reads are copies.
    let cached = share(&s);
    assert!(cached < 0.2, "page-cache reads slept: {cached}");
    s.direct = true;
    // Most O_DIRECT reads wait for the device; a virtual disk whose host answers from
    // its own cache lets some complete before the thread sleeps.
    let device = share(&s);
    assert!(
        device > 0.3 && device > cached + 0.2,
        "O_DIRECT reads slept no more than copies: {device} against {cached}"
    );
    // Not counted unless asked.
    s.count_sleeps = false;
    let out = run(&s, &AtomicBool::new(false), None).unwrap();
    assert!(out.result.io_threads.is_none_or(|t| t.calls.is_empty()));
}
