//! Models of the real reports of `../shared/awr-real/` (see its SOURCES.md), each
//! figure worked out from the report's own lines, and the judgement of runs against
//! a model.

use std::collections::BTreeMap;

use dbio_stats::open_loop::{OpenLoopClass, OpenLoopSection};
use dbio_stats::{ClassResult, HistogramBucket, RunResult};

use super::*;
use crate::awr::{parse, AwrReport};

fn real(name: &str) -> AwrReport {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/awr-real/").to_string() + name;
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (the real AWR reports are test data)"));
    parse(&String::from_utf8_lossy(&bytes)).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn a_busy_11_2_0_4_report_every_class_from_its_most_direct_figures() {
    let r = real("11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html");
    let m = model_of(&r, "r.html", None);
    let t = r.elapsed_s;
    let c = |n: &str| m.class(n).unwrap_or_else(|| panic!("no {n}"));
    // Foreground 1,938,901 and background 1,255 waits of db file sequential read.
    let s = c("single-block-read");
    assert!(close(s.rate, (1_938_901.0 + 1_255.0) / t));
    assert!(s.source.contains("1938901 + 1255 background waits"));
    assert!(close(s.production_mean_us.unwrap(), 40.7e6 / 1_938_901.0));
    // Direct path read: 257,634,718 direct blocks over 2,144,793 waits = 120.1 blocks.
    let d = c("direct-read");
    assert_eq!(d.size, 120 * 8192);
    assert!(d.source.contains("physical reads direct"));
    // IOStat by Function: DBWR 21.17 writes/s, LGWR 30.61.
    assert!(close(c("dbwr-write").rate, 21.17));
    let redo = c("redo-write");
    assert!(close(redo.rate, 30.61));
    // 18,805,022,864 B of redo in 92,371 redo writes: 203,583 B, 398 sectors.
    assert_eq!(redo.size, 398 * 512);
    assert!(redo.source.contains("LGWR") && redo.source.contains("redo writes 92371"));
    assert_eq!(redo.production_mean_us, Some(168.0e6 / 92_374.0));
    // Direct path write: 854,468 waits; 1,922,692 direct blocks written (none to
    // temporary tablespaces) over them = 2.25 blocks, 2 of 8 KiB.
    let w = c("direct-write");
    assert!(close(w.rate, 854_468.0 / t));
    assert_eq!(w.size, 2 * 8192);
    assert!(
        w.source
            .ends_with("physical writes direct 1922692 blocks / 854468 waits"),
        "{}",
        w.source
    );
    assert_eq!(w.event, "direct path write");
    assert!(!m
        .not_replayed
        .iter()
        .any(|n| n.starts_with("direct path write")));
    // The classes in dbio's order, direct-write last.
    let names: Vec<&str> = m.classes.iter().map(|c| c.class.as_str()).collect();
    assert_eq!(names, CLASSES);
    // Control file I/O is named, not dropped.
    assert!(m
        .not_replayed
        .iter()
        .any(|n| n.starts_with("control file parallel write")));
    assert_eq!(m.check(), Ok(()));
}

#[test]
fn a_19c_text_report_without_iostat_or_background_events_falls_back() {
    let r = real("19.0-tandat8896-oracle-rac-data-guard-lab.txt");
    assert!(r.io_by_function.is_empty() && r.background_events.is_empty());
    let m = model_of(&r, "r.txt", None);
    // 13 waits of db file sequential read in the hour; 3.23ms printed in 19c units.
    let s = m.class("single-block-read").unwrap();
    assert!(close(s.rate, 13.0 / r.elapsed_s));
    assert_eq!(s.production_mean_us, Some(3230.0));
    // No LGWR figures: redo from Instance Activity, 2 redo synch writes of 8,544 B of
    // redo (4,272 B each: 8 sectors).
    let redo = m.class("redo-write").unwrap();
    assert!(close(redo.rate, 2.0 / r.elapsed_s));
    assert!(redo
        .source
        .starts_with("Instance Activity Stats: redo synch writes"));
    assert_eq!(redo.size, 4096);
    // Nothing says how often DBWR wrote: no class made up.
    assert!(m.class("dbwr-write").is_none());
    assert!(m.classes.iter().all(|c| !c.source.is_empty()));
}

#[test]
fn a_12_2_report_without_iostat_by_function_takes_instance_activity() {
    let r = real("12.2.0.1-pcambell-awrrptanalyzor-awrrpt_1_56288_56289.html");
    let m = model_of(&r, "r.html", None);
    // Instance Activity: 30 write requests less 18 direct path writes.
    let w = m.class("dbwr-write").unwrap();
    assert!(close(w.rate, 12.0 / r.elapsed_s));
    assert!(w.source.starts_with("Instance Activity Stats"));
    // No redo writes counted: redo synch writes (6,024), redo size 491,922,416 B.
    let redo = m.class("redo-write").unwrap();
    assert!(close(redo.rate, 6024.0 / r.elapsed_s));
    assert!(redo.source.contains("redo synch writes"));
    assert_eq!(
        redo.size,
        (491_922_416.0f64 / 6024.0 / 512.0).round() as u32 * 512
    );
    // 41,483,368 direct blocks in 231,136 reads: 179.5 blocks.
    assert_eq!(m.class("direct-read").unwrap().size, 179 * 8192);
}

fn model() -> WorkloadModel {
    let r = real("11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html");
    let mut m = model_of(&r, "r.html", None);
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
    let m = model();
    let r = real("11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html");
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
        j.verdict.starts_with(
            "serves 2.0x the production load (3.0x did not: single-block-read achieved"
        ),
        "{}",
        j.verdict
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
        j.verdict.starts_with("does not serve 1.0x"),
        "{}",
        j.verdict
    );
}

#[test]
fn events_set_production_beside_the_run_and_objectives_default_to_production() {
    let m = model();
    let r = real("11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html");
    let run = step(&m, 1.0, 1.0, 10.5);
    let j = judge(&m, &r.histograms, &[(1.0, &run)], &[]);
    let e = &j.events[0];
    assert_eq!(e.event, "db file sequential read");
    let prod = 40.7e6 / 1_938_901.0;
    assert!(close(e.factor.unwrap(), prod / 10.5));
    // Production's histogram: <1ms 99.9%, <2ms 0.1%; every run I/O in [16, 32) us.
    assert_eq!(e.histogram[0].upper_us, 1024);
    assert_eq!(
        (e.histogram[0].production_pct, e.histogram[0].here_pct),
        (99.9, 100.0)
    );
    // Default objectives: production's means; 10.5 us beats 21 us, and the redo
    // write's 1.8 ms.
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
