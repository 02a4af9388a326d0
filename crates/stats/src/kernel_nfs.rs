//! The kernel NFS client's views of the mount under a local target, from
//! /proc/self/mountstats: what the Linux client did on that mount during the
//! measured window, laid out like dbio's own client's dNFS views (see
//! [`NfsSection`](crate::NfsSection)). The kernel counts per mount (per
//! superblock), so these figures hold every process's traffic on that mount,
//! not dbio's alone.

use serde::{Deserialize, Serialize};

/// What the kernel client did on the target's mount between the measured
/// window's edges (readings of /proc/self/mountstats when the warm-up is
/// over, or before the first I/O without one, and when the load's last I/O
/// completed).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelNfsSection {
    /// The mount's source, e.g. "filer:/export".
    pub device: String,
    pub mount_point: String,
    /// "nfs" or "nfs4".
    pub fs_type: String,
    /// The mount's options as mountstats gives them (`opts:` line).
    pub options: String,
    /// Seconds between the two readings.
    pub window_s: f64,
    /// Per operation (READ, WRITE, GETATTR, ...), only those called in the window.
    pub ops: Vec<KernelNfsOp>,
    /// Per transport (one per connection: nconnect), in the kernel's order.
    pub connections: Vec<KernelNfsConnection>,
    /// Data bytes read and written by applications through the mount (the
    /// `bytes:` line: page cache and O_DIRECT together).
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Once a second through the window (the live view's figures).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<KernelNfsSecond>,
}

/// One NFS operation's counters over the window.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelNfsOp {
    /// "READ", "WRITE", ...
    pub procedure: String,
    /// Operations completed.
    pub calls: u64,
    /// Transmissions (the first and every retransmission).
    pub transmissions: u64,
    /// Major timeouts.
    pub timeouts: u64,
    /// Bytes sent and received (RPC headers and payload).
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Milliseconds summed over the calls: waiting to be sent (queue), on
    /// the wire and in the server (round trip), and in all (execute).
    pub queue_ms: u64,
    pub rtt_ms: u64,
    pub execute_ms: u64,
    /// Calls that ended in an error (0 where the kernel does not count them).
    pub errors: u64,
}

impl KernelNfsOp {
    /// Transmissions beyond the first of each call.
    pub fn retransmissions(&self) -> u64 {
        self.transmissions.saturating_sub(self.calls)
    }
}

/// One transport (TCP connection) of the mount over the window.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelNfsConnection {
    /// "tcp", "udp", "rdma".
    pub transport: String,
    /// Local port at the end of the window (0 when not connected).
    pub local_port: u32,
    /// Connections established.
    pub connects: u64,
    /// RPC requests sent and replies received.
    pub sends: u64,
    pub receives: u64,
    /// Replies whose XID matched no request.
    pub bad_xids: u64,
    /// Sums over the sends of the requests in flight and of those waiting
    /// in the backlog (no free slot) at each send: divided by `sends`, the
    /// mean of each.
    pub requests_sum: u64,
    pub backlog_sum: u64,
    /// Most slots (requests in flight) the transport ever had.
    pub max_slots: u64,
}

impl KernelNfsConnection {
    /// Mean requests in flight at a send.
    pub fn mean_requests(&self) -> f64 {
        ratio(self.requests_sum, self.sends)
    }
    /// Mean requests waiting for a slot at a send.
    pub fn mean_backlog(&self) -> f64 {
        ratio(self.backlog_sum, self.sends)
    }
}

/// One second of the window (the live view).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelNfsSecond {
    /// Seconds from the window's start to this second's end (negative in
    /// the warm-up).
    pub t_s: f64,
    pub reads: u64,
    pub writes: u64,
    /// Other operations (GETATTR, ACCESS, COMMIT, ...).
    pub others: u64,
    /// Mean round trip and execute time of this second's READs and WRITEs, ms.
    pub rtt_ms: f64,
    pub execute_ms: f64,
    /// Mean backlog at a send over all connections.
    pub backlog: f64,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl KernelNfsSection {
    /// Calls of `procedure` in the window (0 when it was not called).
    pub fn calls(&self, procedure: &str) -> u64 {
        self.ops
            .iter()
            .find(|o| o.procedure == procedure)
            .map_or(0, |o| o.calls)
    }

    /// The mount option `name`'s value, if given (e.g. "vers", "nconnect").
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .split(',')
            .find_map(|o| o.strip_prefix(name)?.strip_prefix('='))
    }
}
