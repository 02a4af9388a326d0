//! An NFSv4.1 export opened by a pool: the session of its metadata calls (on the
//! pool's first connection), the sessions its data paths lease slots from, and the
//! transfer sizes the sessions allow.
//!
//! NFSv4.1 has no MOUNT: the URL's path is looked up from the server's root (the
//! pseudo file system), and every connection of the pool serves every session (with
//! no state protection, a server binds a connection to a session the first time a
//! SEQUENCE of that session comes over it: RFC 8881 section 2.10.3.1).

use std::sync::Mutex;

use dbio_rpc::conn::Connection;

use crate::error::NfsError;
use crate::v41::{Client, Session, SessionOptions, SlotLease};

/// Slots of the metadata session kept for metadata calls while data paths run.
const METADATA_SLOTS: u32 = 4;
/// Room in a COMPOUND for everything but READ or WRITE data.
const COMPOUND_OVERHEAD: u32 = 1024;
/// Largest request and reply a session is asked for: 1 MiB of data and its headers.
pub const MAX_MESSAGE: u32 = (1 << 20) + 4096;

pub struct V41Mount {
    client: Client,
    /// Sessions opened for data paths when the metadata session's slots ran out.
    extra: Mutex<Vec<Session>>,
}

impl V41Mount {
    /// Sets up a session over `conn` (EXCHANGE_ID, CREATE_SESSION asking for
    /// `slots`) for the server named `server` in messages.
    pub async fn open(
        conn: Connection,
        cred: dbio_rpc::Credential,
        mut opts: SessionOptions,
        server: String,
    ) -> Result<V41Mount, NfsError> {
        opts.max_message = opts.max_message.max(MAX_MESSAGE);
        let session = Session::establish(conn, cred, opts).await?;
        Ok(V41Mount {
            client: Client::from_session(session, server),
            extra: Mutex::new(Vec::new()),
        })
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
