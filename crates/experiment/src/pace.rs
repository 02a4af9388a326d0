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
