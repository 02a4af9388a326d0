//! The data path: READ and WRITE of byte ranges of files, many outstanding, from a
//! plain thread, in terms that do not depend on the NFS version.
//!
//! One [`DataPath`] per user thread, all on one [`Router`] (a pool's connections): files
//! are added by handle ([`DataPath::add_file`]) and named by [`FileId`] afterwards; each
//! I/O occupies a slot (`0..depth`, like an engine's buffer slots) until its [`Outcome`]
//! comes back from [`DataPath::wait`]. An I/O larger than the transfer size goes as
//! several RPCs. Every RPC is routed by its (file, offset) ([`Route`]); one that meets a
//! dead path is re-issued on another path, one the server answers "try again later"
//! (JUKEBOX) or that finds every path down is re-sent after the client's [`Backoff`].
//! Replies land in the data path's own completion queue and are handled on the waiting
//! thread. A READ done in one RPC hands its data on as a slice of the reply record (no
//! copy); WRITE data is sent from the caller's `Bytes`, never copied.
//!
//! The wire format is the version's table ([`seam`]'s `Seam`): NFSv3 (module `v3`) or
//! NFSv4.1 (module `v41`: COMPOUNDs on slots of the data path's own lease of a session,
//! settled as replies come), handed over by the version's set-up table
//! (`version::Version::data_path`); `pnfs` places parts on data servers. This module
//! names no version: those modules depend on the table below it, never the other way
//! round.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dbio_rpc::conn::{CallBatch, CallResult, CompletionQueue, ReplyTo};

use crate::retry::Backoff;
pub use crate::router::{AtRisk, FileId, Route};
use crate::router::{ProcId, Router, Server};
use burst::{burst_pick, Burst};
pub use error::{BusyStatus, DataError, PartError};
pub(crate) use seam::{Dir, Io, PartReply, Resume, Seam};

/// How durable a WRITE must be when it completes (the file API's stability).
pub use crate::kinds::Stable as Stability;

/// Data of a completed READ.
#[derive(Clone, Debug, Default)]
pub enum ReadData {
    /// A write, or a failed read.
    #[default]
    None,
    /// The whole range in one piece (a slice of the reply record).
    One(Bytes),
    /// Several pieces `(offset from the I/O's start, data)`, in any order.
    Parts(Vec<(u32, Bytes)>),
}

/// A finished I/O.
#[derive(Debug)]
pub struct Outcome {
    pub slot: u32,
    /// Bytes moved (the whole length), or why not.
    pub result: Result<u32, DataError>,
    /// What a READ brought (also on a short read: the pieces that came).
    pub data: ReadData,
}

/// One I/O in flight on a slot; it may be split into several RPCs.
#[derive(Default)]
struct Op {
    io: Option<Io>,
    /// RPCs not yet answered.
    parts_left: u32,
    error: Option<DataError>,
    /// A WRITE's data (sent part by part, re-sent from here when re-issued).
    payload: Bytes,
    read: ReadData,
    /// Each part's (start, length) when not all are the transfer size (see `parts`).
    bounds: Vec<(u32, u32)>,
}

/// Most slots (I/Os in flight) of a data path: a slot number fits a tag.
pub const MAX_DEPTH: u32 = 1 << 16;

/// What one RPC's reply means for its I/O.
enum PartResult {
    Done,
    /// Sent again at once: the part is still in flight.
    Sent,
    /// The server asks to try again later.
    Retry,
}

