//! An NFSv4.1 session (RFC 8881 section 2.10) over one rpc [`Connection`]:
//! EXCHANGE_ID, CREATE_SESSION and RECLAIM_COMPLETE to set it up, a slot table that
//! bounds the calls in flight to what the server grants, and [`Session::compound`],
//! which puts SEQUENCE in front of a COMPOUND, retries NFS4ERR_DELAY and
//! NFS4ERR_GRACE with the client's [`Backoff`], and re-sends on a new session once a
//! lost one is recovered (`recover.rs`). What a session is now (its id and slot table)
//! is replaced whole by a recovery, so that its holders keep the same [`Session`].

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use dbio_rpc::conn::{ConnConfig, Connection};
use dbio_rpc::Credential;
use dbio_xdr::{XdrEncode, XdrPut};
use tokio::sync::Notify;

use crate::channel::{build_call, Results};
use crate::error::{call_error, NfsError};
use crate::proto::nfs4::{
    chan_dir, decode_compound, session_flags, ArgOp, CallbackSec, ChannelAttrs, ClientId, Compound,
    CompoundRes, Nfsstat4, OpFailure, OpResult, Opnum, RdmaIrd, SequenceOk, SessionId,
    MINOR_VERSION, PROC_COMPOUND, PROGRAM, VERSION,
};
use crate::retry::{Attempt, Backoff, BusyStatus, Retrying};
use crate::router::{ProcId, Route, Router};
use crate::v41::back_channel::{back_channel_attrs, Callbacks, CB_PROGRAM};
use crate::v41::recover::{in_recovery, LostHook};
use crate::v41::sequence::{settle, Lost, Settled};
use crate::v41::slots::{SlotLease, SlotTable, MAX_SLOTS};

/// How a session is set up and how its calls wait and retry.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// Fore-channel slots to ask for (1 to [`MAX_SLOTS`]); the server may grant fewer.
    pub slots: u32,
    /// Largest request and reply asked for (the server may grant less).
    pub max_message: u32,
    /// Re-sends of a call answered NFS4ERR_DELAY or NFS4ERR_GRACE.
    pub backoff: Backoff,
    /// Longest a call waits for a free slot before it fails.
    pub slot_wait: Duration,
    /// Client owner for EXCHANGE_ID (unique per client instance).
    pub owner: String,
    /// The connection's timeouts and bounds.
    pub conn: ConnConfig,
    /// The handler of the server's calls (`callback::BackChannel`): CREATE_SESSION then
    /// asks for a back channel on the session's connection. `None`: no back channel (no
    /// recall is received).
    pub back_channel: Option<Arc<dyn Callbacks>>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            slots: 64,
            max_message: 1 << 20,
            backoff: Backoff::default(),
            slot_wait: Duration::from_secs(30),
            owner: format!("dbio-{}-{}", hostname(), std::process::id()),
            conn: ConnConfig::default(),
            back_channel: None,
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// Slot-table figures, for tests and views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotStats {
    /// Slots the server granted at CREATE_SESSION (as used by this client).
    pub granted: u32,
    /// Highest slot id usable now.
    pub target: u32,
    /// Slots busy now (retired ones included).
    pub busy: u32,
    /// Slots retired after a request that got no reply.
    pub retired: u32,
}

/// Re-sends of one COMPOUND after its session was lost and recovered.
const RECOVERIES_PER_CALL: u32 = 3;

/// The client id, shared by the sessions of one client (see [`Session::another`]).
pub(crate) struct Ident {
    pub(crate) clientid: Mutex<ClientId>,
    /// CREATE_SESSION's sequence id for the client's next session.
    pub(crate) next_create: AtomicU32,
}

/// What a session is until it is recovered: its id, the fore channel granted and the
/// slot table. Calls hold the one they started on.
pub(crate) struct Live {
    pub(crate) sessionid: SessionId,
    pub(crate) fore: ChannelAttrs,
    pub(crate) slots: Arc<Mutex<SlotTable>>,
    pub(crate) freed: Arc<Notify>,
}

