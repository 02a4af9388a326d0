//! Ping: round trips in a closed loop (`count` calls, `outstanding` at a
//! time, each replaced as soon as the oldest returns) and their latency.
//! Runs on whatever executor the caller has: the driver is a plain future
//! over a [`RoundTrip`], so the protocol side keeps its own runtime and no
//! thread hand-over is added per call.

use std::collections::VecDeque;
use std::future::Future;
use std::time::{Duration, Instant};

use dbio_stats::cpu::CpuClock;

/// One kind of call to time.
pub trait RoundTrip {
    /// What a call's completion yields.
    type Reply;
    /// A call in flight.
    type Pending: Future<Output = Self::Reply> + Unpin;
    /// Issues the next call.
    fn send(&mut self) -> Self::Pending;
    /// Checks a completed call; an error ends the ping.
    fn check(&mut self, reply: Self::Reply) -> Result<(), String>;
}

/// What a ping measured.
#[derive(Clone, Debug, PartialEq)]
pub struct PingResult {
    pub calls: u64,
    pub outstanding: u64,
    pub wall: Duration,
    /// This process's user + system CPU time over the calls.
    pub cpu: Duration,
    pub min: Duration,
    pub mean: Duration,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl PingResult {
    pub fn calls_per_s(&self) -> f64 {
        self.calls as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    pub fn cpu_us_per_call(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.calls.max(1) as f64
    }

    /// Latency figures from the completed calls' latencies (any order).
    fn from_latencies(
        mut lat: Vec<Duration>,
        outstanding: u64,
        wall: Duration,
        cpu: Duration,
    ) -> Self {
        lat.sort_unstable();
        let n = lat.len().max(1);
        let at = |p: f64| {
            lat.get(((n - 1) as f64 * p).round() as usize)
                .copied()
                .unwrap_or_default()
        };
        let sum: Duration = lat.iter().sum();
        PingResult {
            calls: lat.len() as u64,
            outstanding,
            wall,
            cpu,
            min: lat.first().copied().unwrap_or_default(),
            mean: sum / n as u32,
            p50: at(0.5),
            p99: at(0.99),
            max: lat.last().copied().unwrap_or_default(),
        }
    }
}

/// Makes `count` calls (at least 1), `outstanding` (1 to 4096) in flight,
/// completing them oldest first.
pub async fn ping<R: RoundTrip>(
    calls: &mut R,
    count: u64,
    outstanding: usize,
) -> Result<PingResult, String> {
    let count = count.max(1);
    let depth = outstanding.clamp(1, 4096);
    let cpu0 = CpuClock::now();
    let t0 = Instant::now();
    let mut latencies = Vec::with_capacity(count.min(1 << 24) as usize);
    let mut queue = VecDeque::with_capacity(depth);
    let mut sent = 0u64;
    while (latencies.len() as u64) < count {
        while sent < count && queue.len() < depth {
            queue.push_back((Instant::now(), calls.send()));
            sent += 1;
        }
        let Some((start, pending)) = queue.pop_front() else {
            break;
        };
        let reply = pending.await;
        calls.check(reply)?;
        latencies.push(start.elapsed());
    }
    let wall = t0.elapsed();
    let cpu = CpuClock::now().since(&cpu0).total_s();
    Ok(PingResult::from_latencies(
        latencies,
        depth as u64,
        wall,
        Duration::from_secs_f64(cpu),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// Calls that complete at once, failing the `fail_at`-th.
    struct Instant0 {
        sent: u64,
        fail_at: Option<u64>,
    }

    struct Ready(u64);
    impl Future for Ready {
        type Output = u64;
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u64> {
            Poll::Ready(self.0)
        }
    }

    impl RoundTrip for Instant0 {
        type Reply = u64;
        type Pending = Ready;
        fn send(&mut self) -> Ready {
            self.sent += 1;
            Ready(self.sent)
        }
        fn check(&mut self, n: u64) -> Result<(), String> {
            match self.fail_at {
                Some(f) if f == n => Err(format!("call {n} failed")),
                _ => Ok(()),
            }
        }
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        use std::task::{RawWaker, RawWakerVTable, Waker};
        fn raw() -> RawWaker {
            RawWaker::new(std::ptr::null(), &VTABLE)
        }
        static VTABLE: RawWakerVTable = RawWakerVTable::new(|_| raw(), |_| {}, |_| {}, |_| {});
        // SAFETY: the vtable's functions do nothing and touch no data.
        let waker = unsafe { Waker::from_raw(raw()) };
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }

    #[test]
    fn counts_every_call_and_stops_at_the_first_error() {
        let mut c = Instant0 {
            sent: 0,
            fail_at: None,
        };
        let r = block_on(ping(&mut c, 100, 8)).unwrap();
        assert_eq!((r.calls, r.outstanding, c.sent), (100, 8, 100));
        assert!(r.min <= r.p50 && r.p50 <= r.p99 && r.p99 <= r.max);
        let mut c = Instant0 {
            sent: 0,
            fail_at: Some(5),
        };
        assert_eq!(block_on(ping(&mut c, 100, 4)).unwrap_err(), "call 5 failed");
        // Never more than `outstanding` in flight: 5 failed after at most 4 + 4 sends.
        assert!(c.sent <= 8, "{}", c.sent);
    }

    #[test]
    fn percentiles_of_known_latencies() {
        let lat: Vec<Duration> = (1..=100).rev().map(Duration::from_micros).collect();
        let r = PingResult::from_latencies(lat, 1, Duration::from_secs(1), Duration::ZERO);
        assert_eq!(r.min, Duration::from_micros(1));
        assert_eq!(r.max, Duration::from_micros(100));
        assert_eq!(r.p50, Duration::from_micros(51));
        assert_eq!(r.p99, Duration::from_micros(99));
        assert_eq!(r.mean, Duration::from_nanos(50_500));
        assert_eq!(r.calls_per_s(), 100.0);
    }
}
