//! The dNFS views of an NFS run (servers, channels, files, stats, events)
//! as tables; absent for local runs, but for the kernel client's views of a
//! run on a kernel NFS mount, which come first.

use dbio_stats::{NfsStats, RunResult};

use crate::fmt::{self, Table};

/// `(title, table)` for every view the result has, in dNFS order.
pub(crate) fn tables(r: &RunResult) -> Vec<(&'static str, Table)> {
    let mut out = crate::kernel_nfs_view::tables(r);
    let Some(nfs) = r.nfs.as_deref() else {
        return out;
    };
    let mut t = Table::new(&[
        "<Server",
        "<Export",
        "Version",
        "<Security",
        "NFS port",
        "MOUNT port",
        "rtmax",
        "wtmax",
        "rsize",
        "wsize",
        "<Paths",
    ]);
    for s in &nfs.servers {
        t.row(vec![
            s.name.clone(),
            s.export.clone(),
            s.nfs_version.clone(),
            s.sec.clone(),
            s.nfs_port.to_string(),
            s.mount_port.map_or("-".into(), |p| p.to_string()),
            fmt::bytes(u64::from(s.rtmax)),
            fmt::bytes(u64::from(s.wtmax)),
            fmt::bytes(u64::from(s.rsize)),
            fmt::bytes(u64::from(s.wsize)),
            s.paths.join(", "),
        ]);
    }
    out.push(("NFS servers", t));
    let mut t = Table::new(&[
        "Channel",
        "Path",
        "<Local address",
        "<Server address",
        "Sends",
        "Receives",
        "Retransmits",
        "Reconnects",
        "GSS contexts",
        "MB sent",
        "MB received",
    ]);
    for (i, c) in nfs.channels.iter().enumerate() {
        t.row(vec![
            i.to_string(),
            c.path.to_string(),
            if c.local_addr.is_empty() {
                "-".into()
            } else {
                c.local_addr.clone()
            },
            c.server_addr.clone(),
            fmt::int(c.sends),
            fmt::int(c.receives),
            fmt::int(c.retransmits),
            fmt::int(c.reconnects),
            fmt::int(c.gss_contexts),
            fmt::mbps(c.bytes_sent as f64 / 1e6),
            fmt::mbps(c.bytes_received as f64 / 1e6),
        ]);
    }
    out.push(("NFS channels", t));
    let mut t = Table::new(&["<File", "Size", "<Server"]);
    for f in &nfs.files {
        t.row(vec![f.name.clone(), fmt::bytes(f.size), f.server.clone()]);
    }
    out.push(("NFS files", t));
    out.push(stats_table(&nfs.stats, nfs.setup.as_ref()));
    {
        let mut t = Table::new(&[
            "Time (s)",
            "<Path",
            "<Event",
            "Requests moved",
            "Recovered after (s)",
        ]);
        for e in &nfs.events {
            t.row(vec![
                fmt::secs(e.t_s),
                e.path.clone(),
                e.what.clone(),
                fmt::int(e.requests_moved),
                e.recovered_after_s.map_or("-".into(), fmt::secs),
            ]);
        }
        out.push(("NFS path events", t));
    }
    pnfs_tables(nfs, &mut out);
    out
}

/// Calls and bytes of the run, and beside them those made to get the data set
/// ready when the result has them apart (older results counted both together).
fn stats_table(run: &NfsStats, setup: Option<&NfsStats>) -> (&'static str, Table) {
    let Some(setup) = setup else {
        let mut t = Table::new(&["<Procedure", "Calls"]);
        for c in &run.calls {
            t.row(vec![c.procedure.clone(), fmt::int(c.calls)]);
        }
        t.row(vec![
            "MB read".into(),
            fmt::mbps(run.read_bytes as f64 / 1e6),
        ]);
        t.row(vec![
            "MB written".into(),
            fmt::mbps(run.write_bytes as f64 / 1e6),
        ]);
        return ("NFS stats (data-set set-up included)", t);
    };
    let mut t = Table::new(&["<Procedure", "Run", "Set-up (data set)"]);
    let calls = |s: &NfsStats, p: &str| {
        s.calls
            .iter()
            .find(|c| c.procedure == p)
            .map_or(0, |c| c.calls)
    };
    let mut names: Vec<&str> = run.calls.iter().map(|c| c.procedure.as_str()).collect();
    for c in &setup.calls {
        if !names.contains(&c.procedure.as_str()) {
            names.push(&c.procedure);
        }
    }
    for p in names {
        t.row(vec![
            p.to_string(),
            fmt::int(calls(run, p)),
            fmt::int(calls(setup, p)),
        ]);
    }
    let mb = |b: u64| fmt::mbps(b as f64 / 1e6);
    t.row(vec![
        "MB read".into(),
        mb(run.read_bytes),
        mb(setup.read_bytes),
    ]);
    t.row(vec![
        "MB written".into(),
        mb(run.write_bytes),
        mb(setup.write_bytes),
    ]);
    ("NFS stats", t)
}

