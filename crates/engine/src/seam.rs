//! The engine seam: what a caller asks of an engine (the requests, the completions,
//! the configuration, the errors) and the `Engine` trait every engine implements,
//! local or NFS. Below the engines and the factory in lib.rs that opens them.

use std::path::PathBuf;
use std::time::Duration;

/// Index of a file in the list the engine was opened with.
pub type FileId = u32;
/// Index of a buffer slot owned by the engine, `0..depth`.
pub type Slot = u32;

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoDir {
    Read,
    Write,
}

/// How durable a write is when its completion comes. Reads ignore it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// Done when the file system (or the NFS server) has it, in memory.
    #[default]
    None,
    /// The write itself reaches stable storage (O_DSYNC-like: pwritev2
    /// RWF_DSYNC, NFS FILE_SYNC); redo writes by default.
    Dsync,
    /// Written, then the file is fdatasync'ed; one completion when both are
    /// done, as a database's WAL flush with wal_sync_method=fdatasync.
    Fdatasync,
}

/// One I/O request. `len` bytes at `offset` of file `file`, data in `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    pub file: FileId,
    pub offset: u64,
    pub len: u32,
    pub dir: IoDir,
    pub slot: Slot,
    /// For writes: what must be stable when the I/O completes.
    pub durability: Durability,
    /// Opaque value handed back in the completion (the caller's bookkeeping).
    pub tag: u64,
}

/// A finished I/O.
#[derive(Debug)]
pub struct Completion {
    pub tag: u64,
    pub slot: Slot,
    /// Bytes transferred, or the error.
    pub result: Result<u32, EngineError>,
}

/// What an engine can do; lets the workload adapt without knowing the engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// More than one I/O can be outstanding per engine instance.
    pub async_io: bool,
    /// The engine moves no data (null engine): reads return garbage.
    pub no_data: bool,
}

/// A file to open: its path (local) or name (relative to an NFS export) and size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileSpec {
    pub path: PathBuf,
    pub size: u64,
    /// Through the page cache whatever [`EngineConfig::direct`] says (a WAL
    /// written with pwrite and made durable by fdatasync). Local engines
    /// only: the NFS client has no page cache.
    pub buffered: bool,
    /// O_DIRECT whatever [`EngineConfig::direct`] says (a log kept out of a
    /// run's page cache); wins over `buffered`.
    pub direct: bool,
}

/// How to open the engine.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub files: Vec<FileSpec>,
    /// Buffer slots, i.e. the most I/Os this instance may have outstanding.
    pub depth: u32,
    /// Size of each slot buffer: the largest I/O that will be issued.
    pub max_io: u32,
    /// O_DIRECT (bypass the page cache) for every file not marked
    /// [`FileSpec::buffered`]. Default true; `--buffered` clears it.
    pub direct: bool,
    /// Open files for writing too.
    pub write: bool,
    /// Slot buffers in shared memory, as a database's buffer cache is (PostgreSQL's
    /// shared buffers), so that [`Engine::unmap_buffer`] takes a buffer's pages out of
    /// this process's page tables and keeps them: the next I/O into them faults them
    /// back in, as a backend's read into a buffer it has not mapped does.
    pub shared_buffers: bool,
    /// Reads handed to a pool of this many I/O worker threads, the submitting thread
    /// waiting for the worker's completion, as PostgreSQL 18's backends hand their
    /// reads to its I/O workers (`io_method=worker`); 0: each thread reads itself.
    /// The psync engine only.
    pub io_workers: u32,
    /// Reads shorter than this many bytes the submitting thread does itself, workers
    /// or not: PostgreSQL 18 reads a single block it waits for at once in the backend
    /// (`ReadBuffer` asks `READ_BUFFERS_SYNCHRONOUSLY`, as does a read stream's
    /// one-block fast path), handing only its read streams' larger reads to workers.
    pub io_workers_from: u32,
    /// Files opened through the page cache are advised as read at random
    /// (`POSIX_FADV_RANDOM`), so the kernel reads no more than asked.
    pub no_read_ahead: bool,
    /// I/Os submitted to the process's shared ring and not waited for, as a
    /// database's background threads issue them (psync only; none by default).
    pub submitted: crate::Submitted,
}

/// Engine errors. Messages name what failed and where.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{path}: {source}")]
    Open {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: the file system does not support O_DIRECT (use --buffered)")]
    NoDirect { path: String },
    #[error("{op} at offset {offset} of {path}: {source}")]
    Io {
        op: &'static str,
        path: String,
        offset: u64,
        #[source]
        source: std::io::Error,
    },
    #[error("short {op} at offset {offset} of {path}: {done} of {want} bytes")]
    Short {
        op: &'static str,
        path: String,
        offset: u64,
        done: u32,
        want: u32,
    },
    #[error("engine {0} is not available: {1}")]
    Unavailable(&'static str, String),
    #[error("engine busy: all {0} slots are in flight")]
    Busy(u32),
    #[error("{0}")]
    Other(String),
}

/// The engine interface. One instance is used by one thread.
pub trait Engine: Send {
    /// Short name, as given to `--engine`.
    fn name(&self) -> &'static str;
    fn capabilities(&self) -> Capabilities;
    /// Number of slots (the depth it was opened with).
    fn depth(&self) -> u32;
    /// The buffer of `slot`, to fill before a write or read after a read.
    /// Must not be touched while an I/O on that slot is in flight.
    fn buffer(&mut self, slot: Slot) -> &mut [u8];
    /// Queue one I/O. It may start at once or at the next [`Engine::commit`].
    fn submit(&mut self, req: IoRequest) -> Result<(), EngineError>;
    /// Start everything queued since the last commit (io_uring: one
    /// `io_uring_enter` for the batch). Synchronous engines may do nothing.
    fn commit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
    /// Wait until at least `min` completions are available (or `timeout`
    /// passes), append all available completions to `out`, return how many.
    fn reap(
        &mut self,
        min: usize,
        timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError>;
    /// Number of I/Os submitted and not yet reaped.
    fn in_flight(&self) -> u32;
    /// Takes the first `pages` pages of slot `slot`'s buffer out of the page tables
    /// (shared buffers only, with no I/O in flight on the slot): the next I/O into them
    /// takes a minor fault per page. False where the engine cannot.
    fn unmap_buffer(&mut self, _slot: Slot, _pages: usize) -> bool {
        false
    }
}

/// The engines that `--engine` can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// Synchronous pread/pwrite, one I/O at a time per user.
    Psync,
    /// io_uring: many outstanding I/Os per thread.
    IoUring,
    /// No device behind it: measures the engine and workload overhead.
    Null,
    /// dbio's own NFS client; opened through a [`Backend`] that holds the
    /// connections shared by every user of a run.
    Nfs,
}

impl EngineKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "psync" | "sync" => Some(Self::Psync),
            "io_uring" | "uring" | "io-uring" => Some(Self::IoUring),
            "null" => Some(Self::Null),
            "nfs" => Some(Self::Nfs),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Psync => "psync",
            Self::IoUring => "io_uring",
            Self::Null => "null",
            Self::Nfs => "nfs",
        }
    }
}

/// Opens engines on storage that needs state shared by all users of a run
/// (the NFS connection pool): each user's engine comes from the same backend.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// Short name of the engines it opens ("nfs").
    fn name(&self) -> &'static str;
    fn open(&self, cfg: &EngineConfig) -> Result<Box<dyn Engine>, EngineError>;
}
