//! dbio-nfs-engine: dbio's own NFS client as an I/O engine.
//!
//! Joins the NFS client ([`dbio_nfs::pool::Pool`], its [`dbio_nfs::datapath::DataPath`])
//! to the engine interface
//! and the data set: an [`NfsTarget`] is opened once per run from an
//! `nfs://` URL and shared by every user; its [`Backend`] opens one
//! [`engine::NfsEngine`] per user; [`dataset::prepare`] creates or reuses
//! the data set through NFS; [`views`] turns the pool's counters into the
//! dNFS views of the result. A crate of its own so that `dbio-engine` stays
//! free of tokio and the NFS client, and so that it can reach the data-set
//! code (which itself depends on the engine interface).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dbio_engine::{Backend, Engine, EngineConfig, EngineError};
use dbio_nfs::client::ClientOptions;
use dbio_nfs::path::PathSpec;
use dbio_nfs::pool::{Pool, PoolOptions};
use dbio_nfs::proto::nfs3::FileHandle;
use dbio_nfs::proto::nfs4::Fh4;
use dbio_nfs::url::NfsVersion;
use dbio_nfs::{Nfs3Client, NfsError, NfsUrl};

pub mod dataset;
pub mod dataset41;
pub mod engine;
pub mod views;

/// Largest READ or WRITE the engine sends in one RPC by default, even
/// when the server allows more: the workloads' largest I/O.
pub const MAX_TRANSFER: u32 = 1 << 20;

/// Errors opening an NFS target.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("--target {url}: {source}")]
    Url {
        url: String,
        #[source]
        source: dbio_nfs::UrlError,
    },
    #[error("--target {url}: {source}")]
    Nfs {
        url: String,
        #[source]
        source: Box<NfsError>,
    },
}

/// How to reach the server.
#[derive(Clone, Debug)]
pub struct TargetOptions {
    /// Connections per path.
    pub conns: u32,
    /// Threads running the connection tasks; 0: the users run them while they wait.
    pub workers: usize,
    /// Network paths; empty means the URL's host only.
    pub paths: Vec<PathSpec>,
    /// Largest READ/WRITE per RPC (like the rsize/wsize mount options),
    /// further bounded by the server's rtmax/wtmax.
    pub max_transfer: u32,
    /// Server name for the views (an oranfstab `server:`); default: the URL's host.
    pub server_name: Option<String>,
    /// Replies a connection may gather per wake-up (see `ConnConfig::reply_batch`).
    pub reply_batch: usize,
    /// Send only to directly connected networks (oranfstab `dontroute`).
    pub dontroute: bool,
    /// Bound on mounting the export (oranfstab `mnt_timeout`); None: the
    /// connection timeouts alone.
    pub mount_timeout: Option<std::time::Duration>,
}

impl Default for TargetOptions {
    fn default() -> Self {
        TargetOptions {
            conns: 1,
            workers: 0,
            paths: Vec::new(),
            max_transfer: MAX_TRANSFER,
            server_name: None,
            reply_batch: dbio_nfs::DEFAULT_REPLY_BATCH,
            dontroute: false,
            mount_timeout: None,
        }
    }
}

/// An NFS export opened for a run: the connection pool and the data-set
/// directory inside the export. Shared by all users.
pub struct NfsTarget {
    pub pool: Pool,
    /// The URL as given.
    pub url: String,
    /// Server name as given in the URL.
    pub server: String,
    /// Data-set directory, relative to the export root.
    pub dir: String,
    max_transfer: u32,
    /// Every WRITE FILE_SYNC (the URL's `sync=1`).
    sync_writes: bool,
    handles: Mutex<HashMap<String, FileHandle>>,
    handles41: Mutex<HashMap<String, Fh4>>,
}

impl std::fmt::Debug for NfsTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NfsTarget")
            .field("url", &self.url)
            .field("channels", &self.pool.channels().len())
            .finish()
    }
}

impl NfsTarget {
    /// Mounts the export of `url` and opens the pool.
    pub fn open(url: &str, opts: &TargetOptions) -> Result<Arc<NfsTarget>, TargetError> {
        let parsed = NfsUrl::parse(url).map_err(|source| TargetError::Url {
            url: url.to_string(),
            source,
        })?;
        let mut client = ClientOptions::default().with_url(&parsed);
        client.conn.reply_batch = opts.reply_batch.max(1);
        client.conn.dontroute = opts.dontroute;
        let pool_opts = PoolOptions {
            conns_per_path: parsed.conns.unwrap_or(opts.conns).max(1),
            workers: opts.workers,
            mount_timeout: opts.mount_timeout,
            client,
        };
        let (pool, rest) =
            Pool::open(&parsed, opts.paths.clone(), pool_opts).map_err(|source| {
                TargetError::Nfs {
                    url: url.to_string(),
                    source: Box::new(source),
                }
            })?;
        Ok(Arc::new(NfsTarget {
            pool,
            url: url.to_string(),
            server: opts.server_name.clone().unwrap_or(parsed.host.clone()),
            dir: rest.trim_matches('/').to_string(),
            max_transfer: opts.max_transfer.clamp(4096, MAX_TRANSFER),
            sync_writes: parsed.sync,
            handles: Mutex::new(HashMap::new()),
            handles41: Mutex::new(HashMap::new()),
        }))
    }

