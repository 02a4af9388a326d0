//! The statistics a comparison needs: a summary of repeated measurements with its
//! confidence interval; for independent samples Welch's t-test and the Mann-Whitney U
//! test; for paired ones (the repeats of a sweep) the paired t-test and Wilcoxon's
//! signed-rank test. Small sample sizes are the rule here (3 to 10 repeats), so every
//! figure uses the exact small-sample distribution where one exists (Student's t, the
//! exact U and signed-rank distributions) rather than a normal approximation.

use serde::{Deserialize, Serialize};

/// Repeated measurements of one figure, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of measurements.
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for one measurement.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    /// Two-sided 95% confidence interval of the mean (Student's t with n - 1 degrees of
    /// freedom); absent for a single measurement, which says nothing about its spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
}

/// Summary of `xs`; `None` when `xs` is empty or holds a value that is not finite.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = xs.len();
    let mean = mean(xs);
    let sd = variance(xs, mean).sqrt();
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ci95 = (n > 1).then(|| {
        let half = t_quantile(0.975, (n - 1) as f64) * sd / (n as f64).sqrt();
        [mean - half, mean + half]
    });
    Some(Summary {
        n,
        mean,
        sd,
        min,
        max,
        ci95,
    })
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance; 0 for fewer than two values.
fn variance(xs: &[f64], mean: f64) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Sample skewness (adjusted Fisher-Pearson), 0 where it is undefined.
pub fn skewness(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    if xs.len() < 3 {
        return 0.0;
    }
    let m = mean(xs);
    let m2 = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
    let m3 = xs.iter().map(|x| (x - m).powi(3)).sum::<f64>() / n;
    if m2 == 0.0 {
        return 0.0;
    }
    let g1 = m3 / m2.powf(1.5);
    g1 * (n * (n - 1.0)).sqrt() / (n - 2.0)
}

/// Whether a value lies far from the others: its modified z-score, 0.6745 (x - median) /
/// MAD, beyond 3.5 (Iglewicz and Hoaglin's rule; the median and the median absolute
/// deviation are not pulled by the outlier itself, as mean and sd are). Needs 3 values.
pub fn has_outlier(xs: &[f64]) -> bool {
    if xs.len() < 3 {
        return false;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let m = median(&mut xs.to_vec());
    let mad = median(&mut xs.iter().map(|x| (x - m).abs()).collect());
    if mad == 0.0 {
        // Most values are equal: any other one stands out.
        return xs.iter().any(|&x| x != m);
    }
    xs.iter().any(|&x| (0.6745 * (x - m) / mad).abs() > 3.5)
}

/// The outcome of a test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// t for Welch's and the paired t-test; U of the first sample for Mann-Whitney; the
    /// smaller of the signed rank sums, min(R+, R-), for Wilcoxon's signed-rank test.
    pub statistic: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Degrees of freedom (the t-tests only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
}

/// Welch's unequal-variance t-test, two-sided. Needs two values on each side.
/// When neither sample varies, the difference is exact: p is 0 if the means differ, 1
/// if they do not.
pub fn welch(a: &[f64], b: &[f64]) -> Option<TestResult> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, mb) = (mean(a), mean(b));
    let (va, vb) = (variance(a, ma) / na, variance(b, mb) / nb);
    if va + vb == 0.0 {
        let differ = ma != mb;
        return Some(TestResult {
            statistic: if differ {
                f64::INFINITY.copysign(ma - mb)
            } else {
                0.0
            },
            p_value: if differ { 0.0 } else { 1.0 },
            df: Some(na + nb - 2.0),
        });
    }
    let t = (ma - mb) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    Some(TestResult {
        statistic: t,
        p_value: t_two_sided_p(t, df),
        df: Some(df),
    })
}

/// The two-sided confidence interval at `level` (e.g. 0.95) of mean(b) - mean(a) by
/// Welch's method: the difference of the means plus or minus Student's t quantile at
/// the Welch-Satterthwaite degrees of freedom times the standard error. It assumes each
/// sample is drawn from a normal distribution (no equal variances needed). Needs two
/// values on each side; without spread on either side the interval is the difference.
pub fn welch_interval(a: &[f64], b: &[f64], level: f64) -> Option<[f64; 2]> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, mb) = (mean(a), mean(b));
    let (va, vb) = (variance(a, ma) / na, variance(b, mb) / nb);
    let diff = mb - ma;
    if va + vb == 0.0 {
        return Some([diff, diff]);
    }
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let half = t_quantile(0.5 + level / 2.0, df) * (va + vb).sqrt();
    Some([diff - half, diff + half])
}

