use super::*;

fn times(s: &mut Schedule, n: usize) -> Vec<u64> {
    (0..n).map(|_| s.take().at_ns).collect()
}

/// Single-block reads at `rate` a second, in `burst`s.
fn reads_in_bursts(rate: f64, burst: Burst) -> Rates {
    Rates::per_class(&[(IoClass::SingleBlockRead, rate)])
        .unwrap()
        .with_burst(IoClass::SingleBlockRead, burst)
}

#[test]
fn fixed_arrivals_are_exact_and_users_interleave() {
    let rates = Rates::total(1000.0).unwrap();
    let mut one = Schedule::new(&rates, Arrivals::Fixed, 0, 1, 7);
    let t = times(&mut one, 200);
    for (k, &at) in t.iter().enumerate() {
        assert_eq!(at, k as u64 * 1_000_000, "arrival {k}");
    }
    // Four users at a quarter of the rate each: together every 1 ms again.
    let mut all: Vec<u64> = (0..4)
        .flat_map(|u| times(&mut Schedule::new(&rates, Arrivals::Fixed, u, 4, 7), 50))
        .collect();
    all.sort_unstable();
    assert_eq!(all, t);
    // A rate that does not divide a second: no drift after many gaps.
    let mut odd = Schedule::new(&Rates::total(3.0).unwrap(), Arrivals::Fixed, 0, 1, 1);
    let last = times(&mut odd, 3001)[3000];
    assert!(last.abs_diff(1_000_000_000_000) <= 1, "{last}");
}

#[test]
fn poisson_gaps_have_the_asked_mean_and_variance() {
    let rate = 5000.0;
    let mut s = Schedule::new(&Rates::total(rate).unwrap(), Arrivals::Poisson, 0, 1, 42);
    let n = 200_000;
    let t = times(&mut s, n);
    let gaps: Vec<f64> = std::iter::once(t[0])
        .chain(t.windows(2).map(|w| w[1] - w[0]))
        .map(|g| g as f64)
        .collect();
    let mean = gaps.iter().sum::<f64>() / n as f64;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let want = 1e9 / rate;
    // Exponential: sd = mean; the sample mean's sd is mean/sqrt(n) (0.22%).
    assert!(
        (mean / want - 1.0).abs() < 0.01,
        "mean gap {mean} ns, want {want}"
    );
    assert!(
        (var.sqrt() / want - 1.0).abs() < 0.02,
        "sd {} ns",
        var.sqrt()
    );
    // Counts per 10 ms window are Poisson: variance near the mean (50).
    let windows = t.last().unwrap() / 10_000_000;
    let mut counts = vec![0f64; windows as usize];
    for &at in &t {
        if let Some(c) = counts.get_mut((at / 10_000_000) as usize) {
            *c += 1.0;
        }
    }
    let m = counts.iter().sum::<f64>() / counts.len() as f64;
    let v = counts.iter().map(|c| (c - m).powi(2)).sum::<f64>() / (counts.len() - 1) as f64;
    assert!((v / m - 1.0).abs() < 0.1, "index of dispersion {}", v / m);
    // The same seed gives the same arrivals; another seed others.
    let again = times(
        &mut Schedule::new(&Rates::total(rate).unwrap(), Arrivals::Poisson, 0, 1, 42),
        100,
    );
    assert_eq!(again, t[..100]);
    let other = times(
        &mut Schedule::new(&Rates::total(rate).unwrap(), Arrivals::Poisson, 0, 1, 43),
        100,
    );
    assert_ne!(other, t[..100]);
}

#[test]
fn per_class_streams_keep_their_rates_in_time_order() {
    let rates = Rates::parse("single-block-read=800, redo-write=200").unwrap();
    assert!(!rates.is_total());
    assert_eq!(rates.sum(), 1000.0);
    for kind in [Arrivals::Fixed, Arrivals::Poisson] {
        let mut s = Schedule::new(&rates, kind, 0, 1, 3);
        let mut n = [0u64; COUNT];
        let mut last = 0;
        loop {
            let a = s.take();
            assert!(a.at_ns >= last, "{kind:?}: out of order");
            last = a.at_ns;
            if a.at_ns >= 10_000_000_000 {
                break;
            }
            n[a.class.unwrap().index()] += 1;
        }
        // 10 s: 8000 and 2000 expected; Poisson within 4 sd.
        let sbr = n[IoClass::SingleBlockRead.index()] as f64;
        let redo = n[IoClass::RedoWrite.index()] as f64;
        assert!(
            (sbr - 8000.0).abs() <= 4.0 * 8000f64.sqrt(),
            "{kind:?}: {sbr}"
        );
        assert!(
            (redo - 2000.0).abs() <= 4.0 * 2000f64.sqrt(),
            "{kind:?}: {redo}"
        );
        assert_eq!(n.iter().sum::<u64>() as f64, sbr + redo);
    }
}

