//! The task that owns one connection's socket: XIDs, batching writes,
//! reading records, matching replies, timeouts, reconnects.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, IoSlice};
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::call::{Msg, Request};
use crate::coalesce::Coalescer;
use crate::completion::{CallResult, Completions, ReplyRecord, ReplyTo};
use crate::config::ConnConfig;
use crate::counters::ConnStats;
use crate::error::TransportError;
use crate::incoming::CallSink;
use crate::incoming::{self, Routed};
use crate::record::{fragment_header, RecordDecoder, MAX_FRAGMENT};
use crate::recv_room;
use crate::secure::{Ctl, GssConn};
pub(crate) use crate::socket::open;
use crate::socket::{Ready, Socket};

/// Slices handed to one `writev` (each call takes up to four).
const IOV_BATCH: usize = 256;
const PAD: [u8; 3] = [0; 3];

/// XIDs are sequential; a multiplicative hash spreads them over the table.
#[derive(Default)]
struct XidHasher(u64);

impl Hasher for XidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type XidMap<V> = HashMap<u32, V, BuildHasherDefault<XidHasher>>;

struct Pending {
    /// What goes on the wire (sealed, under RPCSEC_GSS).
    head: Bytes,
    payload: Bytes,
    /// Under RPCSEC_GSS: the call as built above, sealed again for each resend.
    gss: Option<Box<GssPending>>,
    reply: ReplyTo,
    submitted: Instant,
    sent_at: Instant,
    tries: u32,
    reply_hint: u32,
}

/// A sealed call's plain form and the sequence numbers it went out with (a reply
/// answers any one of its transmissions).
struct GssPending {
    plain: Bytes,
    payload: Bytes,
    seqs: Vec<u32>,
    /// The context that sealed it.
    ctx: u32,
}

/// One call queued for writing: record mark, head, payload, padding.
struct Out {
    mark: [u8; 4],
    head: Bytes,
    payload: Bytes,
    pad: usize,
    /// Bytes of this item already written.
    done: usize,
}

impl Out {
    fn new(head: &Bytes, payload: &Bytes) -> Out {
        let pad = (4 - (payload.len() & 3)) & 3;
        let len = head.len() + payload.len() + pad;
        Out {
            mark: fragment_header(len, true),
            head: head.clone(),
            payload: payload.clone(),
            pad,
            done: 0,
        }
    }

    fn len(&self) -> usize {
        4 + self.head.len() + self.payload.len() + self.pad
    }

    /// Appends the unwritten pieces to `iov`; false if they did not fit.
    fn slices<'a>(&'a self, iov: &mut [IoSlice<'a>; IOV_BATCH], n: &mut usize) -> bool {
        if *n + 4 > IOV_BATCH {
            return false;
        }
        let mut skip = self.done;
        for piece in [
            &self.mark[..],
            &self.head[..],
            &self.payload[..],
            &PAD[..self.pad],
        ] {
            if skip >= piece.len() {
                skip -= piece.len();
                continue;
            }
            iov[*n] = IoSlice::new(&piece[skip..]);
            *n += 1;
            skip = 0;
        }
        true
    }
}

/// Why reading stopped: the connection failed, or the server broke the
/// protocol (the stream is out of step; pending calls cannot be saved).
enum ReadFail {
    Io(String),
    Protocol(String),
}

