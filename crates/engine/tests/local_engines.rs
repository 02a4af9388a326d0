//! The psync and io_uring engines against real files on a disk file system
//! (the target directory, never /dev/shm).

use std::collections::HashSet;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dbio_engine::uring::{UringEngine, UringOptions};
use dbio_engine::{
    open, Completion, Durability, Engine, EngineConfig, EngineError, EngineKind, FileSpec, IoDir,
    IoRequest,
};

const BLOCK: u32 = 8192;
const LOCAL: [EngineKind; 2] = [EngineKind::Psync, EngineKind::IoUring];

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch dir on disk")
}

/// A file of `blocks` zeroed 8 KiB blocks.
fn data_file(dir: &Path, blocks: u64) -> PathBuf {
    let path = dir.join("data");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(blocks * u64::from(BLOCK)).unwrap();
    path
}

fn config(paths: &[&Path], depth: u32, direct: bool) -> EngineConfig {
    EngineConfig {
        files: paths
            .iter()
            .map(|p| FileSpec {
                path: p.to_path_buf(),
                size: std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
                buffered: false,
                direct: false,
            })
            .collect(),
        depth,
        max_io: BLOCK,
        direct,
        write: true,
        shared_buffers: false,
        io_workers: 0,
        io_workers_from: 0,
        submitted: Default::default(),
        no_read_ahead: false,
    }
}

fn req(dir: IoDir, block: u64, slot: u32, sync: bool) -> IoRequest {
    IoRequest {
        file: 0,
        offset: block * u64::from(BLOCK),
        len: BLOCK,
        dir,
        slot,
        durability: if sync {
            Durability::Dsync
        } else {
            Durability::None
        },
        tag: block,
    }
}

/// Fills the byte pattern that marks `block`.
fn pattern(block: u64, buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (block as u8).wrapping_mul(31).wrapping_add(i as u8) | 1;
    }
}

/// Reaps until nothing is in flight; panics on an I/O error.
fn reap_all(e: &mut dyn Engine) -> Vec<Completion> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while e.in_flight() > 0 {
        assert!(Instant::now() < deadline, "I/O did not complete in 10 s");
        e.reap(1, Duration::from_secs(1), &mut out).unwrap();
    }
    for c in &out {
        if let Err(err) = &c.result {
            panic!("I/O tag {} failed: {err}", c.tag);
        }
    }
    out
}

/// Writes `blocks` blocks with every slot busy at once, then reads them back
/// in reverse order and checks every byte, through the engine and the page cache.
fn write_then_read(kind: EngineKind, sync: bool) {
    let dir = scratch();
    let path = data_file(dir.path(), 64);
    let e = open(kind, &config(&[&path], 64, true)).unwrap();
    roundtrip(e, &path, sync);
}

fn roundtrip(mut e: Box<dyn Engine>, path: &Path, sync: bool) {
    let blocks = u64::from(e.depth());
    for block in 0..blocks {
        let slot = block as u32;
        pattern(block, e.buffer(slot));
        e.submit(req(IoDir::Write, block, slot, sync)).unwrap();
    }
    e.commit().unwrap();
    let done = reap_all(e.as_mut());
    assert_eq!(done.len(), blocks as usize);
    let tags: HashSet<u64> = done.iter().map(|c| c.tag).collect();
    assert_eq!(tags.len(), blocks as usize, "every write completes once");

    for (slot, block) in (0..blocks).rev().enumerate() {
        e.buffer(slot as u32).fill(0);
        e.submit(req(IoDir::Read, block, slot as u32, false))
            .unwrap();
    }
    e.commit().unwrap();
    let mut want = vec![0u8; BLOCK as usize];
    for c in reap_all(e.as_mut()) {
        assert_eq!(c.result.as_ref().ok(), Some(&BLOCK));
        pattern(c.tag, &mut want);
        assert!(
            e.buffer(c.slot) == &want[..],
            "block {} read back wrong",
            c.tag
        );
    }
    drop(e);
    let on_disk = std::fs::read(path).unwrap();
    for block in 0..blocks {
        pattern(block, &mut want);
        let at = (block * u64::from(BLOCK)) as usize;
        assert!(
            on_disk[at..at + BLOCK as usize] == want[..],
            "block {block} on disk"
        );
    }
}

