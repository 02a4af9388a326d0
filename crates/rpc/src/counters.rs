//! The counters of one connection (the dNFS "channels" view), kept by its task.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Counters of one connection (the dNFS "channels" view).
#[derive(Debug, Default)]
pub struct ConnStats {
    pub calls: AtomicU64,
    pub replies: AtomicU64,
    pub retransmits: AtomicU64,
    pub reconnects: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub bytes_received: AtomicU64,
    /// Replies whose XID matched no pending call (late answers to retransmissions).
    pub unmatched: AtomicU64,
    /// Calls the server sent over this connection (back channel).
    pub callbacks: AtomicU64,
    /// System calls that wrote (each may carry many calls).
    pub writes: AtomicU64,
    /// System calls that read data (each may carry many replies).
    pub reads: AtomicU64,
    /// RPCSEC_GSS contexts set up (the first, more for calls beyond one's share of
    /// the window, and one per renewal).
    pub gss_contexts: AtomicU64,
    /// When each context was set up, and why (for the views' events).
    pub gss_events: Mutex<Vec<(std::time::SystemTime, String)>>,
    pub(crate) local_addr: Mutex<Option<SocketAddr>>,
}

impl ConnStats {
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// Local address of the current TCP connection, if connected.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr.lock().ok().and_then(|a| *a)
    }
}
