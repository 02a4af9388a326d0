//! The charts of a comparison: latency against throughput per configuration, how many
//! times better or worse each configuration is per user load (coloured by verdict), and
//! the latency histograms of the baseline and another configuration overlaid. The latency
//! is always the comparison's charted class (single-block reads by default).

use dbio_compare::comparison::{Histogram, Pair};
use dbio_compare::Comparison;

use crate::comparison_view::{self as view, effect_text, metric_name, p_text, test_text};
use crate::fmt;
use crate::svg::{factor_bars, grouped_bars, line_chart, BarSeries, FactorBar, Line, LineChart};
use crate::svg::{Key, PALETTE};

/// The latency metric the charts plot: the charted class's mean, else calibrate's.
pub fn chart_latency(c: &Comparison) -> Option<String> {
    match &c.class {
        Some(class) => Some(format!("{class} mean_us")),
        None => c.metrics.iter().find(|m| *m == "latency_us").cloned(),
    }
}

pub fn chart_throughput(c: &Comparison) -> Option<&'static str> {
    ["iops", "max_iops"]
        .into_iter()
        .find(|m| c.metrics.iter().any(|x| x == m))
}

fn mean(c: &Comparison, config: &str, load: u32, metric: &str) -> Option<f64> {
    c.cells
        .iter()
        .find(|x| x.config == config && x.load == load && x.metric == metric)
        .map(|x| x.summary.mean)
}

/// Mean latency against throughput, one line per configuration over the user loads.
pub fn curves(c: &Comparison) -> Option<String> {
    let (lat, thr) = (chart_latency(c)?, chart_throughput(c)?);
    let lines = c
        .configs
        .iter()
        .enumerate()
        .map(|(i, config)| {
            let pts: Vec<(f64, f64, u32)> = c
                .loads
                .iter()
                .filter_map(|&l| Some((mean(c, config, l, thr)?, mean(c, config, l, &lat)?, l)))
                .collect();
            Line {
                name: config.clone(),
                color: PALETTE[i % PALETTE.len()],
                points: pts.iter().map(|p| (p.0, p.1)).collect(),
                labels: pts.iter().map(|p| format!("{}u", p.2)).collect(),
                markers: true,
                dashed: i >= PALETTE.len(),
            }
        })
        .collect();
    Some(line_chart(&LineChart {
        title: format!(
            "{} (mean, us) against {} per configuration (labels: users)",
            metric_name(&lat),
            metric_name(thr)
        ),
        x_label: metric_name(thr),
        y_label: format!("{} (us)", metric_name(&lat)),
        lines,
        reference: None,
        highlight: None,
    }))
}

pub const KEYS: [Key; 4] = [
    (view::BETTER, "better"),
    (view::WORSE, "worse"),
    (view::NOISE, "within noise"),
    (view::UNTESTED, "untested (one run)"),
];

/// How many times better or worse each configuration is at each load, for one metric.
pub fn factor_chart(c: &Comparison, metric: &str) -> Option<String> {
    let pair = |config: &str, load: u32| -> Option<&Pair> {
        c.pairs
            .iter()
            .find(|p| p.config == config && p.load == load && p.metric == metric)
    };
    let groups: Vec<(String, Vec<FactorBar>)> = c
        .loads
        .iter()
        .map(|&l| {
            let bars = c.configs[1..]
                .iter()
                .filter_map(|config| {
                    let p = pair(config, l)?;
                    let e = p.effect.as_ref()?;
                    Some(FactorBar {
                        factor: e.factor,
                        interval: view::factor_interval(p),
                        color: view::color(p.verdict),
                        label: config.clone(),
                        tip: format!(
                            "{config} at {l} users: {} ({}; 95% {}; p {}, {})",
                            effect_text(e),
                            p.verdict.text(),
                            view::interval_text(p),
                            p_text(p.p_value),
                            test_text(p)
                        ),
                    })
                })
                .collect();
            (format!("{l} users"), bars)
        })
        .collect();
    if groups.iter().all(|(_, b)| b.is_empty()) {
        return None;
    }
    let used: Vec<Key> = KEYS
        .iter()
        .filter(|(color, _)| {
            c.pairs
                .iter()
                .any(|p| p.metric == metric && view::color(p.verdict) == *color)
        })
        .copied()
        .collect();
    Some(factor_bars(
        &format!(
            "{} against {}: times better (up) or worse (down), with 95% intervals",
            metric_name(metric),
            c.baseline
        ),
        "user load",
        &groups,
        &used,
    ))
}

/// The baseline's histogram of the charted class and that of the configuration whose
/// latency differs most from it, at the highest load both have, as shares of their I/Os.
pub fn histogram_chart(c: &Comparison) -> Option<String> {
    let class = c.class.as_deref()?;
    let metric = format!("{class} mean_us");
    let distance = |config: &String| -> f64 {
        c.pairs
            .iter()
            .filter(|p| p.config == *config && p.metric == metric)
            .filter_map(|p| p.effect.as_ref())
            .map(|e| e.factor.ln().abs())
            .filter(|d| d.is_finite())
            .fold(0.0, f64::max)
    };
    let other = c.configs[1..]
        .iter()
        .max_by(|a, b| distance(a).total_cmp(&distance(b)))?;
    let find = |config: &str, load: u32| -> Option<&Histogram> {
        c.histograms
            .iter()
            .find(|h| h.config == config && h.load == load && h.class == class)
    };
    let load = c
        .loads
        .iter()
        .rev()
        .find(|&&l| find(&c.baseline, l).is_some() && find(other, l).is_some())?;
    let hs = [find(&c.baseline, *load)?, find(other, *load)?];
    let mut uppers: Vec<u64> = hs
        .iter()
        .flat_map(|h| h.buckets.iter().map(|b| b.1))
        .collect();
    uppers.sort_unstable();
    uppers.dedup();
    let groups: Vec<String> = uppers
        .iter()
        .map(|u| format!("<{}", fmt::us_short(*u)))
        .collect();
    // Each configuration keeps its colour of the curves.
    let color = |config: &str| {
        let i = c.configs.iter().position(|x| x == config).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };
    let series = hs
        .iter()
        .map(|h| {
            let total: u64 = h.buckets.iter().map(|b| b.2).sum::<u64>().max(1);
            BarSeries {
                name: h.config.clone(),
                color: color(&h.config),
                values: uppers
                    .iter()
                    .map(|u| {
                        let n: u64 = h.buckets.iter().filter(|b| b.1 == *u).map(|b| b.2).sum();
                        Some((n as f64 * 100.0 / total as f64, None))
                    })
                    .collect(),
            }
        })
        .collect::<Vec<_>>();
    Some(grouped_bars(
        &format!(
            "{class} latency at {load} users: {} and {other}",
            c.baseline
        ),
        "latency",
        "% of I/Os",
        &groups,
        &series,
    ))
}
