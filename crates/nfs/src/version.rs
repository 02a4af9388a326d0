//! Each version's table, as the Linux client's `nfs_subversion` and `nfs_rpc_ops`:
//! how a pool sets the version up over its router ([`SetUp`]: what the router needs
//! before it exists, then the mount over it), and what the pool asks of the version
//! once mounted ([`Version`]: the file API, transfer sizes, data paths, data files, the
//! end). NFSv3's is `v3.rs`, NFSv4.1's (and pNFS's) `v41/table.rs`; `pool.rs` picks the
//! table from the URL's version, once, and asks nothing else of which version it has.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use dbio_rpc::conn::{ConnConfig, Connection};
use dbio_rpc::Credential;

use crate::client::Nfs3Client;
use crate::client_config::ClientConfig;
use crate::datapath::DataPath;
use crate::error::NfsError;
use crate::fs::{Fs, Handle};
use crate::path::PathSpec;
use crate::proto::nfs4::Stateid;
use crate::retry::Backoff;
use crate::router::Router;
use crate::url::{NfsUrl, NfsVersion};
use crate::v41::pnfs::Layouts;
use crate::v41::V41Mount;

/// A future of a version's table (boxed: the tables are objects).
pub type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// What a version's set-up is given: the pool's router and the options of its
/// connections.
pub struct MountArgs<'a> {
    /// The client's configuration (its URL, identity, mount bound, ...).
    pub config: &'a ClientConfig,
    pub router: &'a Arc<Router>,
    /// The paths to the server, in the URL's (or oranfstab's) order.
    pub paths: &'a [PathSpec],
    /// The connections of paths that are up, in path order.
    pub up: Vec<Connection>,
    pub cred: Credential,
    /// The options every connection of the pool got.
    pub conn: &'a ConnConfig,
}

/// How a pool sets a version up.
pub trait SetUp: Sync {
    /// The RPC program and version of the router's calls, and the procedure names it
    /// counts.
    fn program(&self) -> (u32, u32, Vec<&'static str>);

    /// The server's NFS port, before any connection to it.
    fn port<'a>(
        &'a self,
        config: &'a ClientConfig,
        paths: &'a [PathSpec],
        conn: &'a ConnConfig,
    ) -> Boxed<'a, Result<u16, NfsError>>;

    /// Mounts over the router: the version's table and the path inside what it
    /// mounted (the export for NFSv3, the server's root for NFSv4.1).
    fn mount<'a>(&'a self, args: MountArgs<'a>) -> Boxed<'a, Result<Mounted, NfsError>>;
}

/// A mounted version, with the path inside it.
pub type Mounted = (Box<dyn Version>, String);

/// What a pool asks of a mounted version.
pub trait Version: Send + Sync {
    /// The protocol version, as in URLs.
    fn version(&self) -> NfsVersion;
    /// The file API over the version's metadata client.
    fn fs(&self) -> Fs;
    /// The largest READ and WRITE the server states.
    fn server_limits(&self) -> (u32, u32);
    /// READ size of the data paths: within the server's limits and `cap`.
    fn read_size(&self, cap: u32) -> u32;
    /// WRITE size of the data paths: within the server's limits and `cap`.
    fn write_size(&self, cap: u32) -> u32;
    /// The export mounted; none where paths start at the server's root.
    fn export(&self) -> Option<&str> {
        None
    }
    /// Sessions and their slots (granted, in use).
    fn sessions(&self) -> Vec<(u32, u32)> {
        Vec::new()
    }
    /// pNFS: the layouts of the pool's files.
    fn layouts(&self) -> Option<&Arc<Layouts>> {
        None
    }
    /// Warnings for the user gathered so far.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// The stateid the I/O of data file `fh` (at `rel`, from the root of [`Version::fs`])
    /// carries: the pool's open of it, made once, with pNFS its layout fetched; `None`
    /// where the version has no opens or the server refused one (a warning).
    fn data_file<'a>(
        &'a self,
        _fh: Handle,
        _rel: &'a str,
    ) -> Boxed<'a, Result<Option<Stateid>, NfsError>> {
        Box::pin(std::future::ready(Ok(None)))
    }
    /// Gives back the pool's open of data file `rel`, if it has one.
    fn forget_data_file<'a>(&'a self, _rel: &'a str) -> Boxed<'a, ()> {
        Box::pin(std::future::ready(()))
    }
    /// What a dropped pool gives back: the data files (pNFS writes committed, then the
    /// opens closed) and the layouts, each bounded.
    fn release(&self) -> Boxed<'_, ()> {
        Box::pin(std::future::ready(()))
    }
    /// A data path with `depth` slots on `router`, READs and WRITEs of at most `sizes`,
    /// re-sending after `retry`, speaking the version's wire.
    fn data_path<'a>(
        &'a self,
        router: &'a Arc<Router>,
        depth: u32,
        sizes: (u32, u32),
        retry: Backoff,
    ) -> Boxed<'a, Result<DataPath, NfsError>>;
    /// Ends what the version holds on the server, over `router`.
    fn close<'a>(&'a self, router: &'a Router) -> Boxed<'a, Result<(), NfsError>>;
    /// NFSv4.1: the mount (sessions, back channel, metadata client), for callers that
    /// need more than the table.
    fn v41(&self) -> Option<&V41Mount> {
        None
    }
    /// NFSv3: the mounted export's client, for callers that speak NFSv3 procedures.
    fn nfs3(&self) -> Option<Arc<Nfs3Client>> {
        None
    }
}

/// The first of `paths` on which `attempt` succeeds, each attempt bounded by `limit`;
/// else the first failure.
pub async fn first_answering<'a, T, F>(
    url: &NfsUrl,
    paths: &'a [PathSpec],
    limit: Option<Duration>,
    attempt: impl Fn(&'a PathSpec) -> F,
) -> Result<T, NfsError>
where
    F: Future<Output = Result<T, NfsError>> + 'a,
{
    let mut first_err = None;
    for p in paths {
        let done = match limit {
            None => attempt(p).await,
            Some(limit) => tokio::time::timeout(limit, attempt(p))
                .await
                .unwrap_or_else(|_| {
                    Err(NfsError::Invalid {
                        path: format!("mount of {} on {}", url.path, p.label()),
                        reason: format!("no answer within mnt_timeout ({} s)", limit.as_secs_f64()),
                    })
                }),
        };
        match done {
            Ok(v) => return Ok(v),
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
