//! What a replay found: per event, production's figures beside this storage's (mean,
//! histogram, rate asked and achieved), per step of the ramp whether every class kept
//! its rate and latency and met its objectives, the headroom, and the one answer
//! ([`super::answer`]).

use std::collections::BTreeMap;

use dbio_stats::slo::{evaluate, latency_text, Slo, SloOutcome, SloStat};
use dbio_stats::RunResult;
use serde::{Deserialize, Serialize};

use super::answer::{self, enough, too_few, Answer};
use super::model::{ModelClass, WorkloadModel};
use crate::awr::WaitHistogram;

/// `kind` of a replay's JSON.
pub const REPLAY_KIND: &str = "replay";
/// `format_version` of a replay's JSON: 2 since `verdict` is the answer (1: the load).
pub const REPLAY_FORMAT: u32 = 2;

/// A class keeps its asked rate when it achieves at least this share of it (or its
/// Poisson spread, for a class too rare to be held to 2% in a short step).
pub const RATE_TOLERANCE: f64 = 0.02;
/// A step keeps its latency when each class's mean stays within this factor of its
/// own mean at the reference scale.
pub const LATENCY_GROWTH: f64 = 2.0;

/// The result of `dbio replay`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Always "replay".
    pub kind: String,
    pub format_version: u32,
    /// The model run (rates at 1x).
    pub model: WorkloadModel,
    /// The scale production is compared at: 1 when the ramp has it, else its first.
    pub reference_scale: f64,
    /// Each step of the ramp, in the order run.
    pub steps: Vec<ReplayStep>,
    /// Per replayed event at the reference scale: production beside this storage.
    pub events: Vec<EventComparison>,
    /// The largest scale at which this and every smaller step kept every class's
    /// rate (within 2%) and mean latency (within 2x of the reference step's); none
    /// when the first step did not.
    pub headroom: Option<f64>,
    /// Will this storage serve production's load at production's latency: yes, no, or
    /// cannot say (no event had I/Os enough to judge). None in files of format 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    /// The answer in one line, what every form of the report opens with: "No: at 1.0x
    /// production's load, db file sequential read is 5.0x slower than production (254
    /// µs against 47 µs)" (format 1: the load line).
    pub verdict: String,
    /// The largest scale, from the reference scale up, at which this and every step
    /// before it kept its rates and met its objectives; none when the reference did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serves_up_to: Option<f64>,
    /// The ramp in one line: "the load holds up to 2.0x production's (3.0x did not:
    /// ...)", rates and growth of latency only.
    #[serde(default)]
    pub load: String,
    /// Objectives judged at the reference scale (production's own mean latencies for
    /// the events with I/Os enough to judge, unless `--slo` says otherwise).
    pub slo: Vec<SloOutcome>,
    /// Production's page cache beside the replay's, where the model knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<super::shape::PageCacheOutcome>,
    /// Several page-cache sizes (`--page-cache A,B,...`), each at the reference
    /// scale, the first the one judged above; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<super::shape::MemoryStep>,
}

/// One step of a ramp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayStep {
    /// Times the production rates.
    pub scale: f64,
    pub elapsed_s: f64,
    /// The run's own open-loop verdict: whether the storage fell behind.
    pub behind: bool,
    pub pace: String,
    /// Every class kept its rate and latency.
    pub kept: bool,
    /// Why not, where it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The objectives this step missed, in words, the worst first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missed: Vec<String>,
    pub classes: Vec<StepClass>,
}

/// One class in one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepClass {
    pub class: String,
    pub asked_iops: f64,
    pub achieved_iops: f64,
    pub ios: u64,
    pub mean_us: f64,
    pub p99_us: f64,
    /// The mean as set beside production's: the service time where the model compares
    /// service times, plus the CPU term where it has one; none without I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_us: Option<f64>,
}

