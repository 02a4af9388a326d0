//! The io_uring engine: one ring per engine instance, as deep as its slots.
//!
//! CPU per I/O is what this engine is judged on, so the hot path allocates
//! nothing and makes as few system calls as it can: slot buffers and files
//! are registered once (READ_FIXED/WRITE_FIXED on fixed files), submit
//! starts an I/O at once only while the device has little to do and
//! otherwise sends a few queued I/Os per `io_uring_enter` (the rest of a
//! refill at commit), completions are run by this thread when it asks for them (deferred task
//! work: no interrupt of the thread per completion), and reap drains every
//! ready CQE before it considers waiting.
//!
//! A Fdatasync write is two linked SQEs, the write (IOSQE_IO_LINK) and an
//! fsync with DATASYNC that starts when the write is done; the caller sees
//! one completion, once both CQEs are in.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::local::LocalSlots;
use crate::{
    Capabilities, Completion, Durability, Engine, EngineConfig, EngineError, IoDir, IoRequest, Slot,
};

/// Most slots one ring takes: fixed buffer indexes are 16 bits and the
/// kernel registers at most 16384 buffers.
pub const MAX_DEPTH: u32 = 16384;

/// How long drop waits for I/Os still in flight before it gives up on them.
const DRAIN_ON_DROP: Duration = Duration::from_secs(30);
/// user_data of the cancel issued on drop: no slot has this number.
const CANCEL_TAG: u64 = u64::MAX;
/// Set in the user_data of a Fdatasync write's fsync (the slot is below).
const FLUSH_HALF: u64 = 1 << 32;

/// A Fdatasync write in flight: its CQEs still to come and their results.
#[derive(Clone, Copy, Default)]
struct Pair {
    left: u8,
    written: i64,
    flushed: i64,
}

pub struct UringEngine {
    // Declared first so the ring is torn down before the buffers it uses.
    ring: IoUring<squeue::Entry, cqueue::Entry>,
    io: LocalSlots,
    /// The request in flight on each slot (user_data is the slot number).
    reqs: Vec<IoRequest>,
    /// Per slot, the halves of a Fdatasync write (see [`flushed`]).
    pairs: Vec<Pair>,
    /// SQEs queued since the last commit.
    queued: u32,
    /// I/Os among them (a Fdatasync write is two SQEs, one I/O).
    queued_ios: u32,
    /// See [`UringOptions::kick_below`].
    kick_below: u32,
    /// See [`UringOptions::submit_batch`].
    submit_batch: u32,
    /// The ring was created disabled for a single issuer: the first thread
    /// that enters it enables it and becomes that issuer (engines are
    /// opened on one thread and driven on another).
    enable_pending: bool,
    /// Buffers and files could be registered (else plain READ/WRITE on fds).
    fixed_bufs: bool,
    fixed_files: bool,
}

/// What to register with the ring. Both are on by default; turning them
/// off exists to measure what they save.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UringOptions {
    pub register_buffers: bool,
    pub register_files: bool,
    /// `submit` starts its I/O at once (its own `io_uring_enter`) while
    /// fewer than this many I/Os are in the device; above it the I/O waits
    /// for `commit`, which starts the batch in one call. A device that
    /// finishes its whole queue before it signals (a virtual disk served by
    /// one thread) sits idle while a full refill is prepared, so its first
    /// few I/Os go at once; the rest cost one system call per batch, not
    /// one per I/O (BENCHMARKS.md). 0: only at commit; `u32::MAX`: every
    /// I/O at submit.
    pub kick_below: u32,
    /// Completions are run by this thread when it enters the ring to reap
    /// (IORING_SETUP_DEFER_TASKRUN with SINGLE_ISSUER, as fio sets),
    /// instead of interrupting it for each one. Falls back to the plain
    /// ring on kernels before 6.1.
    pub defer_taskrun: bool,
    /// `submit` starts what is queued once this many I/Os wait, instead of
    /// leaving a whole refill for `commit`. A virtual disk gave fewer IOPS
    /// when refills of tens of I/Os reached it in one call than when they
    /// came a few at a time (BENCHMARKS.md: at 64 outstanding, 16 I/Os per
    /// call 0.91x of fio with one per call; 4 per call 1.02x), and a few
    /// per call still keep the system calls per I/O low. 0: no cap.
    pub submit_batch: u32,
}

/// See [`UringOptions::kick_below`]: enough queued in the device to keep
/// it busy while the rest of a refill is prepared and sent.
pub const KICK_BELOW: u32 = 8;

