//! The verification of a `--verify` run as tables: the counts, then the
//! first bad blocks; absent without `--verify`.

use dbio_stats::RunResult;

use crate::fmt::{self, Table};

/// `(title, table)`: "Data verification" and, when blocks were bad,
/// "Bad blocks".
pub(crate) fn tables(r: &RunResult) -> Vec<(&'static str, Table)> {
    let Some(v) = &r.verify else {
        return Vec::new();
    };
    let mut t = Table::new(&[
        "Blocks checked",
        "Final pass",
        "Lost",
        "Torn",
        "Misdirected",
        "Checksum",
    ]);
    t.row(vec![
        fmt::int(v.blocks_checked),
        if v.final_pass_complete {
            fmt::int(v.final_pass_blocks)
        } else {
            format!("{} (interrupted)", fmt::int(v.final_pass_blocks))
        },
        fmt::int(v.lost),
        fmt::int(v.torn),
        fmt::int(v.misdirected),
        fmt::int(v.checksum),
    ]);
    let mut out = vec![("Data verification", t)];
    if !v.bad.is_empty() {
        let mut t = Table::new(&["<File", "Block", "<Fault", "<Detail"]);
        for b in &v.bad {
            t.row(vec![
                b.file.clone(),
                b.block.to_string(),
                b.kind.clone(),
                b.detail.clone(),
            ]);
        }
        out.push(("Bad blocks", t));
    }
    out
}

#[cfg(test)]
mod tests {
    use dbio_stats::{VerifyBadBlock, VerifySummary};

    use crate::AnyResult;

    #[test]
    fn verify_counts_and_bad_blocks_render_everywhere() {
        let mut r = crate::sample::run();
        let plain = AnyResult::Run(r.clone());
        assert!(!crate::terminal(&plain).contains("Data verification"));
        r.verify = Some(Box::new(VerifySummary {
            blocks_checked: 1234,
            final_pass_blocks: 1000,
            final_pass_complete: true,
            checksum: 1,
            bad: vec![VerifyBadBlock {
                file: "dbio-data-01.dbf".into(),
                block: 77,
                kind: "checksum".into(),
                detail: "checksum does not match the content".into(),
            }],
            ..Default::default()
        }));
        let r = AnyResult::Run(r);
        let term = crate::terminal(&r);
        assert!(term.contains("Data verification") && term.contains("1,234"));
        assert!(term.contains("dbio-data-01.dbf") && term.contains("77"));
        let md = crate::markdown(&r);
        assert!(md.contains("## Data verification") && md.contains("## Bad blocks"));
        let html = crate::html(&r);
        assert!(html.contains("<h2>Data verification</h2>") && html.contains("dbio-data-01.dbf"));
        let json = crate::json(&r).unwrap();
        assert!(json.contains("\"verify\"") && json.contains("\"misdirected\": 0"));
    }
}
