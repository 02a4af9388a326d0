//! I/Os submitted and not waited for, as InnoDB issues its background reads and page
//! writes: through one asynchronous ring that the whole process shares under a lock,
//! as InnoDB's thread pool shares its io_uring. The submitter's time is the
//! submission's, which is what `performance_schema` times for such an I/O: on a device
//! that completes in the submitting thread (zram) the whole I/O, behind any other
//! submission holding the lock; on a device with a queue, only the queueing.
//!
//! Each I/O goes through a bounce buffer of the ring's own, so that the submitter's
//! buffer is free at once; a submission that finds every bounce buffer in flight waits
//! for one, as InnoDB waits for a free I/O slot. A failed I/O is reported by the next
//! submission or reap of any user.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use io_uring::types::{SubmitArgs, Timespec};
use io_uring::{opcode, types, IoUring};

use crate::buffer::SlotBuffers;
use crate::{EngineError, IoDir};

/// Bounce buffers, and so I/Os in flight at once (InnoDB's default is 256 per
/// direction; a replay at production's rate keeps few in flight).
const DEPTH: u32 = 64;

/// How long a submission or a drain waits for a bounce buffer before it fails.
const WAIT_LIMIT: Duration = Duration::from_secs(30);
/// One timed wait of the ring for a completion.
const WAIT_STEP_NS: u32 = 100_000_000;

/// Which of an engine's I/Os are submitted this way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Submitted {
    /// Per mille of reads (spread evenly over them); 0: none.
    pub read_permille: u32,
    /// Writes without durability of at most this many bytes (page writes); 0: none.
    pub write_max: u32,
}

impl Submitted {
    pub fn any(&self) -> bool {
        self.read_permille > 0 || self.write_max > 0
    }
}

/// One I/O in flight: where and how much, for the message if it fails.
#[derive(Clone, Copy, Default)]
struct InFlight {
    fd: i32,
    offset: u64,
    len: u32,
    write: bool,
}

struct Ring {
    ring: IoUring,
    bufs: SlotBuffers,
    free: Vec<u32>,
    flights: Vec<InFlight>,
    /// The first failure not yet reported.
    failed: Option<String>,
}

/// Set while `failed` holds something, so that reaps check without the lock.
static FAILED: AtomicBool = AtomicBool::new(false);
static RING: OnceLock<Result<Mutex<Ring>, String>> = OnceLock::new();
/// The ring's buffer size once it is made (0 before), read without its lock.
static BUF_LEN: AtomicU32 = AtomicU32::new(0);

/// The process's ring, made on first use with buffers of `len` bytes (the first size
/// asked wins: a run's engines share one ring).
fn ring(len: u32) -> Result<&'static Mutex<Ring>, EngineError> {
    let r = RING.get_or_init(|| {
        let ring = IoUring::new(DEPTH).map_err(|e| format!("io_uring_setup: {e}"))?;
        let bufs = SlotBuffers::new(DEPTH as usize, len as usize)
            .map_err(|e| format!("{DEPTH} buffers of {len} bytes: {e}"))?;
        BUF_LEN.store(len, Ordering::Release);
        Ok(Mutex::new(Ring {
            ring,
            bufs,
            free: (0..DEPTH).rev().collect(),
            flights: vec![InFlight::default(); DEPTH as usize],
            failed: None,
        }))
    });
    r.as_ref().map_err(|e| {
        EngineError::Unavailable(
            "psync",
            format!("the ring for I/Os submitted and not waited for: {e}"),
        )
    })
}

/// Makes the process's ring for I/Os of up to `len` bytes, so that a run fails before
/// it starts where the kernel refuses io_uring.
pub fn open(len: u32) -> Result<(), EngineError> {
    ring(len).map(|_| ())
}

/// The largest I/O the ring takes, if it is made (0 before).
pub fn max_len() -> u32 {
    BUF_LEN.load(Ordering::Acquire)
}

fn lock(r: &Mutex<Ring>) -> std::sync::MutexGuard<'_, Ring> {
    r.lock().unwrap_or_else(|e| e.into_inner())
}

impl Ring {
    /// Takes every completion ready, freeing their buffers and keeping the first
    /// failure.
    fn reap_ready(&mut self) {
        let done: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (slot, res) in done {
            let Some(f) = self.flights.get(slot as usize).copied() else {
                continue;
            };
            if res != f.len as i32 && self.failed.is_none() {
                let op = if f.write { "write" } else { "read" };
                let why = if res < 0 {
                    std::io::Error::from_raw_os_error(-res).to_string()
                } else {
                    format!("short: {res} of {} bytes", f.len)
                };
                self.failed = Some(format!(
                    "submitted {op} of {} bytes at offset {} (fd {}): {why}",
                    f.len, f.offset, f.fd
                ));
                FAILED.store(true, Ordering::Release);
            }
            self.free.push(slot as u32);
        }
    }

    fn take_failure(&mut self) -> Result<(), EngineError> {
        match self.failed.take() {
            Some(f) => {
                FAILED.store(false, Ordering::Release);
                Err(EngineError::Other(f))
            }
            None => Ok(()),
        }
    }

