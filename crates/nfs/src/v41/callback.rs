//! The NFSv4.1 back channel (RFC 8881 sections 2.10.3.1 and 20): the server's calls to
//! the client, over the connections the client opened.
//!
//! CREATE_SESSION asks for a back channel on its connection
//! (`CREATE_SESSION4_FLAG_CONN_BACK_CHAN`) and the pool's other connections are bound
//! to it (BIND_CONN_TO_SESSION, fore or both). Each such connection hands the calls the
//! server sends to one handler task ([`BackChannel`]), which answers CB_NULL and
//! CB_COMPOUND:
//! - CB_SEQUENCE: a slot table of the back channel per session, with the reply cache
//!   of RFC 8881 2.10.6 (the same sequence id again gets the cached reply);
//! - CB_LAYOUTRECALL: the recalled routes go through the metadata server, I/O on them
//!   drains, the layout is returned (LAYOUTRETURN) and fetched again
//!   ([`Layouts::recall`]);
//! - CB_NOTIFY_DEVICEID: routes over that device are fetched again (a new address);
//! - CB_RECALL: DELEGRETURN (dbio asks for no delegation; a server may grant one);
//! - CB_RECALL_ANY: nothing is kept that it could ask for, so it is done at once;
//! - anything else: NFS4ERR_NOTSUPP.
//!
//! The reply goes out first; the work a recall asks for follows in a task of its own,
//! so the server is never kept waiting on the client's calls to it.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use dbio_rpc::conn::{CallSink, Connection, IncomingCall};
use dbio_rpc::ReplyError;
use tokio::sync::mpsc;

use crate::proto::nfs4::{
    decode_cb_compound, encode_cb_compound_res, session_flags, ArgOp, CbOp, CbResult, ChannelAttrs,
    Compound, Fh4, LayoutIomode, LayoutRecall, LayoutReturn, LayoutType, Nfsstat4, SessionId,
    Stateid, CB_PROC_COMPOUND, CB_PROC_NULL, CB_VERSION, MINOR_VERSION,
};
use crate::v41::back_channel::Callbacks;
use crate::v41::pnfs::{Layouts, Recall};
use crate::v41::Client;

pub use crate::v41::back_channel::{BACK_SLOTS, CB_PROGRAM};
/// Calls waiting for the handler at most; more are refused (SYSTEM_ERR) until it
/// catches up. The server sends no more than the slots it was granted.
const QUEUE: usize = 64;
/// Longest a recall waits for the data paths to let go of the recalled route before
/// the layout is returned anyway (a path idle now looks again only at its next I/O).
const DRAIN: Duration = Duration::from_secs(2);

/// What [`BackSlots::check`] makes of a CB_SEQUENCE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotCheck {
    /// A new request: run it, then [`BackSlots::store`] its reply.
    New,
    /// The request again: send this reply again, run nothing.
    Replay(Bytes),
    /// Refused with this status (bad slot, misordered, a different request reusing a
    /// sequence id).
    Refused(Nfsstat4),
}

#[derive(Clone, Default)]
struct BackSlot {
    seqid: u32,
    /// Hash of the last request's arguments, and its reply once sent.
    request: u64,
    reply: Option<Bytes>,
}

/// One session's back-channel slot table (the client is the replier): the last
/// sequence id seen per slot and its reply (RFC 8881 2.10.6.1).
pub struct BackSlots {
    slots: Vec<BackSlot>,
}

impl BackSlots {
    pub fn new(n: u32) -> BackSlots {
        BackSlots {
            slots: vec![BackSlot::default(); n.clamp(1, BACK_SLOTS) as usize],
        }
    }

    /// Highest slot id the server may use.
    pub fn highest(&self) -> u32 {
        self.slots.len() as u32 - 1
    }

