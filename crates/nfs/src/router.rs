//! Routing and failover: which connection a call goes to, for metadata and data alike.
//!
//! A [`Router`] holds the connections to one server over its paths (channels), the
//! paths' health ([`crate::path::Health`]) and the calls per procedure, counted by
//! name so that any protocol version can use it. Every call is routed by a [`Route`]
//! (file and offset): any channel to the server the pool opened, on a path that is up,
//! serves any route (the one with the fewest outstanding calls, ties rotating).
//!
//! pNFS data servers are channels of the router too, each on a path of its own, added
//! when a layout first names them ([`Router::add_data_server`]): the same health, the
//! same probe that brings a dead one back, the same path events and views. A file's
//! layout maps a (file, offset) to one of them (see `datapath/pnfs.rs`); everything
//! else goes to the server the pool opened.
//!
//! - Pipelines ([`crate::datapath::DataPath`]) pick a channel, count the call
//!   ([`Router::reserve`]), submit it, and report its end ([`Router::done`]) and how the
//!   path fared ([`Router::path_answered`], [`Router::path_failed`], which names another
//!   channel to re-issue on).
//! - Async callers (metadata: LOOKUP, CREATE, COMMIT...) use [`Router::call`], which does
//!   the same and moves a call that meets a dead path to the next path.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use dbio_rpc::conn::{CallBatch, CallBuf, ConnStats, Connection, ReplyTo, TransportError};
use dbio_rpc::Credential;

use crate::channel::{build_call, CallError, Results};
use crate::path::{Health, PathEvent, PathState};
use crate::table::Table;

/// Most pNFS data servers a router takes (each has one channel and one path): more
/// are reached through the metadata server.
pub const MAX_DATA_SERVERS: usize = 256;

/// A file of a data path (an index into its table of file handles).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

impl FileId {
    /// No file: metadata calls, NULL.
    pub const NONE: FileId = FileId(u32::MAX);
}

/// Where a call is going: the file and the offset in it. A layout (pNFS) maps it to a
/// data server; without one, every path reaches the same storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub file: FileId,
    pub offset: u64,
}

impl Route {
    /// Metadata and other calls that concern no range of a file.
    pub const META: Route = Route {
        file: FileId::NONE,
        offset: 0,
    };

    pub fn new(file: FileId, offset: u64) -> Route {
        Route { file, offset }
    }
}

/// Which server a channel reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Server {
    /// The server the pool opened (NFSv3, or the pNFS metadata server).
    Opened,
    /// pNFS data server number `n` of the pool's layouts.
    Data(u16),
}

/// One connection of a router (a row of the dNFS "channels" view).
pub struct Channel {
    pub conn: Connection,
    /// Index of its path in [`Router::paths`].
    pub path: usize,
    pub server: Server,
    outstanding: AtomicU32,
}

impl Channel {
    /// Requests submitted on this channel and not yet completed.
    pub fn outstanding(&self) -> u32 {
        self.outstanding.load(Relaxed)
    }

    pub fn stats(&self) -> &Arc<ConnStats> {
        self.conn.stats()
    }
}

/// Most procedures a router counts (the rest are not counted).
const MAX_PROCS: usize = 64;

/// A procedure registered with [`ProcCounters::id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcId(u16);

/// Calls per procedure (by name, in order of registration) and bytes read and written.
#[derive(Debug)]
pub struct ProcCounters {
    names: Mutex<Vec<&'static str>>,
    calls: Box<[AtomicU64]>,
    pub read_bytes: AtomicU64,
    pub write_bytes: AtomicU64,
}

