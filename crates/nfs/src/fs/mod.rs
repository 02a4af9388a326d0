//! One file API over every NFS version: lookup, attributes, access, directories,
//! exclusive create, open and close, small reads and writes, remove, rename, commit,
//! space figures and listings, with one handle type ([`Handle`]) and one attribute type
//! ([`Attr`]).
//!
//! As in the Linux client's `nfs_rpc_ops`, each version is one table of operations
//! (`Ops`: `v3.rs` over [`crate::Nfs3Client`], `v41.rs` over [`crate::v41::Client`]) that
//! holds only what differs on the wire; [`Fs`] calls it through a pointer and knows no
//! version. Everything above it is written once, here. That includes
//! the hardening no version may miss: a READ never hands on more than was asked, a
//! whole-file read stops at the size, a listing that makes no progress stops, and every
//! error names the server's path.

mod v3;
mod v41;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::NfsError;
use crate::proto::nfs4::Stateid;
use crate::url::NfsVersion;

/// A file handle of any version (NFSv3 handles are at most 64 bytes, NFSv4 ones 128).
pub type Handle = crate::proto::handle::InlineHandle<128>;

/// Most directory entries a listing returns.
pub const MAX_DIR_ENTRIES: usize = 1 << 20;
/// Replies in a row that may bring no new entry before a listing gives up: a server whose
/// cookie does not move would otherwise be asked forever.
pub const STALLED_PAGES: u32 = 1;

/// The kind of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    Regular,
    Directory,
    Symlink,
    Block,
    Char,
    Socket,
    Fifo,
    /// NFSv4 named attributes and the like.
    Other,
}

impl FileType {
    /// `ls -l`'s letter for the type.
    pub fn letter(self) -> char {
        match self {
            FileType::Directory => 'd',
            FileType::Symlink => 'l',
            FileType::Block => 'b',
            FileType::Char => 'c',
            FileType::Socket => 's',
            FileType::Fifo => 'p',
            FileType::Regular | FileType::Other => '-',
        }
    }
}

/// A time as the server keeps it (seconds since 1970, UTC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Time {
    pub seconds: i64,
    pub nanos: u32,
}

/// A file's attributes. What a version does not carry (NFSv4.1 names owners, and dbio
/// asks only for what it shows) is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    pub ftype: FileType,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
    pub nlink: u32,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: u64,
    /// Bytes the file takes on the server's disk.
    pub used: Option<u64>,
    pub fileid: u64,
    pub fsid: Option<u64>,
    pub atime: Option<Time>,
    pub mtime: Option<Time>,
    pub ctime: Option<Time>,
}

impl Attr {
    pub fn is_dir(&self) -> bool {
        self.ftype == FileType::Directory
    }
}

/// One directory entry (without `.` and `..`); attributes and handle when the reply
/// carried them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub attr: Option<Attr>,
    pub handle: Option<Handle>,
}

/// One reply of a listing: its entries with their cookies, the cookie verifier to send
/// with the next request, and whether the directory ends here.
#[derive(Clone, Debug, Default)]
pub struct Page {
    pub entries: Vec<(u64, DirEntry)>,
    pub verifier: [u8; 8],
    pub eof: bool,
}

pub use crate::kinds::{ErrorKind, Stable};

/// A WRITE's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub count: u32,
    pub committed: Stable,
    /// If a later COMMIT answers another verifier, the server restarted and UNSTABLE
    /// data may be lost.
    pub verifier: [u8; 8],
}

/// Size and free space of a file system, and the transfer limits. `None`: the server
/// did not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Space {
    pub bytes_total: Option<u64>,
    pub bytes_free: Option<u64>,
    /// Bytes this user may still write.
    pub bytes_avail: Option<u64>,
    pub files_total: Option<u64>,
    pub files_free: Option<u64>,
    pub files_avail: Option<u64>,
    pub max_read: Option<u64>,
    pub max_write: Option<u64>,
    pub max_name: Option<u32>,
    pub max_link: Option<u32>,
}

/// What an open asks to do with the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Both,
}

