//! The comparison itself: every metric summarised per configuration and load over its
//! repeats, and every configuration set against the baseline with the impact per repeat
//! and a significance test: paired where the runs of both were interleaved repeat by
//! repeat (a sweep's), else of independent samples.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::interleaved::Interleaved;
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
    /// The I/O class whose latency the charts show; see [`Comparison::class`].
    pub class: Option<String>,
    /// The runs of sweeps among the observations (see [`Interleaved::find`]): their
    /// repeats are tested as pairs. Empty: every test is of independent samples.
    pub interleaved: Interleaved,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            baseline: None,
            alpha: 0.05,
            class: None,
            interleaved: Interleaved::default(),
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
    /// The I/O class whose latency the charts show: the one asked for, else single-block
    /// reads (the field's headline latency, "db file sequential read") where the runs
    /// have them, else the class with the largest share of I/O time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Why that class, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_reason: Option<String>,
    /// Differences between the runs that their configurations' options do not explain
    /// (see [`crate::provenance`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The NFS views of each configuration and load whose runs have them (kernel
    /// mount or dbio's client), summed over repeats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nfs_views: Vec<crate::nfs_views::NfsViewRow>,
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
    /// The size of the difference, whatever the test says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Effect>,
    /// 100 * (baseline - other) / baseline per repeat, repeats paired by number (else in
    /// file order); only where both sides have the same repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact_pct: Option<Summary>,
    /// other / baseline per repeat, paired as `impact_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub welch: Option<TestResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mann_whitney: Option<TestResult>,
    /// Wilcoxon's signed-rank test of the per-repeat log ratios (differences where a value
    /// is not positive), where the runs are paired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilcoxon: Option<TestResult>,
    /// The paired t-test of the same, where the runs are paired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_t: Option<TestResult>,
    /// The runs were tested as pairs: both configurations' runs of one sweep, interleaved
    /// repeat by repeat, the same repeats on both sides.
    #[serde(default)]
    pub paired: bool,
    /// Which test the verdict rests on: "welch" or "mann-whitney" for independent runs,
    /// "paired-t" or "wilcoxon-signed-rank" for paired ones; "none" where a side has a
    /// single run.
    pub test: String,
    /// The tests and the effect's interval worked on the logarithms of the values (every
    /// value positive): the ratio of the geometric means, or for paired runs the
    /// per-repeat ratios.
    #[serde(default)]
    pub log_scale: bool,
    /// Why that test, and what it assumes (e.g. normal repeats for Welch at small n).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    pub verdict: Verdict,
    /// Something the reader must know about this pair (e.g. unequal repeats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The size of a difference between the two configurations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// mean(other) / mean(baseline). For paired runs, the estimate of the paired test:
    /// the geometric mean of the per-repeat ratios (paired t on logarithms) or their
    /// Hodges-Lehmann estimate (signed-rank test); without logarithms, the mean (or
    /// Hodges-Lehmann) difference over the baseline's mean, plus 1.
    pub ratio: f64,
    /// 100 * (ratio - 1).
    pub change_pct: f64,
    /// 95% interval of `change_pct` (two repeats a side at least). Independent runs:
    /// Welch's interval of the difference of the mean logarithms (a ratio of geometric
    /// means) where every value is positive, else of the difference of the means over the
    /// baseline's mean. Paired runs: the interval of the test that decided, of the
    /// per-repeat log ratios (or differences): Student's, or the signed-rank test's
    /// (Walsh averages; Student's where it has none at 95%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_ci95: Option<[f64; 2]>,
    /// How many times better the other configuration is in the metric's own direction
    /// (more throughput, less latency): above 1 better, below 1 worse.
    pub factor: f64,
}

impl Effect {
    fn new(
        base: &[f64],
        other: &[f64],
        direction: Direction,
        logs: Option<(&[f64], &[f64])>,
    ) -> Option<Effect> {
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        let (b, o) = (mean(base), mean(other));
        if b == 0.0 || !b.is_finite() || !o.is_finite() {
            return None;
        }
        let change_ci95 = match logs {
            Some((lb, lo)) => statistics::welch_interval(lb, lo, 0.95)
                .map(|[lo, hi]| [100.0 * lo.exp_m1(), 100.0 * hi.exp_m1()]),
            None => statistics::welch_interval(base, other, 0.95)
                .map(|[lo, hi]| [100.0 * lo / b, 100.0 * hi / b]),
        };
        Some(Effect::of_ratio(o / b, change_ci95, direction))
    }

