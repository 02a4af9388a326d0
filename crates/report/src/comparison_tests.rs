use dbio_compare::interleaved::{Interleaved, SweepRun};
use dbio_compare::{compare, Observation, Options};

use super::*;
use crate::comparison_view::size_text;

/// An OLTP-like run: IOPS and three classes, DBWR first in name order.
fn run(config: &str, repeat: u32, iops: f64, read_us: f64) -> Observation {
    let metrics = [
        ("iops", iops),
        ("dbwr-write iops", iops / 10.0),
        ("dbwr-write mean_us", 900.0 + repeat as f64),
        ("redo-write iops", iops / 20.0),
        ("redo-write mean_us", 300.0 + 3.0 * repeat as f64),
        ("single-block-read iops", iops * 0.85),
        ("single-block-read mean_us", read_us),
    ];
    Observation {
        config: config.into(),
        load: 4,
        repeat: Some(repeat),
        source: format!("{config}-{repeat}.json"),
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        histograms: [
            ("dbwr-write".to_string(), vec![(512, 1024, 5)]),
            (
                "single-block-read".to_string(),
                vec![(64, 128, 7), (128, 256, 3)],
            ),
        ]
        .into_iter()
        .collect(),
        setup: Default::default(),
        options: Vec::new(),
        nfs: None,
    }
}

/// q1 against q8, three repeats each: q8 has about 15 times the IOPS and three times the
/// read latency.
fn q1_q8() -> Comparison {
    let mut obs = Vec::new();
    for r in 1..=3 {
        let n = r as f64;
        obs.push(run("q1", r, 1500.0 + 10.0 * n, 100.0 + n));
        obs.push(run("q8", r, 22000.0 + 150.0 * n, 300.0 - 2.0 * n));
    }
    compare(&obs, &Options::default()).unwrap()
}

#[test]
fn one_convention_for_every_metric() {
    assert_eq!(size_text(14.68, 1368.0), "14.7x better");
    assert_eq!(size_text(1.0 / 2.9, 190.0), "2.9x worse");
    assert_eq!(size_text(1.25, -20.0), "better by 20%");
    assert_eq!(size_text(0.8, -20.0), "worse by 20%");
    assert_eq!(size_text(1.0 / 1.05, 5.0), "worse by 5.0%");
    assert_eq!(size_text(1.0, 0.0), "the same");
}

#[test]
fn the_page_opens_with_the_verdicts_in_colour() {
    let c = q1_q8();
    let page = comparison_html(&c);
    let verdict = page.find("Verdict against q1").unwrap();
    assert!(
        verdict < page.find("<svg").unwrap(),
        "verdicts before the charts"
    );
    let iops = pair(&c, "q8", 4, "iops").unwrap();
    let e = iops.effect.as_ref().unwrap();
    let said = format!("IOPS {:.1}x better (p ", e.factor);
    assert!(page.contains(&said), "{said}");
    assert!(page.contains("Welch*)"));
    // Read latency about three times worse, in red; IOPS better, in green.
    let lat = pair(&c, "q8", 4, "single-block-read mean_us").unwrap();
    assert_eq!(lat.verdict, Verdict::Worse);
    let worse = format!(
        "<td class=\"worse\">{}</td>",
        view::effect_text(lat.effect.as_ref().unwrap())
    );
    assert!(page.contains(&worse), "{worse}");
    assert!(page.contains(&format!("fill=\"{}\"", view::BETTER)));
    assert!(page.contains(&format!("fill=\"{}\"", view::WORSE)));
    assert!(!page.contains("0 figures better"));
    // The charts are of single-block reads, not of the class first in name order.
    assert!(page.contains("single-block-read latency (mean, us) against IOPS"));
    assert!(page.contains("single-block-read latency at 4 users"));
    assert!(!page.contains("dbwr-write latency (mean"));
}

#[test]
fn terminal_text_fits_the_width() {
    let c = q1_q8();
    for width in [60, 80, 100, 160] {
        let text = comparison_terminal(
            &c,
            TextStyle {
                width,
                color: false,
            },
        );
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= width, "{width}: {widest}\n{text}");
        assert!(text.starts_with("dbio compare:"));
        assert!(text.contains("q8 against q1: IOPS "), "{text}");
        // Every class is in the tables.
        for class in ["dbwr-write", "redo-write", "single-block-read"] {
            assert!(text.contains(&format!("{class} latency")), "{class}");
        }
    }
    let coloured = comparison_terminal(
        &c,
        TextStyle {
            width: 100,
            color: true,
        },
    );
    assert!(coloured.contains("\x1b[32m") && coloured.contains("\x1b[31m"));
}