/// How a file is to be created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Create {
    /// A new file or an error if the name exists; the verifier makes a resend of the
    /// same call (after a lost reply, over another path) find its own file.
    Exclusive([u8; 8]),
    /// Created if missing, truncated if there (like `cp`).
    Truncate,
}

/// An open file: its handle, the state the server keeps for the open (NFSv4.1; none
/// for NFSv3, whose I/O is stateless), and its attributes right after opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenFile {
    pub handle: Handle,
    pub stateid: Option<Stateid>,
    pub attr: Option<Attr>,
    /// Path relative to the root, for messages.
    pub rel: String,
}

/// What an operation of a version gives.
pub(crate) type Res<T> = Result<T, NfsError>;

/// An operation of a version under way: boxed, since the table is an object (one
/// allocation per metadata call; the data path's READs and WRITEs do not come here).
pub(crate) type Fut<'a, T> = Pin<Box<dyn Future<Output = Res<T>> + Send + 'a>>;

/// The operations one NFS version implements; paths (`rel`) are relative to the root
/// of [`Fs`] and only name the file in messages.
pub(crate) trait Ops: Send + Sync {
    /// Which protocol carries the calls (NFSv4.1 also for a pNFS mount).
    fn version(&self) -> NfsVersion;
    /// The root's handle and attributes.
    fn root<'a>(&'a self) -> Fut<'a, (Handle, Attr)>;
    fn lookup<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        rel: &'a str,
    ) -> Fut<'a, (Handle, Attr)>;
    /// A whole path from the root (in as few calls as the version allows).
    fn lookup_path<'a>(&'a self, rel: &'a str) -> Fut<'a, (Handle, Attr)>;
    fn getattr<'a>(&'a self, fh: &'a Handle, rel: &'a str) -> Fut<'a, Attr>;
    /// Of the ACCESS bits asked (NFSv3 and NFSv4 number them alike), those granted.
    fn access<'a>(&'a self, fh: &'a Handle, bits: u32, rel: &'a str) -> Fut<'a, u32>;
    fn mkdir<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        mode: u32,
        rel: &'a str,
    ) -> Fut<'a, Handle>;
    fn create<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        mode: u32,
        how: Create,
        rel: &'a str,
    ) -> Fut<'a, OpenFile>;
    fn open<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        access: Access,
        rel: &'a str,
    ) -> Fut<'a, OpenFile>;
    fn open_handle<'a>(&'a self, fh: &'a Handle, access: Access, rel: &'a str)
        -> Fut<'a, OpenFile>;
    fn close<'a>(&'a self, file: &'a OpenFile) -> Fut<'a, ()>;
    fn set_size<'a>(&'a self, file: &'a OpenFile, size: u64) -> Fut<'a, ()>;
    /// One READ of at most `count` bytes: the data and whether it reached the end.
    fn read<'a>(
        &'a self,
        fh: &'a Handle,
        stateid: Option<Stateid>,
        offset: u64,
        count: u32,
        rel: &'a str,
    ) -> Fut<'a, (Bytes, bool)>;
    fn write<'a>(
        &'a self,
        file: &'a OpenFile,
        offset: u64,
        data: &'a Bytes,
        stable: Stable,
    ) -> Fut<'a, Written>;
    fn commit<'a>(
        &'a self,
        fh: &'a Handle,
        offset: u64,
        count: u32,
        rel: &'a str,
    ) -> Fut<'a, [u8; 8]>;
    fn remove<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        is_dir: bool,
        rel: &'a str,
    ) -> Fut<'a, ()>;
    fn rename<'a>(
        &'a self,
        from: (&'a Handle, &'a str),
        to: (&'a Handle, &'a str),
        rel: &'a str,
    ) -> Fut<'a, ()>;
    fn space<'a>(&'a self, fh: &'a Handle, rel: &'a str) -> Fut<'a, Space>;
    fn readdir_page<'a>(
        &'a self,
        dir: &'a Handle,
        cookie: u64,
        verifier: [u8; 8],
        rel: &'a str,
    ) -> Fut<'a, Page>;
    /// Largest READ and WRITE in one call.
    fn max_read(&self) -> u32;
    fn max_write(&self) -> u32;
    /// `server:/path` of `rel`, for messages.
    fn display(&self, rel: &str) -> String;
}

