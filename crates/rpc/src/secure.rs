//! A connection's RPCSEC_GSS contexts (RFC 2203): the upper layers build every call with
//! their usual credential, and the connection's task seals it when it goes out (the
//! context's credential, a header MIC, and the arguments under a MIC or wrapped) and
//! opens each reply (its verifier checked, its results unwrapped) before handing it on.
//! So nothing above the connection knows about Kerberos, and a retransmission is sealed
//! again with a new sequence number, as the server discards a number it has seen.
//!
//! Contexts belong to one connection, each kept within half its sequence window (see
//! [`GssConn`]). A context is set up by [`establish`], which sends its INIT calls
//! through the same task unsealed; calls wait (parked) until one has room, and again
//! when the server drops theirs (`CTXPROBLEM`, `CREDPROBLEM`): they are sealed with
//! another context and sent, none fails.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use bytes::{BufMut as _, Bytes, BytesMut};
use dbio_xdr::XdrPut;
use tokio::sync::{mpsc, oneshot};

use crate::auth::OpaqueAuth;
use crate::call::{CallBuf, Request};
use crate::completion::ReplyTo;
use crate::error::TransportError;
use crate::gss::{
    call_layout, check_reply_verf, decode_integ, decode_priv, encode_gss_call, encode_integ,
    encode_priv, reply_shape, GssCred, GssError, GssInitRes, GssMech, GssProc, GssService,
    ReplyShape, CREDPROBLEM, CTXPROBLEM, MAXSEQ,
};
use crate::krb5::Initiator;

/// How calls are authenticated: `sec=` in an NFS URL, as the kernel's mount option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavor {
    /// AUTH_SYS: the uid and gids as the client says them.
    #[default]
    Sys,
    /// Kerberos V5: the user is proven, calls are not protected.
    Krb5,
    /// Kerberos with every call and reply under a checksum (integrity).
    Krb5i,
    /// Kerberos with every call and reply encrypted (privacy).
    Krb5p,
}

impl Flavor {
    pub const ALL: [Flavor; 4] = [Flavor::Sys, Flavor::Krb5, Flavor::Krb5i, Flavor::Krb5p];

    /// The RPCSEC_GSS service, or `None` for AUTH_SYS.
    pub fn service(self) -> Option<GssService> {
        match self {
            Flavor::Sys => None,
            Flavor::Krb5 => Some(GssService::None),
            Flavor::Krb5i => Some(GssService::Integrity),
            Flavor::Krb5p => Some(GssService::Privacy),
        }
    }

    /// The number a server lists the flavour by (MOUNT's flavour list, SECINFO): 1 for
    /// AUTH_SYS, the Kerberos pseudo-flavours 390003..390005 (RFC 2623).
    pub fn pseudo_flavor(self) -> u32 {
        match self {
            Flavor::Sys => 1,
            Flavor::Krb5 => 390_003,
            Flavor::Krb5i => 390_004,
            Flavor::Krb5p => 390_005,
        }
    }

    /// The flavour of a connection's settings (`ConnConfig::gss`).
    pub fn of(gss: Option<&GssTarget>) -> Flavor {
        match gss.map(|t| t.service) {
            None => Flavor::Sys,
            Some(GssService::None) => Flavor::Krb5,
            Some(GssService::Integrity) => Flavor::Krb5i,
            Some(GssService::Privacy) => Flavor::Krb5p,
        }
    }

    /// The flavour a server's number names, if dbio knows it.
    pub fn from_pseudo(n: u32) -> Option<Flavor> {
        Flavor::ALL.into_iter().find(|f| f.pseudo_flavor() == n)
    }

    pub fn name(self) -> &'static str {
        match self {
            Flavor::Sys => "sys",
            Flavor::Krb5 => "krb5",
            Flavor::Krb5i => "krb5i",
            Flavor::Krb5p => "krb5p",
        }
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Flavor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Flavor::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown security flavour '{s}' (sys, krb5, krb5i or krb5p)"))
    }
}

