//! The NFSv4.1 encoding of the data path's operations: each READ or WRITE is a
//! COMPOUND of SEQUENCE, PUTFH and the op, on a slot of the data path's own
//! [`SlotLease`]; its reply settles the slot here. A part that finds no free slot waits
//! in the data path until a reply frees one (the lease is the in-flight limit the
//! server granted).

use bytes::Bytes;
use dbio_rpc::conn::CallBuf;

use super::{BusyStatus, Dir, PartError, PartReply, Stability};
use crate::channel::Results;
use crate::proto::nfs4::{
    decode_compound, Compound, Fh4, Nfsstat4, OpResult, StableHow, Stateid, MINOR_VERSION,
    PROC_COMPOUND,
};
use crate::router::Router;
use crate::v41::sequence::{settle, Settled};
use crate::v41::SlotLease;

pub const READ: &str = "READ4";
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

/// A sent request's slot: its index in the lease.
pub type SlotIndex = u16;

/// The v4.1 side of a data path: its slots.
pub struct Wire {
    lease: SlotLease,
}

impl Wire {
    pub fn new(lease: SlotLease) -> Wire {
        Wire { lease }
    }

    /// A free slot (index in the lease), or `None`: the part must wait for a reply.
    pub fn take(&mut self) -> Option<(SlotIndex, u32, u32)> {
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
        let c = Compound::new("", MINOR_VERSION)
            .sequence(
                self.lease.sessionid(),
                seqid,
                slot,
                self.lease.highest(),
                false,
            )
            .putfh(file.fh);
        let mut call = match dir {
            Dir::Read => {
                let c = c.read(file.stateid, offset, len);
                router.encode(
                    PROC_COMPOUND,
                    |b| {
                        c.encode_head(b);
                    },
                    Bytes::new(),
                )
            }
            Dir::Write => {
                let stable = StableHow::from_u32(stable as u32).unwrap_or(StableHow::FileSync);
                let c = c.write(file.stateid, offset, stable, &data);
                let call = router.encode(
                    PROC_COMPOUND,
                    |b| {
                        c.encode_head(b);
                    },
                    data.clone(),
                );
                call
            }
        };
        if dir == Dir::Read {
            // Reply header, SEQUENCE and PUTFH results, then the data.
            call.reply_hint = len.saturating_add(128);
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
        let res = match decode_compound(results.bytes()) {
            Ok(r) => r,
            Err(e) => {
                self.lease.retire(index);
                return Err(malformed(&e));
            }
        };
        match settle(&res) {
            Settled::Done(ok) => self.lease.answered(index, ok),
            Settled::Again { seq, status, .. } => {
                self.lease.answered(index, seq);
                return Ok(match busy(status) {
                    Some(b) => PartReply::Busy(b),
                    None => PartReply::Resend,
                });
            }
            // SEQUENCE itself failed: the slot's state on the server is not known for
            // sure (DELAY means the server still works on this sequence id).
            Settled::Same { status } => {
                self.lease.retire(index);
                return Ok(PartReply::Busy(busy(status).unwrap_or(BusyStatus::Delay)));
            }
            Settled::Failed { seq, op, status } => {
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
        match (dir, res.results.get(2)) {
            (Dir::Read, Some(OpResult::Read { data, .. })) => {
                let got = data.len().min(want as usize);
                Ok(PartReply::Read(results.share(&data[..got])))
            }
            (Dir::Write, Some(OpResult::Write { count, .. })) => Ok(PartReply::Written(*count)),
            _ => Err(PartError::Malformed(
                "reply without the READ or WRITE result".into(),
            )),
        }
    }
}

/// The "try later" statuses of NFSv4.1.
fn busy(status: Nfsstat4) -> Option<BusyStatus> {
    match status {
        Nfsstat4::Delay => Some(BusyStatus::Delay),
        Nfsstat4::Grace => Some(BusyStatus::Grace),
        _ => None,
    }
}