#[test]
fn psync_write_then_read() {
    write_then_read(EngineKind::Psync, false);
}

#[test]
fn uring_write_then_read() {
    write_then_read(EngineKind::IoUring, false);
}

#[test]
fn buffered_write_then_read() {
    for kind in LOCAL {
        let dir = scratch();
        let path = data_file(dir.path(), 16);
        let e = open(kind, &config(&[&path], 16, false)).unwrap();
        roundtrip(e, &path, false);
    }
}

#[test]
fn uring_without_registered_buffers_or_files() {
    let dir = scratch();
    let path = data_file(dir.path(), 32);
    let opts = UringOptions {
        register_buffers: false,
        register_files: false,
        ..Default::default()
    };
    let e = UringEngine::open_with(&config(&[&path], 32, true), opts).unwrap();
    assert_eq!(e.registered(), (false, false));
    roundtrip(Box::new(e), &path, true);
    let e = UringEngine::open(&config(&[&path], 32, true)).unwrap();
    assert_eq!(e.registered(), (true, true), "registration works here");
}

#[test]
fn uring_batched_submission_starts_io_at_commit() {
    uring_roundtrip(UringOptions {
        kick_below: 0,
        submit_batch: 0,
        ..Default::default()
    });
}

#[test]
fn uring_each_io_at_submit_on_a_plain_ring() {
    uring_roundtrip(UringOptions {
        kick_below: u32::MAX,
        defer_taskrun: false,
        ..Default::default()
    });
}

/// A roundtrip of 32 outstanding O_DIRECT I/Os through a ring opened with `opts`.
fn uring_roundtrip(opts: UringOptions) {
    let dir = scratch();
    let path = data_file(dir.path(), 32);
    let e = UringEngine::open_with(&config(&[&path], 32, true), opts).unwrap();
    roundtrip(Box::new(e), &path, true);
}

/// The run driver opens engines on its own thread and drives each on a
/// user thread: the ring's single issuer is the thread that first uses it.
#[test]
fn uring_opened_on_one_thread_is_driven_on_another() {
    let dir = scratch();
    let path = data_file(dir.path(), 64);
    let e = UringEngine::open(&config(&[&path], 64, true)).unwrap();
    let e: Box<dyn Engine> = Box::new(e);
    let p = path.clone();
    std::thread::spawn(move || roundtrip(e, &p, false))
        .join()
        .expect("the driving thread");
}

#[test]
fn psync_sync_writes() {
    write_then_read(EngineKind::Psync, true);
}

#[test]
fn uring_sync_writes() {
    write_then_read(EngineKind::IoUring, true);
}

/// A FIFO beside the data file: a read of it stays in flight until the test
/// writes to it, which makes completion order and timeouts deterministic.
fn fifo(dir: &Path) -> PathBuf {
    let path = dir.join("fifo");
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: c is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    path
}

