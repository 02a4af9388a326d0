//! How a call through a connection can fail, apart from the server's own answer. Its
//! own module: the connection's handle, its task, its socket, the security layer and
//! the stop flag all produce it, and none of them should need another to name it.

/// Transport failures. Clone, because one failure (a lost server) ends many calls.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransportError {
    #[error("cannot connect to {addr}: {reason}")]
    Connect { addr: String, reason: String },
    #[error("no reply from {addr} within {secs:.1} s (xid {xid:#x}, {tries} transmissions)")]
    Timeout {
        addr: String,
        xid: u32,
        secs: f64,
        tries: u32,
    },
    #[error("connection to {addr} lost and not re-established within {secs:.1} s: {reason}")]
    Lost {
        addr: String,
        secs: f64,
        reason: String,
    },
    /// Multipath mode ([`ConnConfig::fail_fast`](crate::conn::ConnConfig::fail_fast)):
    /// the connection dropped and its calls were handed back at once.
    #[error("connection to {addr} dropped: {reason}")]
    Dropped { addr: String, reason: String },
    #[error("server {addr} broke the RPC protocol: {reason}")]
    Protocol { addr: String, reason: String },
    #[error("connection to {addr} is closed")]
    Closed { addr: String },
    #[error("call to {addr} too large: {len} bytes (limit {limit})")]
    TooLarge {
        addr: String,
        len: usize,
        limit: usize,
    },
    /// RPCSEC_GSS: no context could be set up, or a reply failed its checks (its data
    /// is never handed on).
    #[error("{addr}: {reason}")]
    Security { addr: String, reason: String },
    /// The process is stopping ([`crate::stop`]).
    #[error("stopped after {secs:.1} s waiting for {waiting_for}")]
    Stopped { waiting_for: String, secs: f64 },
}
