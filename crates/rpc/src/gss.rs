//! RPCSEC_GSS version 1 (RFC 2203): the credential, the context-creation reply, the call
//! and reply verifiers, and the integrity and privacy bodies.
//!
//! Pure codec: the GSS-API mechanism (Kerberos from the system's library) sits behind
//! [`GssMech`], so nothing here does cryptography and the layout is tested with a fake.

use crate::auth::{OpaqueAuth, MAX_AUTH_BYTES};
use crate::msg::{CALL, RPC_VERSION};
use dbio_xdr::{BufMut, Decoder, XdrError, XdrPut};
use thiserror::Error;

/// Flavor number of RPCSEC_GSS.
pub const RPCSEC_GSS: u32 = 6;
/// The only version of RPCSEC_GSS defined by RFC 2203.
pub const RPCSEC_GSS_VERS_1: u32 = 1;
/// Sequence numbers must stay below this (RFC 2203 §5.3.3.1).
pub const MAXSEQ: u32 = 0x8000_0000;
/// Longest context handle: the credential body holds it beside four words and its
/// length, within the 400 bytes of an `opaque_auth`.
pub const MAX_HANDLE: usize = MAX_AUTH_BYTES - 20;
/// Longest context-creation token accepted from a server; Kerberos AP-REP tokens are a
/// few hundred bytes, so this only keeps a hostile length from costing memory.
pub const MAX_TOKEN: usize = 64 * 1024;

/// `rpc_gss_proc_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GssProc {
    Data = 0,
    Init = 1,
    ContinueInit = 2,
    Destroy = 3,
}

/// `rpc_gss_service_t`: krb5, krb5i, krb5p.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GssService {
    None = 1,
    Integrity = 2,
    Privacy = 3,
}

/// Why a GSS message cannot be built or accepted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GssError {
    #[error("rpcsec_gss: {0}")]
    Xdr(#[from] XdrError),
    #[error("rpcsec_gss: version {0}, only 1 is known")]
    Version(u32),
    #[error("rpcsec_gss: context handle of {0} bytes exceeds {MAX_HANDLE}")]
    HandleTooLong(usize),
    #[error("rpcsec_gss: sequence number {0} is not below MAXSEQ")]
    SeqTooLarge(u32),
    #[error("rpcsec_gss: body carries sequence number {got}, the call used {expected}")]
    SeqMismatch { expected: u32, got: u32 },
    #[error("rpcsec_gss: verifier of flavor {0}, expected RPCSEC_GSS")]
    VerifierFlavor(u32),
    #[error("rpcsec_gss: mechanism: {0}")]
    Mech(String),
}

/// The GSS-API operations RPCSEC_GSS needs on an established context. Errors are the
/// mechanism's own words; privacy wraps with confidentiality requested.
pub trait GssMech {
    fn get_mic(&self, msg: &[u8]) -> Result<Vec<u8>, GssError>;
    fn verify_mic(&self, msg: &[u8], mic: &[u8]) -> Result<(), GssError>;
    fn wrap(&self, msg: &[u8]) -> Result<Vec<u8>, GssError>;
    fn unwrap(&self, token: &[u8]) -> Result<Vec<u8>, GssError>;
}

/// `rpc_gss_cred_vers_1_t`, borrowing the handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GssCred<'a> {
    pub proc_: GssProc,
    pub seq_num: u32,
    pub service: GssService,
    pub handle: &'a [u8],
}

impl<'a> GssCred<'a> {
    /// Check what the peer would reject anyway, before anything is sent.
    pub fn validate(&self) -> Result<(), GssError> {
        if self.handle.len() > MAX_HANDLE {
            return Err(GssError::HandleTooLong(self.handle.len()));
        }
        if self.seq_num >= MAXSEQ {
            return Err(GssError::SeqTooLarge(self.seq_num));
        }
        Ok(())
    }

    /// Encode the body (`rpc_gss_cred_t` with version 1), without flavor and length.
    pub fn encode_body<B: BufMut>(&self, out: &mut B) {
        out.put_u32(RPCSEC_GSS_VERS_1);
        out.put_u32(self.proc_ as u32);
        out.put_u32(self.seq_num);
        out.put_u32(self.service as u32);
        out.put_opaque(self.handle);
    }

