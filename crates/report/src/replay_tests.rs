//! The replay's renderings: the answer first in every form, events too rare to judge,
//! the CPU term, and the page's charts.

use dbio_compare::replay::{Answer, ReplayReport};
use dbio_sources::{ModelClass, WorkloadModel};

use super::*;
use crate::comparison_view::{BETTER, WORSE};

fn event(name: &str, class: &str, cpu: Option<f64>, note: Option<&str>) -> EventComparison {
    let here = 22.0;
    let predicted = cpu.map(|w| here + w);
    let p = predicted.unwrap_or(here);
    EventComparison {
        event: name.into(),
        class: class.into(),
        production_mean_us: Some(44.0),
        production_note: None,
        here_mean_us: Some(here),
        here_wait_us: None,
        here_p99_us: Some(60.0),
        cpu_wait_us: cpu,
        own_cpu_wait_us: None,
        slept_share: None,
        cpu_wait_note: note.map(str::to_string),
        predicted_mean_us: predicted,
        too_few: None,
        factor: Some(44.0 / p),
        change_pct: Some((p - 44.0) / 44.0 * 100.0),
        asked_iops: 100.0,
        achieved_iops: 100.0,
        histogram: Vec::new(),
    }
}

fn report(events: Vec<EventComparison>) -> ReplayReport {
    let classes = events
        .iter()
        .map(|e| ModelClass {
            class: e.class.clone(),
            event: e.event.clone(),
            rate: 100.0,
            size: 8192,
            production_mean_us: e.production_mean_us,
            cpu_wait_us: e.cpu_wait_us,
            cpu_wait_source: e.cpu_wait_note.clone(),
            ..ModelClass::default()
        })
        .collect();
    ReplayReport {
        kind: "replay".into(),
        format_version: 1,
        model: WorkloadModel {
            source: "cap.json".into(),
            block_size: 8192,
            classes,
            ..WorkloadModel::default()
        },
        reference_scale: 1.0,
        steps: Vec::new(),
        events,
        headroom: Some(1.0),
        answer: None,
        verdict: "Yes: serves production's load at 1.0x".into(),
        serves_up_to: Some(1.0),
        load: String::new(),
        slo: Vec::new(),
        page_cache: None,
        memory: Vec::new(),
    }
}

#[test]
fn production_s_page_cache_stands_beside_the_replay_s_in_every_form() {
    use dbio_compare::replay::PageCacheOutcome;
    use dbio_sources::model::PageCacheShape;
    let mut r = report(Vec::new());
    r.model.page_cache = Some(PageCacheShape {
        bytes: Some(512 << 20),
        bytes_source: "memory cgroup /dbio-pg-1".into(),
        hit_share: Some(0.95),
        device_read_bytes: Some(141_824),
        hit_source: "/proc/PID/io".into(),
        skew: Some(1.05),
        clustered: true,
        skew_source: "fitted".into(),
        ..PageCacheShape::default()
    });
    r.page_cache = Some(PageCacheOutcome {
        production_hit_share: Some(0.95),
        production_device_read_bytes: Some(141_824),
        production_bytes: Some(512 << 20),
        replay_bytes: Some(512 << 20),
        replay_hit_share: Some(0.931),
        replay_device_read_bytes: Some(65_536),
        replay_source: "zram0: 10 reads".into(),
    });
    let line = "page cache: production's (512 MiB) served 0.950 of its reads, device reads \
                of 138.5 KiB; the replay's (512 MiB) 0.931, device reads of 64 KiB";
    assert!(terminal(&r).contains(line), "{}", terminal(&r));
    // The terminal printed the model before the run; the files carry it.
    let escaped = line.replace('\'', "&#39;");
    for (text, line) in [(markdown(&r), line), (html(&r, "0"), escaped.as_str())] {
        assert!(text.contains(line), "{text}");
        assert!(
            text.contains("Zipf exponent 1.050, hot blocks together"),
            "{text}"
        );
    }
    assert!(model_text(&r.model, "1 GiB").contains("Zipf exponent 1.050"));
    // A memory ramp: each size's hit share and prediction beside production's.
    use dbio_compare::replay::{MemoryEvent, MemoryStep};
    let step = |bytes: u64, hit: f64, us: f64| MemoryStep {
        page_cache_bytes: bytes,
        hit_share: Some(hit),
        events: vec![MemoryEvent {
            event: "DataFileRead".into(),
            production_mean_us: Some(127.0),
            predicted_mean_us: Some(us),
        }],
    };
    r.memory = vec![step(512 << 20, 0.56, 140.0), step(1 << 30, 0.81, 90.0)];
    let t = terminal(&r);
    assert!(t.contains("page cache ramp:"), "{t}");
    assert!(t.contains("DataFileRead (production 127 µs)"), "{t}");
    let last = t
        .lines()
        .find(|l| l.contains("1 GiB") && l.contains("0.810"))
        .unwrap_or("");
    assert!(last.contains("90 µs"), "{t}");
    assert!(markdown(&r).contains("## Page cache ramp"));
}

