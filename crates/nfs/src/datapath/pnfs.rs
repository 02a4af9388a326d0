//! pNFS in the data path: each part goes to the data server its file's layout names
//! (on slots leased from that server's session), or through the metadata server.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use dbio_rpc::conn::{CallBatch, CallResult, CompletionQueue, Connection, ReplyTo};

use super::v41::{File, Wire};
use super::{tag, untag, Dir, Outcome, PartError, Stability};
use crate::proto::nfs4::{Fh4, Stateid};
use crate::router::{FileId, ProcId, Route, Router};
use crate::v41::pnfs::{FileRoute, IoCount, Layouts, Placement};

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

/// A part of an I/O, as placed.
pub(super) struct Part {
    pub slot: u32,
    pub part: u32,
    pub file: FileId,
    pub dir: Dir,
    pub stable: Stability,
    pub offset: u64,
    pub len: u32,
}

/// Where [`PnfsPath::queue`] put a part.
pub(super) enum Queued {
    /// On a data server's batch.
    Sent,
    /// The data server has no free slot for this path now: the part waits.
    NoSlot,
    /// No layout for this range (or its server has no slot lease): the metadata server.
    ThroughMds,
}

impl PnfsPath {
    /// Queues `part` on the data server its file's layout names, if any.
    pub(super) fn queue(
        &mut self,
        router: &Router,
        queue: &Arc<CompletionQueue>,
        part: Part,
        data: &Bytes,
        proc_: ProcId,
    ) -> Queued {
        let Some((pl, open)) = self.place(part.file, part.offset, part.len) else {
            return Queued::ThroughMds;
        };
        let Some(link) = self.link(pl.server) else {
            return Queued::ThroughMds;
        };
        let Some((index, sslot, seqid)) = link.wire.take() else {
            return Queued::NoSlot;
        };
        let f = File {
            fh: pl.fh,
            stateid: open,
        };
        let call = link.wire.call(
            router,
            (sslot, seqid),
            &f,
            part.dir,
            pl.offset,
            part.len,
            data.clone(),
            part.stable,
        );
        let t = tag(part.slot, part.part, index, DS_CHANNEL + pl.server);
        link.batch.push(call, ReplyTo::Sink(queue.clone(), t));
        self.count(part.file, Some(pl.server), part.len);
        router.procs().count(proc_);
        Queued::Sent
    }
}

impl super::DataPath {
    /// pNFS: READ and WRITE go to the data servers the files' layouts name.
    /// Slots are leased at once on the data servers known now.
    pub fn with_layouts(mut self, layouts: Arc<Layouts>) -> Self {
        let mut p = PnfsPath::new(layouts, self.ops.len() as u32);
        p.link_all();
        self.pnfs = Some(p);
        self
    }

    /// pNFS: a reply from data server `server`. A failure (transport or status) sends
    /// the part through the metadata server and has the file's layout fetched again.
    pub(super) fn on_data_server_reply(
        &mut self,
        t: u64,
        server: usize,
        result: CallResult,
    ) -> Option<Outcome> {
        let (slot, part, sslot, _) = untag(t);
        let io = self.ops.get(slot as usize).and_then(|op| op.io);
        let want = io.map(|io| {
            let size = self.part_size(io.dir);
            size.min(io.len - part * size)
        });
        let p = self.pnfs.as_mut()?;
        let link = p.link(server)?;
        let decoded = match (result, io, want) {
            (Ok(reply), Some(io), Some(want)) => {
                link.wire.decode(sslot, io.dir, reply.record, want)
            }
            (Ok(_), _, _) => {
                link.wire.lost(sslot);
                return None;
            }
            (Err(e), _, _) => {
                link.wire.lost(sslot);
                Err(PartError::Transport(e))
            }
        };
        let io = io?;
        match decoded {
            Ok(reply) => {
                let outcome = self.apply(slot, part, io, Ok(reply));
                self.settle(t, io, outcome)
            }
            Err(why) => {
                if let Some(p) = self.pnfs.as_mut() {
                    p.failed(io.file, server, why.to_string());
                }
                let ch = self.router.pick(Route::META, None);
                self.send_part(slot, part, Some(ch));
                None
            }
        }
    }
}