/// The file API of one mounted export (NFSv3) or server (NFSv4.1), cheap to clone.
/// Paths are relative to its root: the export for NFSv3, the server's root for NFSv4.1.
#[derive(Clone)]
pub struct Fs {
    /// The version's table (`v3.rs`, `v41.rs`).
    ops: Arc<dyn Ops>,
}

impl std::fmt::Debug for Fs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fs({})", self.display(""))
    }
}

impl Fs {
    /// The file API over a version's table.
    pub(crate) fn new(ops: Arc<dyn Ops>) -> Fs {
        Fs { ops }
    }

    /// Which protocol carries the calls (NFSv4.1 also for a pNFS mount).
    pub fn version(&self) -> NfsVersion {
        self.ops.version()
    }

    /// `server:/path` of `rel`, for messages.
    pub fn display(&self, rel: &str) -> String {
        self.ops.display(rel)
    }

    /// Largest READ in one call.
    pub fn max_read(&self) -> u32 {
        self.ops.max_read()
    }

    /// Largest WRITE in one call.
    pub fn max_write(&self) -> u32 {
        self.ops.max_write()
    }

    pub async fn root(&self) -> Result<(Handle, Attr), NfsError> {
        self.ops.root().await
    }

    /// Looks `name` up in `dir`; `rel` is the path of the result.
    pub async fn lookup(
        &self,
        dir: &Handle,
        name: &str,
        rel: &str,
    ) -> Result<(Handle, Attr), NfsError> {
        self.ops.lookup(dir, name, rel).await
    }

