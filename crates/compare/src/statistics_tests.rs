use super::*;

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

#[test]
fn t_quantiles_match_the_tables() {
    for (df, q) in [
        (1.0, 12.706_204_736),
        (4.0, 2.776_445_105),
        (10.0, 2.228_138_852),
        (30.0, 2.042_272_456),
    ] {
        let got = t_quantile(0.975, df);
        assert!(close(got, q, 1e-8), "df {df}: {got} != {q}");
        assert!(close(t_quantile(0.025, df), -q, 1e-8));
    }
    assert!(close(t_two_sided_p(2.0, 5.0), 0.101_939_478_83, 1e-9));
    assert!(close(t_cdf(-2.0, 5.0), 0.050_969_739_41, 1e-9));
}

#[test]
fn summary_of_repeats() {
    let s = summarize(&[10.0, 12.0, 14.0]).unwrap();
    assert_eq!(
        (s.n, s.mean, s.sd, s.min, s.max),
        (3, 12.0, 2.0, 10.0, 14.0)
    );
    let [lo, hi] = s.ci95.unwrap();
    // 12 -+ t(0.975, 2) * 2 / sqrt(3), t = 4.302652730
    let half = 4.302_652_730 * 2.0 / 3f64.sqrt();
    assert!(close(lo, 12.0 - half, 1e-8) && close(hi, 12.0 + half, 1e-8));
    let one = summarize(&[5.0]).unwrap();
    assert_eq!((one.sd, one.ci95), (0.0, None));
    assert!(summarize(&[]).is_none());
    assert!(summarize(&[1.0, f64::NAN]).is_none());
}

#[test]
fn welch_on_a_textbook_pair() {
    let a = [19.1, 21.4, 18.7, 20.2, 22.0, 19.8];
    let b = [23.5, 22.1, 25.3, 24.0, 21.9];
    let r = welch(&a, &b).unwrap();
    assert!(close(r.statistic, -3.854_040_673_384, 1e-9), "{r:?}");
    assert!(close(r.p_value, 0.004_519_741_348_511, 1e-7), "{r:?}");
    assert!(welch(&a, &[1.0]).is_none());
}

#[test]
fn welch_without_spread_is_exact() {
    assert_eq!(welch(&[3.0, 3.0], &[3.0, 3.0]).unwrap().p_value, 1.0);
    assert_eq!(welch(&[3.0, 3.0], &[4.0, 4.0]).unwrap().p_value, 0.0);
}

#[test]
fn mann_whitney_exact_and_asymptotic() {
    // No ties, 6 and 5 values: the exact distribution.
    let r = mann_whitney(
        &[19.1, 21.4, 18.7, 20.2, 22.0, 19.8],
        &[23.5, 22.1, 25.3, 24.0, 21.9],
    )
    .unwrap();
    assert_eq!(r.statistic, 1.0);
    assert!(close(r.p_value, 0.008_658_008_658, 1e-9), "{r:?}");
    // Complete separation of 3 and 3: 2 of the 20 arrangements are as extreme.
    let r = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
    assert!(close(r.p_value, 0.1, 1e-12));
    // Ties: the normal approximation with tie and continuity corrections.
    let r = mann_whitney(
        &[1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0, 9.0, 10.0],
        &[3.0, 4.0, 6.0, 6.0, 7.0, 8.0, 8.0, 9.0, 11.0, 12.0, 14.0],
    )
    .unwrap();
    assert_eq!(r.statistic, 23.5);
    assert!(close(r.p_value, 0.028_518_691_508, 1e-8), "{r:?}");
    // Identical samples are no evidence of anything.
    let r = mann_whitney(&[1.0, 1.0], &[1.0, 1.0]).unwrap();
    assert_eq!(r.p_value, 1.0);
}

#[test]
fn outliers_by_the_median_rule() {
    assert!(!has_outlier(&[10.0, 11.0, 9.5, 10.4, 10.2, 9.8]));
    assert!(has_outlier(&[10.0, 11.0, 9.5, 10.4, 10.2, 0.2]));
    assert!(has_outlier(&[5.0, 5.0, 5.0, 9.0]));
    assert!(!has_outlier(&[5.0, 5.0]));
}

#[test]
fn skewness_matches_the_adjusted_estimator() {
    assert!(close(
        skewness(&[1.0, 2.0, 3.0, 10.0, 20.0]),
        1.365_448_928,
        1e-8
    ));
    assert_eq!(skewness(&[1.0, 1.0, 1.0]), 0.0);
}

