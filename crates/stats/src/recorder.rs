//! Per-thread completion recorder: histograms, per-file counters and the
//! per-second series, turned into schema results at the end.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

pub use crate::schema::cpu_us_per_io;
use crate::schema::{
    ClassResult, CpuUsage, CurvePoint, FileResult, HistogramBucket, SecondSample, SizeBucket,
};

/// Smallest latency the histograms tell apart, nanoseconds. Values below
/// 2048 ns are exact; above that they keep 3 significant digits.
pub(crate) const HIST_LOW_NS: u64 = 1;
/// Largest latency the histograms hold, nanoseconds (60 s); longer ones
/// are counted as 60 s.
pub(crate) const HIST_HIGH_NS: u64 = 60_000_000_000;
pub(crate) const HIST_SIGFIG: u8 = 3;
/// Power-of-two microsecond buckets: bucket 0 is [0,1) us, bucket k is
/// [2^(k-1), 2^k) us. 40 buckets reach past six days.
pub(crate) const POW2_BUCKETS: usize = 40;
/// Power-of-two I/O size buckets: bucket 0 is 0 bytes, bucket k is
/// [2^(k-1), 2^k) bytes; 33 cover every u32 size.
pub(crate) const SIZE_BUCKETS: usize = 33;
/// Seconds of series room reserved up front so that the first minutes of a
/// run never allocate in `record`.
const SERIES_RESERVE: usize = 600;
/// A trailing partial second shorter than this is merged into the second
/// before it: a rate over a few milliseconds is noise.
const MIN_TAIL_S: f64 = 0.25;
const MAX_IDLE_TAIL_S: usize = 86_400;

/// An I/O class as the results name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassDesc {
    /// dbio class name, e.g. "single-block-read".
    pub name: String,
    /// The Oracle wait event, e.g. "db file sequential read".
    pub wait_event: String,
}

impl ClassDesc {
    pub fn new(name: impl Into<String>, wait_event: impl Into<String>) -> Self {
        ClassDesc {
            name: name.into(),
            wait_event: wait_event.into(),
        }
    }
}

pub(crate) struct ClassAcc {
    pub(crate) desc: ClassDesc,
    pub(crate) hist: Histogram<u64>,
    pub(crate) pow2: [u64; POW2_BUCKETS],
    /// I/Os by size as issued (see [`SIZE_BUCKETS`]).
    pub(crate) sizes: [u64; SIZE_BUCKETS],
    pub(crate) ios: u64,
    pub(crate) bytes: u64,
    pub(crate) lat_sum_ns: u64,
    pub(crate) min_ns: u64,
    pub(crate) max_ns: u64,
}