/// The smallest two-sided p-value the exact rank test can give for samples of `n1` and
/// `n2` values: the two most extreme arrangements out of (n1 + n2 choose n1).
pub fn smallest_rank_p(n1: usize, n2: usize) -> f64 {
    let (k, n) = (n1.min(n2), n1 + n2);
    let mut arrangements = 1.0f64;
    for i in 0..k {
        arrangements = arrangements * (n - i) as f64 / (i + 1) as f64;
    }
    2.0 / arrangements
}

/// The fewest repeats per configuration with which the rank test can reach `alpha` at all
/// (with every repeat of one side beyond every repeat of the other).
pub fn rank_repeats_needed(alpha: f64) -> usize {
    (1..=64)
        .find(|&n| smallest_rank_p(n, n) < alpha)
        .unwrap_or(64)
}

/// The Mann-Whitney U test, two-sided, as the common statistics packages compute it: the
/// exact distribution of U when one sample has at most 8 values and there are no ties,
/// otherwise the normal approximation with tie and continuity corrections.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<TestResult> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let (ranks, tie_term) = ranks(a, b);
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u2 = (n1 * n2) as f64 - u1;
    let u = u1.max(u2);
    let exact = (n1 <= 8 || n2 <= 8) && tie_term == 0.0 && n1 * n2 <= 100_000;
    let p = if exact {
        2.0 * u_upper_tail(u.round() as usize, n1, n2)
    } else {
        let (n1f, n2f) = (n1 as f64, n2 as f64);
        let n = n1f + n2f;
        let s = (n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
        if s == 0.0 {
            1.0
        } else {
            let z = (u - n1f * n2f / 2.0 - 0.5) / s;
            2.0 * normal_sf(z)
        }
    };
    Some(TestResult {
        statistic: u1,
        p_value: p.clamp(0.0, 1.0),
        df: None,
    })
}

/// Ranks of the pooled samples (ties get their mean rank), in the order a then b, and
/// the tie term: the sum of t^3 - t over groups of t tied values.
fn ranks(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && pooled[order[j]] == pooled[order[i]] {
            j += 1;
        }
        // Positions i..j (0-based) share the mean of ranks i+1..=j.
        let rank = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k] = rank;
        }
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    (ranks, tie_term)
}

/// P(U >= u) under the null hypothesis for samples of n1 and n2 values without ties.
/// The number of arrangements giving each U is the coefficient of the Gaussian binomial
/// [n1 + n2 choose n1] in q, built one factor (1 - q^(n2 + i)) / (1 - q^i) at a time so
/// that every step stays an integer polynomial.
fn u_upper_tail(u: usize, n1: usize, n2: usize) -> f64 {
    let (small, large) = (n1.min(n2), n1.max(n2));
    let top = small * large;
    let mut c = vec![0i128; top + 1];
    c[0] = 1;
    for i in 1..=small {
        let k = large + i;
        for j in (k..=top).rev() {
            c[j] -= c[j - k];
        }
        for j in i..=top {
            c[j] += c[j - i];
        }
    }
    let total: f64 = c.iter().map(|&x| x as f64).sum();
    let tail: f64 = c.iter().skip(u.min(top + 1)).map(|&x| x as f64).sum();
    tail / total
}

pub use paired::{
    hodges_lehmann, paired_t, paired_t_interval, signed_rank_interval, smallest_signed_rank_p,
    wilcoxon,
};

#[path = "statistics_paired.rs"]
mod paired;

/// P(Z > z) for a standard normal Z.
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// Two-sided p-value of Student's t with `df` degrees of freedom: P(|T| >= |t|).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return 0.0;
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// P(T <= t) for Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * t_two_sided_p(t, df);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The t with P(T <= t) = p, by bisection (the CDF is monotone; 200 halvings reach the
/// precision of f64 from any bracket used here).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let mut hi = 1.0;
    while t_cdf(hi, df) < p && hi < 1e12 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= f64::EPSILON * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The regularised incomplete beta function I_x(a, b), by its continued fraction
/// (modified Lentz), using the symmetry I_x(a, b) = 1 - I_(1-x)(b, a) where the fraction
/// converges slowly.
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front =
        libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=1000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        for num in [
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ] {
            d = 1.0 + num * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + num / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        // The last factor applied is the second one; done when it no longer moves h.
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
#[path = "statistics_paired_tests.rs"]
mod paired_tests;

#[cfg(test)]
#[path = "statistics_tests.rs"]
mod tests;
