//! The result schema. These structs *are* the JSON format: every field is
//! documented here and serialized as is. Bump [`FORMAT_VERSION`] on any
//! incompatible change.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod nfs;
mod open_loop;
mod raw;
mod sched;
pub use nfs::*;
pub use open_loop::*;
pub use raw::*;
pub use sched::*;

/// Version of the JSON result format.
///
/// - 2: the dNFS views moved into the `nfs` section (`servers`,
///   `channels`, `nfs_stats` as `stats`, `events`, and `files[].server` as
///   `files`); `labels` and `raw` were added. [`upgrade_json`](crate::upgrade_json)
///   reads format 1.
pub const FORMAT_VERSION: u32 = 2;

/// Result of `dbio run`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    /// Always "run".
    pub kind: String,
    /// JSON format version ([`FORMAT_VERSION`]).
    pub format_version: u32,
    /// dbio version that wrote the file.
    pub dbio_version: String,
    /// Start time, seconds since the Unix epoch (UTC).
    pub started_unix: f64,
    /// Measured duration in seconds (wall clock, from first I/O to last completion).
    pub elapsed_s: f64,
    /// True when the run was stopped early (Ctrl-C, SIGTERM, error): figures cover what was measured.
    pub interrupted: bool,
    /// Why the run stopped early, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The settings the run used.
    pub config: RunConfig,
    /// Total I/Os completed, all classes.
    pub ios: u64,
    /// Total I/Os per second, all classes.
    pub iops: f64,
    /// Total megabytes (10^6 bytes) per second, all classes.
    pub mbps: f64,
    /// I/Os that failed (error returned by the engine).
    pub failed_ios: u64,
    /// CPU time of the dbio process over the run.
    pub cpu: CpuUsage,
    /// CPU microseconds (user + system) of the dbio process per completed I/O.
    pub cpu_us_per_io: f64,
    /// Per I/O class, in a fixed order; classes that issued no I/O are left out.
    pub classes: Vec<ClassResult>,
    /// Per data file (as V$IOSTAT_FILE), in the order the files were opened.
    pub files: Vec<FileResult>,
    /// One sample per second of the run, in order; idle seconds appear with
    /// zero rates. The last sample ends at `elapsed_s` and its rates are over
    /// its own length; a final fragment shorter than a quarter second is
    /// merged into the second before it. The samples' I/Os add up to `ios`.
    pub series: Vec<SecondSample>,
    /// What the NFS client saw (the dNFS views); absent for local targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs: Option<Box<NfsSection>>,
    /// Data verification (`--verify`): blocks checked by the reads of the run
    /// and by the final pass, and what was wrong; absent without `--verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Box<VerifySummary>>,
    /// Who this result is (configuration, repeat, rank, ...), set by whoever
    /// runs it; left out when empty.
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    /// A run over several hosts (`mpirun ... dbio run`): one entry per
    /// rank, in rank order, the figures of that rank alone (the fields
    /// above are the merge of all); left out for a single process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankSummary>,
    /// The recorder itself, so that runs merge exactly
    /// ([`merge_runs`](crate::merge_runs)); left out with `--no-raw`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Box<RawRecorder>>,
    /// The I/O threads' wait for a CPU in the measured window (local engines' users),
    /// where the kernel keeps schedstat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_threads: Option<ThreadSched>,
    /// What the block devices under a local target and the machine's CPUs
    /// did during the run, sampled from /proc/diskstats and /proc/stat
    /// once a second; absent for NFS targets and where nothing was found.
    /// Optional: results without it read as before (no format change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Box<DeviceSection>>,
    /// Whether reads could have come from a cache in memory rather than the
    /// storage (the data set against the memory that could hold it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheCheck>,
    /// An open-loop run (`--rate`): the rates asked and achieved per class
    /// and the backlog (latencies then count from each I/O's intended
    /// start); absent from closed-loop runs. Optional: no format change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<Box<OpenLoopSection>>,
    /// What the kernel NFS client did on the mount under a local target
    /// during the measured window (from /proc/self/mountstats; every
    /// process's traffic on that mount); absent for other targets.
    /// Optional: no format change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_nfs: Option<Box<crate::kernel_nfs::KernelNfsSection>>,
    /// The whole machine's CPU over the measured window (/proc/stat), for
    /// CPU per I/O where the kernel does part of the work. Optional: no format change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_cpu: Option<crate::machine_cpu::MachineCpu>,
    /// What the run really got (build, engine, mount, NFS session), so that runs
    /// compared against each other can be checked for differences nobody asked for.
    /// Optional: older results read as before (no format change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Box<Provenance>>,
    /// Service-level objectives (`--slo`) judged against this run, one per
    /// objective; left out when none was set. Optional: no format change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slo: Vec<crate::slo::SloOutcome>,
}

