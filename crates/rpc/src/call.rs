//! What a connection's channel carries from its handles to its task: calls, each with
//! where its reply goes, and the back channel's handler and answers.

use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;

use crate::completion::ReplyTo;
use crate::incoming::CallSink;

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
