//! pNFS for the data path: which data server each file's I/O goes to now.
//!
//! [`Layouts`] is shared by every data path of a pool. Per file it keeps a
//! [`FileRoute`]: the files layout (LAYOUTGET, read/write, whole file, asked with the
//! open the caller holds: a pool's data files' are `v41/data_files.rs`'s) and its
//! device (GETDEVICEINFO), or why I/O goes through the metadata server. Data servers get a
//! session of their own, and a channel of the pool's router on a path of their own: a
//! data server whose connection fails is a path that goes down (its I/O goes through
//! the metadata server meanwhile) and comes back when the probe finds it answering;
//! one that lost its session (it restarted) gets a new one. A route is fetched again
//! when a data server fails an I/O with an error status and every `refresh` interval:
//! that is how I/O follows data that moved, since the servers tested recall no
//! layouts. Each change is an event, and I/Os and bytes are counted per file and server
//! for the views.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::error::NfsError;
use crate::proto::nfs4::{Fh4, FileDsAddr, LayoutIomode, Nfsstat4, SessionId, Stateid};
use crate::router::Router;
use crate::v41::layout::{
    distinct_tcp, FileLayoutGrant, LayoutReply, NoLayout, StripeError, StripeMap, StripeTarget,
};
pub use crate::v41::pending_writes::{LayoutCommitted, PendingWrites};
use crate::v41::{Client, Session, SessionOptions, SlotLease};
use crate::ClientOptions;
use dbio_rpc::conn::Siblings;

/// LAYOUTCOMMIT and the COMMITs of data written through data servers.
#[path = "layoutcommit.rs"]
mod layoutcommit;
/// Sessions with the data servers.
#[path = "pnfs_servers.rs"]
mod servers;

/// How long a data server may stay silent before its calls fail (and go through the
/// metadata server).
const DS_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a data server that could not be reached is not tried again: a dead one
/// costs [`DS_TIMEOUT`] once (its addresses are tried together), not once per file.
const DS_RETRY_AFTER: Duration = Duration::from_secs(30);

/// How often a recall's drain looks again without being told.
const DRAIN_LOOK: Duration = Duration::from_millis(50);

/// Why a file's I/O goes through the metadata server.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ThroughMds {
    /// The server gave no layout.
    #[error("{0}")]
    NoLayout(NoLayout),
    /// The layout's stripes do not fit its device.
    #[error("{0}")]
    Stripes(StripeError),
    /// The OPEN or LAYOUTGET was refused.
    #[error("{0}")]
    Refused(NfsError),
    /// A data server of the layout could not be reached.
    #[error("data server: {0}")]
    Unreachable(NfsError),
    #[error("layout recalled by the server")]
    Recalled,
}

/// The metadata server, where a counter or an event names no data server.
pub const MDS: &str = "MDS";

/// A data server: its sessions (of one client id, on one connection) and its channel
/// in the pool's router.
pub struct DataServer {
    pub addr: SocketAddr,
    /// Its channel in the pool's router.
    pub channel: usize,
    conn: dbio_rpc::conn::Connection,
    /// The first session, then more when data paths need more slots than it has.
    sessions: Mutex<Vec<Arc<Session>>>,
    /// Bumped when the sessions are made anew: data paths lease again.
    epoch: AtomicU64,
    /// One renewal at a time.
    renewing: tokio::sync::Mutex<()>,
}

impl DataServer {
    pub fn connection(&self) -> &dbio_rpc::conn::Connection {
        &self.conn
    }