    /// A CB_SEQUENCE on `slot` with `seqid`, whose request's arguments are `args`.
    pub fn check(&mut self, slot: u32, seqid: u32, args: &[u8]) -> SlotCheck {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return SlotCheck::Refused(Nfsstat4::Badslot);
        };
        let request = digest(args);
        if seqid == s.seqid && s.reply.is_some() {
            if request != s.request {
                return SlotCheck::Refused(Nfsstat4::SeqFalseRetry);
            }
            return SlotCheck::Replay(s.reply.clone().unwrap_or_default());
        }
        if seqid != s.seqid.wrapping_add(1) {
            return SlotCheck::Refused(Nfsstat4::SeqMisordered);
        }
        s.seqid = seqid;
        s.request = request;
        s.reply = None;
        SlotCheck::New
    }

    /// Keeps the reply to the request on `slot` for a retry.
    pub fn store(&mut self, slot: u32, reply: Bytes) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            s.reply = Some(reply);
        }
    }
}

fn digest(args: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    args.hash(&mut h);
    h.finish()
}

/// Back-channel figures, for tests and views.
#[derive(Debug, Default)]
pub struct CallbackCounts {
    /// Sessions whose CREATE_SESSION the server answered with a back channel.
    pub granted: AtomicU64,
    /// Connections bound to a session's back channel by BIND_CONN_TO_SESSION.
    pub bound: AtomicU64,
    /// SEQUENCE replies saying the server cannot reach the client's back channel.
    pub path_down: AtomicU64,
    /// CB_NULL and CB_COMPOUND calls answered.
    pub calls: AtomicU64,
    /// CB_LAYOUTRECALLs answered NFS4_OK, and layouts returned after them.
    pub layout_recalls: AtomicU64,
    pub layouts_returned: AtomicU64,
    /// CB_RECALLs of a delegation, and DELEGRETURNs that succeeded.
    pub delegation_recalls: AtomicU64,
    pub delegations_returned: AtomicU64,
    pub device_notices: AtomicU64,
    /// Replies sent again from a slot's cache.
    pub replays: AtomicU64,
}

/// What the handler acts on (weak: the pool owns them; the handler only serves it).
struct Targets {
    client: Weak<Client>,
    layouts: Option<Weak<Layouts>>,
}

struct State {
    sessions: Mutex<HashMap<SessionId, BackSlots>>,
    targets: OnceLock<Targets>,
    warnings: Mutex<Vec<String>>,
    counts: CallbackCounts,
}

/// A pool's back channel: the handler of every call its servers send it.
pub struct BackChannel {
    sink: CallSink,
    state: Arc<State>,
    rebind: Mutex<Rebind>,
}

/// What binds the back channel again when the server says it lost it (a connection
/// that dropped and came back is a new socket the server has not bound).
#[derive(Default)]
struct Rebind {
    client: Weak<Client>,
    conns: Vec<Connection>,
    last: Option<Instant>,
}

/// Least time between two rounds of binding again.
const REBIND_EVERY: Duration = Duration::from_secs(5);

impl std::fmt::Debug for BackChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BackChannel")
    }
}

impl Callbacks for BackChannel {
    fn serve(&self, conn: &Connection) {
        BackChannel::serve(self, conn)
    }
    fn created(&self, sessionid: SessionId, flags: u32, back: &ChannelAttrs, server: &str) {
        BackChannel::created(self, sessionid, flags, back, server)
    }
    fn sequenced(&self, status_flags: u32, server: std::net::SocketAddr) {
        BackChannel::sequenced(self, status_flags, server)
    }
}

impl BackChannel {
    /// Starts the handler on the current runtime. It ends when the last connection
    /// serving it and this handle are gone.
    pub fn new() -> Arc<BackChannel> {
        let (sink, rx) = mpsc::channel(QUEUE);
        let state = Arc::new(State {
            sessions: Mutex::new(HashMap::new()),
            targets: OnceLock::new(),
            warnings: Mutex::new(Vec::new()),
            counts: CallbackCounts::default(),
        });
        tokio::spawn(serve(rx, state.clone()));
        Arc::new(BackChannel {
            sink,
            state,
            rebind: Mutex::new(Rebind::default()),
        })
    }

    /// The client and the layouts that recalls act on (set once; later calls ignored).
    pub fn attach(&self, client: &Arc<Client>, layouts: Option<&Arc<Layouts>>) {
        let _ = self.state.targets.set(Targets {
            client: Arc::downgrade(client),
            layouts: layouts.map(Arc::downgrade),
        });
    }

