//! The file system: a root directory holding one image file, whose reads,
//! writes, syncs and fallocates go to a backing file after a fixed delay.

use std::alloc::{self, Layout};
use std::cell::RefCell;
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

/// Largest read or write served in one request. The kernel is told so at
/// init (max_write, and max_pages follows it); anything larger is refused.
pub const MAX_IO: usize = 1 << 20;
/// O_DIRECT needs offsets and lengths in logical blocks of the backing disk
/// (512 bytes on vda); buffers are page aligned, which satisfies any disk.
const DIO_GRANULE: u64 = 512;
const BUF_ALIGN: usize = 4096;
const IMAGE: INodeNo = INodeNo(2);
/// Short: the image's size changes only through this daemon.
const TTL: Duration = Duration::from_secs(1);

/// The file on the real disk behind the image.
pub struct Backing {
    /// Opened with O_DIRECT, so that every request reaches the disk; None
    /// when the file system under the backing file refuses O_DIRECT.
    direct: Option<File>,
    /// For requests that are not block aligned (and the whole file without
    /// O_DIRECT): the kernel keeps buffered and direct I/O of a file coherent.
    buffered: File,
}

impl Backing {
    /// Opens `path` read-write; the second value says why O_DIRECT is not used.
    pub fn open(path: &Path) -> io::Result<(Backing, Option<String>)> {
        let buffered = OpenOptions::new().read(true).write(true).open(path)?;
        let (direct, why) = match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
        {
            Ok(f) => (Some(f), None),
            Err(e) => (None, Some(format!("O_DIRECT refused ({e})"))),
        };
        Ok((Backing { direct, buffered }, why))
    }

    pub fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    /// The file for a request at `off` of `len` bytes, and whether it is O_DIRECT.
    fn file_for(&self, off: u64, len: usize) -> (&File, bool) {
        match &self.direct {
            Some(f) if off % DIO_GRANULE == 0 && len as u64 % DIO_GRANULE == 0 => (f, true),
            _ => (&self.buffered, false),
        }
    }

    /// Reads until `buf` is full or end of file; returns the bytes read.
    fn read_full(f: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match f.read_at(&mut buf[done..], off + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

/// A page-aligned buffer of MAX_IO bytes, one per serving thread, reused.
struct AlignedBuf(*mut u8);

impl AlignedBuf {
    fn layout() -> Layout {
        Layout::from_size_align(MAX_IO, BUF_ALIGN).expect("constant layout")
    }
    fn new() -> AlignedBuf {
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc::alloc_zeroed(Self::layout()) };
        if p.is_null() {
            alloc::handle_alloc_error(Self::layout());
        }
        AlignedBuf(p)
    }
    fn slice(&mut self, len: usize) -> &mut [u8] {
        assert!(len <= MAX_IO);
        // SAFETY: the allocation holds MAX_IO initialised bytes and is owned here.
        unsafe { std::slice::from_raw_parts_mut(self.0, len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { alloc::dealloc(self.0, Self::layout()) }
    }
}

thread_local! {
    static BUF: RefCell<Option<AlignedBuf>> = const { RefCell::new(None) };
}

fn with_buf<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    BUF.with(|b| {
        let mut b = b.borrow_mut();
        f(b.get_or_insert_with(AlignedBuf::new).slice(len))
    })
}

/// What was served, for the summary printed at exit.
#[derive(Default)]
pub struct Counts {
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub syncs: AtomicU64,
    pub buffered: AtomicU64,
    pub errors: AtomicU64,
}

pub struct DelayFs {
    backing: Backing,
    name: OsString,
    delay: Duration,
    /// Reply FOPEN_DIRECT_IO at open: the kernel's page cache then holds
    /// nothing of the image even when the opener (a loop device without
    /// direct I/O) reads it buffered.
    fopen_direct_io: bool,
    uid: u32,
    gid: u32,
    counts: Arc<Counts>,
}

fn errno(e: io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

fn time(secs: i64, nsecs: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nsecs.clamp(0, 999_999_999) as u32)
    } else {
        UNIX_EPOCH
    }
}

impl DelayFs {
    pub fn new(
        backing: Backing,
        name: &str,
        delay: Duration,
        fopen_direct_io: bool,
        counts: Arc<Counts>,
    ) -> DelayFs {
        // SAFETY: plain getters without arguments.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        DelayFs {
            backing,
            name: name.into(),
            delay,
            fopen_direct_io,
            uid,
            gid,
            counts,
        }
    }

    /// The fixed extra latency of a request, before it goes to the disk.
    fn pause(&self) {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
    }

    fn root_attr(&self) -> FileAttr {
        FileAttr {
            ino: INodeNo::ROOT,
            size: 0,
            blocks: 0,
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind: FileType::Directory,
            perm: 0o755,
            nlink: 2,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        }
    }

    fn image_attr(&self) -> io::Result<FileAttr> {
        let m = self.backing.buffered.metadata()?;
        Ok(FileAttr {
            ino: IMAGE,
            size: m.size(),
            blocks: m.blocks(),
            atime: time(m.atime(), m.atime_nsec()),
            mtime: time(m.mtime(), m.mtime_nsec()),
            ctime: time(m.ctime(), m.ctime_nsec()),
            crtime: UNIX_EPOCH,
            kind: FileType::RegularFile,
            perm: (m.mode() & 0o7777) as u16,
            nlink: 1,
            uid: m.uid(),
            gid: m.gid(),
            rdev: 0,
            flags: 0,
            blksize: 4096,
        })
    }

    fn fail(&self, e: io::Error) -> Errno {
        self.counts.errors.fetch_add(1, Ordering::Relaxed);
        errno(e)
    }

    fn read_image(&self, off: u64, len: usize, reply: ReplyData) {
        with_buf(len, |buf| {
            let (f, direct) = self.backing.file_for(off, len);
            let mut res = Backing::read_full(f, buf, off);
            if direct && matches!(&res, Err(e) if e.raw_os_error() == Some(libc::EINVAL)) {
                // A disk with larger blocks than DIO_GRANULE: this one buffered.
                res = Backing::read_full(&self.backing.buffered, buf, off);
                self.counts.buffered.fetch_add(1, Ordering::Relaxed);
            } else if !direct {
                self.counts.buffered.fetch_add(1, Ordering::Relaxed);
            }
            match res {
                Ok(n) => reply.data(&buf[..n]),
                Err(e) => reply.error(self.fail(e)),
            }
        })
    }

    fn write_image(&self, off: u64, data: &[u8]) -> io::Result<()> {
        let (f, direct) = self.backing.file_for(off, data.len());
        if !direct {
            self.counts.buffered.fetch_add(1, Ordering::Relaxed);
            return f.write_all_at(data, off);
        }
        with_buf(data.len(), |buf| {
            // O_DIRECT wants an aligned buffer; the kernel's is not.
            buf.copy_from_slice(data);
            match f.write_all_at(buf, off) {
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    self.counts.buffered.fetch_add(1, Ordering::Relaxed);
                    self.backing.buffered.write_all_at(data, off)
                }
                r => r,
            }
        })
    }

