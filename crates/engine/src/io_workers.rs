//! I/O workers: a pool of threads that do reads handed to them, each submitter waiting
//! for its read's completion, as PostgreSQL 18's backends hand reads to its I/O worker
//! processes (`io_method=worker`). The hand-off costs two wake-ups, the worker's and
//! the submitter's, which a read served by the page cache otherwise never pays.

use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// One read handed over: raw descriptor and buffer, valid until its completion is
/// taken (the submitter waits for it and touches neither meanwhile).
struct Job {
    fd: i32,
    buf: usize,
    len: usize,
    offset: i64,
    done: Arc<Completion>,
}

/// Where a worker leaves a read's result for its submitter.
#[derive(Default)]
pub struct Completion {
    result: Mutex<Option<i64>>,
    ready: Condvar,
}

/// The process's pool: jobs wait in one queue, as in PostgreSQL's submission queue.
struct Pool {
    queue: Mutex<std::collections::VecDeque<Job>>,
    work: Condvar,
    /// Threads started: with none, a submitter reads itself.
    started: u32,
}

static POOL: OnceLock<Arc<Pool>> = OnceLock::new();

/// The process's pool of `workers` threads, started on first use (the first count
/// asked wins: a run's users share one pool).
fn pool(workers: u32) -> &'static Arc<Pool> {
    POOL.get_or_init(|| {
        let mut p = Pool {
            queue: Mutex::new(std::collections::VecDeque::new()),
            work: Condvar::new(),
            started: 0,
        };
        let n = workers.clamp(1, 32);
        p.started = n;
        let p = Arc::new(p);
        let mut started = 0;
        for i in 0..n {
            let p = p.clone();
            // Detached: the pool lives as long as the process.
            if std::thread::Builder::new()
                .name(format!("dbio-ioworker{i}"))
                .spawn(move || serve(&p))
                .is_ok()
            {
                started += 1;
            }
        }
        if started < n {
            // Rebuilt with the count that runs (no job was queued yet).
            return Arc::new(Pool {
                queue: Mutex::new(std::collections::VecDeque::new()),
                work: Condvar::new(),
                started: 0,
            });
        }
        p
    })
}

fn serve(p: &Pool) {
    loop {
        let job = {
            let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(j) = q.pop_front() {
                    break j;
                }
                q = p.work.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        // SAFETY: the submitter keeps fd open and buf valid for len bytes until it
        // has taken this job's completion.
        let res = unsafe { read_here(job.fd, job.buf as *mut u8, job.len, job.offset) };
        let mut r = job.done.result.lock().unwrap_or_else(|e| e.into_inner());
        *r = Some(res);
        job.done.ready.notify_one();
    }
}

/// pread, again on EINTR: bytes read or a negative errno.
///
/// # Safety
/// `buf` valid for `len` bytes.
unsafe fn read_here(fd: i32, buf: *mut u8, len: usize, offset: i64) -> i64 {
    loop {
        // SAFETY: as the caller promises.
        let r = unsafe { libc::pread(fd, buf.cast(), len, offset) };
        if r >= 0 {
            return r as i64;
        }
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if errno != libc::EINTR {
            return -i64::from(errno);
        }
    }
}

/// A submitter's side: reads handed to the pool one at a time.
pub struct Handoff {
    workers: u32,
    done: Arc<Completion>,
}

impl Handoff {
    pub fn new(workers: u32) -> Self {
        Handoff {
            workers,
            done: Arc::new(Completion::default()),
        }
    }

    /// `pread(fd, buf, len, offset)` done by a worker; bytes read or a negative errno.
    ///
    /// # Safety
    /// `buf` must be valid for `len` bytes and `fd` open until this returns.
    pub unsafe fn pread(&self, fd: i32, buf: *mut u8, len: usize, offset: i64) -> i64 {
        let p = pool(self.workers);
        if p.started == 0 {
            // SAFETY: as the caller promises.
            return unsafe { read_here(fd, buf, len, offset) };
        }
        *self.done.result.lock().unwrap_or_else(|e| e.into_inner()) = None;
        p.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(Job {
                fd,
                buf: buf as usize,
                len,
                offset,
                done: self.done.clone(),
            });
        p.work.notify_one();
        let mut r = self.done.result.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(v) = r.take() {
                return v;
            }
            r = self.done.ready.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_worker_reads_what_the_file_holds_and_errors_come_back() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"0123456789").unwrap();
        let h = Handoff::new(2);
        let mut buf = [0u8; 4];
        // SAFETY: buf and f outlive the call.
        let n = unsafe { h.pread(f.as_raw_fd(), buf.as_mut_ptr(), 4, 3) };
        assert_eq!((n, &buf), (4, b"3456"));
        let n = unsafe { h.pread(-1, buf.as_mut_ptr(), 4, 0) };
        assert_eq!(n, -i64::from(libc::EBADF));
    }
}
