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
use dbio_nfs::fs::{Fs, Handle};
pub use dbio_nfs::pool::DataFile;
use dbio_nfs::pool::Pool;
use dbio_nfs::url::NfsVersion;
use dbio_nfs::{ClientConfig, NfsError};

pub mod dataset;
pub mod engine;
pub mod views;

/// The warning of a server restart that put UNSTABLE writes at risk (the path events
/// name the server and count them).
const AT_RISK: &str = "a server restarted (its write verifier changed) before writes it had \
answered UNSTABLE were committed: they may be lost, as dbio keeps no copy to send again \
(the run's events name the server and count them; sync=1 in the URL writes FILE_SYNC)";

/// Largest READ or WRITE the engine sends in one RPC, even when the server allows
/// more: the workloads' largest I/O (also the configuration's default).
pub use dbio_nfs::client_config::MAX_TRANSFER;

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

/// An NFS export opened for a run: the connection pool and the data-set
/// directory inside the export. Shared by all users.
pub struct NfsTarget {
    pub pool: Pool,
    /// The file API over the pool's metadata client.
    fs: Fs,
    /// The URL as given.
    pub url: String,
    /// The server's name: an oranfstab `server:`, else the URL's host.
    pub server: String,
    /// Data-set directory, relative to the root of [`NfsTarget::fs`].
    pub dir: String,
    max_transfer: u32,
    /// Every WRITE FILE_SYNC (the URL's `sync=1`).
    sync_writes: bool,
    /// Handles looked up once for every user, by path relative to the root.
    handles: Mutex<HashMap<String, Handle>>,
    /// What the CLI should tell the user, in the order the pool gave it.
    warnings: Mutex<Vec<String>>,
    /// The call counters when the data set was ready: what came before is set-up
    /// traffic, not the run's.
    pub(crate) ready: Mutex<Option<dbio_stats::NfsStats>>,
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
    /// Mounts the export of `config`'s URL and opens the pool; `given` names the
    /// target in messages (the URL as the user wrote it).
    pub fn open(config: &ClientConfig, given: &str) -> Result<Arc<NfsTarget>, TargetError> {
        let url = given.to_string();
        let (pool, rest) = Pool::open(config).map_err(|source| TargetError::Nfs {
            url: url.clone(),
            source: Box::new(source),
        })?;
        Ok(Arc::new(NfsTarget {
            fs: pool.fs(),
            pool,
            url,
            server: config.server_name.clone(),
            dir: rest.trim_matches('/').to_string(),
            max_transfer: config.max_transfer.clamp(4096, MAX_TRANSFER),
            sync_writes: config.sync,
            handles: Mutex::new(HashMap::new()),
            warnings: Mutex::new(Vec::new()),
            ready: Mutex::new(None),
        }))
    }

    /// The file API of the target (paths relative to its root).
    pub fn fs(&self) -> &Fs {
        &self.fs
    }

    /// The NFS version of the target.
    pub fn version(&self) -> NfsVersion {
        self.pool.version()
    }

    /// The handle of `rel` (relative to the root), looked up once and then cached for
    /// every user.
    pub fn handle(&self, rel: &str) -> Result<Handle, NfsError> {
        if let Some(fh) = self.handles.lock().ok().and_then(|h| h.get(rel).copied()) {
            return Ok(fh);
        }
        let (fh, _) = self.pool.block_on(self.fs.lookup_path(rel))?;
        self.remember(rel, fh);
        Ok(fh)
    }

    /// Records a handle obtained another way (a create, a walk from the root).
    pub fn remember(&self, rel: &str, fh: Handle) {
        if let Ok(mut h) = self.handles.lock() {
            h.insert(rel.to_string(), fh);
        }
    }

    /// Forgets a handle, and gives back the run's open of the file (it is being removed
    /// or replaced).
    pub fn forget(&self, rel: &str) {
        if let Ok(mut h) = self.handles.lock() {
            h.remove(rel);
        }
        self.pool.forget_data_file(rel);
    }

    /// Data file `rel` for the engine: the pool opens it once for the run, so that its
    /// I/O carries the open's state, and with pNFS fetches its layout
    /// ([`Pool::data_file`]).
    pub fn data_file(&self, rel: &str) -> Result<DataFile, NfsError> {
        let handle = self.handle(rel)?;
        self.pool.data_file(handle, rel)
    }

    /// Warnings for the user gathered so far (the library prints nothing), oldest
    /// first: the list only grows.
    pub fn warnings(&self) -> Vec<String> {
        let Ok(mut w) = self.warnings.lock() else {
            return Vec::new();
        };
        // What opening the pool and the data files brought (a server that gave no back
        // channel, an open refused, a pNFS data server that cannot be reached), each once.
        let mut found = self.pool.warnings();
        if self.pool.router().at_risk().writes > 0 {
            found.push(AT_RISK.to_string());
        }
        for p in found {
            if !w.contains(&p) {
                w.push(p);
            }
        }
        w.clone()
    }

    /// `server:/path/rel`, for messages and the files view.
    pub fn display_path(&self, rel: &str) -> String {
        self.fs.display(rel)
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