/// The facts of a run beyond its options: which build ran it, on what.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// dbio version (Cargo package version).
    pub dbio_version: String,
    /// Git commit dbio was built from, "unknown" when the build did not know it.
    pub git_commit: String,
    /// The engine the I/O went through.
    pub engine: String,
    /// The command-line options the run was given, as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The kernel mount holding a local target (from /proc/self/mountinfo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<MountProvenance>,
    /// What dbio's NFS client negotiated, per server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nfs: Vec<NfsProvenance>,
}

/// A kernel mount: where, what, from where, with which options.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MountProvenance {
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    /// Per-mount and per-superblock options, comma-separated (e.g. NFS vers=, rsize=).
    pub options: String,
}

/// What dbio's NFS client got from one server.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsProvenance {
    pub server: String,
    /// Negotiated NFS version, e.g. "3" or "4.1".
    pub version: String,
    /// READ and WRITE sizes used, bytes.
    pub rsize: u32,
    pub wsize: u32,
    /// Network paths.
    pub paths: u32,
    /// Connections (over all paths).
    pub connections: u32,
    /// Fore-channel slots of the metadata session (NFSv4.1), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<u32>,
}

impl Provenance {
    /// The NFS facts of an NFS section: one entry per server; connections are counted
    /// over the channels of every path of that server.
    pub fn nfs_of(section: &NfsSection) -> Vec<NfsProvenance> {
        let servers = section.servers.len().max(1) as u32;
        section
            .servers
            .iter()
            .map(|s| NfsProvenance {
                server: s.name.clone(),
                version: s.nfs_version.clone(),
                rsize: s.rsize,
                wsize: s.wsize,
                paths: s.paths.len() as u32,
                // The channels of a section are not tagged with their server; shared
                // evenly is exact for the usual single server.
                connections: section.channels.len() as u32 / servers,
                slots: s.sessions.first().map(|x| x.slots),
            })
            .collect()
    }
}

/// Whether a run's reads could have been served from memory: the data set
/// against the page cache of this host, or of an NFS server on this host
/// (ganesha serves READs from its page cache).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CacheCheck {
    /// Which cache: "page cache" (this host's), "NFS server's page cache".
    pub cache: String,
    /// "bypassed" (O_DIRECT), "fits" (the whole data set fits in memory),
    /// "partly" (a share of random reads can hit), "unlikely" (a tenth or
    /// less can), or "unknown" (a server whose memory dbio cannot see).
    pub verdict: String,
    /// Bytes of memory that could hold the data set (MemTotal); 0 unknown.
    pub memory_bytes: u64,
    /// Bytes of the data set.
    pub dataset_bytes: u64,
    /// Data-set size from which at most a tenth of uniformly random reads can
    /// find their block in that memory (ten times it); 0 unknown.
    pub avoid_from_bytes: u64,
    /// The same in one line, as the terminal report shows it.
    pub note: String,
}

/// Device and machine statistics sampled beside a run (`iostat -x` and
/// `mpstat` figures). Time `t_s` counts from the start of sampling, which
/// begins just before the run's first I/O (warm-up included) and ends
/// after its last completion.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceSection {
    /// Seconds between samples (normally 1).
    pub interval_s: f64,
    /// Seconds sampled, from the first reading to the last.
    pub elapsed_s: f64,
    /// The block devices under the target's file system: the file system's
    /// device first, then what it rests on (a partition's disk, a loop
    /// device's backing file's device, device-mapper and md members).
    pub devices: Vec<DeviceStats>,
    /// The machine's CPU time per interval, all CPUs together.
    pub cpu: Vec<HostCpuSample>,
}

/// One block device over the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceStats {
    /// Kernel name, as in /proc/diskstats (e.g. "nvme0n1", "loop3", "dm-0").
    pub name: String,
    /// "major:minor".
    pub dev: String,
    /// Why it is listed: "file system", "disk of partition", "loop backing
    /// file", "device-mapper member", "md member".
    pub role: String,
    /// Whole-run figures: the same columns over the whole sampled time.
    pub total: DeviceSample,
    /// One sample per interval, in order.
    pub samples: Vec<DeviceSample>,
}