impl ClassAcc {
    pub(crate) fn new(desc: ClassDesc) -> Self {
        ClassAcc {
            desc,
            hist: new_histogram(),
            pow2: [0; POW2_BUCKETS],
            sizes: [0; SIZE_BUCKETS],
            ios: 0,
            bytes: 0,
            lat_sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    pub(crate) fn merge(&mut self, other: &ClassAcc) {
        // Same bounds on both sides and values saturated on record, so
        // adding cannot fail; ignore the impossible error rather than panic.
        let _ = self.hist.add(&other.hist);
        for (a, b) in self.pow2.iter_mut().zip(other.pow2.iter()) {
            *a += b;
        }
        for (a, b) in self.sizes.iter_mut().zip(other.sizes.iter()) {
            *a += b;
        }
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.lat_sum_ns = self.lat_sum_ns.saturating_add(other.lat_sum_ns);
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

pub(crate) fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts.
    Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG)
        .expect("constant histogram bounds are valid")
}

#[derive(Clone, Copy, Default)]
pub(crate) struct FileAcc {
    pub(crate) reads: u64,
    pub(crate) writes: u64,
    pub(crate) read_bytes: u64,
    pub(crate) write_bytes: u64,
    pub(crate) read_lat_ns: u64,
    pub(crate) write_lat_ns: u64,
}

#[derive(Clone, Copy, Default)]
pub(crate) struct SecondAcc {
    pub(crate) ios: u64,
    pub(crate) bytes: u64,
    pub(crate) lat_sum_ns: u64,
    pub(crate) max_ns: u64,
}

/// Records completions of one user thread. Not shared: each thread owns
/// one and the driver [`merge`](Recorder::merge)s them at the end.
///
/// [`record`](Recorder::record) takes no lock and allocates nothing (the
/// series grows by one slot per new second of the run, past the first
/// 600 seconds reserved up front).
pub struct Recorder {
    pub(crate) start: Instant,
    pub(crate) classes: Vec<ClassAcc>,
    pub(crate) files: Vec<FileAcc>,
    pub(crate) series: Vec<SecondAcc>,
    pub(crate) failed: u64,
    pub(crate) misrouted: u64,
}

impl Recorder {
    /// A recorder for `classes` (indexed by position in `record`), `files`
    /// data files (indexed `0..files`), timing seconds from `start`. All
    /// recorders of one run must share the same `start`.
    pub fn new(classes: &[ClassDesc], files: usize, start: Instant) -> Self {
        Recorder {
            start,
            classes: classes.iter().cloned().map(ClassAcc::new).collect(),
            files: vec![FileAcc::default(); files],
            series: Vec::with_capacity(SERIES_RESERVE),
            failed: 0,
            misrouted: 0,
        }
    }

    /// The run start this recorder times from.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Record one completed I/O of `bytes` that took `latency_ns`, reaped
    /// at `now`. An out-of-range `class` or `file` is not recorded but
    /// counted in [`misrouted`](Recorder::misrouted).
    #[inline]
    pub fn record(
        &mut self,
        class: usize,
        file: usize,
        write: bool,
        bytes: u32,
        latency_ns: u64,
        now: Instant,
    ) {
        let (Some(c), Some(f)) = (self.classes.get_mut(class), self.files.get_mut(file)) else {
            self.misrouted += 1;
            return;
        };
        let size_bucket = (u32::BITS - bytes.leading_zeros()) as usize;
        let bytes = u64::from(bytes);
        c.hist.saturating_record(latency_ns);
        c.pow2[pow2_index(latency_ns)] += 1;
        c.sizes[size_bucket] += 1;
        c.ios += 1;
        c.bytes += bytes;
        c.lat_sum_ns = c.lat_sum_ns.saturating_add(latency_ns);
        c.min_ns = c.min_ns.min(latency_ns);
        c.max_ns = c.max_ns.max(latency_ns);
        if write {
            f.writes += 1;
            f.write_bytes += bytes;
            f.write_lat_ns = f.write_lat_ns.saturating_add(latency_ns);
        } else {
            f.reads += 1;
            f.read_bytes += bytes;
            f.read_lat_ns = f.read_lat_ns.saturating_add(latency_ns);
        }
        let sec = now.saturating_duration_since(self.start).as_secs() as usize;
        if sec >= self.series.len() {
            self.series.resize(sec + 1, SecondAcc::default());
        }
        let s = &mut self.series[sec];
        s.ios += 1;
        s.bytes += bytes;
        s.lat_sum_ns = s.lat_sum_ns.saturating_add(latency_ns);
        s.max_ns = s.max_ns.max(latency_ns);
    }

    /// Count one failed I/O (the engine returned an error).
    pub fn record_failure(&mut self) {
        self.failed += 1;
    }

    /// Failed I/Os counted so far.
    pub fn failed(&self) -> u64 {
        self.failed
    }

    /// Completions dropped because their class or file index was out of range.
    pub fn misrouted(&self) -> u64 {
        self.misrouted
    }

    /// Completed I/Os recorded so far, all classes.
    pub fn ios(&self) -> u64 {
        self.classes.iter().map(|c| c.ios).sum()
    }

    /// Add another thread's recorder into this one. Classes and files are
    /// matched by index; any the other has beyond ours count as misrouted.
    pub fn merge(&mut self, other: &Recorder) {
        for (i, oc) in other.classes.iter().enumerate() {
            match self.classes.get_mut(i) {
                Some(c) => c.merge(oc),
                None => self.misrouted += oc.ios,
            }
        }
        for (i, of) in other.files.iter().enumerate() {
            match self.files.get_mut(i) {
                Some(f) => {
                    f.reads += of.reads;
                    f.writes += of.writes;
                    f.read_bytes += of.read_bytes;
                    f.write_bytes += of.write_bytes;
                    f.read_lat_ns = f.read_lat_ns.saturating_add(of.read_lat_ns);
                    f.write_lat_ns = f.write_lat_ns.saturating_add(of.write_lat_ns);
                }
                None => self.misrouted += of.reads + of.writes,
            }
        }
        if other.series.len() > self.series.len() {
            self.series.resize(other.series.len(), SecondAcc::default());
        }
        for (s, o) in self.series.iter_mut().zip(other.series.iter()) {
            s.ios += o.ios;
            s.bytes += o.bytes;
            s.lat_sum_ns = s.lat_sum_ns.saturating_add(o.lat_sum_ns);
            s.max_ns = s.max_ns.max(o.max_ns);
        }
        self.failed += other.failed;
        self.misrouted += other.misrouted;
    }

    /// Results over `elapsed` (the measured wall time of the run): one
    /// [`ClassResult`] per class that completed I/O (in class order), one
    /// [`FileResult`] per file (index order; `name` and `size` are left
    /// empty for the caller to fill), and one [`SecondSample`] per second.
    pub fn finish(
        &self,
        elapsed: Duration,
    ) -> (Vec<ClassResult>, Vec<FileResult>, Vec<SecondSample>) {
        let secs = elapsed.as_secs_f64();
        let classes = self
            .classes
            .iter()
            .filter(|c| c.ios > 0)
            .map(|c| class_result(c, secs))
            .collect();
        let files = self.files.iter().map(file_result).collect();
        (classes, files, self.series(secs))
    }

    /// Intervals [i, i+1) up to `elapsed_s`; the last one ends at
    /// `elapsed_s`. Completions stamped after the end count in the last
    /// interval, and a final fragment shorter than [`MIN_TAIL_S`] is merged
    /// into the interval before it, so every I/O appears in the series.
    fn series(&self, elapsed_s: f64) -> Vec<SecondSample> {
        if elapsed_s.is_nan() || elapsed_s <= 0.0 {
            return Vec::new();
        }
        // Bounded so that an absurd `elapsed` cannot allocate without end:
        // at most a day of idle seconds after the last completion.
        let limit = self.series.len() + MAX_IDLE_TAIL_S;
        let mut n = (elapsed_s.ceil().min(limit as f64) as usize).max(1);
        if n > 1 && elapsed_s - ((n - 1) as f64) < MIN_TAIL_S {
            n -= 1;
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let mut s = self.series.get(i).copied().unwrap_or_default();
            let mut end = (i + 1) as f64;
            if i + 1 == n {
                for later in self.series.iter().skip(n) {
                    s.ios += later.ios;
                    s.bytes += later.bytes;
                    s.lat_sum_ns = s.lat_sum_ns.saturating_add(later.lat_sum_ns);
                    s.max_ns = s.max_ns.max(later.max_ns);
                }
                end = elapsed_s;
            }
            let span = end - i as f64;
            out.push(SecondSample {
                t_s: end,
                iops: s.ios as f64 / span,
                mbps: s.bytes as f64 / span / 1e6,
                mean_us: mean_us(s.lat_sum_ns, s.ios),
                max_us: s.max_ns as f64 / 1e3,
            });
        }
        out
    }

    /// One calibration load level: all classes together, measured over
    /// `duration` at `outstanding` I/Os, with `cpu` spent by dbio meanwhile.
    /// `within_cap` is true when the mean latency is at most `max_latency_us`.
    pub fn curve_point(
        &self,
        outstanding: u32,
        duration: Duration,
        cpu: &CpuUsage,
        max_latency_us: f64,
    ) -> CurvePoint {
        let all = self.combined();
        let secs = duration.as_secs_f64();
        let mean = mean_us(all.lat_sum_ns, all.ios);
        CurvePoint {
            outstanding,
            duration_s: secs,
            ios: all.ios,
            iops: rate(all.ios as f64, secs),
            mbps: rate(all.bytes as f64, secs) / 1e6,
            mean_us: mean,
            p50_us: quantile_us(&all, 0.5),
            p99_us: quantile_us(&all, 0.99),
            cpu_us_per_io: cpu_us_per_io(cpu, all.ios),
            within_cap: all.ios > 0 && mean <= max_latency_us,
            machine_idle_pct: None,
        }
    }

    /// Power-of-two latency buckets over all classes together (for the
    /// calibration histogram at the `max_iops` point).
    pub fn histogram(&self) -> Vec<HistogramBucket> {
        buckets(&self.combined().pow2)
    }

    fn combined(&self) -> ClassAcc {
        let mut all = ClassAcc::new(ClassDesc::new("all", ""));
        for c in &self.classes {
            all.merge(c);
        }
        all
    }
}

fn rate(count: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        count / secs
    } else {
        0.0
    }
}

fn mean_us(sum_ns: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum_ns as f64 / n as f64 / 1e3
    }
}