#[test]
fn uring_completes_out_of_order_and_reap_times_out() {
    let dir = scratch();
    let data = data_file(dir.path(), 256);
    let pipe = fifo(dir.path());
    // Buffered: a FIFO takes no O_DIRECT semantics worth testing here.
    let mut e = open(EngineKind::IoUring, &config(&[&data, &pipe], 128, false)).unwrap();

    // Slot 0: the FIFO read, submitted first, done last.
    e.submit(IoRequest {
        file: 1,
        offset: 0,
        len: 5,
        dir: IoDir::Read,
        slot: 0,
        durability: Durability::None,
        tag: 9999,
    })
    .unwrap();
    for slot in 1..128u32 {
        let block = u64::from(slot * 7 % 256);
        e.submit(IoRequest {
            tag: 1000 + u64::from(slot),
            ..req(IoDir::Read, block, slot, false)
        })
        .unwrap();
    }
    assert_eq!(e.in_flight(), 128);
    e.commit().unwrap();

    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while out.len() < 127 {
        assert!(Instant::now() < deadline, "file reads did not complete");
        e.reap(127 - out.len(), Duration::from_secs(1), &mut out)
            .unwrap();
    }
    assert_eq!(out.len(), 127, "everything but the FIFO read completed");
    assert!(out.iter().all(|c| c.tag != 9999 && c.result.is_ok()));
    assert_eq!(e.in_flight(), 1);

    // Nothing more can come: reap must give up at its timeout.
    out.clear();
    let t0 = Instant::now();
    let n = e.reap(1, Duration::from_millis(50), &mut out).unwrap();
    let waited = t0.elapsed();
    assert_eq!(n, 0);
    assert!(
        waited >= Duration::from_millis(45),
        "returned early: {waited:?}"
    );
    assert!(waited < Duration::from_secs(2), "overslept: {waited:?}");
    // A zero timeout does not block either.
    assert_eq!(e.reap(1, Duration::ZERO, &mut out).unwrap(), 0);

    let mut w = std::fs::OpenOptions::new().write(true).open(&pipe).unwrap();
    w.write_all(b"hello").unwrap();
    let n = e.reap(1, Duration::from_secs(5), &mut out).unwrap();
    assert_eq!(n, 1);
    assert_eq!(out[0].tag, 9999);
    assert_eq!(out[0].result.as_ref().ok(), Some(&5));
    assert_eq!(&e.buffer(0)[..5], b"hello");
    assert_eq!(e.in_flight(), 0);
}

#[test]
fn uring_drop_with_io_in_flight_returns() {
    let dir = scratch();
    let pipe = fifo(dir.path());
    let mut e = open(EngineKind::IoUring, &config(&[&pipe], 2, false)).unwrap();
    e.submit(IoRequest {
        file: 0,
        offset: 0,
        len: 5,
        dir: IoDir::Read,
        slot: 0,
        durability: Durability::None,
        tag: 1,
    })
    .unwrap();
    e.commit().unwrap();
    let t0 = Instant::now();
    drop(e); // cancels the read that would never finish
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn busy_when_all_slots_are_in_flight() {
    for kind in LOCAL {
        let dir = scratch();
        let path = data_file(dir.path(), 16);
        let mut e = open(kind, &config(&[&path], 4, true)).unwrap();
        for slot in 0..4 {
            e.submit(req(IoDir::Read, u64::from(slot), slot, false))
                .unwrap();
        }
        let err = e.submit(req(IoDir::Read, 5, 0, false)).unwrap_err();
        assert!(matches!(err, EngineError::Busy(4)), "{kind:?}: {err}");
        e.commit().unwrap();
        assert_eq!(reap_all(e.as_mut()).len(), 4);
        // Slots are free again once reaped.
        e.submit(req(IoDir::Read, 5, 0, false)).unwrap();
        e.commit().unwrap();
        // A slot already in flight is refused even when others are free.
        let err = e.submit(req(IoDir::Read, 6, 0, false)).unwrap_err();
        assert!(err.to_string().contains("slot 0"), "{kind:?}: {err}");
        assert_eq!(reap_all(e.as_mut()).len(), 1);
    }
}

#[test]
fn reap_with_nothing_in_flight_does_not_wait() {
    for kind in LOCAL {
        let dir = scratch();
        let path = data_file(dir.path(), 4);
        let mut e = open(kind, &config(&[&path], 4, true)).unwrap();
        let t0 = Instant::now();
        let mut out = Vec::new();
        assert_eq!(e.reap(4, Duration::from_secs(5), &mut out).unwrap(), 0);
        assert!(t0.elapsed() < Duration::from_secs(1), "{kind:?} waited");
    }
}

#[test]
fn o_direct_refusal_is_no_direct() {
    // procfs cannot do direct I/O on any kernel.
    for kind in LOCAL {
        let mut cfg = config(&[Path::new("/proc/version")], 2, true);
        cfg.write = false;
        match open(kind, &cfg) {
            Err(e @ EngineError::NoDirect { .. }) => {
                assert!(e.to_string().contains("/proc/version"), "{e}");
                assert!(e.to_string().contains("O_DIRECT"), "{e}");
            }
            Err(e) => panic!("{kind:?}: wrong error {e}"),
            Ok(_) => panic!("{kind:?}: O_DIRECT open of procfs succeeded"),
        }
        // Without O_DIRECT the same file opens.
        cfg.direct = false;
        assert!(open(kind, &cfg).is_ok(), "{kind:?} buffered");
    }
}

#[test]
fn tmpfs_either_takes_o_direct_or_says_no_direct() {
    // tmpfs refuses O_DIRECT before Linux 6.6 and accepts it since.
    let Ok(dir) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("note: no /dev/shm, skipped");
        return;
    };
    let path = data_file(dir.path(), 2);
    for kind in LOCAL {
        match open(kind, &config(&[&path], 2, true)) {
            Ok(_) => eprintln!("note: this kernel's tmpfs accepts O_DIRECT"),
            Err(e @ EngineError::NoDirect { .. }) => {
                assert!(e.to_string().contains(path.to_str().unwrap()), "{e}");
            }
            Err(e) => panic!("{kind:?}: wrong error {e}"),
        }
    }
}

