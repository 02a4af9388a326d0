//! What the local engines (psync, io_uring) share: opening the files with
//! or without O_DIRECT, the slot buffers and which of them are in flight,
//! checking requests, and turning a result code into a completion whose
//! error names the file and offset.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use crate::{Completion, EngineConfig, EngineError, IoDir, IoRequest, Slot, SlotBuffers};

/// The open files of one engine instance, with their paths for messages.
pub(crate) struct LocalFiles {
    pub files: Vec<File>,
    pub paths: Vec<String>,
}

impl LocalFiles {
    /// Opens every file of `cfg` (read-only unless `cfg.write`), with
    /// O_DIRECT when the file asks for it, or when `cfg.direct` and the file is
    /// not `buffered`. Files are
    /// not created: the data set is prepared before an engine runs on it.
    pub fn open(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let mut files = Vec::with_capacity(cfg.files.len());
        let mut paths = Vec::with_capacity(cfg.files.len());
        for spec in &cfg.files {
            let path = spec.path.display().to_string();
            let direct = spec.direct || (cfg.direct && !spec.buffered);
            let file = open_one(&spec.path, cfg.write, direct, &path)?;
            if !direct && cfg.no_read_ahead {
                // SAFETY: an open descriptor; the advice sets how it reads ahead.
                unsafe {
                    libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM);
                }
            }
            files.push(file);
            paths.push(path);
        }
        Ok(Self { files, paths })
    }
}

fn open_one(
    path: &std::path::Path,
    write: bool,
    direct: bool,
    shown: &str,
) -> Result<File, EngineError> {
    let open = |flags: i32| {
        OpenOptions::new()
            .read(true)
            .write(write)
            .custom_flags(flags)
            .open(path)
    };
    if !direct {
        return open(0).map_err(|source| open_error(shown, source));
    }
    match open(libc::O_DIRECT) {
        Ok(f) => Ok(f),
        // EINVAL at open with O_DIRECT means the file system cannot do
        // direct I/O; confirm the file opens without it before saying so.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => match open(0) {
            Ok(_) => Err(EngineError::NoDirect {
                path: shown.to_string(),
            }),
            Err(source) => Err(open_error(shown, source)),
        },
        Err(source) => Err(open_error(shown, source)),
    }
}

fn open_error(path: &str, source: io::Error) -> EngineError {
    EngineError::Open {
        path: path.to_string(),
        source,
    }
}

/// The files, slot buffers and in-flight slots of one local engine.
pub(crate) struct LocalSlots {
    pub files: LocalFiles,
    pub bufs: SlotBuffers,
    pub busy: SlotTable,
}

impl LocalSlots {
    pub fn open(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let files = LocalFiles::open(cfg)?;
        let bufs = slot_buffers(cfg)?;
        Ok(Self {
            busy: SlotTable::new(bufs.len()),
            files,
            bufs,
        })
    }
    pub fn depth(&self) -> u32 {
        self.bufs.len() as u32
    }
    pub fn buffer(&mut self, slot: Slot) -> &mut [u8] {
        self.bufs.slice_mut(slot as usize)
    }
    /// [`crate::Engine::unmap_buffer`]: never a slot with an I/O in flight.
    pub fn unmap(&self, slot: Slot, pages: usize) -> bool {
        (slot as usize) < self.bufs.len()
            && !self.busy.is_busy(slot)
            && self.bufs.unmap(slot as usize, pages)
    }
    /// Checks `req` and marks its slot in flight.
    pub fn begin(&mut self, req: &IoRequest) -> Result<(), EngineError> {
        check_request(req, &self.files, &self.bufs)?;
        self.busy.take(req.slot)
    }
    /// The completion of `req` from a syscall-style result; frees its slot.
    pub fn finish(&mut self, req: &IoRequest, res: i64) -> Completion {
        self.busy.release(req.slot);
        completion(req, res, &self.files)
    }
    /// The completion of a write followed by fdatasync: the write's error or
    /// short count if it fell short (the flush then never ran, or ran for
    /// nothing), else the flush's error, else the bytes written.
    pub fn finish_flushed(&mut self, req: &IoRequest, written: i64, flushed: i64) -> Completion {
        if written != i64::from(req.len) || flushed >= 0 {
            return self.finish(req, written);
        }
        self.busy.release(req.slot);
        Completion {
            tag: req.tag,
            slot: req.slot,
            result: Err(EngineError::Io {
                op: "fdatasync",
                path: self.files.paths[req.file as usize].clone(),
                offset: req.offset,
                source: io::Error::from_raw_os_error((-flushed) as i32),
            }),
        }
    }
}