    /// Changes each time the server's sessions are made anew (leases of older ones
    /// are worthless).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Relaxed)
    }

    /// The server said `why` (NFS4ERR_BADSESSION, DEADSESSION, STALE_CLIENTID: it
    /// restarted) to a call on session `lost`: the session's recovery, the same as
    /// the metadata server's ([`Session::recover`]), unless another caller made it
    /// already. A data server holds no opens (their stateids are the metadata
    /// server's), so there is nothing to reclaim. The other sessions made for more
    /// slots are dropped; data paths lease again, more sessions made as they need.
    pub async fn renew(&self, lost: SessionId, why: Nfsstat4) -> Result<bool, NfsError> {
        let _one = self.renewing.lock().await;
        let first = {
            let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            if !s.iter().any(|s| s.sessionid() == lost) {
                return Ok(false);
            }
            s.first().map(|s| (s.sessionid(), s.clone()))
        };
        let Some((seen, first)) = first else {
            return Ok(false);
        };
        first.recover(seen, why).await?;
        let mut s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        s.truncate(1);
        self.epoch.fetch_add(1, Relaxed);
        Ok(true)
    }

    /// Slots a session grants (the most one data path leases from it).
    fn granted(&self) -> u32 {
        let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        s.first().map_or(1, |s| s.slot_stats().granted.max(1))
    }

    /// Up to `want` slots (at most a session's grant) of a session with that many
    /// free, for one data path; `None` if no session has them.
    pub fn lease(&self, want: u32) -> Option<SlotLease> {
        let want = want.min(self.granted());
        let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        s.iter()
            .filter(|s| s.free_slots() >= want)
            .find_map(|s| s.lease(want))
    }

    /// Makes sure a data path of `want` slots finds them: one more session of the same
    /// client when no session has that many free.
    pub async fn reserve(&self, want: u32) -> Result<(), NfsError> {
        let want = want.min(self.granted());
        let first_or_none = {
            let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            if s.iter().any(|s| s.free_slots() >= want) {
                return Ok(());
            }
            s.first().map(|f| f.another(self.conn.clone()))
        };
        if let Some(making) = first_or_none {
            let more = making.await?;
            self.sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Arc::new(more));
        }
        Ok(())
    }
}

/// What a server recalls ([`Layouts::recall`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recall {
    /// One file's layout.
    File(Fh4),
    /// Every layout (of the file system, or of the client).
    All,
    /// The layouts over one device (CB_NOTIFY_DEVICEID: its address changed).
    Device(crate::proto::nfs4::DeviceId),
}

/// Where one file's I/O goes now.
pub struct FileRoute {
    /// The file's handle on the metadata server.
    pub fh: Fh4,
    /// The open stateid the layout was asked with (I/O to data servers carries it).
    pub open: Stateid,
    /// The layout and its device, or `None`: through the metadata server.
    layout: Option<(FileLayoutGrant, FileDsAddr)>,
    /// Per data server of the device, its index in the pool's table (`None`: not
    /// reachable, so through the metadata server).
    servers: Vec<Option<usize>>,
    /// Why I/O goes through the metadata server, when it does.
    pub through_mds: Option<ThroughMds>,
}

/// Where a part of an I/O goes.
pub struct Placement {
    /// Index of the data server in the pool's table.
    pub server: usize,
    /// Handle and offset to send.
    pub fh: Fh4,
    pub offset: u64,
}

impl FileRoute {
    /// The data server for `len` bytes at `offset`, if the layout has one for the
    /// whole range (a range across stripe units of different servers goes through the
    /// metadata server).
    pub fn place(&self, offset: u64, len: u32) -> Option<Placement> {
        let (grant, device) = self.layout.as_ref()?;
        if offset < grant.offset
            || (grant.length != u64::MAX && offset - grant.offset >= grant.length)
        {
            return None;
        }
        let map = StripeMap::new(&grant.layout, device).ok()?;
        let t: StripeTarget<'_> = map.locate(offset).ok()?;
        if u64::from(len) > t.unit_left {
            let end = map.locate(offset + u64::from(len) - 1).ok()?;
            if end.data_server != t.data_server || device.stripe_indices.len() > 1 {
                return None;
            }
        }
        let server = (*self.servers.get(t.data_server as usize)?)?;
        Some(Placement {
            server,
            fh: t.fh.unwrap_or(self.fh),
            offset: t.ds_offset,
        })
    }

