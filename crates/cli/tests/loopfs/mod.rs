//! A file system on a loop device that the test makes and always removes
//! (unmount, detach, delete the image), even when the test panics: the
//! guard undoes in its Drop whatever was done. Needs root and the mkfs
//! tool; skips without them unless DBIO_REQUIRE_PEERS=1, where it fails.
//! Only ever touches the loop device it attached itself.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn require_peers() -> bool {
    std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether loop file systems of `fs` can be made here; None with the reason
/// to skip (a panic under DBIO_REQUIRE_PEERS=1).
pub fn can_make(fs: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let missing: Vec<String> = ["losetup", "mount", "umount", &format!("mkfs.{fs}")]
        .iter()
        .filter(|t| !have(t))
        .map(|t| t.to_string())
        .collect();
    if root && missing.is_empty() {
        return true;
    }
    let why = if root {
        format!("missing {}", missing.join(", "))
    } else {
        "not root".to_string()
    };
    if require_peers() {
        panic!("DBIO_REQUIRE_PEERS=1 but a loop {fs} file system cannot be made: {why}");
    }
    eprintln!("skipped: a loop {fs} file system cannot be made: {why}");
    false
}

pub struct LoopFs {
    dir: tempfile::TempDir,
    /// /dev/loopN, once attached.
    pub device: Option<String>,
    mounted: bool,
    pub fs: String,
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

impl LoopFs {
    /// A `size_mib` file system of type `fs` mounted at [`LoopFs::mnt`].
    pub fn new(fs: &str, size_mib: u64) -> LoopFs {
        // On the build's disk, not a tmpfs.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch");
        let mut me = LoopFs {
            dir,
            device: None,
            mounted: false,
            fs: fs.into(),
        };
        let img = me.image();
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(size_mib << 20))
            .expect("image file");
        let dev = run("losetup", &["-f", "--show", img.to_str().unwrap()]).expect("losetup");
        assert!(dev.starts_with("/dev/loop"), "losetup gave {dev:?}");
        me.device = Some(dev.clone());
        let force = match fs {
            "ext4" => "-F",
            _ => "-f",
        };
        run(&format!("mkfs.{fs}"), &[force, "-q", &dev]).expect("mkfs");
        std::fs::create_dir(me.mnt()).expect("mount point");
        run("mount", &[&dev, me.mnt().to_str().unwrap()]).expect("mount");
        me.mounted = true;
        me
    }

    pub fn image(&self) -> PathBuf {
        self.dir.path().join("fs.img")
    }

    pub fn mnt(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }

    /// "loopN".
    pub fn name(&self) -> String {
        let d = self.device.as_deref().unwrap_or("");
        Path::new(d)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        if self.mounted {
            let mnt = self.mnt();
            let m = mnt.to_str().unwrap();
            // A few tries (a process of the test may still be closing
            // files), then a lazy unmount.
            let mut done = false;
            for _ in 0..5 {
                if run("umount", &[m]).is_ok() {
                    done = true;
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            if !done {
                let _ = run("umount", &["-l", m]);
            }
        }
        if let Some(dev) = &self.device {
            let _ = run("losetup", &["-d", dev]);
        }
    }
}