/// One buffer per slot, each `max_io` bytes, page aligned.
fn slot_buffers(cfg: &EngineConfig) -> Result<SlotBuffers, EngineError> {
    let (count, len) = (cfg.depth.max(1) as usize, cfg.max_io.max(1) as usize);
    let map = if cfg.shared_buffers {
        SlotBuffers::shared
    } else {
        SlotBuffers::new
    };
    map(count, len).map_err(|e| {
        EngineError::Other(format!(
            "cannot map {count} I/O buffers of {len} bytes: {e}"
        ))
    })
}

/// Rejects a request the engine cannot carry out, before it touches a file.
fn check_request(
    req: &IoRequest,
    files: &LocalFiles,
    bufs: &SlotBuffers,
) -> Result<(), EngineError> {
    if req.slot as usize >= bufs.len() {
        return Err(EngineError::Other(format!(
            "slot {} out of range (engine has {} slots)",
            req.slot,
            bufs.len()
        )));
    };
    let Some(path) = files.paths.get(req.file as usize) else {
        return Err(EngineError::Other(format!(
            "file {} out of range (engine has {} files)",
            req.file,
            files.paths.len()
        )));
    };
    if req.offset > i64::MAX as u64 {
        // io_uring would take -1 as "the current file position".
        return Err(EngineError::Other(format!(
            "offset {} of {path} is beyond the largest file offset",
            req.offset
        )));
    }
    if req.len as usize > bufs.slot_len() {
        return Err(EngineError::Other(format!(
            "{} of {} bytes at offset {} of {path} exceeds the slot size {}",
            op_name(req.dir),
            req.len,
            req.offset,
            bufs.slot_len()
        )));
    }
    Ok(())
}

pub(crate) fn op_name(dir: IoDir) -> &'static str {
    match dir {
        IoDir::Read => "read",
        IoDir::Write => "write",
    }
}

/// Builds the completion of `req` from a syscall-style result: bytes
/// transferred, or a negative errno. Anything short of `req.len` is an error.
fn completion(req: &IoRequest, res: i64, files: &LocalFiles) -> Completion {
    let result = if res == i64::from(req.len) {
        Ok(req.len)
    } else {
        let path = files.paths[req.file as usize].clone();
        let op = op_name(req.dir);
        Err(if res < 0 {
            EngineError::Io {
                op,
                path,
                offset: req.offset,
                source: io::Error::from_raw_os_error((-res) as i32),
            }
        } else {
            EngineError::Short {
                op,
                path,
                offset: req.offset,
                done: res as u32,
                want: req.len,
            }
        })
    };
    Completion {
        tag: req.tag,
        slot: req.slot,
        result,
    }
}

/// Which slots have an I/O in flight (submitted and not yet reaped).
pub(crate) struct SlotTable {
    busy: Vec<bool>,
    count: u32,
}

impl SlotTable {
    pub fn new(depth: usize) -> Self {
        Self {
            busy: vec![false; depth],
            count: 0,
        }
    }
    /// Marks `slot` taken; fails if every slot or this one is in flight.
    pub fn take(&mut self, slot: Slot) -> Result<(), EngineError> {
        let depth = self.busy.len() as u32;
        if self.count >= depth {
            return Err(EngineError::Busy(depth));
        }
        let busy = &mut self.busy[slot as usize];
        if *busy {
            return Err(EngineError::Other(format!(
                "slot {slot} already has an I/O in flight"
            )));
        }
        *busy = true;
        self.count += 1;
        Ok(())
    }
    pub fn release(&mut self, slot: Slot) {
        let busy = &mut self.busy[slot as usize];
        if *busy {
            *busy = false;
            self.count -= 1;
        }
    }
    pub fn count(&self) -> u32 {
        self.count
    }
    pub fn is_busy(&self, slot: Slot) -> bool {
        self.busy.get(slot as usize).copied().unwrap_or(false)
    }
}