    fn sync(&self, datasync: bool) -> io::Result<()> {
        self.counts.syncs.fetch_add(1, Ordering::Relaxed);
        self.pause();
        if datasync {
            self.backing.buffered.sync_data()
        } else {
            self.backing.buffered.sync_all()
        }
    }
}

impl Filesystem for DelayFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> io::Result<()> {
        // Bounds every request's length (max_pages follows max_write).
        let _ = config.set_max_write(MAX_IO as u32);
        let _ = config.set_max_readahead(128 << 10);
        // Direct I/O from a loop device then goes out asynchronously, several
        // requests at once, as it would to a disk.
        let _ = config.add_capabilities(InitFlags::FUSE_ASYNC_DIO);
        // Requests beyond this many wait in the kernel.
        let _ = config.set_max_background(64);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent != INodeNo::ROOT || name != self.name.as_os_str() {
            return reply.error(Errno::ENOENT);
        }
        match self.image_attr() {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(self.fail(e)),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match ino {
            INodeNo::ROOT => reply.attr(&TTL, &self.root_attr()),
            IMAGE => match self.image_attr() {
                Ok(a) => reply.attr(&TTL, &a),
                Err(e) => reply.error(self.fail(e)),
            },
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if ino != IMAGE {
            return self.getattr(req, ino, fh, reply);
        }
        // Only the size is the image's own; modes and times stay the backing file's.
        if let Some(size) = size {
            if let Err(e) = self.backing.buffered.set_len(size) {
                return reply.error(self.fail(e));
            }
        }
        self.getattr(req, ino, fh, reply)
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino != IMAGE {
            return reply.error(Errno::EISDIR);
        }
        let flags = if self.fopen_direct_io {
            FopenFlags::FOPEN_DIRECT_IO
        } else {
            FopenFlags::empty()
        };
        reply.opened(FileHandle(0), flags)
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if ino != IMAGE {
            return reply.error(Errno::EISDIR);
        }
        let len = size as usize;
        if len > MAX_IO {
            return reply.error(Errno::EINVAL);
        }
        self.counts.reads.fetch_add(1, Ordering::Relaxed);
        self.pause();
        self.read_image(offset, len, reply)
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino != IMAGE {
            return reply.error(Errno::EISDIR);
        }
        if data.len() > MAX_IO {
            return reply.error(Errno::EINVAL);
        }
        self.counts.writes.fetch_add(1, Ordering::Relaxed);
        self.pause();
        match self.write_image(offset, data) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(self.fail(e)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        if ino != IMAGE {
            return reply.ok();
        }
        match self.sync(true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(self.fail(e)),
        }
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        if ino != IMAGE {
            return reply.ok();
        }
        match self.sync(datasync) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(self.fail(e)),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if ino != IMAGE {
            return reply.error(Errno::EISDIR);
        }
        // A loop device's discards arrive here (punched holes).
        self.pause();
        let fd = self.backing.buffered.as_raw_fd();
        // SAFETY: a valid descriptor and plain integers.
        let rc = unsafe { libc::fallocate(fd, mode, offset as libc::off_t, length as libc::off_t) };
        if rc == 0 {
            reply.ok()
        } else {
            reply.error(self.fail(io::Error::last_os_error()))
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries: [(INodeNo, FileType, &OsStr); 3] = [
            (INodeNo::ROOT, FileType::Directory, OsStr::new(".")),
            (INodeNo::ROOT, FileType::Directory, OsStr::new("..")),
            (IMAGE, FileType::RegularFile, self.name.as_os_str()),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, i as u64 + 1, *kind, name) {
                break;
            }
        }
        reply.ok()
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // SAFETY: a zeroed statvfs is a valid out-parameter.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and a pointer to a live statvfs.
        if unsafe { libc::fstatvfs(self.backing.buffered.as_raw_fd(), &mut s) } != 0 {
            return reply.error(self.fail(io::Error::last_os_error()));
        }
        reply.statfs(
            s.f_blocks,
            s.f_bfree,
            s.f_bavail,
            s.f_files,
            s.f_ffree,
            s.f_bsize as u32,
            255,
            s.f_frsize as u32,
        )
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        reply.ok()
    }
}