#[test]
fn a_total_is_split_by_the_mix() {
    let oltp = crate::Profile::Oltp.config(8192);
    let asked = Rates::total(1000.0).unwrap().asked(&oltp);
    assert!((asked.iter().sum::<f64>() - 1000.0).abs() < 1e-6);
    // 25% updates: one redo write and a DBWR write each.
    let redo = asked[IoClass::RedoWrite.index()];
    let dbwr = asked[IoClass::DbwrWrite.index()];
    assert!((redo / asked[0] - 1.0 / 3.0).abs() < 0.01, "{asked:?}");
    assert!((dbwr / redo - 1.0).abs() < 0.01, "{asked:?}");
    let per = Rates::per_class(&[(IoClass::RedoWrite, 120.0)]).unwrap();
    assert_eq!(per.asked(&oltp)[IoClass::RedoWrite.index()], 120.0);
    assert_eq!(per.to_arg(), "redo-write=120");
    assert_eq!(Rates::parse(&per.to_arg()).unwrap(), per);
}

#[test]
fn bad_rates_name_the_bad_part() {
    let err = |s: &str| Rates::parse(s).unwrap_err().to_string();
    assert_eq!(
        err("fast"),
        r#""fast": "fast" is not a number of I/Os per second"#
    );
    assert_eq!(err("0"), r#""0": a rate must be above 0 I/Os per second"#);
    assert_eq!(
        err("single-block-read=800,redo=x"),
        r#""redo=x": "x" is not a number of I/Os per second"#
    );
    assert!(
        err("sbr=10,bogus=5").starts_with(r#""bogus=5": unknown class (one of single-block-read,"#)
    );
    assert_eq!(
        err("sbr=10,redo"),
        r#""redo": expected CLASS=IOPS, e.g. redo-write=120"#
    );
    assert_eq!(
        err("sbr=10,single-block-read=5"),
        "single-block-read is given a rate twice"
    );
    assert_eq!(
        err("redo=-3"),
        r#""redo=-3": a rate must be above 0 I/Os per second"#
    );
    assert!(err("1e12").contains("above the most dbio paces"));
    assert_eq!(err(" "), "no rate given");
    assert!(Rates::total(f64::NAN).is_err());
    assert_eq!(Arrivals::parse("Fixed"), Some(Arrivals::Fixed));
    assert_eq!(
        Arrivals::parse("poisson").map(Arrivals::name),
        Some("poisson")
    );
    assert_eq!(Arrivals::parse("bursty"), None);
}

#[test]
fn bursts_keep_the_rate_and_group_the_arrivals() {
    let rate = 200.0;
    let burst = Burst::new(4.0, 300_000.0).unwrap();
    let rates = reads_in_bursts(rate, burst);
    let mut s = Schedule::new(&rates, Arrivals::Poisson, 0, 1, 9);
    let n = 40_000;
    let t = times(&mut s, n);
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "arrivals in time order");
    // The asked rate: 40,000 arrivals about 200 s; bursts' counts add a little
    // spread (10,000 bursts, each Poisson(4): the total's sd is about 1%).
    let secs = t[n - 1] as f64 / 1e9;
    assert!((secs / (n as f64 / rate) - 1.0).abs() < 0.04, "{secs} s");
    // Grouped: most gaps are the burst's 0.3 ms, far below the 5 ms of spread arrivals.
    let close = t.windows(2).filter(|w| w[1] - w[0] == 300_000).count();
    assert!(
        close as f64 > 0.7 * n as f64,
        "{close} of {n} gaps within a burst"
    );
    // Without the burst the same rate has almost no gap of 0.3 ms exactly.
    let mut plain = Schedule::new(
        &Rates::per_class(&[(IoClass::SingleBlockRead, rate)]).unwrap(),
        Arrivals::Poisson,
        0,
        1,
        9,
    );
    let p = times(&mut plain, n);
    assert!(p.windows(2).filter(|w| w[1] - w[0] == 300_000).count() < 10);
    // A mean below one, or a gap that is no time, is no burst.
    assert!(Burst::new(0.5, 1.0).is_none() && Burst::new(2.0, f64::NAN).is_none());
}

#[test]
fn a_share_of_lone_arrivals_keeps_the_rate_and_ungroups_that_share() {
    let rate = 200.0;
    let burst = Burst::new(4.0, 300_000.0).unwrap().with_alone(0.5).unwrap();
    let rates = reads_in_bursts(rate, burst);
    let mut s = Schedule::new(&rates, Arrivals::Poisson, 0, 1, 9);
    let n = 40_000;
    let t = times(&mut s, n);
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "arrivals in time order");
    let secs = t[n - 1] as f64 / 1e9;
    assert!((secs / (n as f64 / rate) - 1.0).abs() < 0.04, "{secs} s");
    // A Poisson(4) burst has 4 - 1 + e^-4 gaps within it, 0.755 per I/O; with half
    // the I/Os alone, 0.377.
    let close = t.windows(2).filter(|w| w[1] - w[0] == 300_000).count() as f64 / n as f64;
    assert!(
        (0.34..0.42).contains(&close),
        "{close} of the gaps within a burst"
    );
    assert!(burst.with_alone(1.0).is_none() && burst.with_alone(-0.1).is_none());
}

