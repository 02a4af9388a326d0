use super::*;
use crate::interleaved::SweepRun;

fn obs(config: &str, load: u32, repeat: u32, iops: f64, lat: f64) -> Observation {
    Observation {
        config: config.into(),
        load,
        repeat: Some(repeat),
        source: format!("{config}-{load}-{repeat}.json"),
        metrics: [
            ("iops".to_string(), iops),
            ("single-block-read mean_us".to_string(), lat),
        ]
        .into_iter()
        .collect(),
        histograms: [(
            "single-block-read".to_string(),
            vec![(64, 128, 10), (128, 256, repeat as u64)],
        )]
        .into_iter()
        .collect(),
        setup: Default::default(),
        options: Vec::new(),
        nfs: None,
    }
}

fn find<'a>(c: &'a Comparison, config: &str, load: u32, metric: &str) -> &'a Pair {
    c.pairs
        .iter()
        .find(|p| p.config == config && p.load == load && p.metric == metric)
        .unwrap()
}

#[test]
fn a_clear_difference_is_called_and_noise_is_not() {
    let mut all = Vec::new();
    let noise = [0.0, 1.5, -1.0, 2.0, -2.5, 0.5];
    for (r, n) in noise.iter().enumerate() {
        let r = r as u32;
        all.push(obs("knfs", 1, r, 1000.0 + 10.0 * n, 200.0 + n));
        all.push(obs(
            "dnfs",
            1,
            r,
            1500.0 + 10.0 * noise[(r as usize + 2) % 6],
            130.0 - n,
        ));
        all.push(obs(
            "same",
            1,
            r,
            1000.0 + 10.0 * noise[(r as usize + 3) % 6],
            200.0 + noise[(r as usize + 1) % 6],
        ));
    }
    let c = compare(
        &all,
        &Options {
            baseline: Some("knfs".into()),
            alpha: 0.05,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(c.configs, ["knfs", "dnfs", "same"]);
    assert_eq!(c.metrics, ["iops", "single-block-read mean_us"]);
    let p = find(&c, "dnfs", 1, "single-block-read mean_us");
    assert_eq!(
        (p.test.as_str(), p.verdict),
        ("welch", Verdict::Better),
        "{p:?}"
    );
    // Latency impact per repeat: 100 * (200 + n - (130 - n)) / (200 + n).
    let impact = p.impact_pct.as_ref().unwrap();
    assert_eq!(impact.n, 6);
    assert!(
        (impact.min - 100.0 * 65.0 / 197.5).abs() < 1e-9,
        "{impact:?}"
    );
    let p = find(&c, "dnfs", 1, "iops");
    assert_eq!(p.verdict, Verdict::Better);
    assert!((p.ratio.as_ref().unwrap().mean - 1.5).abs() < 0.05);
    for m in ["iops", "single-block-read mean_us"] {
        let p = find(&c, "same", 1, m);
        assert_eq!(p.verdict, Verdict::WithinNoise, "{p:?}");
    }
    // Histograms are summed over the six repeats.
    let h = c.histograms.iter().find(|h| h.config == "dnfs").unwrap();
    assert_eq!(h.buckets, [(64, 128, 60), (128, 256, 15)]);
}

#[test]
fn worse_is_worse_and_few_repeats_say_so() {
    let mut all = Vec::new();
    for r in 0..5 {
        let n = r as f64;
        all.push(obs("a", 4, r, 2000.0 + n, 100.0 + n));
        all.push(obs("b", 4, r, 1000.0 - n, 300.0 - n));
    }
    all.push(obs("a", 8, 0, 1.0, 1.0));
    all.push(obs("a", 8, 1, 1.1, 1.1));
    all.push(obs("b", 8, 0, 9.0, 9.0));
    all.push(obs("b", 8, 1, 9.1, 9.1));
    let c = compare(&all, &Options::default()).unwrap();
    assert_eq!(c.baseline, "a");
    assert_eq!(c.loads, [4, 8]);
    assert_eq!(find(&c, "b", 4, "iops").verdict, Verdict::Worse);
    assert_eq!(
        find(&c, "b", 4, "single-block-read mean_us").verdict,
        Verdict::Worse
    );
    // Two repeats a side: no rank test can reach 5% (its smallest p is 1/3), so Welch's
    // test decides, saying what it assumes; a ninefold difference is not left unjudged.
    let p = find(&c, "b", 8, "iops");
    assert_eq!(
        (p.test.as_str(), p.verdict),
        ("welch", Verdict::Better),
        "{p:?}"
    );
    let note = p.test_note.as_deref().unwrap();
    assert!(
        note.starts_with("assumes normally distributed repeats"),
        "{note}"
    );
    let e = p.effect.as_ref().unwrap();
    assert!(
        (e.ratio - 9.05 / 1.05).abs() < 1e-9 && e.factor == e.ratio,
        "{e:?}"
    );
    let [lo, hi] = e.change_ci95.unwrap();
    assert!(lo > 0.0 && lo < e.change_pct && e.change_pct < hi, "{e:?}");
    // Latency is better lower: b's ninefold latency is ninefold worse.
    let p = find(&c, "b", 8, "single-block-read mean_us");
    assert_eq!(p.verdict, Verdict::Worse);
    assert!((p.effect.as_ref().unwrap().factor - 1.05 / 9.05).abs() < 1e-9);
}

#[test]
fn unequal_repeats_compare_the_means_and_say_so() {
    let all = vec![
        obs("a", 1, 1, 100.0, 10.0),
        obs("a", 1, 2, 102.0, 10.2),
        obs("b", 1, 1, 150.0, 8.0),
        obs("b", 1, 2, 152.0, 8.1),
        obs("b", 1, 3, 149.0, 7.9),
        obs("c", 1, 1, 50.0, 20.0),
    ];
    let c = compare(&all, &Options::default()).unwrap();
    let p = find(&c, "b", 1, "iops");
    assert!(p.impact_pct.is_none() && p.ratio.is_none(), "{p:?}");
    assert_eq!(
        p.note.as_deref(),
        Some("2 and 3 repeats: compared unpaired (means), no per-repeat impact")
    );
    let e = p.effect.as_ref().unwrap();
    assert!((e.ratio - (451.0 / 3.0) / 101.0).abs() < 1e-12, "{e:?}");
    // One run on a side: the size is still told, no test is possible.
    let p = find(&c, "c", 1, "iops");
    assert_eq!(
        (p.test.as_str(), p.verdict),
        ("none", Verdict::TooFewRepeats)
    );
    assert!((p.effect.as_ref().unwrap().factor - 50.0 / 101.0).abs() < 1e-12);
}

#[test]
fn the_charts_show_single_block_reads_else_the_busiest_class() {
    let with = |classes: &[(&str, f64, f64)], config: &str, r: u32| Observation {
        config: config.into(),
        load: 1,
        repeat: Some(r),
        source: format!("{config}{r}"),
        metrics: classes
            .iter()
            .flat_map(|(c, iops, lat)| {
                [(format!("{c} iops"), *iops), (format!("{c} mean_us"), *lat)]
            })
            .collect(),
        histograms: Default::default(),
        setup: Default::default(),
        options: Vec::new(),
        nfs: None,
    };
    // DBWR sorts first, redo has the most time; single-block reads still win.
    let oltp = [
        ("dbwr-write", 100.0, 500.0),
        ("redo-write", 1000.0, 900.0),
        ("single-block-read", 2000.0, 200.0),
    ];
    let obs: Vec<Observation> = ["a", "b"].iter().map(|c| with(&oltp, c, 1)).collect();
    let c = compare(&obs, &Options::default()).unwrap();
    assert_eq!(c.class.as_deref(), Some("single-block-read"));
    let chosen = Options {
        class: Some("dbwr-write".into()),
        ..Options::default()
    };
    assert_eq!(
        compare(&obs, &chosen).unwrap().class.as_deref(),
        Some("dbwr-write")
    );
    let e = compare(
        &obs,
        &Options {
            class: Some("dbwr".into()),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--class \"dbwr\": no such I/O class in these results (they have: dbwr-write, \
         redo-write, single-block-read)"
    );
    let writes: Vec<Observation> = ["a", "b"].iter().map(|c| with(&oltp[..2], c, 1)).collect();
    let c = compare(&writes, &Options::default()).unwrap();
    assert_eq!(
        c.class.as_deref(),
        Some("redo-write"),
        "{:?}",
        c.class_reason
    );
}

#[test]
fn bad_requests_are_named() {
    let one = vec![obs("a", 1, 0, 1.0, 1.0)];
    assert!(matches!(
        compare(&one, &Options::default()),
        Err(CompareError::OneConfig(_))
    ));
    let two = vec![obs("a", 1, 0, 1.0, 1.0), obs("b", 1, 0, 1.0, 1.0)];
    let e = compare(
        &two,
        &Options {
            baseline: Some("c".into()),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "baseline \"c\" is not among the configurations (a, b)"
    );
    assert!(matches!(
        compare(&[], &Options::default()),
        Err(CompareError::Empty)
    ));
}

#[test]
fn three_repeats_call_a_fifteenfold_difference_with_welch_on_logarithms() {
    let (q1, q8) = ([1496.0, 1510.0, 1523.0], [21890.0, 22168.0, 22410.0]);
    let mut all = Vec::new();
    for r in 0..3 {
        all.push(obs("q1", 1, r, q1[r as usize], 400.0));
        all.push(obs("q8", 1, r, q8[r as usize], 400.0));
    }
    let c = compare(&all, &Options::default()).unwrap();
    let p = find(&c, "q8", 1, "iops");
    assert_eq!(
        (p.test.as_str(), p.verdict),
        ("welch", Verdict::Better),
        "{p:?}"
    );
    assert!(p.log_scale);
    // scipy 1.17.1: ttest_ind(log(q1), log(q8), equal_var=False).pvalue
    // = 2.104292093291525e-09; the interval of mean log(q8) - mean log(q1),
    // ttest_ind(log(q8), log(q1), equal_var=False).confidence_interval(0.95)
    // = (2.661851864903038, 2.710548403507723), i.e. 14.3228x to 15.0375x.
    assert!(
        (p.p_value.unwrap() / 2.104_292_093_291_525e-9 - 1.0).abs() < 1e-5,
        "{p:?}"
    );
    let e = p.effect.as_ref().unwrap();
    let [lo, hi] = e.change_ci95.unwrap();
    assert!(
        (lo - 100.0 * 2.661_851_864_903_038f64.exp_m1()).abs() < 1e-6,
        "{e:?}"
    );
    assert!(
        (hi - 100.0 * 2.710_548_403_507_723f64.exp_m1()).abs() < 1e-6,
        "{e:?}"
    );
    assert!((e.factor - q8.iter().sum::<f64>() / q1.iter().sum::<f64>()).abs() < 1e-12);
    assert!(p.test_note.as_deref().unwrap().contains("cannot reach 5%"));
    // The rank test alone could not have said it: 2 of 20 arrangements, p 0.1.
    assert!((p.mann_whitney.unwrap().p_value - 0.1).abs() < 1e-12);
}

/// Every observation taken for its run of one sweep, as `Interleaved::find` does for
/// results listed in a sweep's manifest.
fn one_sweep(all: &[Observation]) -> Interleaved {
    let mut found = Interleaved::default();
    for o in all {
        let run = SweepRun {
            sweep: "/sweeps/s1".into(),
            config: o.config.clone(),
            users: o.load,
            repeat: o.repeat.unwrap(),
        };
        found.insert(&o.source, run);
    }
    found
}

/// Eight interleaved repeats of q1 and q8, q8 with `ratio[r]` times q1's IOPS in repeat r;
/// repeats 5 to 8 ran ten times slower for both (the machine busy with other work).
fn drifting(ratio: [f64; 8]) -> Vec<Observation> {
    let wobble = [1.00, 1.04, 0.97, 1.02, 0.99, 1.03, 0.96, 1.01];
    let mut all = Vec::new();
    for r in 1..=8u32 {
        let i = r as usize - 1;
        let slow = if r >= 5 { 0.1 } else { 1.0 };
        let q1 = 1000.0 * slow * wobble[i];
        all.push(obs("q1", 1, r, q1, 200.0 / (slow * wobble[i])));
        all.push(obs("q8", 1, r, q1 * ratio[i], 150.0 / (slow * wobble[i])));
    }
    all
}

#[test]
fn a_slow_period_that_hits_both_alike_is_drift_when_the_runs_are_paired() {
    let ratio = [1.52, 1.47, 1.55, 1.49, 1.50, 1.46, 1.53, 1.51];
    let all = drifting(ratio);
    let opts = |interleaved: Interleaved| Options {
        baseline: Some("q1".into()),
        interleaved,
        ..Options::default()
    };
    let paired = compare(&all, &opts(one_sweep(&all))).unwrap();
    let p = find(&paired, "q8", 1, "iops");
    assert!(p.paired, "{p:?}");
    assert_eq!(
        (p.test.as_str(), p.verdict),
        ("paired-t", Verdict::Better),
        "{p:?}"
    );
    assert!(p.p_value.unwrap() < 1e-6, "{p:?}");
    // The estimate is the geometric mean of the per-repeat ratios, inside its interval.
    let geometric = (ratio.iter().map(|r| r.ln()).sum::<f64>() / 8.0).exp();
    let e = p.effect.as_ref().unwrap();
    assert!((e.ratio - geometric).abs() < 1e-12, "{e:?}");
    let [lo, hi] = e.change_ci95.unwrap();
    assert!(
        45.0 < lo && lo < e.change_pct && e.change_pct < hi && hi < 55.0,
        "{e:?}"
    );
    let t = p.paired_t.unwrap();
    assert_eq!(p.p_value, Some(t.p_value));
    // Eight pairs of eight one way: the signed-rank test's smallest p, 2 in 256.
    assert_eq!(p.wilcoxon.unwrap().p_value, 2.0 / 256.0);
    // Latency, better lower, alike.
    let p = find(&paired, "q8", 1, "single-block-read mean_us");
    assert_eq!((p.paired, p.verdict), (true, Verdict::Better), "{p:?}");

    // The same runs as independent samples: the slow period's spread swamps the
    // difference, for both unpaired tests.
    let unpaired = compare(&all, &opts(Interleaved::default())).unwrap();
    let p = find(&unpaired, "q8", 1, "iops");
    assert!(
        !p.paired && p.wilcoxon.is_none() && p.paired_t.is_none(),
        "{p:?}"
    );
    assert_eq!(p.verdict, Verdict::WithinNoise, "{p:?}");
    assert!(p.welch.unwrap().p_value > 0.05, "{p:?}");
    assert!(p.mann_whitney.unwrap().p_value > 0.05, "{p:?}");
}

#[test]
fn a_stalled_pair_hands_the_verdict_to_the_signed_rank_test() {
    // One repeat of q1 stalled: q8's ratio in it is far from the others'.
    let ratio = [1.52, 1.47, 1.55, 1.49, 6.0, 1.46, 1.53, 1.51];
    let all = drifting(ratio);
    let c = compare(
        &all,
        &Options {
            baseline: Some("q1".into()),
            interleaved: one_sweep(&all),
            ..Options::default()
        },
    )
    .unwrap();
    let p = find(&c, "q8", 1, "iops");
    assert_eq!(
        (p.test.as_str(), p.verdict),
        ("wilcoxon-signed-rank", Verdict::Better),
        "{p:?}"
    );
    assert!(p.test_note.as_deref().unwrap().contains("outlier"), "{p:?}");
    let w = p.wilcoxon.unwrap();
    assert_eq!((w.statistic, p.p_value), (0.0, Some(2.0 / 256.0)));
    // The estimate and interval are the signed-rank test's: the stall does not pull the
    // estimate up as it pulls the geometric mean.
    let e = p.effect.as_ref().unwrap();
    let geometric = (ratio.iter().map(|r| r.ln()).sum::<f64>() / 8.0).exp();
    assert!(geometric > 1.7 && 1.45 < e.ratio && e.ratio < 1.6, "{e:?}");
    let [lo, hi] = e.change_ci95.unwrap();
    assert!(0.0 < lo && lo < e.change_pct && e.change_pct < hi, "{e:?}");
}

#[test]
fn runs_that_do_not_pair_are_independent_samples() {
    let all = drifting([1.5; 8]);
    let mut found = one_sweep(&all);
    // Repeat 8 of q8 is no run of the sweep (a result added by hand).
    let last = all.iter().find(|o| o.config == "q8" && o.repeat == Some(8));
    found.insert(
        &last.unwrap().source,
        SweepRun {
            sweep: "/sweeps/other".into(),
            config: "q8".into(),
            users: 1,
            repeat: 8,
        },
    );
    let c = compare(
        &all,
        &Options {
            interleaved: found,
            ..Options::default()
        },
    )
    .unwrap();
    let p = find(&c, "q8", 1, "iops");
    assert!(!p.paired && p.paired_t.is_none(), "{p:?}");
    assert!(
        ["welch", "mann-whitney"].contains(&p.test.as_str()),
        "{p:?}"
    );
}
