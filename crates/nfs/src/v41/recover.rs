//! Recovery of a session whose replies say it is lost (RFC 8881 8.4.2, 2.10.13): the
//! same steps for any [`Session`] (the metadata server's, a data server's): a
//! connection not bound is bound again (BIND_CONN_TO_SESSION), a lost session is
//! created again (CREATE_SESSION), and a client id the server no longer knows (a
//! restart, an expired lease) is exchanged again first (EXCHANGE_ID, same owner and
//! verifier). One recovery at a time per session: callers that found the same session
//! lost wait for it, then re-send on the new session. Reclaiming opens is the
//! mount's part (`state.rs`), on top of this.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use dbio_rpc::conn::Connection;

use crate::error::NfsError;
use crate::proto::nfs4::{chan_dir, Compound, Nfsstat4, SessionId, MINOR_VERSION};
use crate::router::Route;
use crate::v41::sequence::Lost;
use crate::v41::session::{create_session, exchange_id, plain_call, Session};

/// Who recovers a session after a reply on session `seen` said `why` to a caller
/// waiting since the instant given.
pub(crate) type LostHook = Arc<
    dyn Fn(
            SessionId,
            Nfsstat4,
            std::time::Instant,
        ) -> Pin<Box<dyn Future<Output = Result<(), NfsError>> + Send>>
        + Send
        + Sync,
>;

tokio::task_local! {
    /// Set while a recovery runs: its own calls fail instead of waiting for it.
    static RECOVERING: ();
}

/// True inside a recovery.
pub(crate) fn in_recovery() -> bool {
    RECOVERING.try_with(|_| ()).is_ok()
}

/// Runs `f` as (part of) a recovery.
pub(crate) async fn recovering<F: Future>(f: F) -> F::Output {
    RECOVERING.scope((), f).await
}

/// What a recovery renewed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewed {
    /// Nothing: another caller's recovery already replaced the session seen lost.
    Nothing,
    /// The connections were bound to the session again.
    Binding,
    /// A new session of the same client id: the client's state (opens) still holds.
    Session,
    /// A new client id and session: the client's state must be reclaimed.
    Client,
}

impl Session {
    /// Recovers this session after a reply on session `seen` said `why` (see the
    /// module notes); the calls of a new client id end with RECLAIM_COMPLETE (a
    /// session that holds no opens, e.g. a data server's, reclaims nothing).
    pub async fn recover(&self, seen: SessionId, why: Nfsstat4) -> Result<Renewed, NfsError> {
        let _one = self.renewing.lock().await;
        if self.sessionid() != seen {
            return Ok(Renewed::Nothing);
        }
        recovering(async {
            let renewed = self.renew(why).await?;
            if renewed == Renewed::Client {
                self.reclaim_complete().await?;
            }
            Ok(renewed)
        })
        .await
    }

    /// The session part of a recovery after `why`, without RECLAIM_COMPLETE: the
    /// caller holds the recovery's turn.
    pub(crate) async fn renew(&self, why: Nfsstat4) -> Result<Renewed, NfsError> {
        let conn = self.plain_connection();
        match Lost::of(why, false) {
            Some(Lost::Binding) => {
                self.bind_all().await?;
                return Ok(Renewed::Binding);
            }
            Some(Lost::Session) => {
                match create_session(&conn, &self.cred, &self.opts, &self.ident).await {
                    Ok(live) => {
                        self.replace(live);
                        return Ok(Renewed::Session);
                    }
                    // The server lost the client too (it restarted).
                    Err(NfsError::Status4 {
                        status: Nfsstat4::StaleClientid | Nfsstat4::Expired,
                        ..
                    }) => {}
                    Err(e) => return Err(e),
                }
            }
            _ => {}
        }
        let (clientid, seq) = exchange_id(&conn, &self.cred, &self.opts).await?;
        *self
            .ident
            .clientid
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = clientid;
        self.ident.next_create.store(seq, Relaxed);
        let live = create_session(&conn, &self.cred, &self.opts, &self.ident).await?;
        self.replace(live);
        Ok(Renewed::Client)
    }

    /// Makes `live` what the session is; callers waiting for a slot of the old one
    /// look again (and meet the new one on their re-send).
    fn replace(&self, live: super::session::Live) {
        let old = {
            let mut l = self.live.write().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *l, Arc::new(live))
        };
        old.freed.notify_waiters();
    }

    /// A connection for the calls outside a session (EXCHANGE_ID, CREATE_SESSION): one
    /// of a path that is up when the session goes through a router.
    fn plain_connection(&self) -> Connection {
        match self.router.get() {
            Some((router, _)) => router.channels()[router.pick(Route::META, None)]
                .conn
                .clone(),
            None => self.conn.clone(),
        }
    }

    /// BIND_CONN_TO_SESSION on every connection the session's calls go over.
    async fn bind_all(&self) -> Result<(), NfsError> {
        let conns: Vec<Connection> = match self.router.get() {
            // Only the opened server's: a pNFS data server has sessions of its own.
            Some((router, _)) => router
                .channels()
                .iter()
                .filter(|c| c.server == crate::router::Server::Opened)
                .map(|c| c.conn.clone())
                .collect(),
            None => vec![self.conn.clone()],
        };
        let c = Compound::new("bind_conn_to_session", MINOR_VERSION)
            .bind_conn_to_session(self.sessionid(), chan_dir::FORE_OR_BOTH);
        for conn in &conns {
            plain_call(conn, &self.cred, &c).await?;
        }
        Ok(())
    }
}
