use super::*;

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

/// Log ratios of eight pairs, one against the others' direction.
const D: [f64; 8] = [0.12, -0.05, 0.31, 0.22, 0.18, 0.27, 0.09, 0.15];

#[test]
fn paired_t_on_a_known_set() {
    // scipy 1.10.1: ttest_1samp(D, 0) (= ttest_rel(other, baseline)): t 4.038298384582687,
    // p 0.004943515231191367, confidence_interval(0.95) (0.06683011712777054,
    // 0.25566988287222947).
    let r = paired_t(&D).unwrap();
    assert!(close(r.statistic, 4.038_298_384_582_687, 1e-9), "{r:?}");
    assert!(close(r.p_value, 0.004_943_515_231_191_367, 1e-7), "{r:?}");
    assert_eq!(r.df, Some(7.0));
    let [lo, hi] = paired_t_interval(&D, 0.95).unwrap();
    assert!(close(lo, 0.066_830_117_127_770_54, 1e-8), "{lo}");
    assert!(close(hi, 0.255_669_882_872_229_47, 1e-8), "{hi}");
    // Pairs that all differ by the same amount: exact.
    assert_eq!(paired_t(&[0.5, 0.5, 0.5]).unwrap().p_value, 0.0);
    assert_eq!(paired_t(&[0.0, 0.0]).unwrap().p_value, 1.0);
    assert_eq!(paired_t_interval(&[0.5, 0.5], 0.95), Some([0.5, 0.5]));
    assert!(paired_t(&[0.5]).is_none());
}

#[test]
fn eight_pairs_one_way_give_two_sign_patterns_of_256() {
    // scipy 1.10.1: wilcoxon([1..8]) statistic 0, p 0.0078125; wilcoxon(D) statistic 1,
    // p 0.015625.
    let one_way: Vec<f64> = (1..=8).map(f64::from).collect();
    let r = wilcoxon(&one_way).unwrap();
    assert_eq!((r.statistic, r.p_value), (0.0, 2.0 / 256.0));
    assert_eq!(smallest_signed_rank_p(8), 2.0 / 256.0);
    assert_eq!(smallest_signed_rank_p(1), 1.0);
    let r = wilcoxon(&D).unwrap();
    assert_eq!(r.statistic, 1.0);
    assert!(close(r.p_value, 0.015_625, 1e-12), "{r:?}");
    // The mirror image is as surprising.
    let mirrored: Vec<f64> = D.iter().map(|x| -x).collect();
    assert_eq!(wilcoxon(&mirrored).unwrap(), wilcoxon(&D).unwrap());
    // No pair differs: no evidence of anything.
    assert_eq!(wilcoxon(&[0.0, 0.0, 0.0]).unwrap().p_value, 1.0);
    assert!(wilcoxon(&[]).is_none() && wilcoxon(&[1.0, f64::NAN]).is_none());
}

/// The two-sided p by counting every one of the 2^n sign patterns of the ranks (zeros
/// ranked, then left out): those whose R+ lies as far from the centre as the observed.
fn brute_force_p(d: &[f64]) -> f64 {
    let abs: Vec<f64> = d.iter().map(|x| x.abs()).collect();
    let rank = |i: usize| {
        let below = abs.iter().filter(|a| **a < abs[i]).count() as f64;
        let tied = abs.iter().filter(|a| **a == abs[i]).count() as f64;
        below + (tied + 1.0) / 2.0
    };
    let ranks: Vec<f64> = (0..d.len()).filter(|&i| d[i] != 0.0).map(rank).collect();
    let plus: f64 = (0..d.len()).filter(|&i| d[i] > 0.0).map(rank).sum::<f64>();
    let centre = ranks.iter().sum::<f64>() / 2.0;
    let far = (plus - centre).abs();
    let patterns = 1u32 << ranks.len();
    let as_far = (0..patterns)
        .filter(|bits| {
            let sum: f64 = (0..ranks.len())
                .filter(|k| bits & (1 << k) != 0)
                .map(|k| ranks[k])
                .sum();
            (sum - centre).abs() >= far - 1e-9
        })
        .count();
    as_far as f64 / patterns as f64
}

