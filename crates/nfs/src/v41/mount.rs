//! An NFSv4.1 export opened by a pool: the session of its metadata calls (on the
//! pool's first connection), the sessions its data paths lease slots from, and the
//! transfer sizes the sessions allow.
//!
//! NFSv4.1 has no MOUNT: the URL's path is looked up from the server's root (the
//! pseudo file system), and every connection of the pool serves every session (with
//! no state protection, a server binds a connection to a session the first time a
//! SEQUENCE of that session comes over it: RFC 8881 section 2.10.3.1).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use dbio_rpc::conn::Connection;

use crate::error::{call_error, NfsError};
use crate::proto::nfs4::{decode_compound, Compound, SessionId, MINOR_VERSION, PROC_COMPOUND};
use crate::router::{Route, Router};
use crate::v41::callback::BackChannel;
use crate::v41::data_files::DataFiles;
use crate::v41::pnfs::Layouts;
use crate::v41::{Client, Session, SessionOptions, SlotLease, StateManager};
use crate::ClientOptions;

/// pNFS: longest the end of a pool waits to return its layouts.
pub const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// Room in a COMPOUND for everything but READ or WRITE data.
const COMPOUND_OVERHEAD: u32 = 1024;
/// Largest request and reply a session is asked for: 1 MiB of data and its headers.
pub const MAX_MESSAGE: u32 = (1 << 20) + 4096;

pub struct V41Mount {
    pub(super) client: Arc<Client>,
    /// pNFS: the files' layouts and the data servers.
    pub(super) layouts: Option<Arc<Layouts>>,
    /// The sessions, the opens and their recovery.
    pub(super) state: Arc<StateManager>,
    /// The handler of the server's calls (recalls).
    pub(super) back: Arc<BackChannel>,
    /// The pool's opens of its data files.
    pub(super) files: DataFiles,
}

impl V41Mount {
    /// Sets NFSv4.1 up over `router`, the pool's (no MOUNT: paths are looked up from
    /// the server's root): a session on `up[0]` (EXCHANGE_ID, CREATE_SESSION asking
    /// for `opts.slots`), whose calls then go through the router; the other
    /// connections that are up bound to it (callbacks arrive over any); the lease
    /// renewal. With `pnfs`, files get layouts (fetched again every `refresh`) and
    /// data servers sessions of their own and channels of the router. Background work
    /// runs on the caller's runtime (the pool's).
    pub async fn open(
        router: &Arc<Router>,
        up: Vec<Connection>,
        cred: dbio_rpc::Credential,
        mut opts: SessionOptions,
        pnfs: Option<(ClientOptions, Option<Duration>)>,
    ) -> Result<V41Mount, NfsError> {
        let Some(conn) = up.first().cloned() else {
            return Err(NfsError::Invalid {
                path: router.server_addr(0).ip().to_string(),
                reason: "no path to the server is up".into(),
            });
        };
        let server = conn.addr().to_string();
        opts.max_message = opts.max_message.max(MAX_MESSAGE);
        // The pool's own handler: the session is told of it as its `Callbacks`.
        let back = BackChannel::new();
        opts.back_channel = Some(back.clone());
        let session = Session::establish_on(conn, cred, opts.clone(), Some(router)).await?;
        let client = Arc::new(Client::from_session(session, server));
        let runtime = tokio::runtime::Handle::current();
        let layouts = pnfs.map(|(options, refresh)| {
            let router = Some((router.clone(), runtime.clone()));
            Arc::new(Layouts::new(client.clone(), options, opts, refresh, router))
        });
        back.attach(&client, layouts.as_ref());
        let state = StateManager::new(client.clone(), layouts.clone(), router.clone());
        let mount = V41Mount {
            files: DataFiles::new(client.clone(), layouts.clone()),
            client,
            layouts,
            state,
            back,
        };
        runtime.spawn(V41Mount::renew_lease(mount.state.clone()));
        // Every connection may carry the server's calls (one down at the start carries
        // none; the server calls over the others). All are bound again when the server
        // says it lost the back channel.
        let all = router.channels().iter().map(|c| c.conn.clone()).collect();
        mount.back.rebind_with(&mount.client, all);
        mount.bind_connections(up).await;
        if let Some(layouts) = mount.layouts.clone() {
            if let Some(every) = layouts.refresh {
                // Follows data that moved: the servers tested recall no layouts.
                runtime.spawn(async move {
                    loop {
                        tokio::time::sleep(every).await;
                        layouts.refresh_all("periodic refresh").await;
                    }
                });
            }
        }
        Ok(mount)
    }

    /// The back channel: its counters and warnings.
    pub fn back_channel(&self) -> &Arc<BackChannel> {
        &self.back
    }

    /// Binds the pool's other connections to the metadata session (fore channel, and
    /// back channel if the server wants), so that a recall still arrives when the
    /// first connection is lost; a connection that cannot be bound now gets a warning.
    async fn bind_connections(&self, conns: Vec<Connection>) {
        let session = self.client.session();
        let own = session.connection().stats().clone();
        for conn in conns {
            if Arc::ptr_eq(conn.stats(), &own) {
                continue;
            }
            match session.bind_connection(&conn).await {
                Ok(()) => {
                    self.back.counts().bound.fetch_add(1, Relaxed);
                }
                Err(e) => self.back.warn(format!(
                    "connection to {} carries no callbacks: {e}",
                    conn.addr()
                )),
            }
        }
    }

