//! A pool of NFS connections over one or more paths, shared by every user
//! thread of a run (one pool per run).
//!
//! - One MOUNT, over the first path; the handles it yields are valid on
//!   every path because all paths reach the same storage.
//! - `conns` connections on each path, each its own task owning
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
use crate::client::Nfs3Client;
use crate::client_config::{ClientConfig, ClientOptions};
pub use crate::client_config::{LAYOUT_REFRESH_S, PATH_TIMEOUT};
use crate::datapath::DataPath;
use crate::error::{call_error, NfsError};
use crate::fs::Handle;
use crate::path::{PathEvent, PathSpec, PathState};
use crate::proto::nfs4::Stateid;
use crate::router::Router;
pub use crate::router::{Channel, ProcCounters};
use crate::url::{NfsUrl, NfsVersion};
pub use crate::v41::pnfs::LayoutEvent;
use crate::v41::V41Mount;
use crate::version::{MountArgs, SetUp, Version};

/// Default NFS port when the URL gives none and no portmapper is asked.
const NFS_PORT: u16 = 2049;
/// With several paths: how long one call may wait in all (on a path that
/// is slow but answering) before it fails and moves.
const PATH_CALL_DEADLINE: Duration = Duration::from_secs(60);

/// A data file as the data paths need it ([`Pool::data_file`]): its handle, and the
/// state of the pool's open of it (none over NFSv3, or where the server refused it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataFile {
    pub handle: Handle,
    pub stateid: Option<Stateid>,
}

/// Connections to one server over its paths, plus the mounted export.
pub struct Pool {
    rt: tokio::runtime::Runtime,
    /// The mounted version's table.
    mounted: Box<dyn Version>,
    router: Arc<Router>,
    nfs_port: u16,
    mount_port: Option<u16>,
    retry: crate::retry::Backoff,
    sec: dbio_rpc::Flavor,
}

/// The table of the URL's version: the one place a pool asks which version it has.
fn table(version: NfsVersion) -> &'static dyn SetUp {
    match version {
        NfsVersion::V3 => &crate::v3::V3,
        NfsVersion::V41 | NfsVersion::Pnfs => &crate::v41::table::V41,
    }
}

/// Data connections of a pool: the options every one gets, and whether there are
/// several paths.
fn data_config(config: &ClientConfig, multipath: bool) -> ConnConfig {
    let mut cfg = config.client.conn.clone();
    if multipath {
        // Fail over quickly instead of waiting on a dead path.
        let timeout = config.timeo;
        cfg.fail_fast = true;
        cfg.timeout = timeout;
        cfg.connect_timeout = timeout;
        cfg.retries =
            (PATH_CALL_DEADLINE.as_millis() / timeout.as_millis().max(1)).clamp(1, 1000) as u32;
    }
    cfg
}

