//! Calls that come *from the server* over a connection the client opened: the NFSv4.1
//! back channel (RFC 8881 section 2.10.3.1) shares the fore channel's TCP connection,
//! so a record whose `msg_type` is CALL is a callback, not a reply.
//!
//! The connection's task stays the only owner of the socket: it hands each call to a
//! handler through a bounded channel ([`Connection::serve_calls`](crate::conn::Connection::serve_calls))
//! and writes the reply the handler gives back through the connection's own channel.
//! The call's size is bounded by the record decoder's `max_record`, as a reply's is.

use bytes::{BufMut, Bytes, BytesMut};
use tokio::sync::mpsc;

use crate::call::Msg;
use crate::msg::{decode_call, encode_reply_error, encode_reply_success, ReplyError};
use crate::record::MAX_FRAGMENT;

/// Where a connection hands the calls the server sends it. Bounded: a server that
/// sends more than the handler takes gets SYSTEM_ERR for the excess, never memory.
pub type CallSink = mpsc::Sender<IncomingCall>;

/// One call the server sent (a CB_NULL or CB_COMPOUND of the back channel).
pub struct IncomingCall {
    pub xid: u32,
    pub prog: u32,
    pub vers: u32,
    pub proc_: u32,
    /// The whole record; [`IncomingCall::args`] is the procedure arguments in it.
    record: Bytes,
    args_at: usize,
    reply: Responder,
}

impl std::fmt::Debug for IncomingCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IncomingCall")
            .field("xid", &self.xid)
            .field("prog", &self.prog)
            .field("vers", &self.vers)
            .field("proc_", &self.proc_)
            .field("args", &self.args().len())
            .finish()
    }
}

impl IncomingCall {
    /// The procedure arguments (after the call header, credential and verifier).
    pub fn args(&self) -> &[u8] {
        &self.record[self.args_at..]
    }

    /// Answers SUCCESS with `results` (the procedure's encoded results).
    pub fn reply(mut self, results: &[u8]) {
        let mut b = BytesMut::with_capacity(24 + results.len());
        encode_reply_success(&mut b, self.xid);
        b.put_slice(results);
        self.reply.send(b.freeze());
    }

    /// Answers that the procedure was not run (`reason`: PROC_UNAVAIL, GARBAGE_ARGS, ...).
    pub fn refuse(mut self, reason: ReplyError) {
        let mut b = BytesMut::with_capacity(32);
        encode_reply_error(&mut b, self.xid, reason);
        self.reply.send(b.freeze());
    }
}

/// Sends a reply record back through the connection's task. A call dropped without
/// an answer is answered SYSTEM_ERR, so the server never waits for it in vain.
struct Responder {
    xid: u32,
    conn: Option<mpsc::UnboundedSender<Msg>>,
}

impl Responder {
    fn send(&mut self, mut reply: Bytes) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        if reply.len() + 4 > MAX_FRAGMENT {
            let mut b = BytesMut::with_capacity(32);
            encode_reply_error(&mut b, self.xid, ReplyError::SystemErr);
            reply = b.freeze();
        }
        // A connection already gone takes its callbacks with it.
        let _ = conn.send(Msg::Answer(reply));
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if self.conn.is_some() {
            let mut b = BytesMut::with_capacity(32);
            encode_reply_error(&mut b, self.xid, ReplyError::SystemErr);
            self.send(b.freeze());
        }
    }
}

/// What the task does with a record whose `msg_type` is CALL.
pub(crate) enum Routed {
    /// Handed to the handler.
    Handed,
    /// To be answered at once by the task (no handler room, or a malformed call).
    Answer(Bytes),
}

/// Hands `record` (a CALL) to `sink`, or says what to answer at once. `conn` is the
/// connection's own channel, for the handler's reply.
pub(crate) fn route(
    record: Bytes,
    sink: &CallSink,
    conn: Option<mpsc::UnboundedSender<Msg>>,
) -> Routed {
    let (xid, prog, vers, proc_, args_at) = match decode_call(&record) {
        Ok(c) => (c.xid, c.prog, c.vers, c.proc_, record.len() - c.args.len()),
        Err(_) => {
            let xid = u32::from_be_bytes([record[0], record[1], record[2], record[3]]);
            return Routed::Answer(refusal(xid, ReplyError::GarbageArgs));
        }
    };
    let call = IncomingCall {
        xid,
        prog,
        vers,
        proc_,
        record,
        args_at,
        reply: Responder { xid, conn },
    };
    match sink.try_send(call) {
        Ok(()) => Routed::Handed,
        Err(e) => {
            let mut call = e.into_inner();
            // Answered here; the responder must not answer again.
            call.reply.conn = None;
            let why = match sink.is_closed() {
                true => ReplyError::ProgUnavail,
                false => ReplyError::SystemErr,
            };
            Routed::Answer(refusal(xid, why))
        }
    }
}

fn refusal(xid: u32, reason: ReplyError) -> Bytes {
    let mut b = BytesMut::with_capacity(32);
    encode_reply_error(&mut b, xid, reason);
    b.freeze()
}
