//! /proc/self/mountstats parsed: the Linux NFS client's counters of one
//! mount (per operation, per transport, bytes), and the figures of two
//! readings as the result's `kernel_nfs` section.
//!
//! The text, per NFS mount (statvers 1.1):
//! ```text
//! device SRC mounted on MNT with fstype nfs statvers=1.1
//!     opts:   rw,vers=3,rsize=...,nconnect=4,...
//!     bytes:  normalread normalwrite directread directwrite serverread serverwrite readpages writepages
//!     xprt:   tcp srcport bind connects connect_time idle sends recvs bad_xids req_u bklog_u max_slots sending_u pending_u
//!     per-op statistics
//!             READ: ops trans timeouts bytes_sent bytes_recv queue_ms rtt_ms execute_ms [errors]
//! ```
//! (`xprt: udp` lacks the connect and idle fields). Other mounts have only
//! the `device` line. Lines and fields beyond what is known are ignored;
//! a malformed number ends that line's parse, not the whole.
//!
//! Parsed here rather than by the `procfs` crate, whose `MountStats` (0.18)
//! has no `xprt:` lines (the connections' sends, backlog and slots that the
//! result's `connections` hold), drops an operation's ninth field (errors),
//! keeps the operations in a map (not the kernel's order), leaves `\040` in a
//! mount point, and refuses the whole file when one NFS mount lacks a line it
//! expects (`events:`, `caps:`, ...) instead of giving the others.

use std::path::Path;

use dbio_stats::{KernelNfsConnection, KernelNfsOp, KernelNfsSection};

/// Most lines read from the file (a machine with thousands of mounts).
const MAX_LINES: usize = 1_000_000;

/// The counters of one NFS mount at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MountCounters {
    pub device: String,
    pub mount_point: String,
    pub fs_type: String,
    pub options: String,
    /// The `bytes:` line's eight counters.
    pub bytes: [u64; 8],
    pub xprts: Vec<Xprt>,
    /// Operations in the kernel's order.
    pub ops: Vec<KernelNfsOp>,
}

/// One `xprt:` line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Xprt {
    pub transport: String,
    pub local_port: u32,
    pub connects: u64,
    pub sends: u64,
    pub receives: u64,
    pub bad_xids: u64,
    pub requests_sum: u64,
    pub backlog_sum: u64,
    pub max_slots: u64,
}

impl MountCounters {
    /// Data bytes read by applications (page cache and O_DIRECT).
    pub fn read_bytes(&self) -> u64 {
        self.bytes[0] + self.bytes[2]
    }
    pub fn write_bytes(&self) -> u64 {
        self.bytes[1] + self.bytes[3]
    }
    /// Calls of `procedure` so far.
    pub fn calls(&self, procedure: &str) -> u64 {
        self.ops
            .iter()
            .find(|o| o.procedure == procedure)
            .map_or(0, |o| o.calls)
    }
}