/// Whom a Kerberos connection proves itself to, and how its calls are protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GssTarget {
    /// GSS host-based service name, `nfs@server` (the principal `nfs/server@REALM`).
    pub principal: String,
    pub service: GssService,
}

/// What the connection's task does with a reply it opened.
pub(crate) enum Opened {
    Reply(Bytes),
    /// The server dropped the context: set up a new one and send the call again.
    Renew,
    Bad(String),
}

/// A sealed call: what goes on the wire, the sequence number it carries and the id of
/// the context that sealed it.
pub(crate) struct Sealed {
    pub head: Bytes,
    pub payload: Bytes,
    pub seq: u32,
    pub ctx: u32,
}

/// An established context: its mechanism, handle and next sequence number.
pub(crate) struct Sealer {
    mech: Box<dyn GssMech + Send + Sync>,
    handle: Vec<u8>,
    service: GssService,
    next_seq: u32,
    /// The server's sequence window (from its INIT reply).
    window: u32,
}

impl Sealer {
    /// Calls this context may have outstanding: a quarter of its window (see [`GssConn`]).
    fn cap(&self) -> usize {
        (self.window as usize / 4).max(1)
    }

    fn seal(&mut self, plain: &[u8], payload: &Bytes) -> Result<Sealed, GssError> {
        if self.next_seq >= MAXSEQ {
            return Err(GssError::SeqTooLarge(self.next_seq));
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let layout = call_layout(plain)?;
        let xid = u32::from_be_bytes([plain[0], plain[1], plain[2], plain[3]]);
        let cred = GssCred {
            proc_: GssProc::Data,
            seq_num: seq,
            service: self.service,
            handle: &self.handle,
        };
        let args = &plain[layout.args..];
        let mut head = BytesMut::with_capacity(plain.len() + 128);
        encode_gss_call(
            &mut head,
            xid,
            layout.prog,
            layout.vers,
            layout.proc_,
            &cred,
            &*self.mech,
        )?;
        if self.service == GssService::None {
            head.put_slice(args);
            return Ok(Sealed {
                head: head.freeze(),
                payload: payload.clone(),
                seq,
                ctx: 0,
            });
        }
        // The payload (a WRITE's data) is part of the arguments, XDR padding included.
        let mut all = Vec::with_capacity(args.len() + payload.len() + 3);
        all.extend_from_slice(args);
        all.extend_from_slice(payload);
        all.resize(all.len() + dbio_xdr::padding(payload.len()), 0);
        if self.service == GssService::Integrity {
            encode_integ(&mut head, seq, &all, &*self.mech)?;
        } else {
            encode_priv(&mut head, seq, &all, &*self.mech)?;
        }
        Ok(Sealed {
            head: head.freeze(),
            payload: Bytes::new(),
            seq,
            ctx: 0,
        })
    }

    /// Checks a reply to a call sent with any of `seqs`, and gives it back as an
    /// AUTH_NONE reply with plain results, or says why not.
    fn open(&self, seqs: &[u32], record: Bytes) -> Opened {
        let shape = match reply_shape(&record) {
            Ok(s) => s,
            Err(e) => return Opened::Bad(format!("malformed reply: {e}")),
        };
        let (verf, stat, body) = match shape {
            ReplyShape::Accepted { verf, stat, body } => (verf, stat, body),
            ReplyShape::AuthError(CREDPROBLEM | CTXPROBLEM) => return Opened::Renew,
            // Other refusals carry no verifier; the caller reads them as they are.
            _ => return Opened::Reply(record),
        };
        let Some(seq) = seqs
            .iter()
            .copied()
            .find(|&s| check_reply_verf(&verf, s, &*self.mech).is_ok())
        else {
            let xid = u32::from_be_bytes([record[0], record[1], record[2], record[3]]);
            return Opened::Bad(format!(
                "the reply to call xid {xid:#010x} failed its RPCSEC_GSS verifier (not a MIC of sequence number {}): its data was dropped",
                seqs.last().copied().unwrap_or(0)
            ));
        };
        if stat != 0 || self.service == GssService::None {
            return Opened::Reply(record);
        }
        let results = match self.service {
            GssService::Integrity => {
                decode_integ(&record[body..], seq, &*self.mech).map(|r| r.to_vec())
            }
            _ => decode_priv(&record[body..], seq, &*self.mech),
        };
        match results {
            Ok(results) => {
                let mut out = BytesMut::with_capacity(24 + results.len());
                out.put_slice(&record[..8]);
                out.put_u32(0);
                OpaqueAuth::NONE.encode(&mut out);
                out.put_u32(0);
                out.put_slice(&results);
                Opened::Reply(out.freeze())
            }
            Err(e) => {
                let xid = u32::from_be_bytes([record[0], record[1], record[2], record[3]]);
                Opened::Bad(format!(
                    "the reply to call xid {xid:#010x} cannot be opened ({e}): its data was dropped"
                ))
            }
        }
    }

    /// The DESTROY call for this context, sealed (RFC 2203 §5.4).
    fn destroy_call(&mut self, xid: u32, prog: u32, vers: u32) -> Option<Bytes> {
        let cred = GssCred {
            proc_: GssProc::Destroy,
            seq_num: self.next_seq.min(MAXSEQ - 1),
            service: self.service,
            handle: &self.handle,
        };
        let mut head = BytesMut::new();
        encode_gss_call(&mut head, xid, prog, vers, 0, &cred, &*self.mech).ok()?;
        Some(head.freeze())
    }
}

/// Messages to the connection's task from the setup of a context.
pub(crate) enum Ctl {
    /// An INIT call, sent as it is.
    Plain(Request),
    /// The setup of context `id` ended.
    Ready(u32, Result<Sealer, String>),
}

/// Renewals within [`RENEW_SPAN`] beyond which the calls fail instead: a server that
/// drops every new context would otherwise keep them waiting for ever.
const MAX_RENEWALS: usize = 4;
const RENEW_SPAN: Duration = Duration::from_secs(10);
/// Contexts one connection may hold: with each kept to a quarter of its window, 16
/// carry 128 calls at ganesha's window of 32.
pub const MAX_CONTEXTS: usize = 16;

/// One established context and its id (counted from 1 on the connection).
struct Ctx {
    id: u32,
    sealer: Sealer,
    /// The highest sequence number of a call answered.
    answered: u32,
}

/// The task's side: the contexts, the calls waiting for room in one, and their setup.
///
/// A server checks each context's sequence window as its threads take the calls, not
/// in the order they arrived, and drops a call whose number fell behind the window
/// without a word: ganesha dropped 1 call in 46,000 with 32 outstanding on a context of
/// window 32, and 30 with 64. No bound on the calls outstanding rules it out (a call
/// whose thread stalls can be overtaken by any number of later ones), so each context
/// carries at most a quarter of its window (at half, 256 NULL calls still lost one in
/// about four tries; at a quarter none in 30), a connection asked for more sets up
/// another context, up to [`MAX_CONTEXTS`], beyond which calls wait here for room; and
/// a call left behind by answers a window past its number is sent again at once
/// ([`GssConn::overtaken`]) instead of after the retransmission timeout.
pub(crate) struct GssConn {
    target: GssTarget,
    ctxs: Vec<Ctx>,
    /// Id of the last context set up (or being set up).
    last_id: u32,
    setting_up: bool,
    /// No further context: the last setup failed while others served.
    enough: bool,
    /// The server dropped a context since the last was set up.
    dropped: bool,
    /// Calls waiting for a context, or for room in one.
    parked: VecDeque<Request>,
    /// Program and version of the calls, for INIT and DESTROY.
    program: Option<(u32, u32)>,
    ctl_tx: mpsc::UnboundedSender<Ctl>,
    ctl_rx: mpsc::UnboundedReceiver<Ctl>,
    renewals: VecDeque<Instant>,
    addr: String,
    /// Calls outstanding per context, as the task last counted them.
    load: Vec<(u32, usize)>,
}

impl GssConn {
    pub fn new(target: GssTarget, addr: String) -> Self {
        let (ctl_tx, ctl_rx) = mpsc::unbounded_channel();
        GssConn {
            target,
            ctxs: Vec::new(),
            last_id: 0,
            setting_up: false,
            enough: false,
            dropped: false,
            parked: VecDeque::new(),
            program: None,
            ctl_tx,
            ctl_rx,
            renewals: VecDeque::new(),
            addr,
            load: Vec::new(),
        }
    }