pub(crate) struct Task {
    addr: SocketAddr,
    config: Arc<ConnConfig>,
    rx: mpsc::UnboundedReceiver<Msg>,
    rx_closed: bool,
    stream: Option<Socket>,
    stats: Arc<ConnStats>,
    pending: XidMap<Pending>,
    outq: VecDeque<Out>,
    decoder: RecordDecoder,
    next_xid: u32,
    last_rx: Instant,
    reconnect_at: Instant,
    backoff: Duration,
    last_error: String,
    /// Replies of the current socket read bound for one completion sink,
    /// handed over together (one lock, at most one wake-up of its waiter).
    sink: Option<Arc<dyn Completions>>,
    sunk: Vec<(u64, CallResult)>,
    coalesce: Coalescer,
    /// When the socket was last read or the mark last raised from the kernel's default
    /// (starts the coalescing fallback timer).
    last_read: Instant,
    /// Calls of `retune`, to re-read the receive buffer size now and then.
    retunes: u32,
    /// Replies were handed over since the loop last looked.
    delivered: bool,
    /// Outstanding calls last counted in the siblings' total.
    counted: usize,
    /// Nothing was outstanding at the last retune (the mark was left as it was).
    idle: bool,
    /// The handler of calls from the server, and this connection's channel for its
    /// replies (weak: the handler must not keep the connection alive).
    calls: Option<(CallSink, mpsc::WeakUnboundedSender<Msg>)>,
    /// The RPCSEC_GSS context and the calls waiting for one (`ConnConfig::gss`).
    gss: Option<GssConn>,
}

impl Task {
    pub(crate) fn new(
        addr: SocketAddr,
        config: Arc<ConnConfig>,
        rx: mpsc::UnboundedReceiver<Msg>,
        stream: Option<Socket>,
        stats: Arc<ConnStats>,
    ) -> Task {
        let now = Instant::now();
        let max_record = config.max_record;
        let gss = config
            .gss
            .clone()
            .map(|t| GssConn::new(t, addr.to_string()));
        let mut coalesce = Coalescer::new(config.reply_batch);
        if let Some(s) = &stream {
            coalesce.new_socket(s.rcvbuf());
        }
        Task {
            addr,
            config,
            rx,
            rx_closed: false,
            stream,
            stats,
            pending: XidMap::default(),
            outq: VecDeque::new(),
            decoder: RecordDecoder::new(max_record),
            next_xid: initial_xid(),
            last_rx: now,
            reconnect_at: now,
            backoff: Duration::from_millis(20),
            last_error: String::new(),
            sink: None,
            sunk: Vec::new(),
            coalesce,
            last_read: now,
            retunes: 0,
            delivered: false,
            counted: 0,
            idle: false,
            calls: None,
            gss,
        }
    }

    pub(crate) async fn run(mut self) {
        let period =
            (self.config.timeout / 4).clamp(Duration::from_millis(5), Duration::from_millis(200));
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // One timer for the whole life of the task, moved later as reads come: a new timer
        // per turn of the loop registers with the runtime each time, and one due before the
        // runtime's next wake-up costs a write to its event descriptor (and an extra
        // return of its epoll_wait): on 4 connections that was one per 7 calls. Moving a
        // registered timer later costs an atomic operation.
        let fallback = tokio::time::sleep_until(self.fallback_at());
        tokio::pin!(fallback);
        loop {
            if self.gss.as_ref().is_some_and(|g| g.has_parked()) {
                // Replies made room in a context.
                self.unpark();
                self.flush_or_drop();
            }
            if self.rx_closed
                && self.pending.is_empty()
                && !self.gss.as_ref().is_some_and(|g| g.busy())
            {
                break;
            }
            if std::mem::take(&mut self.delivered) && !self.rx_closed {
                // Let the callers whose replies just came replace those calls before the
                // mark is tuned: tuned now, it would drop for the moment the count is low
                // and rise again at once, two system calls per batch for nothing.
                tokio::task::yield_now().await;
                if let Ok(msg) = self.rx.try_recv() {
                    self.on_request(Some(msg));
                }
            }
            let accepting = !self.rx_closed && self.pending.len() < self.config.max_in_flight;
            self.retune();
            let holding = self.coalesce.holding() && !self.pending.is_empty();
            // Moved only while it may fire: a timer kept registered while nothing is held
            // cost about 5 us per call at one outstanding (bench-nfs-fio, lat1u).
            if holding {
                let at = self.fallback_at();
                if fallback.deadline() != at {
                    fallback.as_mut().reset(at);
                }
            }
            if let Some(stream) = &self.stream {
                tokio::select! {
                    biased;
                    ready = stream.ready() => match ready {
                        Ok(Ready::Read) => {
                            self.read_or_drop();
                            if let Some(n) = &self.config.siblings {
                                n.woke.notify_waiters();
                            }
                        }
                        Ok(Ready::Write) => self.flush_or_drop(),
                        Err(e) => self.drop_connection(e.to_string()),
                    },
                    req = self.rx.recv(), if accepting => self.on_request(req),
                    ctl = gss_ctl(self.gss.as_mut()) => self.on_ctl(ctl),
                    _ = tick.tick() => self.check_timeouts(),
                    // The thread is awake for a sibling: take what has come here too.
                    _ = siblings_woke(self.config.siblings.as_deref()), if holding => {
                        self.read_or_drop()
                    }
                    // Replies below the mark (shorter than expected) are read anyway.
                    _ = &mut fallback, if holding => {
                        self.coalesce.pause();
                        self.read_or_drop();
                    }
                }
            } else {
                let due = !self.pending.is_empty();
                let at = tokio::time::Instant::from_std(self.reconnect_at);
                tokio::select! {
                    _ = tokio::time::sleep_until(at), if due => self.reconnect().await,
                    req = self.rx.recv(), if accepting => self.on_request(req),
                    ctl = gss_ctl(self.gss.as_mut()) => self.on_ctl(ctl),
                    _ = tick.tick() => self.check_timeouts(),
                }
            }
        }
        self.destroy_context();
        self.count_outstanding(0);
    }

