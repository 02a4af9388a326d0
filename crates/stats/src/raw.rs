//! The raw form of a [`Recorder`]: everything it counted, as data that
//! serializes, so that the recorders of different runs (repeats, hosts)
//! merge exactly after the fact, as the recorders of one run's users do.
//! The types are part of the result schema (`schema/raw.rs`); here is how a
//! recorder becomes one and back, and how two of them merge.
//!
//! ```
//! use std::time::Instant;
//! use dbio_stats::{ClassDesc, Recorder};
//!
//! let classes = [ClassDesc::new("single-block-read", "db file sequential read")];
//! let start = Instant::now();
//! let mut a = Recorder::new(&classes, 1, start);
//! a.record(0, 0, false, 8192, 120_000, start);
//! let mut b = Recorder::new(&classes, 1, start);
//! b.record(0, 0, false, 8192, 250_000, start);
//!
//! let mut raw = a.to_raw();
//! raw.merge(&b.to_raw()).unwrap();
//! let back = Recorder::from_raw(&raw).unwrap();
//! assert_eq!(back.ios(), 2);
//! ```

use std::fmt::Write;
use std::time::Instant;

use hdrhistogram::Histogram;

pub use crate::schema::{RawClass, RawFile, RawHistogram, RawRecorder, RawSecond};

use crate::recorder::{
    ClassAcc, ClassDesc, FileAcc, Recorder, SecondAcc, HIST_HIGH_NS, HIST_LOW_NS, HIST_SIGFIG,
    POW2_BUCKETS, SIZE_BUCKETS,
};

/// Errors of reading or merging raw recorders and runs.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RawError {
    #[error("raw recorder, class {class}: {what}")]
    Class { class: String, what: String },
    #[error("no runs to merge")]
    NoRuns,
    #[error("run {index} of the merge has no raw recorder (written with --no-raw?)")]
    NoRaw { index: usize },
}

impl Recorder {
    /// This recorder as data.
    pub fn to_raw(&self) -> RawRecorder {
        RawRecorder {
            classes: self.classes.iter().map(raw_class).collect(),
            files: self.files.iter().map(raw_file).collect(),
            series: self.series.iter().map(raw_second).collect(),
            failed: self.failed,
            misrouted: self.misrouted,
        }
    }

    /// A recorder holding exactly what `raw` holds, timing from now (only
    /// further [`record`](Recorder::record)s use its start).
    pub fn from_raw(raw: &RawRecorder) -> Result<Recorder, RawError> {
        let classes = raw
            .classes
            .iter()
            .map(class_acc)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Recorder {
            start: Instant::now(),
            classes,
            files: raw.files.iter().map(file_acc).collect(),
            series: raw.series.iter().map(second_acc).collect(),
            failed: raw.failed,
            misrouted: raw.misrouted,
        })
    }
}

impl RawRecorder {
    /// Adds `other` into this one, exactly: classes are matched by name
    /// (a class only `other` has is appended), files and seconds by index.
    /// On error (a malformed histogram) `self` is left unchanged.
    pub fn merge(&mut self, other: &RawRecorder) -> Result<(), RawError> {
        let mut classes = self.classes.clone();
        for oc in &other.classes {
            let theirs = class_acc(oc)?;
            match classes.iter_mut().find(|c| c.class == oc.class) {
                Some(c) => {
                    let mut ours = class_acc(c)?;
                    ours.merge(&theirs);
                    *c = raw_class(&ours);
                }
                None => classes.push(oc.clone()),
            }
        }
        self.classes = classes;
        if other.files.len() > self.files.len() {
            self.files.resize(other.files.len(), RawFile::default());
        }
        for (f, o) in self.files.iter_mut().zip(&other.files) {
            f.reads += o.reads;
            f.writes += o.writes;
            f.read_bytes += o.read_bytes;
            f.write_bytes += o.write_bytes;
            f.read_lat_ns = f.read_lat_ns.saturating_add(o.read_lat_ns);
            f.write_lat_ns = f.write_lat_ns.saturating_add(o.write_lat_ns);
        }
        if other.series.len() > self.series.len() {
            self.series.resize(other.series.len(), RawSecond::default());
        }
        for (s, o) in self.series.iter_mut().zip(&other.series) {
            s.ios += o.ios;
            s.bytes += o.bytes;
            s.lat_sum_ns = s.lat_sum_ns.saturating_add(o.lat_sum_ns);
            s.max_ns = s.max_ns.max(o.max_ns);
        }
        self.failed += other.failed;
        self.misrouted += other.misrouted;
        Ok(())
    }

    /// Completed I/Os, all classes.
    pub fn ios(&self) -> u64 {
        self.classes.iter().map(|c| c.ios).sum()
    }
}

