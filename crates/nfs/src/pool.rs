//! A pool of NFS connections over one or more paths, shared by every user
//! thread of a run (one pool per run).
//!
//! - One MOUNT, over the first path; the handles it yields are valid on
//!   every path because all paths reach the same storage.
//! - `conns_per_path` connections on each path, each its own task owning
//!   its socket, with many requests outstanding.
//! - Each request goes to the channel with the fewest outstanding requests
//!   among the paths that are up (ties rotate), so a slow connection or a
//!   congested path gets less work.
//! - The pool owns its tokio runtime: callers are plain threads that submit
//!   with a [`ReplyTo`] (a completion queue they block on) and never await.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use dbio_rpc::conn::{CallBuf, ConnStats, Connection, ReplyTo};
use dbio_rpc::{encode_call, Credential};

use crate::channel::CallError;
use crate::client::{ClientOptions, Nfs3Client};
use crate::error::NfsError;
use crate::mount::call_error;
use crate::path::{PathEvent, PathSpec, PathState};
use crate::proto::nfs3::{self, Proc};
use crate::url::NfsUrl;

/// Room for the RPC header, AUTH_SYS credential and READ/WRITE arguments.
const HEAD_CAPACITY: usize = 256;
/// Default NFS port when the URL gives none and no portmapper is asked.
const NFS_PORT: u16 = 2049;

/// How to build a pool.
#[derive(Clone, Debug)]
pub struct PoolOptions {
    /// Connections on each path.
    pub conns_per_path: u32,
    /// Threads running the connection tasks.
    pub workers: usize,
    /// Identity, timeouts, in-flight limit of every connection.
    pub client: ClientOptions,
}

/// One connection of the pool (a row of the dNFS "channels" view).
pub struct Channel {
    pub conn: Connection,
    /// Index of its path in [`Pool::paths`].
    pub path: usize,
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

/// Calls and bytes per NFS procedure that went through the pool.
#[derive(Debug, Default)]
pub struct ProcCounters {
    calls: [AtomicU64; 22],
    pub read_bytes: AtomicU64,
    pub write_bytes: AtomicU64,
}

impl ProcCounters {
    pub fn count(&self, p: Proc) {
        if let Some(c) = self.calls.get(p as usize) {
            c.fetch_add(1, Relaxed);
        }
    }

    /// `(procedure name, calls)` for every procedure called at least once.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        (0..self.calls.len() as u32)
            .filter_map(|i| {
                let n = self.calls[i as usize].load(Relaxed);
                let p = Proc::from_u32(i)?;
                (n > 0).then(|| (p.name(), n))
            })
            .collect()
    }
}

/// Connections to one server over its paths, plus the mounted export.
pub struct Pool {
    rt: tokio::runtime::Runtime,
    client: Nfs3Client,
    paths: Vec<PathState>,
    channels: Vec<Channel>,
    cred: Credential,
    next: AtomicUsize,
    procs: ProcCounters,
    events: Mutex<Vec<PathEvent>>,
    opened: Instant,
    nfs_port: u16,
    mount_port: Option<u16>,
}

