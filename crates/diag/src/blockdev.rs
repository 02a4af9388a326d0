//! Which block devices hold a path: the file system's device (from
//! `stat`'s st_dev, or the mount source where st_dev is anonymous, as on
//! btrfs), then what it rests on: a partition's whole disk, the device of
//! a loop device's backing file, the members (`slaves/`) of device-mapper
//! and md devices. Read from /sys/dev/block and /proc/self/mountinfo.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::kernel_files::read_dev;
use crate::DiagError;

/// Most devices followed from one path (stacks are shallow; a bound keeps
/// a loop of loop devices finite).
const MAX_DEVICES: usize = 16;

/// One block device under a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDevice {
    /// Kernel name, as in /proc/diskstats ("vda", "loop3", "dm-0").
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// Why it is listed: "file system", "disk of partition", "loop backing
    /// file", "device-mapper member", "md member".
    pub role: String,
}

impl BlockDevice {
    /// "major:minor".
    pub fn dev(&self) -> String {
        format!("{}:{}", self.major, self.minor)
    }

    /// Its directory in sysfs (/sys/class/block/NAME).
    pub fn sys_dir(&self) -> PathBuf {
        Path::new("/sys/class/block").join(&self.name)
    }

    /// The whole disk's name when this is a partition, else its own.
    pub fn disk_name(&self) -> String {
        disk_of(&self.name).unwrap_or_else(|| self.name.clone())
    }
}

/// The block devices under `path`, the file system's first; empty when the
/// file system has no block device (tmpfs, NFS, overlay without one).
pub fn devices_under(path: &Path) -> Result<Vec<BlockDevice>, DiagError> {
    let meta = fs::metadata(path).map_err(|e| DiagError::io(path, e))?;
    let (major, minor) = split_dev(meta.dev());
    let mut out = Vec::new();
    let first = if sys_entry(major, minor).is_some() {
        Some((major, minor))
    } else {
        mount_source_dev(path)
    };
    if let Some((ma, mi)) = first {
        follow(ma, mi, "file system", &mut out);
    }
    Ok(out)
}

fn split_dev(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// /sys/dev/block/MAJ:MIN resolved (…/block/sda/sda1), when it exists.
fn sys_entry(major: u32, minor: u32) -> Option<PathBuf> {
    fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

fn follow(major: u32, minor: u32, role: &str, out: &mut Vec<BlockDevice>) {
    if out.len() >= MAX_DEVICES || out.iter().any(|d| d.major == major && d.minor == minor) {
        return;
    }
    let Some(sys) = sys_entry(major, minor) else {
        return;
    };
    let Some(name) = sys.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    out.push(BlockDevice {
        name: name.clone(),
        major,
        minor,
        role: role.into(),
    });
    // A partition: its parent directory is the whole disk.
    if sys.join("partition").exists() {
        if let Some((ma, mi)) = sys.parent().and_then(|p| read_dev(&p.join("dev"))) {
            follow(ma, mi, "disk of partition", out);
        }
    }
    // A loop device: the device holding its backing file.
    if let Ok(backing) = fs::read_to_string(sys.join("loop/backing_file")) {
        let backing = backing.trim();
        if let Ok(m) = fs::metadata(backing) {
            let (ma, mi) = split_dev(m.dev());
            let dev = if sys_entry(ma, mi).is_some() {
                Some((ma, mi))
            } else {
                mount_source_dev(Path::new(backing))
            };
            if let Some((ma, mi)) = dev {
                follow(ma, mi, "loop backing file", out);
            }
        }
    }
    // Device-mapper and md: their members.
    let member = if name.starts_with("md") {
        "md member"
    } else {
        "device-mapper member"
    };
    if let Ok(slaves) = fs::read_dir(sys.join("slaves")) {
        let mut names: Vec<PathBuf> = slaves.flatten().map(|e| e.path()).collect();
        names.sort();
        for s in names {
            if let Some((ma, mi)) = read_dev(&s.join("dev")) {
                follow(ma, mi, member, out);
            }
        }
    }
}

/// The whole disk of a partition name ("sda1" -> "sda"), from sysfs.
fn disk_of(name: &str) -> Option<String> {
    let sys = fs::canonicalize(Path::new("/sys/class/block").join(name)).ok()?;
    if !sys.join("partition").exists() {
        return None;
    }
    Some(sys.parent()?.file_name()?.to_string_lossy().into_owned())
}

/// The mount holding `path` (longest mount point that is a prefix of it),
/// from /proc/self/mountinfo: (mount point, file-system type, source, options).
pub fn mount_of(path: &Path) -> Option<MountEntry> {
    let path = fs::canonicalize(path).ok()?;
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<MountEntry> = None;
    for line in text.lines().take(100_000) {
        let Some(e) = parse_mountinfo_line(line) else {
            continue;
        };
        if path.starts_with(&e.mount_point)
            && best.as_ref().map_or(true, |b| {
                e.mount_point.as_os_str().len() >= b.mount_point.as_os_str().len()
            })
        {
            best = Some(e);
        }
    }
    best
}

/// One line of /proc/self/mountinfo, the fields dbio uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub source: String,
    /// Per-mount and per-superblock options, comma-separated.
    pub options: String,
}

/// Parses a mountinfo line: `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - TYPE SOURCE SUPEROPTS`.
///
/// Parsed here rather than by `procfs::process::MountInfo`, which keeps the options
/// in maps (their order, as `options` shows them to the user, is lost), leaves the
/// `\040` escapes in the mount point and source, and gives no source for "none".
pub fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 3 {
        return None;
    }
    Some(MountEntry {
        mount_point: PathBuf::from(unescape(l[4])),
        fs_type: r[0].to_string(),
        source: unescape(r[1]),
        options: format!("{},{}", l[5], r[2]),
    })
}

/// mountinfo (and mountstats) escape space, tab, newline and backslash as \ooo.
pub(crate) fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The device of the mount source when it is a block device node (btrfs
/// gives files an anonymous st_dev).
fn mount_source_dev(path: &Path) -> Option<(u32, u32)> {
    let m = mount_of(path)?;
    if !m.source.starts_with('/') {
        return None;
    }
    let meta = fs::metadata(&m.source).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    Some(split_dev(meta.rdev()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_parse_with_escapes() {
        let l = "36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw,errors=continue";
        let e = parse_mountinfo_line(l).unwrap();
        assert_eq!(e.mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(e.fs_type, "ext3");
        assert_eq!(e.source, "/dev/root");
        assert_eq!(e.options, "rw,noatime,rw,errors=continue");
        assert!(parse_mountinfo_line("garbage").is_none());
    }

    #[test]
    fn the_root_file_system_is_found_or_has_no_device() {
        // Whatever the machine, this must not fail, and a device listed
        // first is the file system's.
        let devs = devices_under(Path::new("/")).unwrap();
        if let Some(d) = devs.first() {
            assert_eq!(d.role, "file system");
        }
        assert!(devs.len() <= MAX_DEVICES);
    }
}
