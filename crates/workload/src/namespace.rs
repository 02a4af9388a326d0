//! The namespace seam: the few operations on a directory of files that the
//! data-set algorithm ([`crate::prepare`]) needs, so that one algorithm
//! serves every kind of storage. [`LocalDir`] is a local directory; the NFS
//! engine has its own over the NFS client. Tools that age or fragment a
//! data set work through the same seam.
//!
//! Names are plain file names inside the data-set directory. Errors are
//! [`DatasetError`]s that name the path involved.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dbio_engine::Backend;

use crate::format::DatasetError;

/// Largest small file ([`Namespace::read_small`]) read back: a manifest is
/// a few hundred bytes, so anything near this is not one of ours.
pub const MAX_SMALL_FILE: u64 = 1 << 20;

/// What is under a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Size in bytes.
    pub size: u64,
    /// A regular file (not a directory, a symbolic link or anything else).
    pub is_file: bool,
}

/// A directory that holds (or will hold) a data set.
pub trait Namespace {
    /// The directory as engines name it ([`crate::Dataset::dir`]).
    fn dir(&self) -> PathBuf;
    /// The directory, for messages.
    fn place(&self) -> String;
    /// The file `name` in the directory, for messages.
    fn path_of(&self, name: &str) -> String;
    /// Where engines on these files come from; `None`: engines open the
    /// files by path (local files).
    fn backend(&self) -> Option<Arc<dyn Backend>> {
        None
    }
    /// Creates the directory, owner-only, unless it exists.
    fn ensure_dir(&self) -> Result<(), DatasetError>;
    /// Checks that the directory exists, creating nothing.
    fn open_dir(&self) -> Result<(), DatasetError>;
    /// What is under `name`, without following a symbolic link; `None`
    /// when nothing is.
    fn entry(&self, name: &str) -> Result<Option<Entry>, DatasetError>;
    /// The whole of a small file; `None` when it does not exist. A file
    /// over [`MAX_SMALL_FILE`] fails with [`DatasetError::TooLarge`]
    /// before it is read.
    fn read_small(&self, name: &str) -> Result<Option<Vec<u8>>, DatasetError>;
    /// Replaces `name` with `data`, atomically (written aside, then
    /// renamed over it) and durably.
    fn write_small(&self, name: &str, data: &[u8]) -> Result<(), DatasetError>;
    /// The first `len` bytes of a file (fewer if it is shorter).
    fn read_head(&self, name: &str, len: usize) -> Result<Vec<u8>, DatasetError>;
    /// Bytes available for new files; `None` when the storage cannot tell.
    fn free_bytes(&self) -> Result<Option<u64>, DatasetError>;
    /// Creates `name`, owner-only, `size` bytes long, and fails if
    /// anything is already there: a file is only ever created new, so
    /// nothing that appeared since it was checked is overwritten.
    fn create(&self, name: &str, size: u64) -> Result<(), DatasetError>;
    /// Removes the file `name`.
    fn remove(&self, name: &str) -> Result<(), DatasetError>;
    /// Makes what was written to `name` durable (fsync, NFS COMMIT).
    fn make_durable(&self, name: &str) -> Result<(), DatasetError>;
}

/// A local directory, through std::fs.
#[derive(Clone, Debug)]
pub struct LocalDir {
    dir: PathBuf,
}