#[test]
fn bursts_of_ten_keep_a_minutes_rate_within_three_percent() {
    // 200 reads/s in bursts of 10 over 4 users: 1,200 bursts a minute. Poisson starts
    // would spread the count by 3% (1 sd); a second's count kept leaves the bursts'
    // sizes, 0.9%.
    let burst = Burst::new(10.0, 200_000.0).unwrap();
    let rates = reads_in_bursts(200.0, burst);
    for seed in 0..8 {
        let n: usize = (0..4)
            .map(|u| {
                let mut s = Schedule::new(&rates, Arrivals::Poisson, u, 4, seed);
                times(&mut s, 20_000)
                    .iter()
                    .filter(|&&t| t < 60_000_000_000)
                    .count()
            })
            .sum();
        let r = n as f64 / 60.0;
        assert!((r / 200.0 - 1.0).abs() < 0.03, "seed {seed}: {r}/s");
    }
}

#[test]
fn a_class_of_its_own_user_runs_there_at_its_whole_rate_and_nowhere_else() {
    // Reads over four users, page writes (in batches of 100) on a fifth.
    let rates = Rates::per_class(&[
        (IoClass::SingleBlockRead, 800.0),
        (IoClass::DbwrWrite, 400.0),
    ])
    .unwrap()
    .with_own_user(IoClass::DbwrWrite)
    .with_burst(IoClass::DbwrWrite, Burst::new(100.0, 0.0).unwrap());
    assert!(rates.own_user());
    let secs = 20.0;
    let count = |user: u32| {
        let mut s = Schedule::new(&rates, Arrivals::Poisson, user, 4, 3);
        let (mut reads, mut writes, mut starts) = (0u32, 0u32, std::collections::BTreeSet::new());
        loop {
            let a = s.take();
            if a.at_ns as f64 >= secs * 1e9 {
                break;
            }
            match a.class {
                Some(IoClass::SingleBlockRead) => reads += 1,
                Some(IoClass::DbwrWrite) => {
                    writes += 1;
                    starts.insert(a.at_ns);
                }
                other => panic!("user {user}: {other:?}"),
            }
        }
        (reads, writes, starts.len())
    };
    for u in 0..4 {
        let (reads, writes, _) = count(u);
        assert_eq!(writes, 0, "user {u} writes none");
        assert!(
            (reads as f64 - 200.0 * secs).abs() < 0.05 * 200.0 * secs,
            "user {u}: {reads}"
        );
    }
    let (reads, writes, starts) = count(4);
    assert_eq!(reads, 0, "the writer reads none");
    assert!(
        (writes as f64 - 400.0 * secs).abs() < 0.05 * 400.0 * secs,
        "{writes}"
    );
    // A batch's writes are due together: about four instants a second.
    assert!((60..=100).contains(&starts), "{starts} instants");
    // All classes of their own user, or none: no user more.
    let all = Rates::per_class(&[(IoClass::DbwrWrite, 10.0)])
        .unwrap()
        .with_own_user(IoClass::DbwrWrite);
    assert!(!all.own_user());
    assert!(!Rates::total(10.0)
        .unwrap()
        .with_own_user(IoClass::DbwrWrite)
        .own_user());
}
