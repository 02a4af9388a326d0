//! The kernel NFS client's views of a run on a kernel mount, as the dNFS
//! views of dbio's own client (servers, channels, stats) with the columns
//! the kernel adds: how each figure maps is said beside each table's column.
//!
//! - servers: the mount's source (server and export), `vers=`, `port=`,
//!   `mountport=`, `rsize=`/`wsize=` of its options, its connections
//!   (nconnect); dbio's rtmax/wtmax (the server's FSINFO) have no kernel
//!   counterpart.
//! - channels: one row per `xprt:` line (connection): sends, receives as
//!   dbio's; connects in the window where dbio counts reconnects; bad XIDs,
//!   mean requests in flight and waiting for a slot (backlog) at a send, and
//!   the most slots, which dbio's channels lack. Retransmissions and bytes
//!   are per operation only in the kernel (the stats table).
//! - stats: calls per operation as dbio's, with retransmissions, timeouts,
//!   errors, bytes on the wire and mean queue, round-trip and execute time
//!   per call; MB read and written are what applications read and wrote
//!   through the mount.

use dbio_stats::{KernelNfsSection, RunResult};

use crate::fmt::{self, Table};

/// `(title, table)` of the kernel views, none when the run has none.
pub(crate) fn tables(r: &RunResult) -> Vec<(&'static str, Table)> {
    let Some(k) = r.kernel_nfs.as_deref() else {
        return Vec::new();
    };
    vec![
        (
            "NFS servers (kernel mount; its counters hold every process's traffic on it)",
            servers(k),
        ),
        ("NFS channels (kernel mount)", channels(k)),
        ("NFS stats (kernel mount)", stats(k)),
    ]
}

fn servers(k: &KernelNfsSection) -> Table {
    let mut t = Table::new(&[
        "<Server",
        "<Export",
        "Version",
        "NFS port",
        "MOUNT port",
        "rsize",
        "wsize",
        "Connections",
        "<Mount point",
        "Window (s)",
    ]);
    let (server, export) = k.device.rsplit_once(':').unwrap_or((&k.device, ""));
    let opt = |n: &str| k.option(n).unwrap_or("-").to_string();
    let size = |n: &str| {
        k.option(n)
            .and_then(|v| v.parse().ok())
            .map_or("-".into(), fmt::bytes)
    };
    t.row(vec![
        server.to_string(),
        export.to_string(),
        opt("vers"),
        k.option("port").unwrap_or("2049").to_string(),
        opt("mountport"),
        size("rsize"),
        size("wsize"),
        k.connections.len().to_string(),
        k.mount_point.clone(),
        fmt::secs(k.window_s),
    ]);
    t
}

fn channels(k: &KernelNfsSection) -> Table {
    let mut t = Table::new(&[
        "Channel",
        "<Transport",
        "Local port",
        "Sends",
        "Receives",
        "Connects",
        "Bad XIDs",
        "Mean in flight",
        "Mean backlog",
        "Max slots",
    ]);
    for (i, c) in k.connections.iter().enumerate() {
        t.row(vec![
            i.to_string(),
            c.transport.clone(),
            if c.local_port == 0 {
                "-".into()
            } else {
                c.local_port.to_string()
            },
            fmt::int(c.sends),
            fmt::int(c.receives),
            fmt::int(c.connects),
            fmt::int(c.bad_xids),
            format!("{:.2}", c.mean_requests()),
            format!("{:.2}", c.mean_backlog()),
            fmt::int(c.max_slots),
        ]);
    }
    t
}

fn stats(k: &KernelNfsSection) -> Table {
    let mut t = Table::new(&[
        "<Procedure",
        "Calls",
        "Retrans",
        "Timeouts",
        "Errors",
        "MB sent",
        "MB received",
        "Queue ms/call",
        "RTT ms/call",
        "Execute ms/call",
    ]);
    let per = |ms: u64, n: u64| {
        if n == 0 {
            "-".into()
        } else {
            format!("{:.3}", ms as f64 / n as f64)
        }
    };
    let mb = |b: u64| fmt::mbps(b as f64 / 1e6);
    for o in &k.ops {
        t.row(vec![
            o.procedure.clone(),
            fmt::int(o.calls),
            fmt::int(o.retransmissions()),
            fmt::int(o.timeouts),
            fmt::int(o.errors),
            mb(o.bytes_sent),
            mb(o.bytes_received),
            per(o.queue_ms, o.calls),
            per(o.rtt_ms, o.calls),
            per(o.execute_ms, o.calls),
        ]);
    }
    let dash = || "-".to_string();
    for (name, bytes) in [("MB read", k.read_bytes), ("MB written", k.write_bytes)] {
        let mut row = vec![name.to_string(), mb(bytes)];
        row.extend(std::iter::repeat_with(dash).take(8));
        t.row(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use dbio_stats::{KernelNfsConnection, KernelNfsOp, KernelNfsSection};

    use crate::{html, markdown, terminal, AnyResult};

    #[test]
    fn kernel_views_appear_in_every_format_with_their_note() {
        let mut r = crate::sample::run();
        assert!(super::tables(&r).is_empty(), "no mount, no kernel views");
        r.kernel_nfs = Some(Box::new(KernelNfsSection {
            device: "filer:/export".into(),
            mount_point: "/u02".into(),
            fs_type: "nfs".into(),
            options: "rw,vers=3,rsize=1048576,wsize=1048576,nconnect=2,mountport=20048".into(),
            window_s: 10.0,
            ops: vec![KernelNfsOp {
                procedure: "READ".into(),
                calls: 4321,
                transmissions: 4323,
                rtt_ms: 8642,
                ..Default::default()
            }],
            connections: vec![
                KernelNfsConnection {
                    transport: "tcp".into(),
                    local_port: 812,
                    sends: 2200,
                    backlog_sum: 1100,
                    ..Default::default()
                };
                2
            ],
            read_bytes: 4321 * 8192,
            ..Default::default()
        }));
        let any = AnyResult::Run(r.clone());
        for text in [terminal(&any), markdown(&any), html(&any)] {
            for needle in [
                "traffic on it",
                "NFS channels (kernel mount)",
                "filer",
                "4,321",
                "2.000",
                "0.50",
                "/u02",
            ] {
                assert!(text.contains(needle), "{needle} missing in {text}");
            }
        }
        let t = super::stats(r.kernel_nfs.as_deref().unwrap());
        assert_eq!(t.rows[0][2], "2", "retransmissions: transmissions - calls");
        let json = serde_json::to_string(&r).unwrap();
        let back: dbio_stats::RunResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