#[test]
fn the_cpu_wait_shows_as_its_own_term_beside_the_storage_and_the_prediction() {
    let r = report(vec![
        event(
            "DataFileRead",
            "single-block-read",
            Some(18.0),
            Some("/proc/PID/schedstat of the 4 client backends"),
        ),
        event(
            "WALWrite+WALSync",
            "redo-write",
            None,
            Some("not known: a server on another host"),
        ),
    ]);
    let t = terminal(&r);
    assert!(
        t.contains(
            "DataFileRead: production 44 µs, here 40 µs (better by 9.1%): this \
             storage's 22 µs + 18 µs waiting for a CPU, as the server's processes did \
             during the capture (schedstat); 100 of 100"
        ),
        "{t}"
    );
    // With the replay's own wait known, the term says what it is beyond.
    let mut own = r.clone();
    own.events[0].own_cpu_wait_us = Some(3.0);
    let t = terminal(&own);
    assert!(
        t.contains(
            "this storage's 22 µs + 18 µs waiting for a CPU, what the server's \
             processes waited during the capture beyond the replay's own 3.0 µs (schedstat)"
        ),
        "{t}"
    );
    // Only the calls that slept wait to be woken: the term says on which share.
    own.events[0].slept_share = Some(0.25);
    let t = terminal(&own);
    assert!(
        t.contains(
            "beyond the replay's own 3.0 µs (schedstat), on the 25% of calls that slept here"
        ),
        "{t}"
    );
    own.events[0].slept_share = Some(0.0);
    let t = terminal(&own);
    assert!(
        t.contains(
            "this storage's 22 µs, no CPU wait added: none of these calls slept here, so \
             none waited to be woken"
        ),
        "{t}"
    );
    assert!(
        t.contains(
            "    WALWrite+WALSync: CPU wait not known: a server on another host; here is \
             this storage's mean alone"
        ),
        "{t}"
    );
    let m = model_text(&r.model, "1 GiB");
    assert!(
        m.contains(
            "  CPU wait of single-block-read: + 18 µs per call that sleeps, less the \
             replay's own wait, added to this storage's mean to predict production's \
             (/proc/PID/schedstat of the 4 client backends)"
        ),
        "{m}"
    );
    assert!(
        m.contains(
            "  CPU wait of redo-write: not known: a server on another host; the \
             prediction is this storage's mean alone"
        ),
        "{m}"
    );
    let md = markdown(&r);
    assert!(md.contains("+ CPU wait"), "{md}");
    assert!(md.contains("not known"), "{md}");
    let h = html(&r, "0");
    assert!(h.contains("/proc/PID/schedstat"), "{h}");
    assert!(h.contains("+ CPU wait"), "{h}");
    let j = json(&r);
    assert!(j.contains("\"predicted_mean_us\": 40.0"), "{j}");
}