    /// Where the layout's stripe units start and how long they are, when it stripes
    /// over more than one stripe index (RFC 8881 §13.4): an I/O is cut at those
    /// boundaries so that each part goes to one data server. `None` with one stripe
    /// (every offset on one server) or no layout.
    pub fn stripe_units(&self) -> Option<(u64, u64)> {
        let (grant, device) = self.layout.as_ref()?;
        let unit = u64::from(grant.layout.stripe_unit());
        if device.stripe_indices.len() < 2 || unit == 0 {
            return None;
        }
        Some((grant.layout.pattern_offset, unit))
    }

    /// The data servers (pool indices) the layout names.
    pub fn servers(&self) -> impl Iterator<Item = usize> + '_ {
        self.servers.iter().flatten().copied()
    }
}

/// A layout change or a fallback, for the views.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutEvent {
    /// Seconds since the pool opened.
    pub t_s: f64,
    /// Wall-clock time (seconds since the Unix epoch), to set against outside events
    /// such as the moment data was moved.
    pub unix_s: f64,
    pub file: String,
    /// Data servers before and after ("MDS": through the metadata server).
    pub from: String,
    pub to: String,
    pub why: String,
}

/// I/Os and bytes of one file on one server.
#[derive(Debug, Default)]
pub struct IoCount {
    pub ios: AtomicU64,
    pub bytes: AtomicU64,
    /// Milliseconds since the pool opened of the first and last I/O (+1; 0: none).
    pub first_ms: AtomicU64,
    pub last_ms: AtomicU64,
}

impl IoCount {
    /// `ios` I/Os of `bytes` in all, the last at `now_ms`.
    pub fn add(&self, ios: u64, bytes: u64, now_ms: u64) {
        self.ios.fetch_add(ios, Relaxed);
        self.bytes.fetch_add(bytes, Relaxed);
        let _ = self
            .first_ms
            .compare_exchange(0, now_ms + 1, Relaxed, Relaxed);
        self.last_ms.store(now_ms + 1, Relaxed);
    }
}

/// The layouts of a pool's files and its data servers.
pub struct Layouts {
    mds: Arc<Client>,
    /// The pool's router, where data servers become channels, and the runtime that
    /// runs its connections (none: data servers cannot be used, files go through the
    /// metadata server, and background work runs on the caller's runtime).
    router: Option<(Arc<Router>, tokio::runtime::Handle)>,
    options: ClientOptions,
    session: SessionOptions,
    /// Per file, its path and route; the route keeps the open its layout is asked
    /// with (the pool's open of the file, `DataFiles`; none: refused).
    files: Mutex<HashMap<Fh4, (String, Arc<FileRoute>)>>,
    servers: RwLock<Vec<Arc<DataServer>>>,
    /// Data servers that could not be reached (by their addresses): since when, and why.
    unreachable: Mutex<HashMap<Vec<SocketAddr>, (Instant, NfsError)>>,
    /// What the user is told once: a data server that does not answer.
    warnings: Mutex<Vec<String>>,
    /// Per file, its writes through data servers not yet committed (LAYOUTCOMMIT).
    pending: Mutex<HashMap<Fh4, Arc<PendingWrites>>>,
    /// Bumped whenever a route changes: data paths look their routes up again.
    generation: AtomicU64,
    /// Told when a data path let go of routes it held (a recall's drain waits on it).
    released: tokio::sync::Notify,
    events: Mutex<Vec<LayoutEvent>>,
    counts: Mutex<HashMap<(String, String), Arc<IoCount>>>,
    /// The data servers' connections, siblings when the pool's callers run them.
    ds_siblings: Arc<Siblings>,
    opened: Instant,
    /// How often every route is fetched again (`None`: only after a failure).
    pub refresh: Option<Duration>,
}

