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
//! - With several paths, connections fail their calls at once when their
//!   path dies (refused, reset, or silent for the reply timeout) so the
//!   engine re-issues them on another path; a background probe brings the
//!   path back ([`crate::failover`]).
//! - The pool owns its tokio runtime: callers are plain threads that submit
//!   with a [`ReplyTo`] (a completion queue they wait on) and never await.
//!   With `workers: 0` the runtime has no threads of its own: a caller waiting in
//!   [`Pool::block_on`] runs the connection tasks meanwhile (one caller at a time;
//!   the others wait for their replies). A reply then wakes its engine with a
//!   function call on the same thread, not a hand-over between threads, which is
//!   most of the CPU an RPC costs. The catch: the connections move only while some
//!   caller waits, which engines do whenever they have I/O in flight.

use std::sync::Arc;
use std::time::Duration;

use dbio_rpc::conn::{ConnConfig, Connection, Siblings};

use crate::channel::CallError;
use crate::client::{nfs3_proc_names, ClientOptions, Nfs3Client};
use crate::datapath::DataPath;
use crate::error::{call_error, NfsError};
use crate::path::{PathEvent, PathSpec, PathState};
use crate::proto::{nfs3, nfs4};
use crate::router::Router;
pub use crate::router::{Channel, ProcCounters};
use crate::url::{NfsUrl, NfsVersion};
use crate::v41::{SessionOptions, V41Mount};

/// pNFS: longest the end of a pool waits to return its layouts.
const RELEASE_WAIT: Duration = Duration::from_secs(2);
/// pNFS: seconds between fetches of every file's layout, unless the URL says.
pub const LAYOUT_REFRESH_S: u32 = 10;
/// Default NFS port when the URL gives none and no portmapper is asked.
const NFS_PORT: u16 = 2049;
/// With several paths: time without any reply before a path counts as
/// dead, unless the URL sets `timeo=`. Short, because the other paths
/// carry the load meanwhile; a slow path still answers something.
pub const PATH_TIMEOUT: Duration = Duration::from_secs(2);
/// With several paths: how long one call may wait in all (on a path that
/// is slow but answering) before it fails and moves.
const PATH_CALL_DEADLINE: Duration = Duration::from_secs(60);

/// How to build a pool.
#[derive(Clone, Debug)]
pub struct PoolOptions {
    /// Connections on each path.
    pub conns_per_path: u32,
    /// Threads running the connection tasks; 0: none of its own, the threads that wait
    /// on the pool (in [`Pool::block_on`]) run them, one at a time (see the module notes).
    pub workers: usize,
    /// Identity, timeouts, in-flight limit of every connection.
    pub client: ClientOptions,
    /// Bound on each attempt to mount (oranfstab `mnt_timeout`).
    pub mount_timeout: Option<Duration>,
}

/// Connections to one server over its paths, plus the mounted export.
pub struct Pool {
    rt: tokio::runtime::Runtime,
    proto: Proto,
    router: Arc<Router>,
    nfs_port: u16,
    mount_port: Option<u16>,
    retry: crate::retry::Backoff,
}

/// The protocol's side of a pool.
enum Proto {
    /// NFSv3: the MOUNTed export's client.
    V3(Arc<Nfs3Client>),
    /// NFSv4.1: the sessions.
    V41(V41Mount),
}

/// Data connections of a pool: the options every one gets, and whether there are
/// several paths.
fn data_config(url: &NfsUrl, options: &PoolOptions, multipath: bool) -> ConnConfig {
    let mut cfg = options.client.conn.clone();
    if multipath {
        // Fail over quickly instead of waiting on a dead path.
        let timeout = url
            .timeo
            .map_or(PATH_TIMEOUT, |t| Duration::from_millis(u64::from(t) * 100));
        cfg.fail_fast = true;
        cfg.timeout = timeout;
        cfg.connect_timeout = timeout;
        cfg.retries =
            (PATH_CALL_DEADLINE.as_millis() / timeout.as_millis().max(1)).clamp(1, 1000) as u32;
    }
    cfg
}

