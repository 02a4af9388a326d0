//! The raw form of a recorder in the result (`raw`), so that runs merge exactly; made
//! and read by `crate::raw`.

use serde::{Deserialize, Serialize};

/// A [`Recorder`](crate::Recorder) as data: counts, latency sums, exact histograms and the
/// per-second accumulators. Figures (rates, means, percentiles) are not
/// kept: they are derived again from this.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RawRecorder {
    /// Per I/O class, in the recorder's order (classes without I/O too).
    pub classes: Vec<RawClass>,
    /// Per data file, by index (the order of the run's `files`).
    pub files: Vec<RawFile>,
    /// Per second of the run: entry i holds the completions reaped in
    /// [i, i+1) seconds after the start of the run.
    pub series: Vec<RawSecond>,
    /// Failed I/Os.
    pub failed: u64,
    /// Completions dropped because their class or file was out of range.
    pub misrouted: u64,
}

/// One I/O class of a [`RawRecorder`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RawClass {
    /// dbio class name, e.g. "single-block-read".
    pub class: String,
    /// The matching Oracle wait event.
    pub wait_event: String,
    /// I/Os completed.
    pub ios: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Sum of the latencies, nanoseconds.
    pub lat_sum_ns: u64,
    /// Smallest latency, nanoseconds (0 without I/O).
    pub min_ns: u64,
    /// Largest latency, nanoseconds.
    pub max_ns: u64,
    /// Power-of-two buckets: entry 0 counts [0,1) us, entry k
    /// [2^(k-1), 2^k) us; trailing empty buckets are left out.
    pub pow2: Vec<u64>,
    /// I/O sizes: entry 0 counts 0 bytes, entry k [2^(k-1), 2^k) bytes;
    /// trailing empty buckets are left out (all empty in raw forms written
    /// before sizes were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<u64>,
    /// The latency histogram, exactly.
    pub hdr: RawHistogram,
}

/// An HDR histogram of latencies in nanoseconds, exactly: its bounds and
/// every non-zero count.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RawHistogram {
    /// Smallest value told apart, nanoseconds.
    pub low_ns: u64,
    /// Largest value held, nanoseconds.
    pub high_ns: u64,
    /// Significant decimal digits kept.
    pub sigfig: u8,
    /// The non-zero buckets in ascending order, as tokens separated by
    /// spaces: `D*N` where D is the bucket's highest value (ns) minus the
    /// previous token's (the first token's: minus 0) and N its count
    /// (`*N` is left out when N is 1). Example: "20479*3 32 64*2".
    pub counts: String,
}

/// One data file of a [`RawRecorder`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RawFile {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Sum of read latencies, nanoseconds.
    pub read_lat_ns: u64,
    /// Sum of write latencies, nanoseconds.
    pub write_lat_ns: u64,
}

/// One second of a [`RawRecorder`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RawSecond {
    pub ios: u64,
    pub bytes: u64,
    /// Sum of latencies, nanoseconds.
    pub lat_sum_ns: u64,
    /// Largest latency, nanoseconds.
    pub max_ns: u64,
}
