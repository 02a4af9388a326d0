//! Fragmentation of files, from the FIEMAP ioctl (the source `filefrag`
//! reads), and the fill level of their file systems (statvfs).
//!
//! Counting follows `filefrag`: an extent that starts where the previous
//! one ended on disk (ext4 splits long extents at 128 MiB, btrfs reports
//! contiguous ones separately) is not a new fragment. `extents` is what
//! FIEMAP returned; `fragments` is filefrag's "N extents found".
//!
//! Caveats, named in the notes of a file where they apply: on btrfs, a
//! compressed extent (flag ENCODED) is reported at its uncompressed length
//! and several may share one physical address, so its size is not what the
//! disk holds; shared extents (flag SHARED: snapshots, reflinks) belong to
//! several files, and a copy-on-write overwrite of a shared extent makes a
//! new one. Extents not yet allocated (DELALLOC) are synced first
//! (FIEMAP_FLAG_SYNC) so that they are counted where they land.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::blockdev::mount_of;
use crate::DiagError;

/// Above this many fragments per GiB (a mean fragment under 16 MiB) a file
/// counts as fragmented: a 1 MiB multiblock read then crosses a fragment
/// boundary more than once in 16.
pub const FRAGMENTED_PER_GIB: f64 = 64.0;
/// A file of at most this many fragments is not fragmented whatever its size
/// (a small file in a few pieces costs a few extra seeks, once).
pub const FRAGMENTED_MIN: u64 = 16;
/// Below this size, fragments per GiB say little (16 per GiB for a 64 MiB
/// file in one piece): they are shown for files and totals from 1 GiB.
const PER_GIB_FROM: u64 = 1 << 30;

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
const FIEMAP_FLAG_SYNC: u32 = 0x1;
/// Extents asked for per call.
const BATCH: usize = 512;
/// Most FIEMAP calls for one file (a bound on the loop: 2^20 x 512 extents).
const MAX_CALLS: usize = 1 << 20;

pub const EXTENT_LAST: u32 = 0x1;
pub const EXTENT_UNKNOWN: u32 = 0x2;
pub const EXTENT_DELALLOC: u32 = 0x4;
pub const EXTENT_ENCODED: u32 = 0x8;
pub const EXTENT_NOT_ALIGNED: u32 = 0x100;
pub const EXTENT_DATA_INLINE: u32 = 0x200;
pub const EXTENT_UNWRITTEN: u32 = 0x800;
pub const EXTENT_SHARED: u32 = 0x2000;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

#[repr(C)]
struct RawMap {
    start: u64,
    length: u64,
    flags: u32,
    mapped: u32,
    count: u32,
    reserved: u32,
    extents: [RawExtent; BATCH],
}

/// One extent as FIEMAP gives it (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub physical: u64,
    pub length: u64,
    pub flags: u32,
}

/// Every extent of an open file, in logical order.
pub fn fiemap(file: &File) -> std::io::Result<Vec<Extent>> {
    let mut out = Vec::new();
    let mut map = Box::new(RawMap {
        start: 0,
        length: u64::MAX,
        flags: FIEMAP_FLAG_SYNC,
        mapped: 0,
        count: BATCH as u32,
        reserved: 0,
        extents: [RawExtent::default(); BATCH],
    });
    let mut start = 0u64;
    for _ in 0..MAX_CALLS {
        map.start = start;
        map.length = u64::MAX - start;
        map.mapped = 0;
        map.count = BATCH as u32;
        // SAFETY: FS_IOC_FIEMAP reads the header and writes at most `count`
        // extents into the array that follows it, which holds BATCH.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                FS_IOC_FIEMAP as _,
                &mut *map as *mut RawMap,
            )
        };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = (map.mapped as usize).min(BATCH);
        if n == 0 {
            break;
        }
        let mut last = false;
        for e in &map.extents[..n] {
            out.push(Extent {
                logical: e.logical,
                physical: e.physical,
                length: e.length,
                flags: e.flags,
            });
            last |= e.flags & EXTENT_LAST != 0;
        }
        let e = &map.extents[n - 1];
        let next = e.logical.saturating_add(e.length);
        if last || next <= start {
            break;
        }
        start = next;
    }
    Ok(out)
}