    /// The NFSv3 client, or an error naming the target for an NFSv4.1 one.
    pub fn v3(&self) -> Result<&Nfs3Client, NfsError> {
        self.pool.v3().ok_or_else(|| NfsError::Invalid {
            path: self.url.clone(),
            reason: "this needs NFSv3 (version=3)".into(),
        })
    }

    /// The NFS version of the target.
    pub fn version(&self) -> NfsVersion {
        self.pool.version()
    }

    /// The NFSv3 file handle of `rel` (relative to the export root), looked up
    /// once and then cached for every user.
    pub fn handle(&self, rel: &str) -> Result<FileHandle, NfsError> {
        if let Some(fh) = self.handles.lock().ok().and_then(|h| h.get(rel).copied()) {
            return Ok(fh);
        }
        let (fh, _) = self.pool.block_on(self.v3()?.lookup_path(rel))?;
        self.remember(rel, fh);
        Ok(fh)
    }

    /// The file handle of `rel` in the target's protocol (cached for every user).
    pub fn handle_bytes(&self, rel: &str) -> Result<Vec<u8>, NfsError> {
        let Some(m) = self.pool.v41() else {
            return Ok(self.handle(rel)?.as_bytes().to_vec());
        };
        if let Some(fh) = self.handles41.lock().ok().and_then(|h| h.get(rel).copied()) {
            return Ok(fh.as_bytes().to_vec());
        }
        let (fh, _) = self
            .pool
            .block_on(m.client().lookup_path(&format!("/{rel}")))?;
        self.remember41(rel, fh);
        Ok(fh.as_bytes().to_vec())
    }

    /// The handle of data file `rel` for the engine; with pNFS its layout is fetched
    /// (once), so that the data servers are known before the first I/O.
    pub fn data_handle(&self, rel: &str) -> Result<Vec<u8>, NfsError> {
        let bytes = self.handle_bytes(rel)?;
        if let (Some(layouts), Some(fh)) =
            (self.pool.v41().and_then(|m| m.layouts()), Fh4::new(&bytes))
        {
            if layouts.route(&fh).is_none() {
                let path = format!("/{}", rel.trim_matches('/'));
                self.pool.block_on(layouts.fetch(fh, &path, "first use"))?;
            }
        }
        Ok(bytes)
    }

    /// Records an NFSv4.1 handle obtained another way (OPEN with create).
    pub fn remember41(&self, rel: &str, fh: Fh4) {
        if let Ok(mut h) = self.handles41.lock() {
            h.insert(rel.to_string(), fh);
        }
    }

    /// Records a handle obtained another way (CREATE).
    pub fn remember(&self, rel: &str, fh: FileHandle) {
        if let Ok(mut h) = self.handles.lock() {
            h.insert(rel.to_string(), fh);
        }
    }

    /// Forgets a handle (the file was removed).
    pub fn forget(&self, rel: &str) {
        if let Ok(mut h) = self.handles.lock() {
            h.remove(rel);
        }
        if let Ok(mut h) = self.handles41.lock() {
            h.remove(rel);
        }
    }

    /// `server:/export/rel`, for messages and the files view.
    pub fn display_path(&self, rel: &str) -> String {
        match self.pool.v3() {
            Some(c) => format!("{}:{}", self.server, c.full_path(rel)),
            None => format!("{}:/{}", self.server, rel.trim_matches('/')),
        }
    }

    /// READ and WRITE sizes: the server's limits (NFSv3 rtmax and wtmax, multiples
    /// of rtmult/wtmult; NFSv4.1 what the session allows), at most 1 MiB. Larger I/Os
    /// are split.
    pub fn transfer_sizes(&self) -> (u32, u32) {
        (
            self.pool.read_size(self.max_transfer),
            self.pool.write_size(self.max_transfer),
        )
    }

    /// Largest READ/WRITE per RPC asked for (before the server's limits).
    pub fn max_transfer(&self) -> u32 {
        self.max_transfer
    }

    /// Every WRITE goes FILE_SYNC, whether or not the workload asks (the URL's `sync=1`).
    pub fn sync_writes(&self) -> bool {
        self.sync_writes
    }

    /// The backend that opens one engine per user on this target.
    pub fn backend(self: &Arc<Self>) -> Arc<dyn Backend> {
        Arc::new(NfsBackend(self.clone()))
    }
}

#[derive(Debug)]
struct NfsBackend(Arc<NfsTarget>);

impl Backend for NfsBackend {
    fn name(&self) -> &'static str {
        "nfs"
    }

    fn open(&self, cfg: &EngineConfig) -> Result<Box<dyn Engine>, EngineError> {
        Ok(Box::new(engine::NfsEngine::open(self.0.clone(), cfg)?))
    }
}
