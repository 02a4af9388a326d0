//! The client's state on the server and its recovery, like a kernel client's state
//! manager: one recovery at a time for the whole mount, whoever noticed the loss (a
//! metadata call, a data path's READ or WRITE, the lease renewal). It renews the
//! metadata session (`recover.rs`); after a new client id it reclaims every open
//! (CLAIM_PREVIOUS), says RECLAIM_COMPLETE, opens again by handle what the server had
//! no grace for, and fetches the pNFS layouts again. Data paths then lease slots of the
//! new session and carry the opens' new stateids. Each recovery is a path event ("state
//! recovered ...") with the time I/O waited for it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use dbio_rpc::conn::Connection;

use crate::error::NfsError;
use crate::proto::nfs4::{Nfsstat4, SessionId, Stateid};
use crate::router::{Route, Router};
use crate::v41::pnfs::Layouts;
use crate::v41::recover::{recovering, LostHook, Renewed};
use crate::v41::{Client, Session, SlotLease};

/// Slots of the metadata session kept for metadata calls while data paths run.
const METADATA_SLOTS: u32 = 4;

/// The mount's sessions and opens, and their recovery.
pub struct StateManager {
    client: Arc<Client>,
    /// Sessions opened for data paths when the metadata session's slots ran out.
    extra: Mutex<Vec<Session>>,
    layouts: Option<Arc<Layouts>>,
    /// The pool's router: connections for new sessions, and the events.
    router: Arc<Router>,
    /// One recovery at a time.
    gate: tokio::sync::Mutex<()>,
    /// Since when each caller that found a session lost has waited: the recovery's
    /// event reports the longest, whichever caller happened to notice first (a lease
    /// renewal sent after the server came back has waited far less than the I/O).
    waiting: std::sync::Mutex<Vec<(SessionId, Instant)>>,
    /// The last recovery: the session it replaced, its event's index and when it
    /// ended. A caller of that session that comes after it (a data path whose parts
    /// were re-sent late) may have waited longer than the event says.
    last: std::sync::Mutex<Option<(SessionId, usize, Instant)>>,
    /// Lease renewal held back (for tests of an expired lease).
    renewal_held: AtomicBool,
    recoveries: AtomicU64,
}

impl StateManager {
    /// The state of `client` (whose session it recovers from now on) and, with pNFS,
    /// of `layouts`, over the pool's `router`.
    pub fn new(
        client: Arc<Client>,
        layouts: Option<Arc<Layouts>>,
        router: Arc<Router>,
    ) -> Arc<StateManager> {
        let sm = Arc::new(StateManager {
            client,
            extra: Mutex::new(Vec::new()),
            layouts,
            router,
            gate: tokio::sync::Mutex::new(()),
            waiting: std::sync::Mutex::new(Vec::new()),
            last: std::sync::Mutex::new(None),
            renewal_held: AtomicBool::new(false),
            recoveries: AtomicU64::new(0),
        });
        // Weak: the session must not keep its own state manager alive.
        let weak: Weak<StateManager> = Arc::downgrade(&sm);
        let hook: LostHook = Arc::new(move |seen, why, since| {
            let weak = weak.clone();
            Box::pin(async move {
                match weak.upgrade() {
                    Some(sm) => sm.recover(seen, why, since).await,
                    None => Ok(()),
                }
            })
        });
        let _ = sm.client.session().on_lost.set(hook);
        sm
    }

    pub fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// Recoveries done so far.
    pub fn recoveries(&self) -> u64 {
        self.recoveries.load(Relaxed)
    }

    /// Holds the lease renewal back (`true`) or lets it go on: for tests of a lease
    /// that expires.
    pub fn hold_renewal(&self, held: bool) {
        self.renewal_held.store(held, Relaxed);
    }

    pub(crate) fn renewal_held(&self) -> bool {
        self.renewal_held.load(Relaxed)
    }