/// The data connections: `conns_per_path` on every path, to `port`. With several
/// paths one that cannot be reached starts down (returned with why) and is probed.
async fn connect_channels(
    paths: &[PathSpec],
    port: u16,
    cfg: &ConnConfig,
    options: &PoolOptions,
) -> Result<(Vec<(usize, Connection)>, Vec<(usize, String)>), NfsError> {
    let multipath = paths.len() > 1;
    let mut down_at_open = Vec::new();
    let mut channels = Vec::new();
    // Callers run every data connection on one thread at a time: a wake-up for one
    // reads the others too.
    let conns = paths.len() * options.conns_per_path.max(1) as usize;
    let siblings = (options.workers == 0 && conns > 1).then(|| Arc::new(Siblings::default()));
    for (i, p) in paths.iter().enumerate() {
        for _ in 0..options.conns_per_path.max(1) {
            let mut cfg = cfg.clone();
            cfg.bind = p.local;
            cfg.siblings = siblings.clone();
            let conn = match Connection::connect(p.nfs_addr(port), cfg.clone()).await {
                Ok(c) => c,
                // With several paths, one down at the start is a failover like any
                // other: the probe brings it in.
                Err(e) if multipath => {
                    down_at_open.push((i, e.to_string()));
                    Connection::unconnected(p.nfs_addr(port), cfg)
                }
                Err(e) => return Err(call_error("NFS", &p.label(), CallError::Transport(e))),
            };
            channels.push((i, conn));
        }
    }
    Ok((channels, down_at_open))
}

