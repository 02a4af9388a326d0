//! The data-set directory of an NFSv4.1 target as a [`Namespace`]: LOOKUP, CREATE
//! (directories), OPEN with EXCLUSIVE4_1 create, SETATTR, READ, WRITE, RENAME,
//! REMOVE, COMMIT and the `space_avail` attribute over the pool's metadata session.
//! The content goes through the NFS engine, like NFSv3's.

use std::path::PathBuf;
use std::sync::Arc;

use dbio_engine::Backend;
use dbio_nfs::proto::nfs4::{Fh4, Ftype4, Nfsstat4, SetAttrs, StableHow};
use dbio_nfs::v41::{create_verifier, Client};
use dbio_nfs::NfsError;
use dbio_workload::namespace::{Entry, Namespace};
use dbio_workload::DatasetError;

use crate::dataset::{join, nfs_err, read_capped};
use crate::NfsTarget;

/// The data-set directory (`NfsTarget::dir`) of an NFSv4.1 target.
pub struct Nfs41Dir {
    t: Arc<NfsTarget>,
}

fn is_status(e: &NfsError, want: Nfsstat4) -> bool {
    matches!(e, NfsError::Status4 { status, .. } if *status == want)
}

impl Nfs41Dir {
    /// `None` for a target that is not NFSv4.1.
    pub fn new(target: &Arc<NfsTarget>) -> Option<Self> {
        target.pool.v41()?;
        Some(Nfs41Dir { t: target.clone() })
    }

    fn c(&self) -> Result<&Client, DatasetError> {
        match self.t.pool.v41() {
            Some(m) => Ok(m.client()),
            None => Err(DatasetError::Io {
                what: "cannot open the data set",
                path: self.place(),
                source: std::io::Error::other("not an NFSv4.1 target"),
            }),
        }
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.t.pool.block_on(f)
    }

    fn rel(&self, name: &str) -> String {
        join(&self.t.dir, name)
    }

    /// The directory's handle (cached by the target once looked up).
    fn dir_fh(&self) -> Result<Fh4, DatasetError> {
        let bytes = self
            .t
            .handle_bytes(&self.t.dir)
            .map_err(nfs_err("cannot open the data set", self.place()))?;
        Fh4::new(&bytes).ok_or_else(|| DatasetError::Io {
            what: "cannot open the data set",
            path: self.place(),
            source: std::io::Error::other("file handle too long"),
        })
    }

    /// LOOKUP of `name` in the directory; `None` when it does not exist.
    fn lookup(&self, name: &str) -> Result<Option<(Fh4, Entry)>, DatasetError> {
        let dir = self.dir_fh()?;
        let c = self.c()?;
        match self.block_on(c.lookup(dir, name, &self.rel(name))) {
            Ok((fh, a)) => Ok(Some((
                fh,
                Entry {
                    size: a.size,
                    is_file: a.ftype == Ftype4::Reg,
                },
            ))),
            Err(e) if is_status(&e, Nfsstat4::Noent) => Ok(None),
            Err(e) => Err(nfs_err("cannot look up", self.path_of(name))(e)),
        }
    }

    /// Up to `size` bytes from the start of a file.
    fn read_upto(&self, fh: Fh4, rel: &str, size: u64) -> Result<Vec<u8>, NfsError> {
        let c = self.c().map_err(|e| NfsError::Invalid {
            path: rel.to_string(),
            reason: e.to_string(),
        })?;
        let mut out = Vec::new();
        while (out.len() as u64) < size {
            let want = (size - out.len() as u64).min(u64::from(c.max_read())) as u32;
            let (data, eof) = self.block_on(c.read(fh, out.len() as u64, want, rel))?;
            out.extend_from_slice(&data);
            if eof || data.is_empty() {
                break;
            }
        }
        Ok(out)
    }
}

impl Namespace for Nfs41Dir {
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