fn quantile_us(c: &ClassAcc, q: f64) -> f64 {
    if c.ios == 0 {
        return 0.0;
    }
    // hdrhistogram answers with the highest value equivalent to the bucket;
    // never report more than the largest latency actually seen.
    (c.hist.value_at_quantile(q).min(c.max_ns)) as f64 / 1e3
}

fn class_result(c: &ClassAcc, secs: f64) -> ClassResult {
    ClassResult {
        class: c.desc.name.clone(),
        wait_event: c.desc.wait_event.clone(),
        ios: c.ios,
        bytes: c.bytes,
        iops: rate(c.ios as f64, secs),
        mbps: rate(c.bytes as f64, secs) / 1e6,
        mean_us: mean_us(c.lat_sum_ns, c.ios),
        p50_us: quantile_us(c, 0.5),
        p90_us: quantile_us(c, 0.9),
        p95_us: quantile_us(c, 0.95),
        p99_us: quantile_us(c, 0.99),
        p999_us: quantile_us(c, 0.999),
        min_us: if c.ios == 0 {
            0.0
        } else {
            c.min_ns as f64 / 1e3
        },
        max_us: c.max_ns as f64 / 1e3,
        histogram: buckets(&c.pow2),
        sizes: size_buckets(&c.sizes),
    }
}