#[test]
fn ties_and_zeros_take_the_exact_distribution_of_their_ranks() {
    for d in [
        vec![0.3, 0.3, -0.3, 0.5, 0.7, 0.7, 0.9],
        vec![0.0, 0.2, 0.4, 0.4, 0.6, -0.1, 0.8, 1.0],
        vec![0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 2.0, -1.0, 3.0, 4.0],
        vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        vec![
            0.25, -0.5, 0.75, 1.0, -1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0,
        ],
    ] {
        let got = wilcoxon(&d).unwrap().p_value;
        let want = brute_force_p(&d);
        assert!(close(got, want, 1e-12), "{d:?}: {got} != {want}");
    }
    // Six equal differences share one rank; all one way is still 2 patterns in 64.
    assert_eq!(wilcoxon(&[1.0; 6]).unwrap().p_value, 2.0 / 64.0);
    // A zero keeps its rank: the others are ranked 2 to 7, not 1 to 6.
    let r = wilcoxon(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, -6.0]).unwrap();
    assert_eq!(r.statistic, 7.0);
}

#[test]
fn the_signed_rank_interval_holds_the_shifts_the_test_keeps() {
    let d = [0.8, 1.9, 2.1, 1.4, 0.2, 2.7, 1.1, 3.4, 1.6, 2.2, -0.4];
    let [lo, hi] = signed_rank_interval(&d, 0.95).unwrap();
    let centre = hodges_lehmann(&d).unwrap();
    assert!(lo < centre && centre < hi, "{lo} {centre} {hi}");
    // Inverting the test: a shift just inside the interval is kept at 5%, one just
    // outside is rejected.
    let p = |theta: f64| {
        let shifted: Vec<f64> = d.iter().map(|x| x - theta).collect();
        wilcoxon(&shifted).unwrap().p_value
    };
    let eps = 1e-9;
    assert!(p(lo + eps) > 0.05 && p(hi - eps) > 0.05);
    assert!(p(lo - eps) <= 0.05 && p(hi + eps) <= 0.05);
    // Five pairs: one pattern in 32 each way is above 2.5%, so no 95% interval exists.
    assert!(signed_rank_interval(&d[..5], 0.95).is_none());
    assert!(signed_rank_interval(&d[..6], 0.95).is_some());
    // Hodges-Lehmann of 1, 2, 3: the median of 1, 1.5, 2, 2, 2.5, 3.
    assert_eq!(hodges_lehmann(&[1.0, 2.0, 3.0]), Some(2.0));
}

#[test]
fn paired_tests_agree_with_scipy() {
    let Some(python) = super::tests::scipy_python() else {
        return;
    };
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    // Small sets without ties or zeros (SciPy's exact distribution, which assumes
    // neither), and large ones with both (its normal approximation, Pratt's zeros), more
    // than 50 of whose pairs differ.
    let mut cases: Vec<Vec<f64>> = Vec::new();
    for i in 0..60 {
        let shift = next() - 0.3;
        let d = if i % 4 == 3 {
            let n = 70 + (next() * 30.0) as usize;
            (0..n)
                .map(|_| ((next() * 9.0).floor() - 3.0 + shift).round())
                .collect()
        } else {
            let n = 2 + (next() * 29.0) as usize;
            (0..n)
                .map(|_| shift + (next() - 0.5) * (1.0 + 3.0 * next()))
                .collect()
        };
        cases.push(d);
    }
    let script = format!(
        "import json\nfrom scipy import stats\nfor d in json.loads({:?}):\n \
         z=0 in d\n w=stats.wilcoxon(d,zero_method='pratt',method='approx' if z else 'auto')\n \
         t=stats.ttest_1samp(d,0)\n c=t.confidence_interval(0.95)\n \
         print(*[repr(float(x)) for x in (w.statistic,w.pvalue,t.statistic,t.pvalue,c.low,c.high)])\n",
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
    assert_eq!(text.lines().count(), cases.len());
    let mut with_zeros = 0;
    for (d, line) in cases.iter().zip(text.lines()) {
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        with_zeros += usize::from(d.contains(&0.0));
        let w = wilcoxon(d).unwrap();
        assert!(close(w.statistic, v[0], 1e-12), "W {d:?}: {w:?} {v:?}");
        assert!(close(w.p_value, v[1], 1e-6), "W p {d:?}: {w:?} {v:?}");
        let t = paired_t(d).unwrap();
        assert!(close(t.statistic, v[2], 1e-9), "t {d:?}: {t:?} {v:?}");
        assert!(close(t.p_value, v[3], 1e-6), "t p {d:?}: {t:?} {v:?}");
        let [lo, hi] = paired_t_interval(d, 0.95).unwrap();
        assert!(close(lo, v[4], 1e-8) && close(hi, v[5], 1e-8), "ci {d:?}");
    }
    assert!(with_zeros >= 5, "only {with_zeros} sets with zeros");
}