/// One interval of a device (`iostat -x` columns). Requests are counted as
/// the device completed them (after merging).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceSample {
    /// Seconds since sampling started (end of this interval).
    pub t_s: f64,
    /// Read requests completed in the interval.
    pub reads: u64,
    /// Write requests completed in the interval.
    pub writes: u64,
    /// Bytes read in the interval.
    pub read_bytes: u64,
    /// Bytes written in the interval.
    pub write_bytes: u64,
    /// Read requests per second (r/s).
    pub r_s: f64,
    /// Write requests per second (w/s).
    pub w_s: f64,
    /// Megabytes (10^6 bytes) read per second (rMB/s).
    pub rmb_s: f64,
    /// Megabytes (10^6 bytes) written per second (wMB/s).
    pub wmb_s: f64,
    /// Average read request size, KiB (rareq-sz).
    pub rareq_kib: f64,
    /// Average write request size, KiB (wareq-sz).
    pub wareq_kib: f64,
    /// Average time of a read request, queue and service, ms (r_await).
    pub r_await_ms: f64,
    /// Average time of a write request, queue and service, ms (w_await).
    pub w_await_ms: f64,
    /// Average number of requests queued or in service (aqu-sz).
    pub aqu_sz: f64,
    /// Percent of the interval the device had requests in flight (%util).
    pub util_pct: f64,
}

/// The machine's CPU over one interval, percent of all CPUs' time.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostCpuSample {
    /// Seconds since sampling started (end of this interval).
    pub t_s: f64,
    /// User mode, nice included (%usr + %nice).
    pub user_pct: f64,
    /// Kernel mode, interrupts included (%sys + %irq + %soft).
    pub system_pct: f64,
    /// Idle with I/O outstanding (%iowait).
    pub iowait_pct: f64,
    /// Taken by the hypervisor (%steal).
    pub steal_pct: f64,
    /// Idle (%idle).
    pub idle_pct: f64,
}

/// One rank of a run over several hosts: who it was and what it measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RankSummary {
    /// MPI rank, 0 to ranks - 1.
    pub rank: u32,
    /// Host name of the rank.
    pub host: String,
    /// The rank's own part of the data set (its target).
    pub target: String,
    /// Users (threads) of the rank.
    pub users: u32,
    /// I/Os the rank completed, all classes.
    pub ios: u64,
    /// The rank's I/Os per second.
    pub iops: f64,
    /// The rank's megabytes (10^6 bytes) per second.
    pub mbps: f64,
    /// Mean latency of the rank's I/Os, all classes, microseconds.
    pub mean_us: f64,
    /// The rank's CPU microseconds (user + system) per completed I/O.
    pub cpu_us_per_io: f64,
    /// Measured duration of the rank, seconds.
    pub elapsed_s: f64,
    /// True when the rank stopped early.
    pub interrupted: bool,
}

impl RankSummary {
    /// The summary of `run`, the result of rank `rank` on `host`.
    pub fn of(rank: u32, host: &str, run: &RunResult) -> RankSummary {
        let lat: f64 = run.classes.iter().map(|c| c.mean_us * c.ios as f64).sum();
        RankSummary {
            rank,
            host: host.into(),
            target: run.config.target.clone(),
            users: run.config.users,
            ios: run.ios,
            iops: run.iops,
            mbps: run.mbps,
            mean_us: if run.ios > 0 {
                lat / run.ios as f64
            } else {
                0.0
            },
            cpu_us_per_io: run.cpu_us_per_io,
            elapsed_s: run.elapsed_s,
            interrupted: run.interrupted,
        }
    }
}

/// Labels of a result: name to value, in name order.
pub type Labels = BTreeMap<String, String>;

/// What `--verify` found. Every count must be zero on healthy storage.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifySummary {
    /// Blocks checked: by reads during the run plus the final pass (a redo
    /// log sector counts as a block).
    pub blocks_checked: u64,
    /// Blocks checked by the final pass alone.
    pub final_pass_blocks: u64,
    /// True when the final pass read every block (false when interrupted).
    pub final_pass_complete: bool,
    /// Lost writes: a block holds an older generation than a write that completed.
    pub lost: u64,
    /// Torn blocks: sectors of one block carry different write generations.
    pub torn: u64,
    /// Misdirected blocks: a valid block of another file, block number or data set.
    pub misdirected: u64,
    /// Checksum failures: content that does not match its checksum, or no block head.
    pub checksum: u64,
    /// The first bad blocks found (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bad: Vec<VerifyBadBlock>,
}

/// One bad block.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifyBadBlock {
    /// File name in the data set.
    pub file: String,
    /// Block number in the file (512-byte sector for the redo log).
    pub block: u64,
    /// "lost", "torn", "misdirected" or "checksum".
    pub kind: String,
    /// What was expected and found.
    pub detail: String,
}

