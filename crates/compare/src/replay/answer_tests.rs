//! The one answer of a replay on a PostgreSQL-like model: reads of 47 µs at 500/s and
//! one WAL flush in a 30 s window, as a capture gives them.

use std::collections::BTreeMap;

use dbio_stats::open_loop::{OpenLoopClass, OpenLoopSection};
use dbio_stats::{ClassResult, RunResult, Slo};

use super::*;
use crate::replay::{judge, ReplayReport};
use dbio_sources::model::{ModelClass, WorkloadModel, CLASSES};

const WINDOW_S: f64 = 30.0;
const READ_US: f64 = 47.0;

/// Reads at `reads_per_s` over the window, 47 µs each in production; one WAL flush.
fn model(reads_per_s: f64) -> WorkloadModel {
    WorkloadModel {
        source: "cap.json".into(),
        classes: vec![
            ModelClass {
                class: "single-block-read".into(),
                event: "DataFileRead".into(),
                rate: reads_per_s,
                size: 8192,
                production_ios: Some(reads_per_s * WINDOW_S),
                production_mean_us: Some(READ_US),
                ..ModelClass::default()
            },
            ModelClass {
                class: "redo-write".into(),
                event: "WALWrite+WALSync".into(),
                rate: 1.0 / WINDOW_S,
                size: 8192,
                production_ios: Some(1.0),
                production_mean_us: Some(1000.0),
                flush: Some("fdatasync".into()),
                ..ModelClass::default()
            },
        ],
        ..WorkloadModel::default()
    }
}

