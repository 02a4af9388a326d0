//! pNFS in the data path: each part goes to the data server its file's layout names,
//! on that server's channel in the router and on slots leased from its session, or
//! through the metadata server when there is no layout, no slot, or the data server's
//! path is down.

use std::sync::Arc;

use bytes::Bytes;
use dbio_rpc::conn::{CallBatch, CallResult, CompletionQueue, ReplyTo};

use super::v41::{File, Wire};
use super::{tag, untag, Dir, Outcome, PartError, PartReply, Stability};
use crate::proto::nfs4::{Fh4, Nfsstat4, Stateid};
use crate::router::{FileId, ProcId, Route, Router, Server};
use crate::v41::pnfs::{DataServer, FileRoute, IoCount, Layouts, PendingWrites, Placement};

/// A data path's link to one data server: slots of the server's session and the
/// server's channel.
pub struct DsLink {
    wire: Wire,
    /// The data server's channel in the router.
    channel: usize,
    ds: Arc<DataServer>,
    /// The data server's session epoch the slots were leased from.
    epoch: u64,
    /// Parts sent on the lease and not answered yet.
    in_flight: u32,
}

/// The pNFS side of a data path: each file's route as last seen, the links to data
/// servers, the counters of I/O per file and server.
pub struct PnfsPath {
    pub layouts: Arc<Layouts>,
    seen: u64,
    /// Per file: the route (`None`: through the metadata server until fetched again).
    routes: Vec<Option<Arc<FileRoute>>>,
    handles: Vec<Fh4>,
    /// Per file, what its data servers said of its writes (for LAYOUTCOMMIT).
    pending: Vec<Arc<PendingWrites>>,
    links: Vec<Option<DsLink>>,
    /// Per data server: more slots were asked for (the ones it had were taken).
    asked: Vec<u64>,
    /// Per file, per server (0: the metadata server, i + 1: data server i).
    counters: Vec<Vec<Option<Tally>>>,
    /// Tallies with I/O not yet added to their counters: (file, server + 1).
    tallied: Vec<(u32, usize)>,
    depth: u32,
}

/// A counter shared with the pool's views, and what this data path counted since it
/// last added to it: the counters are atomics with the time of the last I/O, and adding
/// once per wait for replies, not per part, saves a clock read, a hash lookup and four
/// atomic operations per I/O.
struct Tally {
    count: Arc<IoCount>,
    ios: u64,
    bytes: u64,
}

impl PnfsPath {
    pub fn new(layouts: Arc<Layouts>, depth: u32) -> PnfsPath {
        PnfsPath {
            seen: layouts.generation(),
            layouts,
            routes: Vec::new(),
            handles: Vec::new(),
            pending: Vec::new(),
            links: Vec::new(),
            asked: Vec::new(),
            counters: Vec::new(),
            tallied: Vec::new(),
            depth,
        }
    }

    pub fn add_file(&mut self, fh: Fh4) {
        self.routes.push(self.layouts.route(&fh));
        self.pending.push(self.layouts.pending(&fh));
        self.handles.push(fh);
    }

    /// Where `len` bytes at `offset` of `file` go by its layout: a data server
    /// (placement, open stateid), or `None` for the metadata server.
    pub fn place(&mut self, file: FileId, offset: u64, len: u32) -> Option<(Placement, Stateid)> {
        let route = self.route(file)?;
        let p = route.place(offset, len)?;
        Some((p, route.open))
    }

    /// `file`'s route as of the layouts' latest change.
    fn route(&mut self, file: FileId) -> Option<&FileRoute> {
        let g = self.layouts.generation();
        if g != self.seen {
            self.seen = g;
            for (r, fh) in self.routes.iter_mut().zip(&self.handles) {
                *r = self.layouts.route(fh);
            }
            self.layouts.routes_released();
        }
        self.routes.get(file.0 as usize)?.as_deref()
    }

    /// Start and length of `file`'s stripe units when its layout stripes over several
    /// data servers ([`FileRoute::stripe_units`]).
    pub fn stripe_units(&mut self, file: FileId) -> Option<(u64, u64)> {
        self.route(file)?.stripe_units()
    }

