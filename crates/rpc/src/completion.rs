//! Where a reply goes: a oneshot for async callers, or a queue that a plain
//! (non-async) thread polls or blocks on, as an I/O engine reaping
//! completions does.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::oneshot;

use crate::error::TransportError;

/// One reply record, as received: the whole RPC reply message (without the
/// record mark), starting with the XID. A READ's data is a slice of it, so it
/// reaches the caller without being copied.
#[derive(Clone, Debug)]
pub struct ReplyRecord {
    pub xid: u32,
    pub record: Bytes,
}

/// The outcome of one call.
pub type CallResult = Result<ReplyRecord, TransportError>;

/// Receives completions tagged by the caller. Implemented by
/// [`CompletionQueue`]; an engine may implement its own.
pub trait Completions: Send + Sync {
    /// Called from the connection task; must not block for long.
    fn complete(&self, tag: u64, result: CallResult);

    /// Several completions at once (the replies of one socket read), taken
    /// out of `items`; a queue takes its lock and wakes its waiter once.
    fn complete_many(&self, items: &mut Vec<(u64, CallResult)>) {
        for (tag, result) in items.drain(..) {
            self.complete(tag, result);
        }
    }
}

/// The reply destination that each request carries.
pub enum ReplyTo {
    /// Wake one async waiter.
    Once(oneshot::Sender<CallResult>),
    /// Push `(tag, result)` to a shared sink.
    Sink(std::sync::Arc<dyn Completions>, u64),
}

impl ReplyTo {
    /// Hands the result over; a vanished receiver is not an error.
    pub fn send(self, result: CallResult) {
        match self {
            ReplyTo::Once(tx) => {
                let _ = tx.send(result);
            }
            ReplyTo::Sink(sink, tag) => sink.complete(tag, result),
        }
    }
}

/// A completion queue a plain thread can block on: many submitters' replies
/// land here, tagged, in arrival order. One thread waits on it at a time.
#[derive(Default)]
pub struct CompletionQueue {
    items: Mutex<Queue>,
    ready: Condvar,
}

/// The queue and what its waiter needs, under one lock. A reply wakes the
/// waiter (a futex system call) only when it completes what the waiter
/// asked for, and only once: replies arriving in a burst cost one wake-up.
#[derive(Default)]
struct Queue {
    items: VecDeque<(u64, CallResult)>,
    /// Completions the sleeping waiters want (0: nobody sleeps).
    wanted: usize,
    /// A wake-up was sent and not yet consumed.
    woken: bool,
    /// The waiting task of [`CompletionQueue::wait_async`], if it waits that way.
    waker: Option<Waker>,
}

