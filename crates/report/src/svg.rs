//! Inline SVG charts: line charts (load curves, time series) and bar charts
//! (latency histograms). Plain SVG elements only, no scripts, no external
//! references; every text is escaped.

use std::fmt::Write;

use crate::fmt::html_escape as esc;

#[path = "svg_factor.rs"]
mod factor;
pub use factor::{factor_bars, FactorBar, Key};

const W: f64 = 1000.0;
/// Heights of line and bar charts.
const LINE_H: f64 = 380.0;
const BAR_H: f64 = 300.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 56.0;

/// Series colours, distinguishable in print and for most colour-blind readers.
pub const PALETTE: [&str; 6] = [
    "#1f5fa8", "#d1495b", "#2a9d8f", "#e9a03b", "#7b4fa0", "#5c6770",
];

/// One line of a [`LineChart`].
pub struct Line {
    pub name: String,
    pub color: &'static str,
    pub points: Vec<(f64, f64)>,
    /// A small label drawn above each point (may be empty or shorter).
    pub labels: Vec<String>,
    pub markers: bool,
    pub dashed: bool,
}

/// A line chart with linear axes starting at zero.
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    /// A horizontal reference line (value, label), e.g. the latency cap.
    pub reference: Option<(f64, String)>,
    /// A point to ring and name, e.g. the max_iops point.
    pub highlight: Option<(f64, f64, String)>,
}

/// Axis ticks: a "nice" step (1, 2 or 5 times a power of ten) covering
/// 0..=max in about `n` steps. Returns (top of axis, step).
fn nice_axis(max: f64, n: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / n;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

/// A tick label: the unit (k, M) follows the top of the axis, the
/// precision the step: "500", "2.5k", "1.2M", "0.25", and plain "0".
fn tick_label(v: f64, step: f64, top: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let (scale, suffix) = if top >= 1e6 {
        (1e6, "M")
    } else if top >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let s = step / scale;
    let decimals = if (s - s.round()).abs() < 1e-9 {
        0
    } else if (s * 10.0 - (s * 10.0).round()).abs() < 1e-9 {
        1
    } else {
        2
    };
    format!("{:.*}{suffix}", decimals, v / scale)
}

/// A figure for a tooltip: whole numbers above 100, else two decimals.
fn tip_number(v: f64) -> String {
    if v.abs() >= 100.0 {
        crate::fmt::whole(v)
    } else {
        format!("{v:.2}")
    }
}

struct Frame {
    x_max: f64,
    y_max: f64,
    h: f64,
}

impl Frame {
    fn x(&self, v: f64) -> f64 {
        LEFT + v / self.x_max * (W - LEFT - RIGHT)
    }
    fn y(&self, v: f64) -> f64 {
        self.h - BOTTOM - v / self.y_max * (self.h - TOP - BOTTOM)
    }
}

fn open(out: &mut String, title: &str, h: f64) {
    let _ = write!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {W} {h}\" role=\"img\" aria-label=\"{t}\">\
         <title>{t}</title>\
         <text x=\"{LEFT}\" y=\"22\" class=\"ct\">{t}</text>",
        t = esc(title)
    );
}

fn axis_titles(out: &mut String, f: &Frame, x_label: &str, y_label: &str) {
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" class=\"al\" text-anchor=\"middle\">{}</text>\
         <text transform=\"translate(16,{}) rotate(-90)\" class=\"al\" text-anchor=\"middle\">{}</text>",
        (LEFT + W - RIGHT) / 2.0,
        f.h - 10.0,
        esc(x_label),
        (TOP + f.h - BOTTOM) / 2.0,
        esc(y_label)
    );
}

fn y_grid(out: &mut String, f: &Frame, step: f64) {
    let mut v = 0.0;
    while v <= f.y_max + step * 1e-6 {
        let y = f.y(v);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" class=\"grid\"/>\
             <text x=\"{}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            tick_label(v, step, f.y_max)
        );
        v += step;
    }
}

