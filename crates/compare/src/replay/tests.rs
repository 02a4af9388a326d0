//! The judgement of runs against a model of an AWR report: the headroom of a ramp,
//! production's events beside the run's, the objectives. Without `../shared` the tests
//! of real reports say they are skipped (`crate::shared_data`); the same checks run on
//! the reports the project wrote (dbio-sources' `testdata/awr`).

use std::collections::BTreeMap;

use dbio_sources::awr::{model_of, parse, AwrReport};
use dbio_sources::model::{WorkloadModel, CLASSES};
use dbio_stats::open_loop::{OpenLoopClass, OpenLoopSection};
use dbio_stats::{ClassResult, HistogramBucket, RunResult};

use super::*;
use crate::shared_data::awr_real;

fn real(name: &str) -> AwrReport {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/awr-real/").to_string() + name;
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (the real AWR reports are test data)"));
    parse(&String::from_utf8_lossy(&bytes)).unwrap()
}

/// Whether the real reports are missing; the test then says it is skipped.
fn missing(what: &str) -> bool {
    awr_real(what).is_none()
}

/// A report of `testdata/awr`, written for the tests.
fn written(name: &str) -> AwrReport {
    let path = format!(
        "{}/../sources/testdata/awr/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    parse(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).unwrap()
}

const R11204: &str = "11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html";

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// The single-block reads and redo writes of `r`'s model.
fn model(r: &AwrReport) -> WorkloadModel {
    let mut m = model_of(r, "r.html", None);
    m.classes
        .retain(|c| c.class == "single-block-read" || c.class == "redo-write");
    m
}

/// A step at `scale` of the model: each class achieving `keep` of its rate at `mean`.
fn step(m: &WorkloadModel, scale: f64, keep: f64, mean: f64) -> RunResult {
    let mut classes = Vec::new();
    let mut ol = Vec::new();
    for c in &m.classes {
        let asked = c.rate * scale;
        classes.push(ClassResult {
            class: c.class.clone(),
            ios: (asked * keep * 100.0) as u64,
            iops: asked * keep,
            mean_us: mean,
            p99_us: mean * 3.0,
            histogram: vec![HistogramBucket {
                lower_us: 16,
                upper_us: 32,
                count: 10,
            }],
            ..Default::default()
        });
        ol.push(OpenLoopClass {
            class: c.class.clone(),
            asked_iops: asked,
            achieved_iops: asked * keep,
            due: (asked * 100.0) as u64,
            ..Default::default()
        });
    }
    let mut s = OpenLoopSection {
        arrivals: "poisson".into(),
        classes: ol,
        ..Default::default()
    };
    s.sum_classes();
    RunResult {
        elapsed_s: 100.0,
        classes,
        open_loop: Some(Box::new(s)),
        ..Default::default()
    }
}

#[test]
fn the_headroom_is_the_largest_scale_that_kept_rate_and_latency() {
    if missing("the headroom of a ramp of an 11.2.0.4 report's model") {
        return;
    }
    headroom(&real(R11204));
}

#[test]
fn the_headroom_of_a_ramp_of_the_19c_html_fixture() {
    headroom(&written("19c.html"));
}

/// Steps of `r`'s model judged: the headroom comes from the run's own figures, rates
/// and means against its mean at 1x, whatever the report.
fn headroom(r: &AwrReport) {
    let m = model(r);
    let runs = [
        (1.0, step(&m, 1.0, 1.0, 20.0)),
        (1.5, step(&m, 1.5, 0.995, 30.0)),
        (2.0, step(&m, 2.0, 1.0, 39.0)),
        (3.0, step(&m, 3.0, 0.9, 45.0)),
    ];
    let steps: Vec<(f64, &RunResult)> = runs.iter().map(|(s, r)| (*s, r)).collect();
    let j = judge(&m, &r.histograms, &steps, &[]);
    assert_eq!(j.headroom, Some(2.0));
    assert!(
        j.load.starts_with(
            "the load holds up to 2.0x production's (3.0x did not: single-block-read achieved"
        ),
        "{}",
        j.load
    );
    // Latency over twice its own at 1x also ends the headroom.
    let runs = [
        (1.0, step(&m, 1.0, 1.0, 20.0)),
        (2.0, step(&m, 2.0, 1.0, 41.0)),
    ];
    let steps: Vec<(f64, &RunResult)> = runs.iter().map(|(s, r)| (*s, r)).collect();
    let j = judge(&m, &BTreeMap::new(), &steps, &[]);
    assert_eq!(j.headroom, Some(1.0));
    assert!(j.steps[1]
        .why
        .as_deref()
        .unwrap()
        .contains("over 2x its 20 us"));
    // Not even the first step: no headroom.
    let runs = [(1.0, step(&m, 1.0, 0.5, 20.0))];
    let steps: Vec<(f64, &RunResult)> = runs.iter().map(|(s, r)| (*s, r)).collect();
    let j = judge(&m, &BTreeMap::new(), &steps, &[]);
    assert_eq!(j.headroom, None);
    assert!(
        j.load.starts_with("the load does not hold at 1.0x"),
        "{}",
        j.load
    );
    // Production's load not kept: the answer is no, whatever the latency.
    assert_eq!(j.answer, Some(Answer::No));
    assert!(
        j.verdict
            .starts_with("No: at 1.0x production's load, single-block-read achieved"),
        "{}",
        j.verdict
    );
}

#[test]
fn events_set_production_beside_the_run_and_objectives_default_to_production() {
    if missing("an 11.2.0.4 report's events and objectives beside a run") {
        return;
    }
    // "db file sequential read | 1,938,901 | 40.7"; its histogram: "<1ms 99.9, <2ms .1".
    events(&real(R11204), 40.7e6 / 1_938_901.0, (0, 1024, 99.9));
}

#[test]
fn events_and_objectives_of_the_19c_html_fixture() {
    // "db file sequential read | 2,000,000 | 2469"; its histogram: "<32us" blank.
    events(&written("19c.html"), 1234.5, (16, 32, 0.0));
}

/// A run of `r`'s model, every I/O in [16, 32) us at a mean of 10.5 us, judged:
/// production's mean of single-block reads is `prod_us`, and the bucket of its
/// histogram that holds [16, 32) us is `(lower, upper, percent)`.
fn events(r: &AwrReport, prod_us: f64, bucket: (u64, u64, f64)) {
    let m = model(r);
    let run = step(&m, 1.0, 1.0, 10.5);
    let j = judge(&m, &r.histograms, &[(1.0, &run)], &[]);
    let e = &j.events[0];
    assert_eq!(e.event, "db file sequential read");
    assert!(close(e.factor.unwrap(), prod_us / 10.5));
    let row = e
        .histogram
        .iter()
        .find(|h| h.lower_us <= 24 && 24 < h.upper_us)
        .unwrap();
    assert_eq!(
        (row.lower_us, row.upper_us, row.production_pct, row.here_pct),
        (bucket.0, bucket.1, bucket.2, 100.0)
    );
    // Default objectives: production's means, which 10.5 us beats for single-block
    // reads and redo writes alike.
    assert_eq!(j.slo.len(), 2);
    assert!(j.slo.iter().all(|o| o.pass), "{:?}", j.slo);
    let own = dbio_stats::Slo::parse("single-block-read=10us", &CLASSES).unwrap();
    let j = judge(&m, &r.histograms, &[(1.0, &run)], &[own]);
    assert_eq!(j.slo.len(), 2);
    assert!(
        !j.slo
            .iter()
            .find(|o| o.slo.class == "single-block-read")
            .unwrap()
            .pass
    );
}

#[test]
fn a_cpu_wait_in_the_model_is_added_to_the_storage_mean_as_its_own_term() {
    let r = written("19c.html");
    let mut m = model(&r);
    let run = step(&m, 1.0, 1.0, 10.5);
    // An AWR model has no such term: nothing is added or said.
    let j = judge(&m, &r.histograms, &[(1.0, &run)], &[]);
    let e = &j.events[0];
    assert_eq!(
        (
            e.cpu_wait_us,
            e.cpu_wait_note.as_deref(),
            e.predicted_mean_us
        ),
        (None, None, None)
    );
    assert!(j.slo.iter().all(|o| !o.line.contains("CPU")));
    m.classes[0].cpu_wait_us = Some(20.0);
    m.classes[0].cpu_wait_source = Some("/proc/PID/schedstat".into());
    let own = dbio_stats::Slo::parse("single-block-read=25us", &CLASSES).unwrap();
    let p99 = dbio_stats::Slo::parse("redo-write=40us@p99", &CLASSES).unwrap();
    let j = judge(&m, &r.histograms, &[(1.0, &run)], &[own, p99]);
    let e = &j.events[0];
    assert_eq!(e.here_mean_us, Some(10.5));
    assert_eq!(e.cpu_wait_us, Some(20.0));
    assert_eq!(e.predicted_mean_us, Some(30.5));
    assert!(close(e.factor.unwrap(), 1234.5 / 30.5));
    // The redo writes have no term: their figures are the storage's.
    let redo = &j.events[1];
    assert_eq!((redo.predicted_mean_us, redo.cpu_wait_us), (None, None));
    assert!(close(
        redo.factor.unwrap(),
        redo.production_mean_us.unwrap() / 10.5
    ));
    // The mean objective is judged on the prediction, and says both terms; the
    // percentile stays the storage's (31.5 us).
    let read = j
        .slo
        .iter()
        .find(|o| o.slo.class == "single-block-read")
        .unwrap();
    assert_eq!(read.measured_us, Some(30.5));
    assert!(!read.pass);
    assert!(
        read.line
            .ends_with("(the storage's 10.5us + 20us waiting for a CPU)"),
        "{}",
        read.line
    );
    let redo = j.slo.iter().find(|o| o.slo.class == "redo-write").unwrap();
    assert_eq!(redo.measured_us, Some(31.5));
    assert!(redo.pass && !redo.line.contains("CPU"), "{}", redo.line);
    // The replay's own threads waited 6 us per timeslice: already in the storage's
    // times, so the term is what production waited beyond that.
    let mut busy = run.clone();
    busy.io_threads = Some(dbio_stats::ThreadSched {
        threads: 4,
        run_delay_ns: 60_000,
        timeslices: 10,
        ..dbio_stats::ThreadSched::default()
    });
    let j = judge(&m, &r.histograms, &[(1.0, &busy)], &[]);
    let e = &j.events[0];
    assert_eq!((e.own_cpu_wait_us, e.cpu_wait_us), (Some(6.0), Some(14.0)));
    assert_eq!(e.predicted_mean_us, Some(24.5));
    assert!(
        e.cpu_wait_note
            .as_deref()
            .unwrap()
            .contains("less the 6.0 us per timeslice"),
        "{:?}",
        e.cpu_wait_note
    );
    // Counted calls: only those that slept here wait to be woken, so the term is
    // that share of it (a quarter of the reads: 14 x 0.25); the redo writes keep none.
    let mut counted = busy.clone();
    let t = counted.io_threads.as_mut().unwrap();
    t.add_calls("single-block-read", 100, 25);
    t.add_calls("redo-write", 10, 10);
    let j = judge(&m, &r.histograms, &[(1.0, &counted)], &[]);
    let e = &j.events[0];
    assert_eq!((e.slept_share, e.cpu_wait_us), (Some(0.25), Some(3.5)));
    assert_eq!(e.predicted_mean_us, Some(14.0));
    assert!(
        e.cpu_wait_note
            .as_deref()
            .unwrap()
            .ends_with("applied to the 25% of calls that slept here (the only ones woken)"),
        "{:?}",
        e.cpu_wait_note
    );
    assert_eq!(j.events[1].slept_share, None);
    // None slept (a RAM-backed storage): no term.
    counted.io_threads.as_mut().unwrap().calls[0].slept = 0;
    let j = judge(&m, &r.histograms, &[(1.0, &counted)], &[]);
    assert_eq!(j.events[0].predicted_mean_us, Some(10.5));
    // Never below 0: a replay that waited longer than production adds nothing.
    busy.io_threads.as_mut().unwrap().run_delay_ns = 600_000;
    let j = judge(&m, &r.histograms, &[(1.0, &busy)], &[]);
    assert_eq!(j.events[0].predicted_mean_us, Some(10.5));
    assert_eq!(j.events[1].own_cpu_wait_us, None);
}

#[test]
fn a_class_too_rare_to_give_a_mean_is_not_held_to_production_s() {
    let r = written("19c.html");
    let m = model(&r);
    let mut run = step(&m, 1.0, 1.0, 10.5);
    // Redo writes far slower than production's mean, on one I/O too few, then on enough.
    let redo = run
        .classes
        .iter_mut()
        .find(|c| c.class == "redo-write")
        .unwrap();
    redo.mean_us = 1e6;
    redo.ios = MIN_IOS_JUDGED - 1;
    let j = judge(&m, &r.histograms, &[(1.0, &run)], &[]);
    assert!(
        j.slo.iter().all(|o| o.slo.class != "redo-write"),
        "{:?}",
        j.slo
    );
    assert!(j.slo.iter().all(|o| o.pass), "{:?}", j.slo);
    run.classes
        .iter_mut()
        .find(|c| c.class == "redo-write")
        .unwrap()
        .ios = MIN_IOS_JUDGED;
    let j = judge(&m, &r.histograms, &[(1.0, &run)], &[]);
    let redo = j.slo.iter().find(|o| o.slo.class == "redo-write").unwrap();
    assert!(!redo.pass, "{redo:?}");
}
