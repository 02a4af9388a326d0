//! One TCP connection to an ONC RPC server.
//!
//! A single task owns the socket (like tokio-postgres' connection): callers
//! hand it [`CallBuf`]s through a channel, each with its own [`ReplyTo`]; the
//! task assigns XIDs, writes what is queued in as few vectored writes as it
//! can, matches replies by XID in any order, retransmits with the same XID
//! after a timeout (so the server's duplicate request cache protects
//! non-idempotent calls), reconnects after a dropped connection and resends
//! what was pending. Every call ends: with its reply, or with a
//! [`TransportError`] once its deadline (`timeout * (retries + 1)`) passes.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::sync::{mpsc, oneshot};

pub use crate::completion::{CallResult, CompletionQueue, Completions, ReplyRecord, ReplyTo};
use crate::conn_task::Task;
pub use crate::incoming::{CallSink, IncomingCall};

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
    /// Multipath mode ([`ConnConfig::fail_fast`]): the connection dropped
    /// and its calls were handed back at once.
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
    /// [`TransportError::Dropped`] or [`TransportError::Connect`]) so the caller
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

/// One RPC call message, without record mark.
pub struct CallBuf {
    /// RPC call header and arguments. The first four bytes are the XID slot: the
    /// connection writes the XID there, so callers may leave zero.
    pub head: BytesMut,
    /// Bytes sent after `head` without copying (a WRITE's data), followed
    /// by XDR padding the connection adds. Empty for most calls.
    pub payload: Bytes,
    /// Bytes the reply is expected to bring at least (a READ's data and its results);
    /// 0 for a small reply. Only tunes reply coalescing: a wrong hint costs time,
    /// never a reply.
    pub reply_hint: u32,
}

impl CallBuf {
    pub fn new(head: BytesMut) -> Self {
        CallBuf {
            head,
            payload: Bytes::new(),
            reply_hint: 0,
        }
    }
}

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

pub(crate) struct Request {
    pub call: CallBuf,
    pub reply: ReplyTo,
}

/// What goes through a connection's channel: one call, or a batch that
/// costs one send and at most one wake-up of the task for all its calls.
pub(crate) enum Msg {
    One(Request),
    Batch(Vec<Request>),
    /// Calls from the server go to this handler from now on; the weak sender is the
    /// connection's own channel, for the handler's replies.
    Serve(CallSink, mpsc::WeakUnboundedSender<Msg>),
    /// A reply record (no record mark) to a call from the server.
    Answer(Bytes),
}

/// Calls gathered by a submitter and handed to a connection at once
/// ([`Connection::submit_batch`]).
#[derive(Default)]
pub struct CallBatch(Vec<Request>);

impl CallBatch {
    pub fn with_capacity(n: usize) -> Self {
        CallBatch(Vec::with_capacity(n))
    }

    pub fn push(&mut self, call: CallBuf, reply: ReplyTo) {
        self.0.push(Request { call, reply });
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Handle to a connection; cheap to clone. The task ends when every handle
/// is dropped and nothing is pending.
#[derive(Clone)]
pub struct Connection {
    tx: mpsc::UnboundedSender<Msg>,
    addr: SocketAddr,
    stats: Arc<ConnStats>,
    config: Arc<ConnConfig>,
}

impl Connection {
    /// Connects (failing within `connect_timeout` if the server cannot be
    /// reached) and spawns the task that owns the socket on the current
    /// tokio runtime.
    /// A stop of the process ends the attempt ([`crate::stop`]).
    pub async fn connect(addr: SocketAddr, config: ConnConfig) -> Result<Self, TransportError> {
        let stream = crate::stop::or_stopped(
            || format!("a connection to {addr}"),
            crate::conn_task::open(addr, &config),
        )
        .await??;
        let stats = Arc::new(ConnStats::default());
        if let Ok(mut a) = stats.local_addr.lock() {
            *a = stream.local_addr().ok();
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let config = Arc::new(config);
        let task = Task::new(addr, config.clone(), rx, Some(stream), stats.clone());
        tokio::spawn(task.run());
        Ok(Connection {
            tx,
            addr,
            stats,
            config,
        })
    }

    /// A connection that is not connected yet: the first call connects
    /// (for a multipath pool whose path is down when the pool opens; its
    /// probe brings it up later). Spawns the task on the current runtime.
    pub fn unconnected(addr: SocketAddr, config: ConnConfig) -> Self {
        let stats = Arc::new(ConnStats::default());
        let (tx, rx) = mpsc::unbounded_channel();
        let config = Arc::new(config);
        let task = Task::new(addr, config.clone(), rx, None, stats.clone());
        tokio::spawn(task.run());
        Connection {
            tx,
            addr,
            stats,
            config,
        }
    }

    /// Queues a call; the result goes to `reply`. Never blocks and needs no
    /// async context, so a plain thread can drive many calls at once.
    pub fn submit(&self, call: CallBuf, reply: ReplyTo) {
        if let Err(mpsc::error::SendError(msg)) = self.tx.send(Msg::One(Request { call, reply })) {
            self.refuse(msg);
        }
    }

    /// Queues every call of `batch` (leaving it empty) with one channel
    /// send, so the connection task wakes once for all of them.
    pub fn submit_batch(&self, batch: &mut CallBatch) {
        if batch.0.is_empty() {
            return;
        }
        // The batch keeps its capacity for the next round: one allocation per batch.
        let cap = batch.0.capacity();
        let reqs = std::mem::replace(&mut batch.0, Vec::with_capacity(cap));
        if let Err(mpsc::error::SendError(msg)) = self.tx.send(Msg::Batch(reqs)) {
            self.refuse(msg);
        }
    }

    /// Ends the calls of a message the task can no longer take.
    fn refuse(&self, msg: Msg) {
        let reqs = match msg {
            Msg::One(r) => vec![r],
            Msg::Batch(v) => v,
            Msg::Serve(..) | Msg::Answer(_) => Vec::new(),
        };
        for req in reqs {
            req.reply.send(Err(TransportError::Closed {
                addr: self.addr.to_string(),
            }));
        }
    }

    /// Hands calls the server sends over this connection (the NFSv4.1 back channel)
    /// to `sink` from now on; each is answered with what its handler replies
    /// ([`IncomingCall::reply`]). Without a handler such records are dropped as
    /// replies that match no call.
    pub fn serve_calls(&self, sink: CallSink) {
        let _ = self.tx.send(Msg::Serve(sink, self.tx.downgrade()));
    }

    /// Sends a call and waits for its reply; a stop of the process ends the wait
    /// ([`crate::stop`]).
    pub async fn call(&self, call: CallBuf) -> CallResult {
        let (tx, rx) = oneshot::channel();
        self.submit(call, ReplyTo::Once(tx));
        let addr = self.addr;
        crate::stop::or_stopped(|| format!("a reply from {addr}"), rx)
            .await?
            .unwrap_or_else(|_| {
                Err(TransportError::Closed {
                    addr: addr.to_string(),
                })
            })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn stats(&self) -> &Arc<ConnStats> {
        &self.stats
    }

    pub fn config(&self) -> &ConnConfig {
        &self.config
    }
}

#[cfg(test)]
#[path = "conn/gather_tests.rs"]
mod gather_tests;
#[cfg(test)]
#[path = "conn/tests.rs"]
mod tests;