/// Mounts the export over the first path that answers (each attempt bounded by
/// `mnt_timeout`): the client and the path inside the export.
async fn mount_v3(
    url: &NfsUrl,
    paths: &[PathSpec],
    options: &PoolOptions,
    data_cfg: &ConnConfig,
) -> Result<(Nfs3Client, String), NfsError> {
    let mut first_err = None;
    for p in paths {
        let mut first = url.clone();
        first.host = p.server.to_string();
        let mut mopts = options.client.clone();
        mopts.conns = 1;
        if paths.len() > 1 {
            mopts.conn = data_cfg.clone();
        }
        mopts.conn.bind = p.local;
        let attempt = Nfs3Client::mount(&first, mopts);
        let mounted = match options.mount_timeout {
            None => attempt.await,
            Some(limit) => tokio::time::timeout(limit, attempt)
                .await
                .unwrap_or_else(|_| {
                    Err(NfsError::Invalid {
                        path: format!("mount of {} on {}", url.path, p.label()),
                        reason: format!("no answer within mnt_timeout ({} s)", limit.as_secs_f64()),
                    })
                }),
        };
        match mounted {
            Ok(m) => return Ok(m),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_else(|| NfsError::Invalid {
        path: url.path.clone(),
        reason: "no path to mount over".into(),
    }))
}

impl Pool {
    /// Opens the URL's export: NFSv3 mounts it over the first path that answers,
    /// NFSv4.1 sets up a session and looks the path up from the server's root; then
    /// `conns_per_path` connections on every path (with several paths, one that cannot
    /// be reached starts down and is probed). With no `paths`, the URL's host and its
    /// `path=`s are the paths. Returns the pool and the path inside the export (for
    /// NFSv4.1, the whole URL path).
    pub fn open(
        url: &NfsUrl,
        paths: Vec<PathSpec>,
        options: PoolOptions,
    ) -> Result<(Pool, String), NfsError> {
        let rt = if options.workers == 0 {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        } else {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(options.workers)
                .thread_name("dbio-nfs")
                .enable_all()
                .build()
        }
        .map_err(|e| NfsError::Invalid {
            path: "NFS runtime".into(),
            reason: e.to_string(),
        })?;
        let cred = options.client.credential()?;
        let v41 = url.version.is_v41();
        let (proto, rest, paths, channels, nfs_port, down_at_open) = rt.block_on(async {
            let mut paths = paths;
            if paths.is_empty() {
                let addr = crate::resolve::resolve(&url.host, NFS_PORT).await?;
                paths.push(PathSpec::new(addr.ip()));
                paths.extend(url.paths.iter().cloned());
            }
            let data_cfg = data_config(url, &options, paths.len() > 1);
            if v41 {
                let port = url.nfs_port.unwrap_or(NFS_PORT);
                let (channels, down) = connect_channels(&paths, port, &data_cfg, &options).await?;
                // The session starts on the first connection that is up; once the
                // router exists, metadata calls go through it like data calls.
                let first = channels
                    .iter()
                    .find(|(i, _)| !down.iter().any(|(d, _)| d == i))
                    .map(|(_, c)| c.clone())
                    .ok_or_else(|| NfsError::Invalid {
                        path: url.host.clone(),
                        reason: "no path to the server is up".into(),
                    })?;
                let mut sopts = SessionOptions {
                    slots: crate::v41::MAX_SLOTS,
                    conn: data_cfg.clone(),
                    backoff: options.client.retry,
                    ..SessionOptions::default()
                };
                sopts.conn.siblings = None;
                let server = first.addr().to_string();
                let pnfs = (url.version == NfsVersion::Pnfs).then(|| {
                    let secs = url.layout_refresh.unwrap_or(LAYOUT_REFRESH_S);
                    let refresh = (secs > 0).then(|| Duration::from_secs(u64::from(secs)));
                    (options.client.clone(), refresh)
                });
                let mount = V41Mount::open(first, cred.clone(), sopts, server, pnfs).await?;
                let rest = url.path.trim_matches('/').to_string();
                return Ok::<_, NfsError>((Proto::V41(mount), rest, paths, channels, port, down));
            }
            let (client, rest) = mount_v3(url, &paths, &options, &data_cfg).await?;
            // The port the mount found (from the URL or the portmapper).
            let port = client.router().server_addr(0).port();
            let (channels, down) = connect_channels(&paths, port, &data_cfg, &options).await?;
            Ok((
                Proto::V3(Arc::new(client)),
                rest,
                paths,
                channels,
                port,
                down,
            ))
        })?;
        let (prog, vers, procs) = if v41 {
            (nfs4::PROGRAM, nfs4::VERSION, vec!["COMPOUND"])
        } else {
            (nfs3::PROGRAM, nfs3::VERSION, nfs3_proc_names())
        };
        // Metadata and data share the connections: a call that meets a dead path moves
        // to the next one, whichever kind it is.
        let router = Router::new(
            prog,
            vers,
            cred,
            paths.into_iter().map(PathState::new).collect(),
            channels,
            &procs,
        )
        .with_runs_on_callers(options.workers == 0);
        let router = Arc::new(router);
        let health = router.health().clone();
        for (path, reason) in &down_at_open {
            health.failed(*path, reason, false);
        }
        let layouts = match &proto {
            Proto::V41(m) => m.layouts().cloned(),
            Proto::V3(_) => None,
        };
        if health.paths.len() > 1 || layouts.is_some() {
            // Data servers are added as paths of their own later: probed alike.
            rt.spawn(crate::failover::probe(Arc::downgrade(&router)));
        }
        if let Proto::V41(m) = &proto {
            // Metadata then fails over between paths like the data does.
            m.state().use_router(router.clone());
            rt.spawn(V41Mount::renew_lease(m.state().clone()));
            // Every connection up may carry the server's calls (one down at the start
            // carries none; the server calls over the others). All are bound again
            // when the server says it lost the back channel.
            let all = router.channels().iter().map(|c| c.conn.clone()).collect();
            m.back_channel().rebind_with(&m.shared_client(), all);
            let conns = router
                .channels()
                .iter()
                .filter(|c| !down_at_open.iter().any(|(p, _)| *p == c.path))
                .map(|c| c.conn.clone())
                .collect();
            rt.block_on(m.bind_connections(conns));
        }
        if let Some(layouts) = layouts {
            layouts.use_router(router.clone(), rt.handle().clone());
            if let Some(every) = layouts.refresh {
                // Follows data that moved: the servers tested recall no layouts.
                rt.spawn(async move {
                    loop {
                        tokio::time::sleep(every).await;
                        layouts.refresh_all("periodic refresh").await;
                    }
                });
            }
        }
        let proto = match proto {
            Proto::V3(mut client) => {
                // Not shared yet: the pool is its only holder.
                if let Some(c) = Arc::get_mut(&mut client) {
                    c.use_router(router.clone());
                }
                Proto::V3(client)
            }
            p => p,
        };
        Ok((
            Pool {
                rt,
                proto,
                router,
                nfs_port,
                mount_port: url.mount_port,
                retry: options.client.retry,
            },
            rest,
        ))
    }

    /// Runs an async client call from a plain thread (metadata: LOOKUP,
    /// CREATE, the data-set manifest). Not for use inside the runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// NFSv3: the mounted export's client (metadata calls over the first path).
    pub fn v3(&self) -> Option<&Nfs3Client> {
        match &self.proto {
            Proto::V3(c) => Some(c),
            Proto::V41(_) => None,
        }
    }

    /// NFSv4.1: the sessions and the metadata client.
    pub fn v41(&self) -> Option<&V41Mount> {
        match &self.proto {
            Proto::V41(m) => Some(m),
            Proto::V3(_) => None,
        }
    }

    /// The file API over the pool's metadata client (any version).
    pub fn fs(&self) -> crate::fs::Fs {
        match &self.proto {
            Proto::V3(c) => crate::fs::Fs::v3(c.clone()),
            Proto::V41(m) => crate::fs::Fs::v41(m.shared_client()),
        }
    }

    /// The protocol version, as in URLs.
    pub fn version(&self) -> NfsVersion {
        match &self.proto {
            Proto::V3(_) => NfsVersion::V3,
            Proto::V41(m) if m.layouts().is_some() => NfsVersion::Pnfs,
            Proto::V41(_) => NfsVersion::V41,
        }
    }

    /// The largest READ and WRITE the server states: NFSv3's rtmax and wtmax, or what
    /// one NFSv4.1 COMPOUND may carry as the session granted it.
    pub fn server_limits(&self) -> (u32, u32) {
        match &self.proto {
            Proto::V3(c) => (c.fsinfo().rtmax, c.fsinfo().wtmax),
            Proto::V41(m) => {
                let fore = m.client().session().fore_channel();
                (fore.maxresponsesize, fore.maxrequestsize)
            }
        }
    }

    /// Sessions and their slots (granted, in use); none without sessions (NFSv3).
    pub fn sessions(&self) -> Vec<(u32, u32)> {
        match &self.proto {
            Proto::V3(_) => Vec::new(),
            Proto::V41(m) => m.sessions(),
        }
    }

    /// The export mounted; None where paths start at the server's root (NFSv4.1).
    pub fn export(&self) -> Option<&str> {
        match &self.proto {
            Proto::V3(c) => Some(c.export()),
            Proto::V41(_) => None,
        }
    }

    /// pNFS: the layouts of the pool's files.
    pub fn layouts(&self) -> Option<&Arc<crate::v41::pnfs::Layouts>> {
        match &self.proto {
            Proto::V3(_) => None,
            Proto::V41(m) => m.layouts(),
        }
    }

    /// READ size of the data paths: within the server's limits and `cap`.
    pub fn read_size(&self, cap: u32) -> u32 {
        match &self.proto {
            Proto::V3(c) => c.read_size(cap),
            Proto::V41(m) => m.read_size(cap),
        }
    }

    /// WRITE size of the data paths: within the server's limits and `cap`.
    pub fn write_size(&self, cap: u32) -> u32 {
        match &self.proto {
            Proto::V3(c) => c.write_size(cap),
            Proto::V41(m) => m.write_size(cap),
        }
    }

    /// The connections over every path, shared by metadata and data calls.
    pub fn router(&self) -> &Arc<Router> {
        &self.router
    }

    pub fn paths(&self) -> &crate::table::Table<PathState> {
        self.router.paths()
    }

    pub fn channels(&self) -> &crate::table::Table<Channel> {
        self.router.channels()
    }

    pub fn procs(&self) -> &ProcCounters {
        self.router.procs()
    }

    pub fn nfs_port(&self) -> u16 {
        self.nfs_port
    }

    pub fn mount_port(&self) -> Option<u16> {
        self.mount_port
    }

    /// True when the pool has no threads of its own: its connections move only while a
    /// caller waits in [`Pool::block_on`].
    pub fn runs_on_callers(&self) -> bool {
        self.router.runs_on_callers()
    }

    /// Path events so far, oldest first.
    /// Warnings for the user gathered so far (NFSv4.1: a server that gave no back
    /// channel, a connection that could not be bound to it, a recall that failed).
    pub fn warnings(&self) -> Vec<String> {
        match &self.proto {
            Proto::V41(m) => m.back_channel().warnings(),
            Proto::V3(_) => Vec::new(),
        }
    }

    pub fn events(&self) -> Vec<PathEvent> {
        self.router.events()
    }

    /// A data path with `depth` slots on the pool's connections, with READs and WRITEs
    /// of at most `max_transfer` bytes (within the server's limits). NFSv4.1: it leases
    /// up to `depth` session slots, from a new session if the others have too few.
    pub fn data_path(&self, depth: u32, max_transfer: u32) -> Result<DataPath, NfsError> {
        let (rsize, wsize) = (self.read_size(max_transfer), self.write_size(max_transfer));
        let router = self.router.clone();
        match &self.proto {
            Proto::V3(_) => Ok(DataPath::new(router, depth, rsize, wsize, self.retry)),
            Proto::V41(m) => {
                let ch = router.pick(crate::router::Route::META, None);
                let conn = router.channels()[ch].conn.clone();
                let lease = self.rt.block_on(m.lease(depth, conn))?;
                if let Some(l) = m.layouts() {
                    // Slots on every known data server for this data path.
                    self.rt.block_on(l.reserve_slots(depth));
                }
                let path = DataPath::new_v41(router, lease, depth, rsize, wsize, self.retry)
                    .with_recovery(m.state().clone());
                Ok(match m.layouts() {
                    Some(l) => path.with_layouts(l.clone()),
                    None => path,
                })
            }
        }
    }
}

impl Pool {
    /// Ends what the pool holds on the server once its work is done: NFSv3 unmounts
    /// (UMNT), NFSv4.1 returns pNFS layouts and destroys its sessions and client id.
    /// An error here leaves nothing undone on the client's side.
    pub fn close(&self) -> Result<(), NfsError> {
        self.rt.block_on(async {
            match &self.proto {
                Proto::V3(c) => c.unmount().await,
                Proto::V41(m) => {
                    if let Some(l) = m.layouts() {
                        let _ = tokio::time::timeout(RELEASE_WAIT, l.release()).await;
                    }
                    m.destroy(&self.router).await
                }
            }
        })
    }
}

impl Drop for Pool {
    /// pNFS: layouts are returned and their opens closed, within a bound.
    fn drop(&mut self) {
        // Not from inside a runtime, where blocking on this one is not allowed.
        if tokio::runtime::Handle::try_current().is_ok() {
            return;
        }
        if let Some(l) = self.v41().and_then(|m| m.layouts()).cloned() {
            let _ = self
                .rt
                .block_on(async { tokio::time::timeout(RELEASE_WAIT, l.release()).await });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that accepts the connection and never answers: the mount gives up after
    /// `mnt_timeout`, not after the connection's much longer retry deadline.
    #[test]
    fn mount_gives_up_after_mnt_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = NfsUrl::parse(&format!(
            "nfs://127.0.0.1/export?version=3&mountport={port}&nfsport={port}"
        ))
        .unwrap();
        let options = PoolOptions {
            conns_per_path: 1,
            workers: 1,
            client: ClientOptions::default(),
            mount_timeout: Some(Duration::from_millis(300)),
        };
        let t0 = std::time::Instant::now();
        let Err(err) = Pool::open(&url, Vec::new(), options) else {
            panic!("a silent server was mounted");
        };
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        assert_eq!(
            err.to_string(),
            "mount of /export on 127.0.0.1: no answer within mnt_timeout (0.3 s)"
        );
        drop(listener);
    }
}