fn raw_class(c: &ClassAcc) -> RawClass {
    let used = c.pow2.iter().rposition(|&n| n > 0).map_or(0, |k| k + 1);
    RawClass {
        class: c.desc.name.clone(),
        wait_event: c.desc.wait_event.clone(),
        ios: c.ios,
        bytes: c.bytes,
        lat_sum_ns: c.lat_sum_ns,
        min_ns: if c.ios == 0 { 0 } else { c.min_ns },
        max_ns: c.max_ns,
        pow2: c.pow2[..used].to_vec(),
        sizes: c.sizes[..c.sizes.iter().rposition(|&n| n > 0).map_or(0, |k| k + 1)].to_vec(),
        hdr: RawHistogram {
            low_ns: c.hist.low(),
            high_ns: c.hist.high(),
            sigfig: c.hist.sigfig(),
            counts: encode_counts(&c.hist),
        },
    }
}

fn class_acc(r: &RawClass) -> Result<ClassAcc, RawError> {
    let bad = |what: String| RawError::Class {
        class: r.class.clone(),
        what,
    };
    let h = &r.hdr;
    // Only the recorder's own bounds: they bound the memory a histogram
    // takes, whatever the file says.
    if (h.low_ns, h.high_ns, h.sigfig) != (HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG) {
        return Err(bad(format!(
            "histogram bounds {}..{} ns, {} digits, differ from this dbio's {}..{} ns, {} digits",
            h.low_ns, h.high_ns, h.sigfig, HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG
        )));
    }
    if r.pow2.len() > POW2_BUCKETS {
        return Err(bad(format!("{} power-of-two buckets", r.pow2.len())));
    }
    if r.sizes.len() > SIZE_BUCKETS {
        return Err(bad(format!("{} size buckets", r.sizes.len())));
    }
    let mut acc = ClassAcc::new(ClassDesc::new(r.class.clone(), r.wait_event.clone()));
    decode_counts(&h.counts, &mut acc.hist).map_err(|e| bad(e.to_string()))?;
    if acc.hist.len() != r.ios {
        return Err(bad(format!(
            "histogram holds {} I/Os, the class {}",
            acc.hist.len(),
            r.ios
        )));
    }
    acc.pow2[..r.pow2.len()].copy_from_slice(&r.pow2);
    acc.sizes[..r.sizes.len()].copy_from_slice(&r.sizes);
    acc.ios = r.ios;
    acc.bytes = r.bytes;
    acc.lat_sum_ns = r.lat_sum_ns;
    acc.min_ns = if r.ios == 0 { u64::MAX } else { r.min_ns };
    acc.max_ns = r.max_ns;
    Ok(acc)
}

/// See [`RawHistogram::counts`].
fn encode_counts(h: &Histogram<u64>) -> String {
    let mut s = String::new();
    let mut prev = 0;
    for v in h.iter_recorded() {
        let value = v.value_iterated_to();
        if !s.is_empty() {
            s.push(' ');
        }
        let _ = write!(s, "{}", value - prev);
        let n = v.count_at_value();
        if n != 1 {
            let _ = write!(s, "*{n}");
        }
        prev = value;
    }
    s
}

/// A histogram's text that does not decode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum BadCounts {
    #[error("bad histogram token {0:?}")]
    Token(String),
    #[error("histogram value overflows at {0:?}")]
    Overflow(String),
    #[error("histogram value {0} ns out of range")]
    Range(u64),
}

fn decode_counts(text: &str, h: &mut Histogram<u64>) -> Result<(), BadCounts> {
    let mut value = 0u64;
    for token in text.split_ascii_whitespace() {
        let (delta, n) = match token.split_once('*') {
            Some((d, n)) => (d, n),
            None => (token, "1"),
        };
        let num = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| BadCounts::Token(token.to_string()))
        };
        value = value
            .checked_add(num(delta)?)
            .ok_or_else(|| BadCounts::Overflow(token.to_string()))?;
        h.record_n(value, num(n)?)
            .map_err(|_| BadCounts::Range(value))?;
    }
    Ok(())
}

fn raw_file(f: &FileAcc) -> RawFile {
    RawFile {
        reads: f.reads,
        writes: f.writes,
        read_bytes: f.read_bytes,
        write_bytes: f.write_bytes,
        read_lat_ns: f.read_lat_ns,
        write_lat_ns: f.write_lat_ns,
    }
}

fn file_acc(f: &RawFile) -> FileAcc {
    FileAcc {
        reads: f.reads,
        writes: f.writes,
        read_bytes: f.read_bytes,
        write_bytes: f.write_bytes,
        read_lat_ns: f.read_lat_ns,
        write_lat_ns: f.write_lat_ns,
    }
}

fn raw_second(s: &SecondAcc) -> RawSecond {
    RawSecond {
        ios: s.ios,
        bytes: s.bytes,
        lat_sum_ns: s.lat_sum_ns,
        max_ns: s.max_ns,
    }
}

fn second_acc(s: &RawSecond) -> SecondAcc {
    SecondAcc {
        ios: s.ios,
        bytes: s.bytes,
        lat_sum_ns: s.lat_sum_ns,
        max_ns: s.max_ns,
    }
}

#[cfg(test)]
#[path = "raw_tests.rs"]
mod tests;
