//! A connection's settings, read by its handle, its task and its socket.

use std::sync::Arc;
use std::time::Duration;

/// How a connection behaves. The defaults suit a server on a LAN.
#[derive(Clone, Debug)]
pub struct ConnConfig {
    /// Time to wait for a reply before retransmitting.
    pub timeout: Duration,
    /// Retransmissions before a call fails; its deadline is
    /// `timeout * (retries + 1)` after it was first submitted.
    pub retries: u32,
    /// Limit for one TCP connect attempt.
    pub connect_timeout: Duration,
    /// Bind a source port below 1024 (needs root or CAP_NET_BIND_SERVICE);
    /// many servers refuse MOUNT or NFS from other ports.
    pub reserved_port: bool,
    /// Calls sent and not yet answered; more wait in the queue.
    pub max_in_flight: usize,
    /// Largest reply record accepted (bounds the receive buffer).
    pub max_record: usize,
    /// Local address to bind before connecting (a multipath "local:" entry;
    /// with `dontroute` the traffic leaves through that address's interface).
    pub bind: Option<std::net::IpAddr>,
    /// Set SO_DONTROUTE (oranfstab `dontroute`): packets go only to hosts on the
    /// interfaces' own networks, never through a gateway, so a path cannot silently
    /// leave through another interface's route.
    pub dontroute: bool,
    /// Multipath mode: when the connection drops, goes silent for `timeout`
    /// or cannot be re-established, pending calls fail at once (a
    /// [`TransportError::Dropped`](crate::conn::TransportError::Dropped) or
    /// [`TransportError::Connect`](crate::conn::TransportError::Connect)) so the caller
    /// can re-issue them on another path, instead of being held for
    /// resending here; a live connection never retransmits (TCP does), and
    /// a dropped socket is reset, so no stale WRITE reaches the server later.
    pub fail_fast: bool,
    /// Replies the kernel may gather before it wakes the connection's task (through the
    /// socket's receive low-water mark), at most half of the outstanding calls and only
    /// while 8 or more are; 1 wakes the task for every reply. Fewer wake-ups cost less
    /// CPU per call; the `coalesce` module says what it costs the server's queue depth.
    pub reply_batch: usize,
    /// Longest a raised receive mark holds replies (counted from the last read, or from
    /// raising the mark) before they are read anyway: replies shorter than expected (an
    /// error instead of READ data) must not wait long.
    pub reply_wait: Duration,
    /// Connections run by the same thread (a pool whose callers run its connections):
    /// when the kernel wakes one of them, the others also read what has arrived for them,
    /// below their marks, so one wake-up of the thread serves them all.
    pub siblings: Option<Arc<Siblings>>,
    /// Kerberos (`sec=krb5`, `krb5i`, `krb5p`): the connection sets up its own
    /// RPCSEC_GSS context and seals every call (see [`crate::secure`]).
    pub gss: Option<crate::secure::GssTarget>,
}

/// Connections run by one thread: the wake-up they share, and the calls they have
/// outstanding together (which bounds the replies each may hold back, see `coalesce`).
#[derive(Debug, Default)]
pub struct Siblings {
    pub(crate) woke: tokio::sync::Notify,
    pub(crate) outstanding: std::sync::atomic::AtomicUsize,
}

/// Replies gathered per wake-up at most, by default.
pub const DEFAULT_REPLY_BATCH: usize = 16;

impl Default for ConnConfig {
    fn default() -> Self {
        ConnConfig {
            timeout: Duration::from_secs(10),
            retries: 2,
            connect_timeout: Duration::from_secs(5),
            reserved_port: false,
            max_in_flight: 4096,
            max_record: 4 << 20,
            bind: None,
            fail_fast: false,
            dontroute: false,
            reply_batch: DEFAULT_REPLY_BATCH,
            reply_wait: crate::coalesce::FALLBACK,
            siblings: None,
            gss: None,
        }
    }
}

impl ConnConfig {
    /// When a call submitted now fails at the latest.
    pub fn deadline(&self) -> Duration {
        self.timeout * (self.retries + 1)
    }
}
