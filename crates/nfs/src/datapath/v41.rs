//! NFSv4.1's table for a data path ([`Files`], a [`Seam`]): each READ or WRITE is a
//! COMPOUND of SEQUENCE, PUTFH and the op, on a slot of the data path's own
//! [`SlotLease`]; its reply settles the slot here. pNFS data servers' links use the
//! same [`Wire`] on slots of their own sessions. A part that finds no free slot waits
//! in the data path until a reply frees one (the lease is the in-flight limit the
//! server granted).
//!
//! A reply that says the session or the client's state is lost parks its part: the
//! mount's state manager recovers (one recovery for every caller), then, once no
//! request of the old lease is out, the data path leases slots of the new session, its
//! files carry their opens' new stateids, and the parked parts go again.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use dbio_rpc::conn::CallBuf;

use super::error::{BusyStatus, PartError};
use super::seam::{Dir, Io, PartReply, Resume, Seam, SlotIndex};
use crate::channel::Results;
use crate::error::NfsError;
use crate::kinds::LongRead;
use crate::kinds::Stable as Stability;
use crate::proto::nfs4::{
    decode_io_reply, Fh4, IoCompound, IoOp, IoResult, Nfsstat4, StableHow, Stateid, PROC_COMPOUND,
};
use crate::router::{FileId, Router};
use crate::v41::sequence::{settle_parts, Settled};
use crate::v41::{SlotLease, StateManager};

/// How often a data path looks whether the recovery it waits for is done.
const RECOVERY_POLL: Duration = Duration::from_millis(5);

/// A recovery's outcome for one data path: the slots it leases from then on.
type Recovered = Arc<Mutex<Option<Result<SlotLease, NfsError>>>>;

pub const READ: &str = "READ4";

/// Bytes a successful READ reply brings beyond its data, at least: record mark (4), RPC
/// reply header with an empty verifier (24), COMPOUND status, tag (empty, as sent) and
/// result count (12), SEQUENCE's result (44), PUTFH's (8), READ's op, status, eof and
/// data length (16).
const READ_REPLY_OVERHEAD: u32 = 108;

/// Bytes a successful READ reply of `len` bytes brings at least: the hint that lets a
/// connection gather several replies per wake-up. It must not exceed the reply: a
/// connection holding all of its replies (it has siblings) would otherwise wait for
/// bytes that never come, until its fallback timer (2 ms) per gathering.
pub(crate) fn read_reply_hint(len: u32) -> u32 {
    len.saturating_add(READ_REPLY_OVERHEAD)
}
pub const WRITE: &str = "WRITE4";

/// A file of the data path: its handle and the stateid its I/O carries.
#[derive(Clone, Copy, Debug)]
pub struct File {
    pub fh: Fh4,
    pub stateid: Stateid,
}

impl File {
    /// A file by handle, with the anonymous stateid until one is set.
    pub fn new(handle: &[u8]) -> Option<File> {
        Some(File {
            fh: Fh4::new(handle)?,
            stateid: Stateid::ANONYMOUS,
        })
    }
}

/// The v4.1 side of a data path: its slots, and the recovery of its session.
pub struct Wire {
    lease: SlotLease,
    /// Who recovers lost state (none: a lost session fails the I/O).
    state: Option<Arc<StateManager>>,
    /// Parts whose reply said the state is lost: (slot, part), and why.
    parked: Vec<(u32, u32)>,
    lost: Option<Nfsstat4>,
    /// The recovery under way, once the first part was parked.
    recovered: Option<Recovered>,
    /// When the last reply that settled a slot came: I/O waits from then on. Taken
    /// once per wait for replies (`Files::resume`), not per reply: a clock read
    /// for every reply was a tenth of decoding it.
    answered_at: Instant,
    /// A reply settled a slot since `answered_at` was taken.
    answered: bool,
}

