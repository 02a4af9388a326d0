//! The replay as one self-contained HTML page. The answer comes first, in its colour
//! (green yes, red no, plain when it cannot say), and nothing above it has a colour of
//! its own: the page answers once.

use std::fmt::Write;

use dbio_compare::replay::{Answer, EventComparison, ReplayReport, MIN_IOS_JUDGED};
use dbio_stats::slo::SloStat;

use super::{
    charts, cpu_lines, cpu_unknown, event_line, event_table, memory_table, model_table,
    objectives_summary, page_cache_line, shape_lines, step_table,
};
use crate::comparison_view::{BETTER, WORSE};
use crate::fmt::html_escape as esc;

/// The answer's colour; none for a file written before there was one.
fn answer_colour(a: Option<Answer>) -> &'static str {
    match a {
        Some(Answer::Yes) => BETTER,
        Some(Answer::No) => WORSE,
        Some(Answer::CannotSay) | None => "inherit",
    }
}

/// An event's colour: that of its objective where production's own mean is the
/// objective (within it green, over it red), plain where the event is not judged
/// against production's (too few I/Os, no production mean, or an objective of
/// `--slo`), so that its colour never says what the answer does not.
fn event_colour(r: &ReplayReport, e: &EventComparison) -> &'static str {
    let production = r.model.class(&e.class).and_then(|c| c.production_mean_us);
    match r.slo.iter().find(|o| o.slo.class == e.class) {
        Some(o) if o.slo.stat == SloStat::Mean && Some(o.slo.limit_us) == production => {
            if o.pass {
                BETTER
            } else {
                WORSE
            }
        }
        _ => "inherit",
    }
}

/// The replay as one self-contained HTML page.
pub fn html(r: &ReplayReport, version: &str) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<p class=\"verdict\" style=\"font-size:1.25em;font-weight:600;color:{}\">{}</p>",
        answer_colour(r.answer),
        esc(&r.verdict)
    );
    let _ = writeln!(b, "<p class=\"sub\">{}</p>", esc(&r.model.source));
    b += "<h2>Production against this storage</h2>\n";
    let _ = writeln!(
        b,
        "<p class=\"sub\">Per wait event at {:.2}x the production load: production's mean \
         wait (from its own figures) and this storage's{}, and how many times better or \
         worse. An event with fewer than {MIN_IOS_JUDGED} I/Os in production's window or \
         in the step is not judged: a mean of so few is too uncertain.</p>",
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
        let _ = writeln!(
            b,
            "<li style=\"color:{}\">{}</li>",
            event_colour(r, e),
            esc(&event_line(e))
        );
        if let Some(c) = cpu_unknown(e) {
            let _ = writeln!(b, "<li>{}</li>", esc(&c));
        }
    }
    if let Some(l) = page_cache_line(r) {
        let _ = writeln!(b, "<li>{}</li>", esc(&l));
    }
    b += "</ul>\n";
    b += &charts::latency_bars(r);
    b += &event_table(r).html();
    if let Some(t) = memory_table(r) {
        b += "<h2>Page cache ramp</h2>\n";
        b += &t.html();
    }
    // A histogram of too few waits is noise drawn as a shape.
    for e in r
        .events
        .iter()
        .filter(|e| !e.histogram.is_empty() && e.too_few.is_none())
    {
        b += &charts::histogram_chart(e);
    }
    if let Some(summary) = objectives_summary(r) {
        let _ = writeln!(b, "<h2>Objectives</h2>\n<p>{}</p>\n<ul>", esc(&summary));
        for o in &r.slo {
            let colour = if o.pass { BETTER } else { WORSE };
            let _ = writeln!(b, "<li style=\"color:{colour}\">{}</li>", esc(&o.line));
        }
        b += "</ul>\n";
    }
    b += "<h2>Ramp</h2>\n<p class=\"sub\">Each step runs the model's rates times its scale, \
          open loop. A step keeps its load when every class achieves its asked rate (within \
          2%) with its mean within 2x of its own at the reference scale; it serves \
          production's load when it also meets every objective (judged on the mean set \
          beside production's: \"vs production\", where that differs).</p>\n";
    b += &charts::ramp_chart(r);
    b += &step_table(r).html();
    for s in &r.steps {
        let mut notes: Vec<&str> = s.missed.iter().map(String::as_str).collect();
        match s.why.as_deref() {
            Some(w) => notes.push(w),
            None if s.behind => notes.push(&s.pace),
            None => {}
        }
        if !notes.is_empty() {
            let _ = writeln!(b, "<p>{:.2}x: {}</p>", s.scale, esc(&notes.join("; ")));
        }
    }
    if !r.load.is_empty() {
        let _ = writeln!(b, "<p>{}</p>", esc(&r.load));
    }
    b += "<h2>Workload model</h2>\n";
    // The sources are long sentences: that column wraps, in smaller type.
    b += &model_table(&r.model)
        .html()
        .replacen("<table>", "<table class=\"wrap-last\">", 1);
    let mut cpu = cpu_lines(&r.model);
    cpu.extend(shape_lines(&r.model));
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
    // The source goes under the answer, not above it.
    crate::html::page("dbio replay", "", &b, version)
}