    /// Keeps the client's lease (RFC 8881 8.3) while nothing else renews it: a
    /// SEQUENCE-only COMPOUND every third of the server's lease time (`lease_time`
    /// attribute; 90 s if it does not say), unless held back. A renewal told that the
    /// lease expired or the client is gone recovers the state like any call. Runs
    /// until the runtime stops.
    pub async fn renew_lease(state: Arc<StateManager>) {
        let client = state.client().clone();
        let lease = match client.lookup_path("/").await {
            Ok((root, _)) => client.lease_time(root).await.unwrap_or(None),
            Err(_) => None,
        };
        let secs = u64::from(lease.unwrap_or(90).clamp(1, 3600));
        let every = Duration::from_millis(secs * 1000 / 3);
        loop {
            tokio::time::sleep(every).await;
            if state.renewal_held() {
                continue;
            }
            let c = crate::proto::nfs4::Compound::new("renew", crate::proto::nfs4::MINOR_VERSION);
            // A failure here shows up, with its reason, on the next real call.
            let _ = client.session().compound(&c, "lease renewal").await;
        }
    }

    /// The sessions, opens and their recovery (shared with data paths and the
    /// renewal).
    pub fn state(&self) -> &Arc<StateManager> {
        &self.state
    }

    /// The metadata client, shared (for tasks of the pool's runtime).
    pub fn shared_client(&self) -> Arc<Client> {
        self.client.clone()
    }

    /// pNFS: the layouts (`None` for plain NFSv4.1).
    pub fn layouts(&self) -> Option<&Arc<Layouts>> {
        self.layouts.as_ref()
    }

    /// The metadata client (LOOKUP, GETATTR, READDIR, ...).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Largest READ in one COMPOUND, at most `cap`, a multiple of 4 KiB.
    pub fn read_size(&self, cap: u32) -> u32 {
        let fore = self.client.session().fore_channel();
        fit(fore.maxresponsesize, cap)
    }

    /// Largest WRITE in one COMPOUND, at most `cap`, a multiple of 4 KiB.
    pub fn write_size(&self, cap: u32) -> u32 {
        let fore = self.client.session().fore_channel();
        fit(fore.maxrequestsize, cap)
    }

    /// Slots for a data path of `depth` I/Os: from the metadata session if it has
    /// enough to spare, else from a new session of the same client over `conn`.
    pub async fn lease(&self, depth: u32, conn: Connection) -> Result<SlotLease, NfsError> {
        self.state.lease(depth, Some(conn)).await
    }

    /// Sessions: the metadata one first, with (granted slots, slots in use).
    pub fn sessions(&self) -> Vec<(u32, u32)> {
        self.state.sessions()
    }
}

impl V41Mount {
    /// Ends the client's state on the server: DESTROY_SESSION of every session (the
    /// data paths' first), then DESTROY_CLIENTID, each the only op of its COMPOUND, over
    /// `router`'s connections. The first refusal is returned after trying them all.
    pub async fn destroy(&self, router: &Router) -> Result<(), NfsError> {
        let ids: Vec<SessionId> = self.state.session_ids();
        let server = self.client.server().to_string();
        let mut first = None;
        for id in ids {
            let c = Compound::new("destroy_session", MINOR_VERSION).destroy_session(id);
            if let Err(e) = sole_op(router, &c, &server).await {
                first.get_or_insert(e);
            }
        }
        let c = Compound::new("destroy_clientid", MINOR_VERSION)
            .destroy_clientid(self.client.session().clientid());
        if let Err(e) = sole_op(router, &c, &server).await {
            first.get_or_insert(e);
        }
        first.map_or(Ok(()), Err)
    }
}

/// A COMPOUND without SEQUENCE (session and client id teardown) and its status.
async fn sole_op(router: &Router, c: &Compound<'_>, server: &str) -> Result<(), NfsError> {
    let proc_ = router.proc_id("COMPOUND");
    let results = router
        .call(Route::META, proc_, || {
            router.encode(
                PROC_COMPOUND,
                |b| dbio_xdr::XdrEncode::encode(c, b),
                bytes::Bytes::new(),
            )
        })
        .await
        .map_err(|e| call_error(c.tag, server, e))?;
    let res = decode_compound(results.bytes()).map_err(|e| NfsError::BadReply {
        what: c.tag.into(),
        path: server.to_string(),
        reason: e.to_string(),
    })?;
    match res.failure {
        None => Ok(()),
        Some(f) => Err(NfsError::Status4 {
            op: f.op,
            path: server.to_string(),
            status: f.status,
        }),
    }
}

/// A transfer size that fits a message of `max` bytes, at most `cap`, a multiple of
/// 4 KiB (at least 4 KiB).
fn fit(max: u32, cap: u32) -> u32 {
    let room = max.saturating_sub(COMPOUND_OVERHEAD).min(cap);
    (room / 4096 * 4096).max(4096)
}

#[cfg(test)]
mod tests {
    #[test]
    fn transfer_sizes_fit_the_session_and_the_cap() {
        assert_eq!(super::fit(super::MAX_MESSAGE, 1 << 20), 1 << 20);
        assert_eq!(super::fit(1 << 20, 1 << 20), (1 << 20) - 4096);
        assert_eq!(super::fit(super::MAX_MESSAGE, 8192), 8192);
        assert_eq!(super::fit(100, 1 << 20), 4096);
    }
}