    /// Waits a little for a completion and takes what is ready; fails once `until`
    /// has passed (the caller loops while it still lacks what it waits for).
    fn wait_one(&mut self, until: Instant) -> Result<(), EngineError> {
        if Instant::now() > until {
            return Err(EngineError::Other(format!(
                "{} submitted I/Os still in flight after {} s",
                DEPTH as usize - self.free.len(),
                WAIT_LIMIT.as_secs()
            )));
        }
        // Timed waits: a completion that never comes cannot hold the lock past `until`.
        let step = Timespec::new().nsec(WAIT_STEP_NS);
        let args = SubmitArgs::new().timespec(&step);
        let waited = if self.ring.params().is_feature_ext_arg() {
            self.ring.submitter().submit_with_args(1, &args)
        } else {
            // A kernel before 5.11 has no timed wait: an untimed one.
            self.ring.submit_and_wait(1)
        };
        match waited {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
            Err(e) => return Err(EngineError::Other(format!("io_uring_enter: {e}"))),
        }
        self.reap_ready();
        Ok(())
    }
}

/// Submits `len` bytes at `offset` of `fd` and returns once the ring has them (not
/// when they are done). A write's bytes are copied from `data` first.
///
/// # Safety
/// `fd` must be open until this returns (the ring holds its own reference to the file
/// afterwards); for a write, `data` must be valid for `len` bytes.
pub unsafe fn submit(
    fd: i32,
    dir: IoDir,
    data: *const u8,
    len: u32,
    offset: u64,
) -> Result<(), EngineError> {
    let r = ring(len)?;
    let mut g = lock(r);
    if len as usize > g.bufs.slot_len() {
        return Err(EngineError::Other(format!(
            "a submitted I/O of {len} bytes is larger than the ring's buffers ({})",
            g.bufs.slot_len()
        )));
    }
    g.reap_ready();
    g.take_failure()?;
    let until = Instant::now() + WAIT_LIMIT;
    while g.free.is_empty() {
        g.wait_one(until)?;
    }
    let Some(slot) = g.free.pop() else {
        return Err(EngineError::Other("no free buffer in the ring".into()));
    };
    let buf = g.bufs.as_mut_ptr(slot as usize);
    let write = dir == IoDir::Write;
    if write {
        // SAFETY: the caller vouches for data; buf is this slot's, len fits (checked).
        unsafe { std::ptr::copy_nonoverlapping(data, buf, len as usize) };
    }
    let sqe = if write {
        opcode::Write::new(types::Fd(fd), buf, len)
            .offset(offset)
            .build()
    } else {
        opcode::Read::new(types::Fd(fd), buf, len)
            .offset(offset)
            .build()
    }
    .user_data(u64::from(slot));
    g.flights[slot as usize] = InFlight {
        fd,
        offset,
        len,
        write,
    };
    // SAFETY: the buffer is the ring's and stays in place until its completion is
    // reaped (the ring lives as long as the process); the queue has room, since no
    // more than DEPTH I/Os are ever in flight.
    let pushed = unsafe { g.ring.submission().push(&sqe) };
    if pushed.is_err() {
        g.free.push(slot);
        return Err(EngineError::Other(
            "the ring's submission queue is full".into(),
        ));
    }
    if let Err(e) = g.ring.submit() {
        return Err(EngineError::Other(format!("io_uring_enter: {e}")));
    }
    Ok(())
}

/// A failure of a submitted I/O not yet reported, if any.
pub fn check() -> Result<(), EngineError> {
    if !FAILED.load(Ordering::Acquire) {
        return Ok(());
    }
    match RING.get() {
        Some(Ok(r)) => lock(r).take_failure(),
        _ => Ok(()),
    }
}

/// Waits until every submitted I/O is done, then reports any failure.
pub fn drain() -> Result<(), EngineError> {
    let Some(Ok(r)) = RING.get() else {
        return Ok(());
    };
    let mut g = lock(r);
    g.reap_ready();
    let until = Instant::now() + WAIT_LIMIT;
    while g.free.len() < DEPTH as usize {
        g.wait_one(until)?;
    }
    g.take_failure()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn submitted_writes_land_and_reads_return_before_they_are_waited_for() {
        let dir = std::env::temp_dir().join(format!("dbio-submitted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        f.write_all(&vec![0u8; 1 << 20]).unwrap();
        if open(16384).is_err() {
            eprintln!("skipped: io_uring is not available here");
            return;
        }
        let page = vec![7u8; 16384];
        // More than the ring holds: submissions wait for buffers and go on.
        for k in 0..(2 * DEPTH as u64) {
            // SAFETY: f is open, page is 16 KiB.
            unsafe {
                submit(
                    f.as_raw_fd(),
                    IoDir::Write,
                    page.as_ptr(),
                    16384,
                    (k % 64) * 16384,
                )
            }
            .unwrap();
            // SAFETY: as above; reads copy nothing in.
            unsafe { submit(f.as_raw_fd(), IoDir::Read, std::ptr::null(), 16384, 0) }.unwrap();
        }
        drain().unwrap();
        let back = std::fs::read(&path).unwrap();
        assert!(
            back[..64 * 16384].iter().all(|&b| b == 7),
            "every page written"
        );
        assert!(back[64 * 16384..].iter().all(|&b| b == 0), "nothing beyond");
        // A read past a bad descriptor fails, and says so on the next call.
        // SAFETY: -1 is no file; the kernel refuses it.
        let first = unsafe { submit(-1, IoDir::Read, std::ptr::null(), 4096, 0) };
        let next = first.and_then(|_| drain());
        let msg = next.unwrap_err().to_string();
        assert!(msg.contains("submitted read of 4096 bytes"), "{msg}");
        assert!(check().is_ok(), "reported once");
        std::fs::remove_dir_all(&dir).ok();
    }
}