/// A Python with SciPy (scripts/install-deps installs one); without one the tests that
/// need it are skipped, unless DBIO_REQUIRE_PEERS is set.
pub(super) fn scipy_python() -> Option<&'static str> {
    let python = ["/usr/bin/python3", "python3"].into_iter().find(|p| {
        std::process::Command::new(p)
            .args(["-c", "import scipy"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if python.is_none() {
        assert!(
            std::env::var_os("DBIO_REQUIRE_PEERS").is_none(),
            "SciPy is missing (python3-scipy)"
        );
        eprintln!("skipped: no Python with SciPy");
    }
    python
}

/// Random samples against SciPy, where a Python with SciPy is present.
#[test]
fn agrees_with_scipy() {
    let Some(python) = scipy_python() else {
        return;
    };
    // A small deterministic generator: skewed, tied and plain samples of 2 to 30 values.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut cases = Vec::new();
    for i in 0..60 {
        let (na, nb) = (2 + (next() * 29.0) as usize, 2 + (next() * 29.0) as usize);
        let shift = next() * 2.0;
        let mut draw = |n: usize, s: f64| -> Vec<f64> {
            (0..n)
                .map(|_| match i % 3 {
                    0 => 100.0 + 10.0 * next() + s * 5.0,
                    1 => (50.0 * (-next().ln()) + s * 20.0).round(),
                    _ => (next() * 6.0 + s).floor(),
                })
                .collect()
        };
        let a = draw(na, 0.0);
        let b = draw(nb, shift);
        cases.push((a, b));
    }
    let script = format!(
        "import json,sys\nfrom scipy import stats\nfor a,b in json.loads({:?}):\n \
         w=stats.ttest_ind(a,b,equal_var=False)\n m=stats.mannwhitneyu(a,b)\n \
         print(repr(float(w.statistic)),repr(float(w.pvalue)),repr(float(m.statistic)),repr(float(m.pvalue)))\n",
        serde_json::to_string(&cases).unwrap()
    );
    let out = std::process::Command::new(python)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut compared = 0;
    for ((a, b), line) in cases.iter().zip(text.lines()) {
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(f64::NAN))
            .collect();
        let m = mann_whitney(a, b).unwrap();
        assert!(
            close(m.statistic, v[2], 1e-12),
            "U {a:?} {b:?}: {m:?} {v:?}"
        );
        assert!(close(m.p_value, v[3], 1e-6), "U p {a:?} {b:?}: {m:?} {v:?}");
        if v[1].is_finite() {
            let w = welch(a, b).unwrap();
            assert!(close(w.statistic, v[0], 1e-9), "t {a:?} {b:?}: {w:?} {v:?}");
            assert!(close(w.p_value, v[1], 1e-6), "t p {a:?} {b:?}: {w:?} {v:?}");
            compared += 1;
        }
    }
    assert_eq!(text.lines().count(), cases.len());
    assert!(compared > 40, "only {compared} Welch cases comparable");
}

#[test]
fn welch_interval_matches_scipy() {
    // scipy 1.17.1: ttest_ind(b, a, equal_var=False).confidence_interval(0.95) and (0.90).
    let a = [19.1, 21.4, 18.7, 20.2, 22.0, 19.8];
    let b = [23.5, 22.1, 25.3, 24.0, 21.9];
    let [lo, hi] = welch_interval(&a, &b, 0.95).unwrap();
    assert!(close(lo, 1.281_192_701_758_009, 1e-8), "{lo}");
    assert!(close(hi, 5.038_807_298_241_998, 1e-8), "{hi}");
    let [lo, hi] = welch_interval(&a, &b, 0.90).unwrap();
    assert!(close(lo, 1.642_495_028_942_347_7, 1e-8), "{lo}");
    assert!(close(hi, 4.677_504_971_057_659, 1e-8), "{hi}");
    assert_eq!(
        welch_interval(&[1.0, 1.0], &[3.0, 3.0], 0.95),
        Some([2.0, 2.0])
    );
    assert!(welch_interval(&[1.0], &[3.0, 3.0], 0.95).is_none());
}

#[test]
fn three_repeats_a_side_welch_decides_what_the_rank_test_cannot() {
    // IOPS of a queue depth of 1 against 8, three repeats each. scipy 1.17.1:
    // ttest_ind(q1, q8, equal_var=False): t -137.24596702614255, p 5.069980420362761e-05,
    // df 2.010771667222704; mannwhitneyu(q1, q8, method='exact').pvalue 0.1.
    let q1 = [1496.0, 1510.0, 1523.0];
    let q8 = [21890.0, 22168.0, 22410.0];
    let w = welch(&q1, &q8).unwrap();
    assert!(close(w.statistic, -137.245_967_026_142_55, 1e-9), "{w:?}");
    assert!(close(w.p_value, 5.069_980_420_362_761e-5, 1e-6), "{w:?}");
    assert!(close(w.df.unwrap(), 2.010_771_667_222_704, 1e-9), "{w:?}");
    let [lo, hi] = welch_interval(&q8, &q1, 0.95).unwrap();
    assert!(close(lo, -21_290.283_209_050_915, 1e-8) && close(hi, -20_002.383_457_615_75, 1e-8));
    assert!(close(mann_whitney(&q1, &q8).unwrap().p_value, 0.1, 1e-12));
}

#[test]
fn repeats_the_rank_test_needs() {
    // 2 / C(6, 3) = 0.1 and 2 / C(8, 4) = 1 / 35: four a side reach 5%, not 1%;
    // 2 / C(10, 5) = 1 / 126 reaches 1%.
    assert!(close(smallest_rank_p(3, 3), 0.1, 1e-12));
    assert!(close(smallest_rank_p(4, 4), 1.0 / 35.0, 1e-12));
    assert!(close(smallest_rank_p(2, 3), 0.2, 1e-12));
    assert_eq!(rank_repeats_needed(0.05), 4);
    assert_eq!(rank_repeats_needed(0.01), 5);
}
