//! The data path's table of one version, as the Linux client's `nfs_rpc_ops` is for
//! READ and WRITE: its files in the protocol's terms, a part's call and its reply's
//! meaning, and with NFSv4.1 the session slots they go on and the recovery of lost
//! state. `v3.rs` and `v41.rs` implement it; the version's set-up table
//! (`version::Version::data_path`) hands a data path its own, and the data path calls
//! it through a pointer (one call to encode and one to decode per RPC), knowing no
//! version. What both sides speak in lives here, below them.

use std::time::Instant;

use bytes::Bytes;
use dbio_rpc::conn::CallBuf;

use super::error::{BusyStatus, PartError};
use crate::kinds::Stable as Stability;
use crate::proto::nfs4::{Nfsstat4, Stateid, Verifier};
use crate::router::{FileId, Router};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Read,
    Write,
}

/// One I/O: a byte range of a file, in one direction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Io {
    /// The slot it occupies.
    pub slot: u32,
    pub file: FileId,
    pub offset: u64,
    pub len: u32,
    pub dir: Dir,
    pub stable: Stability,
}

/// What the server said to one RPC of an I/O, whatever the protocol version.
pub(crate) enum PartReply {
    /// Try again later (NFS3ERR_JUKEBOX, NFS4ERR_DELAY, NFS4ERR_GRACE).
    Busy(BusyStatus),
    /// Send it again as a new request, now: NFSv4.1's NFS4ERR_RETRY_UNCACHED_REP to a
    /// re-send after a lost reply (the server kept no reply to replay; READ and WRITE
    /// of the same data at the same offset may run twice).
    Resend,
    /// READ data (at most what was asked).
    Read(Bytes),
    /// Bytes a WRITE wrote, how durably the server says they are (pNFS keeps what a
    /// data server said: it decides on COMMIT and LAYOUTCOMMIT later), and the server
    /// instance's write verifier.
    Written(u32, Stability, Verifier),
    /// NFSv4.1: the session or the client's state is lost; the part goes again once
    /// it is recovered.
    Lost(Nfsstat4),
}

/// A request's session slot: its index in the data path's lease (0 where the version
/// has no slots).
pub(crate) type SlotIndex = u16;

/// Where a recovery of lost state stands for a data path.
pub(crate) enum Resume {
    /// None under way.
    Idle,
    /// Under way: look again then.
    Later(Instant),
    /// Done: the slots and the files' stateids are the new ones; these parts
    /// `(slot, part)` go again.
    Recovered(Vec<(u32, u32)>),
    /// Failed: these parts fail, for this reason.
    Failed(Vec<(u32, u32)>, PartError),
}

/// A version's wire for a data path (see the module's comment).
pub(crate) trait Seam: Send {
    /// The names of the version's READ and WRITE procedures (the router's counters).
    fn procs(&self) -> (&'static str, &'static str);
    /// Files added so far.
    fn files(&self) -> usize;
    /// Adds a file by its handle (as the server gave it); false if the handle is not
    /// one of this protocol's.
    fn add_file(&mut self, handle: &[u8]) -> bool;
    /// The stateid `file`'s I/O carries (an OPEN's); false where the version has
    /// none or the file is unknown.
    fn set_stateid(&mut self, _file: FileId, _stateid: Stateid) -> bool {
        false
    }
    /// Session slots held that can still carry requests; none where the version has
    /// no sessions.
    fn usable(&self) -> Option<u32> {
        None
    }
    /// The call of a part of `io`: `span`'s length at its offset (`data` for a WRITE),
    /// on a free slot, or on slot `again` with its sequence id when it re-sends the request
    /// that slot carries. `None`: no slot is free; the part waits for a reply.
    fn call(
        &mut self,
        router: &Router,
        io: &Io,
        span: (u64, u32),
        data: Bytes,
        again: Option<SlotIndex>,
    ) -> Option<(CallBuf, SlotIndex)>;
    /// What the reply to the request on `index` says, for a part of `want` bytes (its
    /// slot settled).
    fn decode(
        &mut self,
        index: SlotIndex,
        dir: Dir,
        record: Bytes,
        want: u32,
    ) -> Result<PartReply, PartError>;
    /// Whether the request on `index` still holds its slot: a re-send over another
    /// path then goes on it, and the server's reply cache answers if it ran it.
    fn busy(&self, _index: SlotIndex) -> bool {
        false
    }
    /// The request on `index` got no answer: its slot's state on the server is not
    /// known, so it is not used again.
    fn lost(&mut self, _index: SlotIndex) {}
    /// Part `part` of the I/O on `slot` found the state lost (`status`): it waits for
    /// the recovery (started by the first such part), or fails with the error
    /// returned.
    fn park(&mut self, _slot: u32, _part: u32, status: Nfsstat4) -> Result<(), PartError> {
        Err(PartError::Status4 {
            op: crate::proto::nfs4::Opnum::Sequence,
            status,
        })
    }
    /// Where the recovery stands, taken before each wait for replies.
    fn resume(&mut self) -> Resume {
        Resume::Idle
    }
}
