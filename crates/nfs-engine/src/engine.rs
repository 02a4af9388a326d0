//! The NFS engine: one per user thread, all sharing the run's [`NfsTarget`]
//! (its connection pool). READ data is copied once, from the reply record
//! into the slot; WRITE data is copied once, from the slot into the call.
//! Replies land in this engine's own completion queue, so `reap` blocks on
//! a condition variable and never spins.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dbio_engine::{
    AlignedBuf, Capabilities, Completion, Engine, EngineConfig, EngineError, IoDir, IoRequest, Slot,
};
use dbio_nfs::channel::Results;
use dbio_nfs::client::{is_jukebox, read_reply_hint};
use dbio_nfs::proto::nfs3::{decode_res, FileHandle, Proc, ReadArgs, ReadOk, StableHow, WriteOk};
use dbio_nfs::proto::nfs3::{Data, WriteArgs};
use dbio_nfs::retry::Backoff;
use dbio_nfs::router::{FileId, ProcId, Route};
use dbio_rpc::conn::{CallBatch, CallResult, CompletionQueue, ReplyTo};
use dbio_xdr::XdrEncode;

use crate::NfsTarget;

/// One I/O in flight on a slot; it may be split into several RPCs.
#[derive(Default)]
struct SlotIo {
    req: Option<IoRequest>,
    /// RPCs not yet answered.
    parts_left: u32,
    error: Option<EngineError>,
}

pub struct NfsEngine {
    target: Arc<NfsTarget>,
    queue: Arc<CompletionQueue>,
    bufs: Vec<AlignedBuf>,
    /// Data of a completed one-RPC read, still in the receive buffer: copied into the
    /// slot's buffer only when someone asks for it (most runs never look at read data).
    read_data: Vec<Option<Bytes>>,
    slots: Vec<SlotIo>,
    handles: Vec<(FileHandle, String)>,
    /// Largest READ and WRITE sent in one RPC.
    rsize: u32,
    wsize: u32,
    in_flight: u32,
    /// Counters of READ and WRITE.
    procs: (ProcId, ProcId),
    /// Re-issues of a part (JUKEBOX, every path down): the client's policy.
    retry: Backoff,
    replies: Vec<(u64, CallResult)>,
    /// Re-issue counts per (slot, part), kept only while a part is retried.
    retries: Vec<(u64, u32)>,
    /// Parts to re-send at a given time (after JUKEBOX).
    deferred: Vec<(Instant, Slot, u32)>,
    /// Calls submitted and not yet handed to their connection, one batch
    /// per channel: each connection's task is sent (and woken) once per
    /// commit, not once per call.
    batches: Vec<CallBatch>,
}

/// Tag of one RPC: slot, part of the slot's I/O, channel it went on.
fn tag(slot: Slot, part: u32, ch: usize) -> u64 {
    u64::from(slot) << 32 | u64::from(part & 0xffff) << 16 | (ch as u64 & 0xffff)
}

fn untag(t: u64) -> (Slot, u32, usize) {
    (
        (t >> 32) as Slot,
        (t >> 16 & 0xffff) as u32,
        (t & 0xffff) as usize,
    )
}

impl NfsEngine {
    pub fn open(target: Arc<NfsTarget>, cfg: &EngineConfig) -> Result<NfsEngine, EngineError> {
        let mut handles = Vec::with_capacity(cfg.files.len());
        for f in &cfg.files {
            let rel = f.path.to_string_lossy().into_owned();
            let fh = target.handle(&rel).map_err(|e| EngineError::Open {
                path: target.display_path(&rel),
                source: std::io::Error::other(e.to_string()),
            })?;
            handles.push((fh, rel));
        }
        let depth = cfg.depth.max(1);
        let (rsize, wsize) = target.transfer_sizes();
        Ok(NfsEngine {
            queue: Arc::new(CompletionQueue::new()),
            bufs: (0..depth)
                .map(|_| AlignedBuf::new(cfg.max_io.max(1) as usize))
                .collect(),
            read_data: vec![None; depth as usize],
            slots: (0..depth).map(|_| SlotIo::default()).collect(),
            handles,
            rsize,
            wsize,
            in_flight: 0,
            procs: (
                target.pool.router().proc_id(Proc::Read.name()),
                target.pool.router().proc_id(Proc::Write.name()),
            ),
            retry: target.pool.client().options().retry,
            replies: Vec::with_capacity(depth as usize),
            retries: Vec::new(),
            deferred: Vec::new(),
            batches: (0..target.pool.channels().len())
                .map(|_| CallBatch::with_capacity(depth as usize))
                .collect(),
            target,
        })
    }

