//! A file system on a loop device that dbio makes itself, on an image file
//! it creates, and always takes down again: [`LoopFs`] is a guard whose
//! Drop unmounts, detaches the loop device and removes the image and the
//! mount point, on every exit path (an error, a panic, a stop signal).
//!
//! Only ever touches what it made: the image is created new (never an
//! existing file), the loop device is the one `losetup --find --show`
//! attached to that image, and the mount point is a new directory.
//! Needs root and `losetup`, `mount`, `umount` and `mkfs.<fs>`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::DiagError;

/// File systems [`LoopFs`] can make.
pub const FILE_SYSTEMS: [&str; 3] = ["btrfs", "xfs", "ext4"];

/// The smallest image `fs` can be made on (mkfs.xfs refuses under 300 MB;
/// btrfs below 1 GiB is made with mixed block groups, which fit in 16 MiB).
pub fn min_size(fs: &str) -> u64 {
    match fs {
        "xfs" => 320 << 20,
        "btrfs" => 32 << 20,
        _ => 8 << 20,
    }
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Why a loop file system of type `fs` cannot be made here (not root, a
/// tool missing), or None when it can.
pub fn cannot_make(fs: &str) -> Option<String> {
    if !FILE_SYSTEMS.contains(&fs) {
        return Some(format!(
            "{fs}: not one of {} (zfs is not supported yet)",
            FILE_SYSTEMS.join(", ")
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("making a file system on a loop device needs root".into());
    }
    let missing: Vec<String> = ["losetup", "mount", "umount", &format!("mkfs.{fs}")]
        .iter()
        .filter(|t| !have(t))
        .map(|t| t.to_string())
        .collect();
    (!missing.is_empty()).then(|| format!("missing {}", missing.join(", ")))
}

fn run(cmd: &str, args: &[&str]) -> Result<String, DiagError> {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| DiagError::Other(format!("{cmd}: {e}")))?;
    if !o.status.success() {
        return Err(DiagError::Other(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn path_str(p: &Path) -> Result<&str, DiagError> {
    p.to_str()
        .ok_or_else(|| DiagError::Other(format!("{}: not UTF-8", p.display())))
}

/// A mounted loop file system; undone when dropped.
#[derive(Debug)]
pub struct LoopFs {
    fs: String,
    image: PathBuf,
    mnt: PathBuf,
    device: Option<String>,
    mounted: bool,
    mnt_made: bool,
    image_made: bool,
    keep_image: bool,
}

impl LoopFs {
    /// Creates `image` (which must not exist) of `size` bytes, attaches
    /// it to a free loop device, makes a file system of type `fs` on it and
    /// mounts it on `mnt` (a new directory, owner-only). What was done is
    /// undone when this fails half-way. With `direct_io` the loop device
    /// reads and writes its image with O_DIRECT (`losetup --direct-io=on`),
    /// so that the image's page cache does not hide the disk; where the
    /// image's file system refuses, it is attached without.
    pub fn make(
        fs: &str,
        image: &Path,
        mnt: &Path,
        size: u64,
        direct_io: bool,
    ) -> Result<LoopFs, DiagError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let mut me = LoopFs {
            fs: fs.into(),
            image: image.to_path_buf(),
            mnt: mnt.to_path_buf(),
            device: None,
            mounted: false,
            mnt_made: false,
            image_made: false,
            keep_image: false,
        };
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(image)
            .map_err(|e| DiagError::io(image, e))?;
        me.image_made = true;
        f.set_len(size).map_err(|e| DiagError::io(image, e))?;
        drop(f);
        let img = path_str(image)?;
        let dev = match direct_io {
            true => run("losetup", &["--find", "--show", "--direct-io=on", img])
                .or_else(|_| run("losetup", &["--find", "--show", img]))?,
            false => run("losetup", &["--find", "--show", img])?,
        };
        if !dev.starts_with("/dev/loop") {
            return Err(DiagError::Other(format!("losetup gave {dev:?}")));
        }
        me.device = Some(dev.clone());
        let mut args: Vec<&str> = match fs {
            "ext4" => vec!["-F", "-q"],
            _ => vec!["-f", "-q"],
        };
        if fs == "btrfs" && size < 1 << 30 {
            args.push("--mixed");
        }
        args.push(&dev);
        run(&format!("mkfs.{fs}"), &args)?;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(mnt)
            .map_err(|e| DiagError::io(mnt, e))?;
        me.mnt_made = true;
        run("mount", &[&dev, path_str(mnt)?])?;
        me.mounted = true;
        Ok(me)
    }

    pub fn fs(&self) -> &str {
        &self.fs
    }

    pub fn image(&self) -> &Path {
        &self.image
    }

    pub fn mnt(&self) -> &Path {
        &self.mnt
    }

    /// "/dev/loopN".
    pub fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// Whether the loop device reads and writes its image with O_DIRECT.
    pub fn direct_io(&self) -> bool {
        let Some(name) = self.device.as_deref().and_then(|d| d.strip_prefix("/dev/")) else {
            return false;
        };
        crate::kernel_files::loop_direct_io(name)
    }

    /// Keeps the image file when taken down (the file system is still
    /// unmounted and the loop device detached).
    pub fn keep_image(&mut self, keep: bool) {
        self.keep_image = keep;
    }

    /// Unmounts, detaches and removes what was made; the first failure is
    /// returned, but every step is tried. Called again it does nothing.
    pub fn take_down(&mut self) -> Result<(), DiagError> {
        let mut first: Option<DiagError> = None;
        let mut note = |r: Result<(), DiagError>| {
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        };
        if self.mounted {
            let m = self.mnt.to_string_lossy().into_owned();
            // A few tries (files may still be closing), then a lazy unmount.
            let mut done = false;
            for _ in 0..5 {
                if run("umount", &[&m]).is_ok() {
                    done = true;
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            if !done {
                note(run("umount", &["-l", &m]).map(drop));
            }
            self.mounted = false;
        }
        if let Some(dev) = self.device.take() {
            note(run("losetup", &["-d", &dev]).map(drop));
        }
        if self.mnt_made {
            note(std::fs::remove_dir(&self.mnt).map_err(|e| DiagError::io(&self.mnt, e)));
            self.mnt_made = false;
        }
        if self.image_made && !self.keep_image {
            note(std::fs::remove_file(&self.image).map_err(|e| DiagError::io(&self.image, e)));
            self.image_made = false;
        }
        match first {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = self.take_down();
    }
}

/// Whether `path` lies on a file system held in memory (tmpfs, ramfs).
pub fn in_memory(path: &Path) -> bool {
    crate::blockdev::mount_of(path).is_some_and(|m| matches!(m.fs_type.as_str(), "tmpfs" | "ramfs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_file_systems_and_sizes() {
        assert!(cannot_make("zfs").unwrap().contains("not one of"));
        assert!(min_size("xfs") >= 300 << 20);
        assert!(min_size("ext4") < min_size("btrfs"));
    }

    /// Made and taken down, nothing left; skipped without root or tools.
    #[test]
    fn made_and_taken_down_leaves_nothing() {
        if let Some(why) = cannot_make("ext4") {
            if std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1") {
                panic!("DBIO_REQUIRE_PEERS=1 but: {why}");
            }
            eprintln!("skipped: {why}");
            return;
        }
        let dir =
            // The build disk: where the test binary itself lives, whatever the target directory.
            tempfile::tempdir_in(std::env::current_exe().unwrap().parent().unwrap()).unwrap();
        let img = dir.path().join("fs.img");
        let mnt = dir.path().join("mnt");
        let dev;
        {
            let fs = LoopFs::make("ext4", &img, &mnt, 32 << 20, true).unwrap();
            dev = fs.device().unwrap().to_string();
            assert!(fs.direct_io(), "the build disk takes O_DIRECT");
            std::fs::write(mnt.join("x"), b"x").unwrap();
            assert!(crate::blockdev::mount_of(&mnt).is_some_and(|m| m.fs_type == "ext4"));
            // An existing image is never reused.
            assert!(LoopFs::make("ext4", &img, &dir.path().join("m2"), 32 << 20, false).is_err());
        }
        assert!(!img.exists() && !mnt.exists());
        let o = Command::new("losetup")
            .arg("-j")
            .arg(&img)
            .output()
            .unwrap();
        assert!(o.stdout.is_empty(), "{dev} still attached");
    }
}
