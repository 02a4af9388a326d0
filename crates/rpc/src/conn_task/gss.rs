//! The connection task's RPCSEC_GSS steps: contexts set up through the task, replies
//! opened before they are handed on, calls sealed again when they are resent, and the
//! context destroyed at the end.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use bytes::{Bytes, BytesMut};

use super::{Out, Pending, Task};
use crate::call::{CallBuf, Request};
use crate::secure::{Ctl, Opened};

impl Task {
    pub(super) fn on_ctl(&mut self, ctl: Option<Ctl>) {
        match ctl {
            Some(Ctl::Plain(req)) => self.accept(req, false),
            Some(Ctl::Ready(id, result)) => {
                let Some(g) = self.gss.as_mut() else { return };
                if let Some(why) = g.ready(id, result) {
                    self.stats.gss_contexts.fetch_add(1, Relaxed);
                    if let Ok(mut ev) = self.stats.gss_events.lock() {
                        ev.push((std::time::SystemTime::now(), why));
                    }
                }
                self.unpark();
            }
            None => {}
        }
        self.flush_or_drop();
    }

    /// A reply to a sealed call, checked and opened; `None` when the call was kept for
    /// a new context or failed here.
    pub(super) fn open(&mut self, mut p: Pending, record: Bytes) -> Option<(Pending, Bytes)> {
        let (Some(g), Some(gp)) = (self.gss.as_mut(), p.gss.as_ref()) else {
            return Some((p, record));
        };
        match g.open(gp.ctx, &gp.seqs, record) {
            Opened::Reply(r) => Some((p, r)),
            Opened::Renew => {
                self.coalesce.remove(p.reply_hint);
                let ctx = gp.ctx;
                let gp = p.gss.take()?;
                let mut call = CallBuf::new(BytesMut::from(&gp.plain[..]));
                call.payload = gp.payload;
                call.reply_hint = p.reply_hint;
                let req = Request {
                    call,
                    reply: p.reply,
                };
                if let Some(req) = g.renew(ctx, req) {
                    self.accept(req, true);
                }
                None
            }
            Opened::Bad(why) => {
                self.coalesce.remove(p.reply_hint);
                p.reply.send(Err(g.error(why)));
                None
            }
        }
    }

    /// Sends the calls that waited, as far as the contexts have room.
    pub(super) fn unpark(&mut self) {
        loop {
            let Some(g) = self.gss.as_mut() else { return };
            if !g.has_parked() {
                return;
            }
            g.count(
                self.pending
                    .values()
                    .filter_map(|p| p.gss.as_ref().map(|g| g.ctx)),
            );
            let Some(req) = g.unpark() else { return };
            self.send(req, true);
        }
    }

    /// Sends a pending call again with its XID; a sealed one gets a new sequence number,
    /// as the server discards one it has seen.
    pub(super) fn resend(&mut self, xid: u32, now: Instant) {
        let Some(p) = self.pending.get_mut(&xid) else {
            return;
        };
        p.sent_at = now;
        p.tries += 1;
        if let (Some(g), Some(gp)) = (self.gss.as_mut(), p.gss.as_mut()) {
            if let Ok(sealed) = g.seal(&gp.plain, &gp.payload) {
                // Replies to the oldest transmissions are given up on first.
                if gp.seqs.len() >= 8 {
                    gp.seqs.remove(0);
                }
                gp.seqs.push(sealed.seq);
                gp.ctx = sealed.ctx;
                p.head = sealed.head;
                p.payload = sealed.payload;
            }
        }
        self.outq.push_back(Out::new(&p.head, &p.payload));
    }

    /// Tells the server the context is no longer needed (RFC 2203 §5.4): one try, no
    /// wait for the answer, as the connection is ending.
    pub(super) fn destroy_context(&mut self) {
        let xid = self.next_xid;
        let (Some(g), Some(stream)) = (self.gss.as_mut(), self.stream.as_mut()) else {
            return;
        };
        for head in g.destroy_calls(xid) {
            let out = Out::new(&head, &Bytes::new());
            let mut bytes = out.mark.to_vec();
            bytes.extend_from_slice(&head);
            let _ = stream.write_vectored(&[std::io::IoSlice::new(&bytes)]);
        }
    }
}
