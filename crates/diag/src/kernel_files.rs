//! The kernel's small files that the `procfs` crate does not read: a sysctl
//! under /proc/sys that is not one of its own (`sunrpc.*`), and sysfs (a block
//! device's queue, a loop device's direct I/O, a `dev` file). Each is one
//! value on one line; the parsing lives here so that no probe has its own.
//!
//! What procfs does read (stat, schedstat, diskstats, meminfo, cgroup, ...)
//! goes through it; /proc/self/mountstats and /proc/self/mountinfo keep
//! parsers of their own, in [`crate::mountstats`] and [`crate::blockdev`]
//! (they say why).

use std::path::Path;

/// A sysctl's value as a number: `name` as `sysctl` writes it
/// ("sunrpc.tcp_max_slot_table_entries"), read from /proc/sys. None where it
/// is not there (the module not loaded) or not a number.
pub fn sysctl_u64(name: &str) -> Option<u64> {
    let path = Path::new("/proc/sys").join(name.replace('.', "/"));
    parse_u64(&std::fs::read_to_string(path).ok()?)
}

/// A one-number file's value ("128\n").
pub fn parse_u64(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// A block device's request queue, from /sys/class/block/DISK/queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Queue {
    /// The I/O scheduler in use (`scheduler`'s bracketed name).
    pub scheduler: Option<String>,
    /// `nr_requests`: the requests the queue holds.
    pub depth: Option<u64>,
}

/// The queue of whole disk `disk` ("sda", "nvme0n1"); fields it cannot read
/// are None.
pub fn block_queue(disk: &str) -> Queue {
    let q = Path::new("/sys/class/block").join(disk).join("queue");
    let read = |f: &str| std::fs::read_to_string(q.join(f)).ok();
    Queue {
        scheduler: read("scheduler").and_then(|t| active_scheduler(&t)),
        depth: read("nr_requests").and_then(|t| parse_u64(&t)),
    }
}

/// The scheduler in use in a `queue/scheduler` text ("mq-deadline [bfq] none").
pub fn active_scheduler(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|s| s.starts_with('['))
        .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
}

/// Whether loop device `name` ("loop3") reads and writes its backing file
/// with O_DIRECT (/sys/block/NAME/loop/dio).
pub fn loop_direct_io(name: &str) -> bool {
    std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).is_ok_and(|t| t.trim() == "1")
}

/// A sysfs `dev` file ("8:1"): (major, minor).
pub fn read_dev(path: &Path) -> Option<(u32, u32)> {
    parse_dev(&std::fs::read_to_string(path).ok()?)
}

/// A `dev` file's text ("8:1\n").
pub fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_files_parse_as_the_kernel_writes_them() {
        assert_eq!(parse_u64("128\n"), Some(128));
        assert_eq!(parse_u64("x\n"), None);
        assert_eq!(
            active_scheduler("mq-deadline [bfq] none\n").as_deref(),
            Some("bfq")
        );
        assert_eq!(
            active_scheduler("[none] mq-deadline\n").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none\n"), None);
        assert_eq!(parse_dev("259:3\n"), Some((259, 3)));
        assert_eq!(parse_dev("8\n"), None);
        // A sysctl no kernel has, and a device no machine has.
        assert_eq!(sysctl_u64("dbio.no_such_entry"), None);
        assert_eq!(block_queue("no-such-disk"), Queue::default());
        assert!(!loop_direct_io("no-such-loop"));
        // The machine's own: kernel.pid_max is always there.
        assert!(sysctl_u64("kernel.pid_max").is_some_and(|n| n > 0));
    }
}