/// The chart as an `<svg>` element.
pub fn line_chart(c: &LineChart) -> String {
    let all = c.lines.iter().flat_map(|l| l.points.iter());
    let x_data = all.clone().map(|p| p.0).fold(0.0, f64::max);
    let mut y_data = all.map(|p| p.1).fold(0.0, f64::max);
    if let Some((v, _)) = &c.reference {
        // Show the reference line only when it is near the data; a cap far
        // above would flatten every curve.
        if *v <= y_data * 1.5 {
            y_data = y_data.max(*v);
        }
    }
    let (x_max, x_step) = nice_axis(x_data, 6.0);
    let (y_max, y_step) = nice_axis(y_data * 1.05, 5.0);
    let f = Frame {
        x_max,
        y_max,
        h: LINE_H,
    };
    let mut out = String::new();
    open(&mut out, &c.title, f.h);
    y_grid(&mut out, &f, y_step);
    let mut v = 0.0;
    while v <= x_max + x_step * 1e-6 {
        let x = f.x(v);
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{}\" y2=\"{}\" class=\"axis\"/>\
             <text x=\"{x:.1}\" y=\"{}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
            f.h - BOTTOM,
            f.h - BOTTOM + 5.0,
            f.h - BOTTOM + 18.0,
            tick_label(v, x_step, x_max)
        );
        v += x_step;
    }
    let _ = write!(
        out,
        "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{b}\" y2=\"{b}\" class=\"axis\"/>\
         <line x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{b}\" class=\"axis\"/>",
        W - RIGHT,
        b = f.h - BOTTOM
    );
    axis_titles(&mut out, &f, &c.x_label, &c.y_label);
    if let Some((v, label)) = &c.reference {
        if *v <= y_max {
            let y = f.y(*v);
            let _ = write!(
                out,
                "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" class=\"ref\"/>\
                 <text x=\"{}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                W - RIGHT - 4.0,
                y - 5.0,
                esc(label)
            );
        }
    }
    for l in &c.lines {
        if l.points.is_empty() {
            continue;
        }
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", f.x(*x), f.y(*y)))
            .collect();
        let dash = if l.dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
            pts.join(" "),
            l.color
        );
        // Where the labels went: one that would overlap another is left out
        // (points crowd at the knee of a load curve).
        let mut placed: Vec<(f64, f64)> = Vec::new();
        for (i, (x, y)) in l.points.iter().enumerate() {
            if l.markers {
                let _ = write!(
                    out,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{}\"><title>{}: {}, {}</title></circle>",
                    f.x(*x),
                    f.y(*y),
                    l.color,
                    esc(&l.name),
                    tip_number(*x),
                    tip_number(*y)
                );
            }
            if let Some(label) = l.labels.get(i).filter(|s| !s.is_empty()) {
                // Below the point, clear of any curve above it, unless that
                // would touch the x axis.
                let py = f.y(*y);
                let label_y = if py + 16.0 <= f.h - BOTTOM - 3.0 {
                    py + 16.0
                } else {
                    py - 8.0
                };
                let px = f.x(*x);
                let width = 7.0 * label.chars().count() as f64 + 4.0;
                if placed
                    .iter()
                    .any(|(lx, ly)| (px - lx).abs() < width && (label_y - ly).abs() < 12.0)
                {
                    continue;
                }
                placed.push((px, label_y));
                let _ = write!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" class=\"pl\" text-anchor=\"middle\">{}</text>",
                    f.x(*x),
                    label_y,
                    esc(label)
                );
            }
        }
    }
    if let Some((x, y, label)) = &c.highlight {
        // The name goes in the top left corner, where it cannot cover a
        // curve; the ring marks the point itself.
        let _ = write!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"8\" class=\"hl\"/>\
             <circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"6\" class=\"hl\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"hlt\">{}</text>",
            f.x(*x),
            f.y(*y),
            LEFT + 18.0,
            TOP + 12.0,
            LEFT + 30.0,
            TOP + 16.0,
            esc(label)
        );
    }
    legend(&mut out, &c.lines);
    out.push_str("</svg>\n");
    out
}

fn legend(out: &mut String, lines: &[Line]) {
    if lines.len() < 2 {
        return;
    }
    let mut x = W - RIGHT;
    // Right-aligned row above the plot; width estimated from the text.
    for l in lines.iter().rev() {
        let w = 26.0 + 6.5 * l.name.chars().count() as f64;
        x -= w;
        let dash = if l.dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{:.1}\" y1=\"18\" y2=\"18\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{:.1}\" y=\"22\" class=\"tk\">{}</text>",
            x + 16.0,
            l.color,
            x + 20.0,
            esc(&l.name)
        );
    }
}

/// One bar: label under it, value, and a tooltip.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub tip: String,
}

fn percent(p: f64) -> String {
    if p > 0.0 && p < 0.1 {
        "<0.1%".into()
    } else {
        format!("{p:.1}%")
    }
}