    fn part_size(&self, dir: IoDir) -> u32 {
        match dir {
            IoDir::Read => self.rsize,
            IoDir::Write => self.wsize,
        }
    }

    /// Sends part `part` of the I/O on `slot`, on channel `ch` or the best one.
    fn send_part(&mut self, slot: Slot, part: u32, ch: Option<usize>) {
        let Some(req) = self.slots[slot as usize].req else {
            return;
        };
        let size = self.part_size(req.dir);
        let start = part * size;
        let len = size.min(req.len - start);
        let offset = req.offset + u64::from(start);
        let fh = self.handles[req.file as usize].0;
        let pool = self.target.pool.router();
        let ch = ch.unwrap_or_else(|| pool.pick(Route::new(FileId(req.file), offset), None));
        let reply = ReplyTo::Sink(self.queue.clone(), tag(slot, part, ch));
        let (proc_, call) = match req.dir {
            IoDir::Read => {
                let mut call = pool.encode(
                    Proc::Read as u32,
                    |b| {
                        ReadArgs {
                            file: fh,
                            offset,
                            count: len,
                        }
                        .encode(b)
                    },
                    Bytes::new(),
                );
                call.reply_hint = read_reply_hint(len);
                (self.procs.0, call)
            }
            IoDir::Write => {
                let range = start as usize..(start + len) as usize;
                let data = Bytes::copy_from_slice(&self.bufs[slot as usize].as_slice()[range]);
                let stable = if req.sync {
                    StableHow::FileSync
                } else {
                    StableHow::Unstable
                };
                let call = pool.encode(
                    Proc::Write as u32,
                    |b| {
                        WriteArgs {
                            file: fh,
                            offset,
                            stable,
                            data: Data(&data[..]),
                        }
                        .encode_head(b)
                    },
                    data.clone(),
                );
                (self.procs.1, call)
            }
        };
        pool.reserve(ch, proc_);
        self.batches[ch].push(call, reply);
    }

    /// Hands every queued call to its connection.
    fn flush(&mut self) {
        let pool = self.target.pool.router();
        for (ch, batch) in self.batches.iter_mut().enumerate() {
            if !batch.is_empty() {
                pool.submit_batch(ch, batch);
            }
        }
    }

    /// Handles one RPC reply; returns a finished completion when it was
    /// the last part of its slot's I/O.
    fn on_reply(&mut self, t: u64, result: CallResult) -> Option<Completion> {
        let (slot, part, ch) = untag(t);
        let target = self.target.clone();
        let pool = target.pool.router();
        pool.done(ch);
        let req = self.slots.get(slot as usize)?.req?;
        let outcome = match result {
            Ok(reply) => {
                pool.path_answered(ch);
                self.part_reply(slot, part, req, reply.record)
            }
            Err(e) => {
                // The path is in trouble: re-issue on another path if one is up.
                if self.may_reissue(t) {
                    if let Some(other) = pool.path_failed(ch, &e.to_string()) {
                        self.send_part(slot, part, Some(other));
                        return None;
                    }
                    if pool.paths().len() > 1 {
                        // Every path is down: wait for the probe to bring
                        // one back, as for JUKEBOX.
                        let delay = self.retry.delay(self.retry_count(t).saturating_sub(1));
                        self.deferred.push((Instant::now() + delay, slot, part));
                        return None;
                    }
                }
                Err(self.io_error(req, part, e.to_string()))
            }
        };
        let s = &mut self.slots[slot as usize];
        match outcome {
            Ok(true) => {}
            Ok(false) => {
                // JUKEBOX: the server asks to try again later.
                let delay = self.retry.delay(self.retry_count(t).saturating_sub(1));
                self.deferred.push((Instant::now() + delay, slot, part));
                return None;
            }
            Err(e) => {
                if s.error.is_none() {
                    s.error = Some(e);
                }
            }
        }
        s.parts_left -= 1;
        if s.parts_left > 0 {
            return None;
        }
        let result = match s.error.take() {
            Some(e) => Err(e),
            None => Ok(req.len),
        };
        s.req = None;
        self.in_flight -= 1;
        if !self.retries.is_empty() {
            self.retries.retain(|(k, _)| (k >> 32) as Slot != slot);
        }
        Some(Completion {
            tag: req.tag,
            slot,
            result,
        })
    }

