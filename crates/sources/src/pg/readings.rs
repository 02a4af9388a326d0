//! What is read beside each snapshot of a capture, as the capture file keeps it: the
//! host's side (the server's reads from `/proc/PID/io`, the data directory's device,
//! the memory cgroup), the relations' reads, and the server's processes' scheduler
//! counters. Plain data, below the capture that holds it and the arithmetic over it
//! (`cache.rs`, `cpu.rs`).

use serde::{Deserialize, Serialize};

/// The host's side of a snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostSnapshot {
    /// The block device under the data directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceReads>,
    /// Bytes of page cache the server can have, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache_bytes: Option<u64>,
    /// Where `page_cache_bytes` came from, or why it is not known.
    #[serde(default)]
    pub page_cache_source: String,
    /// What could not be read, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<String>,
}

/// A block device's reads so far (`/sys/dev/block/MAJ:MIN/stat`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceReads {
    /// Kernel name: "vda1", "zram0", "loop3".
    pub name: String,
    /// "major:minor".
    pub dev: String,
    /// Reads completed (field 1).
    pub reads: u64,
    /// Bytes read (field 3, sectors of 512 bytes).
    pub read_bytes: u64,
    /// Its read-ahead (`queue/read_ahead_kb`, of the disk for a partition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u32>,
}

/// One relation's reads so far (`pg_statio_all_tables`), in the database captured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RelationReads {
    pub relid: u32,
    /// "schema.table".
    pub name: String,
    /// heap_blks_read + toast_blks_read.
    pub heap_reads: u64,
    /// idx_blks_read + tidx_blks_read.
    pub index_reads: u64,
    /// pg_table_size: heap, toast, free space and visibility maps.
    pub heap_bytes: u64,
    /// pg_indexes_size.
    pub index_bytes: u64,
    /// heap_blks_hit + toast_blks_hit: found in shared buffers (0 in files of older
    /// dbio).
    #[serde(default)]
    pub heap_hits: u64,
    /// idx_blks_hit + tidx_blks_hit.
    #[serde(default)]
    pub index_hits: u64,
}

/// The server's processes' scheduler statistics when a snapshot was taken.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SchedSnapshot {
    /// Each server process read: those pg_stat_activity lists, less the capture's own
    /// session, found in /proc as the same process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessSched>,
    /// Why some or all of them could not be read (a remote server, another pid
    /// namespace, a process gone), where any could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
}

/// One server process's `/proc/PID/schedstat`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSched {
    pub pid: u32,
    /// pg_stat_activity's backend_type: "client backend", "walwriter", ...
    pub backend_type: String,
    /// pg_stat_activity's backend_start, seconds since 1970: a pid reused between
    /// the snapshots is another process.
    pub started: f64,
    /// Field 2: nanoseconds runnable but waiting on a run queue for a CPU.
    pub run_delay_ns: u64,
    /// Field 3: timeslices run (times put on a CPU).
    pub timeslices: u64,
    /// Field 10 of `/proc/PID/stat`: minor page faults so far (0 in captures made
    /// before dbio read it).
    #[serde(default)]
    pub minor_faults: u64,
    /// `read_bytes` of `/proc/PID/io`: bytes this process caused to be fetched from
    /// storage so far (read-ahead included); None where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
}