impl Wire {
    pub fn new(lease: SlotLease) -> Wire {
        Wire {
            lease,
            state: None,
            parked: Vec::new(),
            lost: None,
            recovered: None,
            answered_at: Instant::now(),
            answered: false,
        }
    }

    /// When the last reply that settled a slot came (as of the last wait for replies).
    fn answered_at(&mut self) -> Instant {
        if std::mem::take(&mut self.answered) {
            self.answered_at = Instant::now();
        }
        self.answered_at
    }

    /// A free slot (index in the lease), or `None`: the part must wait for a reply
    /// (or, with the session lost, for its recovery).
    pub fn take(&mut self) -> Option<(SlotIndex, u32, u32)> {
        if self.lost.is_some() {
            return None;
        }
        self.lease.take()
    }

    /// The slot id and sequence id of the request on `index`, still busy: a re-send of
    /// the same request (over another path) uses them again, and the server's reply
    /// cache answers if it ran the first one.
    pub fn again(&self, index: SlotIndex) -> Option<(u32, u32)> {
        self.lease.busy(index)
    }

    /// The session the slots are of.
    pub fn sessionid(&self) -> crate::proto::nfs4::SessionId {
        self.lease.sessionid()
    }

    /// Slots that can still carry requests.
    pub fn usable(&self) -> u32 {
        self.lease.usable()
    }

    /// The request on `index` got no answer (transport failure): retire its slot.
    pub fn lost(&mut self, index: SlotIndex) {
        self.lease.retire(index);
    }

    /// Encodes SEQUENCE, PUTFH and READ or WRITE on the slot `(slot, seqid)`.
    #[allow(clippy::too_many_arguments)]
    pub fn call(
        &self,
        router: &Router,
        (slot, seqid): (u32, u32),
        file: &File,
        dir: Dir,
        offset: u64,
        len: u32,
        data: Bytes,
        stable: Stability,
    ) -> CallBuf {
        let op = match dir {
            Dir::Read => IoOp::Read { count: len },
            Dir::Write => IoOp::Write {
                stable: StableHow::from_u32(stable as u32).unwrap_or(StableHow::FileSync),
                len: data.len() as u32,
            },
        };
        let c = IoCompound {
            sessionid: self.lease.sessionid(),
            sequenceid: seqid,
            slotid: slot,
            highest_slotid: self.lease.highest(),
            fh: &file.fh,
            stateid: file.stateid,
            offset,
            op,
        };
        let mut call = router.encode(PROC_COMPOUND, |b| c.encode_head(b), data);
        if dir == Dir::Read {
            call.reply_hint = read_reply_hint(len);
        }
        call
    }