/// A bar chart with the y axis from zero; each bar shows its share of the
/// total above it.
pub fn bar_chart(title: &str, x_label: &str, y_label: &str, bars: &[Bar], color: &str) -> String {
    let y_data = bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let total: f64 = bars.iter().map(|b| b.value).sum();
    let (y_max, y_step) = nice_axis(y_data * 1.1, 5.0);
    let f = Frame {
        x_max: 1.0,
        y_max,
        h: BAR_H,
    };
    let mut out = String::new();
    open(&mut out, title, f.h);
    y_grid(&mut out, &f, y_step);
    axis_titles(&mut out, &f, x_label, y_label);
    let n = bars.len().max(1) as f64;
    let slot = (W - LEFT - RIGHT) / n;
    let bar_w = (slot * 0.8).min(60.0);
    let rotate = bars.len() > 12;
    for (i, b) in bars.iter().enumerate() {
        let cx = LEFT + slot * (i as f64 + 0.5);
        let y = f.y(b.value);
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\" fill=\"{color}\"><title>{}</title></rect>",
            cx - bar_w / 2.0,
            (f.h - BOTTOM - y).max(0.0),
            esc(&b.tip)
        );
        if b.value > 0.0 && total > 0.0 && !rotate {
            let _ = write!(
                out,
                "<text x=\"{cx:.1}\" y=\"{:.1}\" class=\"pl\" text-anchor=\"middle\">{}</text>",
                y - 4.0,
                percent(b.value / total * 100.0)
            );
        }
        if rotate {
            let _ = write!(
                out,
                "<text transform=\"translate({cx:.1},{}) rotate(-45)\" class=\"tk\" text-anchor=\"end\">{}</text>",
                f.h - BOTTOM + 12.0,
                esc(&b.label)
            );
        } else {
            let _ = write!(
                out,
                "<text x=\"{cx:.1}\" y=\"{}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
                f.h - BOTTOM + 16.0,
                esc(&b.label)
            );
        }
    }
    let _ = writeln!(
        out,
        "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{b}\" y2=\"{b}\" class=\"axis\"/></svg>",
        W - RIGHT,
        b = f.h - BOTTOM
    );
    out
}

/// A bar's value and its optional error bar (low, high).
pub type BarValue = (f64, Option<(f64, f64)>);

/// One series of a [`grouped_bars`] chart: a value per group (`None`: no bar).
pub struct BarSeries {
    pub name: String,
    pub color: &'static str,
    pub values: Vec<Option<BarValue>>,
}

/// Bars side by side per group (one per series), on a y axis that takes in negative
/// values where there are any (impacts), with error bars and a legend.
pub fn grouped_bars(
    title: &str,
    x_label: &str,
    y_label: &str,
    groups: &[String],
    series: &[BarSeries],
) -> String {
    let all = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .flat_map(|(v, e)| {
            [Some(*v), e.map(|e| e.0), e.map(|e| e.1)]
                .into_iter()
                .flatten()
        })
        .filter(|v| v.is_finite());
    let (lo, hi) = all.fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // One step size for both sides of zero, so that the grid lines up through it.
    let (_, step) = nice_axis((hi - lo) * 1.1, 6.0);
    let top = if hi > 0.0 {
        (hi * 1.05 / step).ceil() * step
    } else {
        0.0
    };
    let bottom = if lo < 0.0 {
        (lo * 1.05 / step).floor() * step
    } else {
        0.0
    };
    let span = (top - bottom).max(f64::MIN_POSITIVE);
    let h = BAR_H;
    let y = |v: f64| h - BOTTOM - (v - bottom) / span * (h - TOP - BOTTOM);
    let mut out = String::new();
    open(&mut out, title, h);
    let mut v = bottom;
    while v <= top + step * 1e-6 {
        let yy = y(v);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" class=\"{}\"/>\
             <text x=\"{}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            if v.abs() < step * 1e-6 {
                "axis"
            } else {
                "grid"
            },
            LEFT - 6.0,
            yy + 4.0,
            tick_label(
                if v.abs() < step * 1e-6 { 0.0 } else { v },
                step,
                top.max(-bottom)
            )
        );
        v += step;
    }
    let f = Frame {
        x_max: 1.0,
        y_max: 1.0,
        h,
    };
    axis_titles(&mut out, &f, x_label, y_label);
    let slot = (W - LEFT - RIGHT) / groups.len().max(1) as f64;
    let n = series.len().max(1) as f64;
    let bar_w = (slot * 0.8 / n).min(40.0);
    for (g, name) in groups.iter().enumerate() {
        let cx = LEFT + slot * (g as f64 + 0.5);
        for (i, s) in series.iter().enumerate() {
            let Some(Some((value, err))) = s.values.get(g) else {
                continue;
            };
            if !value.is_finite() {
                continue;
            }
            let x = cx - bar_w * n / 2.0 + bar_w * i as f64;
            let (y0, y1) = (y(0.0), y(*value));
            let tip = match err {
                Some((a, b)) => format!(
                    "{} at {}: {} ({} to {})",
                    s.name,
                    name,
                    tip_number(*value),
                    tip_number(*a),
                    tip_number(*b)
                ),
                None => format!("{} at {}: {}", s.name, name, tip_number(*value)),
            };
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}</title></rect>",
                y0.min(y1),
                bar_w * 0.92,
                (y0 - y1).abs(),
                s.color,
                esc(&tip)
            );
            if let Some((a, b)) = err.filter(|(a, b)| a.is_finite() && b.is_finite()) {
                let ex = x + bar_w * 0.46;
                let _ = write!(
                    out,
                    "<path d=\"M{:.1},{:.1}H{:.1}M{ex:.1},{:.1}V{:.1}M{:.1},{:.1}H{:.1}\" stroke=\"#1d2329\" stroke-width=\"1.2\" fill=\"none\"/>",
                    ex - 4.0, y(a), ex + 4.0, y(a), y(b), ex - 4.0, y(b), ex + 4.0
                );
            }
        }
        let _ = write!(
            out,
            "<text x=\"{cx:.1}\" y=\"{}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
            h - BOTTOM + 16.0,
            esc(name)
        );
    }
    let keys: Vec<Line> = series
        .iter()
        .map(|s| Line {
            name: s.name.clone(),
            color: s.color,
            points: Vec::new(),
            labels: Vec::new(),
            markers: false,
            dashed: false,
        })
        .collect();
    legend(&mut out, &keys);
    out.push_str("</svg>\n");
    out
}