/// An established NFSv4.1 session on one connection.
pub struct Session {
    pub(crate) conn: Connection,
    pub(crate) cred: Credential,
    pub(crate) opts: SessionOptions,
    pub(crate) ident: Arc<Ident>,
    pub(crate) live: RwLock<Arc<Live>>,
    /// One recovery at a time (`recover.rs`).
    pub(crate) renewing: tokio::sync::Mutex<()>,
    /// Who recovers the session when a reply says it is lost (the mount's state
    /// manager, which also reclaims opens); none: [`Session::recover`].
    pub(crate) on_lost: std::sync::OnceLock<LostHook>,
    /// The pool's router, once the session is set up (see [`Session::establish_on`]).
    pub(crate) router: std::sync::OnceLock<(Arc<Router>, ProcId)>,
}

/// A checked COMPOUND reply (SEQUENCE succeeded, every op succeeded, the ops match
/// what was sent). Owns the reply record; [`Reply::res`] decodes it.
pub struct Reply {
    results: Results,
    /// The server that sent it (named by a decoding error).
    server: SocketAddr,
}

impl Reply {
    /// The decoded results, SEQUENCE first.
    pub fn res(&self) -> Result<CompoundRes<'_>, NfsError> {
        decode_compound(self.results.bytes())
            .map_err(|e| bad("COMPOUND", &self.server.to_string(), e.to_string()))
    }

    /// `data` (a READ's data from [`Reply::res`]) sharing the reply's record.
    pub fn share(&self, data: &[u8]) -> bytes::Bytes {
        self.results.share(data)
    }
}

pub(crate) fn bad(what: &str, server: &str, reason: String) -> NfsError {
    NfsError::BadReply {
        what: what.into(),
        path: server.into(),
        reason,
    }
}

fn status(op: Opnum, path: &str, status: Nfsstat4) -> NfsError {
    NfsError::Status4 {
        op,
        path: path.to_string(),
        status,
    }
}

/// The last "try again later" answer of a call whose re-sends ran out, saying what
/// was retried, how many times and for how long.
/// The error of a call still "try later" when the re-sends ran out: the last status,
/// with how many re-sends over how long if there were any.
fn retried(last: NfsError, st: Nfsstat4, retry: &Retrying) -> NfsError {
    if retry.resends() == 0 {
        return last;
    }
    NfsError::Retried {
        last: Box::new(last),
        why: match st {
            Nfsstat4::Grace => "server in its grace period",
            _ => "server busy",
        },
        retries: retry.resends(),
        secs: retry.waited().as_secs_f64(),
    }
}

/// `server:path` (the server alone for a call on no file): what an error names.
fn on_server(server: SocketAddr, path: &str) -> String {
    if path.is_empty() {
        server.to_string()
    } else {
        format!("{server}:{path}")
    }
}

impl Session {
    /// Connects to `addr` and sets up a session.
    pub async fn connect(
        addr: SocketAddr,
        cred: Credential,
        opts: SessionOptions,
    ) -> Result<Session, NfsError> {
        let conn = Connection::connect(addr, opts.conn.clone())
            .await
            .map_err(|source| NfsError::Transport {
                what: "connect".into(),
                path: addr.to_string(),
                source,
            })?;
        Session::establish(conn, cred, opts).await
    }

    /// EXCHANGE_ID, CREATE_SESSION (asking for `opts.slots` slots, using what the
    /// server grants) and RECLAIM_COMPLETE over `conn`.
    pub async fn establish(
        conn: Connection,
        cred: Credential,
        opts: SessionOptions,
    ) -> Result<Session, NfsError> {
        Session::establish_on(conn, cred, opts, None).await
    }