    /// Recovers after a reply on session `seen` said `why` to a caller whose I/O has
    /// waited `since` (see the module notes); returns at once when another caller's
    /// recovery already replaced that session.
    pub async fn recover(
        &self,
        seen: SessionId,
        why: Nfsstat4,
        since: Instant,
    ) -> Result<(), NfsError> {
        self.waiting_lock().push((seen, since));
        let _one = self.gate.lock().await;
        if !self.holds(seen) {
            self.waiting_lock().retain(|(s, _)| *s != seen);
            self.waited_for_last(seen, since);
            return Ok(());
        }
        let result = recovering(self.renew(why)).await;
        let since = longest_wait(&mut self.waiting_lock(), seen).unwrap_or(since);
        let (what, ok) = match &result {
            Ok(what) => (format!("state recovered after {why}: {what}"), true),
            Err(e) => (format!("state recovery after {why} failed: {e}"), false),
        };
        if ok {
            self.recoveries.fetch_add(1, Relaxed);
        }
        let index = self
            .router
            .health()
            .record_at(0, what, Some(since.elapsed().as_secs_f64()));
        if let (Some(i), true) = (index, ok) {
            *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some((seen, i, Instant::now()));
        }
        result.map(drop)
    }

    /// A caller of `seen`, waiting since `since`, came after the recovery that replaced
    /// it: that recovery's event reports its wait if it is longer.
    fn waited_for_last(&self, seen: SessionId, since: Instant) {
        let last = *self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((old, i, done)) = last {
            if old == seen && since < done {
                self.router
                    .health()
                    .lengthen(i, (done - since).as_secs_f64());
            }
        }
    }

