//! RPC messages (RFC 5531 section 9): call headers and replies.
//!
//! Calls are encoded straight into the caller's send buffer; replies are decoded from a
//! complete record and hand back the procedure results as a borrowed slice.

use crate::auth::{Credential, OpaqueAuth};
use dbio_xdr::{BufMut, Decoder, XdrEncode, XdrError};
use std::fmt;
use thiserror::Error;

/// ONC RPC protocol version carried in every call.
pub const RPC_VERSION: u32 = 2;
/// `msg_type` CALL.
pub const CALL: u32 = 0;
/// `msg_type` REPLY.
pub const REPLY: u32 = 1;

/// Message direction read by [`peek`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsgType {
    Call,
    Reply,
}

/// Read the xid and message type at the start of a record without decoding the rest, so
/// a transport can route a reply to its waiting call.
pub fn peek(record: &[u8]) -> Result<(u32, MsgType), RpcError> {
    let mut d = Decoder::new(record);
    let xid = d.u32()?;
    let mtype = d.enum_with("msg_type", |v| match v {
        CALL => Some(MsgType::Call),
        REPLY => Some(MsgType::Reply),
        _ => None,
    })?;
    Ok((xid, mtype))
}

/// Append a call header: xid, CALL, rpcvers 2, program, version, procedure, cred, verf.
/// The procedure arguments follow it in the same buffer.
pub fn encode_call<B: BufMut>(
    out: &mut B,
    xid: u32,
    prog: u32,
    vers: u32,
    proc_: u32,
    cred: &Credential,
) {
    out.put_u32(xid);
    out.put_u32(CALL);
    out.put_u32(RPC_VERSION);
    out.put_u32(prog);
    out.put_u32(vers);
    out.put_u32(proc_);
    out.put_slice(cred.wire());
}

/// Append a complete call record: fragment header, call header and `args`, as one last
/// fragment. Several calls can be appended to the same buffer and sent with one write.
pub fn encode_call_record<B, A>(
    out: &mut B,
    xid: u32,
    prog: u32,
    vers: u32,
    proc_: u32,
    cred: &Credential,
    args: &A,
) where
    B: BufMut + AsRef<[u8]> + AsMut<[u8]>,
    A: XdrEncode + ?Sized,
{
    let start = crate::record::begin_record(out);
    encode_call(out, xid, prog, vers, proc_, cred);
    args.encode(out);
    crate::record::finish_record(out, start, 0);
}

/// A decoded call header (used by test servers and to check encoders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call<'a> {
    pub xid: u32,
    pub prog: u32,
    pub vers: u32,
    pub proc_: u32,
    pub cred: OpaqueAuth<'a>,
    pub verf: OpaqueAuth<'a>,
    /// The procedure arguments.
    pub args: &'a [u8],
}

/// Decode a call message. An rpcvers other than 2 is reported as a bad discriminant.
pub fn decode_call(record: &[u8]) -> Result<Call<'_>, RpcError> {
    let mut d = Decoder::new(record);
    let xid = d.u32()?;
    d.enum_with("msg_type", |v| (v == CALL).then_some(()))?;
    d.enum_with("rpcvers", |v| (v == RPC_VERSION).then_some(()))?;
    Ok(Call {
        xid,
        prog: d.u32()?,
        vers: d.u32()?,
        proc_: d.u32()?,
        cred: OpaqueAuth::decode(&mut d)?,
        verf: OpaqueAuth::decode(&mut d)?,
        args: d.rest(),
    })
}

/// `auth_stat`: why the server rejected the credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthStat {
    Ok,
    BadCred,
    RejectedCred,
    BadVerf,
    RejectedVerf,
    TooWeak,
    InvalidResp,
    Failed,
    /// A value outside RFC 5531's list (for example an RPCSEC_GSS code).
    Other(u32),
}

impl AuthStat {
    pub fn from_u32(v: u32) -> Self {
        use AuthStat::*;
        match v {
            0 => Ok,
            1 => BadCred,
            2 => RejectedCred,
            3 => BadVerf,
            4 => RejectedVerf,
            5 => TooWeak,
            6 => InvalidResp,
            7 => Failed,
            v => Other(v),
        }
    }

    pub fn to_u32(self) -> u32 {
        use AuthStat::*;
        match self {
            Ok => 0,
            BadCred => 1,
            RejectedCred => 2,
            BadVerf => 3,
            RejectedVerf => 4,
            TooWeak => 5,
            InvalidResp => 6,
            Failed => 7,
            Other(v) => v,
        }
    }
}

impl fmt::Display for AuthStat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AuthStat::*;
        let name = match self {
            Ok => "AUTH_OK",
            BadCred => "AUTH_BADCRED (bad credential)",
            RejectedCred => "AUTH_REJECTEDCRED (client must begin new session)",
            BadVerf => "AUTH_BADVERF (bad verifier)",
            RejectedVerf => "AUTH_REJECTEDVERF (verifier expired or replayed)",
            TooWeak => "AUTH_TOOWEAK (rejected for security reasons)",
            InvalidResp => "AUTH_INVALIDRESP (bogus response verifier)",
            Failed => "AUTH_FAILED (reason unknown)",
            Other(v) => return write!(f, "auth_stat {v}"),
        };
        f.write_str(name)
    }
}

