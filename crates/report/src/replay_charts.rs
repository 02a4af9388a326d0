//! The replay's charts: production's mean latency beside this storage's per event
//! (grouped bars), the ramp (each event's latency against the scale, production's as
//! the reference), and an event's histogram in production's buckets. Events with too
//! few I/Os to judge are left out of the first two: their bars would say what the
//! report does not.

use dbio_compare::replay::{EventComparison, ReplayReport};

use super::words::{latency, us_short};
use crate::svg::{grouped_bars, line_chart, BarSeries, Line, LineChart, PALETTE};

const PRODUCTION: &str = "#8a939b";
const HERE: &str = "#1f6feb";

/// Events whose means differ by more than this factor go on separate charts: on one
/// linear axis the smaller would be bars too short to read.
const SPAN: f64 = 10.0;

/// An event charted: its place in the report, production's mean, this storage's.
type Charted<'a> = (usize, &'a EventComparison, f64, f64);

/// Production's mean beside this storage's (its prediction where the model adds a CPU
/// wait), per judged event: one chart per range of latencies.
pub(super) fn latency_bars(r: &ReplayReport) -> String {
    let mut judged: Vec<Charted> = r
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.too_few.is_none())
        .filter_map(|(i, e)| {
            let here = e.predicted_mean_us.or(e.here_mean_us)?;
            Some((i, e, e.production_mean_us?, here))
        })
        .filter(|(_, _, p, h)| p.is_finite() && h.is_finite())
        .collect();
    judged.sort_by(|a, b| a.2.max(a.3).total_cmp(&b.2.max(b.3)));
    let mut out = String::new();
    let mut rest = &judged[..];
    while let Some(first) = rest.first() {
        let floor = first.2.max(first.3);
        let n = rest
            .iter()
            .take_while(|(_, _, p, h)| p.max(*h) <= floor * SPAN)
            .count();
        let (part, next) = rest.split_at(n.max(1));
        out += &bars(r, part);
        rest = next;
    }
    out
}

fn bars(r: &ReplayReport, part: &[Charted]) -> String {
    let mut part = part.to_vec();
    // The report's order within a chart.
    part.sort_by_key(|c| c.0);
    let top = part.iter().map(|c| c.2.max(c.3)).fold(0.0, f64::max);
    let (unit, div) = if top >= 2000.0 {
        ("ms", 1000.0)
    } else {
        ("µs", 1.0)
    };
    let predicted = part.iter().any(|c| c.1.predicted_mean_us.is_some());
    let groups: Vec<String> = part.iter().map(|c| c.1.event.clone()).collect();
    let series = [
        BarSeries {
            name: "production".into(),
            color: PRODUCTION,
            values: part.iter().map(|c| Some((c.2 / div, None))).collect(),
        },
        BarSeries {
            name: if predicted {
                "this storage, predicted".into()
            } else {
                "this storage".into()
            },
            color: HERE,
            values: part.iter().map(|c| Some((c.3 / div, None))).collect(),
        },
    ];
    grouped_bars(
        &format!(
            "Mean latency per event at {:.2}x: production and this storage",
            r.reference_scale
        ),
        "wait event",
        &format!("mean latency ({unit})"),
        &groups,
        &series,
    )
}

/// The ramp, where there is one: per judged event, its mean at each step over
/// production's (1 is production's latency, drawn dashed), each point named with the
/// latency itself. Times production's, so that events microseconds and milliseconds
/// apart share one axis.
pub(super) fn ramp_chart(r: &ReplayReport) -> String {
    if r.steps.len() < 2 {
        return String::new();
    }
    let mut steps: Vec<_> = r.steps.iter().collect();
    steps.sort_by(|a, b| a.scale.total_cmp(&b.scale));
    let judged = r
        .events
        .iter()
        .filter(|e| e.too_few.is_none())
        .filter_map(|e| Some((e, e.production_mean_us.filter(|p| *p > 0.0)?)));
    let mut lines: Vec<Line> = Vec::new();
    for (i, (e, production)) in judged.enumerate() {
        let at: Vec<(f64, f64)> = steps
            .iter()
            .filter_map(|s| {
                let c = s.classes.iter().find(|c| c.class == e.class)?;
                Some((s.scale, c.judged_us?))
            })
            .collect();
        if at.is_empty() {
            continue;
        }
        lines.push(Line {
            name: e.event.clone(),
            // The palette's last colour is the reference's.
            color: PALETTE[i % (PALETTE.len() - 1)],
            points: at.iter().map(|(s, us)| (*s, us / production)).collect(),
            labels: at.iter().map(|(_, us)| latency(*us)).collect(),
            markers: true,
            dashed: false,
        });
    }
    if lines.is_empty() {
        return String::new();
    }
    let (low, high) = (steps[0].scale, steps[steps.len() - 1].scale);
    lines.push(Line {
        name: "production's latency".into(),
        color: PALETTE[PALETTE.len() - 1],
        points: vec![(low, 1.0), (high, 1.0)],
        labels: Vec::new(),
        markers: false,
        dashed: true,
    });
    line_chart(&LineChart {
        title: "The ramp: each event's mean latency, times production's".into(),
        x_label: "scale (times production's load)".into(),
        y_label: "mean latency / production's".into(),
        lines,
        reference: None,
        highlight: None,
    })
}

/// An event's waits in production's buckets: production's share and this storage's.
pub(super) fn histogram_chart(e: &EventComparison) -> String {
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
            color: PRODUCTION,
            values: rows
                .iter()
                .map(|h| Some((h.production_pct, None)))
                .collect(),
        },
        BarSeries {
            name: "here".into(),
            color: HERE,
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