#[test]
fn markdown_and_csv_carry_the_verdicts() {
    let c = q1_q8();
    let md = comparison_markdown(&c);
    assert!(md.find("## Verdict against q1").unwrap() < md.find("## Every figure").unwrap());
    assert!(md.contains("**IOPS "), "{md}");
    let csv = comparison_csv(&c);
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let factor = head.iter().position(|h| *h == "factor").unwrap();
    let row = csv
        .lines()
        .find(|l| l.starts_with("pair,q8,4,iops,"))
        .unwrap();
    let f: f64 = row.split(',').nth(factor).unwrap().parse().unwrap();
    assert!(f > 10.0, "{row}");
}

#[test]
fn nfs_views_of_both_clients_show_under_the_figures() {
    let plain = comparison_html(&q1_q8());
    assert!(!plain.contains("NFS views per configuration"));
    let mut obs = Vec::new();
    for r in 1..=3 {
        let mut k = run("knfs", r, 1500.0, 100.0);
        k.nfs = Some(dbio_compare::nfs_views::NfsTraffic {
            client: "kernel mount".into(),
            connections: 4,
            read_calls: 1000,
            read_rtt_ms: 250,
            sends: 1000,
            backlog_sum: 500,
            ..Default::default()
        });
        let mut d = run("dnfs", r, 1600.0, 90.0);
        d.nfs = Some(dbio_compare::nfs_views::NfsTraffic {
            client: "dbio client".into(),
            connections: 1,
            read_calls: 1100,
            ..Default::default()
        });
        obs.push(k);
        obs.push(d);
    }
    let c = compare(&obs, &Options::default()).unwrap();
    assert_eq!(c.nfs_views.len(), 2);
    assert_eq!(
        c.nfs_views[0].traffic.read_calls, 3000,
        "summed over repeats"
    );
    let html = comparison_html(&c);
    for needle in [
        "NFS views per configuration",
        "kernel mount",
        "dbio client",
        "3,300",
        "0.250",
        "0.50",
        "every",
    ] {
        assert!(html.contains(needle), "{needle} missing");
    }
}

#[test]
fn paired_runs_name_their_paired_test() {
    // q1 and q8 of one sweep, six repeats, the last three ten times slower for both.
    let mut obs = Vec::new();
    for r in 1..=6 {
        let slow = if r > 3 { 0.1 } else { 1.0 };
        let n = r as f64;
        obs.push(run("q1", r, (1500.0 + 10.0 * n) * slow, 100.0 / slow + n));
        obs.push(run("q8", r, (22000.0 - 90.0 * n) * slow, 300.0 / slow - n));
    }
    let mut interleaved = Interleaved::default();
    for o in &obs {
        let run = SweepRun {
            sweep: "/sweeps/s1".into(),
            config: o.config.clone(),
            users: o.load,
            repeat: o.repeat.unwrap(),
        };
        interleaved.insert(&o.source, run);
    }
    let opts = Options {
        interleaved,
        ..Options::default()
    };
    let c = compare(&obs, &opts).unwrap();
    let iops = pair(&c, "q8", 4, "iops").unwrap();
    assert!(iops.paired && iops.verdict == Verdict::Better, "{iops:?}");
    let text = comparison_terminal(
        &c,
        TextStyle {
            width: 200,
            color: false,
        },
    );
    // The verdict line, wrapped, as one line.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let from = flat.find("q8 against q1:").unwrap();
    let line = &flat[from..from + flat[from..].find(" metric ").unwrap()];
    let said = format!(
        "IOPS {} (p {}, {})",
        view::effect_text(iops.effect.as_ref().unwrap()),
        view::p_text(iops.p_value),
        view::test_text(iops)
    );
    assert!(line.contains(&said), "{said}\n{line}");
    assert!(said.contains("paired t on logs") || said.contains("Wilcoxon signed-rank, paired"));
    // DBWR latency is the same in both: within noise, and the line says by which test.
    assert!(
        line.contains("dbwr-write latency: within noise (p 1.000, paired t on logs)"),
        "{line}"
    );
    let csv = comparison_csv(&c);
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let row: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with("pair,q8,4,iops,"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(row.len(), head.len());
    let w: f64 = row[at("wilcoxon_p")].parse().unwrap();
    assert_eq!(w, iops.wilcoxon.unwrap().p_value);
    // The same runs by hand are independent samples.
    let unpaired = compare(&obs, &Options::default()).unwrap();
    assert!(!pair(&unpaired, "q8", 4, "iops").unwrap().paired);
}