/// One event: production against this storage at the reference scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventComparison {
    /// Oracle wait event.
    pub event: String,
    /// dbio class replaying it.
    pub class: String,
    pub production_mean_us: Option<f64>,
    /// Why production has no mean, where it has none (not timed, not judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_note: Option<String>,
    /// This storage's mean: from each I/O's intended start, or where the model times
    /// I/O calls only (`service_time`), from its issue.
    pub here_mean_us: Option<f64>,
    /// Mean time an I/O waited after its intended start before it was issued (its
    /// session busy with the one before), microseconds; in `here_mean_us` unless the
    /// model compares service times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub here_wait_us: Option<f64>,
    pub here_p99_us: Option<f64>,
    /// The CPU term of the prediction, microseconds: the time production's processes
    /// waited for a CPU per wake-up (the model's `cpu_wait_us`), in production's times,
    /// less the replay's own threads' (`own_cpu_wait_us`), never below 0, times the
    /// share of calls that slept here (`slept_share`), where counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_us: Option<f64>,
    /// The replay's own I/O threads' wait for a CPU per timeslice, microseconds,
    /// already in this storage's times: taken from production's to give `cpu_wait_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_cpu_wait_us: Option<f64>,
    /// The share of the class's calls that slept in the replay (0 to 1), where counted:
    /// `cpu_wait_us` is production's wait beyond the replay's own, times this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slept_share: Option<f64>,
    /// Where `cpu_wait_us` came from, or why it is not known; none for models without
    /// the term (AWR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_note: Option<String>,
    /// What production would time here: `here_mean_us` plus `cpu_wait_us`, where the
    /// model has that term; the factor and change are of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_mean_us: Option<f64>,
    /// Times better here (production mean over this mean, or over
    /// `predicted_mean_us` where there is one): above 1 faster here.
    pub factor: Option<f64>,
    /// Change of the mean against production's, percent.
    pub change_pct: Option<f64>,
    /// Why the event is not judged, where it counted too few I/Os to give a mean, in
    /// production's window or in the replay's step: "1 flush in 30 s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub too_few: Option<String>,
    /// Production's rate at the reference scale, asked, and achieved here.
    pub asked_iops: f64,
    pub achieved_iops: f64,
    /// Histogram in production's buckets, where production printed one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<HistogramRow>,
}

/// One bucket of an event's histogram: shares of waits in `[lower_us, upper_us)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistogramRow {
    pub lower_us: u64,
    pub upper_us: u64,
    pub production_pct: f64,
    pub here_pct: f64,
}

/// The default objectives of a replay: each class's mean no slower than production's.
pub fn production_slos(model: &WorkloadModel) -> Vec<Slo> {
    model
        .classes
        .iter()
        .filter_map(|c| {
            Some(Slo {
                class: c.class.clone(),
                limit_us: c.production_mean_us.filter(|m| *m > 0.0)?,
                stat: SloStat::Mean,
            })
        })
        .collect()
}

/// `slos` over the defaults: a class given its own objective drops production's.
pub fn objectives(model: &WorkloadModel, slos: &[Slo]) -> Vec<Slo> {
    let mut out: Vec<Slo> = production_slos(model)
        .into_iter()
        .filter(|d| !slos.iter().any(|s| s.class == d.class))
        .collect();
    out.extend(slos.iter().cloned());
    out
}

/// Judges a ramp: `steps` are (scale, run) in the order run.
pub fn judge(
    model: &WorkloadModel,
    histograms: &BTreeMap<String, WaitHistogram>,
    steps: &[(f64, &RunResult)],
    slos: &[Slo],
) -> ReplayReport {
    let reference = steps
        .iter()
        .position(|(s, _)| (*s - 1.0).abs() < 1e-9)
        .unwrap_or(0);
    let reference_scale = steps.get(reference).map_or(1.0, |s| s.0);
    let base: Vec<StepClass> = steps
        .get(reference)
        .map(|(_, r)| step_classes(model, r))
        .unwrap_or_default();
    let mut judged = Vec::new();
    let mut outcomes = Vec::new();
    for (scale, run) in steps {
        let classes = step_classes(model, run);
        let why = shortfall(model, &classes, &base, run);
        let ol = run.open_loop.as_deref();
        let slo = step_objectives(model, run, slos);
        judged.push(ReplayStep {
            scale: *scale,
            elapsed_s: run.elapsed_s,
            behind: ol.is_some_and(|o| o.behind),
            pace: ol.map_or(String::new(), |o| o.verdict.clone()),
            kept: why.is_none(),
            why,
            missed: answer::misses(model, &slo, slos),
            classes,
        });
        outcomes.push(slo);
    }
    let (headroom, load) = load_line(&judged);
    let events = steps
        .get(reference)
        .map(|(_, run)| events(model, histograms, run))
        .unwrap_or_default();
    let slo = outcomes.into_iter().nth(reference).unwrap_or_default();
    let (answer, verdict, serves_up_to) =
        answer::answer(&judged, reference_scale, &events, &slo, slos);
    ReplayReport {
        kind: REPLAY_KIND.into(),
        format_version: REPLAY_FORMAT,
        model: model.clone(),
        reference_scale,
        steps: judged,
        events,
        headroom,
        answer: Some(answer),
        verdict,
        serves_up_to,
        load,
        slo,
        page_cache: steps
            .get(reference)
            .and_then(|(_, run)| super::shape::page_cache_outcome(model, run)),
        memory: Vec::new(),
    }
}