    /// Calls wait for a context, or one is being set up.
    pub fn busy(&self) -> bool {
        self.setting_up || !self.parked.is_empty()
    }

    pub fn has_parked(&self) -> bool {
        !self.parked.is_empty()
    }

    /// The task's count of calls outstanding per context (ids of sealed pending calls).
    pub fn count(&mut self, ids: impl Iterator<Item = u32>) {
        self.load.clear();
        self.load.extend(self.ctxs.iter().map(|c| (c.id, 0)));
        for id in ids {
            if let Some(l) = self.load.iter_mut().find(|l| l.0 == id) {
                l.1 += 1;
            }
        }
    }

    /// The least loaded context with room, by index.
    fn room(&self) -> Option<usize> {
        self.ctxs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let n = self.load.iter().find(|l| l.0 == c.id).map_or(0, |l| l.1);
                (i, n, c.sealer.cap())
            })
            .filter(|(_, n, cap)| n < cap)
            .min_by_key(|(_, n, _)| *n)
            .map(|(i, _, _)| i)
    }

    /// Seals a call now (room in a context), or keeps it until there is (`None`).
    pub fn admit(&mut self, req: Request) -> Option<Request> {
        if self.program.is_none() {
            if let Ok(l) = call_layout(&req.call.head) {
                self.program = Some((l.prog, l.vers));
            }
        }
        if self.parked.is_empty() && self.room().is_some() {
            return Some(req);
        }
        self.park(req);
        None
    }

    /// The next parked call, when a context has room for it; when none has, another
    /// context is set up if the connection may have one more.
    pub fn unpark(&mut self) -> Option<Request> {
        if self.room().is_none() {
            self.more();
            return None;
        }
        self.parked.pop_front()
    }

    fn park(&mut self, req: Request) {
        self.parked.push_back(req);
        self.more();
    }

    /// Sets up another context, unless one is being set up or there are enough.
    fn more(&mut self) {
        let more = self.ctxs.is_empty() || (!self.enough && self.ctxs.len() < MAX_CONTEXTS);
        if !self.setting_up && more {
            self.setting_up = true;
            self.last_id += 1;
            let (prog, vers) = self.program.unwrap_or((100_003, 3));
            tokio::spawn(establish(
                self.target.clone(),
                prog,
                vers,
                self.last_id,
                self.ctl_tx.clone(),
            ));
        }
    }

    /// Seals a call with the least loaded context that has room, and counts it there.
    pub fn seal(&mut self, plain: &[u8], payload: &Bytes) -> Result<Sealed, String> {
        let i = self
            .room()
            .or((!self.ctxs.is_empty()).then_some(0))
            .ok_or("no context")?;
        let ctx = &mut self.ctxs[i];
        let id = ctx.id;
        let sealed = ctx
            .sealer
            .seal(plain, payload)
            .map_err(|e| format!("cannot seal a call: {e}"))?;
        match self.load.iter_mut().find(|l| l.0 == id) {
            Some(l) => l.1 += 1,
            None => self.load.push((id, 1)),
        }
        Ok(Sealed { ctx: id, ..sealed })
    }

    pub fn open(&mut self, ctx: u32, seqs: &[u32], record: Bytes) -> Opened {
        match self.ctxs.iter_mut().find(|c| c.id == ctx) {
            Some(c) => {
                let opened = c.sealer.open(seqs, record);
                if let (Opened::Reply(_), Some(&last)) = (&opened, seqs.last()) {
                    c.answered = c.answered.max(last);
                }
                opened
            }
            // Dropped since (the server lost it): the call goes again under another.
            None => Opened::Renew,
        }
    }

    /// A call sealed with context `ctx` met `CTXPROBLEM`: that context is dropped
    /// (once) and the call waits for room in another, or in a new one. Fails it when
    /// renewals run away.
    pub fn renew(&mut self, ctx: u32, req: Request) -> Option<Request> {
        if let Some(i) = self.ctxs.iter().position(|c| c.id == ctx) {
            let now = Instant::now();
            while self.renewals.front().is_some_and(|t| now - *t > RENEW_SPAN) {
                self.renewals.pop_front();
            }
            if self.renewals.len() >= MAX_RENEWALS {
                req.reply.send(Err(self.error(format!(
                    "the server dropped {MAX_RENEWALS} new contexts within {} s",
                    RENEW_SPAN.as_secs()
                ))));
                return None;
            }
            self.renewals.push_back(now);
            self.dropped = true;
            self.ctxs.remove(i);
            self.load.retain(|l| l.0 != ctx);
            self.enough = false;
        }
        self.admit(req)
    }

    pub async fn recv(&mut self) -> Option<Ctl> {
        self.ctl_rx.recv().await
    }

    /// A setup ended. On success the parked calls may go (the task takes them with
    /// [`GssConn::unpark`]); a failure with no context left fails them with its
    /// error, in one line. When a context was added, says why it was set up.
    pub fn ready(&mut self, id: u32, result: Result<Sealer, String>) -> Option<String> {
        if id != self.last_id {
            return None;
        }
        self.setting_up = false;
        match result {
            Ok(sealer) => {
                let why = match (std::mem::take(&mut self.dropped), self.ctxs.len()) {
                    (true, _) => "RPCSEC_GSS context set up again: the server dropped one",
                    (false, 0) => "RPCSEC_GSS context set up",
                    (false, _) => {
                        "RPCSEC_GSS context added: more calls outstanding than one carries"
                    }
                };
                self.ctxs.push(Ctx {
                    id,
                    sealer,
                    answered: 0,
                });
                Some(format!(
                    "{why}, with {} ({} on this connection)",
                    self.target.principal,
                    self.ctxs.len()
                ))
            }
            Err(_) if !self.ctxs.is_empty() => {
                // Enough to go on with: the calls wait for room in those there are.
                self.enough = true;
                None
            }
            Err(e) => {
                let failed = self.parked.drain(..).collect::<Vec<_>>();
                for req in failed {
                    req.reply.send(Err(TransportError::Security {
                        addr: self.addr.clone(),
                        reason: e.clone(),
                    }));
                }
                None
            }
        }
    }

    /// A call sent last with `seq` on context `ctx` was overtaken by answers a whole
    /// window past it: the server dropped it.
    pub fn overtaken(&self, ctx: u32, seq: u32) -> bool {
        self.ctxs
            .iter()
            .find(|c| c.id == ctx)
            .is_some_and(|c| c.answered >= seq.saturating_add(c.sealer.window))
    }

    pub fn error(&self, reason: String) -> TransportError {
        TransportError::Security {
            addr: self.addr.clone(),
            reason,
        }
    }

    /// The DESTROY calls of every context, to send as the connection ends.
    pub fn destroy_calls(&mut self, mut xid: u32) -> Vec<Bytes> {
        let Some((prog, vers)) = self.program else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for c in &mut self.ctxs {
            if let Some(call) = c.sealer.destroy_call(xid, prog, vers) {
                out.push(call);
            }
            xid = xid.wrapping_add(1);
        }
        out
    }
}

