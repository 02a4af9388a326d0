//! A file system on a loop device that the test makes and always removes
//! (unmount, detach, delete the image), even when the test panics: the
//! guard of dbio-diag ([`dbio_diag::loopfs::LoopFs`]) undoes in its Drop
//! whatever was done. Needs root and the mkfs tool; skips without them
//! unless DBIO_REQUIRE_PEERS=1, where it fails. Only ever touches the loop
//! device it attached itself.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn require_peers() -> bool {
    std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// Whether loop file systems of `fs` can be made here; false (a panic
/// under DBIO_REQUIRE_PEERS=1) with the reason printed.
pub fn can_make(fs: &str) -> bool {
    let Some(why) = dbio_diag::loopfs::cannot_make(fs) else {
        return true;
    };
    if require_peers() {
        panic!("DBIO_REQUIRE_PEERS=1 but a loop {fs} file system cannot be made: {why}");
    }
    eprintln!("skipped: a loop {fs} file system cannot be made: {why}");
    false
}

pub struct LoopFs {
    // Dropped first: taken down before its directory goes.
    inner: dbio_diag::loopfs::LoopFs,
    dir: tempfile::TempDir,
    /// /dev/loopN.
    pub device: Option<String>,
    pub fs: String,
}

impl LoopFs {
    /// A `size_mib` file system of type `fs` mounted at [`LoopFs::mnt`].
    pub fn new(fs: &str, size_mib: u64) -> LoopFs {
        // On the build's disk, not a tmpfs.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch");
        let inner = dbio_diag::loopfs::LoopFs::make(
            fs,
            &dir.path().join("fs.img"),
            &dir.path().join("mnt"),
            size_mib << 20,
            false,
        )
        .expect("loop file system");
        LoopFs {
            device: inner.device().map(str::to_string),
            inner,
            dir,
            fs: fs.into(),
        }
    }

    pub fn image(&self) -> PathBuf {
        self.inner.image().to_path_buf()
    }

    pub fn mnt(&self) -> PathBuf {
        self.inner.mnt().to_path_buf()
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
