//! A page cache of a chosen size for dbio's own buffered I/O.
//!
//! A database that reads through the OS page cache (PostgreSQL without direct I/O)
//! pays for every miss more than the device's time: a page to allocate, often one to
//! reclaim first, and a copy. To replay such reads, dbio moves itself into a memory
//! cgroup of its own and drops the data set's pages before each measurement: its reads
//! then miss as the server's do and pay what a miss costs there. The cgroup's limit
//! follows dbio's own memory (latency records grow through a run) so that the page
//! cache, not dbio, is what it holds to the size asked, and no record is lost to the
//! out-of-memory killer. cgroup v1 (`memory`) and v2 (the `memory` controller) both
//! serve; either needs root or a delegated subtree.

use std::fs::{self, File};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::DiagError;

/// Room above the page cache asked and dbio's own memory: what dbio may allocate
/// between two looks at it.
pub const SLACK: u64 = 8 << 20;

/// The name of dbio's cgroups, before the process id.
const PREFIX: &str = "dbio-page-cache-";

/// Removes the cgroups of dbio processes that ended without removing theirs (killed):
/// empty, as their processes are gone.
fn remove_stale(home: &Path) {
    let Ok(entries) = fs::read_dir(home) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = fs::remove_dir(e.path());
        }
    }
}

/// How often the limit follows dbio's own memory.
const FOLLOW: Duration = Duration::from_millis(100);

/// dbio inside a memory cgroup that holds its page cache to `bytes`; dropping it
/// moves dbio back to the cgroup it came from and removes the one it made.
#[derive(Debug)]
pub struct PageCacheLimit {
    /// The page cache asked.
    pub bytes: u64,
    cg: MemoryCgroup,
    home: PathBuf,
    stop: Arc<AtomicBool>,
    follower: Option<JoinHandle<()>>,
}

/// A memory cgroup's directory and the names of its files, v1's or v2's.
#[derive(Debug, Clone)]
struct MemoryCgroup {
    dir: PathBuf,
    v2: bool,
}

impl MemoryCgroup {
    fn file(&self, v1: &str, v2: &str) -> PathBuf {
        self.dir.join(if self.v2 { v2 } else { v1 })
    }

    /// Sets the limit to the page cache asked plus what the cgroup holds beside page
    /// cache (dbio's memory, the kernel's for it) plus [`SLACK`].
    fn follow(&self, cache_bytes: u64) -> Result<(), DiagError> {
        let usage = self.file("memory.usage_in_bytes", "memory.current");
        let usage = read(&usage)?.trim().parse::<u64>().unwrap_or(0);
        let stat = read(self.file("memory.stat", "memory.stat"))?;
        let cached = stat_field(&stat, if self.v2 { "file" } else { "cache" }).unwrap_or(0);
        let other = usage.saturating_sub(cached);
        let limit = cache_bytes.saturating_add(other).saturating_add(SLACK);
        let file = self.file("memory.limit_in_bytes", "memory.max");
        fs::write(&file, limit.to_string()).map_err(|e| DiagError::io(&file, e))
    }
}

fn stat_field(stat: &str, name: &str) -> Option<u64> {
    stat.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok())?
    })
}

impl PageCacheLimit {
    /// Moves this process (all its threads, and the threads it starts later) into a
    /// new memory cgroup under its own, limited to `bytes` + [`ANON_ROOM`].
    pub fn confine(bytes: u64) -> Result<Self, DiagError> {
        let home = memory_cgroup()?;
        remove_stale(&home.dir);
        let dir = home.dir.join(format!("{PREFIX}{}", std::process::id()));
        if !dir.is_dir() {
            fs::create_dir(&dir).map_err(|e| DiagError::io(&dir, e))?;
        }
        let cg = MemoryCgroup { dir, v2: home.v2 };
        let stop = Arc::new(AtomicBool::new(false));
        let mut made = Self {
            bytes,
            cg: cg.clone(),
            home: home.dir,
            stop: stop.clone(),
            follower: None,
        };
        cg.follow(bytes)?;
        let procs = cg.dir.join("cgroup.procs");
        fs::write(&procs, std::process::id().to_string()).map_err(|e| DiagError::io(&procs, e))?;
        made.follower = Some(
            std::thread::Builder::new()
                .name("dbio-page-cache".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        // A failed look keeps the last limit: it still holds the cache.
                        let _ = cg.follow(bytes);
                        std::thread::sleep(FOLLOW);
                    }
                })
                .map_err(|e| DiagError::io(&procs, e))?,
        );
        Ok(made)
    }

    /// The cgroup dbio runs in while confined.
    pub fn dir(&self) -> &Path {
        &self.cg.dir
    }
}

impl Drop for PageCacheLimit {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(f) = self.follower.take() {
            let _ = f.join();
        }
        // Best effort: a cgroup left behind is empty and costs nothing.
        let _ = fs::write(
            self.home.join("cgroup.procs"),
            std::process::id().to_string(),
        );
        let _ = fs::remove_dir(&self.cg.dir);
    }
}