/// filefrag's count: a new fragment where an extent does not continue the
/// previous one on disk.
pub fn fragments(extents: &[Extent]) -> u64 {
    let mut n = 0u64;
    let mut prev: Option<&Extent> = None;
    for e in extents {
        let continues = prev.is_some_and(|p| {
            let dense = p.physical + p.length;
            let expected = p.physical.wrapping_add(e.logical.wrapping_sub(p.logical));
            e.physical == dense || e.physical == expected
        });
        if !continues {
            n += 1;
        }
        prev = Some(e);
    }
    n
}

/// Fragmentation of one file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FileFrag {
    /// The file as named.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Extents as FIEMAP returned them.
    pub extents: u64,
    /// Fragments, counted as `filefrag` counts extents (physically
    /// contiguous extents are one).
    pub fragments: u64,
    /// Fragments per GiB of file size, for files of 1 GiB or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragments_per_gib: Option<f64>,
    /// More than [`FRAGMENTED_MIN`] fragments and more than
    /// [`FRAGMENTED_PER_GIB`] per GiB.
    #[serde(default)]
    pub fragmented: bool,
    /// Largest extent, bytes.
    pub largest_extent: u64,
    /// Median extent, bytes.
    pub median_extent: u64,
    /// Extents shared with other files or snapshots (FIEMAP SHARED).
    pub shared: u64,
    /// Extents stored compressed or otherwise encoded (FIEMAP ENCODED).
    pub encoded: u64,
    /// Extents allocated but not written (FIEMAP UNWRITTEN: preallocated).
    pub unwritten: u64,
    /// Caveats for this file's figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A file system holding some of the files.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FsFill {
    /// Mount point.
    pub mount_point: String,
    /// File-system type (ext4, xfs, btrfs, zfs, ...).
    pub fs_type: String,
    /// Mount source (device).
    pub source: String,
    /// Size in bytes.
    pub size: u64,
    /// Bytes in use (size - free).
    pub used: u64,
    /// Bytes available to unprivileged users.
    pub available: u64,
    /// Percent used, as `df` shows it: used / (used + available).
    pub fill_pct: f64,
    /// Files of this report on it.
    pub files: u64,
    /// Their fragments together.
    pub fragments: u64,
    /// Their bytes together.
    pub bytes: u64,
    /// Their fragments per GiB together, when they hold 1 GiB or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragments_per_gib: Option<f64>,
}

/// The result of `dbio frag`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FragReport {
    pub files: Vec<FileFrag>,
    pub filesystems: Vec<FsFill>,
    /// Files of the directories given that hold no data (a data set's
    /// manifest and verify map), left out of the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// The data files that are fragmented (their paths); none: the verdict is ok.
    #[serde(default)]
    pub fragmented: Vec<String>,
}

/// Fragments per GiB of `bytes`, when that is 1 GiB or more.
fn per_gib(fragments: u64, bytes: u64) -> Option<f64> {
    (bytes >= PER_GIB_FROM).then(|| fragments as f64 * (1u64 << 30) as f64 / bytes as f64)
}

/// Whether a file of `size` bytes in `fragments` pieces is fragmented.
pub fn is_fragmented(fragments: u64, size: u64) -> bool {
    fragments > FRAGMENTED_MIN
        && fragments as f64 * (1u64 << 30) as f64 > FRAGMENTED_PER_GIB * size as f64
}

/// Whether `fs_type` copies on write (btrfs, zfs, bcachefs).
pub fn copy_on_write(fs_type: &str) -> bool {
    matches!(fs_type, "btrfs" | "zfs" | "bcachefs")
}