/// The settings of a run, as resolved from options and profile.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunConfig {
    /// Target directory or URL.
    pub target: String,
    /// Engine name (psync, io_uring, null, nfs).
    pub engine: String,
    /// Profile name, or "custom".
    pub profile: String,
    /// Workload classes enabled, by name.
    pub workloads: Vec<String>,
    /// Concurrent users (sessions), each its own thread.
    pub users: u32,
    /// Outstanding I/Os per user.
    pub outstanding: u32,
    /// Database block size in bytes.
    pub block_size: u32,
    /// O_DIRECT used (false with --buffered).
    pub direct: bool,
    /// Time limit in seconds, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_s: Option<f64>,
    /// Loop limit per user, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    /// Open loop: the `--rate` asked, as given (I/Os per second, or
    /// CLASS=IOPS,...); absent for a closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    /// Percent of block operations that are updates (SLOB UPDATE_PCT).
    pub update_pct: u32,
    /// Percent of operations that are scans (SLOB SCAN_PCT).
    pub scan_pct: u32,
    /// Redo stress: "lite" or "heavy".
    pub redo_stress: String,
    /// How redo writes were made durable when not O_DSYNC writes:
    /// "fdatasync" (written, then the log fdatasync'ed). Absent: dsync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redo_flush: Option<String>,
    /// The redo log was opened without O_DIRECT whatever `direct` says.
    /// Absent: opened like the data files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redo_buffered: bool,
    /// Total data-set size in bytes.
    pub dataset_bytes: u64,
}

/// Statistics of one I/O class.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ClassResult {
    /// dbio class name, e.g. "single-block-read".
    pub class: String,
    /// The matching Oracle wait event, e.g. "db file sequential read".
    pub wait_event: String,
    /// I/Os completed.
    pub ios: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// I/Os per second over the run.
    pub iops: f64,
    /// Megabytes (10^6 bytes) per second over the run.
    pub mbps: f64,
    /// Mean latency, microseconds.
    pub mean_us: f64,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 90th percentile latency, microseconds.
    pub p90_us: f64,
    /// 95th percentile latency, microseconds (absent from results of before it was kept:
    /// read as 0).
    #[serde(default)]
    pub p95_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// 99.9th percentile latency, microseconds.
    pub p999_us: f64,
    /// Smallest latency, microseconds.
    pub min_us: f64,
    /// Largest latency, microseconds.
    pub max_us: f64,
    /// Oracle-style power-of-two buckets (as V$EVENT_HISTOGRAM_MICRO); empty buckets are left out.
    pub histogram: Vec<HistogramBucket>,
    /// I/O sizes as issued, power-of-two buckets (as dtrace's bitesize);
    /// empty buckets are left out. Absent from results of before it was
    /// kept (read as empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<SizeBucket>,
}

/// One power-of-two size bucket: I/Os with `lower_bytes <= size < upper_bytes`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SizeBucket {
    /// Lower bound, bytes (0 for the first bucket).
    pub lower_bytes: u64,
    /// Upper bound, bytes (exclusive); a power of two.
    pub upper_bytes: u64,
    /// I/Os that fell in this bucket.
    pub count: u64,
}

/// One power-of-two latency bucket: I/Os with `lower_us <= latency < upper_us`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HistogramBucket {
    /// Lower bound, microseconds (0 for the first bucket).
    pub lower_us: u64,
    /// Upper bound, microseconds (exclusive); a power of two.
    pub upper_us: u64,
    /// I/Os that fell in this bucket.
    pub count: u64,
}

/// Per-file counters (as V$IOSTAT_FILE).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FileResult {
    /// File path or name.
    pub name: String,
    /// File size in bytes.
    pub size: u64,
    /// Read I/Os completed.
    pub reads: u64,
    /// Write I/Os completed.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Mean read latency, microseconds (0 when no reads).
    pub read_mean_us: f64,
    /// Mean write latency, microseconds (0 when no writes).
    pub write_mean_us: f64,
}

/// One second of the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SecondSample {
    /// Seconds since the start of the run (end of this interval).
    pub t_s: f64,
    /// I/Os per second in this interval, all classes.
    pub iops: f64,
    /// Megabytes per second in this interval, all classes.
    pub mbps: f64,
    /// Mean latency in this interval, microseconds.
    pub mean_us: f64,
    /// Largest latency in this interval, microseconds.
    pub max_us: f64,
}

/// Process CPU time.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuUsage {
    /// User-mode CPU seconds.
    pub user_s: f64,
    /// Kernel-mode CPU seconds.
    pub system_s: f64,
}