impl Pool {
    /// Mounts the URL's export over the first path and opens
    /// `conns_per_path` connections on every path. With no `paths`, the
    /// URL's host is the only path. Returns the pool and the path inside
    /// the export.
    pub fn open(
        url: &NfsUrl,
        paths: Vec<PathSpec>,
        options: PoolOptions,
    ) -> Result<(Pool, String), NfsError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.workers.max(1))
            .thread_name("dbio-nfs")
            .enable_all()
            .build()
            .map_err(|e| NfsError::Invalid {
                path: "NFS runtime".into(),
                reason: e.to_string(),
            })?;
        let cred = options.client.credential()?;
        let (client, rest, paths, channels, nfs_port) = rt.block_on(async {
            let mut paths = paths;
            if paths.is_empty() {
                let addr = crate::mount::resolve(&url.host, NFS_PORT).await?;
                paths.push(PathSpec::new(addr.ip()));
            }
            // MOUNT and metadata calls use the first path.
            let mut first = url.clone();
            first.host = paths[0].server.to_string();
            let mut mopts = options.client.clone();
            mopts.conns = 1;
            mopts.conn.bind = paths[0].local;
            let (client, rest) = Nfs3Client::mount(&first, mopts).await?;
            // The port the mount found (from the URL or the portmapper).
            let port = client.channel().pick().addr().port();
            let mut channels = Vec::new();
            for (i, p) in paths.iter().enumerate() {
                for _ in 0..options.conns_per_path.max(1) {
                    let mut cfg = options.client.conn.clone();
                    cfg.bind = p.local;
                    let conn = Connection::connect(p.nfs_addr(port), cfg)
                        .await
                        .map_err(|e| call_error("NFS", &p.label(), CallError::Transport(e)))?;
                    channels.push(Channel {
                        conn,
                        path: i,
                        outstanding: AtomicU32::new(0),
                    });
                }
            }
            Ok::<_, NfsError>((client, rest, paths, channels, port))
        })?;
        Ok((
            Pool {
                rt,
                client,
                paths: paths.into_iter().map(PathState::new).collect(),
                channels,
                cred,
                next: AtomicUsize::new(0),
                procs: ProcCounters::default(),
                events: Mutex::new(Vec::new()),
                opened: Instant::now(),
                nfs_port,
                mount_port: url.mount_port,
            },
            rest,
        ))
    }

    /// Runs an async client call from a plain thread (metadata: LOOKUP,
    /// CREATE, the data-set manifest). Not for use inside the runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// The mounted export's client (metadata calls over the first path).
    pub fn client(&self) -> &Nfs3Client {
        &self.client
    }

    pub fn paths(&self) -> &[PathState] {
        &self.paths
    }

    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    pub fn procs(&self) -> &ProcCounters {
        &self.procs
    }

    pub fn nfs_port(&self) -> u16 {
        self.nfs_port
    }

    pub fn mount_port(&self) -> Option<u16> {
        self.mount_port
    }

    /// The channel with the fewest outstanding requests on a path that is
    /// up; when every path is down, on any path (its connection retries).
    pub fn pick(&self, avoid_path: Option<usize>) -> usize {
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
            if !self.paths[ch.path].is_up() || Some(ch.path) == avoid_path {
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
        best.unwrap_or(start)
    }

    /// Encodes an NFSv3 call with the pool's credential.
    pub fn encode(&self, proc_: Proc, args: impl FnOnce(&mut BytesMut), payload: Bytes) -> CallBuf {
        let mut head = BytesMut::with_capacity(HEAD_CAPACITY);
        encode_call(
            &mut head,
            0,
            nfs3::PROGRAM,
            nfs3::VERSION,
            proc_ as u32,
            &self.cred,
        );
        args(&mut head);
        let mut call = CallBuf::new(head);
        call.payload = payload;
        call
    }

    /// Sends a call on channel `ch`; [`Pool::done`] must follow its completion.
    pub fn submit_on(&self, ch: usize, proc_: Proc, call: CallBuf, reply: ReplyTo) {
        let channel = &self.channels[ch];
        channel.outstanding.fetch_add(1, Relaxed);
        self.procs.count(proc_);
        channel.conn.submit(call, reply);
    }

    /// A request on channel `ch` completed (successfully or not).
    pub fn done(&self, ch: usize) {
        if let Some(c) = self.channels.get(ch) {
            c.outstanding.fetch_sub(1, Relaxed);
        }
    }

    /// A transport failure on channel `ch`: its path stops getting new
    /// requests, and the event is recorded. Returns another channel to
    /// re-issue on, if some other path is up.
    pub fn path_failed(&self, ch: usize, reason: &str) -> Option<usize> {
        let path = self.channels.get(ch)?.path;
        if self.paths[path].mark_down() {
            self.record(path, format!("down: {reason}"), None);
        }
        let other = self.pick(Some(path));
        let moved = self.paths[self.channels[other].path].is_up() && other != ch;
        if moved {
            self.paths[path].count_moved();
            if let Ok(mut ev) = self.events.lock() {
                if let Some(e) = ev.iter_mut().rev().find(|e| e.path == path) {
                    e.moved += 1;
                }
            }
        }
        moved.then_some(other)
    }

    /// A reply arrived on channel `ch`: a path that was down is up again.
    pub fn path_answered(&self, ch: usize) {
        let Some(c) = self.channels.get(ch) else {
            return;
        };
        if let Some(down) = self.paths[c.path].mark_up() {
            self.record(c.path, "up".into(), Some(down.as_secs_f64()));
        }
    }

    fn record(&self, path: usize, what: String, recovered_after_s: Option<f64>) {
        if let Ok(mut ev) = self.events.lock() {
            ev.push(PathEvent {
                at_s: self.opened.elapsed().as_secs_f64(),
                path,
                what,
                moved: 0,
                recovered_after_s,
            });
        }
    }

    /// Path events so far, oldest first.
    pub fn events(&self) -> Vec<PathEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// The server's NFS address on the path of channel `ch`.
    pub fn server_addr(&self, ch: usize) -> SocketAddr {
        self.channels[ch].conn.addr()
    }
}