/// The headroom (the last of the leading steps, in ascending scale, that kept their
/// rates and latency) and the ramp in one line.
fn load_line(judged: &[ReplayStep]) -> (Option<f64>, String) {
    let mut order: Vec<&ReplayStep> = judged.iter().collect();
    order.sort_by(|a, b| a.scale.total_cmp(&b.scale));
    let headroom = order.iter().take_while(|s| s.kept).last().map(|s| s.scale);
    let line = match (headroom, order.iter().find(|s| !s.kept)) {
        (Some(h), None) if order.len() > 1 => format!(
            "the load holds up to {h:.1}x production's, the largest tried (every step kept \
             its rates, and its latency within {LATENCY_GROWTH}x of the reference step's)"
        ),
        (Some(h), None) => format!("the load holds at {h:.1}x production's (every rate kept)"),
        (Some(h), Some(f)) => format!(
            "the load holds up to {h:.1}x production's ({:.1}x did not: {})",
            f.scale,
            first_reason(f.why.as_deref())
        ),
        (None, f) => format!(
            "the load does not hold at {:.1}x production's: {}",
            order.first().map_or(1.0, |s| s.scale),
            first_reason(f.and_then(|f| f.why.as_deref()))
        ),
    };
    (headroom, line)
}

/// A step's objectives: production's own mean for each class with I/Os enough to judge,
/// in production's window and in this step (a class too rare to give a mean is not
/// failed, nor passed, on a few I/Os), and the user's own always.
fn step_objectives(model: &WorkloadModel, run: &RunResult, slos: &[Slo]) -> Vec<SloOutcome> {
    let judged = |c: &str| {
        let ios = run
            .classes
            .iter()
            .find(|x| x.class == c)
            .map_or(0, |x| x.ios);
        model.class(c).is_some_and(|m| enough(m, ios))
    };
    let set: Vec<Slo> = objectives(model, slos)
        .into_iter()
        .filter(|o| judged(&o.class) || slos.iter().any(|s| s.class == o.class))
        .collect();
    let (classes, storage) = judged_means(model, run);
    let mut out = evaluate(&set, &classes);
    for o in out.iter_mut().filter(|o| o.slo.stat == SloStat::Mean) {
        if let (Some((mean, w)), Some(_)) = (storage.get(&o.slo.class), o.measured_us) {
            o.line += &format!(
                " (the storage's {} + {} waiting for a CPU)",
                latency_text(*mean),
                latency_text(*w)
            );
        }
    }
    out
}

/// The run's classes with each mean as production's is set beside it, and, per class
/// given a CPU term, (the storage's mean, the term).
fn judged_means(
    model: &WorkloadModel,
    run: &RunResult,
) -> (Vec<dbio_stats::ClassResult>, BTreeMap<String, (f64, f64)>) {
    let mut classes = if model.service_time {
        service_means(run)
    } else {
        run.classes.clone()
    };
    // Means are judged as predicted: production's objectives are its own means,
    // which include the CPU wait. Percentiles stay the storage's: a mean wait
    // added to a percentile is no percentile.
    let mut storage = BTreeMap::new();
    for c in classes.iter_mut() {
        if let Some(w) = model.class(&c.class).and_then(|m| cpu_term(m, run)) {
            storage.insert(c.class.clone(), (c.mean_us, w));
            c.mean_us += w;
        }
    }
    (classes, storage)
}

