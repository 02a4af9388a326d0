//! Tests of paired measurements: the runs of one repeat of a sweep were made one right
//! after another, so whatever drifted (the machine's other work, the storage's state)
//! moved both alike, and the difference within a pair is free of it. Each test takes the
//! per-pair differences `d` (other - baseline, or the logarithms of other / baseline).

use super::{mean, normal_sf, t_quantile, t_two_sided_p, variance, TestResult};

/// Student's paired t-test, two-sided: mean(d) / (sd(d) / sqrt(n)) with n - 1 degrees of
/// freedom, as SciPy's `ttest_rel(other, baseline)`. Needs two pairs. Without spread the
/// difference is exact: p is 0 if the pairs differ, 1 if they do not.
pub fn paired_t(d: &[f64]) -> Option<TestResult> {
    if d.len() < 2 || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = d.len() as f64;
    let m = mean(d);
    let se = (variance(d, m) / n).sqrt();
    let df = Some(n - 1.0);
    if se == 0.0 {
        let differ = m != 0.0;
        return Some(TestResult {
            statistic: if differ {
                f64::INFINITY.copysign(m)
            } else {
                0.0
            },
            p_value: if differ { 0.0 } else { 1.0 },
            df,
        });
    }
    let t = m / se;
    Some(TestResult {
        statistic: t,
        p_value: t_two_sided_p(t, n - 1.0),
        df,
    })
}

/// The two-sided interval at `level` of the mean difference by the paired t-test: mean(d)
/// plus or minus Student's quantile at n - 1 degrees of freedom times sd(d) / sqrt(n).
/// Needs two pairs; without spread the interval is the difference.
pub fn paired_t_interval(d: &[f64], level: f64) -> Option<[f64; 2]> {
    if d.len() < 2 || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = d.len() as f64;
    let m = mean(d);
    let half = t_quantile(0.5 + level / 2.0, n - 1.0) * (variance(d, m) / n).sqrt();
    Some([m - half, m + half])
}

/// The smallest two-sided p-value the exact signed-rank test can give for `n` pairs that
/// differ: all of them one way, 2 of the 2^n equally likely sign patterns.
pub fn smallest_signed_rank_p(n: usize) -> f64 {
    (2.0 * 0.5f64.powi(n.min(1100) as i32)).min(1.0)
}

/// Pairs beyond which the signed-rank test uses the normal approximation (as SciPy does).
const EXACT_MAX: usize = 50;

/// Wilcoxon's signed-rank test, two-sided. The |d| are ranked, ties sharing their mean
/// rank; a zero difference takes its rank and is then left out (Pratt's treatment: a pair
/// that did not differ still counts against a difference, where dropping it first would
/// make the test bolder). R+ is the sum of the ranks of the positive differences; under
/// no difference every sign pattern is equally likely, and p comes from that exact
/// distribution of R+ over the ranks as they are (ties and zeros included) for up to 50
/// pairs that differ, else from the normal approximation with its exact variance, the sum
/// of the squared ranks over 4 (SciPy's tie and zero corrections; no continuity
/// correction). Without ties or zeros this is SciPy's `wilcoxon(other, baseline)`.
pub fn wilcoxon(d: &[f64]) -> Option<TestResult> {
    if d.is_empty() || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let ranks = abs_ranks(d);
    // Ranks of the pairs that differ, doubled so that shared (x.5) ranks are integers.
    let signed: Vec<(u64, bool)> = d
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x != 0.0)
        .map(|(x, r)| ((2.0 * r).round() as u64, *x > 0.0))
        .collect();
    let total: u64 = signed.iter().map(|s| s.0).sum();
    let plus2: u64 = signed.iter().filter(|s| s.1).map(|s| s.0).sum();
    let statistic = plus2.min(total - plus2) as f64 / 2.0;
    if signed.is_empty() {
        return Some(TestResult {
            statistic,
            p_value: 1.0,
            df: None,
        });
    }
    let p = if signed.len() <= EXACT_MAX {
        let dist = rank_sum_distribution(signed.iter().map(|s| s.0));
        let below: f64 = dist[..=plus2 as usize].iter().sum();
        let above: f64 = dist[plus2 as usize..].iter().sum();
        2.0 * below.min(above)
    } else {
        let var: f64 = signed
            .iter()
            .map(|s| (s.0 as f64 / 2.0).powi(2))
            .sum::<f64>()
            / 4.0;
        let z = (statistic - total as f64 / 4.0) / var.sqrt();
        2.0 * normal_sf(z.abs())
    };
    Some(TestResult {
        statistic,
        p_value: p.clamp(0.0, 1.0),
        df: None,
    })
}

