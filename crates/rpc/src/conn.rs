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
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

pub use crate::call::CallBuf;
use crate::call::{Msg, Request};
pub use crate::completion::{CallResult, CompletionQueue, Completions, ReplyRecord, ReplyTo};
pub use crate::config::{ConnConfig, Siblings, DEFAULT_REPLY_BATCH};
use crate::conn_task::Task;
pub use crate::counters::ConnStats;
pub use crate::error::TransportError;
pub use crate::incoming::{CallSink, IncomingCall};

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