/// READ and WRITE of byte ranges over a [`Router`], for one thread.
pub struct DataPath {
    router: Arc<Router>,
    queue: Arc<CompletionQueue>,
    /// The version's table, with the files in its terms (and NFSv4.1's session slots).
    files: Box<dyn Seam>,
    /// NFSv4.1: the parts waiting for a session slot.
    waiting: std::collections::VecDeque<(u32, u32, Option<usize>)>,
    /// Outcomes found outside a reply (parts failed while waiting for a slot).
    ready: Vec<Outcome>,
    /// pNFS: layouts, links to data servers.
    pnfs: Option<pnfs::PnfsPath>,
    ops: Vec<Op>,
    /// Largest READ and WRITE sent in one RPC.
    rsize: u32,
    wsize: u32,
    in_flight: u32,
    retry: Backoff,
    /// Counters of READ and WRITE.
    procs: (ProcId, ProcId),
    replies: Vec<(u64, CallResult)>,
    /// Re-issue counts per (slot, part) and when the first was asked for, kept only
    /// while a part is retried.
    retries: Vec<(u64, u32, Instant)>,
    /// Parts to re-send at a given time (after JUKEBOX, or with every path down).
    deferred: Vec<(Instant, u32, u32)>,
    /// Calls not yet handed to their connection, one batch per channel: each
    /// connection's task is sent (and woken) once per flush, not once per call.
    batches: Vec<CallBatch>,
    /// Where the calls queued since the last flush went (see [`BURST_CALLS`]).
    burst: Option<Burst>,
    /// The servers' write verifiers, to notice a restart that put writes at risk.
    verifiers: verifier::Verifiers,
}

impl DataPath {
    /// A data path with `depth` slots on `router` speaking `seam` (the version's),
    /// sending at most `rsize`/`wsize` bytes per READ/WRITE, re-sending after `retry`.
    pub(crate) fn new(
        router: Arc<Router>,
        seam: Box<dyn Seam>,
        depth: u32,
        (rsize, wsize): (u32, u32),
        retry: Backoff,
    ) -> Self {
        let depth = depth.clamp(1, MAX_DEPTH) as usize;
        let (read, write) = seam.procs();
        DataPath {
            queue: Arc::new(CompletionQueue::new()),
            files: seam,
            waiting: std::collections::VecDeque::new(),
            ready: Vec::new(),
            pnfs: None,
            ops: (0..depth).map(|_| Op::default()).collect(),
            rsize: rsize.max(1),
            wsize: wsize.max(1),
            in_flight: 0,
            retry,
            procs: (router.proc_id(read), router.proc_id(write)),
            replies: Vec::with_capacity(depth),
            retries: Vec::new(),
            deferred: Vec::new(),
            batches: (0..router.channels().len())
                .map(|_| CallBatch::with_capacity(depth))
                .collect(),
            burst: None,
            verifiers: verifier::Verifiers::default(),
            router,
        }
    }

    /// Adds a file by its handle (as the server gave it); `None` if the handle is not
    /// one of this protocol's.
    pub fn add_file(&mut self, handle: &[u8]) -> Option<FileId> {
        if !self.files.add_file(handle) {
            return None;
        }
        if let (Some(p), Some(fh)) = (&mut self.pnfs, crate::proto::nfs4::Fh4::new(handle)) {
            p.add_file(fh);
        }
        Some(FileId(self.files.files() as u32 - 1))
    }

    /// NFSv4.1: the stateid `file`'s I/O carries (an OPEN's); anonymous until set.
    /// False for an NFSv3 data path or an unknown file.
    pub fn set_stateid(&mut self, file: FileId, stateid: crate::proto::nfs4::Stateid) -> bool {
        self.files.set_stateid(file, stateid)
    }

    /// NFSv4.1: session slots this data path holds and can still use.
    pub fn session_slots(&self) -> Option<u32> {
        self.files.usable()
    }

    pub fn depth(&self) -> u32 {
        self.ops.len() as u32
    }

    /// Largest READ and WRITE sent in one RPC: an I/O within them is never split.
    pub fn transfer_sizes(&self) -> (u32, u32) {
        (self.rsize, self.wsize)
    }

    /// I/Os submitted and not yet returned by [`DataPath::wait`].
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Reads `len` bytes at `offset` of `file` on `slot`.
    pub fn read(
        &mut self,
        slot: u32,
        file: FileId,
        offset: u64,
        len: u32,
    ) -> Result<(), DataError> {
        let io = Io {
            slot,
            file,
            offset,
            len,
            dir: Dir::Read,
            stable: Stability::Unstable,
        };
        self.start(slot, io, Bytes::new())
    }

    /// Writes `data` at `offset` of `file` on `slot`.
    pub fn write(
        &mut self,
        slot: u32,
        file: FileId,
        offset: u64,
        data: Bytes,
        stable: Stability,
    ) -> Result<(), DataError> {
        let len = u32::try_from(data.len())
            .map_err(|_| DataError::BadRequest(format!("{} bytes in one I/O", data.len())))?;
        let io = Io {
            slot,
            file,
            offset,
            len,
            dir: Dir::Write,
            stable,
        };
        self.start(slot, io, data)
    }