impl Layouts {
    /// The layouts of `mds`'s files; data servers become channels of `router` and
    /// work the data paths start in the background (fetching a route again, new
    /// sessions or slots on a data server) runs on its runtime.
    pub fn new(
        mds: Arc<Client>,
        options: ClientOptions,
        session: SessionOptions,
        refresh: Option<Duration>,
        router: Option<(Arc<Router>, tokio::runtime::Handle)>,
    ) -> Layouts {
        Layouts {
            mds,
            router,
            options,
            session,
            files: Mutex::new(HashMap::new()),
            servers: RwLock::new(Vec::new()),
            unreachable: Mutex::new(HashMap::new()),
            warnings: Mutex::new(Vec::new()),
            pending: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
            released: tokio::sync::Notify::new(),
            events: Mutex::new(Vec::new()),
            counts: Mutex::new(HashMap::new()),
            ds_siblings: Arc::default(),
            opened: Instant::now(),
            refresh,
        }
    }

    /// Runs `work` in the background on the pool's runtime (or the caller's, without
    /// a router; without either, not at all).
    pub fn spawn(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        if let Some((_, rt)) = &self.router {
            rt.spawn(work);
        } else if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(work);
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Relaxed)
    }

    /// A data path let go of routes it held (it looked its routes up again, or ended).
    pub fn routes_released(&self) {
        self.released.notify_waiters();
    }

    /// Milliseconds since the pool opened.
    pub fn now_ms(&self) -> u64 {
        self.opened.elapsed().as_millis() as u64
    }

    pub fn route(&self, fh: &Fh4) -> Option<Arc<FileRoute>> {
        let files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        files.get(fh).map(|(_, r)| r.clone())
    }

    /// Data servers known so far.
    pub fn server_count(&self) -> usize {
        self.servers.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn server(&self, i: usize) -> Option<Arc<DataServer>> {
        let s = self.servers.read().unwrap_or_else(|e| e.into_inner());
        s.get(i).cloned()
    }

    /// A server's name for views and events: its address, or "MDS".
    pub fn server_name(&self, i: Option<usize>) -> String {
        match i.and_then(|i| self.server(i)) {
            Some(s) => s.addr.to_string(),
            None => MDS.to_string(),
        }
    }

    /// The counter of `file`'s I/O on server `server` (`None`: the metadata server).
    pub fn counter(&self, file: &Fh4, server: Option<usize>) -> Arc<IoCount> {
        let name = self
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(file)
            .map(|(n, _)| n.clone())
            .unwrap_or_default();
        let key = (name, self.server_name(server));
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.entry(key).or_default().clone()
    }

    /// Data servers: address, I/Os, bytes (over every file).
    pub fn servers(&self) -> Vec<(String, u64, u64)> {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<(String, u64, u64)> = Vec::new();
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        for s in servers.iter() {
            out.push((s.addr.to_string(), 0, 0));
        }
        for ((_, server), c) in counts.iter() {
            let i = match out.iter().position(|r| &r.0 == server) {
                Some(i) => i,
                None => {
                    out.push((server.clone(), 0, 0));
                    out.len() - 1
                }
            };
            out[i].1 += c.ios.load(Relaxed);
            out[i].2 += c.bytes.load(Relaxed);
        }
        out
    }

    /// Per file and server: I/Os, bytes, first and last I/O (seconds since open).
    pub fn file_servers(&self) -> Vec<(String, String, u64, u64, f64, f64)> {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<_> = counts
            .iter()
            .filter(|(_, c)| c.ios.load(Relaxed) > 0)
            .map(|((file, server), c)| {
                let s = |ms: &AtomicU64| ms.load(Relaxed).saturating_sub(1) as f64 / 1000.0;
                (
                    file.clone(),
                    server.clone(),
                    c.ios.load(Relaxed),
                    c.bytes.load(Relaxed),
                    s(&c.first_ms),
                    s(&c.last_ms),
                )
            })
            .collect();
        out.sort_by(|a, b| {
            (&a.0, a.4)
                .partial_cmp(&(&b.0, b.4))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        out
    }

    pub fn events(&self) -> Vec<LayoutEvent> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Fetches `fh`'s route (named `path`) from the metadata server with the file's
    /// open `open` (which the caller holds and closes): LAYOUTGET (read/write, whole
    /// file), GETDEVICEINFO, a session with each data server not yet known. No layout,
    /// or a data server that cannot be reached, routes the file through the metadata
    /// server; only a failing metadata server is an error.
    pub async fn fetch(
        &self,
        fh: Fh4,
        path: &str,
        open: Stateid,
        why: &str,
    ) -> Result<Arc<FileRoute>, NfsError> {
        // After a recovery: the open's stateid of now.
        let open = self.mds.current_stateid(open);
        // Whatever goes wrong short of the metadata server failing sends the file's
        // I/O through the metadata server, with the reason as an event.
        let layout = match self.get_layout(fh, open, path).await {
            Ok(l) => l,
            Err(e @ (NfsError::Transport { .. } | NfsError::Rpc { .. })) => return Err(e),
            Err(e) => Err(ThroughMds::Refused(e)),
        };
        let route = match layout {
            Ok((grant, device)) => {
                // Each distinct data server once, all at once: a device is bounded by
                // one data server's fail-fast time, whatever it repeats.
                let mut distinct: Vec<(Vec<SocketAddr>, usize)> = Vec::new();
                let of: Vec<usize> = (device.multipath_ds_list.iter().enumerate())
                    .map(|(i, addrs)| {
                        let key = distinct_tcp(addrs);
                        distinct
                            .iter()
                            .position(|(k, _)| *k == key)
                            .unwrap_or_else(|| {
                                distinct.push((key, i));
                                distinct.len() - 1
                            })
                    })
                    .collect();
                let tries = distinct
                    .iter()
                    .map(|(_, i)| self.data_server(&device.multipath_ds_list[*i]))
                    .collect();
                let reached = crate::v41::join::join_all(tries).await;
                let mut servers = Vec::with_capacity(of.len());
                let mut unreachable = None;
                for d in of {
                    match &reached[d] {
                        Ok(i) => servers.push(Some(*i)),
                        // Stopping: what it waited for is the answer, not the route.
                        Err(e) if dbio_rpc::stop::requested() => return Err(e.clone()),
                        Err(e) => {
                            unreachable.get_or_insert_with(|| e.clone());
                            servers.push(None);
                        }
                    }
                }
                FileRoute {
                    fh,
                    open,
                    layout: Some((grant, device)),
                    servers,
                    through_mds: unreachable.map(ThroughMds::Unreachable),
                }
            }
            Err(no) => FileRoute {
                fh,
                open,
                layout: None,
                servers: Vec::new(),
                through_mds: Some(no),
            },
        };
        Ok(self.set_route(path, route, why))
    }

    /// `fh` (named `path`) has no open, so no layout: its I/O goes through the metadata
    /// server for good, `refused` saying why (a route, and an event, like a fetch's).
    pub fn without_open(&self, fh: Fh4, path: &str, refused: NfsError, why: &str) {
        let route = FileRoute {
            fh,
            open: Stateid::ANONYMOUS,
            layout: None,
            servers: Vec::new(),
            through_mds: Some(ThroughMds::Refused(refused)),
        };
        self.set_route(path, route, why);
    }

    /// Makes `route` the file's, with an event and a new generation if the servers
    /// it goes to changed.
    fn set_route(&self, path: &str, route: FileRoute, why: &str) -> Arc<FileRoute> {
        let fh = route.fh;
        let route = Arc::new(route);
        let before = {
            let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
            files
                .insert(fh, (path.to_string(), route.clone()))
                .map(|(_, r)| r)
        };
        let names = |r: &FileRoute| -> String {
            let v: Vec<String> = r.servers().map(|i| self.server_name(Some(i))).collect();
            if v.is_empty() {
                MDS.to_string()
            } else {
                v.join(",")
            }
        };
        let to = names(&route);
        let from = before.as_deref().map(names);
        if from.as_deref() != Some(to.as_str()) {
            let why = match &route.through_mds {
                Some(r) => format!("{why}; through the metadata server: {r}"),
                None => why.to_string(),
            };
            self.event(path, from.unwrap_or_default(), to, why);
            self.generation.fetch_add(1, Relaxed);
        }
        route
    }

    /// Makes sure every data server has `want` slots free for one more data path
    /// (more sessions of the same client where needed); a data server that cannot
    /// give them leaves that data path's I/O to it going through the metadata server.
    pub async fn reserve_slots(&self, want: u32) {
        let servers: Vec<Arc<DataServer>> = self
            .servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for ds in servers {
            if let Err(e) = ds.reserve(want).await {
                self.event(
                    "",
                    ds.addr.to_string(),
                    MDS.into(),
                    format!("no session: {e}"),
                );
            }
        }
    }

    /// The path and open of each file `which` names that has an open (one without
    /// goes through the metadata server for good).
    fn opened(&self, which: Option<Fh4>) -> Vec<(Fh4, String, Stateid)> {
        let f = self.files.lock().unwrap_or_else(|e| e.into_inner());
        f.iter()
            .filter(|(fh, (_, r))| {
                (which.is_none() || which == Some(**fh)) && r.open != Stateid::ANONYMOUS
            })
            .map(|(fh, (p, r))| (*fh, p.clone(), r.open))
            .collect()
    }

    /// Fetches `fh`'s route again after a data server failed it (a file not known
    /// here is left alone).
    pub async fn refetch(&self, fh: Fh4, why: String) {
        for (fh, path, open) in self.opened(Some(fh)) {
            if let Err(e) = self.fetch(fh, &path, open, &why).await {
                self.event(
                    &path,
                    String::new(),
                    MDS.into(),
                    format!("{why}; refetch failed: {e}"),
                );
            }
        }
    }

    /// LAYOUTCOMMIT where writes through data servers need it, then LAYOUTRETURN of
    /// every layout (the end of the pool; the opens they were asked with are their
    /// holder's to close); errors are left: the server drops them with the lease.
    pub async fn release(&self) {
        let files: Vec<(Fh4, String, Arc<FileRoute>)> = {
            let mut f = self.files.lock().unwrap_or_else(|e| e.into_inner());
            f.drain().map(|(fh, (p, r))| (fh, p, r)).collect()
        };
        for (fh, path, route) in &files {
            if let Some((grant, _)) = &route.layout {
                let _ = self.commit_route(path, route).await;
                let _ = self.mds.layoutreturn(*fh, grant, path).await;
            }
        }
    }

    /// A recall by the server (back channel): the routes `which` names go through the
    /// metadata server from now on (data paths see it at their next I/O); once no data
    /// path holds the old route any more (at most `drain`), a recalled file's layout is
    /// returned (LAYOUTRETURN; a recall of everything is returned by the caller in one
    /// call, a changed device needs none). Gives the files affected, to be fetched again.
    pub async fn recall(&self, which: Recall, drain: Duration) -> Vec<(Fh4, String)> {
        let old: Vec<(Fh4, String, Arc<FileRoute>)> = {
            let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
            let mut old = Vec::new();
            for (fh, (path, route)) in files.iter_mut() {
                let named = match (&which, &route.layout) {
                    (_, None) => false,
                    (Recall::File(f), _) => f == fh,
                    (Recall::All, _) => true,
                    (Recall::Device(d), Some((grant, _))) => grant.layout.deviceid == *d,
                };
                if named {
                    let mds = Arc::new(FileRoute {
                        fh: *fh,
                        open: route.open,
                        layout: None,
                        servers: Vec::new(),
                        through_mds: Some(ThroughMds::Recalled),
                    });
                    old.push((*fh, path.clone(), std::mem::replace(route, mds)));
                }
            }
            old
        };
        if old.is_empty() {
            return Vec::new();
        }
        for (_, path, r) in &old {
            let from: Vec<String> = r.servers().map(|i| self.server_name(Some(i))).collect();
            let why = match which {
                Recall::Device(_) => "the server changed the layout's device",
                _ => "layout recalled by the server",
            };
            self.event(path, from.join(","), MDS.into(), why.into());
        }
        self.generation.fetch_add(1, Relaxed);
        // Until no data path holds an old route, at most `drain`; a stopping process
        // does not wait for data paths that may never look again.
        let until = Instant::now() + drain;
        loop {
            let released = self.released.notified();
            let left = until.saturating_duration_since(Instant::now());
            let held = old.iter().any(|(_, _, r)| Arc::strong_count(r) > 1);
            if !held || left.is_zero() || dbio_rpc::stop::requested() {
                break;
            }
            // Holders that let go without a word (a commit's passing copy) and the
            // stop are seen at the next look.
            let _ = tokio::time::timeout(left.min(DRAIN_LOOK), released).await;
        }
        for (_, path, r) in &old {
            // What was written under the layout is committed before it goes.
            if let Err(e) = self.commit_route(path, r).await {
                let why = format!("committing the writes before a recall failed: {e}");
                self.event(path, MDS.into(), MDS.into(), why);
            }
        }
        if let Recall::File(_) = which {
            for (fh, path, r) in &old {
                if let Some((grant, _)) = &r.layout {
                    if let Err(e) = self.mds.layoutreturn(*fh, grant, path).await {
                        let why = format!("LAYOUTRETURN after a recall failed: {e}");
                        self.event(path, MDS.into(), MDS.into(), why);
                    }
                }
            }
        }
        old.into_iter().map(|(fh, path, _)| (fh, path)).collect()
    }

    /// Fetches every known file's route again (the periodic refresh).
    pub async fn refresh_all(&self, why: &str) {
        for (fh, path, open) in self.opened(None) {
            if let Err(e) = self.fetch(fh, &path, open, why).await {
                self.event(
                    &path,
                    String::new(),
                    MDS.into(),
                    format!("refresh failed: {e}"),
                );
            }
        }
    }

    fn event(&self, file: &str, from: String, to: String, why: String) {
        let t_s = self.opened.elapsed().as_secs_f64();
        let unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let mut ev = self.events.lock().unwrap_or_else(|e| e.into_inner());
        // Bounded: a flapping server must not grow the views without end.
        if ev.len() < 10_000 {
            ev.push(LayoutEvent {
                t_s,
                unix_s,
                file: file.to_string(),
                from,
                to,
                why,
            });
        }
    }

    /// LAYOUTGET and GETDEVICEINFO; `Err` (inside `Ok`) says why there is no layout.
    async fn get_layout(
        &self,
        fh: Fh4,
        open: Stateid,
        path: &str,
    ) -> Result<Result<(FileLayoutGrant, FileDsAddr), ThroughMds>, NfsError> {
        let reply = self
            .mds
            .layoutget(fh, open, LayoutIomode::Rw, 0, u64::MAX, path)
            .await?;
        let grant = match reply {
            LayoutReply::Files(g) => g,
            LayoutReply::NoLayout(no) => return Ok(Err(ThroughMds::NoLayout(no))),
        };
        let device = self.mds.getdeviceinfo(grant.layout.deviceid, path).await?;
        if let Err(e) = StripeMap::new(&grant.layout, &device) {
            return Ok(Err(ThroughMds::Stripes(e)));
        }
        Ok(Ok((grant, device)))
    }
}

#[cfg(test)]
#[path = "pnfs_tests.rs"]
mod tests;
