//! The dNFS views of a run, read from the pool's counters.

use dbio_nfs::ConnStats;
use dbio_stats::{
    NfsAtRisk, NfsChannel, NfsDataServer, NfsEvent, NfsFile, NfsFileServer, NfsLayoutEvent,
    NfsProcCount, NfsSection, NfsServer, NfsSession, NfsStats, RunResult,
};
use std::sync::atomic::Ordering::Relaxed;

use crate::NfsTarget;

/// The "servers" view: one row (one server per target for now).
pub fn servers(t: &NfsTarget) -> Vec<NfsServer> {
    let (rsize, wsize) = t.transfer_sizes();
    let (rtmax, wtmax) = t.pool.server_limits();
    vec![NfsServer {
        name: t.server.clone(),
        export: export(t),
        nfs_port: t.pool.nfs_port(),
        mount_port: t.pool.mount_port(),
        rsize,
        wsize,
        // The paths to this server; data servers have their own view.
        paths: t
            .pool
            .paths()
            .iter()
            .filter(|p| p.data_server.is_none())
            .map(|p| p.label())
            .collect(),
        nfs_version: t.version().label().into(),
        sec: t.pool.sec().to_string(),
        rtmax,
        wtmax,
        sessions: t
            .pool
            .sessions()
            .into_iter()
            .map(|(slots, in_use)| NfsSession { slots, in_use })
            .collect(),
    }]
}

/// The export (NFSv3) or the path looked up from the root (NFSv4.1).
fn export(t: &NfsTarget) -> String {
    match t.pool.export() {
        Some(export) => export.to_string(),
        None => format!("/{}", t.dir),
    }
}

/// The "channels" view: one row per connection.
pub fn channels(t: &NfsTarget) -> Vec<NfsChannel> {
    t.pool
        .channels()
        .iter()
        .map(|ch| {
            let s = ch.stats();
            NfsChannel {
                path: ch.path as u32,
                local_addr: s.local_addr().map(|a| a.to_string()).unwrap_or_default(),
                server_addr: ch.conn.addr().to_string(),
                sends: ConnStats::get(&s.calls),
                receives: ConnStats::get(&s.replies),
                retransmits: ConnStats::get(&s.retransmits),
                reconnects: ConnStats::get(&s.reconnects),
                gss_contexts: ConnStats::get(&s.gss_contexts),
                bytes_sent: ConnStats::get(&s.bytes_sent),
                bytes_received: ConnStats::get(&s.bytes_received),
            }
        })
        .collect()
}

/// The "stats" view.
pub fn nfs_stats(t: &NfsTarget) -> NfsStats {
    let p = t.pool.procs();
    NfsStats {
        calls: p
            .snapshot()
            .into_iter()
            .map(|(name, calls)| NfsProcCount {
                procedure: name.to_string(),
                calls,
            })
            .collect(),
        read_bytes: p.read_bytes.load(Relaxed),
        write_bytes: p.write_bytes.load(Relaxed),
    }
}

/// Path events so far.
pub fn events(t: &NfsTarget) -> Vec<NfsEvent> {
    let paths = t.pool.paths();
    t.pool
        .events()
        .into_iter()
        .map(|e| NfsEvent {
            t_s: e.at_s,
            unix_s: e.unix_s,
            path: paths.get(e.path).map(|p| p.label()).unwrap_or_default(),
            what: e.what,
            requests_moved: e.moved,
            recovered_after_s: e.recovered_after_s,
        })
        .collect()
}

/// The "files" view: the server of each of a run's files.
pub fn files(result: &RunResult, t: &NfsTarget) -> Vec<NfsFile> {
    result
        .files
        .iter()
        .map(|f| NfsFile {
            name: f.name.clone(),
            size: f.size,
            server: t.server.clone(),
        })
        .collect()
}

/// Marks the data set ready: the calls so far were set-up traffic (checking
/// or creating it), the ones after are the run's.
pub fn mark_ready(t: &NfsTarget) {
    if let Ok(mut r) = t.ready.lock() {
        *r = Some(nfs_stats(t));
    }
}

/// Adds the NFS section (every view) to a run's result.
pub fn fill(result: &mut RunResult, t: &NfsTarget) {
    let setup = t.ready.lock().ok().and_then(|r| r.clone());
    let now = nfs_stats(t);
    result.nfs = Some(Box::new(NfsSection {
        servers: servers(t),
        channels: channels(t),
        files: files(result, t),
        stats: setup.as_ref().map_or_else(|| now.clone(), |s| now.since(s)),
        setup,
        events: events(t),
        ..Default::default()
    }));
    if let Some(nfs) = result.nfs.as_deref_mut() {
        // pNFS: where the I/O went (none otherwise).
        nfs.data_servers = t
            .pool
            .data_servers()
            .into_iter()
            .map(|(address, ios, bytes)| NfsDataServer {
                address,
                ios,
                bytes,
            })
            .collect();
        nfs.file_servers = t
            .pool
            .file_servers()
            .into_iter()
            .map(
                |(file, server, ios, bytes, first_s, last_s)| NfsFileServer {
                    file,
                    server,
                    ios,
                    bytes,
                    first_s,
                    last_s,
                },
            )
            .collect();
        nfs.layout_events = t
            .pool
            .layout_events()
            .into_iter()
            .map(|e| NfsLayoutEvent {
                t_s: e.t_s,
                unix_s: e.unix_s,
                file: e.file,
                from: e.from,
                to: e.to,
                why: e.why,
            })
            .collect();
        let risk = t.pool.router().at_risk();
        nfs.unstable_at_risk = (risk.writes > 0).then_some(NfsAtRisk {
            writes: risk.writes,
            bytes: risk.bytes,
        });
    }
}

/// A compact multi-line text of the live views (for `--views`).
pub fn live_text(t: &NfsTarget) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let st = nfs_stats(t);
    let calls: Vec<String> = st
        .calls
        .iter()
        .map(|c| format!("{} {}", c.procedure, c.calls))
        .collect();
    let _ = writeln!(
        s,
        "  nfs {}:{}  {}  read {:.1} MB  written {:.1} MB",
        t.server,
        export(t),
        calls.join(", "),
        st.read_bytes as f64 / 1e6,
        st.write_bytes as f64 / 1e6
    );
    for (i, (c, ch)) in channels(t).iter().zip(t.pool.channels()).enumerate() {
        let up = if t.pool.paths()[ch.path].is_up() {
            "up"
        } else {
            "DOWN"
        };
        let _ = writeln!(
            s,
            "  ch{i:<2} path {} {up:<4} {:>21} -> {:<21} out {:>4} sends {:>9} recv {:>9} reconn {}",
            c.path,
            c.local_addr,
            c.server_addr,
            ch.outstanding(),
            c.sends,
            c.receives,
            c.reconnects
        );
    }
    for (addr, ios, bytes) in t.pool.data_servers() {
        let _ = writeln!(
            s,
            "  data server {addr:<21} I/Os {ios:>9}  {:.1} MB",
            bytes as f64 / 1e6
        );
    }
    let shown = t.pool.layout_events();
    for e in shown.iter().rev().take(3).rev() {
        let _ = writeln!(
            s,
            "  layout {:.1}s {} {} -> {} ({})",
            e.t_s,
            e.file,
            if e.from.is_empty() { "-" } else { &e.from },
            e.to,
            e.why
        );
    }
    for e in events(t) {
        let _ = writeln!(
            s,
            "  event {:.1}s path {} {} (moved {})",
            e.t_s, e.path, e.what, e.requests_moved
        );
    }
    s
}