    /// Calls the server sends over `conn` come here from now on.
    pub fn serve(&self, conn: &Connection) {
        conn.serve_calls(self.sink.clone());
    }

    /// A session was created: its back channel gets the slots the server granted. A
    /// server that did not grant the back channel (`flags`) gets a one-line warning.
    pub fn created(&self, sessionid: SessionId, flags: u32, back: &ChannelAttrs, server: &str) {
        let slots = BackSlots::new(back.maxrequests.min(BACK_SLOTS));
        lock(&self.state.sessions).insert(sessionid, slots);
        if flags & session_flags::CONN_BACK_CHAN != 0 {
            self.state.counts.granted.fetch_add(1, Relaxed);
        } else {
            self.warn(format!(
                "NFSv4.1 server {server} gave no back channel: recalls of layouts and \
                 delegations are not received (pNFS layouts follow moved data only through \
                 their periodic refresh)"
            ));
        }
    }

    /// The connections bound again (BIND_CONN_TO_SESSION on `client`'s session) when a
    /// server says it cannot reach the back channel.
    pub fn rebind_with(&self, client: &Arc<Client>, conns: Vec<Connection>) {
        let mut r = lock(&self.rebind);
        r.client = Arc::downgrade(client);
        r.conns = conns;
    }

    /// A SEQUENCE reply's status flags: a server that says it cannot reach the back
    /// channel (`SEQ4_STATUS_CB_PATH_DOWN*`) gets its connections bound again (at most
    /// every 5 s) and the user a one-line warning.
    pub fn sequenced(&self, status_flags: u32, server: std::net::SocketAddr) {
        use crate::proto::nfs4::seq4_status::{CB_PATH_DOWN, CB_PATH_DOWN_SESSION};
        if status_flags & (CB_PATH_DOWN | CB_PATH_DOWN_SESSION) == 0 {
            return;
        }
        self.state.counts.path_down.fetch_add(1, Relaxed);
        self.warn(format!(
            "NFSv4.1 server {server} reported the back channel down; its connections are \
             bound again (recalls meanwhile are lost)"
        ));
        let (client, conns) = {
            let mut r = lock(&self.rebind);
            if r.last.is_some_and(|t| t.elapsed() < REBIND_EVERY) || r.conns.is_empty() {
                return;
            }
            r.last = Some(Instant::now());
            (r.client.clone(), r.conns.clone())
        };
        let state = self.state.clone();
        tokio::spawn(async move {
            let Some(client) = client.upgrade() else {
                return;
            };
            for conn in conns {
                if client.session().bind_connection(&conn).await.is_ok() {
                    state.counts.bound.fetch_add(1, Relaxed);
                }
            }
        });
    }

    /// A one-line warning, once per text.
    pub fn warn(&self, text: String) {
        let mut w = lock(&self.state.warnings);
        if !w.contains(&text) && w.len() < 100 {
            w.push(text);
        }
    }

    /// Warnings for the user gathered so far.
    pub fn warnings(&self) -> Vec<String> {
        lock(&self.state.warnings).clone()
    }