#[test]
fn a_model_without_the_term_shows_the_storage_alone() {
    let r = report(vec![event(
        "db file sequential read",
        "single-block-read",
        None,
        None,
    )]);
    let (t, md, h) = (terminal(&r), markdown(&r), html(&r, "0"));
    assert!(
        t.contains("db file sequential read: production 44 µs, here 22 µs (2.0x better)"),
        "{t}"
    );
    for text in [&t, &md, &h, &model_text(&r.model, "1 GiB")] {
        assert!(!text.contains("CPU"), "{text}");
    }
    assert!(!json(&r).contains("predicted_mean_us"));
}

/// The reported case: reads 5.4x slower than production's, one WAL flush in 30 s
/// faster here, and a ramp to 1.5x.
fn slower() -> ReplayReport {
    use dbio_compare::replay::{ReplayStep, StepClass};
    use dbio_stats::slo::{Slo, SloOutcome, SloStat};
    let mut read = event("DataFileRead", "single-block-read", None, None);
    read.production_mean_us = Some(47.0);
    read.here_mean_us = Some(254.0);
    read.factor = Some(47.0 / 254.0);
    read.change_pct = Some((254.0 - 47.0) / 47.0 * 100.0);
    let mut wal = event("WALWrite+WALSync", "redo-write", None, None);
    wal.production_mean_us = Some(1000.0);
    wal.here_mean_us = Some(205.0);
    wal.factor = Some(1000.0 / 205.0);
    wal.too_few = Some("1 flush in 30 s".into());
    let mut r = report(vec![read, wal]);
    r.model.service_time = true;
    r.answer = Some(Answer::No);
    r.verdict = "No: at 1.0x production's load, DataFileRead is 5.4x slower than production \
                 (254 µs against 47 µs)"
        .into();
    r.serves_up_to = None;
    r.load = "the load holds up to 1.5x production's, the largest tried".into();
    r.slo = vec![SloOutcome {
        slo: Slo {
            class: "single-block-read".into(),
            limit_us: 47.0,
            stat: SloStat::Mean,
        },
        measured_us: Some(254.0),
        pass: false,
        line: "single-block-read mean 254us > 47us: FAIL".into(),
    }];
    let step = |scale: f64, read_us: f64| ReplayStep {
        scale,
        elapsed_s: 10.0,
        behind: false,
        pace: String::new(),
        kept: true,
        why: None,
        missed: vec![format!(
            "DataFileRead is slower than production at {scale}x"
        )],
        classes: vec![
            StepClass {
                class: "single-block-read".into(),
                asked_iops: 500.0 * scale,
                achieved_iops: 500.0 * scale,
                ios: (5000.0 * scale) as u64,
                mean_us: read_us,
                p99_us: read_us * 3.0,
                judged_us: Some(read_us),
            },
            StepClass {
                class: "redo-write".into(),
                asked_iops: 0.03,
                achieved_iops: 0.1,
                ios: 1,
                mean_us: 205.0,
                p99_us: 205.0,
                judged_us: Some(205.0),
            },
        ],
    };
    r.steps = vec![step(1.0, 254.0), step(1.5, 301.0)];
    r
}

#[test]
fn every_form_opens_with_the_answer_in_its_colour_and_nothing_coloured_above_it() {
    let r = slower();
    let t = terminal(&r);
    assert_eq!(t.lines().find(|l| !l.is_empty()), Some(r.verdict.as_str()));
    // Said once: not repeated as a second, other verdict.
    assert_eq!(t.matches(&r.verdict).count(), 1, "{t}");
    assert!(!t.contains("verdict:"), "{t}");
    let md = markdown(&r);
    let first = md.lines().find(|l| !l.is_empty() && !l.starts_with('#'));
    assert_eq!(
        first,
        Some(format!("**{}**", md_escape(&r.verdict)).as_str())
    );
    let h = html(&r, "0");
    let body = &h[h.find("</h1>").unwrap()..];
    let verdict = body.find(&crate::fmt::html_escape(&r.verdict)).unwrap();
    let first_colour = body.find("color:").unwrap();
    assert!(
        first_colour < verdict,
        "the verdict carries the first colour"
    );
    assert!(
        body[first_colour..].starts_with(&format!("color:{WORSE}")),
        "{}",
        &body[first_colour..first_colour + 20]
    );
    // The JSON carries it as a field, with the answer.
    let j: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
    assert_eq!(j["verdict"], r.verdict.as_str());
    assert_eq!(j["answer"], "no");
    // A yes is green; a file without an answer (format 1) plain.
    let mut yes = r.clone();
    yes.answer = Some(Answer::Yes);
    let h = html(&yes, "0");
    let body = &h[h.find("</h1>").unwrap()..];
    assert!(body[body.find("color:").unwrap()..].starts_with(&format!("color:{BETTER}")));
    yes.answer = None;
    let h = html(&yes, "0");
    let body = &h[h.find("</h1>").unwrap()..];
    assert!(body[body.find("color:").unwrap()..].starts_with("color:inherit"));
}