/// See [`UringOptions::submit_batch`].
pub const SUBMIT_BATCH: u32 = 4;

impl Default for UringOptions {
    fn default() -> Self {
        Self {
            register_buffers: true,
            register_files: true,
            kick_below: KICK_BELOW,
            defer_taskrun: true,
            submit_batch: SUBMIT_BATCH,
        }
    }
}

impl UringEngine {
    pub fn open(cfg: &EngineConfig) -> Result<Self, EngineError> {
        Self::open_with(cfg, UringOptions::default())
    }

    pub fn open_with(cfg: &EngineConfig, opts: UringOptions) -> Result<Self, EngineError> {
        let depth = cfg.depth.max(1);
        if depth > MAX_DEPTH {
            return Err(EngineError::Other(format!(
                "io_uring depth {depth} exceeds the maximum of {MAX_DEPTH}"
            )));
        }
        let ring = new_ring(depth, opts.defer_taskrun)?;
        let enable_pending = ring.params().is_setup_single_issuer();
        let io = LocalSlots::open(cfg)?;

        let iovecs: Vec<libc::iovec> = (0..io.bufs.len())
            .map(|slot| libc::iovec {
                iov_base: io.bufs.as_mut_ptr(slot).cast(),
                iov_len: io.bufs.slot_len(),
            })
            .collect();
        // SAFETY: the buffers live in self.io, which outlives the ring
        // (field order, and Drop waits for in-flight I/O).
        // Registration can fail on a low RLIMIT_MEMLOCK; plain reads into the
        // same buffers still work, only a little more CPU per I/O.
        let fixed_bufs =
            opts.register_buffers && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let fds: Vec<i32> = io.files.files.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_files =
            opts.register_files && !fds.is_empty() && ring.submitter().register_files(&fds).is_ok();

        let reqs = vec![
            IoRequest {
                file: 0,
                offset: 0,
                len: 0,
                dir: IoDir::Read,
                slot: 0,
                durability: Durability::None,
                tag: 0,
            };
            io.bufs.len()
        ];
        Ok(Self {
            ring,
            pairs: vec![Pair::default(); io.bufs.len()],
            io,
            reqs,
            queued: 0,
            queued_ios: 0,
            kick_below: opts.kick_below,
            submit_batch: match opts.submit_batch {
                0 => u32::MAX,
                n => n,
            },
            enable_pending,
            fixed_bufs,
            fixed_files,
        })
    }

    /// Whether slot buffers and files are registered with the ring.
    pub fn registered(&self) -> (bool, bool) {
        (self.fixed_bufs, self.fixed_files)
    }

    fn sqe(&mut self, req: &IoRequest) -> squeue::Entry {
        let buf = self.io.bufs.as_mut_ptr(req.slot as usize);
        let flags = if req.durability == Durability::Dsync {
            libc::RWF_DSYNC
        } else {
            0
        };
        let raw_fd = self.io.files.files[req.file as usize].as_raw_fd();
        macro_rules! build {
            ($fd:expr) => {
                match (req.dir, self.fixed_bufs) {
                    (IoDir::Read, true) => {
                        opcode::ReadFixed::new($fd, buf, req.len, req.slot as u16)
                            .offset(req.offset)
                            .build()
                    }
                    (IoDir::Read, false) => opcode::Read::new($fd, buf, req.len)
                        .offset(req.offset)
                        .build(),
                    (IoDir::Write, true) => {
                        opcode::WriteFixed::new($fd, buf, req.len, req.slot as u16)
                            .offset(req.offset)
                            .rw_flags(flags)
                            .build()
                    }
                    (IoDir::Write, false) => opcode::Write::new($fd, buf, req.len)
                        .offset(req.offset)
                        .rw_flags(flags)
                        .build(),
                }
            };
        }
        let sqe = if self.fixed_files {
            build!(types::Fixed(req.file))
        } else {
            build!(types::Fd(raw_fd))
        };
        sqe.user_data(u64::from(req.slot))
    }

    /// The fdatasync of the whole file that follows `req`'s write.
    fn flush_sqe(&self, req: &IoRequest) -> squeue::Entry {
        let sqe = if self.fixed_files {
            opcode::Fsync::new(types::Fixed(req.file))
        } else {
            opcode::Fsync::new(types::Fd(
                self.io.files.files[req.file as usize].as_raw_fd(),
            ))
        };
        sqe.flags(types::FsyncFlags::DATASYNC)
            .build()
            .user_data(u64::from(req.slot) | FLUSH_HALF)
    }