    /// Decode a credential body; the handle is borrowed and at most [`MAX_HANDLE`] bytes.
    pub fn decode_body(body: &'a [u8]) -> Result<Self, GssError> {
        let mut d = Decoder::new(body);
        let version = d.u32()?;
        if version != RPCSEC_GSS_VERS_1 {
            return Err(GssError::Version(version));
        }
        let proc_ = d.enum_with("rpc_gss_proc", |v| match v {
            0 => Some(GssProc::Data),
            1 => Some(GssProc::Init),
            2 => Some(GssProc::ContinueInit),
            3 => Some(GssProc::Destroy),
            _ => None,
        })?;
        let seq_num = d.u32()?;
        let service = d.enum_with("rpc_gss_service", |v| match v {
            1 => Some(GssService::None),
            2 => Some(GssService::Integrity),
            3 => Some(GssService::Privacy),
            _ => None,
        })?;
        let handle = d.opaque("rpc_gss handle", MAX_HANDLE)?;
        d.finish("rpc_gss_cred")?;
        Ok(GssCred {
            proc_,
            seq_num,
            service,
            handle,
        })
    }
}

/// `rpc_gss_init_res`: the server's answer to INIT or CONTINUE_INIT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GssInitRes {
    pub handle: Vec<u8>,
    pub major: u32,
    pub minor: u32,
    pub seq_window: u32,
    pub token: Vec<u8>,
}

impl GssInitRes {
    /// Decode the procedure results of an INIT reply; lengths are bounded before any copy.
    pub fn decode(results: &[u8]) -> Result<Self, GssError> {
        let mut d = Decoder::new(results);
        let r = GssInitRes {
            handle: d.opaque_vec("rpc_gss_init_res handle", MAX_HANDLE)?,
            major: d.u32()?,
            minor: d.u32()?,
            seq_window: d.u32()?,
            token: d.opaque_vec("rpc_gss_init_res token", MAX_TOKEN)?,
        };
        d.finish("rpc_gss_init_res")?;
        Ok(r)
    }

    /// Encode (for test servers and round trips).
    pub fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_opaque(&self.handle);
        out.put_u32(self.major);
        out.put_u32(self.minor);
        out.put_u32(self.seq_window);
        out.put_opaque(&self.token);
    }
}

/// Append a call header with an RPCSEC_GSS credential and its verifier. For DATA and
/// DESTROY the verifier is the MIC of the header from the xid through the credential
/// (RFC 2203 §5.3.1); INIT and CONTINUE_INIT carry AUTH_NONE, as there is no context yet.
#[allow(clippy::too_many_arguments)]
pub fn encode_gss_call<B: BufMut + AsRef<[u8]>>(
    out: &mut B,
    xid: u32,
    prog: u32,
    vers: u32,
    proc_: u32,
    cred: &GssCred<'_>,
    mech: &dyn GssMech,
) -> Result<(), GssError> {
    cred.validate()?;
    let start = out.as_ref().len();
    out.put_u32(xid);
    out.put_u32(CALL);
    out.put_u32(RPC_VERSION);
    out.put_u32(prog);
    out.put_u32(vers);
    out.put_u32(proc_);
    out.put_u32(RPCSEC_GSS);
    out.put_opaque_len(cred_body_len(cred));
    cred.encode_body(out);
    match cred.proc_ {
        GssProc::Init | GssProc::ContinueInit => OpaqueAuth::NONE.encode(out),
        GssProc::Data | GssProc::Destroy => {
            let mic = mech.get_mic(&out.as_ref()[start..])?;
            OpaqueAuth {
                flavor: RPCSEC_GSS,
                body: &mic,
            }
            .encode(out);
        }
    }
    Ok(())
}

fn cred_body_len(cred: &GssCred<'_>) -> usize {
    20 + cred.handle.len() + dbio_xdr::padding(cred.handle.len())
}

/// What a reply verifier's MIC covers: the XDR of the call's seq_num, or of the
/// seq_window in the reply to a successful INIT (RFC 2203 §5.2.3.1, §5.3.3.2).
pub fn reply_verf_input(n: u32) -> [u8; 4] {
    n.to_be_bytes()
}

/// Check a reply verifier against the sequence number (or window) it must sign.
pub fn check_reply_verf(verf: &OpaqueAuth<'_>, n: u32, mech: &dyn GssMech) -> Result<(), GssError> {
    if verf.flavor != RPCSEC_GSS {
        return Err(GssError::VerifierFlavor(verf.flavor));
    }
    mech.verify_mic(&reply_verf_input(n), verf.body)
}

/// The body both protected services cover: the sequence number, then the arguments.
fn seq_and_args(seq_num: u32, args: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(4 + args.len());
    body.put_u32(seq_num);
    body.put_slice(args);
    body
}