/// Fragmentation of one file.
pub fn file_frag(path: &Path) -> Result<FileFrag, DiagError> {
    let f = File::open(path).map_err(|e| DiagError::io(path, e))?;
    let size = f.metadata().map_err(|e| DiagError::io(path, e))?.len();
    let ext = fiemap(&f).map_err(|e| DiagError::io(path, e))?;
    let mut lens: Vec<u64> = ext.iter().map(|e| e.length).collect();
    lens.sort_unstable();
    let count = |flag: u32| ext.iter().filter(|e| e.flags & flag != 0).count() as u64;
    let fragments = fragments(&ext);
    let mut r = FileFrag {
        path: path.display().to_string(),
        size,
        extents: ext.len() as u64,
        fragments,
        fragments_per_gib: per_gib(fragments, size),
        fragmented: is_fragmented(fragments, size),
        largest_extent: lens.last().copied().unwrap_or(0),
        median_extent: lens.get(lens.len() / 2).copied().unwrap_or(0),
        shared: count(EXTENT_SHARED),
        encoded: count(EXTENT_ENCODED),
        unwritten: count(EXTENT_UNWRITTEN),
        notes: Vec::new(),
    };
    if r.encoded > 0 {
        r.notes.push(format!(
            "{} extents are compressed or encoded: FIEMAP gives their uncompressed length, so sizes are not what the disk holds (btrfs compression)",
            r.encoded
        ));
    }
    if r.shared > 0 {
        r.notes.push(format!(
            "{} extents are shared with other files or snapshots: a write to them allocates anew (copy on write)",
            r.shared
        ));
    }
    if count(EXTENT_UNKNOWN | EXTENT_DELALLOC) > 0 {
        r.notes
            .push("some extents have no known location yet".into());
    }
    if count(EXTENT_DATA_INLINE | EXTENT_NOT_ALIGNED) > 0 {
        r.notes.push("data stored inline with metadata".into());
    }
    Ok(r)
}

/// The fill level of the file system holding `path`.
pub fn fs_fill(path: &Path) -> Result<FsFill, DiagError> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| DiagError::Other(format!("{}: NUL in path", path.display())))?;
    // SAFETY: statvfs writes into the struct we own; c is NUL-terminated.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return Err(DiagError::io(path, std::io::Error::last_os_error()));
    }
    let frsize = s.f_frsize as u64;
    let size = s.f_blocks as u64 * frsize;
    let free = s.f_bfree as u64 * frsize;
    let available = s.f_bavail as u64 * frsize;
    let used = size.saturating_sub(free);
    let m = mount_of(path);
    Ok(FsFill {
        mount_point: m
            .as_ref()
            .map(|m| m.mount_point.display().to_string())
            .unwrap_or_default(),
        fs_type: m.as_ref().map(|m| m.fs_type.clone()).unwrap_or_default(),
        source: m.map(|m| m.source).unwrap_or_default(),
        size,
        used,
        available,
        fill_pct: if used + available > 0 {
            used as f64 * 100.0 / (used + available) as f64
        } else {
            0.0
        },
        ..Default::default()
    })
}

/// Whether a file found in a directory holds no data: a dbio data set's
/// manifest and verify map, and the temporaries they are written through.
fn side_file(name: &str) -> bool {
    use dbio_workload::{dataset::MANIFEST_NAME, verify::MAP_NAME};
    let name = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .unwrap_or(name);
    name == MANIFEST_NAME || name == MAP_NAME
}

/// The files `dbio frag` looks at: a directory stands for the regular
/// files in it (not below it), in name order, but for the side files
/// (returned apart); files named stand for themselves.
pub fn expand(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<PathBuf>), DiagError> {
    let mut out = Vec::new();
    let mut left_out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| DiagError::io(p, e))?;
        if meta.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| DiagError::io(p, e))?
                .flatten()
                .map(|e| e.path())
                .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))
                .collect();
            files.sort();
            let (side, data): (Vec<PathBuf>, Vec<PathBuf>) = files
                .into_iter()
                .partition(|f| side_file(&f.file_name().unwrap_or_default().to_string_lossy()));
            out.extend(data);
            left_out.extend(side);
        } else {
            out.push(p.clone());
        }
    }
    Ok((out, left_out))
}