impl ProcCounters {
    /// Counters with `names` registered in that order (the order of the views).
    pub fn new(names: &[&'static str]) -> ProcCounters {
        let p = ProcCounters {
            names: Mutex::new(Vec::new()),
            calls: (0..MAX_PROCS).map(|_| AtomicU64::new(0)).collect(),
            read_bytes: AtomicU64::new(0),
            write_bytes: AtomicU64::new(0),
        };
        for n in names {
            p.id(n);
        }
        p
    }

    /// The counter of procedure `name`, registered on first use.
    pub fn id(&self, name: &'static str) -> ProcId {
        let Ok(mut names) = self.names.lock() else {
            return ProcId(MAX_PROCS as u16);
        };
        if let Some(i) = names.iter().position(|n| *n == name) {
            return ProcId(i as u16);
        }
        if names.len() >= MAX_PROCS {
            return ProcId(MAX_PROCS as u16);
        }
        names.push(name);
        ProcId(names.len() as u16 - 1)
    }

    pub fn count(&self, id: ProcId) {
        if let Some(c) = self.calls.get(usize::from(id.0)) {
            c.fetch_add(1, Relaxed);
        }
    }

    /// `(procedure name, calls)` for every procedure called at least once.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        let names = self.names.lock().map(|n| n.clone()).unwrap_or_default();
        names
            .into_iter()
            .zip(self.calls.iter())
            .filter_map(|(name, c)| {
                let n = c.load(Relaxed);
                (n > 0).then_some((name, n))
            })
            .collect()
    }
}

/// Writes answered UNSTABLE and not committed when their server's verifier changed
/// (found by the data path, `datapath/verifier.rs`; counted here for the whole pool).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtRisk {
    pub writes: u64,
    pub bytes: u64,
}

/// One RPC program and version over connections on one or more paths.
pub struct Router {
    channels: Table<Channel>,
    /// Paths to the server the pool opened (the first ones of the health's table).
    opened_paths: usize,
    health: Arc<Health>,
    next: AtomicUsize,
    procs: ProcCounters,
    /// UNSTABLE writes a server restart put at risk (see `datapath::verifier`): writes
    /// and bytes.
    at_risk: (AtomicU64, AtomicU64),
    prog: u32,
    vers: u32,
    cred: Credential,
    runs_on_callers: bool,
}

/// Counts a call out when its future ends or is dropped.
struct Outstanding<'a>(&'a Router, usize);

impl Drop for Outstanding<'_> {
    fn drop(&mut self) {
        self.0.done(self.1);
    }
}

