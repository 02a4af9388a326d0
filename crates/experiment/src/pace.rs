//! Open-loop pacing (`dbio run --rate`): each user takes its I/Os from a
//! schedule of arrivals instead of issuing the next one when one
//! completes. An I/O's latency counts from its intended start, so time
//! spent waiting for a free slot (`--outstanding` is the cap) or for a
//! late wake-up is measured, as wrk2's corrected histograms do.

use std::time::{Duration, Instant};

use dbio_stats::Lateness;
use dbio_workload::{Arrival, Arrivals, IoClass, Rates, Schedule};

/// An open loop: the rates asked and how arrivals are spaced.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenLoop {
    pub rates: Rates,
    pub arrivals: Arrivals,
}

/// The shortest sleep of a pacer between two wake-ups. A wake-up costs
/// the process a few microseconds of CPU (a timed sleep and two context
/// switches), more than an I/O of the null engine: at high rates arrivals
/// are taken in batches, one wake-up per quantum, and their latency
/// counts the wait (at most a quantum, half on average).
/// scripts/bench-rate measures what it costs.
pub const PACE_QUANTUM: Duration = Duration::from_micros(200);

/// The kernel may wake a timed sleep this much late (timer slack; Linux
/// gives 50 us by default, which would add to every I/O's latency).
const TIMER_SLACK_NS: libc::c_ulong = 1_000;

/// One user's arrivals and its lateness accounts.
pub(crate) struct Pacer {
    schedule: Schedule,
    origin: Instant,
    /// Arrivals at or after this are not issued (the end of `--time`).
    end_ns: u64,
    /// Arrivals before this (the warm-up) are not accounted.
    record_from_ns: u64,
    /// Arrivals due at or before this found every slot busy.
    blocked_ns: Option<u64>,
    last_wake: Instant,
    /// Arrivals come closer than [`PACE_QUANTUM`] on average: they are
    /// taken in batches.
    dense: bool,
    pub lateness: Lateness,
}

impl Pacer {
    pub fn new(
        open: &OpenLoop,
        (user, users, seed): (u32, u32, u64),
        origin: Instant,
        record_from: Instant,
        end: Option<Instant>,
    ) -> Pacer {
        let ns = |t: Instant| t.saturating_duration_since(origin).as_nanos() as u64;
        Pacer {
            schedule: Schedule::new(&open.rates, open.arrivals, user, users, seed),
            origin,
            end_ns: end.map_or(u64::MAX, ns),
            record_from_ns: ns(record_from),
            blocked_ns: None,
            last_wake: origin,
            dense: open.rates.sum() * PACE_QUANTUM.as_secs_f64() > f64::from(users.max(1)),
            lateness: Lateness::new(IoClass::ALL.len()),
        }
    }