/// Ranks of |d| from 1, ties sharing their mean rank.
fn abs_ranks(d: &[f64]) -> Vec<f64> {
    let abs: Vec<f64> = d.iter().map(|x| x.abs()).collect();
    let mut order: Vec<usize> = (0..abs.len()).collect();
    order.sort_by(|&i, &j| abs[i].total_cmp(&abs[j]));
    let mut ranks = vec![0.0; abs.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && abs[order[j]] == abs[order[i]] {
            j += 1;
        }
        for &k in &order[i..j] {
            ranks[k] = (i + 1 + j) as f64 / 2.0;
        }
        i = j;
    }
    ranks
}

/// P(sum = s) for s = 0..=sum of `ranks`, where each rank counts with probability 1/2 on
/// its own: the distribution of R+ under no difference. Halving at each step keeps every
/// probability a dyadic fraction, which f64 holds exactly for the sizes used here.
fn rank_sum_distribution(ranks: impl Iterator<Item = u64>) -> Vec<f64> {
    let mut dist = vec![1.0];
    for r in ranks {
        let r = r as usize;
        let mut next = vec![0.0; dist.len() + r];
        for (s, p) in dist.iter().enumerate() {
            next[s] += 0.5 * p;
            next[s + r] += 0.5 * p;
        }
        dist = next;
    }
    dist
}

/// Walsh averages (d_i + d_j) / 2 for i <= j, sorted.
fn walsh_averages(d: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for i in 0..d.len() {
        for j in i..d.len() {
            w.push((d[i] + d[j]) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    w
}

/// The Hodges-Lehmann estimate of the centre of `d`: the median of the Walsh averages,
/// the shift that the signed-rank test finds least surprising.
pub fn hodges_lehmann(d: &[f64]) -> Option<f64> {
    if d.is_empty() || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let w = walsh_averages(d);
    let m = w.len();
    Some(if m % 2 == 1 {
        w[m / 2]
    } else {
        (w[m / 2 - 1] + w[m / 2]) / 2.0
    })
}

/// The two-sided interval at `level` of the centre of `d` that the signed-rank test gives:
/// the shifts it would not reject, from the k-th smallest to the k-th largest of the
/// M = n(n+1)/2 Walsh averages, where k - 1 is the largest R+ with P(R+ <= k - 1) at most
/// (1 - level) / 2 (exact distribution without ties up to 50 pairs, else the normal
/// approximation). `None` for fewer than two pairs or where no sign pattern is that rare
/// (5 pairs or fewer at 95%).
pub fn signed_rank_interval(d: &[f64], level: f64) -> Option<[f64; 2]> {
    if d.len() < 2 || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = d.len();
    let tail = (1.0 - level) / 2.0;
    let k = if n <= EXACT_MAX {
        let dist = rank_sum_distribution(1..=n as u64);
        let mut cdf = 0.0;
        let mut below = 0;
        for p in dist {
            cdf += p;
            if cdf > tail {
                break;
            }
            below += 1;
        }
        below
    } else {
        let nf = n as f64;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        (nf * (nf + 1.0) / 4.0 - normal_quantile(1.0 - tail) * sd).floor() as usize
    };
    if k == 0 {
        return None;
    }
    let w = walsh_averages(d);
    Some([w[k - 1], w[w.len() - k]])
}

/// The z with P(Z <= z) = p for a standard normal Z, by bisection.
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0, 40.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if 1.0 - normal_sf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}