/// A step of 10 s at `scale`: each class achieving `keep` of its rate, reads at
/// `read_us`, the WAL's flushes (at most one) 5x faster than production's.
fn step(m: &WorkloadModel, scale: f64, keep: f64, read_us: f64) -> RunResult {
    let elapsed = 10.0;
    let mut classes = Vec::new();
    let mut ol = Vec::new();
    for c in &m.classes {
        let asked = c.rate * scale;
        // At least one: the lone flush of the window comes up in the step too.
        let ios = ((asked * keep * elapsed).round() as u64).max(1);
        let mean = if c.class == "redo-write" {
            200.0
        } else {
            read_us
        };
        classes.push(ClassResult {
            class: c.class.clone(),
            ios,
            iops: ios as f64 / elapsed,
            mean_us: mean,
            p99_us: mean * 3.0,
            ..Default::default()
        });
        ol.push(OpenLoopClass {
            class: c.class.clone(),
            asked_iops: asked,
            achieved_iops: ios as f64 / elapsed,
            due: (asked * elapsed) as u64,
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
        elapsed_s: elapsed,
        classes,
        open_loop: Some(Box::new(s)),
        ..Default::default()
    }
}

fn judged(m: &WorkloadModel, runs: &[(f64, RunResult)], slos: &[Slo]) -> ReplayReport {
    let steps: Vec<(f64, &RunResult)> = runs.iter().map(|(s, r)| (*s, r)).collect();
    judge(m, &BTreeMap::new(), &steps, slos)
}

#[test]
fn reads_slower_than_production_answer_no_and_a_lone_flush_is_not_judged() {
    let m = model(500.0);
    let here = READ_US * 5.4;
    let j = judged(&m, &[(1.0, step(&m, 1.0, 1.0, here))], &[]);
    // The rates held: only the latency says no, and the line names it with both means.
    assert!(j.steps[0].kept, "{:?}", j.steps[0].why);
    assert_eq!(j.answer, Some(Answer::No));
    assert_eq!(
        j.verdict,
        format!(
            "No: at 1.0x production's load, DataFileRead is 5.4x slower than production \
             ({} against {})",
            latency_words(here),
            latency_words(READ_US)
        )
    );
    assert_eq!(Answer::No.exit_code(), dbio_stats::slo::SLO_FAILED);
    // One flush in 30 s: named with its count, and no objective of its own.
    let wal = &j.events[1];
    assert_eq!(wal.too_few.as_deref(), Some("1 flush in 30 s"));
    assert!(wal.factor.unwrap() > 1.0, "faster here, yet not judged");
    let classes: Vec<&str> = j.slo.iter().map(|o| o.slo.class.as_str()).collect();
    assert_eq!(classes, ["single-block-read"]);
    assert_eq!(j.events[0].too_few, None);
    assert_eq!(j.serves_up_to, None);
}

#[test]
fn a_ramp_answers_yes_up_to_the_last_scale_served_at_production_s_latency() {
    let m = model(500.0);
    let runs = [
        (1.0, step(&m, 1.0, 1.0, 30.0)),
        (1.5, step(&m, 1.5, 1.0, 40.0)),
        // Rates kept and latency within twice 1x's: the load holds, production's
        // latency does not.
        (2.0, step(&m, 2.0, 1.0, 55.0)),
    ];
    let j = judged(&m, &runs, &[]);
    assert_eq!(j.answer, Some(Answer::Yes));
    assert_eq!(j.serves_up_to, Some(1.5));
    assert_eq!(j.headroom, Some(2.0), "{}", j.load);
    assert!(
        j.verdict.starts_with(
            "Yes: serves production's load up to 1.5x with every event within production's \
             latency (2.0x did not: DataFileRead is 17% slower than production"
        ),
        "{}",
        j.verdict
    );
    assert!(
        j.verdict
            .ends_with("; too few I/Os to judge: WALWrite+WALSync, 1 flush in 30 s"),
        "{}",
        j.verdict
    );
    assert_eq!(j.steps[2].missed.len(), 1, "{:?}", j.steps[2].missed);
    // Every step served: the largest tried.
    let j = judged(&m, &runs[..2], &[]);
    assert_eq!(j.serves_up_to, Some(1.5));
    assert!(
        j.verdict
            .starts_with("Yes: serves production's load up to 1.5x, the largest tried"),
        "{}",
        j.verdict
    );
    // A rate not kept ends it as a missed latency does.
    let runs = [
        (1.0, step(&m, 1.0, 1.0, 20.0)),
        (3.0, step(&m, 3.0, 0.5, 20.0)),
    ];
    let j = judged(&m, &runs, &[]);
    assert_eq!(j.serves_up_to, Some(1.0));
    assert!(
        j.verdict
            .contains("(3.0x did not: single-block-read achieved"),
        "{}",
        j.verdict
    );
}

#[test]
fn with_no_event_to_judge_the_answer_cannot_say() {
    // 15 reads in 30 s: as rare in production as the WAL.
    let m = model(0.5);
    let j = judged(&m, &[(1.0, step(&m, 1.0, 1.0, 20.0))], &[]);
    assert_eq!(j.answer, Some(Answer::CannotSay));
    assert_eq!(Answer::CannotSay.exit_code(), 0);
    assert_eq!(j.events[0].too_few.as_deref(), Some("15 reads in 30 s"));
    assert!(
        j.verdict.starts_with(
            "Cannot say: at 1.0x production's load the rates held, but no event can be \
             judged against production's latency (DataFileRead, 15 reads in 30 s; \
             WALWrite+WALSync, 1 flush in 30 s)"
        ),
        "{}",
        j.verdict
    );
}

#[test]
fn a_step_too_short_for_a_class_says_so_and_the_user_s_objective_is_judged_anyway() {
    let m = model(500.0);
    let mut run = step(&m, 1.0, 1.0, 20.0);
    run.classes[0].ios = MIN_IOS_JUDGED - 1;
    let j = judged(&m, &[(1.0, run.clone())], &[]);
    assert_eq!(
        j.events[0].too_few,
        Some(format!(
            "{} reads in the replay's 10 s (a longer --time gives more)",
            MIN_IOS_JUDGED - 1
        ))
    );
    assert!(j.slo.is_empty(), "{:?}", j.slo);
    // The user's objective is the user's: judged on whatever ran, and named as theirs.
    let own = Slo::parse("redo-write=100us", &CLASSES).unwrap();
    let j = judged(&m, &[(1.0, run)], &[own]);
    assert_eq!(j.answer, Some(Answer::No));
    assert_eq!(
        j.verdict,
        format!(
            "No: at 1.0x production's load, redo-write mean {}, over its objective of {}",
            latency_words(200.0),
            latency_words(100.0)
        )
    );
}
