//! dbio-storage: the storage a command works on.
//!
//! Every command that touches a data set goes through here: [`resolve`]
//! says what a `--target` names (a local directory, an `nfs://` URL, a path
//! under an oranfstab mount point); [`Target::open`] opens it (mounting an
//! export and opening the run's connection pool); [`Target::prepare`]
//! creates or reuses the data set; engines are then opened through the
//! data set (its `Backend` for NFS); [`Target::fill_views`] adds what the
//! storage layer saw (the dNFS views) to a run's result. The commands never
//! ask which kind of target they hold, and nothing here prints: what the user
//! should be told comes back as [`Target::take_notices`].

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use dbio_engine::EngineKind;
use dbio_nfs::{ClientConfig, Settings};
use dbio_nfs_engine::NfsTarget;
use dbio_stats::RunResult;
use dbio_workload::{Dataset, DatasetError, DatasetSpec, PrepareOptions};

pub mod resolve;

pub use resolve::{is_nfs_url, resolve, NfsPlan, Resolved};

pub use dbio_nfs::client_config::DEFAULT_CONNS;

/// Errors resolving or opening a target; each names the target or file.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("--target: not UTF-8")]
    NotUtf8,
    #[error("--target {url}: {source}")]
    Url {
        url: String,
        #[source]
        source: dbio_nfs::UrlError,
    },
    #[error("--target {}: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
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

/// How to reach NFS targets (ignored for local ones): which oranfstab maps paths to
/// servers, and what the command line says of the client (over the URL's parameters
/// and the oranfstab entry, see [`ClientConfig::layered`]).
#[derive(Clone, Debug, Default)]
pub struct NfsOptions {
    /// The oranfstab to use; None: ./oranfstab, then /etc/oranfstab.
    pub oranfstab: Option<PathBuf>,
    /// The command line's settings of the client.
    pub command_line: Settings,
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
        /// Notices of resolving it not yet taken, and how many of the NFS target's
        /// warnings were.
        notices: Mutex<(Vec<String>, usize)>,
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
                let NfsPlan {
                    url,
                    given,
                    entry,
                    notices,
                } = *plan;
                let config = ClientConfig {
                    // No connection threads: each user runs the connections while it waits
                    // for its replies, so a reply reaches its engine without a hand-over
                    // between threads.
                    workers: 0,
                    ..ClientConfig::layered(url, opts.command_line.clone(), entry)
                };
                Ok(Target::Nfs {
                    name: target.to_path_buf(),
                    nfs: NfsTarget::open(&config, &given)?,
                    notices: Mutex::new((notices, 0)),
                })
            }
        }
    }

    /// The target of one part of `base` (a rank's of a run over several hosts): the
    /// directory `part` inside it, in an `nfs://` URL `.../BASE/PART?...`. A local
    /// `base` is created when missing (its parent must exist), as a single run creates
    /// its target.
    pub fn part(base: &Path, part: &str, oranfstab: Option<&Path>) -> Result<PathBuf, TargetError> {
        if is_nfs_url(base) {
            let url = base.to_str().ok_or(TargetError::NotUtf8)?;
            let (path, query) = url.split_once('?').unwrap_or((url, ""));
            let path = format!("{}/{part}", path.trim_end_matches('/'));
            return Ok(PathBuf::from(if query.is_empty() {
                path
            } else {
                format!("{path}?{query}")
            }));
        }
        if let Resolved::Local(_) = resolve(base, oranfstab)? {
            match std::fs::create_dir(base) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(source) => {
                    return Err(TargetError::CreateDir {
                        path: base.to_path_buf(),
                        source,
                    })
                }
            }
        }
        Ok(base.join(part))
    }

    /// What the user should be told and has not been yet: how the target was read
    /// (an oranfstab's warnings) and what opening its files brought (an NFS open the
    /// server refused). The library prints nothing; the commands show these.
    pub fn take_notices(&self) -> Vec<String> {
        let Target::Nfs { nfs, notices, .. } = self else {
            return Vec::new();
        };
        let Ok(mut n) = notices.lock() else {
            return Vec::new();
        };
        let (pending, shown) = &mut *n;
        let mut out = std::mem::take(pending);
        let warnings = nfs.warnings();
        out.extend(warnings.iter().skip(*shown).cloned());
        *shown = warnings.len();
        out
    }

    /// The local directory whose block devices serve the I/O, for device statistics;
    /// None when the I/O goes over the network.
    pub fn device_dir(&self) -> Option<&Path> {
        match self {
            Target::Local(dir) => Some(dir),
            Target::Nfs { .. } => None,
        }
    }

    /// Whether the target has live views to show under the progress line.
    pub fn has_live_views(&self) -> bool {
        self.nfs().is_some()
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
                let ds = dbio_nfs_engine::dataset::prepare(
                    nfs,
                    spec,
                    force_overwrite,
                    stop,
                    &mut |done, total| progress(&place, done, total),
                )?;
                dbio_nfs_engine::views::mark_ready(nfs);
                Ok(ds)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_is_a_directory_inside_the_base() {
        let url = "nfs://127.0.0.1/export/dbio?version=3&mountport=20048&nfsport=2049";
        assert_eq!(
            Target::part(Path::new(url), "rank-3", None).unwrap(),
            PathBuf::from(
                "nfs://127.0.0.1/export/dbio/rank-3?version=3&mountport=20048&nfsport=2049"
            )
        );
        assert_eq!(
            Target::part(Path::new("nfs://h/export/d/"), "rank-0", None).unwrap(),
            PathBuf::from("nfs://h/export/d/rank-0")
        );
        let dir = tempfile::tempdir().unwrap();
        let tab = dir.path().join("oranfstab");
        std::fs::write(
            &tab,
            "server: f\npath: 10.0.1.2\nexport: /vol mount: /u02\n",
        )
        .unwrap();
        // Under an oranfstab mount point: nothing is made locally.
        assert_eq!(
            Target::part(Path::new("/u02/dbio"), "rank-2", Some(&tab)).unwrap(),
            PathBuf::from("/u02/dbio/rank-2")
        );
        assert!(!Path::new("/u02/dbio").exists());
        // A local base is made (its parent must exist).
        let base = dir.path().join("dbio");
        let other = dir.path().join("oranfstab-elsewhere");
        std::fs::write(
            &other,
            "server: f\npath: 10.0.1.2\nexport: /vol mount: /u09\n",
        )
        .unwrap();
        let err = Target::part(&base, "rank-1", Some(&other)).unwrap_err();
        assert!(err.to_string().contains("no mount point"), "{err}");
        if !Path::new("oranfstab").exists() && !Path::new("/etc/oranfstab").exists() {
            assert_eq!(
                Target::part(&base, "rank-1", None).unwrap(),
                base.join("rank-1")
            );
            assert!(base.is_dir());
            let missing = dir.path().join("no/parent");
            let err = Target::part(&missing, "rank-1", None).unwrap_err();
            assert!(err
                .to_string()
                .starts_with(&format!("--target {}: ", missing.display())));
        }
    }
}