#[test]
fn open_error_names_the_path() {
    let dir = scratch();
    let missing = dir.path().join("no-such-file");
    for kind in LOCAL {
        let err = open(kind, &config(&[&missing], 2, true))
            .err()
            .expect("opening a missing file fails");
        assert!(matches!(err, EngineError::Open { .. }), "{err}");
        assert!(err.to_string().contains("no-such-file"), "{err}");
    }
}

/// Submits one I/O and returns its completion error.
fn failing_io(kind: EngineKind, cfg: &EngineConfig, io: IoRequest) -> EngineError {
    let mut e = open(kind, cfg).unwrap();
    e.submit(io).unwrap();
    e.commit().unwrap();
    let mut out = Vec::new();
    e.reap(1, Duration::from_secs(5), &mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].tag, out[0].slot), (io.tag, io.slot));
    assert_eq!(e.in_flight(), 0);
    // Nothing more comes (a flushed write's second half included).
    let more = e.reap(1, Duration::from_millis(20), &mut out).unwrap();
    assert_eq!(more, 0, "{kind:?}: a second completion");
    out.swap_remove(0).result.unwrap_err()
}

#[test]
fn short_read_names_file_and_offset() {
    let dir = scratch();
    let path = data_file(dir.path(), 4);
    let mut cfg = config(&[&path], 2, true);
    cfg.max_io = 2 * BLOCK;
    for kind in LOCAL {
        // The last block, read as two: half of it lies past the end.
        let io = IoRequest {
            len: 2 * BLOCK,
            slot: 1,
            ..req(IoDir::Read, 3, 0, false)
        };
        let err = failing_io(kind, &cfg, io);
        let msg = err.to_string();
        assert!(matches!(err, EngineError::Short { .. }), "{kind:?}: {msg}");
        assert!(msg.contains("data") && msg.contains("24576"), "{msg}");
        assert!(msg.contains("8192 of 16384"), "{msg}");
    }
}

#[test]
fn failed_io_names_file_and_offset() {
    let dir = scratch();
    let path = data_file(dir.path(), 4);
    let mut cfg = config(&[&path], 2, true);
    cfg.write = false;
    for kind in LOCAL {
        // Writing a file opened read-only fails with EBADF.
        let err = failing_io(kind, &cfg, req(IoDir::Write, 2, 1, false));
        let msg = err.to_string();
        assert!(matches!(err, EngineError::Io { .. }), "{kind:?}: {msg}");
        assert!(
            msg.contains("write at offset 16384 of") && msg.contains("data"),
            "{msg}"
        );
    }
}

#[test]
fn bad_requests_are_refused_before_io() {
    let dir = scratch();
    let path = data_file(dir.path(), 4);
    for kind in LOCAL {
        let mut e = open(kind, &config(&[&path], 2, true)).unwrap();
        let too_big = IoRequest {
            len: BLOCK * 2,
            ..req(IoDir::Read, 0, 0, false)
        };
        assert!(e.submit(too_big).is_err());
        assert!(e.submit(req(IoDir::Read, 0, 2, false)).is_err(), "slot");
        let other_file = IoRequest {
            file: 1,
            ..req(IoDir::Read, 0, 0, false)
        };
        assert!(e.submit(other_file).is_err());
        let far = IoRequest {
            offset: u64::MAX,
            ..req(IoDir::Read, 0, 0, false)
        };
        assert!(e.submit(far).is_err());
        assert_eq!(e.in_flight(), 0);
        // An endless timeout with nothing to wait for returns at once.
        let mut out = Vec::new();
        assert_eq!(e.reap(1, Duration::MAX, &mut out).unwrap(), 0);
    }
}