    /// Keeps this connection's share of the siblings' outstanding total at `n`.
    fn count_outstanding(&mut self, n: usize) {
        if let Some(s) = &self.config.siblings {
            if n > self.counted {
                s.outstanding.fetch_add(n - self.counted, Relaxed);
            } else if n < self.counted {
                s.outstanding.fetch_sub(self.counted - n, Relaxed);
            }
            self.counted = n;
        }
    }

    /// When replies held below a raised mark are read anyway.
    fn fallback_at(&self) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.last_read + self.config.reply_wait)
    }

    /// Moves the socket's receive low-water mark with the number of outstanding calls.
    fn retune(&mut self) {
        self.count_outstanding(self.pending.len());
        let Some(stream) = &self.stream else {
            return;
        };
        // The kernel grows the receive buffer with the traffic: a larger cap follows.
        self.retunes = self.retunes.wrapping_add(1);
        if self.retunes.is_multiple_of(256) {
            self.coalesce.set_rcvbuf(stream.rcvbuf());
        }
        let pending = self.pending.len();
        if pending == 0 && self.calls.is_none() {
            // Nothing is coming: the mark stays for the next burst, which on siblings is
            // mostly as large as the last (lowered to 1 and raised again, it cost two
            // system calls per burst: 0.13 per read on 4 connections). The end of the
            // stream wakes the task whatever the mark; calls from the server would not.
            self.idle = true;
            return;
        }
        let resumed = std::mem::take(&mut self.idle);
        let was_holding = self.coalesce.holding();
        let group = self
            .config
            .siblings
            .as_ref()
            .map(|s| s.outstanding.load(Relaxed));
        let mark = self.coalesce.retune(pending, group);
        if resumed || (mark.is_some() && !was_holding) {
            // The wait for the fallback starts now, not at a read long ago.
            self.last_read = Instant::now();
        }
        if let Some(mark) = mark {
            if stream.set_rcvlowat(mark).is_err() {
                self.coalesce.disable();
                let _ = stream.set_rcvlowat(1);
            }
        }
    }

    fn on_request(&mut self, msg: Option<Msg>) {
        let Some(msg) = msg else {
            self.rx_closed = true;
            return;
        };
        self.accept_msg(msg);
        // Take everything already queued, then write it in one go.
        while self.pending.len() < self.config.max_in_flight {
            match self.rx.try_recv() {
                Ok(msg) => self.accept_msg(msg),
                Err(_) => break,
            }
        }
        self.flush_or_drop();
    }

    /// A batch is taken whole: `max_in_flight` may be passed by at most
    /// one batch (a submitter's queue depth).
    fn accept_msg(&mut self, msg: Msg) {
        match msg {
            Msg::One(req) => self.accept(req, true),
            Msg::Batch(reqs) => {
                self.pending.reserve(reqs.len());
                for req in reqs {
                    self.accept(req, true);
                }
            }
            Msg::Serve(sink, me) => self.calls = Some((sink, me)),
            Msg::Answer(reply) => self.answer(reply),
        }
    }

    /// Queues a reply to a call from the server (lost with the socket it came on: the
    /// server sends the call again on a connection it still has).
    fn answer(&mut self, reply: Bytes) {
        if self.stream.is_some() {
            self.outq.push_back(Out::new(&reply, &Bytes::new()));
        }
    }

    /// Takes a call: an XID, sealed under RPCSEC_GSS (unless `seal` is false: a
    /// context's own INIT calls), queued for writing.
    fn accept(&mut self, req: Request, seal: bool) {
        let req = match &mut self.gss {
            Some(g) if seal => {
                g.count(
                    self.pending
                        .values()
                        .filter_map(|p| p.gss.as_ref().map(|g| g.ctx)),
                );
                match g.admit(req) {
                    Some(req) => req,
                    None => return,
                }
            }
            _ => req,
        };
        self.send(req, seal);
    }

    /// Gives an admitted call its XID, seals it (unless `seal` is false) and queues it.
    pub(super) fn send(&mut self, req: Request, seal: bool) {
        let Request { mut call, reply } = req;
        let len = call.head.len() + call.payload.len() + 3;
        if call.head.len() < 4 || len > MAX_FRAGMENT {
            reply.send(Err(TransportError::TooLarge {
                addr: self.addr.to_string(),
                len,
                limit: MAX_FRAGMENT,
            }));
            return;
        }
        let mut xid = self.next_xid;
        while self.pending.contains_key(&xid) {
            xid = xid.wrapping_add(1);
        }
        self.next_xid = xid.wrapping_add(1);
        call.head[..4].copy_from_slice(&xid.to_be_bytes());
        let mut head = call.head.freeze();
        let mut payload = call.payload;
        let mut gss = None;
        if let Some(g) = self.gss.as_mut().filter(|_| seal) {
            match g.seal(&head, &payload) {
                Ok(sealed) => {
                    gss = Some(Box::new(GssPending {
                        plain: std::mem::replace(&mut head, sealed.head),
                        payload: std::mem::replace(&mut payload, sealed.payload),
                        seqs: vec![sealed.seq],
                        ctx: sealed.ctx,
                    }));
                }
                Err(e) => {
                    reply.send(Err(g.error(e)));
                    return;
                }
            }
        }
        let now = Instant::now();
        if self.stream.is_some() {
            self.outq.push_back(Out::new(&head, &payload));
        }
        self.stats.calls.fetch_add(1, Relaxed);
        self.coalesce.add(call.reply_hint);
        self.pending.insert(
            xid,
            Pending {
                head,
                payload,
                gss,
                reply,
                submitted: now,
                sent_at: now,
                tries: u32::from(self.stream.is_some()),
                reply_hint: call.reply_hint,
            },
        );
    }

    fn flush_or_drop(&mut self) {
        if let Err(e) = self.flush() {
            self.drop_connection(e.to_string());
        }
    }

    /// Writes queued calls until done or the socket is full.
    fn flush(&mut self) -> io::Result<()> {
        let Some(stream) = &mut self.stream else {
            return Ok(());
        };
        while !self.outq.is_empty() {
            let mut iov = [IoSlice::new(&[]); IOV_BATCH];
            let mut n = 0;
            for out in &self.outq {
                if !out.slices(&mut iov, &mut n) {
                    break;
                }
            }
            let written = match stream.write_vectored(&iov[..n]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(w) => w,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            };
            self.stats.writes.fetch_add(1, Relaxed);
            self.stats.bytes_sent.fetch_add(written as u64, Relaxed);
            let mut left = written;
            while left > 0 {
                let Some(front) = self.outq.front_mut() else {
                    break;
                };
                let rest = front.len() - front.done;
                if left >= rest {
                    left -= rest;
                    self.outq.pop_front();
                } else {
                    front.done += left;
                    left = 0;
                }
            }
        }
        stream.drained();
        Ok(())
    }

    /// Reads what the socket has; a broken connection is dropped.
    fn read_or_drop(&mut self) {
        match self.read() {
            // Answers to calls from the server, queued while reading.
            Ok(()) if !self.outq.is_empty() => self.flush_or_drop(),
            Ok(()) => {}
            Err(ReadFail::Io(e)) => self.drop_connection(e),
            Err(ReadFail::Protocol(e)) => {
                // Resending would meet the same reply again.
                self.fail_all(&e);
                self.drop_connection(e);
            }
        }
    }

    /// Reads what the socket has and delivers complete records.
    fn read(&mut self) -> Result<(), ReadFail> {
        let r = self.read_records();
        self.flush_sink();
        r
    }

    /// Hands the replies gathered for the current sink over.
    fn flush_sink(&mut self) {
        if let Some(sink) = self.sink.take() {
            sink.complete_many(&mut self.sunk);
        }
    }

    /// Reads until the socket is drained. Records are split off the
    /// receive buffer without copying.
    fn read_records(&mut self) -> Result<(), ReadFail> {
        let mut got = false;
        loop {
            let Some(stream) = &self.stream else {
                return Ok(());
            };
            let want = self.decoder.wanted();
            // Small replies share a chunk (siblings a share of one); a record whose start
            // is already in it moves (is copied) into a new one, rarely since each holds
            // several. Room for what the mark says has come, too: room for part of a burst
            // of replies cost a second recv (half of them on 4 connections). A large reply
            // gets room for all of it before it is read (see `recv_room`).
            let small = (
                want.max(self.coalesce.mark()).clamp(1, recv_room::CHUNK),
                recv_room::small_chunk(
                    want,
                    self.pending.len(),
                    (self.config.siblings.as_ref()).map(|s| s.outstanding.load(Relaxed)),
                ),
            );
            // A hint never makes room beyond the longest record accepted.
            let largest = (self.coalesce.largest_reply())
                .map(|l| l.min(self.config.max_record.saturating_add(4)));
            let room = recv_room::plan(self.decoder.fragment(), largest, small);
            let buf = self.decoder.buffer_mut();
            if buf.capacity() - buf.len() < room.need {
                buf.reserve(room.reserve);
            }
            let asked = (buf.capacity() - buf.len()).min(room.cap);
            match stream.read_buf(buf, asked) {
                Ok(0) => return Err(ReadFail::Io("connection closed by the server".into())),
                Ok(n) => {
                    got = true;
                    self.stats.reads.fetch_add(1, Relaxed);
                    self.stats.bytes_received.fetch_add(n as u64, Relaxed);
                    while let Some(record) = self
                        .decoder
                        .next_record()
                        .map_err(|e| ReadFail::Protocol(e.to_string()))?
                    {
                        self.deliver(record);
                    }
                    // Replies go out per read, so the reaper need not wait
                    // for the socket to drain.
                    self.flush_sink();
                    // A short read emptied the socket. What comes later raises a new
                    // readiness event (this pass consumed the last one), so no empty read
                    // to confirm it; an end of stream keeps its event (see `Socket`). A
                    // read cut at the end of a large reply reads on.
                    if n < asked {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(ReadFail::Io(e.to_string())),
            }
        }
        self.last_read = Instant::now();
        if got {
            self.last_rx = self.last_read;
            self.coalesce.resume();
        }
        Ok(())
    }

    fn deliver(&mut self, record: Bytes) {
        if record.len() < 4 {
            self.stats.unmatched.fetch_add(1, Relaxed);
            return;
        }
        if let Some((sink, me)) = &self.calls {
            if record.len() >= 8 && record[4..8] == crate::msg::CALL.to_be_bytes() {
                self.stats.callbacks.fetch_add(1, Relaxed);
                if let Routed::Answer(reply) = incoming::route(record, sink, me.upgrade()) {
                    self.answer(reply);
                }
                return;
            }
        }
        let xid = u32::from_be_bytes([record[0], record[1], record[2], record[3]]);
        match self.pending.remove(&xid) {
            Some(p) => {
                let Some((p, record)) = self.open(p, record) else {
                    return;
                };
                self.delivered = true;
                self.coalesce.remove(p.reply_hint);
                self.coalesce.observed(p.reply_hint, record.len() + 4);
                self.stats.replies.fetch_add(1, Relaxed);
                let result = Ok(ReplyRecord { xid, record });
                match p.reply {
                    ReplyTo::Sink(sink, tag) => {
                        if self.sink.as_ref().is_some_and(|s| !Arc::ptr_eq(s, &sink)) {
                            self.flush_sink();
                        }
                        self.sink.get_or_insert(sink);
                        self.sunk.push((tag, result));
                    }
                    once => once.send(result),
                }
            }
            None => {
                self.stats.unmatched.fetch_add(1, Relaxed);
            }
        }
    }

    /// Ends every pending call with a protocol error.
    fn fail_all(&mut self, reason: &str) {
        self.coalesce.clear();
        for (_, p) in self.pending.drain() {
            p.reply.send(Err(TransportError::Protocol {
                addr: self.addr.to_string(),
                reason: reason.to_string(),
            }));
        }
    }

    fn drop_connection(&mut self, reason: String) {
        self.stream = None;
        if let Ok(mut a) = self.stats.local_addr.lock() {
            *a = None;
        }
        self.outq.clear();
        self.decoder = RecordDecoder::new(self.config.max_record);
        self.last_error = reason;
        self.reconnect_at = Instant::now();
        self.backoff = Duration::from_millis(20);
        if self.config.fail_fast {
            let err = TransportError::Dropped {
                addr: self.addr.to_string(),
                reason: self.last_error.clone(),
            };
            self.fail_pending(err);
        }
    }

    /// Ends every pending call with `err` (multipath: the caller moves them).
    fn fail_pending(&mut self, err: TransportError) {
        self.coalesce.clear();
        for (_, p) in self.pending.drain() {
            p.reply.send(Err(err.clone()));
        }
    }

    async fn reconnect(&mut self) {
        match open(self.addr, &self.config).await {
            Ok(stream) => {
                if let Ok(mut a) = self.stats.local_addr.lock() {
                    *a = stream.local_addr().ok();
                }
                self.coalesce.new_socket(stream.rcvbuf());
                self.stream = Some(stream);
                self.stats.reconnects.fetch_add(1, Relaxed);
                let now = Instant::now();
                self.last_rx = now;
                // Resend everything pending, oldest XID first, with the same XIDs.
                let mut xids: Vec<u32> = self.pending.keys().copied().collect();
                xids.sort_unstable_by_key(|x| x.wrapping_sub(self.next_xid));
                for xid in xids {
                    self.resend(xid, now);
                }
                self.flush_or_drop();
            }
            Err(e) => {
                self.last_error = e.to_string();
                self.reconnect_at = Instant::now() + self.backoff;
                self.backoff = (self.backoff * 2).min(Duration::from_millis(500));
                if self.config.fail_fast {
                    self.fail_pending(e);
                }
            }
        }
    }
}

/// The next message from the setup of an RPCSEC_GSS context; never without one.
async fn gss_ctl(gss: Option<&mut GssConn>) -> Option<Ctl> {
    match gss {
        Some(g) => g.recv().await,
        None => std::future::pending().await,
    }
}

/// Completes when a sibling connection (same thread) was woken by the kernel; never
/// without siblings.
async fn siblings_woke(siblings: Option<&crate::config::Siblings>) {
    match siblings {
        Some(n) => n.woke.notified().await,
        None => std::future::pending().await,
    }
}

/// XIDs start from the clock and the pid, so a restarted client does not
/// collide with its predecessor's entries in the server's duplicate cache.
pub(crate) fn initial_xid() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (nanos ^ (nanos >> 32) ^ u64::from(std::process::id()) << 16) as u32
}

mod gss;
mod timeouts;
