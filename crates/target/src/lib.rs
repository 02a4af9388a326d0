//! dbio-target: the storage a command works on.
//!
//! Every command that touches a data set goes through here: [`resolve`]
//! says what a `--target` names (a local directory, an `nfs://` URL, a path
//! under an oranfstab mount point); [`Target::open`] opens it (mounting an
//! export and opening the run's connection pool); [`Target::prepare`]
//! creates or reuses the data set; engines are then opened through the
//! data set (its `Backend` for NFS); [`Target::fill_views`] adds what the
//! storage layer saw (the dNFS views) to a run's result. The commands never
//! ask which kind of target they hold.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dbio_engine::EngineKind;
use dbio_nfs_engine::{NfsTarget, TargetOptions};
use dbio_stats::RunResult;
use dbio_workload::{Dataset, DatasetError, DatasetSpec, PrepareOptions};

pub mod resolve;

pub use resolve::{is_nfs_url, resolve, NfsPlan, Resolved};

/// Connections per path unless the user says otherwise: against
/// nfs-ganesha here 4 gave about a fifth more IOPS than 1 (BENCHMARKS.md).
pub const DEFAULT_CONNS: u32 = 4;

/// Errors resolving or opening a target; each names the target or file.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("--target: not UTF-8")]
    NotUtf8,
    #[error(transparent)]
    Config(#[from] dbio_nfs::config::ConfigError),
    #[error("--target {}: no mount point of {} covers it", target.display(), file.display())]
    NotCovered { target: PathBuf, file: PathBuf },
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Mount(#[from] dbio_nfs_engine::TargetError),
    #[error("--engine nfs: needs an nfs:// target or a path under an oranfstab mount point")]
    NfsEngineLocal,
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}

/// How to reach NFS targets (ignored for local ones).
#[derive(Clone, Debug)]
pub struct NfsOptions {
    /// Connections per network path; a `conns=N` in the URL wins.
    pub conns: u32,
    /// Largest READ or WRITE per RPC (rsize/wsize); None: 1 MiB.
    pub rwsize: Option<u64>,
    /// The oranfstab to use; None: ./oranfstab, then /etc/oranfstab.
    pub oranfstab: Option<PathBuf>,
    /// Replies a connection may gather per wake-up.
    pub reply_batch: usize,
}

impl Default for NfsOptions {
    fn default() -> Self {
        NfsOptions {
            conns: DEFAULT_CONNS,
            rwsize: None,
            oranfstab: None,
            reply_batch: TargetOptions::default().reply_batch,
        }
    }
}

/// An opened target.
#[derive(Debug)]
pub enum Target {
    /// A directory of the local file systems (or a kernel mount).
    Local(PathBuf),
    /// An export reached through dbio's own NFS client.
    Nfs {
        /// The target as the user named it.
        name: PathBuf,
        nfs: Arc<NfsTarget>,
    },
}

/// Progress of creating a data set: place, bytes done, bytes in all.
pub type PrepareProgress<'a> = &'a mut dyn FnMut(&str, u64, u64);

impl Target {
    /// Resolves `target` and opens it: an NFS export is mounted and its
    /// connection pool opened (one per run, shared by every user).
    pub fn open(target: &Path, opts: &NfsOptions) -> Result<Target, TargetError> {
        match resolve(target, opts.oranfstab.as_deref())? {
            Resolved::Local(dir) => Ok(Target::Local(dir)),
            Resolved::Nfs(plan) => {
                let topts = TargetOptions {
                    conns: opts.conns,
                    // No connection threads: each user runs the connections while it waits
                    // for its replies, so a reply reaches its engine without a hand-over
                    // between threads.
                    workers: 0,
                    paths: plan.paths,
                    max_transfer: opts.rwsize.map_or(dbio_nfs_engine::MAX_TRANSFER, |s| {
                        s.min(u64::from(u32::MAX)) as u32
                    }),
                    server_name: plan.server_name,
                    reply_batch: opts.reply_batch,
                    dontroute: plan.dontroute,
                    mount_timeout: plan.mount_timeout,
                };
                Ok(Target::Nfs {
                    name: target.to_path_buf(),
                    nfs: NfsTarget::open(&plan.url, &topts)?,
                })
            }
        }
    }

    /// The target as the user named it.
    pub fn name(&self) -> &Path {
        match self {
            Target::Local(dir) => dir,
            Target::Nfs { name, .. } => name,
        }
    }

    /// The NFS target, if this is one.
    pub fn nfs(&self) -> Option<&Arc<NfsTarget>> {
        match self {
            Target::Local(_) => None,
            Target::Nfs { nfs, .. } => Some(nfs),
        }
    }

    /// The engine that runs on this target: nfs for an NFS target, else
    /// `requested`, which may name nfs only for an NFS target.
    pub fn engine(&self, requested: EngineKind) -> Result<EngineKind, TargetError> {
        match self {
            Target::Nfs { .. } => Ok(EngineKind::Nfs),
            Target::Local(_) if requested == EngineKind::Nfs => Err(TargetError::NfsEngineLocal),
            Target::Local(_) => Ok(requested),
        }
    }

    /// Reuses the data set in the target when it matches `spec`, or creates
    /// it, writing its content with `engine` (the null engine needs no
    /// files). Files dbio did not create are never overwritten unless
    /// `force_overwrite`. A set `stop` ends creation with
    /// [`DatasetError::Interrupted`].
    pub fn prepare(
        &self,
        spec: &DatasetSpec,
        engine: EngineKind,
        direct: bool,
        force_overwrite: bool,
        stop: &AtomicBool,
        progress: PrepareProgress,
    ) -> Result<Dataset, TargetError> {
        match self {
            Target::Nfs { nfs, .. } => {
                let place = nfs.display_path(&nfs.dir);
                Ok(dbio_nfs_engine::dataset::prepare(
                    nfs,
                    spec,
                    force_overwrite,
                    stop,
                    &mut |done, total| progress(&place, done, total),
                )?)
            }
            Target::Local(dir) if engine == EngineKind::Null => Ok(Dataset::planned(dir, spec)),
            Target::Local(dir) => {
                let opts = PrepareOptions {
                    engine,
                    direct,
                    force_overwrite,
                };
                let place = dir.display().to_string();
                Ok(dbio_workload::dataset::prepare(
                    dir,
                    spec,
                    &opts,
                    stop,
                    &mut |done, total| progress(&place, done, total),
                )?)
            }
        }
    }

    /// The data set already in the target, as its manifest lists it,
    /// without creating or changing anything; and whether its creation
    /// finished.
    pub fn open_existing(&self) -> Result<(Dataset, bool), TargetError> {
        Ok(match self {
            Target::Local(dir) => dbio_workload::dataset::open_existing(dir)?,
            Target::Nfs { nfs, .. } => dbio_nfs_engine::dataset::open_existing(nfs)?,
        })
    }

    /// Adds what the storage layer saw to a run's result (the dNFS views).
    pub fn fill_views(&self, result: &mut RunResult) {
        if let Target::Nfs { nfs, .. } = self {
            dbio_nfs_engine::views::fill(result, nfs);
        }
    }

    /// The live views as text (dNFS channels, calls, events), for a display
    /// under the progress line; None when the target has none.
    pub fn live_views(&self) -> Option<String> {
        self.nfs().map(|nfs| dbio_nfs_engine::views::live_text(nfs))
    }
}
