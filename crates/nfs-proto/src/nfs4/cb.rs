//! The back channel (RFC 8881 section 20): CB_COMPOUND calls the server sends the client
//! over a session's connection, and their replies. A pNFS client needs CB_SEQUENCE and
//! CB_LAYOUTRECALL (the server moved the data: fetch the layout again); CB_RECALL (a
//! delegation) is decoded too. An operation this codec does not decode ends the
//! decoding: it is answered NFS4ERR_NOTSUPP and nothing after it is evaluated, as the
//! RFC has a server do with an op it does not support.

use super::status::Nfsstat4;
use super::types::{Fh4, Fsid, LayoutIomode, LayoutType, SessionId, Stateid, Utf8, MAX_OPS};
use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrError, XdrPut};

/// CB procedure NULL.
pub const CB_PROC_NULL: u32 = 0;
/// CB procedure CB_COMPOUND.
pub const CB_PROC_COMPOUND: u32 = 1;
/// Version of the callback program (its number is the `cb_program` of CREATE_SESSION).
pub const CB_VERSION: u32 = 1;

/// Back-channel operation numbers (`nfs_cb_opnum4`).
pub mod cb_op {
    pub const GETATTR: u32 = 3;
    pub const RECALL: u32 = 4;
    pub const LAYOUTRECALL: u32 = 5;
    pub const NOTIFY: u32 = 6;
    pub const PUSH_DELEG: u32 = 7;
    pub const RECALL_ANY: u32 = 8;
    pub const RECALLABLE_OBJ_AVAIL: u32 = 9;
    pub const RECALL_SLOT: u32 = 10;
    pub const SEQUENCE: u32 = 11;
    pub const WANTS_CANCELLED: u32 = 12;
    pub const NOTIFY_LOCK: u32 = 13;
    pub const NOTIFY_DEVICEID: u32 = 14;
    pub const ILLEGAL: u32 = 10044;
}

/// Most referring calls accepted in a CB_SEQUENCE.
const MAX_REFERRING: usize = 1024;

/// `referring_call_list4`: calls of the fore channel that this callback refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferringCalls {
    pub sessionid: SessionId,
    /// (sequenceid, slotid) pairs.
    pub calls: Vec<(u32, u32)>,
}

/// `layoutrecall4`: what a CB_LAYOUTRECALL recalls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutRecall {
    /// LAYOUTRECALL4_FILE: a range of one file's layout.
    File {
        fh: Fh4,
        offset: u64,
        length: u64,
        stateid: Stateid,
    },
    /// LAYOUTRECALL4_FSID: every layout of a file system.
    Fsid(Fsid),
    /// LAYOUTRECALL4_ALL: every layout.
    All,
}

/// One back-channel operation's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CbOp {
    Sequence {
        sessionid: SessionId,
        sequenceid: u32,
        slotid: u32,
        highest_slotid: u32,
        cachethis: bool,
        referring: Vec<ReferringCalls>,
    },
    LayoutRecall {
        layout_type: LayoutType,
        iomode: LayoutIomode,
        /// Whether the layout changed (the client must not use it for I/O any more).
        changed: bool,
        recall: LayoutRecall,
    },
    Recall {
        stateid: Stateid,
        truncate: bool,
        fh: Fh4,
    },
    /// An op this codec does not decode (its number); nothing after it was decoded.
    Unsupported(u32),
}

impl CbOp {
    /// The op's number.
    pub fn opnum(&self) -> u32 {
        match self {
            CbOp::Sequence { .. } => cb_op::SEQUENCE,
            CbOp::LayoutRecall { .. } => cb_op::LAYOUTRECALL,
            CbOp::Recall { .. } => cb_op::RECALL,
            CbOp::Unsupported(n) => *n,
        }
    }
}

/// A decoded `CB_COMPOUND4args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CbCompound<'a> {
    pub tag: Utf8<'a>,
    pub minorversion: u32,
    pub callback_ident: u32,
    pub ops: Vec<CbOp>,
}

