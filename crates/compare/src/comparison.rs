//! The comparison itself: every metric summarised per configuration and load over its
//! repeats, and every configuration set against the baseline with the impact per repeat
//! and a significance test.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::observation::{Direction, Observation};
use crate::statistics::{self, Summary, TestResult};
use crate::CompareError;

/// The version of the comparison JSON written by this build.
pub const FORMAT_VERSION: u32 = 1;

/// What to compare and how strictly.
#[derive(Debug, Clone)]
pub struct Options {
    /// The configuration the others are measured against; the first one seen if `None`.
    pub baseline: Option<String>,
    /// Significance level of the tests (two-sided), e.g. 0.05.
    pub alpha: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            baseline: None,
            alpha: 0.05,
        }
    }
}

/// A whole comparison (the `dbio compare` JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    /// Always "comparison".
    pub kind: String,
    pub format_version: u32,
    pub baseline: String,
    /// Significance level the verdicts use.
    pub alpha: f64,
    /// Configurations, baseline first, then in the order first seen.
    pub configs: Vec<String>,
    /// User loads, ascending.
    pub loads: Vec<u32>,
    /// Metrics in display order: run totals first, then per I/O class.
    pub metrics: Vec<String>,
    /// Number of observations read.
    pub observations: usize,
    pub cells: Vec<Cell>,
    pub pairs: Vec<Pair>,
    /// Latency histograms per configuration, load and I/O class, summed over repeats.
    pub histograms: Vec<Histogram>,
}

/// One metric of one configuration at one load, over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub config: String,
    pub load: u32,
    pub metric: String,
    pub summary: Summary,
}

/// One metric of one configuration against the baseline at one load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pair {
    pub config: String,
    pub load: u32,
    pub metric: String,
    pub direction: Direction,
    /// 100 * (baseline - other) / baseline per repeat (repeats paired by number, else
    /// in file order): positive means the other configuration has less of the metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact_pct: Option<Summary>,
    /// other / baseline per repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub welch: Option<TestResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mann_whitney: Option<TestResult>,
    /// Which test the verdict rests on: "welch" or "mann-whitney" (rank test where a side
    /// has fewer than 5 repeats, is skewed or has an outlier).
    pub test: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    pub verdict: Verdict,
}

/// What a pair says, at the comparison's significance level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The other configuration is significantly better.
    Better,
    /// The other configuration is significantly worse.
    Worse,
    /// The difference is within the noise of the repeats.
    WithinNoise,
    /// Too few repeats for the test to ever reach the significance level.
    TooFewRepeats,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::TooFewRepeats => "too few repeats",
        }
    }
}

/// A latency histogram: (lower bound us, upper bound us, count) buckets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Histogram {
    pub config: String,
    pub load: u32,
    pub class: String,
    pub buckets: Vec<(u64, u64, u64)>,
}

/// Repeats a side needs before Welch's test is trusted over the rank test.
const WELCH_MIN_REPEATS: usize = 5;
/// Skewness beyond which a sample is treated as not normal enough for Welch's test.
const SKEWED: f64 = 1.0;

/// Compares observations. Needs at least two configurations.
pub fn compare(obs: &[Observation], opts: &Options) -> Result<Comparison, CompareError> {
    if obs.is_empty() {
        return Err(CompareError::Empty);
    }
    let mut configs: Vec<String> = Vec::new();
    for o in obs {
        if !configs.contains(&o.config) {
            configs.push(o.config.clone());
        }
    }
    let baseline = opts.baseline.clone().unwrap_or_else(|| configs[0].clone());
    let Some(at) = configs.iter().position(|c| *c == baseline) else {
        return Err(CompareError::NoBaseline {
            baseline,
            configs: configs.join(", "),
        });
    };
    let base = configs.remove(at);
    configs.insert(0, base);
    if configs.len() < 2 {
        return Err(CompareError::OneConfig(baseline));
    }
    let loads: Vec<u32> = obs
        .iter()
        .map(|o| o.load)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let metrics = metric_order(obs);

    // (config, load) -> observations in repeat order (then source order).
    let mut groups: BTreeMap<(&str, u32), Vec<&Observation>> = BTreeMap::new();
    for o in obs {
        groups.entry((&o.config, o.load)).or_default().push(o);
    }
    for g in groups.values_mut() {
        g.sort_by(|a, b| a.repeat.cmp(&b.repeat).then(a.source.cmp(&b.source)));
    }

    let mut cells = Vec::new();
    let mut pairs = Vec::new();
    let mut histograms = Vec::new();
    for &load in &loads {
        for config in &configs {
            let Some(group) = groups.get(&(config.as_str(), load)) else {
                continue;
            };
            for metric in &metrics {
                if let Some(summary) = statistics::summarize(&values(group, metric)) {
                    cells.push(Cell {
                        config: config.clone(),
                        load,
                        metric: metric.clone(),
                        summary,
                    });
                }
            }
            histograms.extend(summed_histograms(config, load, group));
        }
        let Some(base) = groups.get(&(baseline.as_str(), load)) else {
            continue;
        };
        for config in &configs[1..] {
            let Some(other) = groups.get(&(config.as_str(), load)) else {
                continue;
            };
            for metric in &metrics {
                if let Some(p) = pair(config, load, metric, base, other, opts.alpha) {
                    pairs.push(p);
                }
            }
        }
    }
    Ok(Comparison {
        kind: "comparison".into(),
        format_version: FORMAT_VERSION,
        baseline,
        alpha: opts.alpha,
        configs,
        loads,
        metrics,
        observations: obs.len(),
        cells,
        pairs,
        histograms,
    })
}

