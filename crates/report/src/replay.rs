//! `dbio replay`: the workload model before the run, and the replay's report after it
//! (production beside this storage per event, the ramp, the headroom, the objectives)
//! as terminal text, Markdown, JSON and one HTML page. Impacts read as `dbio compare`'s
//! ("2.8x better", "worse by 12%").

use std::fmt::Write;

use dbio_compare::replay::{EventComparison, ReplayReport, WorkloadModel};

use crate::comparison_view::{size_text, BETTER, WORSE};
use crate::fmt::{bytes, html_escape as esc, md_escape, Table};

/// A bucket bound as Oracle titles its power-of-two buckets: 512us, 1ms (1024 us),
/// 32ms, 2s.
fn us_short(us: u64) -> String {
    match us {
        0..1024 => format!("{us}us"),
        1024..1_048_576 => format!("{}ms", us / 1024),
        _ => format!("{}s", us / 1_048_576),
    }
}
use crate::svg::{grouped_bars, BarSeries};

/// A latency for a sentence: "585 µs", "1.2 ms", "2.3 s".
pub fn latency(us: f64) -> String {
    if !us.is_finite() {
        "-".into()
    } else if us < 10.0 {
        format!("{us:.1} µs")
    } else if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.1} s", us / 1e6)
    }
}

