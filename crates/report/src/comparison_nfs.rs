//! The NFS views of a comparison's configurations (kernel mount or dbio's
//! client) as one table under the figures.

use dbio_compare::Comparison;

use crate::fmt::{self, Table};

/// What the table's figures cover, for the reader.
pub const NOTE: &str = "Sums over each configuration's repeats at each load. Kernel mount: \
    the kernel client's counters between the measured window's edges, which hold every \
    process's traffic on that mount; RTT and execute are per READ, backlog the mean \
    requests waiting for a slot at a send. dbio client: its own calls over the run, \
    warm-up included.";

/// The note and the table, none when no run has NFS views.
pub(crate) fn table(c: &Comparison) -> Option<(&'static str, Table)> {
    if c.nfs_views.is_empty() {
        return None;
    }
    let mut t = Table::new(&[
        "<Configuration",
        "Users",
        "<Client",
        "Runs",
        "Conns",
        "READs",
        "WRITEs",
        "Others",
        "Retrans",
        "MB read",
        "READ RTT ms",
        "READ exec ms",
        "Backlog",
    ]);
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
    for r in &c.nfs_views {
        let x = &r.traffic;
        t.row(vec![
            r.config.clone(),
            r.load.to_string(),
            x.client.clone(),
            r.runs.to_string(),
            x.connections.to_string(),
            fmt::int(x.read_calls),
            fmt::int(x.write_calls),
            fmt::int(x.other_calls),
            fmt::int(x.retransmissions),
            fmt::mbps(x.read_bytes as f64 / 1e6),
            ms(x.read_rtt()),
            ms(x.read_execute()),
            x.backlog().map_or("-".into(), |v| format!("{v:.2}")),
        ]);
    }
    Some((NOTE, t))
}