    /// Decodes the reply to the request on `index` for a part of `want` bytes, and
    /// settles its slot.
    pub fn decode(
        &mut self,
        index: SlotIndex,
        dir: Dir,
        record: Bytes,
        want: u32,
    ) -> Result<PartReply, PartError> {
        let malformed = |e: &dyn std::fmt::Display| PartError::Malformed(e.to_string());
        let results = match Results::from_record(record) {
            Ok(r) => r,
            Err(e) => {
                self.lease.retire(index);
                return Err(malformed(&e));
            }
        };
        let reply = match decode_io_reply(results.bytes()) {
            Ok(r) => r,
            Err(e) => {
                self.lease.retire(index);
                return Err(malformed(&e));
            }
        };
        match settle_parts(reply.sequence.as_ref(), reply.failure) {
            Settled::Done(ok) => {
                self.lease.answered(index, ok);
                self.answered = true;
            }
            Settled::Again { seq, status, .. } => {
                self.lease.answered(index, seq);
                return Ok(match BusyStatus::of_v4(status) {
                    Some(b) => PartReply::Busy(b),
                    None => PartReply::Resend,
                });
            }
            // SEQUENCE itself failed: the slot's state on the server is not known for
            // sure (DELAY means the server still works on this sequence id).
            Settled::Same { status } => {
                self.lease.retire(index);
                return Ok(PartReply::Busy(
                    BusyStatus::of_v4(status).unwrap_or(BusyStatus::Delay),
                ));
            }
            Settled::Lost { seq, status, .. } if self.state.is_some() => {
                match seq {
                    Some(ok) => self.lease.answered(index, ok),
                    // The request was not run: the old session's slot is free again.
                    None => self.lease.unused(index),
                }
                return Ok(PartReply::Lost(status));
            }
            Settled::Lost { seq, op, status } | Settled::Failed { seq, op, status } => {
                match seq {
                    Some(ok) => self.lease.answered(index, ok),
                    None => self.lease.retire(index),
                }
                return Err(PartError::Status4 { op, status });
            }
            Settled::NoSequence => {
                self.lease.retire(index);
                return Err(malformed(&"reply without a SEQUENCE result"));
            }
        }
        match (dir, reply.result) {
            (Dir::Read, Some(IoResult::Read { data, .. })) => {
                LongRead::check(want, data.len()).map_err(PartError::LongRead)?;
                Ok(PartReply::Read(results.share(data)))
            }
            (
                Dir::Write,
                Some(IoResult::Write {
                    count,
                    committed,
                    verifier,
                }),
            ) => Ok(PartReply::Written(
                count,
                Stability::from_wire(committed as u32),
                verifier,
            )),
            _ => Err(PartError::Malformed(
                "reply without the READ or WRITE result".into(),
            )),
        }
    }
}

impl Wire {
    /// The stateid now of the open that had `stateid` (the same without recovery).
    pub(super) fn current(&self, stateid: Stateid) -> Stateid {
        self.state
            .as_ref()
            .map_or(stateid, |s| s.current_stateid(stateid))
    }
}

/// The files of an NFSv4.1 data path and the slots of its lease they go on.
pub(crate) struct Files {
    files: Vec<File>,
    wire: Wire,
}

impl Files {
    /// Files on the slots of `lease`; with `state` (the mount's), lost session state is
    /// recovered instead of failing the I/O that found it lost.
    pub(crate) fn new(lease: SlotLease, state: Option<Arc<StateManager>>) -> Files {
        let mut wire = Wire::new(lease);
        wire.state = state;
        Files {
            files: Vec::new(),
            wire,
        }
    }
}

impl Seam for Files {
    fn procs(&self) -> (&'static str, &'static str) {
        (READ, WRITE)
    }

    fn files(&self) -> usize {
        self.files.len()
    }

    fn add_file(&mut self, handle: &[u8]) -> bool {
        File::new(handle).map(|f| self.files.push(f)).is_some()
    }

    fn set_stateid(&mut self, file: FileId, stateid: Stateid) -> bool {
        match self.files.get_mut(file.0 as usize) {
            Some(f) => {
                // An open from before a recovery carries its stateid of now.
                f.stateid = self.wire.current(stateid);
                true
            }
            None => false,
        }
    }

    fn usable(&self) -> Option<u32> {
        Some(self.wire.usable())
    }

    fn call(
        &mut self,
        router: &Router,
        io: &Io,
        (offset, len): (u64, u32),
        data: Bytes,
        again: Option<SlotIndex>,
    ) -> Option<(CallBuf, SlotIndex)> {
        let w = &mut self.wire;
        let (index, sslot, seqid) = match again {
            Some(i) => w.again(i).map(|(s, q)| (i, s, q)),
            None => w.take(),
        }?;
        let file = &self.files[io.file.0 as usize];
        let call = w.call(
            router,
            (sslot, seqid),
            file,
            io.dir,
            offset,
            len,
            data,
            io.stable,
        );
        Some((call, index))
    }

    fn decode(
        &mut self,
        index: SlotIndex,
        dir: Dir,
        record: Bytes,
        want: u32,
    ) -> Result<PartReply, PartError> {
        self.wire.decode(index, dir, record, want)
    }

