//! The host's side of a PostgreSQL snapshot, where the server runs here: the data
//! directory's block device (its reads so far and its read-ahead) and the page cache
//! the server can have (its memory cgroup's limit less what its processes hold, or
//! the host's available memory).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{parse_block_stat, DeviceReads, HostSnapshot};

/// Reads the device under `data_directory` and the page cache of the server whose
/// postmaster is `postmaster`; what cannot be read is said in `unread`.
pub fn read(data_directory: Option<&str>, postmaster: Option<u32>) -> HostSnapshot {
    let mut h = HostSnapshot::default();
    match data_directory {
        Some(dir) => match device_of(Path::new(dir)) {
            Ok(d) => h.device = Some(d),
            Err(why) => h.unread.push(format!("the data directory's device: {why}")),
        },
        None => h.unread.push(
            "the data directory is not known (pg_settings shows data_directory to \
             superusers and pg_read_all_settings only)"
                .into(),
        ),
    }
    match page_cache(postmaster) {
        Ok((bytes, source)) => {
            h.page_cache_bytes = Some(bytes);
            h.page_cache_source = source;
        }
        Err(why) => h.page_cache_source = format!("not known: {why}"),
    }
    h
}

fn device_of(dir: &Path) -> Result<DeviceReads, String> {
    let dev = std::fs::metadata(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let id = format!("{major}:{minor}");
    let sys = PathBuf::from(format!("/sys/dev/block/{id}"));
    let real = std::fs::canonicalize(&sys).map_err(|_| {
        format!(
            "{} is on device {id}, which is no block device here (a network or \
             multi-device file system)",
            dir.display()
        )
    })?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| id.clone());
    let stat = std::fs::read_to_string(real.join("stat"))
        .map_err(|e| format!("{}: {e}", real.join("stat").display()))?;
    let (reads, read_bytes) =
        parse_block_stat(&stat).ok_or_else(|| format!("{}: unreadable", real.display()))?;
    // A partition has no queue of its own: its disk's read-ahead applies.
    let read_ahead_kb = [real.join("queue"), real.join("../queue")]
        .iter()
        .find_map(|q| std::fs::read_to_string(q.join("read_ahead_kb")).ok())
        .and_then(|t| t.trim().parse().ok());
    Ok(DeviceReads {
        name,
        dev: id,
        reads,
        read_bytes,
        read_ahead_kb,
    })
}

/// A `key value` line's value in a memory.stat or meminfo text.
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next()?.trim_end_matches(':') == key).then(|| w.next()?.parse().ok())?
    })
}

/// The page cache the server can have: its memory cgroup's limit (the lowest on its
/// path) less its anonymous and shared memory, else the host's available memory.
fn page_cache(postmaster: Option<u32>) -> Result<(u64, String), String> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").map_err(|e| e.to_string())?;
    let total = field(&meminfo, "MemTotal").unwrap_or(0) * 1024;
    if let Some(pid) = postmaster {
        if let Some((limit, used, path)) = cgroup_memory(pid) {
            if limit < total {
                let cache = limit.saturating_sub(used);
                return Ok((
                    cache,
                    format!(
                        "memory cgroup {path} of the postmaster (pid {pid}): limit {limit} \
                         bytes less {used} of its processes' anonymous and shared memory"
                    ),
                ));
            }
        }
    }
    let available = field(&meminfo, "MemAvailable").ok_or("/proc/meminfo has no MemAvailable")?;
    Ok((
        available * 1024,
        "MemAvailable of /proc/meminfo: the memory the page cache can have beside what \
         the processes hold (no memory cgroup limit on the server)"
            .into(),
    ))
}

/// (limit, anonymous + shared bytes, path) of `pid`'s memory cgroup, v1 or v2.
fn cgroup_memory(pid: u32) -> Option<(u64, u64, String)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (root, limit_file, keys): (&str, &str, [&str; 2]) =
            if controllers.split(',').any(|c| c == "memory") {
                (
                    "/sys/fs/cgroup/memory",
                    "memory.limit_in_bytes",
                    ["rss", "shmem"],
                )
            } else if controllers.is_empty() {
                ("/sys/fs/cgroup", "memory.max", ["anon", "shmem"])
            } else {
                continue;
            };
        let dir = PathBuf::from(format!("{root}{path}"));
        let stat = std::fs::read_to_string(dir.join("memory.stat")).ok()?;
        let used: u64 = keys.iter().filter_map(|k| field(&stat, k)).sum();
        // The lowest limit from the group up to the root.
        let mut limit = u64::MAX;
        let mut at = Some(dir.as_path());
        while let Some(d) = at.filter(|d| d.starts_with(root)) {
            if let Ok(v) = std::fs::read_to_string(d.join(limit_file)) {
                if let Ok(n) = v.trim().parse::<u64>() {
                    limit = limit.min(n);
                }
            }
            at = d.parent();
        }
        return Some((limit, used, path.to_string()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_hosts_root_device_and_memory_are_read() {
        let h = read(Some("/"), Some(std::process::id()));
        assert!(h.page_cache_bytes.is_some_and(|b| b > 0), "{h:?}");
        // "/" may be an overlay with no block device: then it says so.
        match &h.device {
            Some(d) => assert!(!d.name.is_empty() && d.dev.contains(':'), "{d:?}"),
            None => assert!(
                h.unread[0].starts_with("the data directory's device"),
                "{h:?}"
            ),
        }
        let h = read(None, None);
        assert!(h.unread[0].contains("superusers"), "{h:?}");
        assert!(h.page_cache_source.starts_with("MemAvailable"), "{h:?}");
    }
}