    /// Re-issues so far of the RPC tagged `t`.
    fn retry_count(&self, t: u64) -> u32 {
        let key = t & !0xffff;
        self.retries
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(0, |(_, n)| *n)
    }

    /// Re-sends deferred parts that are due; returns when the next one is.
    fn send_due(&mut self) -> Option<Instant> {
        if self.deferred.is_empty() {
            return None;
        }
        let now = Instant::now();
        let mut i = 0;
        while i < self.deferred.len() {
            if self.deferred[i].0 <= now {
                let (_, slot, part) = self.deferred.swap_remove(i);
                self.send_part(slot, part, None);
            } else {
                i += 1;
            }
        }
        self.deferred.iter().map(|d| d.0).min()
    }

    /// Counts a re-issue of the RPC tagged `t`; false once it has had enough.
    fn may_reissue(&mut self, t: u64) -> bool {
        let key = t & !0xffff;
        match self.retries.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) if !self.retry.allows(*n) => false,
            Some((_, n)) => {
                *n += 1;
                true
            }
            None if !self.retry.allows(0) => false,
            None => {
                self.retries.push((key, 1));
                true
            }
        }
    }

    /// Decodes a READ or WRITE reply for one part; Ok(false) means "retry".
    fn part_reply(
        &mut self,
        slot: Slot,
        part: u32,
        req: IoRequest,
        record: Bytes,
    ) -> Result<bool, EngineError> {
        let res = Results::from_record(record).map_err(|e| self.io_error(req, part, e))?;
        if is_jukebox(res.bytes()) {
            let t = tag(slot, part, 0);
            return if self.may_reissue(t) {
                Ok(false)
            } else {
                Err(self.io_error(req, part, "server busy (NFS3ERR_JUKEBOX)"))
            };
        }
        let size = self.part_size(req.dir);
        let start = part * size;
        let want = size.min(req.len - start);
        let procs = self.target.pool.procs();
        match req.dir {
            IoDir::Read => {
                let ok = match decode_res::<ReadOk>(res.bytes()) {
                    Ok(Ok(ok)) => ok,
                    Ok(Err(status)) => return Err(self.io_error(req, part, status)),
                    Err(e) => return Err(self.io_error(req, part, e)),
                };
                let got = ok.data.0.len().min(want as usize);
                procs
                    .read_bytes
                    .fetch_add(got as u64, std::sync::atomic::Ordering::Relaxed);
                if want == req.len && got == want as usize {
                    self.read_data[slot as usize] = Some(res.share(ok.data.0));
                } else {
                    let dst = &mut self.bufs[slot as usize].as_mut_slice()[start as usize..];
                    dst[..got].copy_from_slice(&ok.data.0[..got]);
                }
                if got < want as usize {
                    return Err(self.short(req, start + got as u32));
                }
            }
            IoDir::Write => {
                let ok = match decode_res::<WriteOk>(res.bytes()) {
                    Ok(Ok(ok)) => ok,
                    Ok(Err(status)) => return Err(self.io_error(req, part, status)),
                    Err(e) => return Err(self.io_error(req, part, e)),
                };
                procs
                    .write_bytes
                    .fetch_add(u64::from(ok.count), std::sync::atomic::Ordering::Relaxed);
                if ok.count < want {
                    return Err(self.short(req, start + ok.count));
                }
            }
        }
        Ok(true)
    }

    fn op(req: IoRequest) -> &'static str {
        match req.dir {
            IoDir::Read => "NFS READ",
            IoDir::Write => "NFS WRITE",
        }
    }

    fn io_error(&self, req: IoRequest, part: u32, why: impl ToString) -> EngineError {
        let offset = req.offset + u64::from(part * self.part_size(req.dir));
        EngineError::Io {
            op: Self::op(req),
            path: self.target.display_path(&self.handles[req.file as usize].1),
            offset,
            source: std::io::Error::other(why.to_string()),
        }
    }

    fn short(&self, req: IoRequest, done: u32) -> EngineError {
        EngineError::Short {
            op: Self::op(req),
            path: self.target.display_path(&self.handles[req.file as usize].1),
            offset: req.offset,
            done,
            want: req.len,
        }
    }
}