/// `dbio frag`: every file's fragmentation, and a summary per file system.
pub fn frag(paths: &[PathBuf]) -> Result<FragReport, DiagError> {
    let mut report = FragReport::default();
    let (files, left_out) = expand(paths)?;
    report.left_out = left_out.iter().map(|p| p.display().to_string()).collect();
    for p in files {
        let f = file_frag(&p)?;
        let fill = fs_fill(&p)?;
        let at = match report
            .filesystems
            .iter()
            .position(|x| x.mount_point == fill.mount_point && x.source == fill.source)
        {
            Some(i) => i,
            None => {
                report.filesystems.push(fill);
                report.filesystems.len() - 1
            }
        };
        let fs = &mut report.filesystems[at];
        fs.files += 1;
        fs.fragments += f.fragments;
        fs.bytes += f.size;
        fs.fragments_per_gib = per_gib(fs.fragments, fs.bytes);
        if f.fragmented {
            report.fragmented.push(f.path.clone());
        }
        report.files.push(f);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(logical: u64, physical: u64, length: u64) -> Extent {
        Extent {
            logical,
            physical,
            length,
            flags: 0,
        }
    }

    #[test]
    fn contiguous_extents_are_one_fragment_as_filefrag_counts() {
        assert_eq!(fragments(&[]), 0);
        assert_eq!(fragments(&[e(0, 4096, 8192)]), 1);
        // ext4's split of a long extent: physically contiguous.
        assert_eq!(fragments(&[e(0, 4096, 8192), e(8192, 12288, 4096)]), 1);
        // A hole in the file, the data continuing where it would have been.
        assert_eq!(fragments(&[e(0, 4096, 4096), e(16384, 20480, 4096)]), 1);
        // Elsewhere on disk.
        assert_eq!(
            fragments(&[
                e(0, 4096, 4096),
                e(4096, 1 << 20, 4096),
                e(8192, 4096 * 3, 4096)
            ]),
            3
        );
    }

    #[test]
    fn fragmented_means_many_small_fragments_whatever_the_size() {
        const MIB: u64 = 1 << 20;
        // One piece, however small the file: per GiB it would be 1.8 million.
        assert!(!is_fragmented(1, 593));
        assert!(!is_fragmented(1, 64 * MIB));
        assert!(!is_fragmented(FRAGMENTED_MIN, 64 * MIB));
        assert!(is_fragmented(FRAGMENTED_MIN + 1, 64 * MIB));
        // 1 GiB: the line is 64 fragments (16 MiB each).
        assert!(!is_fragmented(64, 1024 * MIB));
        assert!(is_fragmented(65, 1024 * MIB));
        assert_eq!(per_gib(1, 64 * MIB), None);
        assert_eq!(per_gib(3, 2048 * MIB), Some(1.5));
        assert!(side_file("dbio-dataset.json") && side_file(".dbio-verify.map.tmp"));
        assert!(!side_file("dbio-data-01.dbf") && !side_file("dbio-redo-01.log"));
    }

    #[test]
    fn a_file_on_the_build_disk_maps_or_says_why_not() {
        let dir =
            // The build disk: where the test binary itself lives, whatever the target directory.
            tempfile::tempdir_in(std::env::current_exe().unwrap().parent().unwrap()).unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
        match file_frag(&p) {
            Ok(f) => {
                assert_eq!(f.size, 1 << 20);
                assert!(f.fragments >= 1 && f.extents >= f.fragments);
                assert!(f.largest_extent >= f.median_extent);
            }
            // overlay and tmpfs have no FIEMAP.
            Err(e) => assert!(e.to_string().contains("supported"), "{e}"),
        }
        let fill = fs_fill(dir.path()).unwrap();
        assert!(fill.size > 0 && fill.fill_pct <= 100.0);
        let r = frag(&[dir.path().to_path_buf()]);
        if let Ok(r) = r {
            assert_eq!(r.files.len(), 1);
            assert_eq!(r.filesystems[0].files, 1);
        }
    }
}