    /// Moves a completion for every I/O whose CQEs are all in into `out`;
    /// returns how many.
    fn drain(&mut self, out: &mut Vec<Completion>) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion() {
            let data = cqe.user_data();
            if data == CANCEL_TAG {
                continue; // the cancel issued on drop
            }
            let slot = (data & !FLUSH_HALF) as usize;
            let Some(req) = self.reqs.get(slot) else {
                continue;
            };
            let res = i64::from(cqe.result());
            if !flushed(req) {
                out.push(self.io.finish(req, res));
                n += 1;
                continue;
            }
            // The halves may come in either order; a failed or short write
            // gets its fsync cancelled (-ECANCELED), and the write's result
            // is what the caller hears.
            let pair = &mut self.pairs[slot];
            if data & FLUSH_HALF != 0 {
                pair.flushed = res;
            } else {
                pair.written = res;
            }
            pair.left = pair.left.saturating_sub(1);
            if pair.left == 0 {
                out.push(self.io.finish_flushed(req, pair.written, pair.flushed));
                n += 1;
            }
        }
        n
    }

    /// One `io_uring_enter`: submits what is queued and, with a timeout,
    /// waits until `want` CQEs are ready or the timeout passes.
    fn enter(&mut self, want: usize, timeout: Option<Duration>) -> Result<(), EngineError> {
        if self.enable_pending {
            self.ring
                .submitter()
                .register_enable_rings()
                .map_err(|e| EngineError::Other(format!("io_uring enable rings: {e}")))?;
            self.enable_pending = false;
        }
        let res = match timeout {
            Some(t) => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
            None => self.ring.submitter().submit_and_wait(want),
        };
        let res = match res {
            Ok(n) => {
                self.queued = self.queued.saturating_sub(n as u32);
                Ok(())
            }
            // ETIME: the timeout passed; EINTR: a signal; EBUSY: the kernel
            // wants completions reaped first. None is a failure of an I/O.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                // What was queued may or may not have gone: ask the ring.
                self.queued = self.ring.submission().len() as u32;
                Ok(())
            }
            Err(e) => Err(EngineError::Other(format!("io_uring_enter: {e}"))),
        };
        // All queued SQEs go in the usual case; when some stay, at most as
        // many I/Os as SQEs stay (a bound that errs towards starting I/O).
        self.queued_ios = self.queued_ios.min(self.queued);
        res
    }
}

/// A write made durable by an fdatasync linked after it.
fn flushed(req: &IoRequest) -> bool {
    req.dir == IoDir::Write && req.durability == Durability::Fdatasync
}

/// Now plus `timeout`, or a year from now for a timeout too long to add.
fn far_deadline(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(Duration::from_secs(365 * 24 * 3600)))
        .unwrap_or(now)
}

/// Creates the ring, or says why io_uring cannot be used here. With
/// `defer`, completions wait for this thread's next enter (created
/// disabled, see [`UringEngine::enable_pending`]); a kernel without those
/// flags gets the plain ring.
fn new_ring(depth: u32, defer: bool) -> Result<IoUring, EngineError> {
    // Two SQEs per slot: every I/O may be a write and its linked fsync.
    let entries = (depth * 2).next_power_of_two();
    let build = |defer: bool| {
        let mut b = IoUring::builder();
        // CQEs never outnumber SQEs, so twice the SQ is plenty.
        b.setup_cqsize(entries * 2);
        if defer {
            // TASKRUN_FLAG: a submit that finds completions waiting asks
            // for them in the same enter (the io-uring crate looks at it).
            b.setup_coop_taskrun()
                .setup_taskrun_flag()
                .setup_single_issuer()
                .setup_defer_taskrun()
                .setup_r_disabled();
        }
        b.build(entries)
    };
    let ring = match build(defer) {
        Err(e) if defer && e.raw_os_error() == Some(libc::EINVAL) => build(false),
        r => r,
    }
    .map_err(setup_error)?;
    if !ring.params().is_feature_ext_arg() {
        return Err(EngineError::Unavailable(
            "io_uring",
            "the kernel lacks IORING_FEAT_EXT_ARG (waits with a timeout need Linux 5.11)".into(),
        ));
    }
    Ok(ring)
}

