//! NFSv3's table for a pool (see `version.rs`): the NFS port (the URL's or the
//! portmapper's) before the router exists, then MOUNT over the first path that
//! answers and FSINFO through the router; afterwards the mounted export's client.

use std::sync::Arc;

use dbio_rpc::conn::ConnConfig;

use crate::client::{nfs3_proc_names, nfs_port, Nfs3Client};
use crate::client_config::ClientConfig;
use crate::datapath::v3::Handles;
use crate::datapath::DataPath;
use crate::error::NfsError;
use crate::fs::Fs;
use crate::path::PathSpec;
use crate::proto::nfs3;
use crate::retry::Backoff;
use crate::router::Router;
use crate::url::NfsVersion;
use crate::version::{first_answering, Boxed, MountArgs, Mounted, SetUp, Version};

/// NFSv3's set-up.
pub struct V3;

impl SetUp for V3 {
    fn program(&self) -> (u32, u32, Vec<&'static str>) {
        (nfs3::PROGRAM, nfs3::VERSION, nfs3_proc_names())
    }

    fn port<'a>(
        &'a self,
        config: &'a ClientConfig,
        paths: &'a [PathSpec],
        conn: &'a ConnConfig,
    ) -> Boxed<'a, Result<u16, NfsError>> {
        let url = &config.url;
        Box::pin(first_answering(url, paths, config.mnt_timeout, move |p| {
            nfs_port(url, p, conn)
        }))
    }

    fn mount<'a>(&'a self, a: MountArgs<'a>) -> Boxed<'a, Result<Mounted, NfsError>> {
        Box::pin(async move {
            let mut options = a.config.client.clone();
            options.conn = a.conn.clone();
            let url = &a.config.url;
            let (client, rest) = first_answering(url, a.paths, a.config.mnt_timeout, |p| {
                Nfs3Client::mount_on(a.router.clone(), url, p, options.clone())
            })
            .await?;
            Ok((Box::new(Mount3(Arc::new(client))) as Box<dyn Version>, rest))
        })
    }
}

/// A mounted NFSv3 export.
struct Mount3(Arc<Nfs3Client>);

impl Version for Mount3 {
    fn version(&self) -> NfsVersion {
        NfsVersion::V3
    }
    fn fs(&self) -> Fs {
        Fs::v3(self.0.clone())
    }
    fn server_limits(&self) -> (u32, u32) {
        (self.0.fsinfo().rtmax, self.0.fsinfo().wtmax)
    }
    fn read_size(&self, cap: u32) -> u32 {
        self.0.read_size(cap)
    }
    fn write_size(&self, cap: u32) -> u32 {
        self.0.write_size(cap)
    }
    fn export(&self) -> Option<&str> {
        Some(self.0.export())
    }
    fn close<'a>(&'a self, _: &'a Router) -> Boxed<'a, Result<(), NfsError>> {
        Box::pin(self.0.unmount())
    }
    fn data_path<'a>(
        &'a self,
        router: &'a Arc<Router>,
        depth: u32,
        (rsize, wsize): (u32, u32),
        retry: Backoff,
    ) -> Boxed<'a, Result<DataPath, NfsError>> {
        let seam = Box::<Handles>::default();
        let path = DataPath::new(router.clone(), seam, depth, (rsize, wsize), retry);
        Box::pin(std::future::ready(Ok(path)))
    }
    fn nfs3(&self) -> Option<Arc<Nfs3Client>> {
        Some(self.0.clone())
    }
}
