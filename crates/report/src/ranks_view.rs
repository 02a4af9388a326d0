//! The ranks of a run over several hosts (`mpirun ... dbio run`) as a
//! table: one row per rank, its own figures; absent for a single process.

use dbio_stats::RunResult;

use crate::fmt::{self, Table};

/// `(title, table)`: "Ranks", when the run had ranks.
pub(crate) fn tables(r: &RunResult) -> Vec<(&'static str, Table)> {
    if r.ranks.is_empty() {
        return Vec::new();
    }
    let mut t = Table::new(&[
        "Rank",
        "<Host",
        "<Target",
        "Users",
        "I/Os",
        "IOPS",
        "MB/s",
        "Mean us",
        "CPU us/io",
        "Seconds",
        "<State",
    ]);
    for k in &r.ranks {
        t.row(vec![
            k.rank.to_string(),
            k.host.clone(),
            k.target.clone(),
            k.users.to_string(),
            fmt::int(k.ios),
            fmt::whole(k.iops),
            fmt::mbps(k.mbps),
            fmt::us(k.mean_us),
            fmt::us(k.cpu_us_per_io),
            fmt::secs(k.elapsed_s),
            if k.interrupted { "interrupted" } else { "" }.into(),
        ]);
    }
    vec![("Ranks", t)]
}

#[cfg(test)]
mod tests {
    use dbio_stats::RankSummary;

    use crate::AnyResult;

    #[test]
    fn ranks_render_everywhere() {
        let mut r = crate::sample::run();
        assert!(!crate::terminal(&AnyResult::Run(r.clone())).contains("Ranks"));
        r.ranks = (0..2)
            .map(|k| RankSummary {
                rank: k,
                host: format!("host-{k}"),
                target: format!("/data/dbio/rank-{k}"),
                users: 2,
                ios: 1000,
                iops: 100.0,
                ..Default::default()
            })
            .collect();
        let any = AnyResult::Run(r);
        for text in [
            crate::terminal(&any),
            crate::markdown(&any),
            crate::html(&any),
        ] {
            assert!(text.contains("Ranks"), "{text}");
            assert!(text.contains("host-1"), "{text}");
            assert!(text.contains("/data/dbio/rank-0"), "{text}");
        }
    }
}