    /// Like [`Fs::lookup`], `None` when the name does not exist.
    pub async fn find(
        &self,
        dir: &Handle,
        name: &str,
        rel: &str,
    ) -> Result<Option<(Handle, Attr)>, NfsError> {
        match self.lookup(dir, name, rel).await {
            Ok(found) => Ok(Some(found)),
            Err(e) if e.kind() == Some(ErrorKind::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A path from the root ("" is the root itself).
    pub async fn lookup_path(&self, rel: &str) -> Result<(Handle, Attr), NfsError> {
        self.ops.lookup_path(rel.trim_matches('/')).await
    }

    pub async fn getattr(&self, fh: &Handle, rel: &str) -> Result<Attr, NfsError> {
        self.ops.getattr(fh, rel).await
    }

    /// Of the ACCESS bits asked ([`access`]), those the server grants.
    pub async fn access(&self, fh: &Handle, bits: u32, rel: &str) -> Result<u32, NfsError> {
        self.ops.access(fh, bits, rel).await
    }

    pub async fn mkdir(
        &self,
        dir: &Handle,
        name: &str,
        mode: u32,
        rel: &str,
    ) -> Result<Handle, NfsError> {
        self.ops.mkdir(dir, name, mode, rel).await
    }

    /// Every directory of `rel` from the root, made (with `mode`) where missing: the
    /// handle of the last. A directory made meanwhile by another client is taken.
    pub async fn make_dirs(&self, rel: &str, mode: u32) -> Result<Handle, NfsError> {
        let (mut fh, _) = self.root().await?;
        let mut walked = String::new();
        for name in rel.split('/').filter(|s| !s.is_empty()) {
            walked = join(&walked, name);
            fh = match self.find(&fh, name, &walked).await? {
                Some((next, a)) if a.is_dir() => next,
                Some(_) => {
                    return Err(NfsError::Invalid {
                        path: self.display(&walked),
                        reason: "not a directory".into(),
                    })
                }
                None => match self.mkdir(&fh, name, mode, &walked).await {
                    Ok(made) => made,
                    Err(e) if e.kind() == Some(ErrorKind::Exists) => {
                        self.lookup(&fh, name, &walked).await?.0
                    }
                    Err(e) => return Err(e),
                },
            };
        }
        Ok(fh)
    }

    /// Creates `name` in `dir` and opens it for reading and writing.
    pub async fn create(
        &self,
        dir: &Handle,
        name: &str,
        mode: u32,
        how: Create,
        rel: &str,
    ) -> Result<OpenFile, NfsError> {
        self.ops.create(dir, name, mode, how, rel).await
    }

    /// Opens the existing file `name` of `dir`.
    pub async fn open(
        &self,
        dir: &Handle,
        name: &str,
        access: Access,
        rel: &str,
    ) -> Result<OpenFile, NfsError> {
        self.ops.open(dir, name, access, rel).await
    }

    /// Opens the file of a handle.
    pub async fn open_handle(
        &self,
        fh: &Handle,
        access: Access,
        rel: &str,
    ) -> Result<OpenFile, NfsError> {
        self.ops.open_handle(fh, access, rel).await
    }

    /// Releases an open (nothing to do over NFSv3).
    pub async fn close(&self, file: OpenFile) -> Result<(), NfsError> {
        self.ops.close(&file).await
    }

    /// Sets the size of an open file (and, over NFSv3, nothing else).
    pub async fn set_size(&self, file: &OpenFile, size: u64) -> Result<(), NfsError> {
        self.ops.set_size(file, size).await
    }

    /// One READ of at most `count` bytes (and at most [`Fs::max_read`]) at `offset` of
    /// an open file: the data, sharing the reply, and whether it reached the end. A
    /// reply with more data than asked for is an error, never handed on.
    pub async fn read(
        &self,
        file: &OpenFile,
        offset: u64,
        count: u32,
    ) -> Result<(Bytes, bool), NfsError> {
        self.read_handle(&file.handle, file.stateid, offset, count, &file.rel)
            .await
    }

    /// [`Fs::read`] by handle (and the open's stateid, if there is one).
    pub async fn read_handle(
        &self,
        fh: &Handle,
        stateid: Option<Stateid>,
        offset: u64,
        count: u32,
        rel: &str,
    ) -> Result<(Bytes, bool), NfsError> {
        let count = count.min(self.max_read());
        // Each version's READ refuses a reply longer than asked (`kinds::LongRead`).
        self.ops.read(fh, stateid, offset, count, rel).await
    }

    /// Reads from offset 0 up to `size` bytes (the size from the attributes, or a cap),
    /// handing each piece to `sink`: stops at `size` whatever the server says about the
    /// end of the file, at an end of file, or at a short file. The bytes read.
    pub async fn read_to_size(
        &self,
        fh: &Handle,
        stateid: Option<Stateid>,
        size: u64,
        rel: &str,
        mut sink: impl FnMut(&[u8]) -> Result<(), NfsError>,
    ) -> Result<u64, NfsError> {
        let mut offset = 0u64;
        while offset < size {
            let want = (size - offset).min(u64::from(self.max_read())) as u32;
            let (data, eof) = self.read_handle(fh, stateid, offset, want, rel).await?;
            sink(&data)?;
            offset += data.len() as u64;
            if eof || data.is_empty() {
                break;
            }
        }
        Ok(offset)
    }

    /// Up to `cap` bytes from the start of a file, in memory.
    pub async fn read_small(&self, fh: &Handle, cap: u64, rel: &str) -> Result<Vec<u8>, NfsError> {
        let mut out = Vec::new();
        self.read_to_size(fh, None, cap, rel, |d| {
            out.extend_from_slice(d);
            Ok(())
        })
        .await?;
        Ok(out)
    }

    /// One WRITE of `data` (at most [`Fs::max_write`] bytes) at `offset`.
    pub async fn write(
        &self,
        file: &OpenFile,
        offset: u64,
        data: &Bytes,
        stable: Stable,
    ) -> Result<Written, NfsError> {
        if data.len() > self.max_write() as usize {
            return Err(NfsError::Invalid {
                path: self.display(&file.rel),
                reason: format!(
                    "WRITE of {} bytes is larger than the server's {}",
                    data.len(),
                    self.max_write()
                ),
            });
        }
        let w = self.ops.write(file, offset, data, stable).await?;
        if w.count as usize > data.len() {
            return Err(NfsError::BadReply {
                what: "WRITE".into(),
                path: self.display(&file.rel),
                reason: format!("{} bytes written of {} sent", w.count, data.len()),
            });
        }
        Ok(w)
    }

    /// Writes all of `data` from offset 0 with `stable` (short writes continue where
    /// the server stopped; one that writes nothing is an error).
    pub async fn write_all(
        &self,
        file: &OpenFile,
        data: &Bytes,
        stable: Stable,
    ) -> Result<(), NfsError> {
        let mut off = 0usize;
        while off < data.len() {
            let n = (data.len() - off).min(self.max_write() as usize);
            let w = self
                .write(file, off as u64, &data.slice(off..off + n), stable)
                .await?;
            if w.count == 0 {
                return Err(NfsError::BadReply {
                    what: "WRITE".into(),
                    path: self.display(&file.rel),
                    reason: "the server wrote 0 bytes".into(),
                });
            }
            off += w.count as usize;
        }
        Ok(())
    }

    /// COMMIT of `count` bytes from `offset` (0: to the end): the write verifier.
    pub async fn commit(
        &self,
        fh: &Handle,
        offset: u64,
        count: u32,
        rel: &str,
    ) -> Result<[u8; 8], NfsError> {
        self.ops.commit(fh, offset, count, rel).await
    }

    /// Removes `name` from `dir`: a file, or (`is_dir`) an empty directory.
    pub async fn remove(
        &self,
        dir: &Handle,
        name: &str,
        is_dir: bool,
        rel: &str,
    ) -> Result<(), NfsError> {
        self.ops.remove(dir, name, is_dir, rel).await
    }

    /// Renames `from.1` of directory `from.0` to `to.1` of `to.0` (replacing a file
    /// there, as rename(2) does).
    pub async fn rename(
        &self,
        from: (&Handle, &str),
        to: (&Handle, &str),
        rel: &str,
    ) -> Result<(), NfsError> {
        self.ops.rename(from, to, rel).await
    }

    /// Size and free space of the file system holding `fh`.
    pub async fn space(&self, fh: &Handle, rel: &str) -> Result<Space, NfsError> {
        self.ops.space(fh, rel).await
    }

    /// Every entry of a directory, following cookies over as many replies as needed;
    /// at most [`MAX_DIR_ENTRIES`], and an error when [`STALLED_PAGES`] replies in a
    /// row bring nothing new (a cookie that does not move, or entries seen already).
    pub async fn readdir(&self, dir: &Handle, rel: &str) -> Result<Vec<DirEntry>, NfsError> {
        let mut out = Vec::new();
        let (mut cookie, mut verifier) = (0u64, [0u8; 8]);
        let mut seen = std::collections::HashSet::new();
        let mut stalled = 0;
        loop {
            let page = self.ops.readdir_page(dir, cookie, verifier, rel).await?;
            let mut fresh = false;
            for (next, e) in page.entries {
                if !seen.insert(next) {
                    continue;
                }
                fresh = true;
                cookie = next;
                if e.name == "." || e.name == ".." {
                    continue;
                }
                if out.len() >= MAX_DIR_ENTRIES {
                    return Err(listing_error(self, rel, "has more than 1048576 entries"));
                }
                out.push(e);
            }
            if page.eof {
                return Ok(out);
            }
            stalled = if fresh { 0 } else { stalled + 1 };
            if stalled >= STALLED_PAGES {
                return Err(listing_error(
                    self,
                    rel,
                    "makes no progress (replies without new entries and without an end)",
                ));
            }
            verifier = page.verifier;
        }
    }
}

fn listing_error(fs: &Fs, rel: &str, why: &str) -> NfsError {
    NfsError::BadReply {
        what: "READDIR".into(),
        path: fs.display(rel),
        reason: format!("the directory listing {why}"),
    }
}

/// ACCESS bits: NFSv4 numbers them as NFSv3 does (a test checks), so the codec's
/// NFSv3 table serves both.
pub use crate::proto::nfs3::access;

/// `dir/name` (`name` alone at the root).
pub fn join(dir: &str, name: &str) -> String {
    let dir = dir.trim_matches('/');
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Splits `a/b/c` into (`a/b`, `c`).
pub fn split_parent(rel: &str) -> (&str, &str) {
    let rel = rel.trim_matches('/');
    match rel.rfind('/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => ("", rel),
    }
}

#[cfg(test)]
mod tests;
