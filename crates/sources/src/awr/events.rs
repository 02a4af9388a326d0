//! Wait events: the Top events table and the Foreground and Background Wait Events
//! tables, with each event's mean wait taken from the most precise figures printed.

use super::doc::{AwrError, Doc};
use super::model::{MeanSource, WaitEvent};
use super::table::{duration_us, figure, io_event, number, squeeze, wait_class, Table};

/// One event row as printed, with the precision of each figure.
struct Printed {
    event: String,
    wait_class: String,
    /// (value, step of the last printed digit)
    waits: Option<(f64, f64)>,
    /// Seconds, with their step.
    time_s: Option<(f64, f64)>,
    /// The Avg column in microseconds, with its step.
    avg_us: Option<(f64, f64)>,
    pct: Option<f64>,
}

/// Where each column of an events table is.
struct Columns {
    waits: Option<usize>,
    time: usize,
    time_unit_s: f64,
    avg: Option<usize>,
    avg_unit_us: f64,
    pct: Option<usize>,
    class: Option<usize>,
}

fn columns(doc: &Doc, t: &Table) -> Result<Columns, AwrError> {
    let time = t
        .column(|h| h.contains("time") && !h.contains('%') && !h.starts_with("avg"))
        .ok_or_else(|| {
            doc.err(
                t.line,
                format!("a total wait time column in \"{}\"", t.title),
            )
        })?;
    let avg = t.column(|h| h.contains("avg") && !h.contains("/txn"));
    let unit_of = |c: Option<usize>| c.map(|c| squeeze(&t.headers[c]).to_lowercase());
    let time_unit_s = match unit_of(Some(time)).as_deref() {
        Some(h) if h.contains("(ms)") => 1e-3,
        _ => 1.0,
    };
    let avg_unit_us = match unit_of(avg).as_deref() {
        Some(h) if h.contains("(us)") => 1.0,
        Some(h) if h.contains("(s)") || h.contains("(sec)") => 1e6,
        _ => 1e3,
    };
    Ok(Columns {
        waits: t.column(|h| h == "waits"),
        time,
        time_unit_s,
        avg,
        avg_unit_us,
        pct: t.column(|h| h.starts_with("%db") || h.starts_with("%bg")),
        class: t.column(|h| h.contains("class")),
    })
}

/// The rows of one events table; a row whose figures cannot be read is an error that
/// names its line.
fn rows(doc: &Doc, t: &Table) -> Result<Vec<Printed>, AwrError> {
    let c = columns(doc, t)?;
    let mut out = Vec::new();
    for r in &t.rows {
        let event = r.cell(0).to_string();
        if event.is_empty() {
            return Err(doc.err(r.line, "an event name in the first column"));
        }
        let time_s = figure(r.cell(c.time))
            .or_else(|| figure(r.cell(c.time).split_whitespace().next().unwrap_or("")))
            .map(|(v, step)| (v * c.time_unit_s, step * c.time_unit_s))
            .ok_or_else(|| doc.err(r.line, format!("the total wait time of \"{event}\"")))?;
        let waits_cell = c.waits.map_or("", |i| r.cell(i));
        let waits =
            if waits_cell.is_empty() {
                None
            } else {
                Some(figure(waits_cell).ok_or_else(|| {
                    doc.err(r.line, format!("the number of waits of \"{event}\""))
                })?)
            };
        let avg_cell = c.avg.map_or("", |i| r.cell(i));
        let avg_us = match avg_cell {
            "" => None,
            s => Some(duration_us(s, c.avg_unit_us).ok_or_else(|| {
                doc.err(
                    r.line,
                    format!("the average wait of \"{event}\", e.g. 391.26us or 0.39"),
                )
            })?),
        };
        out.push(Printed {
            wait_class: c.class.map_or(String::new(), |i| wait_class(r.cell(i))),
            waits,
            time_s: Some(time_s),
            avg_us,
            pct: c.pct.and_then(|i| number(r.cell(i))),
            event,
        });
    }
    Ok(out)
}

/// Whether a name printed in a Wait Events table (cut to 26 characters in text
/// reports) is `whole`.
fn same_event(printed: &str, whole: &str) -> bool {
    printed == whole || (printed.len() >= 20 && whole.starts_with(printed))
}

/// A mean wait and its rounding error (us) from total time over waits.
fn time_over_waits(p: &Printed) -> Option<(f64, f64)> {
    let (t, t_step) = p.time_s?;
    let (w, w_step) = p.waits?;
    if w <= 0.0 {
        return None;
    }
    let mean = t / w * 1e6;
    Some((mean, t_step / 2.0 / w * 1e6 + mean * (w_step / 2.0) / w))
}

