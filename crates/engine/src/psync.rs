//! The psync engine: each submit is one pread or pwrite, done before submit
//! returns; the completion waits in a queue for the next reap. Sync writes
//! use pwritev2 with RWF_DSYNC, so only that write is made durable.

use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::local::LocalSlots;
use crate::{Capabilities, Completion, Engine, EngineConfig, EngineError, IoDir, IoRequest, Slot};

pub struct PsyncEngine {
    io: LocalSlots,
    /// Finished requests and their results, waiting for reap.
    done: VecDeque<(IoRequest, i64)>,
}

impl PsyncEngine {
    pub fn open(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let io = LocalSlots::open(cfg)?;
        Ok(Self {
            done: VecDeque::with_capacity(io.bufs.len()),
            io,
        })
    }

    /// One system call for `req`; returns bytes moved or a negative errno.
    fn transfer(&mut self, req: &IoRequest) -> i64 {
        let fd = self.io.files.files[req.file as usize].as_raw_fd();
        let buf = self.io.bufs[req.slot as usize].as_mut_ptr();
        let len = req.len as usize;
        let offset = req.offset as libc::off_t;
        loop {
            // SAFETY: buf is valid for len bytes (checked against the slot
            // size) and not used elsewhere while the call runs.
            let res = unsafe {
                match (req.dir, req.sync) {
                    (IoDir::Read, _) => libc::pread(fd, buf.cast(), len, offset),
                    (IoDir::Write, false) => libc::pwrite(fd, buf.cast(), len, offset),
                    (IoDir::Write, true) => {
                        let iov = libc::iovec {
                            iov_base: buf.cast(),
                            iov_len: len,
                        };
                        libc::pwritev2(fd, &iov, 1, offset, libc::RWF_DSYNC)
                    }
                }
            };
            if res >= 0 {
                return res as i64;
            }
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if errno != libc::EINTR {
                return -i64::from(errno);
            }
        }
    }
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
        let res = self.transfer(&req);
        self.done.push_back((req, res));
        Ok(())
    }
    fn reap(
        &mut self,
        _min: usize,
        _timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        // Every I/O finished inside submit: there is never anything to wait for.
        let n = self.done.len();
        for (req, res) in self.done.drain(..) {
            out.push(self.io.finish(&req, res));
        }
        Ok(n)
    }
    fn in_flight(&self) -> u32 {
        self.io.busy.count()
    }
}