    /// An effect of this ratio (other / baseline) and interval of the change in %.
    fn of_ratio(ratio: f64, change_ci95: Option<[f64; 2]>, direction: Direction) -> Effect {
        let factor = match direction {
            Direction::HigherIsBetter => ratio,
            Direction::LowerIsBetter if ratio > 0.0 => 1.0 / ratio,
            Direction::LowerIsBetter => f64::INFINITY,
        };
        Effect {
            ratio,
            change_pct: 100.0 * (ratio - 1.0),
            change_ci95,
            factor,
        }
    }
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
    /// A single run on a side: no test can tell anything from noise.
    TooFewRepeats,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::TooFewRepeats => "untested (one run)",
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
pub const WELCH_MIN_REPEATS: usize = 5;
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
    let (class, class_reason) = chart_class(obs, &metrics, opts.class.as_deref())?;

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
            let sweep_pairs = opts.interleaved.pairs(base, other);
            for metric in &metrics {
                let sides = Sides {
                    base,
                    other,
                    sweep_pairs: sweep_pairs.as_deref(),
                };
                if let Some(p) = pair(config, load, metric, &sides, opts.alpha) {
                    pairs.push(p);
                }
            }
        }
    }
    let warnings = crate::provenance::differences(obs, &configs);
    let nfs_views = crate::nfs_views::rows(obs, &configs, &loads);
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
        class,
        class_reason,
        warnings,
        nfs_views,
    })
}

/// Names of single-block reads: dbio's class and Oracle's wait event.
const SINGLE_BLOCK: [&str; 2] = ["single-block-read", "db file sequential read"];

