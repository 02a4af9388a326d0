//! The one retry policy of the client and the data path: how long to wait before
//! sending a call again that the server answered "try again later" (NFS3ERR_JUKEBOX,
//! NFS4ERR_DELAY, NFS4ERR_GRACE), or that found every path down, and how many times;
//! and the one stepper ([`Retrying`]) every async caller retries with. The data path,
//! which waits for many calls at once, keeps its re-sends in its own queue by the same
//! policy.

use std::time::{Duration, Instant};

/// A doubling delay: `first`, `2 x first`, ... up to `max`, for at most `retries`
/// re-sends after the first attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Delay before the first re-send.
    pub first: Duration,
    /// Largest delay.
    pub max: Duration,
    /// Re-sends after the first attempt; 0: never re-send.
    pub retries: u32,
}

impl Default for Backoff {
    /// 20 ms doubling to 1 s, 10 re-sends (about 5 s in all).
    fn default() -> Self {
        Backoff {
            first: Duration::from_millis(20),
            max: Duration::from_secs(1),
            retries: 10,
        }
    }
}

impl Backoff {
    /// No re-sends at all.
    pub const NONE: Backoff = Backoff {
        first: Duration::ZERO,
        max: Duration::ZERO,
        retries: 0,
    };

    /// Delay before re-send number `n` (0 = the first re-send).
    pub fn delay(&self, n: u32) -> Duration {
        self.first.saturating_mul(1 << n.min(20)).min(self.max)
    }

    /// Whether re-send number `n` (0 = the first) is allowed.
    pub fn allows(&self, n: u32) -> bool {
        n < self.retries
    }

    /// The re-sends of one call, starting now.
    pub fn retrying(self) -> Retrying {
        Retrying {
            backoff: self,
            resends: 0,
            started: Instant::now(),
        }
    }
}

/// The re-sends of one call after "try later": each [`Retrying::again`] waits the
/// back-off, until the policy allows no more.
#[derive(Debug)]
pub struct Retrying {
    backoff: Backoff,
    resends: u32,
    started: Instant,
}

impl Retrying {
    /// After a "try later": waits before the next re-send and returns true, or returns
    /// false at once when the re-sends are used up (or when the process stops,
    /// [`dbio_rpc::stop`]).
    pub async fn again(&mut self) -> bool {
        if !self.backoff.allows(self.resends) {
            return false;
        }
        if !dbio_rpc::stop::sleep(self.backoff.delay(self.resends)).await {
            return false;
        }
        self.resends += 1;
        true
    }

    /// Re-sends made so far.
    pub fn resends(&self) -> u32 {
        self.resends
    }

    /// Time since the first attempt.
    pub fn waited(&self) -> Duration {
        self.started.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_max_and_counts_retries() {
        let b = Backoff::default();
        let ms = |n| b.delay(n).as_millis();
        assert_eq!(
            (ms(0), ms(1), ms(2), ms(5), ms(6), ms(40)),
            (20, 40, 80, 640, 1000, 1000)
        );
        assert!(b.allows(9) && !b.allows(10));
        assert!(!Backoff::NONE.allows(0));
    }

    #[test]
    fn retrying_waits_the_back_off_until_the_re_sends_run_out() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let b = Backoff {
            first: Duration::from_millis(2),
            max: Duration::from_millis(8),
            retries: 3,
        };
        let mut r = b.retrying();
        let t0 = Instant::now();
        let agains: Vec<bool> = rt.block_on(async {
            let mut v = Vec::new();
            for _ in 0..5 {
                v.push(r.again().await);
            }
            v
        });
        assert_eq!(agains, [true, true, true, false, false]);
        assert_eq!(r.resends(), 3);
        // 2 + 4 + 8 ms of sleep, and no sleep once the re-sends are used up.
        assert!(
            t0.elapsed() >= Duration::from_millis(14),
            "{:?}",
            t0.elapsed()
        );
        assert!(r.waited() >= Duration::from_millis(14));
    }
}