/// A stand-in for INIT calls, which carry no MIC.
struct NoMech;

impl GssMech for NoMech {
    fn get_mic(&self, _: &[u8]) -> Result<Vec<u8>, GssError> {
        Err(GssError::Mech("no context yet".into()))
    }
    fn verify_mic(&self, _: &[u8], _: &[u8]) -> Result<(), GssError> {
        Err(GssError::Mech("no context yet".into()))
    }
    fn wrap(&self, _: &[u8]) -> Result<Vec<u8>, GssError> {
        Err(GssError::Mech("no context yet".into()))
    }
    fn unwrap(&self, _: &[u8]) -> Result<Vec<u8>, GssError> {
        Err(GssError::Mech("no context yet".into()))
    }
}

/// Rounds of INIT / CONTINUE_INIT before giving up (Kerberos needs one).
const MAX_ROUNDS: usize = 4;

/// Sets up a context with the server and reports to the task.
async fn establish(
    target: GssTarget,
    prog: u32,
    vers: u32,
    generation: u32,
    ctl: mpsc::UnboundedSender<Ctl>,
) {
    let result = setup(&target, prog, vers, &ctl).await;
    let _ = ctl.send(Ctl::Ready(generation, result));
}

async fn setup(
    target: &GssTarget,
    prog: u32,
    vers: u32,
    ctl: &mpsc::UnboundedSender<Ctl>,
) -> Result<Sealer, String> {
    let principal = target.principal.clone();
    let (mut init, mut token) = blocking(move || Initiator::start(&principal)).await?;
    let mut handle = Vec::new();
    for round in 0..MAX_ROUNDS {
        let cred = GssCred {
            proc_: if round == 0 {
                GssProc::Init
            } else {
                GssProc::ContinueInit
            },
            seq_num: 0,
            service: target.service,
            handle: &handle,
        };
        let mut head = BytesMut::new();
        encode_gss_call(&mut head, 0, prog, vers, 0, &cred, &NoMech).map_err(|e| e.to_string())?;
        head.put_opaque(&token);
        let (tx, rx) = oneshot::channel();
        let req = Request {
            call: CallBuf::new(head),
            reply: ReplyTo::Once(tx),
        };
        ctl.send(Ctl::Plain(req))
            .map_err(|_| "the connection closed".to_string())?;
        let record = rx
            .await
            .map_err(|_| "the connection closed".to_string())?
            .map_err(|e| e.to_string())?
            .record;
        let reply = crate::msg::decode_reply(&record).map_err(|e| e.to_string())?;
        let results = reply.results().map_err(|e| match e {
            crate::RpcError::Refused { reason, .. } => format!(
                "the server refused a Kerberos context ({reason}): does the export accept sec=krb5?"
            ),
            e => e.to_string(),
        })?;
        let res = GssInitRes::decode(results).map_err(|e| e.to_string())?;
        if res.major > 1 {
            return Err(format!(
                "the server refused the Kerberos context for {} (GSS major {:#x}, minor {})",
                target.principal, res.major, res.minor
            ));
        }
        handle = res.handle;
        let server_token = res.token;
        let (back, next) = blocking(move || {
            let next = init.step(&server_token)?;
            Ok((init, next))
        })
        .await?;
        init = back;
        match (res.major, next) {
            (0, None) => {
                let mech = init.finish();
                let verf = reply.verf.ok_or("INIT reply without a verifier")?;
                check_reply_verf(&verf, res.seq_window, &mech).map_err(|e| {
                    format!("the server's INIT reply failed its verifier ({e}): not the server asked for")
                })?;
                return Ok(Sealer {
                    mech: Box::new(mech),
                    handle,
                    service: target.service,
                    next_seq: 1,
                    window: res.seq_window,
                });
            }
            (1, Some(t)) => token = t,
            (major, _) => {
                return Err(format!(
                    "the Kerberos exchange with {} did not end together (server major {major})",
                    target.principal
                ))
            }
        }
    }
    Err(format!("no context after {MAX_ROUNDS} rounds"))
}

/// Runs a GSS-API step off the runtime, on a thread of its own: it may wait for the
/// KDC, and a runtime waits for its blocking pool when it shuts down (a silent KDC held
/// a stopped run 6 s), never for a detached thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("dbio-gss".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| format!("cannot start a GSS-API step: {e}"))?;
    rx.await
        .map_err(|_| "the GSS-API step ended without an answer".to_string())?
}
