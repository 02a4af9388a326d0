//! The NFSv4.1 encoding of the data path's operations: each READ or WRITE is a
//! COMPOUND of SEQUENCE, PUTFH and the op, on a slot of the data path's own
//! [`SlotLease`]. A part that finds no free slot waits in the data path until a reply
//! frees one (the lease is the in-flight limit the server granted).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use dbio_rpc::conn::{CallBatch, CallBuf, Connection};

use crate::channel::Results;
use crate::datapath::{BusyStatus, Dir, PartError, PartReply, Stability};
use crate::proto::nfs4::{
    decode_compound, Compound, Fh4, Nfsstat4, OpResult, StableHow, Stateid, MINOR_VERSION,
    PROC_COMPOUND,
};
use crate::router::{FileId, Router};
use crate::v41::pnfs::{FileRoute, IoCount, Layouts, Placement};
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
                let stable = match stable {
                    Stability::Unstable => StableHow::Unstable,
                    Stability::DataSync => StableHow::DataSync,
                    Stability::FileSync => StableHow::FileSync,
                };
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
        match res.results.first() {
            Some(OpResult::Sequence(ok)) => self.lease.answered(index, ok),
            // SEQUENCE itself failed: the slot's state on the server is not known for
            // sure (DELAY means the server still works on this sequence id).
            _ => {
                self.lease.retire(index);
                if res.failure.is_none() {
                    return Err(malformed(&"reply without a SEQUENCE result"));
                }
            }
        }
        if let Some(f) = res.failure {
            if f.status == Nfsstat4::RetryUncachedRep {
                return Ok(PartReply::Resend);
            }
            return match busy(f.status) {
                Some(b) => Ok(PartReply::Busy(b)),
                None => Err(PartError::Status4 {
                    op: f.op,
                    status: f.status,
                }),
            };
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

/// Channel numbers at or above this in a data path's tags name a data server.
pub const DS_CHANNEL: usize = 0x8000;

/// A data path's link to one data server: slots of the server's session, its
/// connection, the calls not yet handed to it.
pub struct DsLink {
    pub wire: Wire,
    pub conn: Connection,
    pub batch: CallBatch,
}

/// The pNFS side of a data path: each file's route as last seen, the links to data
/// servers, the counters of I/O per file and server.
pub struct PnfsPath {
    pub layouts: Arc<Layouts>,
    seen: u64,
    /// Per file: the route (`None`: through the metadata server until fetched again).
    routes: Vec<Option<Arc<FileRoute>>>,
    handles: Vec<Fh4>,
    links: Vec<Option<DsLink>>,
    counters: HashMap<(u32, Option<usize>), Arc<IoCount>>,
    depth: u32,
}

impl PnfsPath {
    pub fn new(layouts: Arc<Layouts>, depth: u32) -> PnfsPath {
        PnfsPath {
            seen: layouts.generation(),
            layouts,
            routes: Vec::new(),
            handles: Vec::new(),
            links: Vec::new(),
            counters: HashMap::new(),
            depth,
        }
    }

    pub fn add_file(&mut self, fh: Fh4) {
        self.routes.push(self.layouts.route(&fh));
        self.handles.push(fh);
    }

    /// Where `len` bytes at `offset` of `file` go by its layout: a data server
    /// (placement, open stateid), or `None` for the metadata server.
    pub fn place(&mut self, file: FileId, offset: u64, len: u32) -> Option<(Placement, Stateid)> {
        let g = self.layouts.generation();
        if g != self.seen {
            self.seen = g;
            for (r, fh) in self.routes.iter_mut().zip(&self.handles) {
                *r = self.layouts.route(fh);
            }
        }
        let route = self.routes.get(file.0 as usize)?.as_ref()?;
        let p = route.place(offset, len)?;
        Some((p, route.open))
    }

    /// The link to data server `i`, made on first use (`None`: its session has no
    /// slot to lease).
    pub fn link(&mut self, i: usize) -> Option<&mut DsLink> {
        if self.links.len() <= i {
            self.links.resize_with(i + 1, || None);
        }
        if self.links[i].is_none() {
            let ds = self.layouts.server(i)?;
            let lease = ds.lease(self.depth)?;
            self.links[i] = Some(DsLink {
                wire: Wire::new(lease),
                conn: ds.connection().clone(),
                batch: CallBatch::with_capacity(self.depth as usize),
            });
        }
        self.links[i].as_mut()
    }

    /// Leases slots on every data server known now (so that data paths made one after
    /// another each find their slots, or a new session is made for them).
    pub fn link_all(&mut self) {
        for i in 0..self.layouts.server_count() {
            self.link(i);
        }
    }

    pub fn links(&mut self) -> impl Iterator<Item = &mut DsLink> {
        self.links.iter_mut().flatten()
    }

    /// Counts `bytes` of I/O of `file` on `server` (`None`: the metadata server).
    pub fn count(&mut self, file: FileId, server: Option<usize>, bytes: u32) {
        let now = self.layouts.now_ms();
        let layouts = &self.layouts;
        let fh = self.handles.get(file.0 as usize).copied();
        let c = self
            .counters
            .entry((file.0, server))
            .or_insert_with(|| match fh {
                Some(fh) => layouts.counter(&fh, server),
                None => Arc::new(IoCount::default()),
            });
        c.add(bytes, now);
    }

    /// A data server failed an I/O of `file`: its I/O goes through the metadata
    /// server until the route is fetched again (started here, in the background).
    pub fn failed(&mut self, file: FileId, server: usize, why: String) {
        let Some(r) = self.routes.get_mut(file.0 as usize) else {
            return;
        };
        if r.take().is_none() {
            // Already going through the metadata server: a fetch is under way.
            return;
        }
        let fh = self.handles[file.0 as usize];
        let layouts = self.layouts.clone();
        let name = layouts.server_name(Some(server));
        tokio::spawn(async move {
            layouts
                .refetch(fh, format!("data server {name} failed an I/O: {why}"))
                .await;
        });
    }
}