    fn start(&mut self, slot: u32, io: Io, payload: Bytes) -> Result<(), DataError> {
        let depth = self.ops.len();
        let nfiles = self.files.files();
        let Some(op) = self.ops.get(slot as usize) else {
            return Err(DataError::BadRequest(format!(
                "slot {slot} out of range (depth {depth})"
            )));
        };
        if op.io.is_some() {
            return Err(DataError::Busy);
        }
        if io.file.0 as usize >= nfiles {
            return Err(DataError::BadRequest(format!(
                "file {} of {nfiles}",
                io.file.0
            )));
        }
        let parts = self.plan_parts(&io);
        let op = &mut self.ops[slot as usize];
        op.io = Some(io);
        op.parts_left = parts;
        op.error = None;
        op.payload = payload;
        op.read = ReadData::None;
        self.in_flight += 1;
        for part in 0..parts {
            self.send_part(slot, part, None);
        }
        Ok(())
    }

    /// Ends a batch of submissions: hands the calls to their connections, unless the
    /// connections move only while someone waits (then [`DataPath::wait`] hands them
    /// over from inside the runtime: cheaper, same start time).
    pub fn commit(&mut self) {
        if !self.router.runs_on_callers() {
            self.flush();
        }
    }

    /// Hands every queued call to its connection.
    pub fn flush(&mut self) {
        self.burst = None;
        for (ch, batch) in self.batches.iter_mut().enumerate() {
            if !batch.is_empty() {
                self.router.submit_batch(ch, batch);
            }
        }
    }

    fn part_size(&self, dir: Dir) -> u32 {
        match dir {
            Dir::Read => self.rsize,
            Dir::Write => self.wsize,
        }
    }

    /// Queues part `part` of the I/O on `slot`, on channel `ch` or the one its route
    /// picks; with NFSv4.1 it waits for a free session slot first.
    fn send_part(&mut self, slot: u32, part: u32, ch: Option<usize>) {
        self.send_part_on(slot, part, ch, None);
    }

    /// [`DataPath::send_part`], NFSv4.1: re-using session slot `again` (index in the
    /// lease) with its sequence id when it is the re-send of a request that got no reply.
    fn send_part_on(&mut self, slot: u32, part: u32, ch: Option<usize>, again: Option<u16>) {
        let Some(io) = self.ops[slot as usize].io else {
            return;
        };
        let op = &self.ops[slot as usize];
        let (start, len) = self.span(&io, part);
        let offset = io.offset + u64::from(start);
        let router = &self.router;
        let data = match io.dir {
            Dir::Read => Bytes::new(),
            Dir::Write => op.payload.slice(start as usize..(start + len) as usize),
        };
        let proc_ = match io.dir {
            Dir::Read => self.procs.0,
            Dir::Write => self.procs.1,
        };
        if let (None, Some(p)) = (ch, &mut self.pnfs) {
            // pNFS: to the data server the file's layout names, if any.
            let part_io = pnfs::Part {
                slot,
                part,
                file: io.file,
                dir: io.dir,
                stable: io.stable,
                offset,
                len,
            };
            let to = (&self.queue, &mut self.batches);
            match p.queue(router, to, part_io, &data, proc_) {
                pnfs::Queued::Sent => return,
                pnfs::Queued::NoSlot => {
                    self.waiting.push_back((slot, part, ch));
                    return;
                }
                pnfs::Queued::ThroughMds => {}
            }
        }
        let Some((call, sslot)) = self.files.call(router, &io, (offset, len), data, again) else {
            self.waiting.push_back((slot, part, ch));
            return;
        };
        if let Some(p) = &mut self.pnfs {
            p.count(io.file, None, len);
        }
        let ch = ch.unwrap_or_else(|| {
            burst_pick(&mut self.burst, router, Route::new(io.file, offset), len)
        });
        let reply = ReplyTo::Sink(self.queue.clone(), tag(slot, part, sslot, ch));
        router.reserve(ch, proc_);
        let depth = self.ops.len() as u32;
        batch_for(&mut self.batches, ch, depth).push(call, reply);
    }