    /// The link to data server `i` with slots of its current session: leased on first
    /// use, and again once the server's sessions were made anew and the parts sent on
    /// the old ones are answered. `None`: no slot now (more are asked for, once per
    /// epoch; until they come, I/O goes through the metadata server).
    pub fn link(&mut self, i: usize) -> Option<&mut DsLink> {
        if self.links.len() <= i {
            self.links.resize_with(i + 1, || None);
            self.asked.resize(i + 1, u64::MAX);
        }
        let fresh = match &self.links[i] {
            Some(l) => l.epoch == l.ds.epoch(),
            None => false,
        };
        if !fresh {
            if self.links[i].as_ref().is_some_and(|l| l.in_flight > 0) {
                return None;
            }
            let ds = self.layouts.server(i)?;
            let epoch = ds.epoch();
            let Some(lease) = ds.lease(self.depth) else {
                self.links[i] = None;
                if self.asked[i] != epoch {
                    // A server named by a later layout, or one with a new session:
                    // slots for this data path, like those reserved at its start.
                    self.asked[i] = epoch;
                    let depth = self.depth;
                    self.layouts.spawn(async move {
                        let _ = ds.reserve(depth).await;
                    });
                }
                return None;
            };
            self.links[i] = Some(DsLink {
                wire: Wire::new(lease),
                channel: ds.channel,
                ds,
                epoch,
                in_flight: 0,
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

    /// Counts `bytes` of I/O of `file` on `server` (`None`: the metadata server); the
    /// shared counters get it with [`PnfsPath::publish`].
    pub fn count(&mut self, file: FileId, server: Option<usize>, bytes: u32) {
        let (f, s) = (file.0 as usize, server.map_or(0, |i| i + 1));
        if self.counters.len() <= f {
            self.counters.resize_with(f + 1, Vec::new);
        }
        let row = &mut self.counters[f];
        if row.len() <= s {
            row.resize_with(s + 1, || None);
        }
        let (layouts, fh) = (&self.layouts, self.handles.get(f));
        let t = row[s].get_or_insert_with(|| Tally {
            count: match fh {
                Some(fh) => layouts.counter(fh, server),
                None => Arc::new(IoCount::default()),
            },
            ios: 0,
            bytes: 0,
        });
        if t.ios == 0 {
            self.tallied.push((file.0, s));
        }
        t.ios += 1;
        t.bytes += u64::from(bytes);
    }

    /// Adds what was counted since the last time to the shared counters, with the
    /// time now as their last I/O's.
    pub fn publish(&mut self) {
        if self.tallied.is_empty() {
            return;
        }
        let now = self.layouts.now_ms();
        for (f, s) in self.tallied.drain(..) {
            let t = self.counters.get_mut(f as usize).and_then(|r| r.get_mut(s));
            if let Some(Some(t)) = t {
                t.count.add(t.ios, t.bytes, now);
                (t.ios, t.bytes) = (0, 0);
            }
        }
    }

    /// A data server failed an I/O of `file` with an error status: its I/O goes
    /// through the metadata server until the route is fetched again (started here,
    /// in the background).
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
        self.layouts.spawn(async move {
            layouts
                .refetch(fh, format!("data server {name} failed an I/O: {why}"))
                .await;
        });
    }
}

impl Drop for PnfsPath {
    fn drop(&mut self) {
        self.publish();
        self.routes.clear();
        self.layouts.routes_released();
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
    /// On a data server's channel.
    Sent,
    /// The data server has no free slot for this path now: the part waits.
    NoSlot,
    /// No layout for this range, no slot lease on its server, or the server's path is
    /// down: the metadata server.
    ThroughMds,
}

/// The status by which a data server says it no longer knows the session or the
/// client (it restarted), if that is what it said.
fn session_lost(why: &PartError) -> Option<Nfsstat4> {
    match why {
        PartError::Status4 {
            status:
                status @ (Nfsstat4::Badsession
                | Nfsstat4::Deadsession
                | Nfsstat4::StaleClientid
                | Nfsstat4::Expired),
            ..
        } => Some(*status),
        _ => None,
    }
}

impl PnfsPath {
    /// Queues `part` on the channel of the data server its file's layout names, if
    /// any, counting it in the router like any call.
    pub(super) fn queue(
        &mut self,
        router: &Router,
        (queue, batches): (&Arc<CompletionQueue>, &mut Vec<CallBatch>),
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
        if !router.is_usable(link.channel) {
            return Queued::ThroughMds;
        }
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
        let ch = link.channel;
        link.in_flight += 1;
        let t = tag(part.slot, part.part, index, ch);
        router.reserve(ch, proc_);
        super::batch_for(batches, ch, self.depth).push(call, ReplyTo::Sink(queue.clone(), t));
        self.count(part.file, Some(pl.server), part.len);
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

    /// pNFS: commits what `file`'s data servers hold of this and other data paths'
    /// WRITEs (COMMIT and LAYOUTCOMMIT as the layout and their answers require:
    /// `Layouts::layoutcommit`); nothing without pNFS.
    pub async fn layoutcommit(&self, file: FileId) -> Result<(), crate::error::NfsError> {
        let Some(p) = &self.pnfs else {
            return Ok(());
        };
        let Some(fh) = p.handles.get(file.0 as usize).copied() else {
            return Ok(());
        };
        let layouts = p.layouts.clone();
        layouts.layoutcommit(fh).await.map(drop)
    }

    /// pNFS: a reply from data server `server` on channel `ch`. A failure sends the
    /// part through the metadata server: a transport failure takes the server's path
    /// down until the probe finds it answering; a lost session is made anew; another
    /// error status has the file's layout fetched again.
    pub(super) fn on_data_server_reply(
        &mut self,
        t: u64,
        ch: usize,
        server: usize,
        result: CallResult,
    ) -> Option<Outcome> {
        self.router.done(ch);
        let (slot, part, sslot, _) = untag(t);
        let io = self.ops.get(slot as usize).and_then(|op| op.io);
        let span = io.map(|io| self.span(&io, part));
        let want = span.map(|s| s.1);
        let p = self.pnfs.as_mut()?;
        let link = p.links.get_mut(server)?.as_mut()?;
        link.in_flight = link.in_flight.saturating_sub(1);
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
        let why = match decoded {
            Ok(reply) => {
                if let (PartReply::Written(n @ 1.., how, _), Some((start, _))) = (&reply, span) {
                    // Kept until the layout is committed (LAYOUTCOMMIT, COMMIT).
                    let end = io.offset + u64::from(start) + u64::from(*n);
                    if let Some(w) = p.pending.get(io.file.0 as usize) {
                        w.wrote(server, end, *how);
                    }
                }
                self.check_verifier(ch, Server::Data(server as u16), io, &reply);
                let outcome = self.apply(slot, part, io, Ok(reply));
                return self.settle(t, io, outcome);
            }
            Err(why) => why,
        };
        let lost_session = link.wire.sessionid();
        let ds = link.ds.clone();
        let mds = match (&why, session_lost(&why)) {
            (PartError::Transport(e), _) => self.router.path_failed(ch, &e.to_string()),
            (why, Some(status)) => {
                let (router, why) = (self.router.clone(), why.to_string());
                p.layouts.spawn(async move {
                    let t = std::time::Instant::now();
                    let what = match ds.renew(lost_session, status).await {
                        Ok(false) => return,
                        Ok(true) => format!("new session ({why})"),
                        Err(e) => format!("no new session ({why}): {e}"),
                    };
                    let ms = t.elapsed().as_secs_f64() * 1000.0;
                    router.note(ch, format!("{what}, made in {ms:.0} ms"));
                });
                None
            }
            (why, None) => {
                p.failed(io.file, server, why.to_string());
                None
            }
        };
        let mds = mds.unwrap_or_else(|| self.router.pick(Route::META, None));
        self.send_part(slot, part, Some(mds));
        None
    }
}