    fn busy(&self, index: SlotIndex) -> bool {
        self.wire.again(index).is_some()
    }

    fn lost(&mut self, index: SlotIndex) {
        self.wire.lost(index);
    }

    fn park(&mut self, slot: u32, part: u32, status: Nfsstat4) -> Result<(), PartError> {
        let w = &mut self.wire;
        w.parked.push((slot, part));
        if w.recovered.is_none() {
            w.lost = Some(status);
            let (Some(state), Ok(rt)) = (w.state.clone(), tokio::runtime::Handle::try_current())
            else {
                let why = "no runtime to recover in".into();
                return Err(PartError::Unrecovered { status, why });
            };
            let out: Recovered = Arc::new(Mutex::new(None));
            w.recovered = Some(out.clone());
            let (seen, depth, since) = (w.lease.sessionid(), w.lease.len(), w.answered_at());
            rt.spawn(async move {
                let r = match state.recover(seen, status, since).await {
                    Ok(()) => state.lease(depth, None).await,
                    Err(e) => Err(e),
                };
                *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
        Ok(())
    }

    /// Once the recovery is done and no request of the old lease is out: the new
    /// lease, and the opens' new stateids.
    fn resume(&mut self) -> Resume {
        let w = &mut self.wire;
        // Before waiting again: the replies just handled came about now.
        w.answered_at();
        let Some(recovered) = w.recovered.as_ref() else {
            return Resume::Idle;
        };
        let later = Resume::Later(Instant::now() + RECOVERY_POLL);
        if w.lease.in_use() > 0 {
            return later;
        }
        let Some(done) = recovered.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return later;
        };
        let status = w.lost.take().unwrap_or(Nfsstat4::Badsession);
        w.recovered = None;
        let parked = std::mem::take(&mut w.parked);
        match done {
            Ok(lease) => {
                w.lease = lease;
                if let Some(state) = &w.state {
                    for f in self.files.iter_mut() {
                        f.stateid = state.current_stateid(f.stateid);
                    }
                }
                Resume::Recovered(parked)
            }
            Err(e) => {
                let why = PartError::Unrecovered {
                    status,
                    why: e.to_string(),
                };
                Resume::Failed(parked, why)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest successful reply to SEQUENCE, PUTFH and READ of `len` bytes, as
    /// ganesha sends it (empty tag, AUTH_NONE verifier), without its record mark.
    fn smallest_read_reply(len: u32) -> Vec<u8> {
        let mut w: Vec<u32> = vec![7, 1, 0, 0, 0, 0];
        w.extend([0, 0, 3]);
        w.extend([53, 0, 1, 2, 3, 4, 1, 0, 63, 63, 0]);
        w.extend([22, 0]);
        w.extend([25, 0, 0, len]);
        let mut b: Vec<u8> = w.iter().flat_map(|x| x.to_be_bytes()).collect();
        b.resize(b.len() + (len as usize).next_multiple_of(4), 0xab);
        b
    }

    #[test]
    fn the_read_hint_never_exceeds_the_smallest_reply() {
        for len in [1u32, 512, 8192, 1 << 20] {
            let record = Bytes::from(smallest_read_reply(len));
            let results = Results::from_record(record.clone()).unwrap();
            match decode_io_reply(results.bytes()).unwrap().result {
                Some(IoResult::Read { data, .. }) => assert_eq!(data.len(), len as usize),
                _ => panic!("not a READ reply"),
            }
            // With its record mark the reply brings at least the hint, and the hint
            // leaves out nothing but the data's padding.
            let on_wire = record.len() + 4;
            let hint = read_reply_hint(len) as usize;
            assert!(hint <= on_wire, "{len}: hint {hint} > reply {on_wire}");
            assert!(on_wire - hint < 4, "{len}: hint {hint}, reply {on_wire}");
        }
    }
}