fn size_buckets(sizes: &[u64; SIZE_BUCKETS]) -> Vec<SizeBucket> {
    sizes
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(k, &count)| SizeBucket {
            lower_bytes: if k == 0 { 0 } else { 1u64 << (k - 1) },
            upper_bytes: 1u64 << k,
            count,
        })
        .collect()
}

fn file_result(f: &FileAcc) -> FileResult {
    FileResult {
        name: String::new(),
        size: 0,
        reads: f.reads,
        writes: f.writes,
        read_bytes: f.read_bytes,
        write_bytes: f.write_bytes,
        read_mean_us: mean_us(f.read_lat_ns, f.reads),
        write_mean_us: mean_us(f.write_lat_ns, f.writes),
    }
}

/// Bucket index of a latency: whole microseconds, then the bit length.
#[inline]
fn pow2_index(latency_ns: u64) -> usize {
    let us = latency_ns / 1000;
    let bits = (u64::BITS - us.leading_zeros()) as usize;
    bits.min(POW2_BUCKETS - 1)
}

fn buckets(pow2: &[u64; POW2_BUCKETS]) -> Vec<HistogramBucket> {
    pow2.iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(k, &count)| HistogramBucket {
            lower_us: if k == 0 { 0 } else { 1u64 << (k - 1) },
            upper_us: 1u64 << k,
            count,
        })
        .collect()
}

#[cfg(test)]
#[path = "recorder_tests.rs"]
mod tests;