impl CompletionQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits until at least `min` completions are queued or `timeout`
    /// passes, then moves all queued completions to `out`. Returns how many
    /// were moved (possibly fewer than `min` on timeout).
    pub fn wait(&self, min: usize, timeout: Duration, out: &mut Vec<(u64, CallResult)>) -> usize {
        let mut q = self.items.lock().unwrap_or_else(|e| e.into_inner());
        if q.items.len() < min {
            let deadline = Instant::now() + timeout;
            while q.items.len() < min {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                q.wanted = min;
                q.woken = false;
                q = match self.ready.wait_timeout(q, deadline - now) {
                    Ok((guard, _)) => guard,
                    Err(e) => e.into_inner().0,
                };
            }
            q.wanted = 0;
        }
        let n = q.items.len();
        out.extend(q.items.drain(..));
        n
    }

    /// [`CompletionQueue::wait`] for a thread that drives the connections' runtime while it
    /// waits (`Runtime::block_on`): when the replies come from a task on the same thread,
    /// the wake-up is a function call instead of a system call.
    pub async fn wait_async(
        &self,
        min: usize,
        timeout: Duration,
        out: &mut Vec<(u64, CallResult)>,
    ) -> usize {
        let enough = std::future::poll_fn(|cx| {
            let mut q = self.items.lock().unwrap_or_else(|e| e.into_inner());
            if q.items.len() >= min {
                return Poll::Ready(());
            }
            q.wanted = min;
            q.woken = false;
            if !q.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                q.waker = Some(cx.waker().clone());
            }
            Poll::Pending
        });
        if min > 0 && !timeout.is_zero() {
            let _ = tokio::time::timeout(timeout, enough).await;
        }
        let mut q = self.items.lock().unwrap_or_else(|e| e.into_inner());
        q.wanted = 0;
        q.waker = None;
        let n = q.items.len();
        out.extend(q.items.drain(..));
        n
    }

    /// Moves what is queued to `out` without waiting.
    pub fn poll(&self, out: &mut Vec<(u64, CallResult)>) -> usize {
        self.wait(0, Duration::ZERO, out)
    }

    /// Number of completions waiting to be taken.
    pub fn len(&self) -> usize {
        self.items.lock().map(|q| q.items.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Completions for CompletionQueue {
    fn complete(&self, tag: u64, result: CallResult) {
        let mut q = self.items.lock().unwrap_or_else(|e| e.into_inner());
        q.items.push_back((tag, result));
        self.wake_if_due(q);
    }

    fn complete_many(&self, items: &mut Vec<(u64, CallResult)>) {
        if items.is_empty() {
            return;
        }
        let mut q = self.items.lock().unwrap_or_else(|e| e.into_inner());
        q.items.extend(items.drain(..));
        self.wake_if_due(q);
    }
}

impl CompletionQueue {
    /// Wakes the waiter once when what it asked for is there, after
    /// releasing the lock (so it does not wake only to block on it).
    fn wake_if_due(&self, mut q: std::sync::MutexGuard<'_, Queue>) {
        let wake = q.wanted > 0 && !q.woken && q.items.len() >= q.wanted;
        if wake {
            q.woken = true;
        }
        let waker = if wake { q.waker.take() } else { None };
        drop(q);
        match waker {
            Some(w) => w.wake(),
            None if wake => self.ready.notify_one(),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn queue_wakes_a_blocked_thread() {
        let q = Arc::new(CompletionQueue::new());
        let q2 = q.clone();
        let t = std::thread::spawn(move || {
            let mut out = Vec::new();
            let n = q2.wait(2, Duration::from_secs(5), &mut out);
            (n, out.iter().map(|(t, _)| *t).collect::<Vec<_>>())
        });
        std::thread::sleep(Duration::from_millis(20));
        let reply = || {
            Ok(ReplyRecord {
                xid: 1,
                record: Bytes::new(),
            })
        };
        q.complete(7, reply());
        q.complete(9, reply());
        assert_eq!(t.join().unwrap(), (2, vec![7, 9]));
        assert!(q.is_empty());
    }

    #[test]
    fn async_wait_is_woken_by_a_task_on_the_same_thread() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let q = Arc::new(CompletionQueue::new());
        let q2 = q.clone();
        rt.spawn(async move {
            for tag in 0..3 {
                tokio::time::sleep(Duration::from_millis(2)).await;
                q2.complete(tag, Err(TransportError::Closed { addr: "x".into() }));
            }
        });
        let mut out = Vec::new();
        let n = rt.block_on(q.wait_async(3, Duration::from_secs(5), &mut out));
        assert_eq!(n, 3);
        assert_eq!(out.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [0, 1, 2]);
        // Nothing more comes: the wait ends at its timeout with what is there.
        let t0 = Instant::now();
        assert_eq!(
            rt.block_on(q.wait_async(1, Duration::from_millis(20), &mut out)),
            0
        );
        assert!(t0.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn wait_times_out_with_what_is_there() {
        let q = CompletionQueue::new();
        q.complete(1, Err(TransportError::Closed { addr: "x".into() }));
        let mut out = Vec::new();
        let t0 = Instant::now();
        assert_eq!(q.wait(3, Duration::from_millis(30), &mut out), 1);
        assert!(t0.elapsed() >= Duration::from_millis(30));
        assert!(out[0].1.is_err());
    }
}
