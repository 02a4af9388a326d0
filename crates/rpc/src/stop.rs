//! The process's stop (SIGINT, SIGTERM) ends every wait of the transport.
//!
//! A program that stops on a signal hands its flag to [`end_waits_on`]; from then on a
//! connect or a wait for a reply ([`Connection::connect`], [`Connection::call`]) that
//! is still waiting [`ALLOWANCE`] after the stop was first seen fails with
//! [`TransportError::Stopped`], naming what it waited for and for how long. The
//! allowance lets a server that answers still see the end of the work (a drain, an
//! UMNT, a DESTROY_SESSION); one that never answers costs it once, not per call,
//! since every wait ends at the same instant. Calls queued with a completion sink
//! (the data path) are not touched: their owner looks at the flag itself.
//!
//! [`Connection::connect`]: crate::conn::Connection::connect
//! [`Connection::call`]: crate::conn::Connection::call
//! [`TransportError::Stopped`]: crate::conn::TransportError::Stopped

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::error::TransportError;

/// How long waits go on after the stop is first seen.
pub const ALLOWANCE: Duration = Duration::from_millis(500);
/// How often a wait looks at the flag (a signal handler cannot wake a task).
const POLL: Duration = Duration::from_millis(20);

static FLAG: OnceLock<&'static AtomicBool> = OnceLock::new();
static SEEN: OnceLock<Instant> = OnceLock::new();

/// Makes `flag` the process's stop: once it is set, transport waits end. The first
/// flag handed in stays.
pub fn end_waits_on(flag: &'static AtomicBool) {
    let _ = FLAG.set(flag);
}

/// Whether the stop has come.
pub fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Relaxed))
}

/// Resolves when waits must end: [`ALLOWANCE`] after the stop was first seen; never
/// without a flag.
pub async fn waits_end() {
    let Some(flag) = FLAG.get() else {
        return std::future::pending().await;
    };
    while !flag.load(Relaxed) {
        tokio::time::sleep(POLL).await;
    }
    let seen = *SEEN.get_or_init(Instant::now);
    tokio::time::sleep_until((seen + ALLOWANCE).into()).await;
}

/// Runs `wait` until it ends or the waits must end; then a
/// [`TransportError::Stopped`] naming `waiting_for` (e.g. "a reply from 10.0.0.1:2049")
/// and how long it waited.
pub async fn or_stopped<T>(
    waiting_for: impl FnOnce() -> String,
    wait: impl Future<Output = T>,
) -> Result<T, TransportError> {
    if FLAG.get().is_none() {
        return Ok(wait.await);
    }
    let started = Instant::now();
    tokio::select! {
        biased;
        out = wait => Ok(out),
        () = waits_end() => Err(TransportError::Stopped {
            waiting_for: waiting_for(),
            secs: started.elapsed().as_secs_f64(),
        }),
    }
}

/// Sleeps `d`, or less when the waits must end (then false).
pub async fn sleep(d: Duration) -> bool {
    or_stopped(String::new, tokio::time::sleep(d)).await.is_ok()
}
