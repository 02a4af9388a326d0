//! The machine's side of `dbio age` (`diag`, which the experiment does not
//! use): where the images go, the loop file systems asked for, checked
//! before anything is made, and loop file systems, fill levels and extents
//! handed to the experiment through its `FileSystems` hook.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, ensure, Context};
use dbio_diag::frag::{copy_on_write, file_frag, fs_fill};
use dbio_diag::loopfs::{cannot_make, in_memory, min_size, LoopFs};
use dbio_experiment::age::{AgeOn, FileSystems, Fill, HostError, LoopImage, Mounted};
use dbio_workload::units::format_size;
use dbio_workload::DatasetSpec;

/// A directory made for this run; removed when dropped if empty (images
/// kept with --keep stay in it).
pub struct PrivateDir(pub PathBuf);

impl PrivateDir {
    pub fn make(parent: &Path) -> anyhow::Result<PrivateDir> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let p = parent.join(format!("dbio-age-{}-{nanos:08x}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&p)
            .with_context(|| format!("cannot create {}", p.display()))?;
        Ok(PrivateDir(p))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Loop file systems on images in the run's private directory.
pub struct LoopFileSystems<'a> {
    dir: &'a Path,
    keep: bool,
}

impl<'a> LoopFileSystems<'a> {
    /// Images and mount points go in `dir`; with `keep` the images stay.
    pub fn new(dir: &'a Path, keep: bool) -> Self {
        LoopFileSystems { dir, keep }
    }
}

/// A [`LoopFs`] as the experiment sees it.
struct LoopMount(LoopFs);

impl Mounted for LoopMount {
    fn mnt(&self) -> &Path {
        self.0.mnt()
    }
    fn direct_io(&self) -> bool {
        self.0.direct_io()
    }
    fn take_down(&mut self) -> Result<(), HostError> {
        Ok(self.0.take_down()?)
    }
}

impl FileSystems for LoopFileSystems<'_> {
    fn make(
        &mut self,
        fs: &str,
        name: &str,
        bytes: u64,
        direct_io: bool,
    ) -> Result<Box<dyn Mounted>, HostError> {
        let image = self.dir.join(format!("{name}.img"));
        let mnt = self.dir.join(format!("{name}.mnt"));
        let mut lfs = LoopFs::make(fs, &image, &mnt, bytes, direct_io)?;
        lfs.keep_image(self.keep);
        Ok(Box::new(LoopMount(lfs)))
    }
    fn fill(&self, path: &Path) -> Result<Fill, HostError> {
        let f = fs_fill(path)?;
        Ok(Fill {
            used: f.used,
            available: f.available,
            pct: f.fill_pct,
        })
    }
    fn fragments(&self, file: &Path) -> Result<u64, HostError> {
        Ok(file_frag(file)?.fragments)
    }
    fn copies_on_write(&self, fs: &str) -> bool {
        copy_on_write(fs)
    }
}

/// Where the images (or, with --target, the data set) go; refused in memory.
pub fn work_dir(
    target: Option<&Path>,
    dir: Option<&Path>,
    notes: &mut Vec<String>,
) -> anyhow::Result<PathBuf> {
    Ok(match (target, dir) {
        (Some(t), _) => {
            ensure!(t.is_dir(), "--target {}: not a directory", t.display());
            t.to_path_buf()
        }
        (None, Some(d)) => {
            ensure!(d.is_dir(), "--dir {}: not a directory", d.display());
            ensure!(
                !in_memory(d),
                "--dir {}: on tmpfs, the images would live in memory and the figures show memory, \
                 not storage; name a directory on a disk",
                d.display()
            );
            d.to_path_buf()
        }
        (None, None) => {
            let t = std::env::temp_dir();
            if !in_memory(&t) {
                return Ok(t);
            }
            notes.push(format!(
                "{} is in memory (tmpfs): the images went to /var/tmp",
                t.display()
            ));
            PathBuf::from("/var/tmp")
        }
    })
}

/// The loop file systems asked for, checked: makeable here, each fill
/// level above the data set's own share, room in `dir` for an image.
pub fn loops(
    fs: &[String],
    fills: &[u32],
    size: u64,
    spec: &DatasetSpec,
    dir: &Path,
    notes: &mut Vec<String>,
) -> anyhow::Result<AgeOn> {
    let mut images: Vec<LoopImage> = Vec::new();
    for f in fs {
        let fs = f.trim().to_string();
        if images.iter().any(|i| i.fs == fs) {
            continue;
        }
        if let Some(why) = cannot_make(&fs) {
            bail!("--fs {fs}: {why}");
        }
        let bytes = size.max(min_size(&fs));
        if bytes > size {
            notes.push(format!(
                "{fs}: the image is {} (the smallest {fs} that mkfs makes), not {}",
                format_size(bytes),
                format_size(size)
            ));
        }
        images.push(LoopImage { fs, bytes });
    }
    ensure!(!images.is_empty(), "--fs: name at least one file system");
    let total: u64 = spec.files().iter().map(|f| f.size).sum();
    for fill in fills {
        let pct = total as f64 * 100.0 / size as f64;
        ensure!(
            pct < f64::from(*fill),
            "--fill {fill}: the data set ({} with its redo log) alone fills {pct:.0}% of {}; \
             give a smaller --dataset or a larger --size",
            format_size(total),
            format_size(size)
        );
    }
    let free = fs_fill(dir).map_or(u64::MAX, |f| f.available);
    let largest = images.iter().map(|i| i.bytes).max().unwrap_or(0);
    ensure!(
        free >= largest,
        "--dir {}: {} free, an image needs up to {}",
        dir.display(),
        format_size(free),
        format_size(largest)
    );
    Ok(AgeOn::Loops {
        images,
        fills: fills.to_vec(),
        size,
    })
}