#[test]
fn an_event_with_too_few_ios_says_so_is_not_coloured_and_not_charted() {
    let r = slower();
    let wal = event_line(&r.events[1]);
    assert_eq!(
        wal,
        "WALWrite+WALSync: 1 flush in 30 s: too few to judge (production 1.0 ms, here 205 µs)"
    );
    assert!(!wal.contains("better"), "{wal}");
    let h = html(&r, "0");
    assert!(
        h.contains(&format!(
            "<li style=\"color:inherit\">{}</li>",
            crate::fmt::html_escape(&wal)
        )),
        "{h}"
    );
    let read = format!(
        "<li style=\"color:{WORSE}\">{}</li>",
        crate::fmt::html_escape(&event_line(&r.events[0]))
    );
    assert!(h.contains(&read), "{h}");
    assert!(markdown(&r).contains("1 flush in 30 s: too few to judge"));
    // The bars: DataFileRead alone, production's and this storage's.
    let bars = charts::latency_bars(&r);
    assert_eq!(bars.matches("<svg").count(), 1, "{bars}");
    assert!(bars.contains("DataFileRead"), "{bars}");
    assert!(!bars.contains("WALWrite"), "{bars}");
    assert!(bars.contains("production at DataFileRead: 47.00"), "{bars}");
    assert!(bars.contains("this storage at DataFileRead: 254"), "{bars}");
}

#[test]
fn the_page_charts_latencies_per_event_and_the_ramp_against_production_s() {
    let r = slower();
    let h = html(&r, "0");
    assert!(h.contains("Mean latency per event at 1.00x"), "{h}");
    // The ramp: the read's mean over production's at each step, labelled with the
    // latency itself, and production's latency as a dashed line at 1.
    let ramp = charts::ramp_chart(&r);
    assert!(h.contains(&ramp));
    assert!(ramp.contains("<title>DataFileRead: 1.50, "), "{ramp}");
    assert!(ramp.contains(">301 µs</text>"), "{ramp}");
    assert!(ramp.contains("production&#39;s latency"), "{ramp}");
    assert!(ramp.contains("stroke-dasharray"), "{ramp}");
    assert!(!ramp.contains("WALWrite"), "too few to judge: {ramp}");
    // The step table shows the mean judged beside the mean where they differ.
    assert!(!markdown(&r).contains("vs production"));
    let mut service = r.clone();
    service.steps[0].classes[0].mean_us = 900.0;
    let md = markdown(&service);
    assert!(md.contains("vs production"), "{md}");
    assert!(md.contains("| 900 µs |"), "{md}");
    // One step is no ramp.
    let mut one = r.clone();
    one.steps.truncate(1);
    assert_eq!(charts::ramp_chart(&one), "");
    // Latencies an order of magnitude apart get a chart each.
    let mut far = r.clone();
    far.events[1].too_few = None;
    far.events[1].production_mean_us = Some(5000.0);
    far.events[1].here_mean_us = Some(4000.0);
    let bars = charts::latency_bars(&far);
    assert_eq!(bars.matches("<svg").count(), 2, "{bars}");
    assert!(bars.contains("mean latency (ms)"), "{bars}");
}