    /// [`Session::establish`]; with `router` (a pool's, whose channels reach the same
    /// server over every path, `conn` among them) the session's later COMPOUNDs go
    /// through it, and move to another path when theirs fails, like NFSv3 calls.
    pub(crate) async fn establish_on(
        conn: Connection,
        cred: Credential,
        opts: SessionOptions,
        router: Option<&Arc<Router>>,
    ) -> Result<Session, NfsError> {
        let (clientid, seq) = exchange_id(&conn, &cred, &opts).await?;
        let ident = Arc::new(Ident {
            clientid: Mutex::new(clientid),
            next_create: AtomicU32::new(seq),
        });
        let session = Session::create(conn, cred, opts, ident).await?;
        session.reclaim_complete().await?;
        if let Some(r) = router {
            let _ = session.router.set((r.clone(), r.proc_id("COMPOUND")));
        }
        Ok(session)
    }

    /// RECLAIM_COMPLETE: the client has reclaimed what it will (RFC 8881 18.51).
    pub(crate) async fn reclaim_complete(&self) -> Result<(), NfsError> {
        let c = Compound::new("reclaim_complete", MINOR_VERSION).reclaim_complete(false);
        match self.compound(&c, "").await {
            Ok(_) => Ok(()),
            // A client that already said so (a re-established session) is fine.
            Err(NfsError::Status4 {
                status: Nfsstat4::CompleteAlready,
                ..
            }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// CREATE_SESSION for the client of `ident` over `conn`.
    async fn create(
        conn: Connection,
        cred: Credential,
        opts: SessionOptions,
        ident: Arc<Ident>,
    ) -> Result<Session, NfsError> {
        let live = create_session(&conn, &cred, &opts, &ident).await?;
        Ok(Session {
            conn,
            cred,
            opts,
            ident,
            live: RwLock::new(Arc::new(live)),
            renewing: tokio::sync::Mutex::new(()),
            on_lost: std::sync::OnceLock::new(),
            router: std::sync::OnceLock::new(),
        })
    }

    /// One more session of the same client (its state, e.g. open stateids, is shared)
    /// over `conn`: for data paths when this session's slots are all leased.
    pub fn another(
        &self,
        conn: Connection,
    ) -> impl std::future::Future<Output = Result<Session, NfsError>> + Send + 'static {
        // Owned, so that the caller need not hold this session (or a lock on it).
        let (cred, opts, ident) = (self.cred.clone(), self.opts.clone(), self.ident.clone());
        async move { Session::create(conn, cred, opts, ident).await }
    }

    /// What the session is now (replaced whole when it is recovered).
    pub(crate) fn live(&self) -> Arc<Live> {
        self.live.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Binds `conn`, another connection to the same server, to this session for the
    /// fore channel and, if the server wants, the back channel (BIND_CONN_TO_SESSION,
    /// RFC 8881 18.34), so callbacks still arrive when the session's own connection is
    /// lost. Without a back channel nothing is done (the first SEQUENCE binds the fore
    /// channel).
    pub async fn bind_connection(&self, conn: &Connection) -> Result<(), NfsError> {
        let Some(bc) = &self.opts.back_channel else {
            return Ok(());
        };
        bc.serve(conn);
        let c = Compound::new("bind_conn_to_session", MINOR_VERSION)
            .bind_conn_to_session(self.sessionid(), chan_dir::FORE_OR_BOTH);
        plain_call(conn, &self.cred, &c).await.map(drop)
    }

    /// Up to `want` slots of this session for one data path (at least one, else
    /// `None`), given back when the lease is dropped.
    pub fn lease(&self, want: u32) -> Option<SlotLease> {
        let live = self.live();
        SlotLease::take_from(&live.slots, &live.freed, live.sessionid, want)
    }

    /// Slots neither busy nor leased now.
    pub fn free_slots(&self) -> u32 {
        let live = self.live();
        let t = live.slots.lock().unwrap_or_else(|e| e.into_inner());
        t.busy.iter().filter(|b| !**b).count() as u32
    }

    pub fn clientid(&self) -> ClientId {
        *self
            .ident
            .clientid
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    pub fn sessionid(&self) -> SessionId {
        self.live().sessionid
    }

    /// The fore channel's attributes as the server granted them.
    pub fn fore_channel(&self) -> ChannelAttrs {
        self.live().fore
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub fn slot_stats(&self) -> SlotStats {
        let live = self.live();
        let t = live.slots.lock().unwrap_or_else(|e| e.into_inner());
        SlotStats {
            granted: t.busy.len() as u32,
            target: t.target,
            busy: t.busy.iter().filter(|b| **b).count() as u32,
            retired: t.retired,
        }
    }

    /// Sends `ops` with SEQUENCE in front on a free slot (waiting at most
    /// `slot_wait` for one). NFS4ERR_DELAY and NFS4ERR_GRACE are retried with the
    /// back-off on the same slot: with the same sequence id when SEQUENCE itself said
    /// so (the server still works on the request), with the next one when a later op
    /// did (RFC 8881 2.10.6). A reply that says the session or the client's state is
    /// lost (a server restart, an expired lease) waits for the state's recovery, then
    /// goes again on the new session. Any other failure names the op and `path`.
    pub async fn compound(&self, ops: &Compound<'_>, path: &str) -> Result<Reply, NfsError> {
        // Errors name the server as well as the file: a pool talks to several.
        let named = on_server(self.conn.addr(), path);
        let path = named.as_str();
        let mut recoveries = 0;
        let since = Instant::now();
        loop {
            let live = self.live();
            match self.compound_on(&live, ops, path).await? {
                Ok(reply) => return Ok(reply),
                Err((op, st)) => {
                    let lost = Lost::of(st, op != Opnum::Sequence);
                    // Recovery's own calls fail rather than wait for themselves.
                    if recoveries >= RECOVERIES_PER_CALL || in_recovery() || lost.is_none() {
                        return Err(status(op, path, st));
                    }
                    recoveries += 1;
                    self.lost(live.sessionid, st, since).await?;
                }
            }
        }
    }

    /// Recovers after a reply on session `seen` said `why` to a call made at `since`:
    /// through the hook when the session has one, else [`Session::recover`].
    /// (Boxed: a recovery makes calls of its own.)
    pub(crate) fn lost(
        &self,
        seen: SessionId,
        why: Nfsstat4,
        since: Instant,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), NfsError>> + Send + '_>>
    {
        match self.on_lost.get() {
            Some(hook) => hook(seen, why, since),
            None => Box::pin(async move { self.recover(seen, why).await.map(drop) }),
        }
    }

    /// [`Session::compound`] on the session as it is now (`live`): the reply, or the op
    /// and status of a reply that said the state is lost (`Err` inside `Ok`).
    async fn compound_on(
        &self,
        live: &Arc<Live>,
        ops: &Compound<'_>,
        path: &str,
    ) -> Result<Result<Reply, (Opnum, Nfsstat4)>, NfsError> {
        let bad = |what: &str, reason: String| NfsError::BadReply {
            what: what.into(),
            path: path.into(),
            reason,
        };
        // The budget counts from before the wait for a slot.
        let retry = self.opts.backoff.retrying();
        let (slot, seqid) = self.take_slot(live, path).await?;
        // The slot's sequence id, which an attempt whose SEQUENCE was done advances.
        let seqid = &AtomicU32::new(seqid);
        let guard = &SlotGuard {
            live,
            slot,
            settled: AtomicBool::new(true),
        };
        let attempt = move || async move {
            let highest = {
                let t = live.slots.lock().unwrap_or_else(|e| e.into_inner());
                t.highest_busy()
            };
            let sent = seqid.load(Relaxed);
            let call = || {
                build_call(
                    PROGRAM,
                    VERSION,
                    PROC_COMPOUND,
                    &self.cred,
                    |b| encode(b, live.sessionid, ops, slot, sent, highest),
                    bytes::Bytes::new(),
                )
            };
            // Until a reply arrives, the server may or may not have run the request.
            guard.settled.store(false, Relaxed);
            let results = self.send(call, ops.tag, path).await?;
            guard.settled.store(true, Relaxed);
            let res = decode_compound(results.bytes()).map_err(|e| bad(ops.tag, e.to_string()))?;
            if let (Some(bc), Some(OpResult::Sequence(ok))) =
                (&self.opts.back_channel, res.results.first())
            {
                // The server says whether it still reaches the back channel.
                bc.sequenced(ok.status_flags, self.conn.addr());
            }
            let (op, later) = match settle(&res) {
                Settled::Done(ok) => {
                    check_sequenced(live, ok, slot, sent, &bad)?;
                    res.check_ops(std::iter::once(Opnum::Sequence).chain(ops.opnums()))
                        .map_err(|e| bad(ops.tag, e.to_string()))?;
                    drop(res);
                    return Ok(Attempt::Done(Ok(Reply {
                        results,
                        server: self.conn.addr(),
                    })));
                }
                Settled::Again { seq, op, status } => {
                    check_sequenced(live, seq, slot, sent, &bad)?;
                    // SEQUENCE was done: the retry is a new request.
                    seqid.store(sent.wrapping_add(1), Relaxed);
                    (op, status)
                }
                Settled::Same { status } => (Opnum::Sequence, status),
                Settled::Lost { seq, op, status } => {
                    if let Some(ok) = seq {
                        check_sequenced(live, ok, slot, sent, &bad)?;
                    }
                    return Ok(Attempt::Done(Err((op, status))));
                }
                Settled::Failed { seq, op, status: s } => {
                    if let Some(ok) = seq {
                        check_sequenced(live, ok, slot, sent, &bad)?;
                    }
                    return Err(status(op, path, s));
                }
                Settled::NoSequence => {
                    return Err(bad(ops.tag, "reply without a SEQUENCE result".into()))
                }
            };
            // RETRY_UNCACHED_REP is re-sent as a new request within a busy server's budget.
            let why = BusyStatus::of_v4(later).unwrap_or(BusyStatus::Delay);
            Ok(Attempt::Busy(why, (op, later)))
        };
        let spent =
            |(op, later), retry: &Retrying| Err(retried(status(op, path, later), later, retry));
        retry.run(attempt, spent).await
    }

    /// Sends a COMPOUND: through the router when the session has one (a transport
    /// failure then re-sends it, same slot and sequence id, on another path: the
    /// server's reply cache answers if it ran already), else on the session's own
    /// connection.
    async fn send(
        &self,
        call: impl Fn() -> dbio_rpc::conn::CallBuf,
        what: &str,
        path: &str,
    ) -> Result<Results, NfsError> {
        if let Some((router, proc_)) = self.router.get() {
            return router
                .call(Route::META, *proc_, call)
                .await
                .map_err(|e| call_error(what, path, e));
        }
        let reply = self
            .conn
            .call(call())
            .await
            .map_err(|source| NfsError::Transport {
                what: what.into(),
                path: path.into(),
                source,
            })?;
        Results::from_record(reply.record).map_err(|source| NfsError::Rpc {
            what: what.into(),
            path: path.into(),
            source,
        })
    }

    /// A free slot of `live` (the lowest at or below the target), waiting for one if
    /// all are busy, at most `slot_wait`, and no longer than the transport's waits
    /// once the process stops (slots held by calls that never end stay held).
    async fn take_slot(&self, live: &Live, path: &str) -> Result<(u32, u32), NfsError> {
        let deadline = Instant::now() + self.opts.slot_wait;
        loop {
            let freed = live.freed.notified();
            if let Some(s) = live.slots.lock().unwrap_or_else(|e| e.into_inner()).take() {
                return Ok(s);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let waited = dbio_rpc::stop::or_stopped(
                || "a free NFSv4.1 session slot".to_string(),
                tokio::time::timeout(left, freed),
            )
            .await
            .map_err(|source| NfsError::Transport {
                what: "SEQUENCE".into(),
                path: path.into(),
                source,
            })?;
            if left.is_zero() || waited.is_err() {
                return Err(NfsError::Invalid {
                    path: path.into(),
                    reason: format!(
                        "no NFSv4.1 session slot free within {:.1} s",
                        self.opts.slot_wait.as_secs_f64()
                    ),
                });
            }
        }
    }
    /// DESTROY_SESSION and DESTROY_CLIENTID (after the calls in flight ended).
    ///
    /// The work is done by then: callers report an error here as a warning, not as
    /// the command's failure (the server drops the state when the lease expires).
    pub async fn close(self) -> Result<(), NfsError> {
        let c = Compound::new("destroy_session", MINOR_VERSION).destroy_session(self.sessionid());
        plain_call(&self.conn, &self.cred, &c).await?;
        let c = Compound::new("destroy_clientid", MINOR_VERSION).destroy_clientid(self.clientid());
        plain_call(&self.conn, &self.cred, &c).await?;
        Ok(())
    }
}

/// EXCHANGE_ID with the client owner of `opts` over `conn`: the client id and the
/// sequence id of its first CREATE_SESSION. The same owner and verifier after a server
/// restart tell the server this is the client that held state before (RFC 8881 8.4.2.1).
pub(crate) async fn exchange_id(
    conn: &Connection,
    cred: &Credential,
    opts: &SessionOptions,
) -> Result<(ClientId, u32), NfsError> {
    let c = Compound::new("exchange_id", MINOR_VERSION).op(ArgOp::ExchangeId {
        verifier: (std::process::id() as u64 ^ 0x6462_696f_0000_0000).to_be_bytes(),
        owner: opts.owner.as_bytes(),
        flags: 0,
        impl_id: Some(("dbio", env!("CARGO_PKG_VERSION"))),
    });
    let server = conn.addr().to_string();
    let r = plain_call(conn, cred, &c).await?;
    let res = r.res()?;
    match res.results.first() {
        Some(OpResult::ExchangeId(x)) => Ok((x.clientid, x.sequenceid)),
        _ => Err(bad("EXCHANGE_ID", &server, "no result".into())),
    }
}

/// CREATE_SESSION for the client of `ident` over `conn` (asking for `opts.slots`
/// slots, using what the server grants).
pub(crate) async fn create_session(
    conn: &Connection,
    cred: &Credential,
    opts: &SessionOptions,
    ident: &Ident,
) -> Result<Live, NfsError> {
    let max = opts.max_message.clamp(8192, 16 << 20);
    let fore = ChannelAttrs {
        headerpadsize: 0,
        maxrequestsize: max,
        maxresponsesize: max,
        maxresponsesize_cached: 8192,
        maxoperations: 16,
        maxrequests: opts.slots.clamp(1, MAX_SLOTS),
        rdma_ird: RdmaIrd(None),
    };
    let back = back_channel_attrs();
    let flags = match &opts.back_channel {
        Some(bc) => {
            // Before CREATE_SESSION goes out: the server may call at once.
            bc.serve(conn);
            session_flags::CONN_BACK_CHAN
        }
        None => 0,
    };
    let c = Compound::new("create_session", MINOR_VERSION).op(ArgOp::CreateSession {
        clientid: *ident.clientid.lock().unwrap_or_else(|e| e.into_inner()),
        sequence: ident.next_create.fetch_add(1, Relaxed),
        flags,
        fore,
        back,
        cb_program: CB_PROGRAM,
        sec: CallbackSec::None,
    });
    let server = conn.addr().to_string();
    let r = plain_call(conn, cred, &c).await?;
    let (sessionid, granted) = match r.res()?.results.first() {
        Some(OpResult::CreateSession(s)) => {
            if let Some(bc) = &opts.back_channel {
                bc.created(s.sessionid, s.flags, &s.back, &server);
            }
            (s.sessionid, s.fore)
        }
        _ => return Err(bad("CREATE_SESSION", &server, "no result".into())),
    };
    if granted.maxrequests == 0 {
        return Err(bad(
            "CREATE_SESSION",
            &server,
            "the server granted no slots".into(),
        ));
    }
    // Never more than was asked for, whatever the server says.
    let n = granted.maxrequests.min(fore.maxrequests);
    Ok(Live {
        sessionid,
        fore: granted,
        slots: Arc::new(Mutex::new(SlotTable::new(n))),
        freed: Arc::new(Notify::new()),
    })
}

/// SEQUENCE on `slot` with `seqid` of `live` was done: the slot's sequence id moves on
/// and the server's slot targets are honoured. An error (made by `bad`) for a reply of
/// another session or slot, which settles nothing.
fn check_sequenced(
    live: &Live,
    ok: &SequenceOk,
    slot: u32,
    seqid: u32,
    bad: &dyn Fn(&str, String) -> NfsError,
) -> Result<(), NfsError> {
    if ok.sessionid != live.sessionid || ok.slotid != slot {
        return Err(bad("SEQUENCE", "reply for another session or slot".into()));
    }
    let mut t = live.slots.lock().unwrap_or_else(|e| e.into_inner());
    t.used(slot, seqid);
    t.honour(ok);
    Ok(())
}

/// The COMPOUND with SEQUENCE of session `sessionid` in front.
fn encode(
    b: &mut BytesMut,
    sessionid: SessionId,
    ops: &Compound<'_>,
    slot: u32,
    seqid: u32,
    highest: u32,
) {
    b.put_string(ops.tag);
    b.put_u32(ops.minorversion);
    b.put_u32(ops.ops.len() as u32 + 1);
    ArgOp::Sequence {
        sessionid,
        sequenceid: seqid,
        slotid: slot,
        highest_slotid: highest,
        cachethis: false,
    }
    .encode(b);
    for op in &ops.ops {
        op.encode(b);
    }
}

/// Frees a slot when the call holding it ends (also when its future is dropped).
/// A slot whose request got no reply (transport failure, or the caller dropped the
/// call) is retired instead: its sequence id on the server is unknown, and re-using it
/// could return another request's cached reply.
struct SlotGuard<'a> {
    live: &'a Live,
    slot: u32,
    /// The last request on the slot got its reply (set by each attempt of the call).
    settled: AtomicBool,
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut t = self.live.slots.lock().unwrap_or_else(|e| e.into_inner());
        if *self.settled.get_mut() {
            t.free(self.slot);
        } else {
            t.retired += 1;
        }
        drop(t);
        self.live.freed.notify_waiters();
    }
}

/// A COMPOUND without SEQUENCE (EXCHANGE_ID, CREATE_SESSION, DESTROY_*), alone in its
/// request; NFS4ERR_DELAY (and GRACE) are retried with the default back-off.
pub(crate) async fn plain_call(
    conn: &Connection,
    cred: &Credential,
    c: &Compound<'_>,
) -> Result<Reply, NfsError> {
    let backoff = Backoff::default();
    let server = conn.addr().to_string();
    let bad = |what: &str, reason: String| NfsError::BadReply {
        what: what.into(),
        path: server.clone(),
        reason,
    };
    let attempt = move || async move {
        let call = build_call(
            PROGRAM,
            VERSION,
            PROC_COMPOUND,
            cred,
            |b| c.encode(b),
            bytes::Bytes::new(),
        );
        let reply = conn
            .call(call)
            .await
            .map_err(|source| NfsError::Transport {
                what: c.tag.into(),
                path: conn.addr().to_string(),
                source,
            })?;
        let results = Results::from_record(reply.record).map_err(|source| NfsError::Rpc {
            what: c.tag.into(),
            path: conn.addr().to_string(),
            source,
        })?;
        let res = decode_compound(results.bytes()).map_err(|e| bad(c.tag, e.to_string()))?;
        Ok(match res.failure {
            None => {
                res.check_ops(c.opnums())
                    .map_err(|e| bad(c.tag, e.to_string()))?;
                drop(res);
                Attempt::Done(Reply {
                    results,
                    server: conn.addr(),
                })
            }
            Some(f) => match BusyStatus::of_v4(f.status) {
                Some(why) => Attempt::Busy(why, f),
                None => Attempt::Failed(f),
            },
        })
    };
    let spent = |f: OpFailure, retry: &Retrying| {
        Err(retried(status(f.op, &server, f.status), f.status, retry))
    };
    backoff.retrying().run(attempt, spent).await
}
