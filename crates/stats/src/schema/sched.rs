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
    /// Per class, the calls of a synchronous engine and how many of them slept (the
    /// thread's voluntary context switches rose across the call), where counted: only
    /// a call that sleeps waits for a CPU when it wakes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ClassCalls>,
}

/// One class's synchronous calls in the measured window and those that slept.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ClassCalls {
    pub class: String,
    pub calls: u64,
    pub slept: u64,
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
        for c in &other.calls {
            self.add_calls(&c.class, c.calls, c.slept);
        }
    }

    /// Adds `calls` of `class`, `slept` of which slept.
    pub fn add_calls(&mut self, class: &str, calls: u64, slept: u64) {
        if calls == 0 {
            return;
        }
        match self.calls.iter_mut().find(|c| c.class == class) {
            Some(c) => {
                c.calls += calls;
                c.slept += slept;
            }
            None => self.calls.push(ClassCalls {
                class: class.into(),
                calls,
                slept,
            }),
        }
    }

    /// The share of `class`'s calls that slept; None where they were not counted.
    pub fn slept_share(&self, class: &str) -> Option<f64> {
        let c = self
            .calls
            .iter()
            .find(|c| c.class == class && c.calls > 0)?;
        Some(c.slept as f64 / c.calls as f64)
    }

    /// The calling thread's voluntary context switches so far; None where the kernel
    /// refuses.
    pub fn voluntary_switches() -> Option<u64> {
        // SAFETY: getrusage fills the struct it is given and touches nothing else.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        (rc == 0).then_some(u.ru_nvcsw as u64)
    }
}

/// Field 2 (run-queue wait, ns) and field 3 (timeslices) of a `/proc/PID/schedstat`
/// line ("sum_exec_runtime run_delay pcount"), as procfs parses it.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    use procfs::FromRead;
    let s = procfs::process::Schedstat::from_read(text.as_bytes()).ok()?;
    Some((s.run_delay, s.pcount))
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
            ..ThreadSched::default()
        });
        assert_eq!((s.threads, s.per_slice_us()), (2, Some(2.0)));
        // This thread has schedstat here (the kernel keeps it for every task).
        let (_, slices) = ThreadSched::this_thread().unwrap();
        assert!(slices > 0);
    }

    #[test]
    fn counts_calls_per_class_and_sleeps() {
        let mut s = ThreadSched::default();
        assert_eq!(s.slept_share("single-block-read"), None);
        s.add_calls("single-block-read", 4, 1);
        s.add_calls("redo-write", 0, 0);
        let mut t = ThreadSched::default();
        t.add_calls("single-block-read", 4, 3);
        t.add_calls("redo-write", 2, 2);
        s.merge(&t);
        assert_eq!(s.slept_share("single-block-read"), Some(0.5));
        assert_eq!(s.slept_share("redo-write"), Some(1.0));
        assert_eq!(s.calls.len(), 2);
        // A sleep is a voluntary switch: the count rises across one.
        let before = ThreadSched::voluntary_switches().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(ThreadSched::voluntary_switches().unwrap() > before);
    }
}
