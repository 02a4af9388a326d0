//! The psync engine: each submit is one pread or pwrite, done before submit
//! returns; the completion waits in a queue for the next reap. Dsync writes
//! use pwritev2 with RWF_DSYNC, so only that write is made durable;
//! Fdatasync writes are a pwrite then an fdatasync of the file, as
//! PostgreSQL flushes its WAL.

use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::local::LocalSlots;
use crate::{
    Capabilities, Completion, Durability, Engine, EngineConfig, EngineError, IoDir, IoRequest, Slot,
};

pub struct PsyncEngine {
    io: LocalSlots,
    /// Reads handed to I/O workers (`EngineConfig::io_workers`).
    handoff: Option<crate::io_workers::Handoff>,
    /// The shortest read handed off (`EngineConfig::io_workers_from`).
    handoff_from: u32,
    /// I/Os submitted to the process's ring and not waited for
    /// (`EngineConfig::submitted`), and the reads' share carried over.
    submitted: crate::Submitted,
    read_carry: u32,
    /// Finished requests, their results and (Fdatasync writes) the
    /// flush's, waiting for reap.
    done: VecDeque<(IoRequest, i64, i64)>,
}

impl PsyncEngine {
    pub fn open(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let io = LocalSlots::open(cfg)?;
        if cfg.submitted.any() {
            crate::submitted::open(cfg.max_io)?;
        }
        Ok(Self {
            done: VecDeque::with_capacity(io.bufs.len()),
            io,
            handoff: (cfg.io_workers > 0).then(|| crate::io_workers::Handoff::new(cfg.io_workers)),
            handoff_from: cfg.io_workers_from,
            submitted: cfg.submitted,
            read_carry: 0,
        })
    }

    /// Whether `req` goes to the ring of I/Os not waited for: the asked share of the
    /// reads, spread evenly; page writes.
    fn goes_to_ring(&mut self, req: &IoRequest) -> bool {
        let s = self.submitted;
        match req.dir {
            IoDir::Read if s.read_permille > 0 => {
                self.read_carry += s.read_permille.min(1000);
                let go = self.read_carry >= 1000;
                if go {
                    self.read_carry -= 1000;
                }
                go && req.len <= crate::submitted::max_len()
            }
            IoDir::Write => {
                req.durability == Durability::None
                    && req.len <= s.write_max.min(crate::submitted::max_len())
            }
            IoDir::Read => false,
        }
    }

    /// One system call for `req`; returns bytes moved or a negative errno.
    fn transfer(&mut self, req: &IoRequest) -> Result<i64, EngineError> {
        let fd = self.io.files.files[req.file as usize].as_raw_fd();
        let buf = self.io.bufs.as_mut_ptr(req.slot as usize);
        let len = req.len as usize;
        let offset = req.offset as libc::off_t;
        if self.goes_to_ring(req) {
            // SAFETY: fd is open for the call; buf holds len bytes (checked against the
            // slot size) for a write.
            unsafe { crate::submitted::submit(fd, req.dir, buf, req.len, req.offset) }?;
            return Ok(i64::from(req.len));
        }
        if let (Some(h), IoDir::Read, true) = (&self.handoff, req.dir, req.len >= self.handoff_from)
        {
            // SAFETY: as below; the worker is done with buf when this returns.
            return Ok(unsafe { h.pread(fd, buf.cast(), len, offset) });
        }
        loop {
            // SAFETY: buf is valid for len bytes (checked against the slot
            // size) and not used elsewhere while the call runs.
            let res = unsafe {
                match (req.dir, req.durability) {
                    (IoDir::Read, _) => libc::pread(fd, buf.cast(), len, offset),
                    (IoDir::Write, Durability::None | Durability::Fdatasync) => {
                        libc::pwrite(fd, buf.cast(), len, offset)
                    }
                    (IoDir::Write, Durability::Dsync) => {
                        let iov = libc::iovec {
                            iov_base: buf.cast(),
                            iov_len: len,
                        };
                        libc::pwritev2(fd, &iov, 1, offset, libc::RWF_DSYNC)
                    }
                }
            };
            if res >= 0 {
                return Ok(res as i64);
            }
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if errno != libc::EINTR {
                return Ok(-i64::from(errno));
            }
        }
    }

    /// fdatasync of `req`'s file: 0 or a negative errno.
    fn flush(&self, req: &IoRequest) -> i64 {
        let fd = self.io.files.files[req.file as usize].as_raw_fd();
        loop {
            // SAFETY: fd is an open file of this engine.
            if unsafe { libc::fdatasync(fd) } == 0 {
                return 0;
            }
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if errno != libc::EINTR {
                return -i64::from(errno);
            }
        }
    }
}

/// A write that is made durable by an fdatasync after it.
fn flushed(req: &IoRequest) -> bool {
    req.dir == IoDir::Write && req.durability == Durability::Fdatasync
}

impl Engine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            async_io: false,
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
        let res = match self.transfer(&req) {
            Ok(r) => r,
            Err(e) => {
                self.io.busy.release(req.slot);
                return Err(e);
            }
        };
        // A write that fell short is reported as such: no flush for it.
        let flush = if flushed(&req) && res == i64::from(req.len) {
            self.flush(&req)
        } else {
            0
        };
        self.done.push_back((req, res, flush));
        Ok(())
    }
    fn reap(
        &mut self,
        _min: usize,
        _timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        // Every I/O finished inside submit (or was handed to the ring, whose failures
        // come back here): there is never anything to wait for.
        if self.submitted.any() {
            crate::submitted::check()?;
        }
        let n = self.done.len();
        for (req, res, flush) in self.done.drain(..) {
            out.push(self.io.finish_flushed(&req, res, flush));
        }
        Ok(n)
    }
    fn in_flight(&self) -> u32 {
        self.io.busy.count()
    }
    fn unmap_buffer(&mut self, slot: Slot, pages: usize) -> bool {
        self.io.unmap(slot, pages)
    }
}