    /// NFSv4.1: sends parts that waited for a session slot, oldest first, while slots
    /// are free.
    fn send_waiting(&mut self) {
        // Each goes out or back to the end of the queue (its server has no free slot).
        for _ in 0..self.waiting.len() {
            let Some((slot, part, ch)) = self.waiting.pop_front() else {
                break;
            };
            self.send_part(slot, part, ch);
        }
    }

    /// Waits until at least `min` I/Os (at most those in flight) have finished or
    /// `timeout` has passed, appending them to `out`; returns how many. Runs inside the
    /// router's runtime (with a pool that has no threads of its own, this thread moves
    /// the connections meanwhile).
    pub async fn wait(&mut self, min: usize, timeout: Duration, out: &mut Vec<Outcome>) -> usize {
        let deadline = Instant::now() + timeout;
        let min = min.min(self.in_flight as usize);
        let mut got = 0;
        loop {
            let next_due = self.send_due().into_iter().chain(self.resume()).min();
            // Calls not committed yet, re-issues and re-sends go out before waiting.
            self.flush();
            let until = next_due.map_or(deadline, |d| d.min(deadline));
            let left = until.saturating_duration_since(Instant::now());
            // Each I/O needs at least one reply: waiting for `min - got` replies never
            // waits past the I/Os asked for.
            let want = min.saturating_sub(got);
            let mut replies = std::mem::take(&mut self.replies);
            self.queue.wait_async(want, left, &mut replies).await;
            for (t, r) in replies.drain(..) {
                if let Some(o) = self.on_reply(t, r) {
                    out.push(o);
                    got += 1;
                }
            }
            self.replies = replies;
            if !self.waiting.is_empty() {
                self.send_waiting();
            }
            for o in self.ready.drain(..) {
                out.push(o);
                got += 1;
            }
            if got >= min || Instant::now() >= deadline {
                break;
            }
        }
        // Re-issues made while handling these replies.
        self.flush();
        got
    }

    /// Handles one RPC reply; returns the outcome when it was the last part of its I/O.
    fn on_reply(&mut self, t: u64, result: CallResult) -> Option<Outcome> {
        let (slot, part, sslot, ch) = untag(t);
        if self.pnfs.is_some() {
            if let Some(ds) = self.router.data_server_of(ch) {
                return self.on_data_server_reply(t, ch, ds, result);
            }
        }
        self.router.done(ch);
        let Some(io) = self.ops.get(slot as usize).and_then(|op| op.io) else {
            self.files.lost(sslot);
            return None;
        };
        let outcome = match result {
            Ok(reply) => {
                self.router.path_answered(ch);
                self.part_reply(slot, part, sslot, ch, io, reply.record)
            }
            Err(e) => {
                // The path is in trouble: re-issue on another path if one is up. An
                // NFSv4.1 request goes again on its session slot with the same sequence
                // id: whether the server ran it is unknown, and its reply cache tells.
                let reissue = self.may_reissue(t);
                let other = if reissue {
                    self.router.path_failed(ch, &e.to_string())
                } else {
                    None
                };
                if let Some(other) = other {
                    let again = self.files.busy(sslot).then_some(sslot);
                    self.send_part_on(slot, part, Some(other), again);
                    return None;
                }
                // Not re-sent on it now: the slot's state on the server stays unknown,
                // so it is not used again.
                self.files.lost(sslot);
                if self.files.usable() == Some(0) {
                    let why = PartError::NoSlot(e);
                    self.fail_waiting(&why);
                    let e = self.io_error(io, part, why);
                    return self.end_part(slot, io, Err(e));
                }
                if reissue && self.router.opened_paths() > 1 {
                    // Every path is down: wait for the probe to bring one back.
                    self.defer(t, slot, part);
                    return None;
                }
                Err(self.io_error(io, part, PartError::Transport(e)))
            }
        };
        self.settle(t, io, outcome)
    }

