//! The replay's report as its JSON keeps it: the steps, the events compared, the
//! answer, the page cache and the memory ramp. Data only, below the code that fills
//! it in (`outcome`, `answer`, `shape`).

use dbio_stats::slo::SloOutcome;
use serde::{Deserialize, Serialize};

use dbio_sources::model::WorkloadModel;

/// `kind` of a replay's JSON.
pub const REPLAY_KIND: &str = "replay";
/// `format_version` of a replay's JSON: 2 since `verdict` is the answer (1: the load).
pub const REPLAY_FORMAT: u32 = 2;

/// The result of `dbio replay`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Always "replay".
    pub kind: String,
    pub format_version: u32,
    /// The model run (rates at 1x).
    pub model: WorkloadModel,
    /// The scale production is compared at: 1 when the ramp has it, else its first.
    pub reference_scale: f64,
    /// Each step of the ramp, in the order run.
    pub steps: Vec<ReplayStep>,
    /// Per replayed event at the reference scale: production beside this storage.
    pub events: Vec<EventComparison>,
    /// The largest scale at which this and every smaller step kept every class's
    /// rate (within 2%) and mean latency (within 2x of the reference step's); none
    /// when the first step did not.
    pub headroom: Option<f64>,
    /// Will this storage serve production's load at production's latency: yes, no, or
    /// cannot say (no event had I/Os enough to judge). None in files of format 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    /// The answer in one line, what every form of the report opens with: "No: at 1.0x
    /// production's load, db file sequential read is 5.0x slower than production (254
    /// µs against 47 µs)" (format 1: the load line).
    pub verdict: String,
    /// The largest scale, from the reference scale up, at which this and every step
    /// before it kept its rates and met its objectives; none when the reference did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serves_up_to: Option<f64>,
    /// The ramp in one line: "the load holds up to 2.0x production's (3.0x did not:
    /// ...)", rates and growth of latency only.
    #[serde(default)]
    pub load: String,
    /// Objectives judged at the reference scale (production's own mean latencies for
    /// the events with I/Os enough to judge, unless `--slo` says otherwise).
    pub slo: Vec<SloOutcome>,
    /// Production's page cache beside the replay's, where the model knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<PageCacheOutcome>,
    /// Several page-cache sizes (`--page-cache A,B,...`), each at the reference
    /// scale, the first the one judged above; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemoryStep>,
}

/// One step of a ramp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayStep {
    /// Times the production rates.
    pub scale: f64,
    pub elapsed_s: f64,
    /// The run's own open-loop verdict: whether the storage fell behind.
    pub behind: bool,
    pub pace: String,
    /// Every class kept its rate and latency.
    pub kept: bool,
    /// Why not, where it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The objectives this step missed, in words, the worst first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missed: Vec<String>,
    pub classes: Vec<StepClass>,
}

/// One class in one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepClass {
    pub class: String,
    pub asked_iops: f64,
    pub achieved_iops: f64,
    pub ios: u64,
    pub mean_us: f64,
    pub p99_us: f64,
    /// The mean as set beside production's: the service time where the model compares
    /// service times, plus the CPU term where it has one; none without I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_us: Option<f64>,
}

/// One event: production against this storage at the reference scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventComparison {
    /// Oracle wait event.
    pub event: String,
    /// dbio class replaying it.
    pub class: String,
    pub production_mean_us: Option<f64>,
    /// Why production has no mean, where it has none (not timed, not judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_note: Option<String>,
    /// This storage's mean: from each I/O's intended start, or where the model times
    /// I/O calls only (`service_time`), from its issue.
    pub here_mean_us: Option<f64>,
    /// Mean time an I/O waited after its intended start before it was issued (its
    /// session busy with the one before), microseconds; in `here_mean_us` unless the
    /// model compares service times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub here_wait_us: Option<f64>,
    pub here_p99_us: Option<f64>,
    /// The CPU term of the prediction, microseconds: the time production's processes
    /// waited for a CPU per wake-up (the model's `cpu_wait_us`), in production's times,
    /// less the replay's own threads' (`own_cpu_wait_us`), never below 0, times the
    /// share of calls that slept here (`slept_share`), where counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_us: Option<f64>,
    /// The replay's own I/O threads' wait for a CPU per timeslice, microseconds,
    /// already in this storage's times: taken from production's to give `cpu_wait_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_cpu_wait_us: Option<f64>,
    /// The share of the class's calls that slept in the replay (0 to 1), where counted:
    /// `cpu_wait_us` is production's wait beyond the replay's own, times this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slept_share: Option<f64>,
    /// Where `cpu_wait_us` came from, or why it is not known; none for models without
    /// the term (AWR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_note: Option<String>,
    /// What production would time here: `here_mean_us` plus `cpu_wait_us`, where the
    /// model has that term; the factor and change are of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_mean_us: Option<f64>,
    /// Times better here (production mean over this mean, or over
    /// `predicted_mean_us` where there is one): above 1 faster here.
    pub factor: Option<f64>,
    /// Change of the mean against production's, percent.
    pub change_pct: Option<f64>,
    /// Why the event is not judged, where it counted too few I/Os to give a mean, in
    /// production's window or in the replay's step: "1 flush in 30 s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub too_few: Option<String>,
    /// Production's rate at the reference scale, asked, and achieved here.
    pub asked_iops: f64,
    pub achieved_iops: f64,
    /// Histogram in production's buckets, where production printed one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<HistogramRow>,
}

/// One bucket of an event's histogram: shares of waits in `[lower_us, upper_us)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistogramRow {
    pub lower_us: u64,
    pub upper_us: u64,
    pub production_pct: f64,
    pub here_pct: f64,
}

/// The answer, as the verdict line opens with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// Production's rates kept and every judged event within its objective.
    Yes,
    /// A rate not kept or an objective missed at the reference scale.
    No,
    /// Rates kept, but no event had I/Os enough (or a production latency) to judge.
    CannotSay,
}

impl Answer {
    /// `dbio replay`'s exit code: 3 (as a missed objective of `dbio run`) for a no.
    pub fn exit_code(self) -> i32 {
        match self {
            Answer::No => dbio_stats::slo::SLO_FAILED,
            Answer::Yes | Answer::CannotSay => 0,
        }
    }
}

/// Production's page cache beside the replay's, at the reference step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PageCacheOutcome {
    /// Production's share of reads served by its page cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_hit_share: Option<f64>,
    /// Production's mean device read, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_device_read_bytes: Option<u64>,
    /// Production's page cache, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_bytes: Option<u64>,
    /// The replay's page cache, bytes (`--page-cache`); none when it read O_DIRECT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_bytes: Option<u64>,
    /// The share of the replay's single-block reads its device did not see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_hit_share: Option<f64>,
    /// The replay's mean device read, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_device_read_bytes: Option<u64>,
    /// How the replay's figures were counted, or why they are not known.
    pub replay_source: String,
}

/// One page-cache size of a memory ramp: what the replay's reads did with it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryStep {
    pub page_cache_bytes: u64,
    /// The share of the replay's reads its device did not see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_share: Option<f64>,
    /// The read events: production's mean beside this size's prediction.
    pub events: Vec<MemoryEvent>,
}

/// A read event at one page-cache size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryEvent {
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_mean_us: Option<f64>,
    /// This storage's mean with the CPU term where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_mean_us: Option<f64>,
}
