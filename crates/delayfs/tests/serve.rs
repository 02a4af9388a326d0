//! dbio-delayfs for real: mounted on a temporary directory over a small
//! backing file, with a 2 ms delay. Needs root and /dev/fuse: skipped with one
//! line without them, failing instead under DBIO_REQUIRE_PEERS=1.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DELAY: Duration = Duration::from_millis(2);
const BLOCK: usize = 8192;
const SIZE: usize = 4 << 20;

fn cannot_run() -> Option<String> {
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse is missing".into());
    }
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        return Some("mounting needs root".into());
    }
    None
}

/// Whether to go on; panics where the suite requires the peers.
fn runnable(test: &str) -> bool {
    match cannot_run() {
        None => true,
        Some(why) if std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1") => {
            panic!("DBIO_REQUIRE_PEERS=1 but {why}")
        }
        Some(why) => {
            eprintln!("{test}: skipped: {why}");
            false
        }
    }
}

fn mounted(mnt: &Path) -> bool {
    let mnt = mnt.to_string_lossy().into_owned();
    std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(1) == Some(mnt.as_str()))
}

/// A running daemon over a backing file of pseudo-random bytes; stopped and
/// unmounted on drop whatever happened.
struct Daemon {
    child: Child,
    mnt: PathBuf,
    backing: PathBuf,
    _dir: tempfile::TempDir,
}

impl Daemon {
    fn start() -> Daemon {
        // On the build disk: the daemon's O_DIRECT needs a real file system.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let backing = dir.path().join("backing.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let data: Vec<u8> = (0..SIZE)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        std::fs::write(&backing, &data).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_dbio-delayfs"))
            .arg("--backing")
            .arg(&backing)
            .arg("--mount")
            .arg(&mnt)
            .args([
                "--delay-us",
                &DELAY.as_micros().to_string(),
                "--threads",
                "4",
            ])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut d = Daemon {
            child,
            mnt,
            backing,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !d.mnt.join("image").exists() {
            if let Some(st) = d.child.try_wait().unwrap() {
                panic!("dbio-delayfs ended before serving ({st}): {}", d.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "dbio-delayfs did not serve within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        d
    }

    fn image(&self) -> PathBuf {
        self.mnt.join("image")
    }

    fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
        }
        s
    }

    /// Waits up to 5 s for the daemon to end; its exit status and stderr.
    fn wait_end(&mut self) -> (std::process::ExitStatus, String) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return (st, self.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "dbio-delayfs still running 5 s on"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: our own child's pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.signal(libc::SIGTERM);
            let _ = self.child.wait();
        }
        if mounted(&self.mnt) {
            let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
        }
    }
}

/// An 8 KiB buffer aligned for O_DIRECT.
struct Aligned(Vec<u8>, usize);

impl Aligned {
    fn new() -> Aligned {
        let v = vec![0u8; BLOCK + 4096];
        let off = v.as_ptr().align_offset(4096);
        Aligned(v, off)
    }
    fn buf(&mut self) -> &mut [u8] {
        &mut self.0[self.1..self.1 + BLOCK]
    }
}

fn open_direct(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .unwrap()
}

#[test]
fn reads_and_writes_each_take_the_delay_and_reach_the_backing_file() {
    if !runnable("reads_and_writes_each_take_the_delay") {
        return;
    }
    let mut d = Daemon::start();
    let img = open_direct(&d.image());
    assert_eq!(img.metadata().unwrap().len(), SIZE as u64);
    let backing = std::fs::read(&d.backing).unwrap();
    let mut a = Aligned::new();
    for i in 0..20u64 {
        // Spread over the file, so that no two reads are of the same block.
        let off = (i * 37 % (SIZE / BLOCK) as u64) * BLOCK as u64;
        let t = Instant::now();
        assert_eq!(img.read_at(a.buf(), off).unwrap(), BLOCK);
        let took = t.elapsed();
        assert!(
            took >= DELAY,
            "read {i} at {off} took {took:?}, less than {DELAY:?}"
        );
        assert!(
            a.buf() == &backing[off as usize..off as usize + BLOCK],
            "read {i} at {off}: not the backing file's bytes"
        );
    }

    // A write round trip: through the mount to the backing file and back.
    let off = 5 * BLOCK as u64;
    for (j, b) in a.buf().iter_mut().enumerate() {
        *b = (j % 251) as u8;
    }
    let t = Instant::now();
    assert_eq!(
        img.write_at(a.0[a.1..a.1 + BLOCK].as_ref(), off).unwrap(),
        BLOCK
    );
    assert!(t.elapsed() >= DELAY, "write took {:?}", t.elapsed());
    let t = Instant::now();
    img.sync_data().unwrap();
    assert!(t.elapsed() >= DELAY, "fdatasync took {:?}", t.elapsed());
    let written: Vec<u8> = (0..BLOCK).map(|j| (j % 251) as u8).collect();
    let mut on_disk = vec![0u8; BLOCK];
    File::open(&d.backing)
        .unwrap()
        .read_exact_at(&mut on_disk, off)
        .unwrap();
    assert!(
        on_disk == written,
        "the backing file does not hold the write"
    );
    a.buf().fill(0);
    img.read_at(a.buf(), off).unwrap();
    assert!(
        a.buf() == written.as_slice(),
        "the write does not read back"
    );

    // A small unaligned read goes buffered, and still gets the right bytes.
    let mut small = [0u8; 100];
    File::open(d.image())
        .unwrap()
        .read_exact_at(&mut small, 1000)
        .unwrap();
    assert_eq!(small[..], backing[1000..1100]);

    drop(img);
    d.signal(libc::SIGTERM);
    let (st, err) = d.wait_end();
    assert!(st.success(), "exit {st} after SIGTERM: {err}");
    assert!(err.contains("O_DIRECT"), "served without O_DIRECT: {err}");
    assert!(!mounted(&d.mnt), "still mounted after SIGTERM");
}

#[test]
fn ends_when_unmounted() {
    if !runnable("ends_when_unmounted") {
        return;
    }
    let mut d = Daemon::start();
    let st = Command::new("umount").arg(&d.mnt).status().unwrap();
    assert!(st.success(), "umount failed");
    let (st, err) = d.wait_end();
    assert!(st.success(), "exit {st} after unmount: {err}");
}

#[test]
fn bad_arguments_are_one_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_dbio-delayfs"))
        .args(["--backing", "/nonexistent", "--delay-us", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--delay-us"), "{err}");
}