/// Writes back and evicts the cached pages of `paths`, so that the next reads of
/// them go to the device. Pages another process holds dirty or mapped may stay.
pub fn drop_cached(paths: &[PathBuf]) -> Result<(), DiagError> {
    for p in paths {
        let f = File::open(p).map_err(|e| DiagError::io(p, e))?;
        f.sync_data().map_err(|e| DiagError::io(p, e))?;
        // SAFETY: a valid descriptor; the advice changes no memory of ours.
        let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(DiagError::io(p, std::io::Error::from_raw_os_error(rc)));
        }
    }
    Ok(())
}

fn memory_cgroup() -> Result<MemoryCgroup, DiagError> {
    let mountinfo = read("/proc/self/mountinfo")?;
    let own = read("/proc/self/cgroup")?;
    let missing = || {
        DiagError::Other(
            "no memory cgroup to confine the page cache in (neither cgroup v1's memory \
             hierarchy nor v2's memory controller is mounted)"
                .into(),
        )
    };
    let (mount, root, v2) = memory_mount(&mountinfo).ok_or_else(missing)?;
    let path = own_path(&own, v2).ok_or_else(missing)?;
    let rel = path.strip_prefix(root.as_str()).unwrap_or(&path);
    let dir = Path::new(&mount).join(rel.trim_start_matches('/'));
    if v2 {
        let controllers = read(dir.join("cgroup.controllers"))?;
        if !controllers.split_whitespace().any(|c| c == "memory") {
            return Err(DiagError::Other(format!(
                "{}: the memory controller is not enabled for this cgroup",
                dir.display()
            )));
        }
    }
    Ok(MemoryCgroup { dir, v2 })
}

fn read(path: impl AsRef<Path>) -> Result<String, DiagError> {
    fs::read_to_string(path.as_ref()).map_err(|e| DiagError::io(path, e))
}

/// The mount point and root of the memory hierarchy in `mountinfo` (each line as
/// procfs parses it; one it refuses is skipped), and whether it is cgroup v2's; v1's
/// memory hierarchy first, as the kernel serves memory there when both are mounted.
fn memory_mount(mountinfo: &str) -> Option<(String, String, bool)> {
    let mut v2 = None;
    for m in mountinfo
        .lines()
        .filter_map(|l| procfs::process::MountInfo::from_line(l).ok())
    {
        let mount = m.mount_point.to_string_lossy().into_owned();
        match m.fs_type.as_str() {
            "cgroup" if m.super_options.contains_key("memory") => {
                return Some((mount, m.root, false))
            }
            "cgroup2" if v2.is_none() => v2 = Some((mount, m.root, true)),
            _ => {}
        }
    }
    v2
}

/// This process's cgroup path in the memory hierarchy from `/proc/self/cgroup`, as
/// procfs parses it.
fn own_path(cgroup: &str, v2: bool) -> Option<String> {
    use procfs::FromRead;
    let procfs::ProcessCGroups(groups) =
        procfs::ProcessCGroups::from_read(cgroup.as_bytes()).ok()?;
    groups.into_iter().find_map(|g| {
        let ours = if v2 {
            g.hierarchy == 0 && g.controllers.is_empty()
        } else {
            g.controllers.iter().any(|c| c == "memory")
        };
        ours.then_some(g.pathname)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "\
25 30 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
31 25 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
34 25 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 25 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn v1_memory_hierarchy_wins_over_v2() {
        let (mount, root, v2) = memory_mount(V1).unwrap();
        assert_eq!(
            (mount.as_str(), root.as_str(), v2),
            ("/sys/fs/cgroup/memory", "/", false)
        );
        let own = "12:pids:/\n4:memory:/db/x\n3:cpu:/quiet\n0::/\n";
        assert_eq!(own_path(own, false).as_deref(), Some("/db/x"));
    }

    #[test]
    fn v2_alone_is_found_with_its_unnamed_line() {
        let info = "40 25 0:36 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n";
        let (mount, _, v2) = memory_mount(info).unwrap();
        assert_eq!((mount.as_str(), v2), ("/sys/fs/cgroup", true));
        // A line that does not parse is passed over, not the end of the look.
        let (mount, _, _) = memory_mount(&format!("garbage\n{info}")).unwrap();
        assert_eq!(mount, "/sys/fs/cgroup");
        assert_eq!(
            own_path("0::/user.slice/a\n", true).as_deref(),
            Some("/user.slice/a")
        );
    }

    #[test]
    fn no_memory_hierarchy_is_none() {
        let info = "31 25 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
        assert!(memory_mount(info).is_none());
        assert!(own_path("3:cpu:/\n", false).is_none());
    }

    #[test]
    fn stat_fields_are_read_by_name() {
        let v1 = "cache 1048576\nrss 4096\nrss_huge 0\ntotal_cache 2097152\n";
        assert_eq!(stat_field(v1, "cache"), Some(1 << 20));
        assert_eq!(stat_field(v1, "rss"), Some(4096));
        assert_eq!(stat_field("anon 8192\nfile 0\n", "file"), Some(0));
        assert_eq!(stat_field(v1, "file"), None);
    }

    #[test]
    fn dropping_the_cache_of_a_missing_file_names_it() {
        let e = drop_cached(&[PathBuf::from("/nonexistent/dbio-data-01.dbf")]).unwrap_err();
        assert!(
            e.to_string().starts_with("/nonexistent/dbio-data-01.dbf: "),
            "{e}"
        );
    }
}
