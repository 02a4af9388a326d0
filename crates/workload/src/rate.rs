//! Open-loop load: how many I/Os per second are asked for ([`Rates`], for
//! the whole mix or per class) and when each one is due ([`Schedule`]:
//! fixed intervals or a Poisson process), whatever became of the I/Os
//! before it. A closed loop waits for a completion before it asks again,
//! so a stalled storage is asked for less and its stall hides from the
//! latencies; arrivals that keep coming, as a database's sessions do, show
//! it.

use std::collections::VecDeque;

use crate::class::{IoClass, COUNT};
use crate::content::Rng;
use crate::generator::WorkloadConfig;

/// The most I/Os per second dbio paces, per class or in all.
pub const MAX_RATE: f64 = 10_000_000.0;

/// How arrivals are spaced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arrivals {
    /// Independent arrivals (exponential gaps of the asked mean), as many
    /// sessions that do not coordinate: bursts happen, as in production.
    #[default]
    Poisson,
    /// One arrival every 1/rate seconds exactly.
    Fixed,
}

impl Arrivals {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "poisson" | "exponential" => Some(Self::Poisson),
            "fixed" | "uniform" | "constant" => Some(Self::Fixed),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Poisson => "poisson",
            Self::Fixed => "fixed",
        }
    }
}

/// A rate that cannot be used; the message names the bad part.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RateError {
    #[error("{part:?}: {why}")]
    Bad { part: String, why: String },
    #[error("{0} is given a rate twice")]
    Twice(&'static str),
    #[error("no rate given")]
    Empty,
}

fn bad(part: &str, why: impl Into<String>) -> RateError {
    RateError::Bad {
        part: part.into(),
        why: why.into(),
    }
}

/// A class's arrivals in bursts, as the reads of a database's transactions come: the
/// bursts start at random (each second as many as the rate gives), each of a Poisson
/// number of I/Os of mean `mean` spaced `gap_ns` apart, so that the class's rate stays
/// the one asked. A storage path
/// that has just served an I/O serves the next one faster (caches, a device awake):
/// the same rate spread evenly is slower per I/O than in production's bursts.
/// `alone` is the share of the class's I/Os that come one at a time instead, as a
/// database's background threads read (purge, change buffer merges).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Burst {
    pub mean: f64,
    pub gap_ns: f64,
    pub alone: f64,
}

/// The most I/Os a burst has on average.
pub const MAX_BURST: f64 = 10_000.0;

impl Burst {
    /// A burst of `mean` I/Os `gap_ns` apart; None unless both are finite, the mean at
    /// least 1 and at most [`MAX_BURST`], the gap not negative.
    pub fn new(mean: f64, gap_ns: f64) -> Option<Burst> {
        ((1.0..=MAX_BURST).contains(&mean) && gap_ns.is_finite() && gap_ns >= 0.0).then_some(
            Burst {
                mean,
                gap_ns,
                alone: 0.0,
            },
        )
    }

    /// The same bursts, with `share` (0 to below 1) of the I/Os coming alone; None
    /// for a share outside that.
    pub fn with_alone(self, share: f64) -> Option<Burst> {
        (0.0..1.0).contains(&share).then_some(Burst {
            alone: share,
            ..self
        })
    }

    /// I/Os per start of a burst or of a lone I/O, on average.
    fn per_start(&self) -> f64 {
        1.0 / ((1.0 - self.alone) / self.mean + self.alone)
    }
}

/// I/Os per second asked of a run: for the whole mix (split as the
/// workload draws its classes) or per class (only those classes run).
/// `dbio run --rate` parses one; a caller that derives rates (from an AWR
/// report, say) builds one with [`Rates::total`] or [`Rates::per_class`].
#[derive(Clone, Debug, PartialEq)]
pub struct Rates {
    total: Option<f64>,
    /// Per class, indexed by [`IoClass::index`]; 0: not asked.
    classes: [f64; COUNT],
    /// Per class: its arrivals in bursts (Poisson arrivals only).
    bursts: [Option<Burst>; COUNT],
    /// Per class: issued by one user of its own at the class's whole rate, as a
    /// database's background writer issues its page writes, instead of split over the
    /// users (see [`Rates::with_own_user`]).
    own_user: [bool; COUNT],
}