/// The latency class the charts show, and why (see [`Comparison::class`]).
fn chart_class(
    obs: &[Observation],
    metrics: &[String],
    wanted: Option<&str>,
) -> Result<(Option<String>, Option<String>), CompareError> {
    let classes: Vec<&str> = metrics
        .iter()
        .filter_map(|m| m.strip_suffix(" mean_us"))
        .collect();
    if let Some(w) = wanted {
        return match classes.iter().find(|c| **c == w) {
            Some(c) => Ok((Some(c.to_string()), Some("chosen with --class".into()))),
            None => Err(CompareError::NoClass {
                class: w.to_string(),
                classes: classes.join(", "),
            }),
        };
    }
    if let Some(c) = classes.iter().find(|c| SINGLE_BLOCK.contains(c)) {
        return Ok((
            Some(c.to_string()),
            Some("single-block reads: the headline latency, db file sequential read".into()),
        ));
    }
    // Time spent per class: I/Os per second times their mean latency, over every run.
    let time = |class: &str| -> f64 {
        obs.iter()
            .filter_map(|o| {
                Some(
                    o.metrics.get(&format!("{class} iops"))?
                        * o.metrics.get(&format!("{class} mean_us"))?,
                )
            })
            .sum()
    };
    let busiest = classes
        .iter()
        .map(|c| (*c, time(c)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    Ok(match busiest {
        Some((c, _)) => (
            Some(c.to_string()),
            Some("the class with the largest share of I/O time (no single-block reads)".into()),
        ),
        None => (None, None),
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

/// The runs of one configuration and load, and of the baseline, that a pair compares.
struct Sides<'a> {
    base: &'a [&'a Observation],
    other: &'a [&'a Observation],
    /// (base, other) indices of the runs of each repeat, where they were interleaved.
    sweep_pairs: Option<&'a [(usize, usize)]>,
}

fn pair(config: &str, load: u32, metric: &str, sides: &Sides, alpha: f64) -> Option<Pair> {
    let (base, other) = (sides.base, sides.other);
    let (b, o) = (values(base, metric), values(other, metric));
    if b.is_empty() || o.is_empty() {
        return None;
    }
    let direction = Direction::of(metric);
    let pairs = paired(base, other, metric);
    // Per-repeat impacts only where every repeat has its partner: a repeat left out
    // would make them disagree with the means.
    let whole = pairs.len() == b.len() && pairs.len() == o.len();
    let (impacts, ratios): (Vec<f64>, Vec<f64>) = if whole {
        pairs
            .into_iter()
            .filter(|(b, _)| *b != 0.0)
            .map(|(b, o)| (100.0 * (b - o) / b, o / b))
            .unzip()
    } else {
        Default::default()
    };
    let note = (!whole).then(|| {
        format!(
            "{} and {} repeats: compared unpaired (means), no per-repeat impact",
            b.len(),
            o.len()
        )
    });
    // Throughput and latency vary by factors (a run twice as fast, a stall), so where
    // every value is positive Welch's test and interval work on their logarithms: the
    // test is then of the ratio of the geometric means, and the interval a ratio too.
    let logs = |xs: &[f64]| -> Option<Vec<f64>> {
        xs.iter()
            .all(|x| *x > 0.0)
            .then(|| xs.iter().map(|x| x.ln()).collect())
    };
    let (tb, to, log_scale) = match (logs(&b), logs(&o)) {
        (Some(lb), Some(lo)) => (lb, lo, true),
        _ => (b.clone(), o.clone(), false),
    };
    let welch = statistics::welch(&tb, &to);
    let mann_whitney = statistics::mann_whitney(&b, &o);
    // Interleaved runs with this metric on both members of every pair are tested as
    // pairs; the unpaired tests above stay in the record beside them.
    let sweep_values = sides.sweep_pairs.and_then(|sp| {
        sp.iter()
            .map(|&(i, j)| {
                Some((
                    *base[i].metrics.get(metric)?,
                    *other[j].metrics.get(metric)?,
                ))
            })
            .collect::<Option<Vec<(f64, f64)>>>()
    });
    let (test, test_note, effect, wilcoxon, paired_t, log_scale) = match sweep_values {
        Some(sv) => {
            let t = paired_runs::test_pairs(&sv, direction, alpha);
            (
                t.test,
                t.note,
                t.effect,
                t.wilcoxon,
                t.paired_t,
                t.log_scale,
            )
        }
        None => {
            let (test, note) = choose_test(&tb, &to, alpha);
            let effect = Effect::new(&b, &o, direction, log_scale.then_some((&tb[..], &to[..])));
            (test, note, effect, None, None, log_scale)
        }
    };
    let chosen = match test {
        Test::Welch => welch,
        Test::MannWhitney => mann_whitney,
        Test::PairedT => paired_t,
        Test::Wilcoxon => wilcoxon,
        Test::None => None,
    };
    let p_value = chosen.map(|t| t.p_value);
    let verdict = match (p_value, &effect) {
        (Some(p), Some(e)) if p < alpha && e.factor != 1.0 => {
            if e.factor > 1.0 {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        }
        (Some(_), _) => Verdict::WithinNoise,
        (None, _) => Verdict::TooFewRepeats,
    };
    Some(Pair {
        config: config.to_string(),
        load,
        metric: metric.to_string(),
        direction,
        effect,
        impact_pct: statistics::summarize(&impacts),
        ratio: statistics::summarize(&ratios),
        welch,
        mann_whitney,
        wilcoxon,
        paired_t,
        paired: test.is_paired(),
        test: test.name().to_string(),
        log_scale,
        test_note,
        p_value,
        verdict,
        note,
    })
}

/// The test a verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Welch,
    MannWhitney,
    PairedT,
    Wilcoxon,
    None,
}

impl Test {
    fn name(self) -> &'static str {
        match self {
            Test::Welch => "welch",
            Test::MannWhitney => "mann-whitney",
            Test::PairedT => "paired-t",
            Test::Wilcoxon => "wilcoxon-signed-rank",
            Test::None => "none",
        }
    }

    fn is_paired(self) -> bool {
        matches!(self, Test::PairedT | Test::Wilcoxon)
    }
}

/// Welch's t-test where both sides have enough repeats to look roughly normal; the rank
/// test where few repeats, skew or one stalled run (an outlier) could mislead Welch's
/// test and the rank test can still reach the level; Welch's test again, its normality
/// assumption stated, where the rank test cannot reach the level at all (3 repeats a side
/// at 5%), so that a large difference is not left unjudged.
fn choose_test(b: &[f64], o: &[f64], alpha: f64) -> (Test, Option<String>) {
    let few = b.len().min(o.len()) < WELCH_MIN_REPEATS;
    let irregular = statistics::skewness(b).abs() > SKEWED
        || statistics::skewness(o).abs() > SKEWED
        || statistics::has_outlier(b)
        || statistics::has_outlier(o);
    if b.len() < 2 || o.len() < 2 {
        return (
            Test::None,
            Some("a single run on a side: no test can tell a difference from noise".into()),
        );
    }
    if !few && !irregular {
        return (Test::Welch, None);
    }
    let why = if few {
        format!("fewer than {WELCH_MIN_REPEATS} repeats a side")
    } else {
        "skewed repeats or an outlier".to_string()
    };
    if statistics::smallest_rank_p(b.len(), o.len()) < alpha {
        return (Test::MannWhitney, Some(format!("rank test: {why}")));
    }
    (
        Test::Welch,
        Some(format!(
            "assumes normally distributed repeats: with {} and {} repeats the rank test cannot reach {}%",
            b.len(),
            o.len(),
            alpha * 100.0
        )),
    )
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

#[path = "comparison_paired.rs"]
mod paired_runs;

#[cfg(test)]
#[path = "comparison_tests.rs"]
mod tests;