    /// Creates the directory and its missing parents (mode 0700) from the server's
    /// root.
    fn ensure_dir(&self) -> Result<(), DatasetError> {
        let c = self.c()?;
        let (mut fh, _) = self
            .block_on(c.lookup_path("/"))
            .map_err(nfs_err("cannot look up", self.t.display_path("")))?;
        let mut walked = String::new();
        for name in self.t.dir.split('/').filter(|s| !s.is_empty()) {
            walked = join(&walked, name);
            let path = self.t.display_path(&walked);
            fh = match self.block_on(c.lookup(fh, name, &walked)) {
                Ok((next, a)) => {
                    if a.ftype != Ftype4::Dir {
                        return Err(DatasetError::NotDir(path));
                    }
                    next
                }
                Err(e) if is_status(&e, Nfsstat4::Noent) => {
                    match self.block_on(c.mkdir(fh, name, 0o700, &walked)) {
                        Ok(made) => made,
                        // Made meanwhile by another client (ranks share parents).
                        Err(e) if is_status(&e, Nfsstat4::Exist) => {
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
        self.t.remember41(&self.t.dir, fh);
        Ok(())
    }

    fn open_dir(&self) -> Result<(), DatasetError> {
        let c = self.c()?;
        let (fh, a) = self
            .block_on(c.lookup_path(&format!("/{}", self.t.dir)))
            .map_err(nfs_err("cannot open the data set", self.place()))?;
        if a.ftype != Ftype4::Dir {
            return Err(DatasetError::NotDir(self.place()));
        }
        self.t.remember41(&self.t.dir, fh);
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

    /// Written FILE_SYNC to a file aside (dbio's by its name: truncated if a crash
    /// left it), then renamed over `name`.
    fn write_small(&self, name: &str, data: &[u8]) -> Result<(), DatasetError> {
        let dir = self.dir_fh()?;
        let path = self.path_of(name);
        let tmp_name = format!(".{name}.tmp");
        let tmp_rel = self.rel(&tmp_name);
        let c = self.c()?;
        let file = self
            .block_on(c.create_or_truncate(dir, &tmp_name, 0o600, &tmp_rel))
            .map_err(nfs_err("cannot write", self.path_of(&tmp_name)))?;
        let mut off = 0usize;
        while off < data.len() {
            let n = (data.len() - off).min(c.max_write() as usize);
            let w = self
                .block_on(c.write(&file, off as u64, &data[off..off + n], StableHow::FileSync))
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
        self.block_on(c.close_file(file))
            .map_err(nfs_err("cannot write", path.clone()))?;
        self.block_on(c.rename((dir, &tmp_name), (dir, name), &self.rel(name)))
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
        let dir = self.dir_fh()?;
        let c = self.c()?;
        let space = self
            .block_on(c.fs_space(dir, &self.t.dir))
            .map_err(nfs_err("cannot read free space", self.place()))?;
        Ok(space.space_avail)
    }

    /// OPEN with EXCLUSIVE4_1 create, so that a resend (even over another path) finds
    /// its own file and anything else already there is an error; then SETATTR of the
    /// size under the open stateid, and CLOSE.
    fn create(&self, name: &str, size: u64) -> Result<(), DatasetError> {
        let dir = self.dir_fh()?;
        let rel = self.rel(name);
        let c = self.c()?;
        let file = self
            .block_on(c.create(dir, name, 0o600, create_verifier(), &rel))
            .map_err(nfs_err("cannot create", self.path_of(name)))?;
        let attrs = SetAttrs {
            size: Some(size),
            ..SetAttrs::default()
        };
        let sized = self.block_on(c.setattr(file.fh, file.stateid, attrs, &rel));
        let fh = file.fh;
        let closed = self.block_on(c.close_file(file));
        sized.map_err(nfs_err("cannot set the size of", self.path_of(name)))?;
        closed.map_err(nfs_err("cannot close", self.path_of(name)))?;
        self.t.remember41(&rel, fh);
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), DatasetError> {
        let dir = self.dir_fh()?;
        let rel = self.rel(name);
        let c = self.c()?;
        self.t.forget(&rel);
        self.block_on(c.remove(dir, name, &rel))
            .map_err(nfs_err("cannot remove", self.path_of(name)))
    }

    /// COMMIT of the whole file: the content went as UNSTABLE writes.
    fn make_durable(&self, name: &str) -> Result<(), DatasetError> {
        let rel = self.rel(name);
        let path = self.path_of(name);
        let bytes = self
            .t
            .handle_bytes(&rel)
            .map_err(nfs_err("cannot commit", path.clone()))?;
        let Some(fh) = Fh4::new(&bytes) else {
            return Err(nfs_err("cannot commit", path)(NfsError::Invalid {
                path: rel,
                reason: "file handle too long".into(),
            }));
        };
        let c = self.c()?;
        self.block_on(c.commit(fh, 0, 0, &rel))
            .map(|_| ())
            .map_err(nfs_err("cannot commit", path))
    }
}