/// Result of `dbio calibrate`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CalibrateResult {
    /// Always "calibrate".
    pub kind: String,
    /// JSON format version ([`FORMAT_VERSION`]).
    pub format_version: u32,
    /// dbio version that wrote the file.
    pub dbio_version: String,
    /// Start time, seconds since the Unix epoch (UTC).
    pub started_unix: f64,
    /// Whole duration of the calibration, seconds.
    pub elapsed_s: f64,
    /// True when stopped early; the figures are from the points measured so far.
    pub interrupted: bool,
    /// Target directory or URL.
    pub target: String,
    /// Engine used.
    pub engine: String,
    /// Data-set size in bytes.
    pub dataset_bytes: u64,
    /// Latency cap in microseconds (from --max-latency).
    pub max_latency_us: f64,
    /// Highest 8 KiB random-read IOPS measured with mean latency within the cap.
    pub max_iops: f64,
    /// Outstanding I/Os at which `max_iops` was measured.
    pub max_iops_outstanding: u32,
    /// Mean latency at `max_iops`, microseconds.
    pub latency_us: f64,
    /// 99th percentile latency at `max_iops`, microseconds.
    pub latency_p99_us: f64,
    /// Highest 1 MiB read throughput, megabytes (10^6 bytes) per second.
    pub max_mbps: f64,
    /// Outstanding I/Os at which `max_mbps` was measured.
    pub max_mbps_outstanding: u32,
    /// Why each ramp stopped: "knee", "latency cap", "max outstanding" or "time".
    pub iops_stop: String,
    /// Why the throughput ramp stopped.
    pub mbps_stop: String,
    /// The 8 KiB random-read load curve, one point per load level, in order.
    pub iops_curve: Vec<CurvePoint>,
    /// The 1 MiB read load curve.
    pub mbps_curve: Vec<CurvePoint>,
    /// Latency histogram at the `max_iops` point.
    pub histogram: Vec<HistogramBucket>,
    /// Who this result is (configuration, repeat, rank, ...); left out when empty.
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    /// The devices under a local target and the machine's CPU during the
    /// calibration (as in [`RunResult::devices`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Box<DeviceSection>>,
    /// Whether reads could have come from a cache in memory rather than the
    /// storage (the data set against the memory that could hold it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheCheck>,
    /// Said when this host's CPU, not the storage, may have set a figure: the
    /// machine was nearly idle-less, or dbio's own threads were busy all the
    /// time, at the load of `max_iops` or `max_mbps`; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_limit: Option<String>,
}

/// One load level of a calibration ramp.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    /// Outstanding I/Os (total across threads).
    pub outstanding: u32,
    /// Seconds measured at this level.
    pub duration_s: f64,
    /// I/Os completed at this level.
    pub ios: u64,
    /// I/Os per second.
    pub iops: f64,
    /// Megabytes (10^6 bytes) per second.
    pub mbps: f64,
    /// Mean latency, microseconds.
    pub mean_us: f64,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// CPU microseconds of dbio per I/O at this level.
    pub cpu_us_per_io: f64,
    /// Mean latency was within the cap.
    pub within_cap: bool,
    /// Share of this host's CPU time that was idle over the level, percent
    /// (all CPUs, from /proc/stat); absent where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_idle_pct: Option<f64>,
}

/// `kind` of a [`RunResult`].
pub const RUN_KIND: &str = "run";
/// `kind` of a [`CalibrateResult`].
pub const CALIBRATE_KIND: &str = "calibrate";

impl RunResult {
    /// Set the run-wide totals (`ios`, `iops`, `mbps`, `cpu_us_per_io`)
    /// from `classes`, `elapsed_s` and `cpu`, which must be filled first.
    pub fn fill_totals(&mut self) {
        self.ios = self.classes.iter().map(|c| c.ios).sum();
        let bytes: u64 = self.classes.iter().map(|c| c.bytes).sum();
        if self.elapsed_s > 0.0 {
            self.iops = self.ios as f64 / self.elapsed_s;
            self.mbps = bytes as f64 / self.elapsed_s / 1e6;
        } else {
            self.iops = 0.0;
            self.mbps = 0.0;
        }
        self.cpu_us_per_io = cpu_us_per_io(&self.cpu, self.ios);
    }
}

/// CPU microseconds per I/O (0 when no I/O).
pub fn cpu_us_per_io(cpu: &CpuUsage, ios: u64) -> f64 {
    if ios == 0 {
        0.0
    } else {
        (cpu.user_s + cpu.system_s) * 1e6 / ios as f64
    }
}