    pub fn counts(&self) -> &CallbackCounts {
        &self.state.counts
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The handler task: one call at a time (each is answered at once; recalls' work
/// runs in tasks of its own).
async fn serve(mut rx: mpsc::Receiver<IncomingCall>, state: Arc<State>) {
    while let Some(call) = rx.recv().await {
        if call.prog != CB_PROGRAM {
            call.refuse(ReplyError::ProgUnavail);
            continue;
        }
        if call.vers != CB_VERSION {
            call.refuse(ReplyError::ProgMismatch {
                low: CB_VERSION,
                high: CB_VERSION,
            });
            continue;
        }
        match call.proc_ {
            CB_PROC_NULL => {
                state.counts.calls.fetch_add(1, Relaxed);
                call.reply(&[]);
            }
            CB_PROC_COMPOUND => {
                state.counts.calls.fetch_add(1, Relaxed);
                let reply = state.compound(call.args());
                call.reply(&reply);
            }
            _ => call.refuse(ReplyError::ProcUnavail),
        }
    }
}

/// Work a CB_COMPOUND asks for after its reply.
enum Then {
    Layouts(Recall, Option<LayoutRecall>),
    Delegation(Fh4, Stateid),
}

impl State {
    /// Evaluates a CB_COMPOUND and gives its encoded results; starts what it asks for.
    fn compound(self: &Arc<Self>, args: &[u8]) -> Bytes {
        let c = match decode_cb_compound(args) {
            Ok(c) => c,
            Err(_) => return results(b"", &[CbResult::Status(0, Nfsstat4::Badxdr)]),
        };
        let tag = c.tag.0;
        if c.minorversion != MINOR_VERSION {
            let op = c.ops.first().map_or(cb_op_illegal(), CbOp::opnum);
            return results(tag, &[CbResult::Status(op, Nfsstat4::MinorVersMismatch)]);
        }
        let mut out = Vec::with_capacity(c.ops.len());
        let mut then = Vec::new();
        let mut slot = None;
        for (i, op) in c.ops.iter().enumerate() {
            let status = match op {
                CbOp::Sequence {
                    sessionid,
                    sequenceid,
                    slotid,
                    ..
                } if i == 0 => {
                    let mut sessions = lock(&self.sessions);
                    let Some(table) = sessions.get_mut(sessionid) else {
                        out.push(CbResult::Status(op.opnum(), Nfsstat4::Badsession));
                        break;
                    };
                    match table.check(*slotid, *sequenceid, args) {
                        SlotCheck::New => {}
                        SlotCheck::Replay(reply) => {
                            self.counts.replays.fetch_add(1, Relaxed);
                            return reply;
                        }
                        SlotCheck::Refused(st) => {
                            out.push(CbResult::Status(op.opnum(), st));
                            break;
                        }
                    }
                    slot = Some((*sessionid, *slotid));
                    let highest = table.highest();
                    out.push(CbResult::Sequence {
                        sessionid: *sessionid,
                        sequenceid: *sequenceid,
                        slotid: *slotid,
                        highest_slotid: highest,
                        target_highest_slotid: highest,
                    });
                    continue;
                }
                CbOp::Sequence { .. } => Nfsstat4::SequencePos,
                _ if slot.is_none() => Nfsstat4::OpNotInSession,
                CbOp::LayoutRecall { recall, .. } => self.layout_recall(recall, &mut then),
                CbOp::NotifyDeviceid(notices) => {
                    self.counts
                        .device_notices
                        .fetch_add(notices.len() as u64, Relaxed);
                    for n in notices {
                        then.push(Then::Layouts(Recall::Device(n.deviceid), None));
                    }
                    Nfsstat4::Ok
                }
                CbOp::Recall { stateid, fh, .. } => {
                    self.counts.delegation_recalls.fetch_add(1, Relaxed);
                    then.push(Then::Delegation(*fh, *stateid));
                    Nfsstat4::Ok
                }
                // Nothing is kept that it could ask to be given back: layouts are
                // returned when recalled, delegations are not asked for.
                CbOp::RecallAny { .. } => Nfsstat4::Ok,
                CbOp::Unsupported(_) => Nfsstat4::Notsupp,
            };
            out.push(CbResult::Status(op.opnum(), status));
            if status != Nfsstat4::Ok {
                break;
            }
        }
        let reply = results(tag, &out);
        if let Some((sessionid, slotid)) = slot {
            if let Some(t) = lock(&self.sessions).get_mut(&sessionid) {
                t.store(slotid, reply.clone());
            }
        }
        for work in then {
            tokio::spawn(self.clone().follow_up(work));
        }
        reply
    }

    /// CB_LAYOUTRECALL's status: NFS4ERR_NOMATCHING_LAYOUT when no layout it names is
    /// held (a file never routed, or plain NFSv4.1), else NFS4_OK and the recall
    /// follows.
    fn layout_recall(&self, recall: &LayoutRecall, then: &mut Vec<Then>) -> Nfsstat4 {
        let layouts = self.targets.get().and_then(|t| t.layouts.as_ref());
        let Some(layouts) = layouts.and_then(Weak::upgrade) else {
            return Nfsstat4::NomatchingLayout;
        };
        let which = match recall {
            LayoutRecall::File { fh, .. } => {
                if layouts.route(fh).is_none() {
                    return Nfsstat4::NomatchingLayout;
                }
                Recall::File(*fh)
            }
            LayoutRecall::Fsid(_) | LayoutRecall::All => Recall::All,
        };
        self.counts.layout_recalls.fetch_add(1, Relaxed);
        then.push(Then::Layouts(which, Some(*recall)));
        Nfsstat4::Ok
    }

    async fn follow_up(self: Arc<Self>, work: Then) {
        let Some(targets) = self.targets.get() else {
            return;
        };
        match work {
            Then::Layouts(which, recall) => {
                let Some(layouts) = targets.layouts.as_ref().and_then(Weak::upgrade) else {
                    return;
                };
                let why = match &recall {
                    Some(_) => "fetched again after the server recalled it",
                    None => "fetched again: the server changed its device",
                };
                let files = layouts.recall(which, DRAIN).await;
                let client = targets.client.upgrade();
                let returned = match (recall, client) {
                    (Some(LayoutRecall::File { .. }), _) if !files.is_empty() => files.len(),
                    // A file known without a layout now (its last fetch got none): the
                    // server still counts the one it recalls, returned by the recall's
                    // own stateid and range.
                    (
                        Some(LayoutRecall::File {
                            fh,
                            offset,
                            length,
                            stateid,
                        }),
                        Some(client),
                    ) => {
                        let how = LayoutReturn::File {
                            offset,
                            length,
                            stateid,
                            body: &[],
                        };
                        usize::from(give_back(&client, Some(fh), how).await)
                    }
                    // A recall of a file system or of everything is answered by one
                    // LAYOUTRETURN of the same kind (RFC 8881 12.5.5.1).
                    (Some(LayoutRecall::Fsid(_)), Some(client)) => {
                        usize::from(give_back(&client, None, LayoutReturn::Fsid).await)
                    }
                    (Some(LayoutRecall::All), Some(client)) => {
                        usize::from(give_back(&client, None, LayoutReturn::All).await)
                    }
                    _ => 0,
                };
                self.counts
                    .layouts_returned
                    .fetch_add(returned as u64, Relaxed);
                for (fh, _) in files {
                    layouts.refetch(fh, why.to_string()).await;
                }
            }
            Then::Delegation(fh, stateid) => {
                let Some(client) = targets.client.upgrade() else {
                    return;
                };
                let c = Compound::new("delegreturn", MINOR_VERSION)
                    .putfh(fh)
                    .delegreturn(stateid);
                match client.session().compound(&c, "recalled delegation").await {
                    Ok(_) => {
                        self.counts.delegations_returned.fetch_add(1, Relaxed);
                    }
                    Err(e) => {
                        let mut w = lock(&self.warnings);
                        if w.len() < 100 {
                            w.push(format!("returning a recalled delegation failed: {e}"));
                        }
                    }
                }
            }
        }
    }
}

/// LAYOUTRETURN of `how` on `fh` (the root for a file system or all); true if the
/// server took it.
async fn give_back(client: &Client, fh: Option<Fh4>, how: LayoutReturn<'_>) -> bool {
    let c = Compound::new("layoutreturn", MINOR_VERSION);
    let c = match fh {
        Some(fh) => c.putfh(fh),
        None => c.putrootfh(),
    };
    let c = c.op(ArgOp::Layoutreturn {
        reclaim: false,
        layout_type: LayoutType::NfsV41Files,
        iomode: LayoutIomode::Any,
        how,
    });
    client.session().compound(&c, "layout recall").await.is_ok()
}

fn cb_op_illegal() -> u32 {
    crate::proto::nfs4::cb_op::ILLEGAL
}

fn results(tag: &[u8], out: &[CbResult]) -> Bytes {
    let mut b = Vec::with_capacity(64);
    encode_cb_compound_res(&mut b, tag, out);
    Bytes::from(b)
}

#[cfg(test)]
#[path = "callback_tests.rs"]
mod tests;
