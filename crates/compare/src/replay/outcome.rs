//! What a replay found: per event, production's figures beside this storage's (mean,
//! histogram, rate asked and achieved), per step of the ramp whether every class kept
//! its rate and latency and met its objectives, the headroom, and the one answer
//! ([`super::answer`]): the judging of a replay into its report (`report.rs`).

use std::collections::BTreeMap;

use dbio_stats::slo::{evaluate, latency_text, Slo, SloOutcome, SloStat};
use dbio_stats::RunResult;

use super::answer::{self, enough, too_few};
use super::report::{
    EventComparison, HistogramRow, ReplayReport, ReplayStep, StepClass, REPLAY_FORMAT, REPLAY_KIND,
};
use dbio_sources::awr::WaitHistogram;
use dbio_sources::model::{ModelClass, WorkloadModel};

/// A class keeps its asked rate when it achieves at least this share of it (or its
/// Poisson spread, for a class too rare to be held to 2% in a short step).
pub const RATE_TOLERANCE: f64 = 0.02;
/// A step keeps its latency when each class's mean stays within this factor of its
/// own mean at the reference scale.
pub const LATENCY_GROWTH: f64 = 2.0;

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
            .and_then(|(_, run)| super::memory::page_cache_outcome(model, run)),
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
