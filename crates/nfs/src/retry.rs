//! The one retry policy of the client and the data path: how long to wait before
//! sending a call again that the server answered "try again later" (NFS3ERR_JUKEBOX,
//! NFS4ERR_DELAY, NFS4ERR_GRACE), or that found every path down, and how many times;
//! and the one stepper ([`Retrying`]) every async caller retries with, through
//! [`Retrying::run`]: the caller says how to attempt and what an answer means
//! ([`Attempt`]), the stepper when to re-send and when to give up. The budget
//! depends on what the server said ([`BusyStatus`]): a busy server (JUKEBOX, DELAY)
//! gets a few seconds of re-sends, a server in its grace period after a restart as
//! long as a grace period lasts (a lease or more, 90 s on many servers). The data
//! path, which waits for many calls at once, keeps its re-sends in its own queue by
//! the same policy ([`Backoff::allows_after`]).

use std::future::Future;
use std::time::{Duration, Instant};

use crate::proto::nfs4::Nfsstat4;

/// The "try later" status a server answered, by version: what sets the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusyStatus {
    /// NFS3ERR_JUKEBOX.
    Jukebox,
    /// NFS4ERR_DELAY.
    Delay,
    /// NFS4ERR_GRACE: the server is recovering state after a restart.
    Grace,
}

impl BusyStatus {
    /// The "try later" statuses of NFSv4.1.
    pub fn of_v4(status: Nfsstat4) -> Option<BusyStatus> {
        match status {
            Nfsstat4::Delay => Some(BusyStatus::Delay),
            Nfsstat4::Grace => Some(BusyStatus::Grace),
            _ => None,
        }
    }
}

impl std::fmt::Display for BusyStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BusyStatus::Jukebox => "NFS3ERR_JUKEBOX",
            BusyStatus::Delay => "NFS4ERR_DELAY",
            BusyStatus::Grace => "NFS4ERR_GRACE",
        })
    }
}

/// A doubling delay: `first`, `2 x first`, ... up to `max`, for at most `retries`
/// re-sends after the first attempt while the server is busy, and for as long as
/// `grace` while it is in its grace period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Delay before the first re-send.
    pub first: Duration,
    /// Largest delay.
    pub max: Duration,
    /// Re-sends after the first attempt; 0: never re-send.
    pub retries: u32,
    /// How long a call answered NFS4ERR_GRACE is tried again; zero: as a busy one.
    pub grace: Duration,
}

/// Longest a call is tried again while the server is in its grace period: a grace
/// period lasts at least a lease (90 s on many servers), and the server may extend it.
pub const GRACE_WAIT: Duration = Duration::from_secs(180);

impl Default for Backoff {
    /// 20 ms doubling to 1 s, 10 re-sends (about 5 s in all), [`GRACE_WAIT`] in a
    /// grace period.
    fn default() -> Self {
        Backoff {
            first: Duration::from_millis(20),
            max: Duration::from_secs(1),
            retries: 10,
            grace: GRACE_WAIT,
        }
    }
}

impl Backoff {
    /// No re-sends at all.
    pub const NONE: Backoff = Backoff {
        first: Duration::ZERO,
        max: Duration::ZERO,
        retries: 0,
        grace: Duration::ZERO,
    };

    /// Delay before re-send number `n` (0 = the first re-send).
    pub fn delay(&self, n: u32) -> Duration {
        self.first.saturating_mul(1 << n.min(20)).min(self.max)
    }

    /// Whether re-send number `n` (0 = the first) is allowed.
    pub fn allows(&self, n: u32) -> bool {
        n < self.retries
    }

    /// Whether re-send number `n` (0 = the first) after `status` is allowed, the call
    /// having waited `waited` since its first attempt: in a grace period while
    /// `grace` lasts, else as [`Backoff::allows`] says.
    pub fn allows_after(&self, status: BusyStatus, n: u32, waited: Duration) -> bool {
        match status {
            BusyStatus::Grace if !self.grace.is_zero() => waited + self.delay(n) <= self.grace,
            _ => self.allows(n),
        }
    }

    /// The re-sends of one call, starting now.
    pub fn retrying(self) -> Retrying {
        Retrying {
            backoff: self,
            resends: 0,
            busy: 0,
            started: Instant::now(),
        }
    }
}

/// What one attempt of a call came to, for [`Retrying::run`].
#[derive(Debug)]
pub enum Attempt<T, L> {
    /// The call's outcome.
    Done(T),
    /// The server said "try later" (`status`); `L` is what the answer is made of if
    /// the budget is spent.
    Busy(BusyStatus, L),
    /// A failure no re-send mends, answered as a spent budget is.
    Failed(L),
}

/// The re-sends of one call after "try later": each [`Retrying::again`] waits the
/// back-off, until the policy allows no more for what the server said.
#[derive(Debug)]
pub struct Retrying {
    backoff: Backoff,
    resends: u32,
    /// Re-sends after a busy server (JUKEBOX, DELAY), which have a count of their own.
    busy: u32,
    started: Instant,
}

