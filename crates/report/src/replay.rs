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
    for n in &m.not_replayed {
        let _ = writeln!(out, "  not replayed: {n}");
    }
    for n in &m.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    out
}

/// One event in a sentence: "db file sequential read: production 585 µs, here 212 µs
/// (2.8x better)".
pub fn event_line(e: &EventComparison) -> String {
    match (e.production_mean_us, e.here_mean_us, e.factor, e.change_pct) {
        (Some(p), Some(h), Some(f), Some(c)) => format!(
            "{}: production {}, here {} ({})",
            e.event,
            latency(p),
            latency(h),
            size_text(f, c)
        ),
        (None, Some(h), _, _) => format!(
            "{}: here {} ({})",
            e.event,
            latency(h),
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
                latency(h)
            )
        }
    }
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
    let mut t = Table::new(&[
        "<event",
        "production",
        "here",
        "<impact",
        "asked IOPS",
        "achieved IOPS",
    ]);
    for e in &r.events {
        t.row(vec![
            e.event.clone(),
            e.production_mean_us.map_or("-".into(), latency),
            e.here_mean_us.map_or("-".into(), latency),
            match (e.factor, e.change_pct) {
                (Some(f), Some(c)) => size_text(f, c),
                _ => "-".into(),
            },
            rate(e.asked_iops),
            rate(e.achieved_iops),
        ]);
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
    if !r.model.not_replayed.is_empty() || !r.model.notes.is_empty() {
        b += "<ul>\n";
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
