//! The I/O threads' wait for a CPU during a run's measured window, from the kernel's
//! schedstat: what a prediction that adds a database's own wait must take away.

use serde::{Deserialize, Serialize};

/// Summed over the run's I/O threads (one per user), between the start of the measured
/// window and each thread's end.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ThreadSched {
    /// Threads whose figures were read.
    pub threads: u32,
    /// Time runnable but waiting for a CPU, nanoseconds (schedstat field 2).
    pub run_delay_ns: u64,
    /// Timeslices run (field 3): about one per wake-up of a thread that sleeps in I/O.
    pub timeslices: u64,
}

impl ThreadSched {
    /// Mean run-queue wait per timeslice, microseconds; None without timeslices.
    pub fn per_slice_us(&self) -> Option<f64> {
        (self.timeslices > 0).then(|| self.run_delay_ns as f64 / 1e3 / self.timeslices as f64)
    }

    /// The calling thread's (run_delay, timeslices) now; None where the kernel keeps
    /// no schedstat.
    pub fn this_thread() -> Option<(u64, u64)> {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        parse_schedstat(&text)
    }

    /// Adds one thread's figures over its window.
    pub fn add(&mut self, from: (u64, u64), to: (u64, u64)) {
        self.threads += 1;
        self.run_delay_ns += to.0.saturating_sub(from.0);
        self.timeslices += to.1.saturating_sub(from.1);
    }

    /// Adds another run's threads.
    pub fn merge(&mut self, other: &ThreadSched) {
        self.threads += other.threads;
        self.run_delay_ns += other.run_delay_ns;
        self.timeslices += other.timeslices;
    }
}

/// Field 2 (run-queue wait, ns) and field 3 (timeslices) of a `/proc/PID/schedstat`
/// line ("sum_exec_runtime run_delay pcount").
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace();
    let _on_cpu = f.next()?;
    let delay = f.next()?.parse().ok()?;
    let slices = f.next()?.parse().ok()?;
    Some((delay, slices))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sums_and_averages() {
        assert_eq!(parse_schedstat("123456 55593 7\n"), Some((55_593, 7)));
        assert_eq!(parse_schedstat("0 0"), None);
        assert_eq!(parse_schedstat("1 x 2"), None);
        let mut s = ThreadSched::default();
        assert_eq!(s.per_slice_us(), None);
        s.add((1_000, 10), (31_000, 20));
        s.merge(&ThreadSched {
            threads: 1,
            run_delay_ns: 10_000,
            timeslices: 10,
        });
        assert_eq!((s.threads, s.per_slice_us()), (2, Some(2.0)));
        // This thread has schedstat here (the kernel keeps it for every task).
        let (_, slices) = ThreadSched::this_thread().unwrap();
        assert!(slices > 0);
    }
}
