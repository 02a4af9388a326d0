//! Which of a synchronous engine's calls slept: the thread's voluntary context switches
//! rise across a call that waited for its device. Only such a call waits for a CPU when
//! it is woken, so a prediction that adds a database's wake-up wait applies it to that
//! share (see `dbio_stats::ThreadSched::calls`).

use dbio_stats::ThreadSched;
use dbio_workload::IoClass;

/// Per class: calls counted, and those that slept.
pub(super) struct Sleeps {
    counts: Vec<(u64, u64)>,
}

impl Sleeps {
    pub(super) fn new() -> Self {
        Sleeps {
            counts: vec![(0, 0); IoClass::ALL.len()],
        }
    }

    /// The thread's voluntary switches, just before a call.
    pub(super) fn mark() -> Option<u64> {
        ThreadSched::voluntary_switches()
    }

    /// Counts a call of class `class` that began at `before` (from [`Sleeps::mark`]).
    pub(super) fn count(&mut self, class: usize, before: Option<u64>) {
        let (Some(b), Some(a)) = (before, ThreadSched::voluntary_switches()) else {
            return;
        };
        if let Some(c) = self.counts.get_mut(class) {
            c.0 += 1;
            c.1 += u64::from(a > b);
        }
    }

    /// Adds the counts to `sched`, by class name.
    pub(super) fn add_to(&self, sched: &mut ThreadSched) {
        for (c, &(calls, slept)) in IoClass::ALL.iter().zip(&self.counts) {
            sched.add_calls(c.name(), calls, slept);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_sleeps_counts_as_slept_and_one_that_does_not_does_not() {
        let mut s = Sleeps::new();
        let read = IoClass::SingleBlockRead.index();
        let redo = IoClass::RedoWrite.index();
        let m = Sleeps::mark();
        std::thread::sleep(std::time::Duration::from_millis(1));
        s.count(read, m);
        let m = Sleeps::mark();
        let x: u64 = (0..1000u64).sum();
        assert_eq!(x, 499_500);
        s.count(redo, m);
        // No mark (a kernel that refused): nothing counted.
        s.count(read, None);
        let mut sched = ThreadSched::default();
        s.add_to(&mut sched);
        assert_eq!(
            sched.slept_share(IoClass::SingleBlockRead.name()),
            Some(1.0)
        );
        assert_eq!(sched.slept_share(IoClass::RedoWrite.name()), Some(0.0));
        assert_eq!(sched.calls.len(), 2);
    }
}