impl Rates {
    /// `iops` I/Os per second in all, drawn from the workload's mix.
    pub fn total(iops: f64) -> Result<Rates, RateError> {
        check(&iops.to_string(), iops)?;
        Ok(Rates {
            total: Some(iops),
            classes: [0.0; COUNT],
            bursts: [None; COUNT],
            own_user: [false; COUNT],
        })
    }

    /// The given classes at their own rates (I/Os per second).
    pub fn per_class(rates: &[(IoClass, f64)]) -> Result<Rates, RateError> {
        if rates.is_empty() {
            return Err(RateError::Empty);
        }
        let mut classes = [0.0; COUNT];
        for &(c, iops) in rates {
            check(&format!("{}={iops}", c.name()), iops)?;
            if classes[c.index()] > 0.0 {
                return Err(RateError::Twice(c.name()));
            }
            classes[c.index()] = iops;
        }
        Ok(Rates {
            total: None,
            classes,
            bursts: [None; COUNT],
            own_user: [false; COUNT],
        })
    }

    /// `5000` (the whole mix) or `single-block-read=800,redo-write=120`
    /// (per class; the names `--workload` takes).
    pub fn parse(s: &str) -> Result<Rates, RateError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(RateError::Empty);
        }
        if !s.contains('=') {
            return Rates::total(number(s, s)?);
        }
        let mut rates = Vec::new();
        for part in s.split(',').map(str::trim) {
            let Some((name, value)) = part.split_once('=') else {
                return Err(bad(part, "expected CLASS=IOPS, e.g. redo-write=120"));
            };
            let class = IoClass::parse(name).ok_or_else(|| {
                let names: Vec<&str> = IoClass::ALL.iter().map(|c| c.name()).collect();
                bad(part, format!("unknown class (one of {})", names.join(", ")))
            })?;
            rates.push((class, number(part, value)?));
        }
        Rates::per_class(&rates)
    }

    /// `class`'s arrivals in bursts (a class given its own rate; Poisson arrivals).
    pub fn with_burst(mut self, class: IoClass, burst: Burst) -> Rates {
        self.bursts[class.index()] = Some(burst);
        self
    }

    /// `class` (given its own rate) issued by one more user of its own, at its whole
    /// rate: that user's I/Os do not delay the others' (a database's sessions never
    /// wait behind its page cleaner's writes).
    pub fn with_own_user(mut self, class: IoClass) -> Rates {
        if self.classes[class.index()] > 0.0 {
            self.own_user[class.index()] = true;
        }
        self
    }

    /// True when some classes are issued by a user of their own and others by the
    /// users: the run then has one user more.
    pub fn own_user(&self) -> bool {
        let mine = |own: bool| {
            IoClass::ALL
                .iter()
                .any(|c| self.classes[c.index()] > 0.0 && self.own_user[c.index()] == own)
        };
        mine(true) && mine(false)
    }

    /// How `class`'s arrivals are grouped, where they are.
    pub fn burst(&self, class: IoClass) -> Option<Burst> {
        self.bursts[class.index()]
    }

    /// True for one rate over the whole mix.
    pub fn is_total(&self) -> bool {
        self.total.is_some()
    }

    /// The classes given their own rates, in [`IoClass::ALL`] order (none
    /// for a rate over the whole mix).
    pub fn classes(&self) -> impl Iterator<Item = (IoClass, f64)> + '_ {
        IoClass::ALL
            .into_iter()
            .filter(|c| self.classes[c.index()] > 0.0)
            .map(|c| (c, self.classes[c.index()]))
    }

    /// I/Os per second asked of each class (indexed by [`IoClass::index`])
    /// under `workload`: a total is split by the mix's shares.
    pub fn asked(&self, workload: &WorkloadConfig) -> [f64; COUNT] {
        match self.total {
            Some(t) => workload.shares().map(|s| s * t),
            None => self.classes,
        }
    }

    /// All I/Os per second asked.
    pub fn sum(&self) -> f64 {
        self.total.unwrap_or_else(|| self.classes.iter().sum())
    }

    /// As `--rate` takes it.
    pub fn to_arg(&self) -> String {
        match self.total {
            Some(t) => t.to_string(),
            None => self
                .classes()
                .map(|(c, r)| format!("{}={r}", c.name()))
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

fn number(part: &str, value: &str) -> Result<f64, RateError> {
    let v: f64 = value.trim().parse().map_err(|_| {
        bad(
            part,
            format!("{:?} is not a number of I/Os per second", value.trim()),
        )
    })?;
    check(part, v)?;
    Ok(v)
}

fn check(part: &str, v: f64) -> Result<(), RateError> {
    if !v.is_finite() || v <= 0.0 {
        return Err(bad(part, "a rate must be above 0 I/Os per second"));
    }
    if v > MAX_RATE {
        return Err(bad(
            part,
            format!("above the most dbio paces ({MAX_RATE} I/Os per second)"),
        ));
    }
    Ok(())
}

/// One I/O due: when, in nanoseconds from the start of the load, and of
/// which class (`None`: drawn from the workload's mix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub at_ns: u64,
    pub class: Option<IoClass>,
}

/// Arrivals computed ahead, per refill: the exponential draws of a batch
/// do not wait on each other.
const AHEAD: usize = 64;

/// One stream of arrivals at one rate.
#[derive(Clone, Debug)]
struct Stream {
    class: Option<IoClass>,
    /// Mean gap, nanoseconds.
    gap_ns: f64,
    /// Fixed: the first arrival; arrival k is at `phase + k * gap`, so
    /// that rounding never accumulates.
    phase_ns: f64,
    count: u64,
    /// Poisson: the time of the next arrival (with bursts: of the next burst's start).
    next_ns: f64,
    rng: Rng,
    /// Poisson arrivals in bursts: the bursts' shape, and the arrivals of the bursts
    /// begun, in time order.
    burst: Option<Burst>,
    pending: VecDeque<f64>,
    /// Bursts: the starts of the current second, the next second's beginning, and
    /// the fraction of a start carried over.
    starts: VecDeque<f64>,
    second_ns: f64,
    carry: f64,
}

/// The span over which a bursty stream's count of starts is kept exact.
const SECOND_NS: f64 = 1e9;

impl Stream {
    #[inline]
    fn next_ns(&mut self, arrivals: Arrivals) -> f64 {
        match (arrivals, self.burst) {
            (Arrivals::Fixed, _) => self.phase_ns + self.count as f64 * self.gap_ns,
            (Arrivals::Poisson, None) => self.next_ns,
            (Arrivals::Poisson, Some(b)) => {
                self.begin_bursts(b);
                self.pending.front().copied().unwrap_or(f64::INFINITY)
            }
        }
    }

    #[inline]
    fn advance(&mut self, arrivals: Arrivals) {
        self.count += 1;
        match (arrivals, self.burst) {
            (Arrivals::Fixed, _) => {}
            (Arrivals::Poisson, None) => self.next_ns += self.exponential(),
            (Arrivals::Poisson, Some(_)) => {
                self.pending.pop_front();
            }
        }
    }

    /// Begins every burst that starts before the earliest arrival pending (at least
    /// one that has arrivals), so that arrivals leave in time order when bursts
    /// overlap. `gap_ns` is then the mean gap between starts.
    fn begin_bursts(&mut self, b: Burst) {
        // A start is a lone I/O with the chance that keeps `alone` of the I/Os so.
        let lone = b.alone * b.per_start();
        while self.pending.front().is_none_or(|&f| self.next_ns <= f) {
            let start = self.next_ns;
            let n = if lone > 0.0 && self.uniform() < lone {
                1
            } else {
                self.poisson(b.mean)
            };
            for i in 0..n {
                let at = start + f64::from(i) * b.gap_ns;
                let k = self.pending.partition_point(|&p| p <= at);
                self.pending.insert(k, at);
            }
            self.next_ns = self.next_start();
        }
    }

    /// The next start of a burst. A second's starts are drawn together: as many as
    /// the rate gives (the fraction carried to the next second), each at a uniform
    /// time within it. Within a second that is a Poisson process given its count;
    /// over a run the count is the one asked. Plain Poisson starts would spread a
    /// minute's count of reads by ±3% (1 sd) with bursts of ten, too much for a
    /// replay that must keep production's rate within 5%.
    fn next_start(&mut self) -> f64 {
        while self.starts.is_empty() {
            let want = SECOND_NS / self.gap_ns + self.carry;
            let n = want.floor();
            self.carry = want - n;
            let from = self.second_ns;
            self.second_ns += SECOND_NS;
            let mut v: Vec<f64> = (0..n as u64)
                .map(|_| from + self.uniform() * SECOND_NS)
                .collect();
            v.sort_by(f64::total_cmp);
            self.starts.extend(v);
        }
        self.starts.pop_front().unwrap_or(f64::INFINITY)
    }

    /// A Poisson count of mean `mean` (Knuth's product of uniforms; a large mean,
    /// whose spread matters little beside it, rounded).
    fn poisson(&mut self, mean: f64) -> u32 {
        if mean > 30.0 {
            return mean.round() as u32;
        }
        let limit = (-mean).exp();
        let (mut k, mut p) = (0u32, 1.0);
        loop {
            p *= self.uniform();
            if p <= limit {
                return k;
            }
            k += 1;
        }
    }

    /// A uniform draw in (0, 1).
    #[inline]
    fn uniform(&mut self) -> f64 {
        ((self.rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// An exponential gap of mean `gap_ns`, by inversion (53 random bits,
    /// never ln(0)).
    #[inline]
    fn exponential(&mut self) -> f64 {
        -self.uniform().ln() * self.gap_ns
    }
}

/// The arrivals of one user of a load, in time order: `rates` split evenly
/// over `users` (fixed streams offset so that all users' arrivals
/// interleave evenly), the same for the same seed.
#[derive(Clone, Debug)]
pub struct Schedule {
    arrivals: Arrivals,
    streams: Vec<Stream>,
    ahead: Vec<Arrival>,
    taken: usize,
}

impl Schedule {
    /// User `user` of `users`; where some classes have a user of their own
    /// ([`Rates::own_user`]), user `users` (one more) issues those alone, at their
    /// whole rates, and the others none of them.
    pub fn new(rates: &Rates, arrivals: Arrivals, user: u32, users: u32, seed: u64) -> Schedule {
        let users = users.max(1);
        let own = rates.own_user();
        let background = own && user >= users;
        let per: Vec<(Option<IoClass>, f64)> = match rates.total {
            Some(t) => vec![(None, t)],
            None => rates
                .classes()
                .filter(|(c, _)| !own || rates.own_user[c.index()] == background)
                .map(|(c, r)| (Some(c), r))
                .collect(),
        };
        // The user of its own takes the whole rate of its classes.
        let (slot, slots) = if background { (0, 1) } else { (user, users) };
        let streams = per
            .into_iter()
            .enumerate()
            .map(|(i, (class, rate))| {
                let burst = class
                    .and_then(|c| rates.burst(c))
                    .filter(|_| arrivals == Arrivals::Poisson);
                // With bursts, the gap is between starts of bursts (or of lone I/Os).
                let gap_ns = 1e9 * f64::from(slots) / rate * burst.map_or(1.0, |b| b.per_start());
                let mut s = Stream {
                    class,
                    gap_ns,
                    phase_ns: gap_ns * f64::from(slot) / f64::from(slots),
                    count: 0,
                    next_ns: 0.0,
                    rng: Rng::new(seed ^ 0x7261_7465 ^ (u64::from(user) << 32) ^ (i as u64) << 8),
                    burst,
                    pending: VecDeque::new(),
                    starts: VecDeque::new(),
                    second_ns: 0.0,
                    carry: 0.0,
                };
                if burst.is_some() {
                    // A random phase, so that slow streams do not all start together.
                    s.carry = s.uniform();
                    s.next_ns = s.next_start();
                } else {
                    s.next_ns = s.exponential();
                }
                s
            })
            .collect();
        Schedule {
            arrivals,
            streams,
            ahead: Vec::with_capacity(AHEAD),
            taken: 0,
        }
    }

    /// The next arrival, without taking it.
    #[inline]
    pub fn peek(&mut self) -> Arrival {
        if self.taken == self.ahead.len() {
            self.refill();
        }
        self.ahead[self.taken]
    }

    /// Takes the next arrival.
    #[inline]
    pub fn take(&mut self) -> Arrival {
        let a = self.peek();
        self.taken += 1;
        a
    }

    fn refill(&mut self) {
        self.ahead.clear();
        self.taken = 0;
        let kind = self.arrivals;
        for _ in 0..AHEAD {
            // A handful of streams at most: a scan beats a heap.
            let mut best = 0;
            let mut at = f64::INFINITY;
            for (i, s) in self.streams.iter_mut().enumerate() {
                let t = s.next_ns(kind);
                if t < at {
                    (best, at) = (i, t);
                }
            }
            let s = &mut self.streams[best];
            self.ahead.push(Arrival {
                at_ns: at as u64,
                class: s.class,
            });
            s.advance(kind);
        }
    }
}

#[cfg(test)]
#[path = "rate_tests.rs"]
mod tests;
