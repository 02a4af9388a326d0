//! The data set on an NFS export: [`NfsDir`] is the data-set directory as
//! a [`Namespace`] over the NFS client (LOOKUP, MKDIR, CREATE, SETATTR,
//! READ, WRITE, RENAME, REMOVE, COMMIT, FSSTAT), so the one data-set
//! algorithm of `dbio_workload::prepare` serves NFS too; the content goes
//! through the NFS engine.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bytes::Bytes;
use dbio_engine::{Backend, EngineKind};
use dbio_nfs::proto::nfs3::{CreateHow, FileHandle, Ftype3, Nfsstat3, Sattr3, StableHow};
use dbio_nfs::{Nfs3Client, NfsError};
use dbio_workload::namespace::{Entry, Namespace, MAX_SMALL_FILE};
use dbio_workload::{Dataset, DatasetError, DatasetSpec, PrepareOptions};

use crate::NfsTarget;

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
    match crate::dataset41::Nfs41Dir::new(target) {
        Some(dir) => dbio_workload::prepare::prepare(&dir, spec, &opts, stop, progress),
        None => dbio_workload::prepare::prepare(&NfsDir::new(target), spec, &opts, stop, progress),
    }
}

/// Reads the manifest of the data set in the target's directory without
/// creating or changing anything (for `dbio verify`): the data set as
/// listed, and whether its creation finished.
pub fn open_existing(target: &Arc<NfsTarget>) -> Result<(Dataset, bool), DatasetError> {
    match crate::dataset41::Nfs41Dir::new(target) {
        Some(dir) => dbio_workload::prepare::open_existing(&dir),
        None => dbio_workload::prepare::open_existing(&NfsDir::new(target)),
    }
}

/// The data-set directory of an NFS target (`NfsTarget::dir`).
pub struct NfsDir {
    t: Arc<NfsTarget>,
}

