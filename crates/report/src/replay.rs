//! `dbio replay`: the workload model before the run, and the replay's report after it
//! as terminal text, Markdown, JSON and one HTML page ([`html`], with its charts).
//! Every form opens with the one answer (the report's `verdict`), then production
//! beside this storage per event, the ramp and the objectives. Impacts read as `dbio
//! compare`'s ("2.8x better", "worse by 12%").

use std::fmt::Write;

use dbio_compare::replay::{EventComparison, ReplayReport};
use dbio_sources::WorkloadModel;

use crate::comparison_view::size_text;
use crate::fmt::{bytes, md_escape, Table};

#[path = "replay_charts.rs"]
mod charts;
#[path = "replay_html.rs"]
mod page;
#[path = "replay_words.rs"]
mod words;
pub use page::html;
pub use words::latency;
use words::us_short;

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
    // As the replay's plan takes it (experiment::replay_plan).
    if m.page_writer() {
        let _ = writeln!(
            out,
            "  page writes: from a writer of their own (the sessions never wait behind \
             them), each submitted and timed to its submission"
        );
    }
    for c in m
        .classes
        .iter()
        .filter(|c| c.async_share.is_some() && c.class.ends_with("-read"))
    {
        let _ = writeln!(
            out,
            "  {}: {:.1}% submitted and timed to their submission, the rest waited for",
            c.class,
            100.0 * c.async_share.unwrap_or(0.0)
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
    for l in shape_lines(m) {
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

/// Where the model's reads go: the relations, the skew within them, and production's
/// page cache. None for models without them (AWR).
pub fn shape_lines(m: &WorkloadModel) -> Vec<String> {
    let mut out = Vec::new();
    if !m.relations.is_empty() {
        let top: Vec<String> = m
            .relations
            .iter()
            .take(4)
            .map(|r| format!("{} {} {:.0}%", r.name, bytes(r.bytes), r.share * 100.0))
            .collect();
        out.push(format!(
            "relations read: {}{}",
            top.join(", "),
            if m.relations.len() > 4 {
                format!(" and {} more", m.relations.len() - 4)
            } else {
                String::new()
            }
        ));
    }
    if let Some(p) = &m.page_cache {
        if let Some(b) = p.buffer_pool_bytes {
            out.push(format!(
                "production's buffer pool: {}, served {} of the accesses (replayed: a pool \
                 of that size in front of the reads)",
                bytes(b),
                p.buffer_pool_hit_share
                    .map_or("an unknown share".into(), |h| format!("{h:.3}")),
            ));
        }
    }
    match &m.page_cache {
        Some(p) if !m.data_buffered && p.bytes.is_none() => out.push(format!(
            "production's page cache: none ({})",
            p.bytes_source
        )),
        _ => {}
    }
    if let Some(p) = m
        .page_cache
        .as_ref()
        .filter(|p| m.data_buffered || p.bytes.is_some())
    {
        out.push(format!(
            "production's page cache: {}, served {} of the reads, device reads of {} ({}; {})",
            p.bytes.map_or("size not known".into(), bytes),
            p.hit_share
                .map_or("an unknown share".into(), |h| format!("{h:.3}")),
            p.device_read_bytes.map_or("unknown size".into(), bytes),
            p.bytes_source,
            p.hit_source
        ));
    }
    if let Some(p) = &m.page_cache {
        if !p.skew_source.is_empty() {
            out.push(format!(
                "skew within each relation: {}{} ({})",
                p.skew
                    .map_or("none".into(), |s| format!("Zipf exponent {s:.3}")),
                if p.clustered {
                    ", hot blocks together"
                } else {
                    ""
                },
                p.skew_source
            ));
        }
    }
    out
}

/// Production's page cache beside the replay's, in one line.
pub fn page_cache_line(r: &ReplayReport) -> Option<String> {
    let p = r.page_cache.as_ref()?;
    // Nothing of production's cache known and none in the replay (a server that read
    // O_DIRECT, as InnoDB does): nothing to set side by side.
    let known = p.production_hit_share.is_some()
        || p.production_bytes.is_some()
        || p.production_device_read_bytes.is_some();
    if !known && p.replay_bytes.is_none() {
        return None;
    }
    let share = |h: Option<f64>| h.map_or("an unknown share".into(), |h| format!("{h:.3}"));
    let size = |b: Option<u64>| b.map_or("unknown size".into(), bytes);
    Some(format!(
        "page cache: production's ({}) served {} of its reads, device reads of {}; the \
         replay's ({}) {}, device reads of {} ({})",
        size(p.production_bytes),
        share(p.production_hit_share),
        size(p.production_device_read_bytes),
        p.replay_bytes.map_or("none, O_DIRECT".into(), bytes),
        share(p.replay_hit_share),
        size(p.replay_device_read_bytes),
        p.replay_source
    ))
}

/// A memory ramp (`--page-cache A,B,...`) as a table: each size, the replay's hit
/// share and each read event's prediction beside production's mean.
pub fn memory_table(r: &ReplayReport) -> Option<Table> {
    let first = r.memory.first()?;
    let mut head = vec!["page cache".to_string(), "hit share".to_string()];
    for e in &first.events {
        head.push(format!(
            "{} (production {})",
            e.event,
            us(e.production_mean_us)
        ));
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = Table::new(&head);
    for m in &r.memory {
        let mut row = vec![
            bytes(m.page_cache_bytes),
            m.hit_share.map_or("-".into(), |h| format!("{h:.3}")),
        ];
        row.extend(m.events.iter().map(|e| us(e.predicted_mean_us)));
        t.row(row);
    }
    Some(t)
}

fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0} µs"))
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
/// (2.8x better)"; an event with too few I/Os says so before its figures, which then
/// judge nothing: "WALWrite+WALSync: 1 flush in 30 s: too few to judge (production
/// 1.0 ms, here 205 µs)".
pub fn event_line(e: &EventComparison) -> String {
    if let Some(few) = &e.too_few {
        let figures: Vec<String> = [
            e.production_mean_us
                .map(|p| format!("production {}", latency(p))),
            e.here_mean_us.map(|h| format!("here {}", here_text(e, h))),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut line = format!("{}: {few}: too few to judge", e.event);
        if !figures.is_empty() {
            line += &format!(" ({})", figures.join(", "));
        }
        return line;
    }
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
    // Where the mean set beside production's is not the mean itself (service times, a
    // CPU term), both: the answer is on the one, the load on the other.
    let judged = r.steps.iter().flat_map(|s| &s.classes).any(|c| {
        c.judged_us
            .is_some_and(|j| (j - c.mean_us).abs() > 0.005 * c.mean_us.max(1.0))
    });
    let mut head = vec!["scale", "<class", "asked", "achieved", "mean", "p99"];
    if judged {
        head.push("vs production");
    }
    head.push("<kept");
    let mut t = Table::new(&head);
    let ran = |c: &dbio_compare::replay::StepClass, v: f64| {
        if c.ios > 0 {
            latency(v)
        } else {
            "-".into()
        }
    };
    for s in &r.steps {
        for (i, c) in s.classes.iter().enumerate() {
            let mut row = vec![
                if i == 0 {
                    format!("{:.2}x", s.scale)
                } else {
                    String::new()
                },
                c.class.clone(),
                rate(c.asked_iops),
                rate(c.achieved_iops),
                ran(c, c.mean_us),
                ran(c, c.p99_us),
            ];
            if judged {
                row.push(c.judged_us.map_or("-".into(), latency));
            }
            row.push(if i > 0 {
                String::new()
            } else if s.kept {
                "yes".into()
            } else {
                "no".into()
            });
            t.row(row);
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

/// The replay for the terminal: the answer first, on a line of its own.
pub fn terminal(r: &ReplayReport) -> String {
    let mut out = format!("\n{}\n\nreplay of {}\n", r.verdict, r.model.source);
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
        if let Some(h) = histogram_text(e).filter(|_| e.too_few.is_none()) {
            let _ = writeln!(out, "{h}");
        }
    }
    if let Some(l) = page_cache_line(r) {
        let _ = writeln!(out, "  {l}");
    }
    if let Some(t) = memory_table(r) {
        out += "page cache ramp:\n";
        out += &t.text("  ");
    }
    out += "ramp:\n";
    out += &step_table(r).text("  ");
    for s in r.steps.iter().filter(|s| s.behind) {
        let _ = writeln!(out, "  at {:.2}x: {}", s.scale, s.pace);
    }
    for s in r.steps.iter().filter(|s| !s.missed.is_empty()) {
        let _ = writeln!(out, "  at {:.2}x: {}", s.scale, s.missed.join("; "));
    }
    if !r.load.is_empty() {
        let _ = writeln!(out, "  {}", r.load);
    }
    if let Some(o) = objectives_summary(r) {
        let _ = writeln!(out, "{o}");
        for o in &r.slo {
            let _ = writeln!(out, "  {}", o.line);
        }
    }
    out
}

/// The objectives in one line, over their list: "objectives at 1.00x: 2 of 5 met;
/// missed: single-block-read, direct-read".
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

/// The replay as Markdown: the answer first, in bold.
pub fn markdown(r: &ReplayReport) -> String {
    let mut out = format!(
        "# dbio replay\n\n**{}**\n\n{}\n\n## Workload model\n\n",
        md_escape(&r.verdict),
        md_escape(&r.model.source),
    );
    out += &model_table(&r.model).markdown();
    for l in cpu_lines(&r.model).iter().chain(&shape_lines(&r.model)) {
        let _ = writeln!(out, "\n- {}", md_escape(l));
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
    if let Some(l) = page_cache_line(r) {
        let _ = writeln!(out, "\n- {}", md_escape(&l));
    }
    if let Some(t) = memory_table(r) {
        out += "\n## Page cache ramp\n\n";
        out += &t.markdown();
    }
    out += "\n## Ramp\n\n";
    out += &step_table(r).markdown();
    for s in r.steps.iter().filter(|s| !s.missed.is_empty()) {
        let _ = writeln!(
            out,
            "\n- at {:.2}x: {}",
            s.scale,
            md_escape(&s.missed.join("; "))
        );
    }
    if !r.load.is_empty() {
        let _ = writeln!(out, "\n{}", md_escape(&r.load));
    }
    if let Some(o) = objectives_summary(r) {
        let _ = writeln!(out, "\n## Objectives\n\n{}\n", md_escape(&o));
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
            match (e.factor, e.change_pct, &e.too_few) {
                (_, _, Some(few)) => format!("{few}: too few to judge"),
                (Some(f), Some(c), None) => size_text(f, c),
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

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