/// A write whose completion waits for an fdatasync of its file, as a WAL
/// flush: 8 at once beside plain writes and reads, twice over the same
/// slots; each I/O completes once, with its bytes, and the data is in the
/// file.
fn flushed_roundtrip(mut e: Box<dyn Engine>, path: &Path) {
    let depth = u64::from(e.depth());
    for round in 0..2u64 {
        for slot in 0..depth {
            let block = round * depth + slot;
            let durability = match slot % 4 {
                0 => Durability::None,
                _ => Durability::Fdatasync,
            };
            pattern(block, e.buffer(slot as u32));
            e.submit(IoRequest {
                durability,
                ..req(IoDir::Write, block, slot as u32, false)
            })
            .unwrap();
        }
        e.commit().unwrap();
        let done = reap_all(e.as_mut());
        let tags: Vec<u64> = done.iter().map(|c| c.tag).collect();
        let unique: HashSet<u64> = tags.iter().copied().collect();
        assert_eq!(tags.len(), depth as usize, "one completion each: {tags:?}");
        assert_eq!(unique.len(), depth as usize, "{tags:?}");
        assert!(done.iter().all(|c| c.result.as_ref().ok() == Some(&BLOCK)));
        let mut out = Vec::new();
        let n = e.reap(1, Duration::from_millis(20), &mut out).unwrap();
        assert_eq!(n, 0, "nothing after the last completion");
    }
    drop(e);
    let on_disk = std::fs::read(path).unwrap();
    let mut want = vec![0u8; BLOCK as usize];
    for block in 0..2 * depth {
        pattern(block, &mut want);
        let at = (block * u64::from(BLOCK)) as usize;
        assert!(
            on_disk[at..at + BLOCK as usize] == want[..],
            "block {block}"
        );
    }
}

#[test]
fn fdatasync_writes_complete_once_with_their_data() {
    for kind in LOCAL {
        let dir = scratch();
        let path = data_file(dir.path(), 16);
        flushed_roundtrip(open(kind, &config(&[&path], 8, true)).unwrap(), &path);
    }
}

/// Every write and its fsync queued before one enter (the SQ holds both
/// halves of every slot), and the fsync on a plain fd.
#[test]
fn uring_fdatasync_writes_at_commit_and_unregistered() {
    for opts in [
        UringOptions {
            kick_below: 0,
            submit_batch: 0,
            ..Default::default()
        },
        UringOptions {
            register_buffers: false,
            register_files: false,
            defer_taskrun: false,
            ..Default::default()
        },
    ] {
        let dir = scratch();
        let path = data_file(dir.path(), 16);
        let e = UringEngine::open_with(&config(&[&path], 8, true), opts).unwrap();
        flushed_roundtrip(Box::new(e), &path);
    }
}

/// The open flags of the descriptor this process holds on `path`.
fn open_flags(path: &Path) -> i32 {
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if std::fs::read_link(entry.path()).ok().as_deref() != Some(path) {
            continue;
        }
        let fd = entry.file_name();
        let info = std::fs::read_to_string(Path::new("/proc/self/fdinfo").join(&fd)).unwrap();
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .expect("flags in fdinfo");
        return i32::from_str_radix(flags.trim(), 8).unwrap();
    }
    panic!("{} is not open", path.display());
}