impl Retrying {
    /// After a "try later" (`status`): waits before the next re-send and returns true,
    /// or returns false at once when the budget for `status` is used up (or when the
    /// process stops, [`dbio_rpc::stop`]).
    pub async fn again(&mut self, status: BusyStatus) -> bool {
        let n = match status {
            BusyStatus::Grace => self.resends,
            _ => self.busy,
        };
        if !self.backoff.allows_after(status, n, self.waited()) {
            return false;
        }
        if !dbio_rpc::stop::sleep(self.backoff.delay(self.resends)).await {
            return false;
        }
        self.resends += 1;
        if status != BusyStatus::Grace {
            self.busy += 1;
        }
        true
    }

    /// Attempts the call until it is done, re-sending after each "try later" as
    /// [`Retrying::again`] allows. When the budget is spent (or the process stops), or
    /// on [`Attempt::Failed`], `spent` makes the outcome of the last answer, with the
    /// re-sends made. An error of an attempt ends the call as it is.
    pub async fn run<T, L, E, F>(
        mut self,
        mut attempt: impl FnMut() -> F,
        spent: impl FnOnce(L, &Retrying) -> Result<T, E>,
    ) -> Result<T, E>
    where
        F: Future<Output = Result<Attempt<T, L>, E>>,
    {
        let last = loop {
            match attempt().await? {
                Attempt::Done(t) => return Ok(t),
                Attempt::Busy(status, last) => {
                    if !self.again(status).await {
                        break last;
                    }
                }
                Attempt::Failed(last) => break last,
            }
        };
        spent(last, &self)
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
            grace: Duration::ZERO,
        };
        let mut r = b.retrying();
        let t0 = Instant::now();
        let agains: Vec<bool> = rt.block_on(async {
            let mut v = Vec::new();
            for _ in 0..5 {
                v.push(r.again(BusyStatus::Delay).await);
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

    #[test]
    fn grace_lasts_its_own_time_and_busy_keeps_its_own_count() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let b = Backoff {
            first: Duration::from_millis(2),
            max: Duration::from_millis(4),
            retries: 2,
            grace: Duration::from_millis(60),
        };
        let mut r = b.retrying();
        let (graces, busy) = rt.block_on(async {
            let mut graces = 0;
            while r.again(BusyStatus::Grace).await {
                graces += 1;
            }
            // The grace period's re-sends do not use up a busy server's.
            let mut busy = Vec::new();
            for _ in 0..3 {
                busy.push(r.again(BusyStatus::Jukebox).await);
            }
            (graces, busy)
        });
        // Far more re-sends than `retries`, within the grace budget.
        assert!(graces > 5, "{graces}");
        let waited = r.waited();
        assert!(waited >= Duration::from_millis(50), "{waited:?}");
        assert_eq!(busy, [true, true, false]);
        assert_eq!(r.resends(), graces + 2);
        // Without a grace budget, GRACE counts as busy.
        let none = Backoff {
            grace: Duration::ZERO,
            ..b
        };
        assert!(none.allows_after(BusyStatus::Grace, 1, Duration::from_secs(1)));
        assert!(!none.allows_after(BusyStatus::Grace, 2, Duration::ZERO));
        assert!(b.allows_after(BusyStatus::Grace, 40, Duration::from_millis(50)));
        assert!(!b.allows_after(BusyStatus::Grace, 40, Duration::from_millis(57)));
    }

    #[test]
    fn run_re_sends_while_busy_and_hands_the_last_answer_to_spent() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let b = Backoff {
            first: Duration::from_millis(1),
            max: Duration::from_millis(2),
            retries: 2,
            grace: Duration::ZERO,
        };
        let spent = |last: u32, r: &Retrying| Err::<u32, _>((last, r.resends()));
        let attempts = std::cell::Cell::new(0u32);
        let attempts = &attempts;
        let busy_until = |n: u32| {
            move || async move {
                attempts.set(attempts.get() + 1);
                let a = attempts.get();
                Ok::<_, (u32, u32)>(match a <= n {
                    true => Attempt::Busy(BusyStatus::Jukebox, a),
                    false => Attempt::Done(a),
                })
            }
        };
        rt.block_on(async {
            // Busy twice, then done: within the budget.
            assert_eq!(b.retrying().run(busy_until(2), spent).await, Ok(3));
            // Busy beyond the budget: the third answer, after two re-sends.
            attempts.set(0);
            assert_eq!(b.retrying().run(busy_until(9), spent).await, Err((3, 2)));
            // A failure is not re-sent.
            attempts.set(0);
            let failed = || async { Ok(Attempt::Failed(7)) };
            assert_eq!(b.retrying().run(failed, spent).await, Err((7, 0)));
            // An attempt's own error ends the call at once.
            let error = || async { Err::<Attempt<u32, u32>, _>((0, 9)) };
            assert_eq!(b.retrying().run(error, spent).await, Err((0, 9)));
        });
    }
}
