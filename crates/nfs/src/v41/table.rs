//! NFSv4.1's table for a pool (see `version.rs`), and pNFS's: the URL's port, then a
//! session over the router ([`V41Mount::open`]); afterwards what the pool asks of the
//! mount, its data paths included. Apart from `mount.rs` so that nothing of NFSv4.1
//! below the pool imports the table (and the data path through it): only the pool
//! names it.

use std::sync::Arc;

use crate::client_config::ClientConfig;
use crate::datapath::v41::Files;
use crate::datapath::DataPath;
use crate::error::NfsError;
use crate::fs::Handle;
use crate::proto::nfs4::{Fh4, Stateid};
use crate::retry::Backoff;
use crate::router::{Route, Router};
use crate::url::NfsVersion;
use crate::v41::mount::{V41Mount, RELEASE_WAIT};
use crate::v41::pnfs::Layouts;
use crate::v41::SessionOptions;
use crate::version::{Boxed, MountArgs, Mounted, SetUp, Version};

/// The NFSv4 port, when the URL names none.
const NFS_PORT: u16 = 2049;

/// NFSv4.1's set-up (and pNFS's, `version=pnfs`) for a pool: the URL's port, then a
/// session over the router (see [`V41Mount::open`]).
pub struct V41;

impl SetUp for V41 {
    fn program(&self) -> (u32, u32, Vec<&'static str>) {
        use crate::proto::nfs4;
        (nfs4::PROGRAM, nfs4::VERSION, vec!["COMPOUND"])
    }

    fn port<'a>(
        &'a self,
        config: &'a ClientConfig,
        _: &'a [crate::path::PathSpec],
        _: &'a dbio_rpc::conn::ConnConfig,
    ) -> Boxed<'a, Result<u16, NfsError>> {
        let port = config.url.nfs_port.unwrap_or(NFS_PORT);
        Box::pin(std::future::ready(Ok(port)))
    }

    fn mount<'a>(&'a self, a: MountArgs<'a>) -> Boxed<'a, Result<Mounted, NfsError>> {
        Box::pin(async move {
            let mut sopts = SessionOptions {
                slots: crate::v41::MAX_SLOTS,
                conn: a.conn.clone(),
                backoff: a.config.client.retry,
                ..SessionOptions::default()
            };
            sopts.conn.siblings = None;
            let url = &a.config.url;
            let pnfs = (url.version == NfsVersion::Pnfs)
                .then(|| (a.config.client.clone(), a.config.layout_refresh));
            let mount = V41Mount::open(a.router, a.up, a.cred, sopts, pnfs).await?;
            let rest = url.path.trim_matches('/').to_string();
            Ok((Box::new(mount) as Box<dyn Version>, rest))
        })
    }
}

impl Version for V41Mount {
    fn version(&self) -> NfsVersion {
        match self.layouts {
            Some(_) => NfsVersion::Pnfs,
            None => NfsVersion::V41,
        }
    }
    fn fs(&self) -> crate::fs::Fs {
        crate::fs::Fs::v41(self.client.clone())
    }
    /// What one COMPOUND may carry as the session granted it.
    fn server_limits(&self) -> (u32, u32) {
        let fore = self.client.session().fore_channel();
        (fore.maxresponsesize, fore.maxrequestsize)
    }
    fn read_size(&self, cap: u32) -> u32 {
        V41Mount::read_size(self, cap)
    }
    fn write_size(&self, cap: u32) -> u32 {
        V41Mount::write_size(self, cap)
    }
    fn sessions(&self) -> Vec<(u32, u32)> {
        self.state.sessions()
    }
    fn layouts(&self) -> Option<&Arc<Layouts>> {
        self.layouts.as_ref()
    }
    /// The back channel's, the data files' that could not be opened, and the pNFS
    /// data servers' that could not be reached.
    fn warnings(&self) -> Vec<String> {
        let mut w = self.back.warnings();
        w.extend(self.files.warnings());
        if let Some(l) = &self.layouts {
            w.extend(l.warnings());
        }
        w
    }
    fn data_file<'a>(
        &'a self,
        fh: Handle,
        rel: &'a str,
    ) -> Boxed<'a, Result<Option<Stateid>, NfsError>> {
        Box::pin(async move {
            let Some(fh) = Fh4::new(fh.as_bytes()) else {
                return Err(NfsError::Invalid {
                    path: rel.to_string(),
                    reason: "file handle too long for NFSv4".into(),
                });
            };
            self.files.open(fh, &abs(rel)).await
        })
    }
    fn forget_data_file<'a>(&'a self, rel: &'a str) -> Boxed<'a, ()> {
        Box::pin(async move { self.files.forget(&abs(rel)).await })
    }
    /// The data files closed (pNFS writes committed first, while the opens and layouts
    /// are still held), then the layouts returned (bounded).
    fn release(&self) -> Boxed<'_, ()> {
        Box::pin(async move {
            self.files.close_all().await;
            if let Some(l) = &self.layouts {
                let _ = tokio::time::timeout(RELEASE_WAIT, l.release()).await;
            }
        })
    }
    /// The data files closed (pNFS writes committed first) and the layouts returned
    /// (each bounded), then the sessions and client id destroyed.
    fn close<'a>(&'a self, router: &'a Router) -> Boxed<'a, Result<(), NfsError>> {
        Box::pin(async move {
            self.release().await;
            self.destroy(router).await
        })
    }
    /// A data path of its own slots: leased from the metadata session, or a new one of
    /// the same client (pNFS: on every known data server too), recovering lost state
    /// through the mount's state manager.
    fn data_path<'a>(
        &'a self,
        router: &'a Arc<Router>,
        depth: u32,
        (rsize, wsize): (u32, u32),
        retry: Backoff,
    ) -> Boxed<'a, Result<DataPath, NfsError>> {
        Box::pin(async move {
            let ch = router.pick(Route::META, None);
            let conn = router.channels()[ch].conn.clone();
            let lease = self.lease(depth, conn).await?;
            if let Some(l) = &self.layouts {
                // Slots on every known data server for this data path.
                l.reserve_slots(depth).await;
            }
            let seam = Box::new(Files::new(lease, Some(self.state.clone())));
            let path = DataPath::new(router.clone(), seam, depth, (rsize, wsize), retry);
            Ok(match &self.layouts {
                Some(l) => path.with_layouts(l.clone()),
                None => path,
            })
        })
    }
    fn v41(&self) -> Option<&V41Mount> {
        Some(self)
    }
}

/// A path relative to the server's root, from it.
fn abs(rel: &str) -> String {
    format!("/{}", rel.trim_matches('/'))
}
