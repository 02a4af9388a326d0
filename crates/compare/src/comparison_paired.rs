//! The test of paired runs: one configuration against the baseline where both ran
//! repeat by repeat, interleaved (a sweep). Drift between repeats moves both members of a
//! pair alike, so the test works on what differs within each pair, the per-repeat log
//! ratio (the difference where a value is not positive), and the drift drops out.

use super::{Effect, Test, SKEWED, WELCH_MIN_REPEATS};
use crate::observation::Direction;
use crate::statistics::{self, TestResult};

/// What the paired analysis of one metric found.
pub(super) struct PairedOutcome {
    pub test: Test,
    pub note: Option<String>,
    pub effect: Option<Effect>,
    pub wilcoxon: Option<TestResult>,
    pub paired_t: Option<TestResult>,
    pub log_scale: bool,
}

/// Tests (baseline, other) values of the same repeats as pairs.
pub(super) fn test_pairs(pairs: &[(f64, f64)], direction: Direction, alpha: f64) -> PairedOutcome {
    let log_scale = pairs.iter().all(|&(b, o)| b > 0.0 && o > 0.0);
    let d: Vec<f64> = pairs
        .iter()
        .map(|&(b, o)| if log_scale { (o / b).ln() } else { o - b })
        .collect();
    let wilcoxon = statistics::wilcoxon(&d);
    let paired_t = statistics::paired_t(&d);
    let (test, note) = choose(&d, alpha, log_scale);
    // The estimate and interval of the test that decided, so that they agree with it.
    let (centre, interval) = match test {
        Test::Wilcoxon => (
            statistics::hodges_lehmann(&d),
            statistics::signed_rank_interval(&d, 0.95)
                .or_else(|| statistics::paired_t_interval(&d, 0.95)),
        ),
        _ => (
            (!d.is_empty()).then(|| d.iter().sum::<f64>() / d.len() as f64),
            statistics::paired_t_interval(&d, 0.95),
        ),
    };
    let base_mean = pairs.iter().map(|p| p.0).sum::<f64>() / pairs.len() as f64;
    let effect = centre.and_then(|c| {
        if log_scale {
            let ci = interval.map(|[lo, hi]| [100.0 * lo.exp_m1(), 100.0 * hi.exp_m1()]);
            Some(Effect::of_ratio(c.exp(), ci, direction))
        } else if base_mean != 0.0 && base_mean.is_finite() {
            let ci = interval.map(|[lo, hi]| [100.0 * lo / base_mean, 100.0 * hi / base_mean]);
            Some(Effect::of_ratio(1.0 + c / base_mean, ci, direction))
        } else {
            None
        }
    });
    PairedOutcome {
        test,
        note,
        effect,
        wilcoxon,
        paired_t,
        log_scale,
    }
}

/// The paired t-test on the log ratios where there are enough pairs to look roughly
/// normal; the signed-rank test where few pairs, skew or one pair far from the others
/// (a stall in one run) could mislead it and the signed-rank test can still reach the
/// level; the paired t-test again, its normality assumption stated, where the
/// signed-rank test cannot reach the level at all (5 pairs at 5%, 8 at 0.5%), so that a
/// large difference is not left unjudged.
fn choose(d: &[f64], alpha: f64, log_scale: bool) -> (Test, Option<String>) {
    let n = d.len();
    if n < 2 {
        return (
            Test::None,
            Some("a single run on a side: no test can tell a difference from noise".into()),
        );
    }
    let what = if log_scale {
        "log ratios"
    } else {
        "differences"
    };
    let few = n < WELCH_MIN_REPEATS;
    let irregular = statistics::skewness(d).abs() > SKEWED || statistics::has_outlier(d);
    if !few && !irregular {
        return (Test::PairedT, None);
    }
    let why = if few {
        format!("fewer than {WELCH_MIN_REPEATS} pairs")
    } else {
        format!("skewed per-repeat {what} or an outlier")
    };
    let differing = d.iter().filter(|x| **x != 0.0).count();
    if statistics::smallest_signed_rank_p(differing) < alpha {
        return (Test::Wilcoxon, Some(format!("signed-rank test: {why}")));
    }
    (
        Test::PairedT,
        Some(format!(
            "assumes normally distributed per-repeat {what}: with {n} pairs the signed-rank \
             test cannot reach {}%",
            alpha * 100.0
        )),
    )
}