/// The most precise mean among the printed rows of one event (Top row first).
fn best_mean(top: Option<&Printed>, listed: Option<&Printed>) -> Option<(f64, f64, MeanSource)> {
    let mut candidates = Vec::new();
    if let Some(p) = top {
        candidates.extend(time_over_waits(p).map(|(m, e)| (m, e, MeanSource::TopTimeOverWaits)));
        candidates.extend(
            p.avg_us
                .map(|(m, s)| (m, s / 2.0, MeanSource::TopAvgColumn)),
        );
    }
    if let Some(p) = listed {
        candidates.extend(time_over_waits(p).map(|(m, e)| (m, e, MeanSource::EventsTimeOverWaits)));
        candidates.extend(
            p.avg_us
                .map(|(m, s)| (m, s / 2.0, MeanSource::EventsAvgColumn)),
        );
    }
    candidates.into_iter().min_by(|a, b| a.1.total_cmp(&b.1))
}

fn event(top: Option<&Printed>, listed: Option<&Printed>) -> Option<WaitEvent> {
    let first = top.or(listed)?;
    let name = match io_event(&first.event) {
        Some((whole, _)) if top.is_none() => whole.to_string(),
        _ => first.event.clone(),
    };
    let class = [top, listed]
        .into_iter()
        .flatten()
        .map(|p| p.wait_class.clone())
        .find(|c| !c.is_empty())
        .or_else(|| io_event(&name).map(|(_, c)| c.to_string()))
        .unwrap_or_default();
    // The figure printed with more digits.
    let finer = |f: fn(&Printed) -> Option<(f64, f64)>| {
        [top, listed]
            .into_iter()
            .flatten()
            .filter_map(f)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(v, _)| v)
    };
    let mean = best_mean(top, listed);
    Some(WaitEvent {
        event: name,
        wait_class: class,
        waits: finer(|p| p.waits),
        total_wait_s: finer(|p| p.time_s).unwrap_or(0.0),
        mean_wait_us: mean.map(|m| m.0),
        mean_error_us: mean.map(|m| m.1),
        mean_source: mean.map(|m| m.2),
        db_time_pct: top.and_then(|p| p.pct).or(listed.and_then(|p| p.pct)),
    })
}

const TOP_ROWS: usize = 100;

fn is_top(t: &Table) -> bool {
    let title = t.title.as_str();
    title.starts_with("Top ") && title.contains("Events") && !title.contains("Background")
        || t.summary.to_lowercase().contains("top 10 wait events")
}

/// Foreground events (Top table and Foreground Wait Events merged) and background
/// events.
pub(crate) fn events(doc: &Doc) -> Result<(Vec<WaitEvent>, Vec<WaitEvent>), AwrError> {
    let top_table = doc.tables.iter().find(|t| is_top(t));
    let fg_table = doc
        .tables
        .iter()
        .find(|t| t.title == "Foreground Wait Events");
    let bg_table = doc
        .tables
        .iter()
        .find(|t| t.title == "Background Wait Events");
    if top_table.is_none() && fg_table.is_none() {
        return Err(doc.err(
            doc.end,
            "no top events table (\"Top 10 Foreground Events ...\" or \"Top 5 Timed Events\")",
        ));
    }
    // A Top table has 5 or 10 rows; matching each against the Wait Events table is
    // quadratic, so no more than TOP_ROWS are taken.
    let mut top: Vec<Printed> = top_table
        .map(|t| rows(doc, t))
        .transpose()?
        .unwrap_or_default();
    top.truncate(TOP_ROWS);
    if let (Some(t), true) = (top_table, top.is_empty()) {
        return Err(doc.err(t.line + 1, "at least one event row under the ruler"));
    }
    let fg = fg_table
        .map(|t| rows(doc, t))
        .transpose()?
        .unwrap_or_default();
    let mut used = vec![false; fg.len()];
    let mut foreground = Vec::new();
    for p in &top {
        let listed = fg
            .iter()
            .enumerate()
            .find(|(i, q)| !used[*i] && same_event(&q.event, &p.event))
            .map(|(i, q)| {
                used[i] = true;
                q
            });
        foreground.extend(event(Some(p), listed));
    }
    for (q, _) in fg.iter().zip(&used).filter(|(_, u)| !**u) {
        foreground.extend(event(None, Some(q)));
    }
    let background = bg_table
        .map(|t| rows(doc, t))
        .transpose()?
        .unwrap_or_default()
        .iter()
        .filter_map(|q| event(None, Some(q)))
        .collect();
    Ok((foreground, background))
}