impl Router {
    /// A router over `conns` (each with the index of its path in `paths`, at least one),
    /// counting the procedures `procs` (names, in the order the views show them).
    pub fn new(
        prog: u32,
        vers: u32,
        cred: Credential,
        paths: Vec<PathState>,
        conns: Vec<(usize, Connection)>,
        procs: &[&'static str],
    ) -> Router {
        assert!(!conns.is_empty(), "a router needs a connection");
        let channels = conns.into_iter().map(|(path, conn)| Channel {
            conn,
            path,
            server: Server::Opened,
            outstanding: AtomicU32::new(0),
        });
        Router {
            channels: Table::new(channels, MAX_DATA_SERVERS),
            opened_paths: paths.len(),
            health: Arc::new(Health::new(paths, MAX_DATA_SERVERS)),
            next: AtomicUsize::new(0),
            procs: ProcCounters::new(procs),
            at_risk: Default::default(),
            prog,
            vers,
            cred,
            runs_on_callers: false,
        }
    }

    /// Marks the router's connections as moved only by callers waiting in the runtime
    /// that runs them (see [`crate::pool`]): pipelines then hand calls over when they wait.
    pub fn with_runs_on_callers(mut self, yes: bool) -> Router {
        self.runs_on_callers = yes;
        self
    }

    /// True when the connections move only while a caller waits on them.
    pub fn runs_on_callers(&self) -> bool {
        self.runs_on_callers
    }

    /// Paths: first those to the server the pool opened, then one per data server.
    pub fn paths(&self) -> &Table<PathState> {
        &self.health.paths
    }

    /// Paths to the server the pool opened.
    pub fn opened_paths(&self) -> usize {
        self.opened_paths
    }

    pub fn channels(&self) -> &Table<Channel> {
        &self.channels
    }

    /// Registers pNFS data server `n`, reached at `conn`, as a channel on a path of its
    /// own; its channel index, or `None` when the router has room for no more.
    pub fn add_data_server(&self, n: usize, conn: Connection) -> Option<usize> {
        let server = Server::Data(u16::try_from(n).ok()?);
        let path = self
            .health
            .paths
            .push(PathState::to_data_server(conn.addr()))
            .ok()?;
        self.channels
            .push(Channel {
                conn,
                path,
                server,
                outstanding: AtomicU32::new(0),
            })
            .ok()
    }

    /// The data server channel `ch` reaches, if it reaches one.
    pub fn data_server_of(&self, ch: usize) -> Option<usize> {
        match self.channels.get(ch)?.server {
            Server::Data(n) => Some(usize::from(n)),
            Server::Opened => None,
        }
    }

    pub fn procs(&self) -> &ProcCounters {
        &self.procs
    }

    /// Counts writes a server's restart put at risk.
    pub fn unstable_at_risk(&self, risk: AtRisk) {
        self.at_risk.0.fetch_add(risk.writes, Relaxed);
        self.at_risk.1.fetch_add(risk.bytes, Relaxed);
    }

    /// Writes answered UNSTABLE that a server's restart put at risk, so far.
    pub fn at_risk(&self) -> AtRisk {
        AtRisk {
            writes: self.at_risk.0.load(Relaxed),
            bytes: self.at_risk.1.load(Relaxed),
        }
    }

    /// The counter of procedure `name` (see [`ProcCounters::id`]).
    pub fn proc_id(&self, name: &'static str) -> ProcId {
        self.procs.id(name)
    }

    pub(crate) fn health(&self) -> &Arc<Health> {
        &self.health
    }

    pub(crate) fn credential(&self) -> &Credential {
        &self.cred
    }

    /// The RPC program and version of the router's calls.
    pub(crate) fn program(&self) -> (u32, u32) {
        (self.prog, self.vers)
    }

    /// Path events so far, oldest first.
    /// The paths' events and the connections' RPCSEC_GSS contexts, oldest first.
    pub fn events(&self) -> Vec<PathEvent> {
        let mut ev = self.health.events();
        for ch in self.channels.iter() {
            let Ok(gss) = ch.conn.stats().gss_events.lock() else {
                continue;
            };
            ev.extend(
                gss.iter()
                    .map(|(when, what)| self.health.event_at(ch.path, *when, what.clone())),
            );
        }
        ev.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        ev
    }

    /// The server's address on channel `ch`.
    pub fn server_addr(&self, ch: usize) -> SocketAddr {
        self.channels[ch].conn.addr()
    }

    /// Encodes a call of this router's program with its credential.
    pub fn encode(&self, proc_: u32, args: impl FnOnce(&mut BytesMut), payload: Bytes) -> CallBuf {
        build_call(self.prog, self.vers, proc_, &self.cred, args, payload)
    }

    /// The channel to the server the pool opened for `route`: the one with the fewest
    /// outstanding requests on a path that is up (not `avoid_path`); when every path is
    /// down, any (its connection retries). Every such path reaches the same storage;
    /// a route to a data server is placed by the file's layout instead.
    pub fn pick(&self, _route: Route, avoid_path: Option<usize>) -> usize {
        let n = self.channels.len();
        if n == 1 {
            return 0;
        }
        let start = self.next.fetch_add(1, Relaxed) % n;
        let mut best = None;
        let mut best_load = u32::MAX;
        for k in 0..n {
            let i = (start + k) % n;
            let ch = &self.channels[i];
            if ch.server != Server::Opened
                || !self.health.paths[ch.path].is_up()
                || Some(ch.path) == avoid_path
            {
                continue;
            }
            let load = ch.outstanding();
            if load < best_load {
                best_load = load;
                best = Some(i);
                if load == 0 {
                    break;
                }
            }
        }
        best.unwrap_or_else(|| {
            // Every path is down: a channel to the opened server all the same.
            (0..n)
                .map(|k| (start + k) % n)
                .find(|&i| self.channels[i].server == Server::Opened)
                .unwrap_or(0)
        })
    }

    /// True when channel `ch`'s path is up: a call may follow the others of its burst
    /// there.
    pub fn is_usable(&self, ch: usize) -> bool {
        self.channels
            .get(ch)
            .is_some_and(|c| self.health.paths[c.path].is_up())
    }

    /// Counts a call that will go on channel `ch`: [`Router::pick`] sees it at once, and
    /// [`Router::done`] must follow its completion.
    pub fn reserve(&self, ch: usize, proc_: ProcId) {
        self.channels[ch].outstanding.fetch_add(1, Relaxed);
        self.procs.count(proc_);
    }

    /// Counts and sends one call on channel `ch`; [`Router::done`] must follow.
    pub fn submit(&self, ch: usize, proc_: ProcId, call: CallBuf, reply: ReplyTo) {
        self.reserve(ch, proc_);
        self.channels[ch].conn.submit(call, reply);
    }

    /// Sends the calls of `batch` (each counted with [`Router::reserve`]) on channel
    /// `ch` at once, leaving `batch` empty.
    pub fn submit_batch(&self, ch: usize, batch: &mut CallBatch) {
        self.channels[ch].conn.submit_batch(batch);
    }

    /// Sends a call for `route` whose end is not reported (pipelines of one caller that
    /// wait on their own replies: copies, ping): counted per procedure, not as
    /// outstanding, and without failover.
    pub fn send(&self, route: Route, proc_: ProcId, call: CallBuf, reply: ReplyTo) {
        let ch = self.pick(route, None);
        self.procs.count(proc_);
        self.channels[ch].conn.submit(call, reply);
    }

    /// A request on channel `ch` completed (successfully or not).
    pub fn done(&self, ch: usize) {
        if let Some(c) = self.channels.get(ch) {
            c.outstanding.fetch_sub(1, Relaxed);
        }
    }

    /// A transport failure on channel `ch`: its path stops getting new requests, and
    /// the event is recorded. Returns another channel to re-issue on, if some other
    /// path is up.
    pub fn path_failed(&self, ch: usize, reason: &str) -> Option<usize> {
        let path = self.channels.get(ch)?.path;
        self.health.failed(path, reason, false);
        let other = self.pick(Route::META, Some(path));
        let moved = self.health.paths[self.channels[other].path].is_up() && other != ch;
        if moved {
            self.health.failed(path, reason, true);
        }
        moved.then_some(other)
    }

    /// Records an event on channel `ch`'s path that is neither down nor up.
    pub fn note(&self, ch: usize, what: String) {
        if let Some(c) = self.channels.get(ch) {
            self.health.note(c.path, what);
        }
    }

    /// A reply arrived on channel `ch`. With one path to the opened server, that path
    /// is up again if it was down (there is nowhere else to go). Otherwise, and for
    /// data servers, only the probe brings a path back: a late reply to a call sent
    /// before the path died proves nothing.
    pub fn path_answered(&self, ch: usize) {
        if self.opened_paths > 1 {
            return;
        }
        if let Some(c) = self.channels.get(ch) {
            if c.server == Server::Opened {
                self.health.answered(c.path);
            }
        }
    }

    /// Sends a call for `route` and waits for its results. On a transport failure (the
    /// path died) the same call goes over another path that is up, once per path. A
    /// call that reached the server before its path died may so run twice, as after any
    /// reconnect: NFSv3 metadata calls are retried the same way by every client.
    pub async fn call(
        &self,
        route: Route,
        proc_: ProcId,
        make: impl Fn() -> CallBuf,
    ) -> Result<Results, CallError> {
        let mut ch = self.pick(route, None);
        let mut moves = 0;
        loop {
            self.reserve(ch, proc_);
            let result = {
                let _out = Outstanding(self, ch);
                self.channels[ch].conn.call(make()).await
            };
            match result {
                Ok(reply) => {
                    self.path_answered(ch);
                    return Results::from_record(reply.record).map_err(CallError::Rpc);
                }
                Err(e) => {
                    // A stop is no path failure: nothing moves.
                    let stopped = matches!(e, TransportError::Stopped { .. });
                    if !stopped && moves + 1 < self.opened_paths {
                        if let Some(other) = self.path_failed(ch, &e.to_string()) {
                            ch = other;
                            moves += 1;
                            continue;
                        }
                    }
                    return Err(CallError::Transport(e));
                }
            }
        }
    }
}