/// Every NFS mount in `text` (a /proc/self/mountstats), in order.
pub fn parse(text: &str) -> Vec<MountCounters> {
    let mut out: Vec<MountCounters> = Vec::new();
    let mut in_nfs = false;
    for line in text.lines().take(MAX_LINES) {
        if let Some(rest) = line.strip_prefix("device ") {
            in_nfs = false;
            // "SRC mounted on MNT with fstype TYPE [statvers=...]"; the source
            // and mount point have spaces escaped as \040.
            let Some((device, rest)) = rest.split_once(" mounted on ") else {
                continue;
            };
            let Some((mnt, rest)) = rest.rsplit_once(" with fstype ") else {
                continue;
            };
            let fs_type = rest.split(' ').next().unwrap_or("");
            if fs_type == "nfs" || fs_type == "nfs4" {
                in_nfs = true;
                out.push(MountCounters {
                    device: device.to_string(),
                    mount_point: crate::blockdev::unescape(mnt),
                    fs_type: fs_type.to_string(),
                    ..Default::default()
                });
            }
            continue;
        }
        let Some(m) = out.last_mut().filter(|_| in_nfs) else {
            continue;
        };
        let line = line.trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "opts" => m.options = value.to_string(),
            "bytes" => {
                for (slot, n) in m.bytes.iter_mut().zip(numbers(value)) {
                    *slot = n;
                }
            }
            "xprt" => {
                if let Some(x) = parse_xprt(value) {
                    m.xprts.push(x);
                }
            }
            // Operation names are upper-case; other keys (age, caps, sec,
            // events, RPC iostats ...) are not operations.
            name if is_op_name(name) => {
                let n: Vec<u64> = numbers(value).collect();
                if n.len() >= 8 && !m.ops.iter().any(|o| o.procedure == name) {
                    m.ops.push(KernelNfsOp {
                        procedure: name.to_string(),
                        calls: n[0],
                        transmissions: n[1],
                        timeouts: n[2],
                        bytes_sent: n[3],
                        bytes_received: n[4],
                        queue_ms: n[5],
                        rtt_ms: n[6],
                        execute_ms: n[7],
                        errors: n.get(8).copied().unwrap_or(0),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

fn is_op_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The leading run of numbers of a line (a malformed one ends it).
fn numbers(s: &str) -> impl Iterator<Item = u64> + '_ {
    s.split_whitespace().map_while(|w| w.parse().ok())
}

fn parse_xprt(value: &str) -> Option<Xprt> {
    let mut w = value.split_whitespace();
    let transport = w.next()?.to_string();
    let n: Vec<u64> = w.map_while(|x| x.parse().ok()).collect();
    // tcp: port bind connects connect_time idle sends recvs bad_xids req_u bklog_u max_slots ...
    // udp: port bind sends recvs bad_xids req_u bklog_u max_slots ...
    let (connects, rest) = match transport.as_str() {
        "tcp" | "rdma" if n.len() >= 11 => (n[2], &n[5..]),
        "udp" if n.len() >= 8 => (0, &n[2..]),
        _ => return None,
    };
    Some(Xprt {
        transport,
        local_port: u32::try_from(n[0]).unwrap_or(0),
        connects,
        sends: rest[0],
        receives: rest[1],
        bad_xids: rest[2],
        requests_sum: rest[3],
        backlog_sum: rest[4],
        max_slots: rest[5],
    })
}

/// The mount whose mount point is `mount_point` (the last one listed, as a
/// later mount on the same point hides earlier ones).
pub fn find<'a>(mounts: &'a [MountCounters], mount_point: &Path) -> Option<&'a MountCounters> {
    mounts
        .iter()
        .rev()
        .find(|m| Path::new(&m.mount_point) == mount_point)
}

/// Reads /proc/self/mountstats and returns the counters of the NFS mount
/// at `mount_point`, or why there are none.
pub fn read(mount_point: &Path) -> Result<MountCounters, String> {
    let text = std::fs::read_to_string("/proc/self/mountstats")
        .map_err(|e| format!("cannot read /proc/self/mountstats: {e}"))?;
    let all = parse(&text);
    find(&all, mount_point).cloned().ok_or_else(|| {
        format!(
            "/proc/self/mountstats lists no NFS mount on {} (not visible in this mount namespace)",
            mount_point.display()
        )
    })
}

/// What was counted from `a` to `b` (two readings of the same mount) as the
/// result's section: operations with calls, every transport of `b` (matched
/// to `a`'s by position; a transport new in `b` counts from zero).
pub fn window(a: &MountCounters, b: &MountCounters, window_s: f64) -> KernelNfsSection {
    let ops = b
        .ops
        .iter()
        .map(|o| {
            let z = KernelNfsOp::default();
            let p = a
                .ops
                .iter()
                .find(|x| x.procedure == o.procedure)
                .unwrap_or(&z);
            KernelNfsOp {
                procedure: o.procedure.clone(),
                calls: o.calls.saturating_sub(p.calls),
                transmissions: o.transmissions.saturating_sub(p.transmissions),
                timeouts: o.timeouts.saturating_sub(p.timeouts),
                bytes_sent: o.bytes_sent.saturating_sub(p.bytes_sent),
                bytes_received: o.bytes_received.saturating_sub(p.bytes_received),
                queue_ms: o.queue_ms.saturating_sub(p.queue_ms),
                rtt_ms: o.rtt_ms.saturating_sub(p.rtt_ms),
                execute_ms: o.execute_ms.saturating_sub(p.execute_ms),
                errors: o.errors.saturating_sub(p.errors),
            }
        })
        .filter(|o| o.calls > 0 || o.transmissions > 0)
        .collect();
    let connections = b
        .xprts
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let z = Xprt::default();
            let p = a.xprts.get(i).unwrap_or(&z);
            KernelNfsConnection {
                transport: x.transport.clone(),
                local_port: x.local_port,
                connects: x.connects.saturating_sub(p.connects),
                sends: x.sends.saturating_sub(p.sends),
                receives: x.receives.saturating_sub(p.receives),
                bad_xids: x.bad_xids.saturating_sub(p.bad_xids),
                requests_sum: x.requests_sum.saturating_sub(p.requests_sum),
                backlog_sum: x.backlog_sum.saturating_sub(p.backlog_sum),
                max_slots: x.max_slots,
            }
        })
        .collect();
    KernelNfsSection {
        device: b.device.clone(),
        mount_point: b.mount_point.clone(),
        fs_type: b.fs_type.clone(),
        options: b.options.clone(),
        window_s,
        ops,
        connections,
        read_bytes: b.read_bytes().saturating_sub(a.read_bytes()),
        write_bytes: b.write_bytes().saturating_sub(a.write_bytes()),
        series: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured in scripts/knfs-lab's guest (Debian's 6.1 kernel): three
    // mounts of one ganesha export (NFSv3 nconnect=1, NFSv3 nconnect=4,
    // NFSv4.1), before and after a `dbio run` of 8 KiB O_DIRECT reads on
    // the NFSv4.1 mount.
    const BEFORE: &str = include_str!("../testdata/mountstats-6.1-before.txt");
    const AFTER: &str = include_str!("../testdata/mountstats-6.1-after.txt");

    #[test]
    fn finds_every_nfs_mount_and_only_those() {
        let all = parse(AFTER);
        let points: Vec<&str> = all.iter().map(|m| m.mount_point.as_str()).collect();
        assert_eq!(points, ["/tmp/knfs/k1", "/tmp/knfs/k4", "/tmp/knfs/v41"]);
        let k4 = find(&all, Path::new("/tmp/knfs/k4")).unwrap();
        assert_eq!(k4.device, "127.0.0.3:/export");
        assert_eq!(k4.fs_type, "nfs");
        assert!(k4.options.contains("nconnect=4"), "{}", k4.options);
        assert_eq!(k4.xprts.len(), 4);
        assert_eq!(
            k4.xprts[0],
            Xprt {
                transport: "tcp".into(),
                local_port: 770,
                connects: 2,
                sends: 477,
                receives: 477,
                bad_xids: 0,
                requests_sum: 482,
                backlog_sum: 0,
                max_slots: 4,
            }
        );
        let read = k4.ops.iter().find(|o| o.procedure == "READ").unwrap();
        assert_eq!(
            (read.calls, read.transmissions, read.bytes_received),
            (1790, 1790, 14_892_800)
        );
        assert_eq!(
            (read.queue_ms, read.rtt_ms, read.execute_ms),
            (324, 1926, 2399)
        );
        assert_eq!(k4.read_bytes(), 14_663_680);
        assert_eq!(k4.write_bytes(), 10_873 + 25_165_824);
        let v41 = find(&all, Path::new("/tmp/knfs/v41")).unwrap();
        assert_eq!(v41.fs_type, "nfs4");
        assert_eq!(v41.xprts.len(), 1);
        // NFSv4 names its operations as the protocol does.
        assert!(v41.ops.iter().any(|o| o.procedure == "OPEN_NOATTR"));
        assert!(v41.ops.iter().any(|o| o.procedure == "LAYOUTCOMMIT"));
        // Not an NFS mount, and not a mount at all.
        assert!(find(&all, Path::new("/tmp/knfs/export")).is_none());
        assert!(find(&all, Path::new("/nowhere")).is_none());
    }

    #[test]
    fn the_window_holds_what_happened_between_two_readings() {
        let a = parse(BEFORE);
        let b = parse(AFTER);
        let at = |m: &[MountCounters], p: &str| find(m, Path::new(p)).unwrap().clone();
        let w = window(&at(&a, "/tmp/knfs/v41"), &at(&b, "/tmp/knfs/v41"), 3.0);
        assert_eq!(w.calls("READ"), 1517);
        assert_eq!(w.calls("WRITE"), 51);
        assert_eq!(w.calls("GETATTR"), 7 - 1);
        assert!(
            w.ops.iter().all(|o| o.calls > 0),
            "unused operations left out"
        );
        let read = w.ops.iter().find(|o| o.procedure == "READ").unwrap();
        assert_eq!(read.retransmissions(), 0);
        assert_eq!((read.rtt_ms, read.execute_ms), (1922, 2412));
        assert_eq!(w.read_bytes, 12_427_264);
        assert_eq!(w.connections.len(), 1);
        assert_eq!(w.connections[0].sends, 1660 - 22);
        assert_eq!(w.connections[0].max_slots, 16);
        assert_eq!(w.option("vers"), Some("4.1"));
        // The other mounts did nothing meanwhile.
        let w = window(&at(&a, "/tmp/knfs/k4"), &at(&b, "/tmp/knfs/k4"), 3.0);
        assert!(w.ops.is_empty(), "{:?}", w.ops);
        assert_eq!(w.connections.len(), 4);
        assert!(w.connections.iter().all(|c| c.sends == 0));
        assert_eq!(w.option("nconnect"), Some("4"));
    }

    #[test]
    fn bad_text_gives_what_it_can_and_never_panics() {
        let text = "device a:/x mounted on /m with fstype nfs statvers=1.1\n\
                    \topts:\trw,vers=3\n\
                    \txprt:\ttcp 1 2\n\
                    \txprt:\tfoo 1 2 3 4 5 6 7 8 9 10 11 12\n\
                    \t        READ: 5 x 0\n\
                    \t       WRITE: 1 1 0 10 20 1 2 3\n\
                    \tbytes:\t1 2 junk\n\
                    device b mounted on /with\\040space with fstype nfs4\n\
                    \t      COMMIT: 99999999999999999999 1 1 1 1 1 1 1\n\
                    device c mounted on\n";
        let all = parse(text);
        assert_eq!(all.len(), 2);
        assert!(all[0].xprts.is_empty());
        assert_eq!(all[0].ops.len(), 1);
        assert_eq!(all[0].calls("WRITE"), 1);
        assert_eq!(all[0].bytes[..3], [1, 2, 0]);
        assert_eq!(all[1].mount_point, "/with space");
        assert!(all[1].ops.is_empty());
        // Counters that went backwards (a remount) count as zero, not as a wrap.
        let w = window(&all[0], &MountCounters::default(), 1.0);
        assert!(w.ops.is_empty());
        assert!(parse("").is_empty());
    }
}