/// Run totals first (in a fixed order), then per-class metrics grouped by class.
fn metric_order(obs: &[Observation]) -> Vec<String> {
    const TOTALS: [&str; 7] = [
        "iops",
        "mbps",
        "cpu_us_per_io",
        "max_iops",
        "max_mbps",
        "latency_us",
        "latency_p99_us",
    ];
    let mut all: Vec<&str> = Vec::new();
    for o in obs {
        for m in o.metrics.keys() {
            if !all.contains(&m.as_str()) {
                all.push(m);
            }
        }
    }
    let mut out: Vec<String> = TOTALS
        .iter()
        .filter(|t| all.contains(t))
        .map(|t| t.to_string())
        .collect();
    // Per-class metrics keep the order observations list them in (class, then figure).
    for m in all {
        if !TOTALS.contains(&m) {
            out.push(m.to_string());
        }
    }
    out
}

fn values(group: &[&Observation], metric: &str) -> Vec<f64> {
    group
        .iter()
        .filter_map(|o| o.metrics.get(metric).copied())
        .collect()
}

fn summed_histograms(config: &str, load: u32, group: &[&Observation]) -> Vec<Histogram> {
    let mut by_class: BTreeMap<&str, BTreeMap<(u64, u64), u64>> = BTreeMap::new();
    for o in group {
        for (class, buckets) in &o.histograms {
            let h = by_class.entry(class).or_default();
            for &(lo, hi, n) in buckets {
                *h.entry((lo, hi)).or_default() += n;
            }
        }
    }
    by_class
        .into_iter()
        .map(|(class, h)| Histogram {
            config: config.to_string(),
            load,
            class: class.to_string(),
            buckets: h.into_iter().map(|((lo, hi), n)| (lo, hi, n)).collect(),
        })
        .collect()
}

fn pair(
    config: &str,
    load: u32,
    metric: &str,
    base: &[&Observation],
    other: &[&Observation],
    alpha: f64,
) -> Option<Pair> {
    let (b, o) = (values(base, metric), values(other, metric));
    if b.is_empty() || o.is_empty() {
        return None;
    }
    let direction = Direction::of(metric);
    let (impacts, ratios): (Vec<f64>, Vec<f64>) = paired(base, other, metric)
        .into_iter()
        .filter(|(b, _)| *b != 0.0)
        .map(|(b, o)| (100.0 * (b - o) / b, o / b))
        .unzip();
    let welch = statistics::welch(&b, &o);
    let mann_whitney = statistics::mann_whitney(&b, &o);
    // Welch's test assumes roughly normal samples: few repeats, skew or one stalled run
    // (an outlier) call for the rank test, which none of them can mislead.
    let rank = b.len().min(o.len()) < WELCH_MIN_REPEATS
        || statistics::skewness(&b).abs() > SKEWED
        || statistics::skewness(&o).abs() > SKEWED
        || statistics::has_outlier(&b)
        || statistics::has_outlier(&o);
    let (test, chosen) = if rank {
        ("mann-whitney", mann_whitney)
    } else {
        ("welch", welch)
    };
    let p_value = chosen.map(|t| t.p_value);
    let verdict = match p_value {
        _ if rank && smallest_rank_p(b.len(), o.len()) > alpha => Verdict::TooFewRepeats,
        None => Verdict::TooFewRepeats,
        Some(p) if p < alpha => {
            let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
            let more = mean(&o) > mean(&b);
            if more == (direction == Direction::HigherIsBetter) {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        }
        Some(_) => Verdict::WithinNoise,
    };
    Some(Pair {
        config: config.to_string(),
        load,
        metric: metric.to_string(),
        direction,
        impact_pct: statistics::summarize(&impacts),
        ratio: statistics::summarize(&ratios),
        welch,
        mann_whitney,
        test: test.to_string(),
        p_value,
        verdict,
    })
}

/// (baseline, other) values of the same repeat: by repeat number where both sides number
/// their repeats, else in order.
fn paired(base: &[&Observation], other: &[&Observation], metric: &str) -> Vec<(f64, f64)> {
    let numbered = |g: &[&Observation]| g.iter().all(|o| o.repeat.is_some());
    if numbered(base) && numbered(other) {
        base.iter()
            .filter_map(|b| {
                let o = other.iter().find(|o| o.repeat == b.repeat)?;
                Some((*b.metrics.get(metric)?, *o.metrics.get(metric)?))
            })
            .collect()
    } else {
        base.iter()
            .zip(other)
            .filter_map(|(b, o)| Some((*b.metrics.get(metric)?, *o.metrics.get(metric)?)))
            .collect()
    }
}

/// The smallest two-sided p-value the exact rank test can give for these sample sizes:
/// the two most extreme arrangements out of (n1 + n2 choose n1).
fn smallest_rank_p(n1: usize, n2: usize) -> f64 {
    let (k, n) = (n1.min(n2), n1 + n2);
    let mut arrangements = 1.0f64;
    for i in 0..k {
        arrangements = arrangements * (n - i) as f64 / (i + 1) as f64;
    }
    2.0 / arrangements
}

#[cfg(test)]
#[path = "comparison_tests.rs"]
mod tests;