fn decode_cb_op(d: &mut Decoder<'_>) -> dbio_xdr::Result<CbOp> {
    let op = d.u32()?;
    Ok(match op {
        cb_op::SEQUENCE => CbOp::Sequence {
            sessionid: d.decode()?,
            sequenceid: d.u32()?,
            slotid: d.u32()?,
            highest_slotid: d.u32()?,
            cachethis: d.bool()?,
            referring: d.array("referring_call_list4<>", MAX_REFERRING, 20, |d| {
                Ok(ReferringCalls {
                    sessionid: d.decode()?,
                    calls: d.array("referring_call4<>", MAX_REFERRING, 8, |d| {
                        Ok((d.u32()?, d.u32()?))
                    })?,
                })
            })?,
        },
        cb_op::LAYOUTRECALL => {
            let layout_type = d.decode()?;
            let iomode = d.decode()?;
            let changed = d.bool()?;
            let at = d.position();
            let recall = match d.u32()? {
                1 => LayoutRecall::File {
                    fh: d.decode()?,
                    offset: d.u64()?,
                    length: d.u64()?,
                    stateid: d.decode()?,
                },
                2 => LayoutRecall::Fsid(d.decode()?),
                3 => LayoutRecall::All,
                v => return Err(Decoder::bad_discriminant("layoutrecall_type4", at, v)),
            };
            CbOp::LayoutRecall {
                layout_type,
                iomode,
                changed,
                recall,
            }
        }
        cb_op::RECALL => CbOp::Recall {
            stateid: d.decode()?,
            truncate: d.bool()?,
            fh: d.decode()?,
        },
        other => CbOp::Unsupported(other),
    })
}

/// Decode a CB_COMPOUND call's arguments (the RPC call's body after its header).
/// Decoding stops after an [`CbOp::Unsupported`] op; otherwise trailing bytes are an
/// error.
pub fn decode_cb_compound(args: &[u8]) -> Result<CbCompound<'_>, XdrError> {
    let mut d = Decoder::new(args);
    let tag = Utf8::decode(&mut d)?;
    let minorversion = d.u32()?;
    let callback_ident = d.u32()?;
    let at = d.position();
    let n = d.u32()? as usize;
    if n > MAX_OPS {
        return Err(XdrError::TooLong {
            item: "CB_COMPOUND argarray",
            offset: at,
            len: n as u64,
            bound: MAX_OPS,
        });
    }
    if n.saturating_mul(4) > d.remaining() {
        return Err(XdrError::Truncated {
            item: "CB_COMPOUND argarray",
            offset: at,
            need: n as u64 * 4,
            remaining: d.remaining(),
        });
    }
    let mut ops = Vec::with_capacity(n);
    for _ in 0..n {
        let op = decode_cb_op(&mut d)?;
        let stop = matches!(op, CbOp::Unsupported(_));
        ops.push(op);
        if stop {
            return Ok(CbCompound {
                tag,
                minorversion,
                callback_ident,
                ops,
            });
        }
    }
    d.finish("CB_COMPOUND4args")?;
    Ok(CbCompound {
        tag,
        minorversion,
        callback_ident,
        ops,
    })
}

/// The client's answer to one back-channel op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CbResult {
    /// CB_SEQUENCE accepted: the slot table the client offers.
    Sequence {
        sessionid: SessionId,
        sequenceid: u32,
        slotid: u32,
        highest_slotid: u32,
        target_highest_slotid: u32,
    },
    /// Any op answered with a status only (CB_LAYOUTRECALL, CB_RECALL, failures:
    /// NFS4ERR_NOMATCHING_LAYOUT, NFS4ERR_NOTSUPP for an unsupported op, ...).
    Status(u32, Nfsstat4),
}

impl XdrEncode for CbResult {
    fn encode<B: BufMut>(&self, out: &mut B) {
        match self {
            CbResult::Sequence {
                sessionid,
                sequenceid,
                slotid,
                highest_slotid,
                target_highest_slotid,
            } => {
                out.put_u32(cb_op::SEQUENCE);
                Nfsstat4::Ok.encode(out);
                sessionid.encode(out);
                out.put_u32(*sequenceid);
                out.put_u32(*slotid);
                out.put_u32(*highest_slotid);
                out.put_u32(*target_highest_slotid);
            }
            CbResult::Status(op, status) => {
                out.put_u32(*op);
                status.encode(out);
            }
        }
    }
}

/// Append a `CB_COMPOUND4res`: the status (that of the last result), the tag of the
/// call, and the results.
pub fn encode_cb_compound_res<B: BufMut>(out: &mut B, tag: &[u8], results: &[CbResult]) {
    let status = match results.last() {
        Some(CbResult::Status(_, s)) => *s,
        _ => Nfsstat4::Ok,
    };
    status.encode(out);
    out.put_opaque(tag);
    out.put_array(results, |o, r| r.encode(o));
}
