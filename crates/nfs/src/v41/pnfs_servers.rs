//! The data servers of [`Layouts`]: a session with each, made once, and a data server
//! that cannot be reached remembered for a while (with one warning), so that a dead
//! one costs the fail-fast bound once, not once per file or per address.

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{DataServer, Layouts, DS_RETRY_AFTER, DS_TIMEOUT};
use crate::error::NfsError;
use crate::v41::layout::distinct_tcp;
use crate::v41::Client;

impl Layouts {
    /// Warnings for the user: each data server that could not be reached, once.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The pool index of the data server at `addrs` (the first of its distinct TCP
    /// addresses to take a session), connecting once; one that could not be reached is
    /// not tried again for [`DS_RETRY_AFTER`].
    pub(super) async fn data_server(
        &self,
        addrs: &[crate::proto::nfs4::NetAddr],
    ) -> Result<usize, NfsError> {
        let known = distinct_tcp(addrs);
        {
            let s = self.servers.read().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = s.iter().position(|d| known.contains(&d.addr)) {
                return Ok(i);
            }
        }
        {
            let u = self.unreachable.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((since, e)) = u.get(&known) {
                if since.elapsed() < DS_RETRY_AFTER {
                    return Err(e.clone());
                }
            }
        }
        let reached = self.reach_data_server(addrs).await;
        if dbio_rpc::stop::requested() {
            // Not the data server's fault.
            return reached;
        }
        let mut u = self.unreachable.lock().unwrap_or_else(|e| e.into_inner());
        match &reached {
            Ok(_) => {
                u.remove(&known);
            }
            Err(e) => {
                if u.insert(known.clone(), (Instant::now(), e.clone()))
                    .is_none()
                {
                    let names: Vec<String> = known.iter().map(|a| a.to_string()).collect();
                    let mut w = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
                    w.push(format!(
                        "pNFS data server {} cannot be reached ({e}); its stripes go \
                         through the metadata server",
                        names.join(", ")
                    ));
                }
            }
        }
        reached
    }

    /// Sets a session up with the data server at `addrs` and makes it a channel of the
    /// router.
    async fn reach_data_server(
        &self,
        addrs: &[crate::proto::nfs4::NetAddr],
    ) -> Result<usize, NfsError> {
        let mut opts = self.session.clone();
        opts.slots = crate::v41::MAX_SLOTS;
        // A dead data server must fail its calls at once: they go to the metadata
        // server instead of waiting out the connection's retries.
        opts.conn.fail_fast = true;
        opts.conn.timeout = DS_TIMEOUT;
        opts.conn.connect_timeout = DS_TIMEOUT;
        opts.conn.retries = 1;
        // One thread runs them all: a wake-up for one reads the others, and each holds
        // back replies as a share of what all have outstanding. Alone, one with fewer
        // than 8 calls out gathers none, and each of its replies wakes the thread.
        if let Some((router, _)) = self.router.as_ref() {
            opts.conn.siblings = router.runs_on_callers().then(|| self.ds_siblings.clone());
        }
        let client = Client::connect_data_server(addrs, &self.options, opts).await?;
        let addr: SocketAddr = client.server().parse().map_err(|_| NfsError::Invalid {
            path: client.server().to_string(),
            reason: "data server address".into(),
        })?;
        let Some((router, _)) = self.router.as_ref() else {
            return Err(NfsError::Invalid {
                path: addr.to_string(),
                reason: "data server met before the pool's connections exist".into(),
            });
        };
        let session = client.into_session();
        let conn = session.connection().clone();
        let mut s = self.servers.write().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = s.iter().position(|d| d.addr == addr) {
            return Ok(i);
        }
        let channel = router
            .add_data_server(s.len(), conn.clone())
            .ok_or_else(|| NfsError::Invalid {
                path: addr.to_string(),
                reason: format!("more than {} data servers", crate::router::MAX_DATA_SERVERS),
            })?;
        s.push(Arc::new(DataServer {
            addr,
            channel,
            conn,
            sessions: Mutex::new(vec![Arc::new(session)]),
            epoch: AtomicU64::new(0),
            renewing: tokio::sync::Mutex::new(()),
        }));
        Ok(s.len() - 1)
    }
}
