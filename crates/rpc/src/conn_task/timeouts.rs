//! The connection task's clock: calls past their deadline fail, calls past their
//! timeout are sent again (or the connection is dropped when nothing came back), and
//! a sealed call overtaken by answers a window past it is sent again at once.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use super::Task;
use crate::error::TransportError;

impl Task {
    /// Fails calls past their deadline; retransmits calls past their timeout,
    /// or reconnects when the server has gone silent.
    pub(super) fn check_timeouts(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let now = Instant::now();
        let deadline = self.config.deadline();
        let timeout = self.config.timeout;
        let mut expired = Vec::new();
        let mut resend = Vec::new();
        let mut silent = false;
        for (xid, p) in &self.pending {
            if now.duration_since(p.submitted) >= deadline {
                expired.push(*xid);
            } else if self.stream.is_some() && now.duration_since(p.sent_at) >= timeout {
                // After a reconnect both are the same instant: nothing came back.
                // In multipath mode a reply that was already on its way when the path
                // died may come after this call went out: silence for the whole
                // timeout counts then, or the call would wait for its deadline.
                let quiet = self.last_rx < p.sent_at
                    || (self.config.fail_fast
                        && (self.last_rx == p.sent_at
                            || now.duration_since(self.last_rx) >= timeout));
                if quiet {
                    silent = true;
                } else if !self.config.fail_fast {
                    resend.push(*xid);
                }
            }
        }
        for xid in expired {
            let Some(p) = self.pending.remove(&xid) else {
                continue;
            };
            self.coalesce.remove(p.reply_hint);
            let secs = now.duration_since(p.submitted).as_secs_f64();
            let addr = self.addr.to_string();
            let err = if self.stream.is_some() {
                TransportError::Timeout {
                    addr,
                    xid,
                    secs,
                    tries: p.tries,
                }
            } else {
                TransportError::Lost {
                    addr,
                    secs,
                    reason: self.last_error.clone(),
                }
            };
            p.reply.send(Err(err));
        }
        if silent {
            // Nothing came back since these calls went out: the connection
            // (or the server) is gone; a new connection resends everything.
            self.drop_connection(format!("no reply within {:.1} s", timeout.as_secs_f64()));
            return;
        }
        if let Some(g) = &self.gss {
            resend.extend(self.pending.iter().filter_map(|(xid, p)| {
                let gp = p.gss.as_ref()?;
                g.overtaken(gp.ctx, *gp.seqs.last()?).then_some(*xid)
            }));
            resend.sort_unstable();
            resend.dedup();
        }
        for xid in resend {
            self.stats.retransmits.fetch_add(1, Relaxed);
            self.resend(xid, now);
        }
        self.flush_or_drop();
    }
}
