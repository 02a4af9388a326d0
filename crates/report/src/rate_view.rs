//! An open-loop run (`--rate`): the rates asked against those achieved,
//! per class, and the backlog; absent from closed-loop runs.

use dbio_stats::RunResult;

use crate::fmt::{self, Table};

/// The summary rows: the rate asked and the one line that says whether
/// the storage kept pace.
pub(crate) fn summary(r: &RunResult) -> Vec<(&'static str, String)> {
    let Some(o) = &r.open_loop else {
        return Vec::new();
    };
    let rate = r.config.rate.as_deref().unwrap_or("-");
    vec![
        (
            "Open loop",
            format!("--rate {rate}, {} arrivals", o.arrivals),
        ),
        ("Pace", o.verdict.clone()),
    ]
}

/// `("Open loop", table)`: per class, asked and achieved I/Os per second,
/// I/Os due, those that waited for a free slot, lateness and what was left.
pub(crate) fn tables(r: &RunResult) -> Vec<(&'static str, Table)> {
    let Some(o) = &r.open_loop else {
        return Vec::new();
    };
    let mut t = Table::new(&[
        "<class",
        "asked IOPS",
        "achieved IOPS",
        "due",
        "waited",
        "mean late us",
        "max late us",
        "late at end",
        "never issued",
    ]);
    let rows = o.classes.iter().map(|c| {
        (
            c.class.clone(),
            (c.asked_iops, c.achieved_iops, c.due, c.late),
            (c.mean_late_us, c.max_late_us, c.at_end, c.left),
        )
    });
    let total = std::iter::once((
        "total".to_string(),
        (o.asked_iops, o.achieved_iops, o.due, o.late),
        (o.mean_late_us, o.max_late_us, o.at_end, o.left),
    ));
    let many = o.classes.len() > 1;
    for (name, (asked, achieved, due, late), (mean, max, at_end, left)) in
        rows.chain(total.filter(|_| many))
    {
        t.row(vec![
            name,
            fmt::whole(asked),
            fmt::whole(achieved),
            fmt::int(due),
            fmt::int(late),
            fmt::us(mean),
            fmt::us(max),
            fmt::int(at_end),
            fmt::int(left),
        ]);
    }
    vec![("Open loop: asked and achieved", t)]
}

#[cfg(test)]
mod tests {
    use dbio_stats::{OpenLoopClass, OpenLoopSection};

    use crate::AnyResult;

    #[test]
    fn asked_achieved_and_the_verdict_render_everywhere() {
        let mut r = crate::sample::run();
        let plain = AnyResult::Run(r.clone());
        assert!(!crate::terminal(&plain).contains("Open loop"));
        let mut o = OpenLoopSection {
            arrivals: "poisson".into(),
            classes: vec![OpenLoopClass {
                class: "single-block-read".into(),
                asked_iops: 4000.0,
                achieved_iops: 3100.0,
                due: 120_000,
                late: 9_000,
                mean_late_us: 800.0,
                max_late_us: 1_250_000.0,
                at_end: 20_000,
                left: 0,
            }],
            ..Default::default()
        };
        o.sum_classes();
        assert!(o.behind);
        r.config.rate = Some("4000".into());
        r.open_loop = Some(Box::new(o));
        let r = AnyResult::Run(r);
        let term = crate::terminal(&r);
        assert!(
            term.contains("storage fell behind: achieved 3100 of 4000"),
            "{term}"
        );
        assert!(term.contains("Open loop: asked and achieved") && term.contains("4,000"));
        assert!(term.contains("1,250,000"), "{term}");
        let md = crate::markdown(&r);
        assert!(md.contains("## Open loop: asked and achieved") && md.contains("--rate 4000"));
        let html = crate::html(&r);
        assert!(html.contains("storage fell behind") && html.contains("3,100"));
        let csv = crate::csv(&r);
        assert!(csv
            .lines()
            .next()
            .unwrap()
            .ends_with(",asked_iops,late,max_late_us"));
        assert!(csv.contains(",4000,9000,1250000"), "{csv}");
    }
}