    /// This thread's timed sleeps wake when asked, not up to 50 us later.
    pub fn tighten_timer() {
        // SAFETY: PR_SET_TIMERSLACK takes a value and changes only this thread.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0);
        }
    }

    #[inline]
    pub fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.origin).as_nanos() as u64
    }

    /// The intended start of `a`.
    #[inline]
    pub fn at(&self, a: Arrival) -> Instant {
        self.origin + Duration::from_nanos(a.at_ns)
    }

    /// The next arrival, when it is due by `now_ns` and within the run.
    #[inline]
    pub fn due(&mut self, now_ns: u64) -> Option<Arrival> {
        let a = self.schedule.peek();
        (a.at_ns <= now_ns && a.at_ns < self.end_ns).then_some(a)
    }

    /// True when no arrival is left within the run.
    pub fn exhausted(&mut self) -> bool {
        self.schedule.peek().at_ns >= self.end_ns
    }

    /// Every slot is busy: what is due by `now_ns` waits in the backlog.
    pub fn blocked(&mut self, now_ns: u64) {
        if self.due(now_ns).is_some() {
            self.blocked_ns = Some(now_ns);
        }
    }

    /// The next arrival (due by `now_ns`) was issued as an I/O of `class`.
    #[inline]
    pub fn issued(&mut self, class: IoClass, now_ns: u64) {
        let a = self.schedule.take();
        if a.at_ns < self.record_from_ns {
            return;
        }
        let waited = self.blocked_ns.is_some_and(|b| a.at_ns <= b);
        let late = now_ns.saturating_sub(a.at_ns);
        self.lateness.issued(class.index(), late, waited);
        if now_ns >= self.end_ns {
            self.lateness.pending(class.index(), false);
        }
    }

    /// How long to wait for the next arrival from `now`: until it is due
    /// (when arrivals are dense, at least [`PACE_QUANTUM`] after the last
    /// wake-up) and at most `cap`. None when no arrival is left.
    pub fn wait(&mut self, now: Instant, cap: Duration) -> Option<Duration> {
        if self.exhausted() {
            return None;
        }
        let a = self.schedule.peek();
        let mut next = self.at(a);
        if self.dense {
            next = next.max(self.last_wake + PACE_QUANTUM);
        }
        Some(next.saturating_duration_since(now).min(cap))
    }

    /// Sleeps until the next arrival (see [`Pacer::wait`]).
    pub fn sleep(&mut self, cap: Duration) {
        if let Some(d) = self.wait(Instant::now(), cap) {
            if !d.is_zero() {
                std::thread::sleep(d);
            }
        }
        self.last_wake = Instant::now();
    }

    /// Notes a wake-up that came from elsewhere (a completion).
    pub fn woke(&mut self, now: Instant) {
        self.last_wake = now;
    }

    /// The load ended at `now`: arrivals due within the run and not issued
    /// are counted, of the class `class_of` gives them.
    pub fn finish(&mut self, now: Instant, class_of: &mut dyn FnMut(Option<IoClass>) -> IoClass) {
        let upto = self.ns(now).min(self.end_ns);
        loop {
            let a = self.schedule.peek();
            if a.at_ns >= upto {
                break;
            }
            self.schedule.take();
            if a.at_ns >= self.record_from_ns {
                self.lateness.pending(class_of(a.class).index(), true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_and_lateness_are_accounted_from_the_intended_start() {
        let open = OpenLoop {
            rates: Rates::total(1000.0).unwrap(),
            arrivals: Arrivals::Fixed,
        };
        let t0 = Instant::now();
        let ms = |n: u64| n * 1_000_000;
        let end = t0 + Duration::from_millis(10);
        let mut p = Pacer::new(
            &open,
            (0, 1, 1),
            t0,
            t0 + Duration::from_millis(1),
            Some(end),
        );
        // The warm-up's arrival (0 ms) is issued but not accounted.
        assert_eq!(p.due(0).map(|a| a.at_ns), Some(0));
        p.issued(IoClass::SingleBlockRead, 0);
        assert_eq!(p.due(ms(1) - 1), None, "the next one is due at 1 ms");
        // Every slot busy at 3.5 ms: the arrivals of 1, 2 and 3 ms wait.
        p.blocked(ms(3) + ms(1) / 2);
        for _ in 1..=3 {
            assert!(p.due(ms(4)).is_some());
            p.issued(IoClass::SingleBlockRead, ms(4));
        }
        // 4 ms, issued on time: late 0, did not wait.
        p.issued(IoClass::SingleBlockRead, ms(4));
        let c = p.lateness.classes[IoClass::SingleBlockRead.index()];
        assert_eq!((c.issued, c.late), (4, 3));
        assert_eq!(c.late_sum_ns, ms(3) + ms(2) + ms(1));
        assert_eq!(c.max_late_ns, ms(3));
        // The run ends at 10 ms: stopped at 20 ms, the arrivals of 5 to 9 ms
        // were never issued.
        assert_eq!(p.due(ms(30)).map(|a| a.at_ns), Some(ms(5)));
        p.finish(t0 + Duration::from_millis(20), &mut |c| {
            c.unwrap_or(IoClass::RedoWrite)
        });
        let c = p.lateness.classes[IoClass::RedoWrite.index()];
        assert_eq!((c.left, c.at_end), (5, 5));
        assert!(p.exhausted());
        assert_eq!(p.wait(t0, Duration::from_secs(1)), None);
    }

    #[test]
    fn dense_arrivals_wait_a_quantum_sparse_ones_their_time() {
        let t0 = Instant::now();
        let pacer = |rate: f64| {
            let open = OpenLoop {
                rates: Rates::total(rate).unwrap(),
                arrivals: Arrivals::Fixed,
            };
            Pacer::new(&open, (0, 1, 1), t0, t0, None)
        };
        let cap = Duration::from_secs(1);
        let mut sparse = pacer(100.0);
        sparse.issued(IoClass::SingleBlockRead, 0);
        assert_eq!(sparse.wait(t0, cap), Some(Duration::from_millis(10)));
        let mut dense = pacer(1e6);
        dense.issued(IoClass::SingleBlockRead, 0);
        dense.woke(t0);
        assert_eq!(dense.wait(t0, cap), Some(PACE_QUANTUM));
        assert_eq!(dense.wait(t0 + PACE_QUANTUM, cap), Some(Duration::ZERO));
    }
}
