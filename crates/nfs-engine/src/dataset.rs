//! The data set on an NFS export: [`NfsDir`] is the data-set directory as a
//! [`Namespace`] over the file API ([`dbio_nfs::fs::Fs`], any NFS version), so the one
//! data-set algorithm of `dbio_workload::prepare` serves NFS too; the content goes
//! through the NFS engine.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bytes::Bytes;
use dbio_engine::{Backend, EngineKind};
use dbio_nfs::fs::{join, Create, FileType, Fs, Handle, Stable};
use dbio_nfs::NfsError;
use dbio_workload::namespace::{Entry, Namespace, MAX_SMALL_FILE};
use dbio_workload::{Dataset, DatasetError, DatasetSpec, PrepareOptions};

use crate::NfsTarget;

/// Owner-only, like the local data set.
const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// Reuses the data set in the target's directory when it matches `spec`,
/// or creates it through NFS. Files dbio did not create are never
/// overwritten unless `force_overwrite`.
pub fn prepare(
    target: &Arc<NfsTarget>,
    spec: &DatasetSpec,
    force_overwrite: bool,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Dataset, DatasetError> {
    let opts = PrepareOptions {
        engine: EngineKind::Nfs,
        direct: true,
        force_overwrite,
    };
    dbio_workload::prepare::prepare(&NfsDir::new(target), spec, &opts, stop, progress)
}

/// Reads the manifest of the data set in the target's directory without
/// creating or changing anything (for `dbio verify`): the data set as
/// listed, and whether its creation finished.
pub fn open_existing(target: &Arc<NfsTarget>) -> Result<(Dataset, bool), DatasetError> {
    dbio_workload::prepare::open_existing(&NfsDir::new(target))
}

/// The data-set directory of an NFS target (`NfsTarget::dir`).
pub struct NfsDir {
    t: Arc<NfsTarget>,
}

/// A small file (a manifest) of `size` bytes at `path`, read by `read` up to the byte
/// count it is given, refused when larger than [`MAX_SMALL_FILE`] (also when it grew
/// while being read).
fn read_capped(
    path: String,
    size: u64,
    read: impl FnOnce(u64) -> Result<Vec<u8>, NfsError>,
) -> Result<Vec<u8>, DatasetError> {
    let too_large = |path, size| DatasetError::TooLarge {
        path,
        size,
        limit: MAX_SMALL_FILE,
    };
    if size > MAX_SMALL_FILE {
        return Err(too_large(path, size));
    }
    // One byte more than the cap tells a file that grew meanwhile.
    let text = read(MAX_SMALL_FILE + 1).map_err(nfs_err("cannot read", path.clone()))?;
    if text.len() as u64 > MAX_SMALL_FILE {
        return Err(too_large(path, text.len() as u64));
    }
    Ok(text)
}

fn nfs_err(what: &'static str, path: String) -> impl FnOnce(NfsError) -> DatasetError {
    move |e| DatasetError::Io {
        what,
        path,
        source: std::io::Error::other(e.to_string()),
    }
}

impl NfsDir {
    pub fn new(target: &Arc<NfsTarget>) -> Self {
        NfsDir { t: target.clone() }
    }

    fn fs(&self) -> &Fs {
        self.t.fs()
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.t.pool.block_on(f)
    }

    /// `name` relative to the root of the file API.
    fn rel(&self, name: &str) -> String {
        join(&self.t.dir, name)
    }

    /// The directory's handle (cached by the target once looked up).
    fn dir_fh(&self) -> Result<Handle, DatasetError> {
        self.t
            .handle(&self.t.dir)
            .map_err(nfs_err("cannot open the data set", self.place()))
    }

    /// `name` in the directory; `None` when it does not exist.
    fn lookup(&self, name: &str) -> Result<Option<(Handle, Entry)>, DatasetError> {
        let dir = self.dir_fh()?;
        let found = self
            .block_on(self.fs().find(&dir, name, &self.rel(name)))
            .map_err(nfs_err("cannot look up", self.path_of(name)))?;
        Ok(found.map(|(fh, a)| {
            let entry = Entry {
                size: a.size,
                is_file: a.ftype == FileType::Regular,
            };
            (fh, entry)
        }))
    }

    /// Up to `size` bytes from the start of a file.
    fn read_upto(&self, fh: Handle, name: &str, size: u64) -> Result<Vec<u8>, NfsError> {
        self.block_on(self.fs().read_small(&fh, size, &self.rel(name)))
    }
}

impl Namespace for NfsDir {
    fn dir(&self) -> PathBuf {
        PathBuf::from(&self.t.dir)
    }

    fn place(&self) -> String {
        self.t.display_path(&self.t.dir)
    }

    fn path_of(&self, name: &str) -> String {
        self.t.display_path(&self.rel(name))
    }

    fn backend(&self) -> Option<Arc<dyn Backend>> {
        Some(self.t.backend())
    }

    /// Creates the directory and its missing parents (owner-only): the root is the
    /// only thing known to exist.
    fn ensure_dir(&self) -> Result<(), DatasetError> {
        let fh = self
            .block_on(self.fs().make_dirs(&self.t.dir, DIR_MODE))
            .map_err(|e| match e {
                // A file where a directory of the path should be.
                NfsError::Invalid { path, reason } if reason == "not a directory" => {
                    DatasetError::NotDir(path)
                }
                e => nfs_err("cannot create the target directory", self.place())(e),
            })?;
        self.t.remember(&self.t.dir, fh);
        Ok(())
    }

    fn open_dir(&self) -> Result<(), DatasetError> {
        let (fh, a) = self
            .block_on(self.fs().lookup_path(&self.t.dir))
            .map_err(nfs_err("cannot open the data set", self.place()))?;
        if !a.is_dir() {
            return Err(DatasetError::NotDir(self.place()));
        }
        self.t.remember(&self.t.dir, fh);
        Ok(())
    }

    fn entry(&self, name: &str) -> Result<Option<Entry>, DatasetError> {
        Ok(self.lookup(name)?.map(|(_, e)| e))
    }

    fn read_small(&self, name: &str) -> Result<Option<Vec<u8>>, DatasetError> {
        let Some((fh, entry)) = self.lookup(name)? else {
            return Ok(None);
        };
        read_capped(self.path_of(name), entry.size, |cap| {
            self.read_upto(fh, name, cap)
        })
        .map(Some)
    }

    /// Written FILE_SYNC to a file aside (dbio's by its name: truncated if a crash
    /// left it), then renamed over `name`.
    fn write_small(&self, name: &str, data: &[u8]) -> Result<(), DatasetError> {
        let dir = self.dir_fh()?;
        let path = self.path_of(name);
        let tmp_name = format!(".{name}.tmp");
        let tmp_rel = self.rel(&tmp_name);
        let fs = self.fs();
        let file = self
            .block_on(fs.create(&dir, &tmp_name, FILE_MODE, Create::Truncate, &tmp_rel))
            .map_err(nfs_err("cannot write", self.path_of(&tmp_name)))?;
        let written =
            self.block_on(fs.write_all(&file, &Bytes::copy_from_slice(data), Stable::FileSync));
        let closed = self.block_on(fs.close(file));
        written.map_err(nfs_err("cannot write", path.clone()))?;
        closed.map_err(nfs_err("cannot write", path.clone()))?;
        self.block_on(fs.rename((&dir, &tmp_name), (&dir, name), &self.rel(name)))
            .map_err(nfs_err("cannot write", path))?;
        self.t.forget(&tmp_rel);
        self.t.forget(&self.rel(name));
        Ok(())
    }

    fn read_head(&self, name: &str, len: usize) -> Result<Vec<u8>, DatasetError> {
        let Some((fh, _)) = self.lookup(name)? else {
            return Err(DatasetError::Io {
                what: "cannot read",
                path: self.path_of(name),
                source: std::io::ErrorKind::NotFound.into(),
            });
        };
        self.read_upto(fh, name, len as u64)
            .map_err(nfs_err("cannot read", self.path_of(name)))
    }

    fn free_bytes(&self) -> Result<Option<u64>, DatasetError> {
        let dir = self.dir_fh()?;
        let space = self
            .block_on(self.fs().space(&dir, &self.t.dir))
            .map_err(nfs_err("cannot read free space", self.place()))?;
        Ok(space.bytes_avail)
    }

    /// Exclusive create, so that a resend (even over another path) finds its own file
    /// and anything else already there is an error; then the size under the open, and
    /// close.
    fn create(&self, name: &str, size: u64) -> Result<(), DatasetError> {
        let dir = self.dir_fh()?;
        let rel = self.rel(name);
        let fs = self.fs();
        let verifier = dbio_workload::dataset::new_id().to_be_bytes();
        let file = self
            .block_on(fs.create(&dir, name, FILE_MODE, Create::Exclusive(verifier), &rel))
            .map_err(nfs_err("cannot create", self.path_of(name)))?;
        let fh = file.handle;
        let sized = self.block_on(fs.set_size(&file, size));
        let closed = self.block_on(fs.close(file));
        sized.map_err(nfs_err("cannot set the size of", self.path_of(name)))?;
        closed.map_err(nfs_err("cannot close", self.path_of(name)))?;
        self.t.remember(&rel, fh);
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), DatasetError> {
        let dir = self.dir_fh()?;
        let rel = self.rel(name);
        self.t.forget(&rel);
        self.block_on(self.fs().remove(&dir, name, false, &rel))
            .map_err(nfs_err("cannot remove", self.path_of(name)))
    }

    /// COMMIT of the whole file: the content went as UNSTABLE writes.
    fn make_durable(&self, name: &str) -> Result<(), DatasetError> {
        let rel = self.rel(name);
        let path = self.path_of(name);
        let fh = self
            .t
            .handle(&rel)
            .map_err(nfs_err("cannot commit", path.clone()))?;
        self.block_on(self.fs().commit(&fh, 0, 0, &rel))
            .map(|_| ())
            .map_err(nfs_err("cannot commit", path))
    }
}