impl LocalDir {
    pub fn new(dir: &Path) -> Self {
        LocalDir {
            dir: dir.to_path_buf(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Maps an I/O error to a [`DatasetError::Io`] naming `path`.
pub fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> DatasetError + 'a {
    move |source| DatasetError::Io {
        what,
        path: path.display().to_string(),
        source,
    }
}

fn too_large(path: String, size: u64) -> DatasetError {
    DatasetError::TooLarge {
        path,
        size,
        limit: MAX_SMALL_FILE,
    }
}

impl Namespace for LocalDir {
    fn dir(&self) -> PathBuf {
        self.dir.clone()
    }

    fn place(&self) -> String {
        self.dir.display().to_string()
    }

    fn path_of(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    /// Creates the directory (mode 0700) if its parent exists: a typo in
    /// a path should not grow a tree of directories.
    fn ensure_dir(&self) -> Result<(), DatasetError> {
        let dir = &self.dir;
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => return Err(DatasetError::NotDir(self.place())),
            Err(_) => {}
        }
        let parent = match dir.parent() {
            Some(p) if p.as_os_str().is_empty() => Path::new("."),
            Some(p) => p,
            None => Path::new("/"),
        };
        if !parent.is_dir() {
            return Err(DatasetError::NoParent {
                dir: self.place(),
                parent: parent.display().to_string(),
            });
        }
        fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(io_err("cannot create the target directory", dir))
    }

    fn open_dir(&self) -> Result<(), DatasetError> {
        match fs::metadata(&self.dir) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(DatasetError::NotDir(self.place())),
            Err(e) => Err(io_err("cannot open the data set", &self.dir)(e)),
        }
    }

    fn entry(&self, name: &str) -> Result<Option<Entry>, DatasetError> {
        let path = self.path(name);
        match fs::symlink_metadata(&path) {
            Ok(m) => Ok(Some(Entry {
                size: m.len(),
                is_file: m.is_file(),
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err("cannot look up", &path)(e)),
        }
    }

    fn read_small(&self, name: &str) -> Result<Option<Vec<u8>>, DatasetError> {
        let path = self.path(name);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("cannot read", &path)(e)),
        };
        let size = file.metadata().map_err(io_err("cannot read", &path))?.len();
        if size > MAX_SMALL_FILE {
            return Err(too_large(self.path_of(name), size));
        }
        // The file may grow between the size check and the read.
        let mut text = Vec::with_capacity(size as usize);
        file.take(MAX_SMALL_FILE + 1)
            .read_to_end(&mut text)
            .map_err(io_err("cannot read", &path))?;
        if text.len() as u64 > MAX_SMALL_FILE {
            return Err(too_large(self.path_of(name), text.len() as u64));
        }
        Ok(Some(text))
    }

    fn write_small(&self, name: &str, data: &[u8]) -> Result<(), DatasetError> {
        let path = self.path(name);
        let tmp = self.path(&format!(".{name}.tmp"));
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io_err("cannot write", &tmp))?;
        f.write_all(data)
            .and_then(|_| f.sync_all())
            .map_err(io_err("cannot write", &tmp))?;
        fs::rename(&tmp, &path).map_err(io_err("cannot write", &path))?;
        // The rename, and the files created before it, last only once the
        // directory itself is synced.
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err("cannot sync", &self.dir))
    }

    fn read_head(&self, name: &str, len: usize) -> Result<Vec<u8>, DatasetError> {
        let path = self.path(name);
        let mut buf = Vec::with_capacity(len);
        File::open(&path)
            .and_then(|f| f.take(len as u64).read_to_end(&mut buf))
            .map_err(io_err("cannot read", &path))?;
        Ok(buf)
    }

    fn free_bytes(&self) -> Result<Option<u64>, DatasetError> {
        use std::os::unix::ffi::OsStrExt;
        let dir = &self.dir;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| DatasetError::Spec(format!("{}: path holds a NUL byte", self.place())))?;
        // SAFETY: statvfs writes only the struct we hand it.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
            return Err(io_err("cannot read free space", dir)(
                std::io::Error::last_os_error(),
            ));
        }
        Ok(Some(st.f_bavail as u64 * st.f_frsize as u64))
    }

    fn create(&self, name: &str, size: u64) -> Result<(), DatasetError> {
        let path = self.path(name);
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(io_err("cannot create", &path))?;
        // Reserve the space now so that a full disk fails here, clearly, and
        // the file is laid out in few extents.
        let len = libc::off_t::try_from(size).unwrap_or(libc::off_t::MAX);
        // SAFETY: plain syscall on a file descriptor we own.
        let rc = unsafe { libc::posix_fallocate(std::os::fd::AsRawFd::as_raw_fd(&f), 0, len) };
        match rc {
            0 => Ok(()),
            // No reservation here: the size alone, written later.
            libc::EOPNOTSUPP | libc::EINVAL => {
                f.set_len(size).map_err(io_err("cannot size", &path))
            }
            libc::ENOSPC => Err(DatasetError::NoSpace {
                dir: self.path_of(name),
                need: size,
                have: 0,
            }),
            e => Err(io_err("cannot allocate", &path)(
                std::io::Error::from_raw_os_error(e),
            )),
        }
    }

    fn remove(&self, name: &str) -> Result<(), DatasetError> {
        let path = self.path(name);
        fs::remove_file(&path).map_err(io_err("cannot remove", &path))
    }

    fn make_durable(&self, name: &str) -> Result<(), DatasetError> {
        let path = self.path(name);
        File::open(&path)
            .and_then(|f| f.sync_all())
            .map_err(io_err("cannot sync", &path))
    }
}
