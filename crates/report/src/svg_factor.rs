//! Bars of "how many times better or worse", one convention for every metric: up is
//! better, down is worse, on a logarithmic axis so that 2x better and 2x worse are bars
//! of the same length; each bar coloured by its verdict and named under it.

use std::fmt::Write;

use super::{axis_titles, esc, open, BAR_H, BOTTOM, LEFT, RIGHT, TOP, W};

/// One bar: the factor (above 1 better, below 1 worse), its 95% interval, colour, the
/// label under it and a tooltip.
pub struct FactorBar {
    pub factor: f64,
    pub interval: Option<(f64, f64)>,
    pub color: &'static str,
    pub label: String,
    pub tip: String,
}

/// A legend entry: colour and meaning.
pub type Key = (&'static str, &'static str);

/// Ticks of the axis, as factors (the axis is log2 of the factor): small differences,
/// and large ones by powers of two.
const SMALL: [f64; 5] = [1.1, 1.25, 1.5, 2.0, 4.0];
const POWERS: [f64; 8] = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];
/// Farthest reach drawn (256x); beyond, bars end at the edge.
const LIMIT: f64 = 8.0;

/// Groups of bars (e.g. one per user load), each bar a configuration.
pub fn factor_bars(
    title: &str,
    x_label: &str,
    groups: &[(String, Vec<FactorBar>)],
    keys: &[Key],
) -> String {
    // How far the bars and intervals reach up (better) and down (worse), in log2.
    let (mut up, mut down) = (0.0f64, 0.0f64);
    for b in groups.iter().flat_map(|(_, bars)| bars) {
        let (lo, hi) = b.interval.unwrap_or((b.factor, b.factor));
        for f in [b.factor, lo, hi] {
            let v = if f > 0.0 { f.log2() } else { f64::NEG_INFINITY };
            up = up.max(v.min(LIMIT));
            down = down.max((-v).min(LIMIT));
        }
    }
    // Each side reaches the first tick beyond its farthest end (1.25x at least).
    let ladder = |far: f64| -> Vec<f64> {
        let ticks: &[f64] = if far > 2.0 { &POWERS } else { &SMALL };
        let end = ticks
            .iter()
            .map(|t| t.log2())
            .position(|t| t >= far * 1.02)
            .unwrap_or(ticks.len() - 1);
        let from = (end + 1).saturating_sub(4);
        ticks[from..=end].iter().map(|t| t.log2()).collect()
    };
    let (ups, downs) = (ladder(up), ladder(down));
    let top = *ups.last().expect("ticks");
    let bottom = *downs.last().expect("ticks");
    let h = BAR_H + 40.0;
    let plot_bottom = h - BOTTOM - 16.0;
    let y = |v: f64| {
        let v = v.clamp(-bottom, top);
        TOP + (top - v) / (top + bottom) * (plot_bottom - TOP)
    };
    let mut out = String::new();
    open(&mut out, title, h);
    let _ = write!(
        out,
        "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\" class=\"axis\"/>\
         <text x=\"{}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">same</text>",
        W - RIGHT,
        LEFT - 6.0,
        y(0.0) + 4.0,
        y0 = y(0.0)
    );
    let ticks = ups
        .iter()
        .map(|t| (*t, "better"))
        .chain(downs.iter().map(|t| (-t, "worse")));
    // A tick too close to one drawn already (or to "same") is left out.
    let mut drawn = vec![y(0.0)];
    for (v, word) in ticks {
        let f = v.abs().exp2();
        if drawn.iter().any(|d| (d - y(v)).abs() < 14.0) {
            continue;
        }
        drawn.push(y(v));
        {
            let _ = write!(
                out,
                "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" class=\"grid\"/>\
                 <text x=\"{}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"end\">{}x {word}</text>",
                W - RIGHT,
                LEFT - 6.0,
                y(v) + 4.0,
                trim_factor(f),
                yy = y(v)
            );
        }
    }
    let frame = super::Frame {
        x_max: 1.0,
        y_max: 1.0,
        h,
    };
    axis_titles(&mut out, &frame, x_label, "");
    let slot = (W - LEFT - RIGHT) / groups.len().max(1) as f64;
    for (g, (name, bars)) in groups.iter().enumerate() {
        let cx = LEFT + slot * (g as f64 + 0.5);
        let n = bars.len().max(1) as f64;
        let bar_w = (slot * 0.8 / n).min(56.0);
        for (i, b) in bars.iter().enumerate() {
            let x = cx - bar_w * n / 2.0 + bar_w * i as f64;
            let v = if b.factor > 0.0 && b.factor.is_finite() {
                b.factor.log2()
            } else if b.factor <= 0.0 {
                -bottom
            } else {
                top
            };
            let (y0, y1) = (y(0.0), y(v));
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}</title></rect>",
                y0.min(y1),
                bar_w * 0.9,
                (y0 - y1).abs().max(1.0),
                b.color,
                esc(&b.tip)
            );
            if let Some((lo, hi)) = b.interval {
                let at = |f: f64| {
                    if f > 0.0 {
                        y(f.log2())
                    } else {
                        y(-bottom)
                    }
                };
                let ex = x + bar_w * 0.45;
                let _ = write!(
                    out,
                    "<path d=\"M{:.1},{:.1}H{:.1}M{ex:.1},{:.1}V{:.1}M{:.1},{:.1}H{:.1}\" stroke=\"#1d2329\" stroke-width=\"1.2\" fill=\"none\"/>",
                    ex - 4.0, at(lo), ex + 4.0, at(lo), at(hi), ex - 4.0, at(hi), ex + 4.0
                );
            }
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"pl\" text-anchor=\"middle\">{}</text>",
                x + bar_w * 0.45,
                plot_bottom + 12.0,
                esc(&b.label)
            );
        }
        let _ = write!(
            out,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" class=\"tk\" text-anchor=\"middle\">{}</text>",
            plot_bottom + 28.0,
            esc(name)
        );
    }
    // Legend: the meaning of the colours, right-aligned above the plot.
    let mut x = W - RIGHT;
    for (color, word) in keys.iter().rev() {
        x -= 30.0 + 6.5 * word.chars().count() as f64;
        let _ = write!(
            out,
            "<rect x=\"{x:.1}\" y=\"11\" width=\"12\" height=\"12\" fill=\"{color}\"/>\
             <text x=\"{:.1}\" y=\"22\" class=\"tk\">{}</text>",
            x + 16.0,
            esc(word)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// "1.5", "2", "1.05".
fn trim_factor(f: f64) -> String {
    let s = format!("{f:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