/// The run's classes with each mean less the time its I/Os waited to be issued.
fn service_means(run: &RunResult) -> Vec<dbio_stats::ClassResult> {
    let ol = run.open_loop.as_deref();
    run.classes
        .iter()
        .map(|c| {
            let wait = ol
                .and_then(|o| o.classes.iter().find(|x| x.class == c.class))
                .map_or(0.0, |x| x.mean_late_us);
            let mut c = c.clone();
            c.mean_us = (c.mean_us - wait).max(0.0);
            c
        })
        .collect()
}

/// The first of a step's reasons, and how many more there are (all are in the step).
fn first_reason(why: Option<&str>) -> String {
    let mut parts = why.unwrap_or("").split("; ");
    let first = parts.next().unwrap_or("").to_string();
    match parts.count() {
        0 => first,
        n => format!("{first}, and {n} more"),
    }
}

fn step_classes(model: &WorkloadModel, run: &RunResult) -> Vec<StepClass> {
    let ol = run.open_loop.as_deref();
    let (judged, _) = judged_means(model, run);
    model
        .classes
        .iter()
        .map(|m| {
            let done = run.classes.iter().find(|c| c.class == m.class);
            let asked = ol
                .and_then(|o| o.classes.iter().find(|c| c.class == m.class))
                .map_or(0.0, |c| c.asked_iops);
            StepClass {
                class: m.class.clone(),
                asked_iops: asked,
                achieved_iops: done.map_or(0.0, |c| c.iops),
                ios: done.map_or(0, |c| c.ios),
                mean_us: done.map_or(0.0, |c| c.mean_us),
                p99_us: done.map_or(0.0, |c| c.p99_us),
                judged_us: judged
                    .iter()
                    .find(|c| c.class == m.class && c.ios > 0)
                    .map(|c| c.mean_us),
            }
        })
        .collect()
}