/// Why io_uring_setup failed, in words a user can act on.
fn setup_error(e: std::io::Error) -> EngineError {
    let why = match e.raw_os_error() {
        Some(libc::ENOSYS) => "the kernel has no io_uring (io_uring_setup: ENOSYS)".to_string(),
        Some(libc::EPERM) | Some(libc::EACCES) => format!(
            "io_uring_setup refused ({e}): disabled by \
             /proc/sys/kernel/io_uring_disabled or a seccomp policy"
        ),
        _ => format!("io_uring_setup failed: {e}"),
    };
    EngineError::Unavailable("io_uring", why)
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            async_io: true,
            no_data: false,
        }
    }
    fn depth(&self) -> u32 {
        self.io.depth()
    }
    fn buffer(&mut self, slot: Slot) -> &mut [u8] {
        self.io.buffer(slot)
    }
    fn submit(&mut self, req: IoRequest) -> Result<(), EngineError> {
        self.io.begin(&req)?;
        let sqe = self.sqe(&req);
        let s = req.slot as usize;
        self.reqs[s] = req;
        // SAFETY: the SQEs point into this slot's buffer (the fsync at no
        // memory), which stays put and untouched by the engine until the
        // completion is reaped. The SQ has at least two entries per slot and
        // at most `depth` I/Os are in flight, so it cannot be full.
        let (pushed, sqes) = if flushed(&req) {
            self.pairs[s] = Pair {
                left: 2,
                written: 0,
                flushed: 0,
            };
            let pair = [sqe.flags(squeue::Flags::IO_LINK), self.flush_sqe(&req)];
            (unsafe { self.ring.submission().push_multiple(&pair) }, 2)
        } else {
            (unsafe { self.ring.submission().push(&sqe) }, 1)
        };
        if pushed.is_err() {
            self.io.busy.release(req.slot);
            return Err(EngineError::Busy(self.depth()));
        }
        self.queued += sqes;
        self.queued_ios += 1;
        let in_device = self.io.busy.count().saturating_sub(self.queued_ios);
        if in_device < self.kick_below || self.queued_ios >= self.submit_batch {
            return self.enter(0, None);
        }
        Ok(())
    }
    fn commit(&mut self) -> Result<(), EngineError> {
        if self.queued == 0 {
            return Ok(());
        }
        self.enter(0, None)
    }
    fn reap(
        &mut self,
        min: usize,
        timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        let mut n = self.drain(out);
        // Never wait for more than can still come.
        let min = min.min(n + self.io.busy.count() as usize);
        if n >= min && self.queued == 0 {
            return Ok(n);
        }
        let deadline = far_deadline(timeout);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            self.enter(min.saturating_sub(n), Some(left))?;
            n += self.drain(out);
            if n >= min || left.is_zero() || Instant::now() >= deadline {
                return Ok(n);
            }
        }
    }
    fn in_flight(&self) -> u32 {
        self.io.busy.count()
    }
    fn unmap_buffer(&mut self, slot: Slot, pages: usize) -> bool {
        self.io.unmap(slot, pages)
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // The kernel may still write into slot buffers: wait for every
        // outstanding I/O before they are freed, and leak them if it hangs.
        if self.io.busy.count() > 0 {
            // Reads that may never finish (a pipe, a hung device) are
            // cancelled; disk I/O that cannot be cancelled just completes.
            let cancel = opcode::AsyncCancel2::new(types::CancelBuilder::any())
                .build()
                .user_data(CANCEL_TAG);
            // SAFETY: the cancel SQE points at no memory.
            let _ = unsafe { self.ring.submission().push(&cancel) };
        }
        let deadline = Instant::now() + DRAIN_ON_DROP;
        let mut sink = Vec::new();
        while self.io.busy.count() > 0 && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.enter(1, Some(left)).is_err() {
                break;
            }
            self.drain(&mut sink);
            sink.clear();
        }
        if self.io.busy.count() > 0 {
            self.io.bufs.leak();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_errors_say_why() {
        let e = setup_error(std::io::Error::from_raw_os_error(libc::ENOSYS));
        assert!(e.to_string().contains("no io_uring"), "{e}");
        let e = setup_error(std::io::Error::from_raw_os_error(libc::EPERM));
        assert!(e.to_string().contains("io_uring_disabled"), "{e}");
        assert!(matches!(e, EngineError::Unavailable("io_uring", _)));
    }

    #[test]
    fn too_deep_is_refused() {
        let cfg = EngineConfig {
            files: vec![],
            depth: MAX_DEPTH + 1,
            max_io: 4096,
            direct: true,
            write: false,
            shared_buffers: false,
            io_workers: 0,
            io_workers_from: 0,
            submitted: Default::default(),
            no_read_ahead: false,
        };
        assert!(UringEngine::open(&cfg).is_err());
    }
}