#[test]
fn buffered_file_beside_direct_files() {
    for kind in LOCAL {
        let dir = scratch();
        let data = data_file(dir.path(), 4);
        let log = dir.path().join("log");
        std::fs::copy(&data, &log).unwrap();
        let mut cfg = config(&[&data, &log], 2, true);
        cfg.files[1].buffered = true;
        let mut e = open(kind, &cfg).unwrap();
        assert_ne!(open_flags(&data) & libc::O_DIRECT, 0, "{kind:?}: data");
        assert_eq!(open_flags(&log) & libc::O_DIRECT, 0, "{kind:?}: log");
        // A write not sector aligned goes through the page cache only.
        e.buffer(0)[..3].copy_from_slice(b"wal");
        e.submit(IoRequest {
            file: 1,
            offset: 5,
            len: 3,
            durability: Durability::Fdatasync,
            ..req(IoDir::Write, 0, 0, false)
        })
        .unwrap();
        e.commit().unwrap();
        let done = reap_all(e.as_mut());
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].result.as_ref().ok(), Some(&3));
        drop(e);
        assert_eq!(&std::fs::read(&log).unwrap()[5..8], b"wal");
    }
}

/// A write that fails gives one completion with its error: its fsync is
/// not run (psync) or is cancelled and swallowed (io_uring).
#[test]
fn failed_fdatasync_write_completes_once_with_the_write_error() {
    let dir = scratch();
    let path = data_file(dir.path(), 4);
    let mut cfg = config(&[&path], 2, true);
    cfg.write = false;
    for kind in LOCAL {
        let io = IoRequest {
            durability: Durability::Fdatasync,
            ..req(IoDir::Write, 2, 1, false)
        };
        let err = failing_io(kind, &cfg, io);
        let msg = err.to_string();
        assert!(
            matches!(&err, EngineError::Io { op: "write", source, .. }
                if source.raw_os_error() == Some(libc::EBADF)),
            "{kind:?}: {msg}"
        );
        assert!(msg.contains("write at offset 16384 of"), "{msg}");
    }
}

/// A write that lands and a flush that fails (/dev/null takes writes but
/// has no fsync: EINVAL) gives one completion with the flush's error.
#[test]
fn failed_flush_completes_once_with_the_flush_error() {
    let cfg = config(&[Path::new("/dev/null")], 2, false);
    for kind in LOCAL {
        let io = IoRequest {
            durability: Durability::Fdatasync,
            ..req(IoDir::Write, 1, 0, false)
        };
        let err = failing_io(kind, &cfg, io);
        let msg = err.to_string();
        assert!(
            matches!(&err, EngineError::Io { op: "fdatasync", source, .. }
                if source.raw_os_error() == Some(libc::EINVAL)),
            "{kind:?}: {msg}"
        );
        assert!(
            msg.contains("fdatasync at offset 8192 of /dev/null"),
            "{msg}"
        );
    }
}

/// This process's minor faults so far (/proc/self/stat field 10).
fn minor_faults() -> u64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap();
    let rest = &s[s.rfind(')').unwrap() + 2..];
    rest.split(' ').nth(7).unwrap().parse().unwrap()
}

/// Shared buffers: a read into a buffer whose pages were unmapped faults them back in
/// inside the read (as a PostgreSQL backend's read into a shared buffer it never
/// touched) and still delivers the data; private buffers refuse to unmap.
#[test]
fn psync_read_into_unmapped_shared_buffer_faults_and_reads_right() {
    let dir = scratch();
    let path = data_file(dir.path(), 4);
    let mut cfg = config(&[&path], 1, false);
    cfg.shared_buffers = true;
    let mut e = open(EngineKind::Psync, &cfg).unwrap();
    pattern(2, e.buffer(0));
    e.submit(req(IoDir::Write, 2, 0, false)).unwrap();
    reap_all(e.as_mut());
    e.buffer(0).fill(0);
    let mut faults = Vec::new();
    for unmap in [false, true] {
        if unmap {
            assert!(e.unmap_buffer(0, 2));
        }
        let before = minor_faults();
        e.submit(req(IoDir::Read, 2, 0, false)).unwrap();
        reap_all(e.as_mut());
        faults.push(minor_faults() - before);
        let mut want = vec![0u8; BLOCK as usize];
        pattern(2, &mut want);
        assert!(
            e.buffer(0) == &want[..],
            "block 2 read back (unmapped: {unmap})"
        );
    }
    // Other threads of this test binary may fault too: more, never fewer.
    assert!(faults[1] >= 2 && faults[1] >= faults[0], "{faults:?}");
    let mut private = open(EngineKind::Psync, &config(&[&path], 1, false)).unwrap();
    assert!(!private.unmap_buffer(0, 2));
}