/// Why a step did not keep its load, or none when it did.
fn shortfall(
    model: &WorkloadModel,
    classes: &[StepClass],
    base: &[StepClass],
    run: &RunResult,
) -> Option<String> {
    let mut why = Vec::new();
    if run.interrupted {
        why.push("interrupted".to_string());
    }
    for c in classes {
        let expected = c.asked_iops * run.elapsed_s;
        // 2%, or three standard deviations of a Poisson count of that size.
        let slack = RATE_TOLERANCE.max(3.0 / expected.max(1.0).sqrt());
        if c.achieved_iops < c.asked_iops * (1.0 - slack) {
            why.push(format!(
                "{} achieved {:.1} of {:.1} I/Os per second",
                c.class, c.achieved_iops, c.asked_iops
            ));
            continue;
        }
        // A mean of a few I/Os is too uncertain to say it grew.
        let rare = |ios| model.class(&c.class).is_some_and(|m| !enough(m, ios));
        let own = base.iter().find(|b| b.class == c.class && !rare(b.ios));
        if let Some(b) = own.filter(|_| !rare(c.ios)) {
            if c.mean_us > b.mean_us * LATENCY_GROWTH {
                why.push(format!(
                    "{} mean {:.0} us, over {LATENCY_GROWTH}x its {:.0} us at the reference scale",
                    c.class, c.mean_us, b.mean_us
                ));
            }
        }
    }
    if why.is_empty() && run.open_loop.as_deref().is_some_and(|o| o.behind) {
        why.push("the storage fell behind (backlog)".into());
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// The replay's I/O threads' mean wait for a CPU per timeslice, microseconds.
fn own_cpu_wait(run: &RunResult) -> Option<f64> {
    run.io_threads.as_ref().and_then(|t| t.per_slice_us())
}

/// The share of class `class`'s calls that slept in the replay, where it was counted.
fn slept_share(class: &str, run: &RunResult) -> Option<f64> {
    run.io_threads.as_ref().and_then(|t| t.slept_share(class))
}

/// The CPU term of class `m`'s prediction: production's wait for a CPU per wake-up,
/// less the replay's own threads' (a storage's times measured on a busy host already
/// hold that much), never below 0; times the share of the class's calls that slept
/// here, where counted (a call that does not sleep does not wait to be woken: a read
/// from RAM-backed storage, for one).
fn cpu_term(m: &ModelClass, run: &RunResult) -> Option<f64> {
    let w = m.cpu_wait_us.filter(|w| w.is_finite() && *w >= 0.0)?;
    let share = slept_share(&m.class, run).unwrap_or(1.0);
    Some((w - own_cpu_wait(run).unwrap_or(0.0)).max(0.0) * share)
}

fn events(
    model: &WorkloadModel,
    histograms: &BTreeMap<String, WaitHistogram>,
    run: &RunResult,
) -> Vec<EventComparison> {
    let ol = run.open_loop.as_deref();
    model
        .classes
        .iter()
        .map(|m| {
            let done = run.classes.iter().find(|c| c.class == m.class && c.ios > 0);
            let wait = ol
                .and_then(|o| o.classes.iter().find(|c| c.class == m.class))
                .map(|c| c.mean_late_us)
                .filter(|_| done.is_some());
            let here = done.map(|c| {
                if model.service_time {
                    (c.mean_us - wait.unwrap_or(0.0)).max(0.0)
                } else {
                    c.mean_us
                }
            });
            let prod = m.production_mean_us.filter(|p| *p > 0.0);
            let cpu = cpu_term(m, run);
            let own = own_cpu_wait(run).filter(|_| cpu.is_some());
            let slept = slept_share(&m.class, run).filter(|_| cpu.is_some());
            let predicted = here.zip(cpu).map(|(h, w)| h + w);
            let (factor, change_pct) = match (prod, predicted.or(here)) {
                (Some(p), Some(h)) if h > 0.0 => (Some(p / h), Some((h - p) / p * 100.0)),
                _ => (None, None),
            };
            let histogram = match (histograms.get(&m.event), done) {
                (Some(h), Some(c)) => rebucket(h, &c.histogram),
                _ => Vec::new(),
            };
            let ios = run
                .classes
                .iter()
                .find(|c| c.class == m.class)
                .map_or(0, |c| c.ios);
            EventComparison {
                too_few: too_few(m, ios, run.elapsed_s),
                event: m.event.clone(),
                class: m.class.clone(),
                production_mean_us: prod,
                production_note: prod.map_or(m.mean_source.clone(), |_| None),
                here_mean_us: here,
                here_wait_us: wait,
                here_p99_us: done.map(|c| c.p99_us),
                cpu_wait_us: cpu,
                own_cpu_wait_us: own,
                slept_share: slept,
                cpu_wait_note: m.cpu_wait_source.clone().map(|s| {
                    let mut note = match own {
                        Some(o) => format!(
                            "{s}, less the {o:.1} us per timeslice the replay's own I/O \
                             threads waited (their schedstat), which this storage's times \
                             already hold"
                        ),
                        None => s,
                    };
                    if let Some(p) = slept {
                        note.push_str(&format!(
                            "; applied to the {:.0}% of calls that slept here (the only \
                             ones woken)",
                            p * 100.0
                        ));
                    }
                    note
                }),
                predicted_mean_us: predicted,
                factor,
                change_pct,
                asked_iops: ol
                    .and_then(|o| o.classes.iter().find(|c| c.class == m.class))
                    .map_or(0.0, |c| c.asked_iops),
                achieved_iops: done.map_or(0.0, |c| c.iops),
                histogram,
            }
        })
        .collect()
}

/// dbio's buckets summed into production's (both are powers of two of microseconds,
/// so each of dbio's falls inside one of production's).
fn rebucket(prod: &WaitHistogram, here: &[dbio_stats::HistogramBucket]) -> Vec<HistogramRow> {
    let total: u64 = here.iter().map(|b| b.count).sum();
    if total == 0 || prod.buckets.is_empty() {
        return Vec::new();
    }
    prod.buckets
        .iter()
        .map(|p| {
            let n: u64 = here
                .iter()
                .filter(|b| {
                    let mid = b.lower_us.saturating_add(b.upper_us) / 2;
                    mid >= p.lower_us && mid < p.upper_us
                })
                .map(|b| b.count)
                .sum();
            HistogramRow {
                lower_us: p.lower_us,
                upper_us: p.upper_us,
                production_pct: p.pct,
                here_pct: 100.0 * n as f64 / total as f64,
            }
        })
        .collect()
}