/// The data connections: `conns` on every path, to `port`. With several paths one
/// that cannot be reached starts down (returned with why) and is probed.
async fn connect_channels(
    paths: &[PathSpec],
    port: u16,
    cfg: &ConnConfig,
    config: &ClientConfig,
) -> Result<(Vec<(usize, Connection)>, Vec<(usize, String)>), NfsError> {
    let multipath = paths.len() > 1;
    let mut down_at_open = Vec::new();
    let mut channels = Vec::new();
    // Callers run every data connection on one thread at a time: a wake-up for one
    // reads the others too.
    let conns = paths.len() * config.conns.max(1) as usize;
    let siblings = (config.workers == 0 && conns > 1).then(|| Arc::new(Siblings::default()));
    for (i, p) in paths.iter().enumerate() {
        for _ in 0..config.conns.max(1) {
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

/// What [`set_up`] gives: the mounted version's table, the path inside what it
/// mounted, the router and the server's NFS port.
pub(crate) type SetUpDone = (Box<dyn Version>, String, Arc<Router>, u16);

/// The set-up of a client by its version's table: the NFS port, `conns` connections
/// on every path (one that cannot be reached starts down when there are several),
/// the router over them, then the version's mount. The connections run on the
/// runtime this is awaited in.
pub(crate) async fn set_up(config: &ClientConfig) -> Result<SetUpDone, NfsError> {
    let url = &config.url;
    let cred = config.client.credential()?;
    let setup = table(url.version);
    let (prog, vers, procs) = setup.program();
    let addr = crate::resolve::resolve(&url.host, NFS_PORT).await?;
    let first = PathSpec {
        local: config.local,
        server: addr.ip(),
    };
    let paths: Vec<PathSpec> = std::iter::once(first)
        .chain(config.paths.iter().cloned())
        .collect();
    let data_cfg = data_config(config, paths.len() > 1);
    let port = setup.port(config, &paths, &data_cfg).await?;
    let (channels, down) = connect_channels(&paths, port, &data_cfg, config).await?;
    // Metadata and data share the connections: a call that meets a dead path
    // moves to the next one, whichever kind it is.
    let router = Router::new(
        prog,
        vers,
        cred.clone(),
        paths.iter().cloned().map(PathState::new).collect(),
        channels,
        &procs,
    )
    .with_runs_on_callers(config.workers == 0);
    let router = Arc::new(router);
    for (path, reason) in &down {
        router.health().failed(*path, reason, false);
    }
    let up = router
        .channels()
        .iter()
        .filter(|c| !down.iter().any(|(p, _)| *p == c.path))
        .map(|c| c.conn.clone())
        .collect();
    let (mounted, rest) = setup
        .mount(MountArgs {
            config,
            router: &router,
            paths: &paths,
            up,
            cred,
            conn: &data_cfg,
        })
        .await?;
    Ok((mounted, rest, router, port))
}

impl Pool {
    /// Opens the export of the configuration's URL: first `conns` connections on
    /// every path (the URL's host, then the configuration's further `paths`; with
    /// several, one that cannot be reached starts down and is probed), then NFSv3
    /// mounts over the first path that answers, NFSv4.1 sets up a session and looks
    /// the path up from the server's root. Returns the pool and the path inside the
    /// export (for NFSv4.1, the whole URL path).
    pub fn open(config: &ClientConfig) -> Result<(Pool, String), NfsError> {
        let url = &config.url;
        let rt = if config.workers == 0 {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        } else {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(config.workers)
                .thread_name("dbio-nfs")
                .enable_all()
                .build()
        }
        .map_err(|e| NfsError::Invalid {
            path: "NFS runtime".into(),
            reason: e.to_string(),
        })?;
        let (mounted, rest, router, nfs_port) = rt.block_on(set_up(config))?;
        if router.health().paths.len() > 1 || mounted.layouts().is_some() {
            // Data servers are added as paths of their own later: probed alike.
            rt.spawn(crate::failover::probe(Arc::downgrade(&router)));
        }
        Ok((
            Pool {
                rt,
                mounted,
                router,
                nfs_port,
                mount_port: url.mount_port,
                retry: config.client.retry,
                sec: config.sec,
            },
            rest,
        ))
    }

    /// Runs an async client call from a plain thread (metadata: LOOKUP,
    /// CREATE, the data-set manifest). Not for use inside the runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// NFSv4.1: the sessions and the metadata client.
    pub fn v41(&self) -> Option<&V41Mount> {
        self.mounted.v41()
    }

    /// The file API over the pool's metadata client (any version).
    pub fn fs(&self) -> crate::fs::Fs {
        self.mounted.fs()
    }

    /// The protocol version, as in URLs.
    pub fn version(&self) -> NfsVersion {
        self.mounted.version()
    }

    /// The largest READ and WRITE the server states: NFSv3's rtmax and wtmax, or what
    /// one NFSv4.1 COMPOUND may carry as the session granted it.
    pub fn server_limits(&self) -> (u32, u32) {
        self.mounted.server_limits()
    }

    /// Sessions and their slots (granted, in use); none without sessions (NFSv3).
    pub fn sessions(&self) -> Vec<(u32, u32)> {
        self.mounted.sessions()
    }

    /// The export mounted; None where paths start at the server's root (NFSv4.1).
    pub fn export(&self) -> Option<&str> {
        self.mounted.export()
    }

    /// pNFS: the layouts of the pool's files (the data files' are fetched by
    /// [`Pool::data_file`]; data paths follow them).
    pub fn layouts(&self) -> Option<&Arc<crate::v41::pnfs::Layouts>> {
        self.mounted.layouts()
    }

    /// Data file `rel` (relative to the root of [`Pool::fs`], of handle `handle`) for the
    /// data paths: opened once for the pool for reading and writing (NFSv4.1: by handle,
    /// else by name in its directory), so that its I/O carries the open's state, and
    /// with pNFS its layout fetched, so that its data servers are known before the
    /// first I/O. A server that refuses the open leaves the file's I/O anonymous, with
    /// no layout and a warning ([`Pool::warnings`]); only a failing connection is an
    /// error. The opens are closed when the pool is closed or dropped, after the writes
    /// through data servers are committed.
    pub fn data_file(&self, handle: Handle, rel: &str) -> Result<DataFile, NfsError> {
        let stateid = self.rt.block_on(self.mounted.data_file(handle, rel))?;
        Ok(DataFile { handle, stateid })
    }

    /// Gives back the open of data file `rel`, if the pool has one (the file is being
    /// removed or replaced).
    pub fn forget_data_file(&self, rel: &str) {
        self.rt.block_on(self.mounted.forget_data_file(rel))
    }

    /// pNFS data servers: address, I/Os, bytes (over every file); none without pNFS.
    pub fn data_servers(&self) -> Vec<(String, u64, u64)> {
        self.layouts().map(|l| l.servers()).unwrap_or_default()
    }

    /// pNFS, per file and server: I/Os, bytes, first and last I/O (seconds since the
    /// pool opened).
    pub fn file_servers(&self) -> Vec<(String, String, u64, u64, f64, f64)> {
        self.layouts().map(|l| l.file_servers()).unwrap_or_default()
    }

    /// pNFS: the changes of the files' routes so far, oldest first.
    pub fn layout_events(&self) -> Vec<LayoutEvent> {
        self.layouts().map(|l| l.events()).unwrap_or_default()
    }

    /// READ size of the data paths: within the server's limits and `cap`.
    pub fn read_size(&self, cap: u32) -> u32 {
        self.mounted.read_size(cap)
    }

    /// WRITE size of the data paths: within the server's limits and `cap`.
    pub fn write_size(&self, cap: u32) -> u32 {
        self.mounted.write_size(cap)
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

    /// How the NFS calls are authenticated (`sec=`).
    pub fn sec(&self) -> dbio_rpc::Flavor {
        self.sec
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
        self.mounted.warnings()
    }

    pub fn events(&self) -> Vec<PathEvent> {
        self.router.events()
    }

    /// A data path with `depth` slots on the pool's connections, with READs and WRITEs
    /// of at most `max_transfer` bytes (within the server's limits). NFSv4.1: it leases
    /// up to `depth` session slots, from a new session if the others have too few.
    pub fn data_path(&self, depth: u32, max_transfer: u32) -> Result<DataPath, NfsError> {
        let sizes = (self.read_size(max_transfer), self.write_size(max_transfer));
        // The data path's wire is the version's own (`datapath/v3.rs`, `v41.rs`).
        self.rt.block_on(
            self.mounted
                .data_path(&self.router, depth, sizes, self.retry),
        )
    }
}

impl Pool {
    /// Ends what the pool holds on the server once its work is done: NFSv3 unmounts
    /// (UMNT), NFSv4.1 returns pNFS layouts and destroys its sessions and client id.
    /// An error here leaves nothing undone on the client's side.
    pub fn close(&self) -> Result<(), NfsError> {
        self.rt.block_on(self.mounted.close(&self.router))
    }
}

impl Drop for Pool {
    /// The data files' opens are closed (pNFS: the writes through data servers are
    /// committed first, while the opens and layouts are still held), then the layouts
    /// are returned, each within its bound.
    fn drop(&mut self) {
        // Not from inside a runtime, where blocking on this one is not allowed.
        if tokio::runtime::Handle::try_current().is_ok() {
            return;
        }
        self.rt.block_on(self.mounted.release());
    }
}

// NFSv3's stand-alone client is set up as a pool is; it lives here, above the client,
// so that the client's file imports nothing of the pool.
impl Nfs3Client {
    /// Mounts the export containing the URL's path as a pool does, by NFSv3's table
    /// (portmapper lookups for ports the URL does not give, the URL's connections, its
    /// `mnt_timeout`), its connections running on the caller's runtime; reads FSINFO.
    /// Returns the client and the path inside the export.
    pub async fn mount(
        url: &NfsUrl,
        options: ClientOptions,
    ) -> Result<(Nfs3Client, String), NfsError> {
        let not_v3 = || NfsError::Invalid {
            path: url.path.clone(),
            reason: "not with NFSv4.1 yet (this command speaks NFSv3: use version=3)".into(),
        };
        if url.version != NfsVersion::V3 {
            return Err(not_v3());
        }
        let config = ClientConfig {
            client: options,
            ..ClientConfig::new(url.clone())
        };
        let (mounted, rest, _, _) = set_up(&config).await?;
        let client = mounted.nfs3().ok_or_else(not_v3)?;
        // The table's reference gone, the client is moved out rather than cloned.
        drop(mounted);
        let client = Arc::unwrap_or_clone(client);
        Ok((client, rest))
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
        let url = crate::NfsUrl::parse(&format!(
            "nfs://127.0.0.1/export?version=3&mountport={port}&nfsport={port}"
        ))
        .unwrap();
        let config = ClientConfig {
            conns: 1,
            workers: 1,
            mnt_timeout: Some(Duration::from_millis(300)),
            ..ClientConfig::new(url)
        };
        let t0 = std::time::Instant::now();
        let Err(err) = Pool::open(&config) else {
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