/// A reply in which the server refused to run the procedure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ReplyError {
    #[error("program unavailable on server (PROG_UNAVAIL)")]
    ProgUnavail,
    #[error("program version not supported, server has {low}..={high} (PROG_MISMATCH)")]
    ProgMismatch { low: u32, high: u32 },
    #[error("procedure unavailable (PROC_UNAVAIL)")]
    ProcUnavail,
    #[error("server could not decode the arguments (GARBAGE_ARGS)")]
    GarbageArgs,
    #[error("server system error (SYSTEM_ERR)")]
    SystemErr,
    #[error("rpc version not supported, server has {low}..={high} (RPC_MISMATCH)")]
    RpcMismatch { low: u32, high: u32 },
    #[error("authentication failed: {0}")]
    Auth(AuthStat),
}

/// Errors of this crate's pure codecs.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RpcError {
    /// The message is malformed.
    #[error("malformed rpc message: {0}")]
    Xdr(#[from] XdrError),
    /// A well-formed reply that refuses the call.
    #[error("rpc call xid {xid:#010x} refused: {reason}")]
    Refused { xid: u32, reason: ReplyError },
}

/// A decoded reply: the xid, and the results or why there are none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply<'a> {
    pub xid: u32,
    /// Server verifier of an accepted reply (AUTH_NONE for AUTH_SYS calls).
    pub verf: Option<OpaqueAuth<'a>>,
    /// On SUCCESS, the procedure results (the rest of the record).
    pub outcome: Result<&'a [u8], ReplyError>,
}

impl<'a> Reply<'a> {
    /// The results, or [`RpcError::Refused`].
    pub fn results(&self) -> Result<&'a [u8], RpcError> {
        self.outcome.map_err(|reason| RpcError::Refused {
            xid: self.xid,
            reason,
        })
    }
}

/// Decode a reply message from a complete record.
pub fn decode_reply(record: &[u8]) -> Result<Reply<'_>, RpcError> {
    let mut d = Decoder::new(record);
    let xid = d.u32()?;
    d.enum_with("msg_type", |v| (v == REPLY).then_some(()))?;
    let offset = d.position();
    match d.u32()? {
        0 => decode_accepted(xid, d),
        1 => {
            let offset = d.position();
            let reason = match d.u32()? {
                0 => ReplyError::RpcMismatch {
                    low: d.u32()?,
                    high: d.u32()?,
                },
                1 => ReplyError::Auth(AuthStat::from_u32(d.u32()?)),
                v => return Err(Decoder::bad_discriminant("reject_stat", offset, v).into()),
            };
            Ok(Reply {
                xid,
                verf: None,
                outcome: Err(reason),
            })
        }
        v => Err(Decoder::bad_discriminant("reply_stat", offset, v).into()),
    }
}

fn decode_accepted(xid: u32, mut d: Decoder<'_>) -> Result<Reply<'_>, RpcError> {
    let verf = OpaqueAuth::decode(&mut d)?;
    let offset = d.position();
    let outcome = match d.u32()? {
        0 => Ok(d.rest()),
        1 => Err(ReplyError::ProgUnavail),
        2 => Err(ReplyError::ProgMismatch {
            low: d.u32()?,
            high: d.u32()?,
        }),
        3 => Err(ReplyError::ProcUnavail),
        4 => Err(ReplyError::GarbageArgs),
        5 => Err(ReplyError::SystemErr),
        v => return Err(Decoder::bad_discriminant("accept_stat", offset, v).into()),
    };
    Ok(Reply {
        xid,
        verf: Some(verf),
        outcome,
    })
}

/// Append an accepted SUCCESS reply header (AUTH_NONE verifier); results follow it.
pub fn encode_reply_success<B: BufMut>(out: &mut B, xid: u32) {
    out.put_u32(xid);
    out.put_u32(REPLY);
    out.put_u32(0);
    OpaqueAuth::NONE.encode(out);
    out.put_u32(0);
}

/// Append a complete reply refusing a call with `reason` (for test servers).
pub fn encode_reply_error<B: BufMut>(out: &mut B, xid: u32, reason: ReplyError) {
    out.put_u32(xid);
    out.put_u32(REPLY);
    let accepted = |out: &mut B, stat: u32| {
        out.put_u32(0);
        OpaqueAuth::NONE.encode(out);
        out.put_u32(stat);
    };
    match reason {
        ReplyError::ProgUnavail => accepted(out, 1),
        ReplyError::ProgMismatch { low, high } => {
            accepted(out, 2);
            out.put_u32(low);
            out.put_u32(high);
        }
        ReplyError::ProcUnavail => accepted(out, 3),
        ReplyError::GarbageArgs => accepted(out, 4),
        ReplyError::SystemErr => accepted(out, 5),
        ReplyError::RpcMismatch { low, high } => {
            out.put_u32(1);
            out.put_u32(0);
            out.put_u32(low);
            out.put_u32(high);
        }
        ReplyError::Auth(stat) => {
            out.put_u32(1);
            out.put_u32(1);
            out.put_u32(stat.to_u32());
        }
    }
}