    /// Acts on what a reply meant for its part: done, re-sent, to be re-sent after the
    /// back-off, or failed; returns the I/O's outcome when it was its last part.
    fn settle(
        &mut self,
        t: u64,
        io: Io,
        outcome: Result<PartResult, DataError>,
    ) -> Option<Outcome> {
        let (slot, part, _, _) = untag(t);
        match outcome {
            Ok(PartResult::Sent) => None,
            Ok(PartResult::Done) => self.end_part(slot, io, Ok(())),
            Ok(PartResult::Retry) => {
                self.defer(t, slot, part);
                None
            }
            Err(e) => self.end_part(slot, io, Err(e)),
        }
    }

    /// One RPC of the I/O `io` on `slot` ended; returns the outcome when it was the last.
    fn end_part(&mut self, slot: u32, io: Io, result: Result<(), DataError>) -> Option<Outcome> {
        let op = &mut self.ops[slot as usize];
        if let Err(e) = result {
            op.error.get_or_insert(e);
        }
        op.parts_left -= 1;
        if op.parts_left > 0 {
            return None;
        }
        let result = match op.error.take() {
            Some(e) => Err(e),
            None => Ok(io.len),
        };
        op.io = None;
        op.payload = Bytes::new();
        let data = std::mem::take(&mut op.read);
        self.in_flight -= 1;
        if !self.retries.is_empty() {
            self.retries.retain(|(k, ..)| (k >> 48) as u32 != slot);
        }
        Some(Outcome { slot, result, data })
    }

    /// Fails every part waiting for a session slot (none is left), keeping the
    /// outcomes for [`DataPath::wait`].
    fn fail_waiting(&mut self, why: &PartError) {
        while let Some((slot, part, _)) = self.waiting.pop_front() {
            let Some(io) = self.ops.get(slot as usize).and_then(|op| op.io) else {
                continue;
            };
            let e = self.io_error(io, part, why.clone());
            if let Some(o) = self.end_part(slot, io, Err(e)) {
                self.ready.push(o);
            }
        }
    }

    /// Decodes a READ or WRITE reply for one part.
    fn part_reply(
        &mut self,
        slot: u32,
        part: u32,
        sslot: u16,
        ch: usize,
        io: Io,
        record: Bytes,
    ) -> Result<PartResult, DataError> {
        let (_, want) = self.span(&io, part);
        let decoded = self.files.decode(sslot, io.dir, record, want);
        if let Ok(reply) = &decoded {
            self.check_verifier(ch, Server::Opened, io, reply);
        }
        self.apply(slot, part, io, decoded)
    }

    /// What a decoded reply means for part `part` of the I/O on `slot`.
    fn apply(
        &mut self,
        slot: u32,
        part: u32,
        io: Io,
        decoded: Result<PartReply, PartError>,
    ) -> Result<PartResult, DataError> {
        let (start, want) = self.span(&io, part);
        let procs = self.router.procs();
        match decoded {
            Err(why) => Err(self.io_error(io, part, why)),
            Ok(PartReply::Busy(status)) => {
                let t = tag(slot, part, 0, 0);
                if self.may_reissue_after(t, status) {
                    Ok(PartResult::Retry)
                } else {
                    let resends = self.retry_count(t);
                    Err(self.io_error(io, part, PartError::Busy { status, resends }))
                }
            }
            Ok(PartReply::Resend) => {
                let t = tag(slot, part, 0, 0);
                if self.may_reissue(t) {
                    self.send_part(slot, part, None);
                    Ok(PartResult::Sent)
                } else {
                    Err(self.io_error(
                        io,
                        part,
                        PartError::Malformed("NFS4ERR_RETRY_UNCACHED_REP to every re-send".into()),
                    ))
                }
            }
            Ok(PartReply::Lost(status)) => self.lost_part(slot, part, io, status),
            Ok(PartReply::Read(data)) => {
                let got = data.len() as u32;
                procs.read_bytes.fetch_add(u64::from(got), Relaxed);
                let op = &mut self.ops[slot as usize];
                if want == io.len {
                    op.read = ReadData::One(data);
                } else if got > 0 {
                    match &mut op.read {
                        ReadData::Parts(v) => v.push((start, data)),
                        r => *r = ReadData::Parts(vec![(start, data)]),
                    }
                }
                if got < want {
                    return Err(DataError::Short { done: start + got });
                }
                Ok(PartResult::Done)
            }
            Ok(PartReply::Written(count, ..)) => {
                procs.write_bytes.fetch_add(u64::from(count), Relaxed);
                if count < want {
                    return Err(DataError::Short {
                        done: start + count,
                    });
                }
                Ok(PartResult::Done)
            }
        }
    }