/// A heatmap: one cell per (row, column) coloured by its value (light for low, dark for
/// high, or the reverse with `low_is_good`), the value written in it; empty cells blank.
pub fn heatmap(
    title: &str,
    x_label: &str,
    y_label: &str,
    cols: &[String],
    rows: &[String],
    values: &[Vec<Option<f64>>],
    low_is_good: bool,
) -> String {
    let h = TOP + BOTTOM + 34.0 * rows.len().max(1) as f64;
    let mut out = String::new();
    open(&mut out, title, h);
    let f = Frame {
        x_max: 1.0,
        y_max: 1.0,
        h,
    };
    axis_titles(&mut out, &f, x_label, y_label);
    let all = values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    // One precision for every cell of a map, from its largest value: "126"
    // beside "69.76" reads as two kinds of figure.
    let decimals = if hi >= 100.0 {
        0
    } else if hi >= 10.0 {
        1
    } else {
        2
    };
    let cell = |v: f64| {
        if decimals == 0 {
            crate::fmt::whole(v)
        } else {
            format!("{v:.decimals$}")
        }
    };
    // From #e8eff7 (t = 0) to #1f5fa8 (t = 1).
    let colour = |t: f64| {
        let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
        format!(
            "#{:02x}{:02x}{:02x}",
            mix(232.0, 31.0),
            mix(239.0, 95.0),
            mix(247.0, 168.0)
        )
    };
    if lo.is_finite() && hi.is_finite() {
        // The colour scale, right of the title: the value at its light end and
        // at its dark end.
        let (light, dark) = if low_is_good { (hi, lo) } else { (lo, hi) };
        let x0 = W - RIGHT - 200.0;
        for i in 0..10 {
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"10\" width=\"12\" height=\"14\" fill=\"{}\"/>",
                x0 + 12.0 * i as f64,
                colour(i as f64 / 9.0)
            );
        }
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"21\" class=\"tk\" text-anchor=\"end\">{}</text>\
             <text x=\"{:.1}\" y=\"21\" class=\"tk\">{}</text>",
            x0 - 4.0,
            esc(&cell(light)),
            x0 + 124.0,
            esc(&cell(dark))
        );
    }
    let cw = (W - LEFT - RIGHT) / cols.len().max(1) as f64;
    let ch = 34.0;
    for (r, name) in rows.iter().enumerate() {
        // The first row at the bottom, as an axis would have it.
        let y = h - BOTTOM - ch * (r as f64 + 1.0);
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y + ch / 2.0 + 4.0,
            esc(name)
        );
        for (c, col) in cols.iter().enumerate() {
            let Some(Some(v)) = values.get(r).and_then(|row| row.get(c)) else {
                continue;
            };
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
            let t = if low_is_good { 1.0 - t } else { t };
            let fill = colour(t);
            let ink = if t > 0.55 { "#ffffff" } else { "#1d2329" };
            let x = LEFT + cw * c as f64;
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{} {}, {} {}: {}</title></rect>\
                 <text x=\"{:.1}\" y=\"{:.1}\" class=\"pl\" text-anchor=\"middle\" fill=\"{ink}\" style=\"fill:{ink}\">{}</text>",
                cw - 2.0,
                ch - 2.0,
                esc(x_label),
                esc(col),
                esc(y_label),
                esc(name),
                cell(*v),
                x + cw / 2.0,
                y + ch / 2.0 + 4.0,
                cell(*v)
            );
        }
    }
    for (c, col) in cols.iter().enumerate() {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
            LEFT + cw * (c as f64 + 0.5),
            h - BOTTOM + 16.0,
            esc(col)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axes() {
        assert_eq!(nice_axis(0.0, 5.0), (1.0, 0.2));
        assert_eq!(nice_axis(47_000.0, 5.0), (50_000.0, 10_000.0));
        assert_eq!(nice_axis(930.0, 5.0), (1000.0, 200.0));
        let (top, step) = nice_axis(12.0, 5.0);
        assert_eq!((top, step), (12.5, 2.5));
    }

    #[test]
    fn tick_labels() {
        assert_eq!(tick_label(40_000.0, 10_000.0, 50_000.0), "40k");
        assert_eq!(tick_label(2500.0, 2500.0, 12_500.0), "2.5k");
        assert_eq!(tick_label(400.0, 200.0, 1000.0), "400");
        assert_eq!(tick_label(1500.0, 500.0, 2500.0), "1500");
        assert_eq!(tick_label(0.5, 0.25, 1.0), "0.50");
        assert_eq!(tick_label(400_000.0, 200_000.0, 1_000_000.0), "0.4M");
        assert_eq!(tick_label(0.0, 200_000.0, 1_000_000.0), "0");
        assert_eq!(percent(0.04), "<0.1%");
        assert_eq!(percent(62.57), "62.6%");
    }

    #[test]
    fn chart_escapes_text_and_draws_points() {
        let c = LineChart {
            title: "<b>lat</b>".into(),
            x_label: "IOPS".into(),
            y_label: "us".into(),
            lines: vec![Line {
                name: "mean & p99".into(),
                color: PALETTE[0],
                points: vec![(100.0, 50.0), (200.0, 80.0)],
                labels: vec!["1".into(), "2".into()],
                markers: true,
                dashed: false,
            }],
            reference: Some((90.0, "cap".into())),
            highlight: Some((200.0, 80.0, "max".into())),
        };
        let s = line_chart(&c);
        assert!(s.starts_with("<svg"));
        assert!(s.contains("&lt;b&gt;lat&lt;/b&gt;"));
        assert!(!s.contains("<b>"));
        assert_eq!(
            s.matches("<circle").count(),
            4,
            "two markers, the ring and its key"
        );
        assert!(s.contains("class=\"ref\""));
    }

    #[test]
    fn grouped_bars_take_in_negative_values_and_error_bars() {
        let s = grouped_bars(
            "impact",
            "users",
            "%",
            &["1".into(), "2".into()],
            &[BarSeries {
                name: "b & c".into(),
                color: PALETTE[1],
                values: vec![Some((-20.0, Some((-30.0, -10.0)))), Some((15.0, None))],
            }],
        );
        assert_eq!(s.matches("<rect").count(), 2);
        assert_eq!(s.matches("<path").count(), 1, "one error bar");
        assert!(s.contains("b &amp; c") && s.contains(">-20<"), "{s}");
        assert!(!s.contains("NaN") && !s.contains("inf"));
        let empty = grouped_bars("t", "x", "y", &[], &[]);
        assert!(!empty.contains("NaN") && !empty.contains("inf"));
    }

    #[test]
    fn empty_charts_do_not_divide_by_zero() {
        let s = bar_chart("h", "x", "y", &[], PALETTE[1]);
        assert!(!s.contains("NaN") && !s.contains("inf"));
        let c = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            lines: vec![],
            reference: None,
            highlight: None,
        };
        let s = line_chart(&c);
        assert!(!s.contains("NaN") && !s.contains("inf"));
    }
}
