//! Shared live counters for the once-a-second progress line.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counters shared by all user threads (put it in an `Arc`). Each thread
/// adds once per reaped batch, not per I/O, so contention stays low.
#[derive(Debug, Default)]
pub struct Live {
    ios: AtomicU64,
    bytes: AtomicU64,
    lat_sum_ns: AtomicU64,
}

/// Totals read from [`Live`] at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveSnapshot {
    pub ios: u64,
    pub bytes: u64,
    pub lat_sum_ns: u64,
}

impl Live {
    pub fn new() -> Self {
        Live::default()
    }

    /// Add a batch of `ios` completions moving `bytes` whose latencies sum
    /// to `lat_sum_ns`.
    #[inline]
    pub fn add(&self, ios: u64, bytes: u64, lat_sum_ns: u64) {
        // Relaxed: the readers only want roughly current totals.
        self.ios.fetch_add(ios, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.lat_sum_ns.fetch_add(lat_sum_ns, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> LiveSnapshot {
        LiveSnapshot {
            ios: self.ios.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            lat_sum_ns: self.lat_sum_ns.load(Ordering::Relaxed),
        }
    }
}

/// One progress line for the interval from `prev` to `cur`, which lasted
/// `interval`, ending `elapsed` after the start, e.g.
/// `   12s  IOPS    48211  MB/s   394.9  mean     82.9 us`.
pub fn progress_line(
    prev: &LiveSnapshot,
    cur: &LiveSnapshot,
    elapsed: Duration,
    interval: Duration,
) -> String {
    let secs = interval.as_secs_f64();
    let ios = cur.ios.saturating_sub(prev.ios);
    let bytes = cur.bytes.saturating_sub(prev.bytes);
    let lat = cur.lat_sum_ns.saturating_sub(prev.lat_sum_ns);
    let (iops, mbps) = if secs > 0.0 {
        (ios as f64 / secs, bytes as f64 / secs / 1e6)
    } else {
        (0.0, 0.0)
    };
    let mean_us = if ios > 0 {
        lat as f64 / ios as f64 / 1e3
    } else {
        0.0
    };
    format!(
        "{:>6.0}s  IOPS {:>8.0}  MB/s {:>7.1}  mean {:>8.1} us",
        elapsed.as_secs_f64(),
        iops,
        mbps,
        mean_us
    )
}

/// Remembers the previous reading so a progress loop only calls
/// [`Progress::line`] once a second.
#[derive(Debug)]
pub struct Progress {
    start: Instant,
    last_at: Instant,
    last: LiveSnapshot,
}

impl Progress {
    pub fn new(live: &Live, start: Instant) -> Self {
        Progress {
            start,
            last_at: start,
            last: live.snapshot(),
        }
    }

    /// The line for the interval since the previous call (or the start).
    pub fn line(&mut self, live: &Live, now: Instant) -> String {
        let cur = live.snapshot();
        let line = progress_line(
            &self.last,
            &cur,
            now.saturating_duration_since(self.start),
            now.saturating_duration_since(self.last_at),
        );
        self.last = cur;
        self.last_at = now;
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threads_add_up() {
        let live = Arc::new(Live::new());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let l = Arc::clone(&live);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        l.add(2, 16384, 200_000);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let s = live.snapshot();
        assert_eq!(s.ios, 8000);
        assert_eq!(s.bytes, 4000 * 16384);
        assert_eq!(s.lat_sum_ns, 4000 * 200_000);
    }

    #[test]
    fn line_shows_interval_rates() {
        let prev = LiveSnapshot {
            ios: 1000,
            bytes: 8_192_000,
            lat_sum_ns: 1_000_000,
        };
        let cur = LiveSnapshot {
            ios: 3000,
            bytes: 24_576_000,
            lat_sum_ns: 201_000_000,
        };
        let line = progress_line(&prev, &cur, Duration::from_secs(12), Duration::from_secs(2));
        // 2000 I/Os over 2 s, 16.384 MB over 2 s, 200 ms over 2000 I/Os.
        assert!(line.contains("12s"), "{line}");
        assert!(line.contains("IOPS     1000"), "{line}");
        assert!(line.contains("MB/s     8.2"), "{line}");
        assert!(line.contains("mean    100.0 us"), "{line}");
    }

    #[test]
    fn idle_interval_is_zero_not_nan() {
        let s = LiveSnapshot::default();
        let line = progress_line(&s, &s, Duration::ZERO, Duration::ZERO);
        assert!(!line.contains("NaN") && !line.contains("inf"), "{line}");
    }

    #[test]
    fn progress_remembers_last_reading() {
        let live = Live::new();
        let start = Instant::now();
        let mut p = Progress::new(&live, start);
        live.add(500, 500 * 8192, 500 * 50_000);
        let l1 = p.line(&live, start + Duration::from_secs(1));
        assert!(l1.contains("IOPS      500"), "{l1}");
        live.add(100, 100 * 8192, 100 * 50_000);
        let l2 = p.line(&live, start + Duration::from_secs(2));
        assert!(l2.contains("IOPS      100"), "{l2}");
        assert!(l2.contains("mean     50.0 us"), "{l2}");
    }
}
