//! The one retry policy of the client and the data path: how long to wait before
//! sending a call again that the server answered "try again later" (NFS3ERR_JUKEBOX),
//! or that found every path down, and how many times.

use std::time::Duration;

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
}
