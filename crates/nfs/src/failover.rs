//! Path health of a multipath pool: which paths take new requests, the
//! failover events, and the background probe that brings a dead path back.
//!
//! A path goes down when one of its connections fails a call (refused,
//! reset, or silent for the reply timeout); the engine then re-issues that
//! call on another path (a pNFS data server's, through the metadata server).
//! A down path gets no new work; the probe sends it an NFS NULL on every
//! connection, with a doubling delay, and the path rejoins once all of them
//! answer (one answering while another still fails would flap the path).

use std::sync::{Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use dbio_rpc::conn::CallBuf;
use dbio_rpc::Credential;

use crate::channel::build_call;
use crate::path::{PathEvent, PathState};
use crate::proto::nfs3;
use crate::router::Router;
use crate::table::Table;

/// First delay before probing a dead path again; doubles up to [`PROBE_MAX`]
/// (which bounds how long a path that answers again waits to rejoin).
const PROBE_FIRST: Duration = Duration::from_millis(100);
const PROBE_MAX: Duration = Duration::from_secs(1);
/// How often the probe looks for dead paths.
const PROBE_TICK: Duration = Duration::from_millis(50);

/// Paths and their events, shared by the pool and its probe task.
#[derive(Debug)]
pub struct Health {
    pub paths: Table<PathState>,
    events: Mutex<Vec<PathEvent>>,
    opened: Instant,
}

impl Health {
    /// Health of `paths`, with room for `more` added later (pNFS data servers).
    pub fn new(paths: Vec<PathState>, more: usize) -> Health {
        Health {
            paths: Table::new(paths, more),
            events: Mutex::new(Vec::new()),
            opened: Instant::now(),
        }
    }

    /// Marks `path` down (recording the event once) and counts one request
    /// moved off it when `moved`.
    pub fn failed(&self, path: usize, reason: &str, moved: bool) {
        let Some(p) = self.paths.get(path) else {
            return;
        };
        if p.mark_down() {
            self.record(path, format!("down: {reason}"), None);
        }
        if moved {
            p.count_moved();
            if let Ok(mut ev) = self.events.lock() {
                if let Some(e) = ev
                    .iter_mut()
                    .rev()
                    .find(|e| e.path == path && e.what.starts_with("down"))
                {
                    e.moved += 1;
                }
            }
        }
    }

    /// `path` answered: if it was down, it rejoins and the time it was
    /// down is recorded.
    pub fn answered(&self, path: usize) {
        let Some(p) = self.paths.get(path) else {
            return;
        };
        if let Some(down) = p.mark_up() {
            self.record(path, "up".into(), Some(down.as_secs_f64()));
        }
    }

    /// Records what happened on `path` that is neither down nor up (a new session).
    pub fn note(&self, path: usize, what: String) {
        self.record(path, what, None);
    }

    /// Records an event of `path` ("up" events and state recovered: with how long it
    /// took to recover).
    pub(crate) fn record(&self, path: usize, what: String, recovered_after_s: Option<f64>) {
        self.record_at(path, what, recovered_after_s);
    }

    /// [`Self::record`], returning the event's index (for [`Self::lengthen`]).
    pub(crate) fn record_at(
        &self,
        path: usize,
        what: String,
        recovered_after_s: Option<f64>,
    ) -> Option<usize> {
        let mut ev = self.events.lock().ok()?;
        let unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        ev.push(PathEvent {
            at_s: self.opened.elapsed().as_secs_f64(),
            unix_s,
            path,
            what,
            moved: 0,
            recovered_after_s,
        });
        Some(ev.len() - 1)
    }

    /// Event `index` took at least `secs` to recover for someone: a caller that had
    /// waited longer came after it was recorded.
    pub(crate) fn lengthen(&self, index: usize, secs: f64) {
        if let Some(e) = self
            .events
            .lock()
            .ok()
            .as_mut()
            .and_then(|ev| ev.get_mut(index))
        {
            if e.recovered_after_s.is_some_and(|s| s < secs) {
                e.recovered_after_s = Some(secs);
            }
        }
    }

    /// An event of `path` that happened at `when` (recorded elsewhere, such as a
    /// connection's RPCSEC_GSS contexts), on this table's clock.
    pub(crate) fn event_at(
        &self,
        path: usize,
        when: std::time::SystemTime,
        what: String,
    ) -> PathEvent {
        let ago = std::time::SystemTime::now()
            .duration_since(when)
            .unwrap_or_default();
        PathEvent {
            at_s: self.opened.elapsed().saturating_sub(ago).as_secs_f64(),
            unix_s: when
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            path,
            what,
            moved: 0,
            recovered_after_s: None,
        }
    }

    /// Events so far, oldest first.
    pub fn events(&self) -> Vec<PathEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

/// Probes the router's dead paths (data servers' too, as they are added) with the
/// NULL procedure of its program and version (a server that speaks only NFSv4 has no
/// NFSv3 to answer), until the router is dropped or the runtime that runs the probe
/// shuts down.
pub async fn probe(router: Weak<Router>) {
    let mut next_at: Vec<Option<Instant>> = Vec::new();
    let mut delay: Vec<Duration> = Vec::new();
    loop {
        tokio::time::sleep(PROBE_TICK).await;
        let Some(router) = router.upgrade() else {
            return;
        };
        let health = router.health();
        let n = health.paths.len();
        next_at.resize(n, None);
        delay.resize(n, PROBE_FIRST);
        let cred = router.credential();
        let (prog, vers) = router.program();
        for path in 0..n {
            if health.paths[path].is_up() {
                next_at[path] = None;
                delay[path] = PROBE_FIRST;
                continue;
            }
            let now = Instant::now();
            let due = *next_at[path].get_or_insert(now + delay[path]);
            if now < due {
                continue;
            }
            let conns = router.channels().iter().filter(|c| c.path == path);
            let calls = conns.map(|c| {
                let (c, call) = (c.conn.clone(), null_call(cred, prog, vers));
                async move { c.call(call).await }
            });
            let all_ok = futures_all(calls).await;
            if all_ok {
                health.answered(path);
            } else {
                delay[path] = (delay[path] * 2).min(PROBE_MAX);
                next_at[path] = Some(Instant::now() + delay[path]);
            }
        }
    }
}

/// Runs the calls side by side; true when every one got a reply.
async fn futures_all<F>(calls: impl Iterator<Item = F>) -> bool
where
    F: std::future::Future<Output = dbio_rpc::conn::CallResult> + Send + 'static,
{
    let handles: Vec<_> = calls.map(tokio::spawn).collect();
    let mut ok = !handles.is_empty();
    for h in handles {
        ok &= matches!(h.await, Ok(Ok(_)));
    }
    ok
}

fn null_call(cred: &Credential, prog: u32, vers: u32) -> CallBuf {
    // NULL is procedure 0 of every version of NFS.
    build_call(
        prog,
        vers,
        nfs3::Proc::Null as u32,
        cred,
        |_| {},
        Bytes::new(),
    )
}

#[cfg(test)]
mod lengthen_tests {
    use super::Health;

    #[test]
    fn a_recovery_event_takes_the_longest_wait_reported() {
        let h = Health::new(Vec::new(), 0);
        let i = h.record_at(0, "state recovered".into(), Some(1.0)).unwrap();
        h.record(0, "other".into(), None);
        h.lengthen(i, 3.5);
        h.lengthen(i, 2.0); // a shorter wait changes nothing
        h.lengthen(1, 9.0); // nor does an event without a recovery time
        let ev = h.events();
        assert_eq!(ev[0].recovered_after_s, Some(3.5));
        assert_eq!(ev[1].recovered_after_s, None);
    }
}