    /// Part `part` of the I/O on `slot` found the state lost (`status`): it waits for
    /// the recovery, or fails once it has been re-sent as often as the back-off allows.
    fn lost_part(
        &mut self,
        slot: u32,
        part: u32,
        io: Io,
        status: crate::proto::nfs4::Nfsstat4,
    ) -> Result<PartResult, DataError> {
        if !self.may_reissue(tag(slot, part, 0, 0)) {
            let why = "lost again after every recovery".into();
            return Err(self.io_error(io, part, PartError::Unrecovered { status, why }));
        }
        match self.files.park(slot, part, status) {
            Ok(()) => Ok(PartResult::Sent),
            Err(why) => Err(self.io_error(io, part, why)),
        }
    }

    /// While a recovery runs: once it is done (see `Seam::resume`), sends the parked
    /// parts again, or fails them if the recovery failed. Returns when to look again.
    /// Called before each wait for replies, which is also when pNFS I/O counts are
    /// handed on.
    fn resume(&mut self) -> Option<Instant> {
        if let Some(p) = &mut self.pnfs {
            p.publish();
        }
        match self.files.resume() {
            Resume::Idle => None,
            Resume::Later(at) => Some(at),
            Resume::Recovered(parked) => {
                for (slot, part) in parked {
                    self.send_part(slot, part, None);
                }
                self.send_waiting();
                None
            }
            Resume::Failed(parked, why) => {
                for (slot, part) in parked {
                    let Some(io) = self.ops.get(slot as usize).and_then(|op| op.io) else {
                        continue;
                    };
                    let e = self.io_error(io, part, why.clone());
                    if let Some(o) = self.end_part(slot, io, Err(e)) {
                        self.ready.push(o);
                    }
                }
                self.fail_waiting(&why);
                None
            }
        }
    }

    /// A WRITE reply's verifier, against the server's earlier ones for the file: a
    /// restart that put UNSTABLE writes at risk is said on the channel's path, once,
    /// and counted for the run's result.
    fn check_verifier(&mut self, ch: usize, server: Server, io: Io, reply: &PartReply) {
        let PartReply::Written(count, how, verifier) = *reply else {
            return;
        };
        let Some(risk) = self
            .verifiers
            .wrote(server, io.file.0, count, how, verifier)
        else {
            return;
        };
        self.router.unstable_at_risk(risk);
        self.router.note(
            ch,
            format!(
                "write verifier changed (the server restarted): {} writes ({} bytes) of a \
                 file it had answered UNSTABLE, never committed, may be lost; \
                 dbio keeps no copy to send again (sync=1 writes FILE_SYNC)",
                risk.writes, risk.bytes
            ),
        );
    }

    fn io_error(&self, io: Io, part: u32, cause: PartError) -> DataError {
        DataError::Io {
            offset: io.offset + u64::from(self.span(&io, part).0),
            cause,
        }
    }
}

/// The batch of channel `ch` (channels of data servers are added while the data path
/// runs).
fn batch_for(batches: &mut Vec<CallBatch>, ch: usize, depth: u32) -> &mut CallBatch {
    if batches.len() <= ch {
        batches.resize_with(ch + 1, || CallBatch::with_capacity(depth as usize));
    }
    &mut batches[ch]
}

/// Bursts: the calls of one flush on one connection.
mod burst;
/// Re-sends: parts deferred by the back-off, and how often each was re-issued.
mod resend;
/// Tags: which slot, part, session slot and channel a reply belongs to.
mod tag;
use tag::{tag, untag};
mod error;
/// Parts of an I/O: cut at the transfer size, and at stripe units on striped files.
mod parts;
/// pNFS: placing parts on data servers.
mod pnfs;
/// The table a version's data path speaks, and what both sides share.
mod seam;
/// NFSv3's table of the data path.
pub(crate) mod v3;
/// NFSv4.1's table of the data path.
pub(crate) mod v41;
/// Write verifiers: a server restart that put UNSTABLE writes at risk.
mod verifier;

#[cfg(test)]
mod tests;