/// Append `rpc_gss_integ_data` for `args`: databody_integ is seq_num then the
/// arguments, and the checksum is its MIC.
pub fn encode_integ<B: BufMut>(
    out: &mut B,
    seq_num: u32,
    args: &[u8],
    mech: &dyn GssMech,
) -> Result<(), GssError> {
    let body = seq_and_args(seq_num, args);
    let mic = mech.get_mic(&body)?;
    out.put_opaque(&body);
    out.put_opaque(&mic);
    Ok(())
}

/// Decode `rpc_gss_integ_data`, verify the checksum and the sequence number, and return
/// the arguments or results it carries (borrowed from `body`).
pub fn decode_integ<'a>(
    body: &'a [u8],
    seq_num: u32,
    mech: &dyn GssMech,
) -> Result<&'a [u8], GssError> {
    let mut d = Decoder::new(body);
    let data = d.opaque("databody_integ", body.len())?;
    let mic = d.opaque("rpc_gss_integ checksum", MAX_TOKEN)?;
    d.finish("rpc_gss_integ_data")?;
    mech.verify_mic(data, mic)?;
    split_seq(data, seq_num)
}

/// Append `rpc_gss_priv_data`: seq_num and the arguments, wrapped with confidentiality.
pub fn encode_priv<B: BufMut>(
    out: &mut B,
    seq_num: u32,
    args: &[u8],
    mech: &dyn GssMech,
) -> Result<(), GssError> {
    out.put_opaque(&mech.wrap(&seq_and_args(seq_num, args))?);
    Ok(())
}

/// Decode `rpc_gss_priv_data`, unwrap it, check the sequence number, and return what
/// follows it.
pub fn decode_priv(body: &[u8], seq_num: u32, mech: &dyn GssMech) -> Result<Vec<u8>, GssError> {
    let mut d = Decoder::new(body);
    let token = d.opaque("databody_priv", body.len())?;
    d.finish("rpc_gss_priv_data")?;
    let mut plain = mech.unwrap(token)?;
    split_seq(&plain, seq_num)?;
    plain.drain(..4);
    Ok(plain)
}

fn split_seq(data: &[u8], expected: u32) -> Result<&[u8], GssError> {
    let mut d = Decoder::new(data);
    let got = d.u32()?;
    if got != expected {
        return Err(GssError::SeqMismatch { expected, got });
    }
    Ok(d.rest())
}

/// Where a call built by an upper layer splits: its program, version and procedure, and
/// the offset of its arguments (after whatever credential and verifier it carries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLayout {
    pub prog: u32,
    pub vers: u32,
    pub proc_: u32,
    pub args: usize,
}

/// Reads the layout of an encoded call header (xid first), bounded by the buffer.
pub fn call_layout(head: &[u8]) -> Result<CallLayout, GssError> {
    let mut d = Decoder::new(head);
    let _xid = d.u32()?;
    let _mtype = d.u32()?;
    let _rpcvers = d.u32()?;
    let prog = d.u32()?;
    let vers = d.u32()?;
    let proc_ = d.u32()?;
    OpaqueAuth::decode(&mut d)?;
    OpaqueAuth::decode(&mut d)?;
    Ok(CallLayout {
        prog,
        vers,
        proc_,
        args: d.position(),
    })
}

/// What a reply to an RPCSEC_GSS call says, read far enough to check and open it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyShape<'a> {
    /// MSG_ACCEPTED: the verifier, the accept_stat and the offset of what follows it.
    Accepted {
        verf: OpaqueAuth<'a>,
        stat: u32,
        body: usize,
    },
    /// MSG_DENIED with AUTH_ERROR and this auth_stat.
    AuthError(u32),
    /// Any other refusal (RPC_MISMATCH).
    Denied,
}

/// `RPCSEC_GSS_CREDPROBLEM`: the server no longer has the context's credential.
pub const CREDPROBLEM: u32 = 13;
/// `RPCSEC_GSS_CTXPROBLEM`: the server lost the context, or it expired.
pub const CTXPROBLEM: u32 = 14;

/// Reads a reply's header (xid first): bounded, no copy.
pub fn reply_shape(record: &[u8]) -> Result<ReplyShape<'_>, GssError> {
    let mut d = Decoder::new(record);
    let _xid = d.u32()?;
    let _mtype = d.u32()?;
    match d.u32()? {
        0 => {
            let verf = OpaqueAuth::decode(&mut d)?;
            let stat = d.u32()?;
            Ok(ReplyShape::Accepted {
                verf,
                stat,
                body: d.position(),
            })
        }
        _ => match d.u32()? {
            1 => Ok(ReplyShape::AuthError(d.u32()?)),
            _ => Ok(ReplyShape::Denied),
        },
    }
}

#[cfg(test)]
#[path = "gss_tests.rs"]
mod tests;
