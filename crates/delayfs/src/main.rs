//! dbio-delayfs: a storage with a known extra latency.
//!
//! A FUSE file system that serves one image file (MOUNT/NAME) from a backing
//! file on a real disk: every read, write, fsync, flush and fallocate first
//! sleeps a fixed delay, then goes to the backing file, opened with O_DIRECT so
//! that the disk itself is hit. A loop device with direct I/O on the image, and
//! a file system on the loop device, then make a block device whose every I/O
//! costs the delay on top of the disk's own latency (scripts/delay-storage does
//! that). Requests are served by several threads at once (--threads); beyond
//! that they wait in the kernel.
//!
//! Runs as root (mounts with mount(2), no fusermount needed). Ends on SIGTERM,
//! SIGINT or SIGHUP (unmounting) and when the file system is unmounted.

mod fs;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fuser::{Config, MountOption, Session};

use crate::fs::{Backing, Counts, DelayFs};

const USAGE: &str = "usage: dbio-delayfs --backing FILE --mount DIR [--delay-us N (300)] \
[--threads N (8)] [--name NAME (image)] [--fopen-direct-io]";
/// How long a signalled daemon waits for its users to let go after unmounting.
const EXIT_WAIT: Duration = Duration::from_secs(5);

struct Args {
    backing: PathBuf,
    mount: PathBuf,
    delay_us: u64,
    threads: usize,
    name: String,
    fopen_direct_io: bool,
}

fn parse(mut it: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let mut backing = None;
    let mut mount = None;
    let mut a = Args {
        backing: PathBuf::new(),
        mount: PathBuf::new(),
        delay_us: 300,
        threads: 8,
        name: "image".into(),
        fopen_direct_io: false,
    };
    while let Some(flag) = it.next() {
        let flag = flag.to_string_lossy().into_owned();
        if flag == "--fopen-direct-io" {
            a.fopen_direct_io = true;
            continue;
        }
        if flag == "-h" || flag == "--help" {
            return Err(USAGE.into());
        }
        let val = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |max: u64| -> Result<u64, String> {
            val.to_str()
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| *v <= max)
                .ok_or_else(|| format!("{flag}: {val:?} is not a number up to {max}"))
        };
        match flag.as_str() {
            "--backing" => backing = Some(PathBuf::from(&val)),
            "--mount" => mount = Some(PathBuf::from(&val)),
            "--delay-us" => a.delay_us = num(10_000_000)?,
            "--threads" => a.threads = num(64)?.max(1) as usize,
            "--name" => {
                let n = val.to_string_lossy().into_owned();
                if n.is_empty() || n.contains('/') || n == "." || n == ".." {
                    return Err(format!("--name: {n:?} is not a file name"));
                }
                a.name = n;
            }
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    a.backing = backing.ok_or_else(|| format!("--backing is needed\n{USAGE}"))?;
    a.mount = mount.ok_or_else(|| format!("--mount is needed\n{USAGE}"))?;
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse(std::env::args_os().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("dbio-delayfs: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dbio-delayfs: {e}");
            ExitCode::FAILURE
        }
    }
}

fn stop_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set before sigaddset uses it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Unmounts the FUSE file system; when something still holds it (a loop
/// device not yet detached), detaches it lazily so that the daemon can end.
fn unmount(mount: &Path) {
    let Ok(c) = std::ffi::CString::new(mount.as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
        return;
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EBUSY) {
        eprintln!(
            "dbio-delayfs: {} is busy: detaching it lazily",
            mount.display()
        );
        // SAFETY: as above.
        unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    } else if e.raw_os_error() != Some(libc::EINVAL) {
        eprintln!("dbio-delayfs: unmount {}: {e}", mount.display());
    }
}

fn summary(c: &Counts) {
    eprintln!(
        "dbio-delayfs: served {} reads, {} writes, {} syncs ({} not O_DIRECT), {} errors",
        c.reads.load(Ordering::Relaxed),
        c.writes.load(Ordering::Relaxed),
        c.syncs.load(Ordering::Relaxed),
        c.buffered.load(Ordering::Relaxed),
        c.errors.load(Ordering::Relaxed),
    );
}

fn run(a: &Args) -> Result<(), String> {
    // Blocked before any thread starts, so every thread inherits the mask and
    // the signals wait for sigtimedwait below instead of killing the process
    // with the file system still mounted.
    let set = stop_signals();
    // SAFETY: a valid set; the old mask is not wanted.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    // The default timer slack (50 µs) would lengthen every delay by a varying
    // amount; threads inherit this setting.
    // SAFETY: PR_SET_TIMERSLACK takes one integer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };

    let (backing, why) =
        Backing::open(&a.backing).map_err(|e| format!("{}: {e}", a.backing.display()))?;
    if let Some(why) = why {
        eprintln!(
            "dbio-delayfs: {}: {why}; serving it buffered: reads may come from the page cache instead of the disk",
            a.backing.display()
        );
    }
    let direct = backing.is_direct();
    let counts = Arc::new(Counts::default());
    let delay = Duration::from_micros(a.delay_us);
    let fs = DelayFs::new(backing, &a.name, delay, a.fopen_direct_io, counts.clone());

    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("dbio-delayfs".into()),
        MountOption::Subtype("dbio-delayfs".into()),
    ];
    config.n_threads = Some(a.threads);
    // Each thread reads requests from its own clone of /dev/fuse.
    config.clone_fd = true;
    let session = Session::new(fs, &a.mount, &config)
        .map_err(|e| format!("mount at {}: {e}", a.mount.display()))?;
    eprintln!(
        "dbio-delayfs: serving {} as {} (delay {} µs, {}, {} threads{})",
        a.backing.display(),
        a.mount.join(&a.name).display(),
        a.delay_us,
        if direct { "O_DIRECT" } else { "buffered" },
        a.threads,
        if a.fopen_direct_io {
            ", FOPEN_DIRECT_IO"
        } else {
            ""
        },
    );
    let bg = session.spawn().map_err(|e| format!("start: {e}"))?;

    let mut signalled = false;
    while !bg.guard.is_finished() {
        let tick = libc::timespec {
            tv_sec: 0,
            tv_nsec: 200_000_000,
        };
        // SAFETY: a valid set and timeout; the siginfo is not wanted.
        let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &tick) };
        if sig > 0 {
            eprintln!(
                "dbio-delayfs: signal {sig}: unmounting {}",
                a.mount.display()
            );
            signalled = true;
            break;
        }
    }
    if signalled {
        unmount(&a.mount);
        let deadline = Instant::now() + EXIT_WAIT;
        while !bg.guard.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !bg.guard.is_finished() {
            // Ending the process closes /dev/fuse, which ends the connection.
            eprintln!(
                "dbio-delayfs: still in use {} s after unmounting: exiting anyway",
                EXIT_WAIT.as_secs()
            );
            summary(&counts);
            return Ok(());
        }
    }
    let res = bg.join();
    summary(&counts);
    res.map_err(|e| format!("serving: {e}"))
}