/// A small file (a manifest) of `size` bytes at `path`, read by `read` up to the byte
/// count it is given, refused when larger than [`MAX_SMALL_FILE`] (also when it grew
/// while being read).
pub(crate) fn read_capped(
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

pub(crate) fn nfs_err(what: &'static str, path: String) -> impl FnOnce(NfsError) -> DatasetError {
    move |e| DatasetError::Io {
        what,
        path,
        source: std::io::Error::other(e.to_string()),
    }
}

fn is_status(e: &NfsError, want: Nfsstat3) -> bool {
    matches!(e, NfsError::Status { status, .. } if *status == want)
}

/// `dir/name` inside the export.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

impl NfsDir {
    pub fn new(target: &Arc<NfsTarget>) -> Self {
        NfsDir { t: target.clone() }
    }

    /// The NFSv3 client (an NFSv4.1 target has its own namespace).
    fn c(&self) -> Result<&Nfs3Client, DatasetError> {
        self.t
            .v3()
            .map_err(nfs_err("cannot open the data set", self.place()))
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.t.pool.block_on(f)
    }

    /// `name` relative to the export root.
    fn rel(&self, name: &str) -> String {
        join(&self.t.dir, name)
    }

    /// The directory's handle (cached by the target once looked up).
    fn dir_fh(&self) -> Result<FileHandle, DatasetError> {
        self.t
            .handle(&self.t.dir)
            .map_err(nfs_err("cannot open the data set", self.place()))
    }

    /// LOOKUP of `name` in the directory; `None` when it does not exist.
    fn lookup(&self, name: &str) -> Result<Option<(FileHandle, Entry)>, DatasetError> {
        let dir_fh = self.dir_fh()?;
        let rel = self.rel(name);
        let c = self.c()?;
        let (fh, attrs) = match self.block_on(c.lookup(dir_fh, name, &rel)) {
            Ok(x) => x,
            Err(e) if is_status(&e, Nfsstat3::NoEnt) => return Ok(None),
            Err(e) => return Err(nfs_err("cannot look up", self.path_of(name))(e)),
        };
        let attrs = match attrs {
            Some(a) => a,
            None => self
                .block_on(c.getattr(fh, &rel))
                .map_err(nfs_err("cannot look up", self.path_of(name)))?,
        };
        let entry = Entry {
            size: attrs.size,
            is_file: attrs.ftype == Ftype3::Reg,
        };
        Ok(Some((fh, entry)))
    }

    /// Up to `size` bytes from the start of a file.
    fn read_upto(&self, fh: FileHandle, rel: &str, size: u64) -> Result<Vec<u8>, NfsError> {
        let c = self.t.v3()?;
        let mut out = Vec::new();
        while (out.len() as u64) < size {
            let want = (size - out.len() as u64).min(u64::from(c.read_size(1 << 20))) as u32;
            let r = self.block_on(c.read(fh, out.len() as u64, want, rel))?;
            out.extend_from_slice(&r.data);
            if r.eof || r.data.is_empty() {
                break;
            }
        }
        Ok(out)
    }

    fn set_attrs(&self, fh: FileHandle, attrs: Sattr3, name: &str) -> Result<(), DatasetError> {
        let c = self.c()?;
        self.block_on(c.setattr(fh, attrs, &self.rel(name)))
            .map_err(nfs_err(
                "cannot set the size and mode of",
                self.path_of(name),
            ))
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

    /// Creates the directory and its missing parents (mode 0700): the
    /// export root is the only thing known to exist.
    fn ensure_dir(&self) -> Result<(), DatasetError> {
        let c = self.c()?;
        let mut fh = c.root();
        let mut walked = String::new();
        for name in self.t.dir.split('/').filter(|s| !s.is_empty()) {
            walked = join(&walked, name);
            let path = self.t.display_path(&walked);
            fh = match self.block_on(c.lookup(fh, name, &walked)) {
                Ok((next, attrs)) => {
                    if attrs.is_some_and(|a| a.ftype != Ftype3::Dir) {
                        return Err(DatasetError::NotDir(path));
                    }
                    next
                }
                Err(e) if is_status(&e, Nfsstat3::NoEnt) => {
                    match self.block_on(c.mkdir(fh, name, 0o700, &walked)) {
                        Ok(made) => made,
                        // Made meanwhile by another client (the ranks of a
                        // run over several hosts share the parents).
                        Err(e) if is_status(&e, Nfsstat3::Exist) => {
                            self.block_on(c.lookup(fh, name, &walked))
                                .map_err(nfs_err("cannot look up", path))?
                                .0
                        }
                        Err(e) => {
                            return Err(nfs_err("cannot create the target directory", path)(e))
                        }
                    }
                }
                Err(e) => return Err(nfs_err("cannot look up", path)(e)),
            };
        }
        self.t.remember(&self.t.dir, fh);
        Ok(())
    }

    fn open_dir(&self) -> Result<(), DatasetError> {
        let c = self.c()?;
        let (fh, attrs) = self
            .block_on(c.lookup_path(&self.t.dir))
            .map_err(nfs_err("cannot open the data set", self.place()))?;
        if attrs.ftype != Ftype3::Dir {
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
            self.read_upto(fh, &self.rel(name), cap)
        })
        .map(Some)
    }

    /// Written FILE_SYNC to a file aside, then renamed over `name`.
    fn write_small(&self, name: &str, data: &[u8]) -> Result<(), DatasetError> {
        let dir_fh = self.dir_fh()?;
        let path = self.path_of(name);
        let tmp_name = format!(".{name}.tmp");
        let tmp_rel = self.rel(&tmp_name);
        let c = self.c()?;
        // The file aside is dbio's by its name: truncated if a crash left it.
        let attrs = Sattr3 {
            mode: Some(0o600),
            size: Some(0),
            ..Sattr3::default()
        };
        let fh = self
            .block_on(c.create(dir_fh, &tmp_name, CreateHow::Unchecked(attrs), &tmp_rel))
            .map_err(nfs_err("cannot write", self.path_of(&tmp_name)))?;
        let data = Bytes::copy_from_slice(data);
        let mut off = 0usize;
        while off < data.len() {
            let n = (data.len() - off).min(c.write_size(1 << 20) as usize);
            let w = self
                .block_on(c.write(
                    fh,
                    off as u64,
                    &data.slice(off..off + n),
                    StableHow::FileSync,
                    &tmp_rel,
                ))
                .map_err(nfs_err("cannot write", path.clone()))?;
            if w.count == 0 {
                return Err(DatasetError::Io {
                    what: "cannot write",
                    path,
                    source: std::io::Error::other("server wrote 0 bytes"),
                });
            }
            off += w.count as usize;
        }
        self.block_on(c.rename((dir_fh, &tmp_name), (dir_fh, name), &self.rel(name)))
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
        self.read_upto(fh, &self.rel(name), len as u64)
            .map_err(nfs_err("cannot read", self.path_of(name)))
    }

    fn free_bytes(&self) -> Result<Option<u64>, DatasetError> {
        let dir_fh = self.dir_fh()?;
        let c = self.c()?;
        let st = self
            .block_on(c.fsstat(dir_fh, &self.t.dir))
            .map_err(nfs_err("cannot read free space", self.place()))?;
        Ok(Some(st.abytes))
    }

    /// EXCLUSIVE CREATE, so that a retransmission (even over another path)
    /// finds its own file and anything else already there is an error;
    /// then SETATTR of mode and size, as EXCLUSIVE sets no attributes.
    fn create(&self, name: &str, size: u64) -> Result<(), DatasetError> {
        let dir_fh = self.dir_fh()?;
        let rel = self.rel(name);
        let c = self.c()?;
        let verifier = dbio_workload::dataset::new_id().to_be_bytes();
        let fh = self
            .block_on(c.create(dir_fh, name, CreateHow::Exclusive(verifier), &rel))
            .map_err(nfs_err("cannot create", self.path_of(name)))?;
        let attrs = Sattr3 {
            mode: Some(0o600),
            size: Some(size),
            ..Sattr3::default()
        };
        self.set_attrs(fh, attrs, name)?;
        self.t.remember(&rel, fh);
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), DatasetError> {
        let dir_fh = self.dir_fh()?;
        let rel = self.rel(name);
        let c = self.c()?;
        self.t.forget(&rel);
        self.block_on(c.remove(dir_fh, name, &rel))
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
        let c = self.c()?;
        self.block_on(c.commit(fh, 0, 0, &rel))
            .map(|_| ())
            .map_err(nfs_err("cannot commit", path))
    }
}