/// pNFS: sessions, data servers, each file's servers over time, layout changes (only
/// the ones the result has).
fn pnfs_tables(nfs: &dbio_stats::NfsSection, out: &mut Vec<(&'static str, Table)>) {
    if nfs.servers.iter().any(|s| !s.sessions.is_empty()) {
        let mut t = Table::new(&["<Server", "Session", "Slots", "In use"]);
        for s in &nfs.servers {
            for (i, x) in s.sessions.iter().enumerate() {
                t.row(vec![
                    s.name.clone(),
                    i.to_string(),
                    fmt::int(u64::from(x.slots)),
                    fmt::int(u64::from(x.in_use)),
                ]);
            }
        }
        out.push(("NFSv4.1 sessions", t));
    }
    if !nfs.data_servers.is_empty() {
        let mut t = Table::new(&["<Data server", "I/Os", "MB"]);
        for d in &nfs.data_servers {
            t.row(vec![
                d.address.clone(),
                fmt::int(d.ios),
                fmt::mbps(d.bytes as f64 / 1e6),
            ]);
        }
        out.push(("pNFS data servers", t));
    }
    if !nfs.file_servers.is_empty() {
        let mut t = Table::new(&["<File", "<Server", "I/Os", "MB", "First (s)", "Last (s)"]);
        for f in &nfs.file_servers {
            t.row(vec![
                f.file.clone(),
                f.server.clone(),
                fmt::int(f.ios),
                fmt::mbps(f.bytes as f64 / 1e6),
                fmt::secs(f.first_s),
                fmt::secs(f.last_s),
            ]);
        }
        out.push(("pNFS files by server", t));
    }
    if !nfs.layout_events.is_empty() {
        let mut t = Table::new(&["Time (s)", "<File", "<From", "<To", "<Why"]);
        for e in &nfs.layout_events {
            t.row(vec![
                fmt::secs(e.t_s),
                e.file.clone(),
                if e.from.is_empty() {
                    "-".into()
                } else {
                    e.from.clone()
                },
                e.to.clone(),
                e.why.clone(),
            ]);
        }
        out.push(("pNFS layout events", t));
    }
}

#[cfg(test)]
mod tests {
    use dbio_stats::{
        NfsChannel, NfsEvent, NfsFile, NfsProcCount, NfsSection, NfsServer, NfsStats,
    };

    use crate::{html, markdown, terminal, AnyResult};

    #[test]
    fn views_appear_in_every_format_and_json_round_trips() {
        let mut r = crate::sample::run();
        assert!(super::tables(&r).is_empty(), "a local run has no NFS views");
        let nfs = NfsSection {
            servers: vec![NfsServer {
                name: "filer1".into(),
                export: "/export".into(),
                nfs_version: "3".into(),
                sec: "krb5i".into(),
                nfs_port: 2049,
                mount_port: Some(20048),
                rtmax: 1 << 20,
                wtmax: 1 << 20,
                rsize: 1 << 20,
                wsize: 1 << 20,
                paths: vec!["10.0.0.2".into()],
                sessions: Vec::new(),
            }],
            channels: (0..2)
                .map(|i| NfsChannel {
                    path: 0,
                    local_addr: format!("10.0.0.1:{}", 700 + i),
                    server_addr: "10.0.0.2:2049".into(),
                    sends: 1000 + i,
                    receives: 1000 + i,
                    ..Default::default()
                })
                .collect(),
            files: vec![NfsFile {
                name: "dbio-data-01.dbf".into(),
                size: 1 << 30,
                server: "filer1".into(),
            }],
            stats: NfsStats {
                calls: vec![NfsProcCount {
                    procedure: "READ".into(),
                    calls: 2001,
                }],
                read_bytes: 2001 * 8192,
                write_bytes: 0,
            },
            events: vec![NfsEvent {
                t_s: 1.5,
                path: "10.0.0.2".into(),
                what: "down: connection reset".into(),
                requests_moved: 17,
                recovered_after_s: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut quiet = nfs.clone();
        r.nfs = Some(Box::new(nfs));
        let any = AnyResult::Run(r.clone());
        for text in [terminal(&any), markdown(&any), html(&any)] {
            for needle in [
                "NFS servers",
                "NFS channels",
                "10.0.0.1:701",
                "READ",
                "NFS files",
                "dbio-data-01.dbf",
                "down: connection reset",
                "Security",
                "krb5i",
                "GSS contexts",
            ] {
                assert!(text.contains(needle), "{needle} missing");
            }
        }
        let json = serde_json::to_string(&r).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["nfs"]["stats"]["calls"][0]["calls"], 2001);
        assert_eq!(v["nfs"]["events"][0]["requests_moved"], 17);
        assert_eq!(v["nfs"]["files"][0]["server"], "filer1");
        let back: dbio_stats::RunResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        // Set-up traffic apart from the run's, and an empty view says so.
        quiet.events.clear();
        quiet.setup = Some(NfsStats {
            calls: vec![NfsProcCount {
                procedure: "WRITE".into(),
                calls: 64,
            }],
            read_bytes: 0,
            write_bytes: 64 << 20,
        });
        r.nfs = Some(Box::new(quiet));
        r.config.engine = "nfs".into();
        let any = AnyResult::Run(r);
        for text in [terminal(&any), markdown(&any), html(&any)] {
            assert!(text.contains("Set-up (data set)"), "{text}");
            assert!(!text.contains("set-up included"), "{text}");
        }
        for text in [markdown(&any), html(&any)] {
            let at = text.find("NFS path events").expect("events heading");
            let next = &text[at..at + 40.min(text.len() - at)];
            assert!(next.contains("none"), "{next}");
            assert!(!text[at..].starts_with("NFS path events</h2>\n<table"));
        }
        // The NFS engine has no O_DIRECT to speak of.
        assert!(!markdown(&any).contains("O_DIRECT"));
    }
}