    fn waiting_lock(&self) -> std::sync::MutexGuard<'_, Vec<(SessionId, Instant)>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True when `seen` is one of the mount's sessions now.
    fn holds(&self, seen: SessionId) -> bool {
        self.client.session().sessionid() == seen
            || self
                .extra
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|s| s.sessionid() == seen)
    }

    /// The recovery itself; what it did, for the event.
    async fn renew(&self, why: Nfsstat4) -> Result<String, NfsError> {
        let session = self.client.session();
        let renewed = session.renew(why).await?;
        // The data paths' other sessions went with the client or the server (or their
        // connections are not bound to them): the data paths lease slots anew.
        let gone: Vec<Session> =
            std::mem::take(&mut *self.extra.lock().unwrap_or_else(|e| e.into_inner()));
        drop(gone);
        if renewed == Renewed::Binding {
            return Ok("connections bound to the session again".into());
        }
        let mut what = match renewed {
            Renewed::Client => self.reclaim().await?,
            _ => "new session".to_string(),
        };
        if let Some(l) = &self.layouts {
            l.refresh_all("state recovered").await;
            what.push_str(", layouts fetched again");
        }
        Ok(what)
    }

    fn sessions_extra(&self) -> Vec<SessionId> {
        let extra = self.extra.lock().unwrap_or_else(|e| e.into_inner());
        extra.iter().map(|s| s.sessionid()).collect()
    }

    /// Every open again under the new client id: reclaimed (CLAIM_PREVIOUS), then
    /// RECLAIM_COMPLETE, then opened again by handle (CLAIM_FH) where the server had
    /// no grace for a reclaim (NFS4ERR_NO_GRACE, a server without a grace period).
    async fn reclaim(&self) -> Result<String, NfsError> {
        let mut again = Vec::new();
        let mut reclaimed = 0;
        for (key, held) in self.client.opens.all() {
            match self.client.reopen(&held, true).await {
                Ok(s) => {
                    self.client.opens.renewed(key, s);
                    reclaimed += 1;
                }
                Err(e @ (NfsError::Transport { .. } | NfsError::Rpc { .. })) => return Err(e),
                Err(_) => again.push((key, held)),
            }
        }
        self.client.session().reclaim_complete().await?;
        let (mut reopened, mut lost) = (0, Vec::new());
        // Still in the grace period, an open waits for its end in the session's
        // re-sends (the back-off's grace budget).
        for (key, held) in again {
            match self.client.reopen(&held, false).await {
                Ok(s) => {
                    self.client.opens.renewed(key, s);
                    reopened += 1;
                }
                Err(e @ (NfsError::Transport { .. } | NfsError::Rpc { .. })) => return Err(e),
                Err(e) => lost.push(format!("{}: {e}", held.path)),
            }
        }
        let mut what = format!(
            "new client id and session, {reclaimed} open(s) reclaimed, {reopened} opened again"
        );
        if !lost.is_empty() {
            what.push_str(&format!(", not opened again: {}", lost.join("; ")));
        }
        Ok(what)
    }

    /// The stateid now of the open that had `stateid`.
    pub fn current_stateid(&self, stateid: Stateid) -> Stateid {
        self.client.current_stateid(stateid)
    }

    /// Slots for a data path of `depth` I/Os: from the metadata session if it has
    /// enough to spare, else from a new session of the same client over `conn` (one
    /// of the router's when `None`).
    pub async fn lease(&self, depth: u32, conn: Option<Connection>) -> Result<SlotLease, NfsError> {
        let session = self.client.session();
        if session.free_slots() >= depth + METADATA_SLOTS {
            if let Some(l) = session.lease(depth) {
                return Ok(l);
            }
        }
        {
            let extra = self.extra.lock().unwrap_or_else(|e| e.into_inner());
            for s in extra.iter() {
                if s.free_slots() >= depth {
                    if let Some(l) = s.lease(depth) {
                        return Ok(l);
                    }
                }
            }
        }
        let conn = match conn {
            Some(c) => c,
            None => {
                let r = &self.router;
                r.channels()[r.pick(Route::META, None)].conn.clone()
            }
        };
        let s = session.another(conn).await?;
        let lease = s.lease(depth).ok_or_else(|| NfsError::Invalid {
            path: self.client.server().to_string(),
            reason: "a new NFSv4.1 session has no free slot".into(),
        })?;
        self.extra.lock().unwrap_or_else(|e| e.into_inner()).push(s);
        Ok(lease)
    }

    /// Sessions: the metadata one first, with (granted slots, slots in use).
    pub fn sessions(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let st = self.client.session().slot_stats();
        out.push((st.granted, st.busy));
        let extra = self.extra.lock().unwrap_or_else(|e| e.into_inner());
        for s in extra.iter() {
            let st = s.slot_stats();
            out.push((st.granted, st.busy));
        }
        out
    }

    /// The ids of every session, the data paths' first.
    pub(crate) fn session_ids(&self) -> Vec<SessionId> {
        let mut ids = self.sessions_extra();
        ids.push(self.client.session().sessionid());
        ids
    }
}

/// The earliest wait start of the callers that found `seen` lost, taken out of the list.
fn longest_wait(waiting: &mut Vec<(SessionId, Instant)>, seen: SessionId) -> Option<Instant> {
    let first = waiting
        .iter()
        .filter(|(s, _)| *s == seen)
        .map(|(_, t)| *t)
        .min();
    waiting.retain(|(s, _)| *s != seen);
    first
}

#[cfg(test)]
mod waiting_tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_event_reports_the_caller_that_waited_longest() {
        let now = Instant::now();
        let (a, b) = ([1; 16], [2; 16]);
        let mut w = vec![
            (a, now),
            (b, now - Duration::from_secs(9)),
            (a, now - Duration::from_secs(3)),
        ];
        assert_eq!(longest_wait(&mut w, a), Some(now - Duration::from_secs(3)));
        // Only that session's callers are taken out.
        assert_eq!(w, vec![(b, now - Duration::from_secs(9))]);
        assert_eq!(longest_wait(&mut w, a), None);
    }
}