/// The rate as a table shows it: 538, 1.30, 0.0125.
fn rate(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// The model as a table: class, rate, size, source.
pub fn model_table(m: &WorkloadModel) -> Table {
    let mut t = Table::new(&["<class", "IOPS", "size", "production", "<source"]);
    for c in &m.classes {
        t.row(vec![
            c.class.clone(),
            rate(c.rate),
            bytes(u64::from(c.size)),
            c.production_mean_us.map_or("-".into(), latency),
            c.source.clone(),
        ]);
    }
    t
}

/// The model before the run, for the terminal.
pub fn model_text(m: &WorkloadModel, dataset: &str) -> String {
    let mut out = format!("workload model of {}\n", m.source);
    out += &model_table(m).text("  ");
    let _ = writeln!(out, "  data set: {dataset}");
    if let Some(u) = m.users {
        let _ = writeln!(
            out,
            "  sessions: {u}, each with {} I/O in flight{}",
            m.outstanding.unwrap_or(1),
            m.engine
                .as_deref()
                .map_or(String::new(), |e| format!(", engine {e}"))
        );
    }
    for c in m.classes.iter().filter(|c| c.flush.is_some()) {
        let _ = writeln!(
            out,
            "  {}: {}, log {}",
            c.class,
            match c.flush.as_deref() {
                Some("fdatasync") => "written, then fdatasync",
                _ => "O_DSYNC writes",
            },
            if c.buffered == Some(true) {
                "through the page cache"
            } else {
                "as the data files"
            }
        );
    }
    for l in cpu_lines(m) {
        let _ = writeln!(out, "  {l}");
    }
    for n in &m.not_replayed {
        let _ = writeln!(out, "  not replayed: {n}");
    }
    for n in &m.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    out
}

/// The model's CPU-wait terms, one line per term (classes sharing one share a line):
/// "CPU wait of single-block-read, redo-write: + 18 µs per call that sleeps, less the
/// replay's own wait, added to this storage's mean (/proc/PID/schedstat of ...)". None
/// for models without them (AWR).
pub fn cpu_lines(m: &WorkloadModel) -> Vec<String> {
    let mut terms: Vec<(Option<f64>, &str, Vec<&str>)> = Vec::new();
    for c in &m.classes {
        let Some(source) = c.cpu_wait_source.as_deref() else {
            if c.cpu_wait_us.is_some() {
                terms.push((c.cpu_wait_us, "", vec![c.class.as_str()]));
            }
            continue;
        };
        match terms
            .iter_mut()
            .find(|t| t.0 == c.cpu_wait_us && t.1 == source)
        {
            Some(t) => t.2.push(&c.class),
            None => terms.push((c.cpu_wait_us, source, vec![c.class.as_str()])),
        }
    }
    terms
        .into_iter()
        .map(|(us, source, classes)| match us {
            Some(us) => format!(
                "CPU wait of {}: + {} per call that sleeps, less the replay's own wait, added \
                 to this storage's mean to predict production's{}",
                classes.join(", "),
                latency(us),
                if source.is_empty() {
                    String::new()
                } else {
                    format!(" ({source})")
                }
            ),
            None => format!(
                "CPU wait of {}: {}; the prediction is this storage's mean alone",
                classes.join(", "),
                source
            ),
        })
        .collect()
}

/// Why an event's prediction has no CPU-wait term, where its model would have one.
fn cpu_unknown(e: &EventComparison) -> Option<String> {
    if e.cpu_wait_us.is_some() {
        return None;
    }
    e.cpu_wait_note.as_deref().map(|n| {
        format!(
            "{}: CPU wait {n}; here is this storage's mean alone",
            e.event
        )
    })
}

/// "here" in a sentence: the prediction where the model adds a CPU wait, else the
/// storage's mean.
fn here_text(e: &EventComparison, h: f64) -> String {
    latency(e.predicted_mean_us.unwrap_or(h))
}

/// The prediction's two terms, after an event's sentence: ": this storage's 22 µs +
/// 18 µs waiting for a CPU, ...".
fn cpu_terms(e: &EventComparison) -> String {
    let slept = e.slept_share.map_or(String::new(), |p| {
        format!(", on the {:.0}% of calls that slept here", p * 100.0)
    });
    let terms = match (e.here_mean_us, e.cpu_wait_us, e.predicted_mean_us) {
        (Some(h), Some(_), Some(_)) if e.slept_share == Some(0.0) => {
            return format!(
                ": this storage's {}, no CPU wait added: none of these calls slept here, so \
                 none waited to be woken",
                latency(h)
            )
        }
        (Some(h), Some(w), Some(_)) => match e.own_cpu_wait_us {
            Some(own) => format!(
                ": this storage's {} + {} waiting for a CPU, what the server's processes \
                 waited during the capture beyond the replay's own {} (schedstat)",
                latency(h),
                latency(w),
                latency(own)
            ),
            None => format!(
                ": this storage's {} + {} waiting for a CPU, as the server's processes did \
                 during the capture (schedstat)",
                latency(h),
                latency(w)
            ),
        },
        _ => return String::new(),
    };
    terms + &slept
}

/// One event in a sentence: "db file sequential read: production 585 µs, here 212 µs
/// (2.8x better)".
pub fn event_line(e: &EventComparison) -> String {
    let line = match (e.production_mean_us, e.here_mean_us, e.factor, e.change_pct) {
        (Some(p), Some(h), Some(f), Some(c)) => format!(
            "{}: production {}, here {} ({})",
            e.event,
            latency(p),
            here_text(e, h),
            size_text(f, c)
        ),
        (None, Some(h), _, _) => format!(
            "{}: here {} ({})",
            e.event,
            here_text(e, h),
            e.production_note
                .as_deref()
                .unwrap_or("the report gives no production mean")
        ),
        (_, None, _, _) => format!("{}: no I/O of {} completed here", e.event, e.class),
        (Some(p), Some(h), _, _) => {
            format!(
                "{}: production {}, here {}",
                e.event,
                latency(p),
                here_text(e, h)
            )
        }
    };
    line + &cpu_terms(e)
}

fn step_table(r: &ReplayReport) -> Table {
    let mut t = Table::new(&[
        "scale", "<class", "asked", "achieved", "mean", "p99", "<kept",
    ]);
    for s in &r.steps {
        for (i, c) in s.classes.iter().enumerate() {
            t.row(vec![
                if i == 0 {
                    format!("{:.2}x", s.scale)
                } else {
                    String::new()
                },
                c.class.clone(),
                rate(c.asked_iops),
                rate(c.achieved_iops),
                if c.ios > 0 {
                    latency(c.mean_us)
                } else {
                    "-".into()
                },
                if c.ios > 0 {
                    latency(c.p99_us)
                } else {
                    "-".into()
                },
                if i > 0 {
                    String::new()
                } else if s.kept {
                    "yes".into()
                } else {
                    "no".into()
                },
            ]);
        }
    }
    t
}

fn histogram_text(e: &EventComparison) -> Option<String> {
    if e.histogram.is_empty() {
        return None;
    }
    let cells: Vec<String> = e
        .histogram
        .iter()
        .filter(|h| h.production_pct > 0.0 || h.here_pct > 0.0)
        .map(|h| {
            let upper = if h.upper_us == u64::MAX {
                "inf".into()
            } else {
                us_short(h.upper_us)
            };
            format!("<{upper} {:.1}/{:.1}", h.production_pct, h.here_pct)
        })
        .collect();
    Some(format!(
        "    % of waits, production/here: {}",
        cells.join(", ")
    ))
}

/// The replay for the terminal.
pub fn terminal(r: &ReplayReport) -> String {
    let mut out = format!("\nreplay of {}\n", r.model.source);
    let _ = writeln!(
        out,
        "production against this storage at {:.2}x:",
        r.reference_scale
    );
    for e in &r.events {
        let _ = writeln!(
            out,
            "  {}; {} of {} I/Os per second",
            event_line(e),
            rate(e.achieved_iops),
            rate(e.asked_iops)
        );
        if let Some(c) = cpu_unknown(e) {
            let _ = writeln!(out, "    {c}");
        }
        if let Some(h) = histogram_text(e) {
            let _ = writeln!(out, "{h}");
        }
    }
    out += "ramp:\n";
    out += &step_table(r).text("  ");
    for s in r.steps.iter().filter(|s| s.behind) {
        let _ = writeln!(out, "  at {:.2}x: {}", s.scale, s.pace);
    }
    if !r.slo.is_empty() {
        let _ = writeln!(out, "objectives at {:.2}x:", r.reference_scale);
        for o in &r.slo {
            let _ = writeln!(out, "  {}", o.line);
        }
    }
    let _ = writeln!(out, "verdict: {}", r.verdict);
    if let Some(o) = objectives_summary(r) {
        let _ = writeln!(out, "{o}");
    }
    out
}

/// One line on the objectives beside the headroom: keeping the load and keeping
/// production's latency are different questions, and a DBA reads both first.
/// "objectives at 1.00x: 2 of 5 met; missed: single-block-read, direct-read".
pub fn objectives_summary(r: &ReplayReport) -> Option<String> {
    if r.slo.is_empty() {
        return None;
    }
    let met = r.slo.iter().filter(|o| o.pass).count();
    let missed: Vec<&str> = r
        .slo
        .iter()
        .filter(|o| !o.pass)
        .map(|o| o.slo.class.as_str())
        .collect();
    let mut line = format!(
        "objectives at {:.2}x: {met} of {} met",
        r.reference_scale,
        r.slo.len()
    );
    if !missed.is_empty() {
        line += &format!("; missed: {}", missed.join(", "));
    }
    Some(line)
}

/// The replay as Markdown.
pub fn markdown(r: &ReplayReport) -> String {
    let mut out = format!(
        "# dbio replay\n\n{}\n\n**Verdict:** {}{}\n\n## Workload model\n\n",
        md_escape(&r.model.source),
        md_escape(&r.verdict),
        objectives_summary(r).map_or(String::new(), |o| format!("  \n**{}**", md_escape(&o)))
    );
    out += &model_table(&r.model).markdown();
    for l in cpu_lines(&r.model) {
        let _ = writeln!(out, "\n- {}", md_escape(&l));
    }
    for n in &r.model.not_replayed {
        let _ = writeln!(out, "\n- not replayed: {}", md_escape(n));
    }
    for n in &r.model.notes {
        let _ = writeln!(out, "\n- note: {}", md_escape(n));
    }
    let _ = write!(
        out,
        "\n## Production against this storage at {:.2}x\n\n",
        r.reference_scale
    );
    out += &event_table(r).markdown();
    for c in r.events.iter().filter_map(cpu_unknown) {
        let _ = writeln!(out, "\n- {}", md_escape(&c));
    }
    out += "\n## Ramp\n\n";
    out += &step_table(r).markdown();
    if !r.slo.is_empty() {
        out += "\n## Objectives\n\n";
        for o in &r.slo {
            let _ = writeln!(out, "- {}", md_escape(&o.line));
        }
    }
    out
}

fn event_table(r: &ReplayReport) -> Table {
    // Where the model has a CPU-wait term (PostgreSQL), the storage's figure, the term
    // and the prediction each in a column; else (AWR) the storage's alone.
    let cpu = r
        .events
        .iter()
        .any(|e| e.cpu_wait_us.is_some() || e.cpu_wait_note.is_some());
    let mut head = vec!["<event", "production"];
    if cpu {
        head.extend(["this storage", "+ CPU wait", "here, predicted"]);
    } else {
        head.push("here");
    }
    head.extend(["<impact", "asked IOPS", "achieved IOPS"]);
    let mut t = Table::new(&head);
    for e in &r.events {
        let mut row = vec![
            e.event.clone(),
            e.production_mean_us.map_or("-".into(), latency),
            e.here_mean_us.map_or("-".into(), latency),
        ];
        if cpu {
            row.push(match (e.cpu_wait_us, e.cpu_wait_note.is_some()) {
                (Some(w), _) => latency(w),
                (None, true) => "not known".into(),
                (None, false) => "-".into(),
            });
            row.push(
                e.predicted_mean_us
                    .or(e.here_mean_us)
                    .map_or("-".into(), latency),
            );
        }
        row.extend([
            match (e.factor, e.change_pct) {
                (Some(f), Some(c)) => size_text(f, c),
                _ => "-".into(),
            },
            rate(e.asked_iops),
            rate(e.achieved_iops),
        ]);
        t.row(row);
    }
    t
}

/// The replay as JSON (the [`ReplayReport`] fields are the schema).
pub fn json(r: &ReplayReport) -> String {
    serde_json::to_string_pretty(r).unwrap_or_default() + "\n"
}

/// The replay as one self-contained HTML page.
pub fn html(r: &ReplayReport, version: &str) -> String {
    let mut b = String::new();
    // The headroom and the objectives each in their own colour: a storage can keep
    // twice the load and still be slower than production.
    let _ = writeln!(
        b,
        "<p class=\"verdict\" style=\"font-size:1.25em;font-weight:600;color:{}\">{}</p>",
        if r.headroom.is_some() { BETTER } else { WORSE },
        esc(&r.verdict)
    );
    if let Some(o) = objectives_summary(r) {
        let met = r.slo.iter().all(|o| o.pass);
        let _ = writeln!(
            b,
            "<p class=\"verdict\" style=\"font-size:1.1em;font-weight:600;color:{}\">{}</p>",
            if met { BETTER } else { WORSE },
            esc(&o)
        );
    }
    b += "<h2>Production against this storage</h2>\n";
    let _ = writeln!(
        b,
        "<p class=\"sub\">Per wait event at {:.2}x the production load: production's mean \
         wait (from its own figures) and this storage's{}, and how many times better or \
         worse.</p>",
        r.reference_scale,
        if r.model.service_time {
            " (its service time: the latency less any wait for a free session, as production \
             timed each call)"
        } else {
            ""
        }
    );
    if r.events.iter().any(|e| e.cpu_wait_us.is_some()) {
        b += "<p class=\"sub\">Production's processes also waited for a CPU after each \
              call that slept (the kernel's run-queue time per timeslice, /proc/PID/schedstat, \
              during the capture): that wait is in production's times, and this storage's \
              hold only what the replay's own threads waited, so the prediction is this \
              storage's mean plus production's wait beyond the replay's own, for the \
              share of calls that slept here.</p>\n";
    }
    b += "<ul>\n";
    for e in &r.events {
        let colour = match e.factor {
            Some(f) if f > 1.0 => BETTER,
            Some(_) => WORSE,
            None => "inherit",
        };
        let _ = writeln!(
            b,
            "<li style=\"color:{colour}\">{}</li>",
            esc(&event_line(e))
        );
        if let Some(c) = cpu_unknown(e) {
            let _ = writeln!(b, "<li>{}</li>", esc(&c));
        }
    }
    b += "</ul>\n";
    b += &event_table(r).html();
    for e in r.events.iter().filter(|e| !e.histogram.is_empty()) {
        b += &histogram_chart(e);
    }
    if !r.slo.is_empty() {
        b += "<h2>Objectives</h2>\n<ul>\n";
        for o in &r.slo {
            let colour = if o.pass { BETTER } else { WORSE };
            let _ = writeln!(b, "<li style=\"color:{colour}\">{}</li>", esc(&o.line));
        }
        b += "</ul>\n";
    }
    b += "<h2>Ramp</h2>\n<p class=\"sub\">Each step runs the model's rates times its scale, \
          open loop. A step keeps its load when every class achieves its asked rate (within \
          2%) with its mean within 2x of its own at the reference scale.</p>\n";
    b += &step_table(r).html();
    for s in r.steps.iter().filter(|s| s.behind || s.why.is_some()) {
        let _ = writeln!(
            b,
            "<p>{:.2}x: {}</p>",
            s.scale,
            esc(s.why.as_deref().unwrap_or(&s.pace))
        );
    }
    b += "<h2>Workload model</h2>\n";
    // The sources are long sentences: that column wraps, in smaller type.
    b += &model_table(&r.model)
        .html()
        .replacen("<table>", "<table class=\"wrap-last\">", 1);
    let cpu = cpu_lines(&r.model);
    if !r.model.not_replayed.is_empty() || !r.model.notes.is_empty() || !cpu.is_empty() {
        b += "<ul>\n";
        for l in &cpu {
            let _ = writeln!(b, "<li>{}</li>", esc(l));
        }
        for n in &r.model.not_replayed {
            let _ = writeln!(b, "<li>not replayed: {}</li>", esc(n));
        }
        for n in &r.model.notes {
            let _ = writeln!(b, "<li>note: {}</li>", esc(n));
        }
        b += "</ul>\n";
    }
    crate::html::page("dbio replay", &r.model.source, &b, version)
}

fn histogram_chart(e: &EventComparison) -> String {
    let rows: Vec<_> = e
        .histogram
        .iter()
        .filter(|h| h.production_pct > 0.0 || h.here_pct > 0.0)
        .collect();
    let groups: Vec<String> = rows
        .iter()
        .map(|h| {
            if h.upper_us == u64::MAX {
                "more".into()
            } else {
                format!("<{}", us_short(h.upper_us))
            }
        })
        .collect();
    let series = [
        BarSeries {
            name: "production".into(),
            color: "#8a939b",
            values: rows
                .iter()
                .map(|h| Some((h.production_pct, None)))
                .collect(),
        },
        BarSeries {
            name: "here".into(),
            color: "#1f6feb",
            values: rows.iter().map(|h| Some((h.here_pct, None))).collect(),
        },
    ];
    grouped_bars(
        &format!("{}: production and here", e.event),
        "wait",
        "% of waits",
        &groups,
        &series,
    )
}

#[cfg(test)]
mod tests {
    use dbio_compare::replay::{ModelClass, ReplayReport, WorkloadModel};

    use super::*;

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
            verdict: "serves 1.0x the production load".into(),
            slo: Vec::new(),
        }
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
}