impl Engine for NfsEngine {
    fn name(&self) -> &'static str {
        "nfs"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            async_io: true,
            no_data: false,
        }
    }

    fn depth(&self) -> u32 {
        self.slots.len() as u32
    }

    fn buffer(&mut self, slot: Slot) -> &mut [u8] {
        let buf = self.bufs[slot as usize].as_mut_slice();
        if let Some(data) = self.read_data[slot as usize].take() {
            buf[..data.len()].copy_from_slice(&data);
        }
        buf
    }

    fn submit(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let depth = self.slots.len() as u32;
        let Some(s) = self.slots.get(req.slot as usize) else {
            return Err(EngineError::Other(format!(
                "slot {} out of range (depth {depth})",
                req.slot
            )));
        };
        if s.req.is_some() {
            return Err(EngineError::Busy(depth));
        }
        if req.file as usize >= self.handles.len() || req.len as usize > self.bufs[0].len() {
            return Err(EngineError::Other(format!(
                "bad request: file {} of {}, {} bytes for {}-byte slots",
                req.file,
                self.handles.len(),
                req.len,
                self.bufs[0].len()
            )));
        }
        let parts = req.len.div_ceil(self.part_size(req.dir)).max(1);
        self.read_data[req.slot as usize] = None;
        self.slots[req.slot as usize] = SlotIo {
            req: Some(req),
            parts_left: parts,
            error: None,
        };
        self.in_flight += 1;
        for part in 0..parts {
            self.send_part(req.slot, part, None);
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), EngineError> {
        // When waiting callers run the connections, nothing moves before the next reap,
        // which hands the calls over from inside the runtime: cheaper, same start time.
        if !self.target.pool.runs_on_callers() {
            self.flush();
        }
        Ok(())
    }

    fn reap(
        &mut self,
        min: usize,
        timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        // All of it inside the pool's runtime: with a pool that has no threads of its own,
        // handing calls over wakes the connection tasks on this thread, without a system
        // call, and this thread runs them while it waits.
        let target = self.target.clone();
        target.pool.block_on(self.reap_in_pool(min, timeout, out))
    }

    fn in_flight(&self) -> u32 {
        self.in_flight
    }
}

impl NfsEngine {
    async fn reap_in_pool(
        &mut self,
        min: usize,
        timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        let deadline = Instant::now() + timeout;
        let min = min.min(self.in_flight as usize);
        let mut got = 0;
        loop {
            let next_due = self.send_due();
            // Calls not committed yet, re-issues and re-sends go out before waiting.
            self.flush();
            let now = Instant::now();
            let until = next_due.map_or(deadline, |d| d.min(deadline));
            let left = until.saturating_duration_since(now);
            // Each I/O needs at least one reply: waiting for `min - got`
            // replies never waits past the I/Os asked for.
            let want = min.saturating_sub(got);
            let mut replies = std::mem::take(&mut self.replies);
            self.queue.wait_async(want, left, &mut replies).await;
            for (t, r) in replies.drain(..) {
                if let Some(c) = self.on_reply(t, r) {
                    out.push(c);
                    got += 1;
                }
            }
            self.replies = replies;
            if got >= min || Instant::now() >= deadline {
                break;
            }
        }
        // Re-issues made while handling these replies.
        self.flush();
        Ok(got)
    }
}
