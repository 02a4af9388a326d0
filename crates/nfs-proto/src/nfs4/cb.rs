//! The back channel (RFC 8881 section 20): CB_COMPOUND calls the server sends the client
//! over a session's connection, and their replies. A pNFS client needs CB_SEQUENCE,
//! CB_LAYOUTRECALL (the server moved the data: fetch the layout again) and
//! CB_NOTIFY_DEVICEID (a data server's address changed or went away); CB_RECALL (a
//! delegation) and CB_RECALL_ANY are decoded too. An operation this codec does not
//! decode ends the decoding: it is answered NFS4ERR_NOTSUPP and nothing after it is
//! evaluated, as the RFC has a server do with an op it does not support.
//!
//! The other direction (encoding the call, decoding the reply) serves test servers and
//! round-trip tests.

use super::status::Nfsstat4;
use super::types::{
    Bitmap4, DeviceId, Fh4, Fsid, LayoutIomode, LayoutType, SessionId, Stateid, Utf8, MAX_OPS,
};
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
/// Most `notify4` entries, and bytes of one entry's values, in a CB_NOTIFY_DEVICEID.
const MAX_NOTIFY: usize = 1024;
const MAX_NOTIFY_BYTES: usize = 64 << 10;

/// `notify_deviceid_type4` bits of a `notify4` mask.
pub mod notify_deviceid {
    pub const CHANGE: u32 = 1;
    pub const DELETE: u32 = 2;
}

/// One CB_NOTIFY_DEVICEID notice: a device's address changed or it is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceNotice {
    pub layout_type: LayoutType,
    pub deviceid: DeviceId,
    /// `Some(immediate)` for NOTIFY_DEVICEID4_CHANGE (immediate: the old address is
    /// unusable now), `None` for NOTIFY_DEVICEID4_DELETE.
    pub change: Option<bool>,
}

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
    /// CB_NOTIFY_DEVICEID: the notices, in the order sent.
    NotifyDeviceid(Vec<DeviceNotice>),
    /// CB_RECALL_ANY: keep at most `keep` objects of the types in `mask`
    /// (`RCA4_TYPE_MASK_*` bits), return the rest.
    RecallAny { keep: u32, mask: Bitmap4 },
    /// An op this codec does not decode (its number); nothing after it was decoded.
    Unsupported(u32),
}

/// `RCA4_TYPE_MASK_*` bits of CB_RECALL_ANY.
pub mod recall_any {
    pub const RDATA_DLG: u32 = 0;
    pub const WDATA_DLG: u32 = 1;
    pub const FILE_LAYOUT: u32 = 8;
}

impl CbOp {
    /// The op's number.
    pub fn opnum(&self) -> u32 {
        match self {
            CbOp::Sequence { .. } => cb_op::SEQUENCE,
            CbOp::LayoutRecall { .. } => cb_op::LAYOUTRECALL,
            CbOp::Recall { .. } => cb_op::RECALL,
            CbOp::NotifyDeviceid(_) => cb_op::NOTIFY_DEVICEID,
            CbOp::RecallAny { .. } => cb_op::RECALL_ANY,
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
        cb_op::NOTIFY_DEVICEID => {
            let lists = d.array("notify4<>", MAX_NOTIFY, 8, |d| {
                let mask = Bitmap4::decode(d)?;
                let vals = d.opaque("notifylist4", MAX_NOTIFY_BYTES)?;
                Ok((mask, vals))
            })?;
            let mut notices = Vec::new();
            for (mask, vals) in lists {
                decode_device_notices(mask, vals, &mut notices)?;
            }
            CbOp::NotifyDeviceid(notices)
        }
        cb_op::RECALL_ANY => CbOp::RecallAny {
            keep: d.u32()?,
            mask: d.decode()?,
        },
        other => CbOp::Unsupported(other),
    })
}

/// The values of one `notify4`: one entry per bit of `mask`, in ascending bit order
/// (RFC 8881 20.12); a bit this codec does not know cannot be skipped, so it is an error.
fn decode_device_notices(
    mask: Bitmap4,
    vals: &[u8],
    out: &mut Vec<DeviceNotice>,
) -> dbio_xdr::Result<()> {
    let mut d = Decoder::new(vals);
    for bit in mask.iter() {
        let change = match bit {
            notify_deviceid::CHANGE => true,
            notify_deviceid::DELETE => false,
            other => return Err(Decoder::bad_discriminant("notify_deviceid_type4", 0, other)),
        };
        if out.len() >= MAX_NOTIFY {
            return Err(XdrError::TooLong {
                item: "CB_NOTIFY_DEVICEID notices",
                offset: 0,
                len: out.len() as u64 + 1,
                bound: MAX_NOTIFY,
            });
        }
        let layout_type = d.decode()?;
        let deviceid = d.array_fixed::<16>("deviceid4")?;
        let change = if change { Some(d.bool()?) } else { None };
        out.push(DeviceNotice {
            layout_type,
            deviceid,
            change,
        });
    }
    d.finish("notifylist4")
}

impl XdrEncode for CbOp {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u32(self.opnum());
        match self {
            CbOp::Sequence {
                sessionid,
                sequenceid,
                slotid,
                highest_slotid,
                cachethis,
                referring,
            } => {
                sessionid.encode(out);
                out.put_u32(*sequenceid);
                out.put_u32(*slotid);
                out.put_u32(*highest_slotid);
                out.put_xdr_bool(*cachethis);
                out.put_array(referring, |o, r| {
                    r.sessionid.encode(o);
                    o.put_array(&r.calls, |o, (seq, slot)| {
                        o.put_u32(*seq);
                        o.put_u32(*slot);
                    });
                });
            }
            CbOp::LayoutRecall {
                layout_type,
                iomode,
                changed,
                recall,
            } => {
                layout_type.encode(out);
                iomode.encode(out);
                out.put_xdr_bool(*changed);
                match recall {
                    LayoutRecall::File {
                        fh,
                        offset,
                        length,
                        stateid,
                    } => {
                        out.put_u32(1);
                        fh.encode(out);
                        out.put_u64(*offset);
                        out.put_u64(*length);
                        stateid.encode(out);
                    }
                    LayoutRecall::Fsid(fsid) => {
                        out.put_u32(2);
                        fsid.encode(out);
                    }
                    LayoutRecall::All => out.put_u32(3),
                }
            }
            CbOp::Recall {
                stateid,
                truncate,
                fh,
            } => {
                stateid.encode(out);
                out.put_xdr_bool(*truncate);
                fh.encode(out);
            }
            CbOp::NotifyDeviceid(notices) => {
                // One notify4 per notice: a mask holds each type once.
                out.put_array(notices, |o, n| {
                    let bit = match n.change {
                        Some(_) => notify_deviceid::CHANGE,
                        None => notify_deviceid::DELETE,
                    };
                    Bitmap4::from_bits(&[bit]).encode(o);
                    let mut vals = Vec::with_capacity(24);
                    n.layout_type.encode(&mut vals);
                    vals.put_slice(&n.deviceid);
                    if let Some(immediate) = n.change {
                        vals.put_xdr_bool(immediate);
                    }
                    o.put_opaque(&vals);
                });
            }
            CbOp::RecallAny { keep, mask } => {
                out.put_u32(*keep);
                mask.encode(out);
            }
            CbOp::Unsupported(_) => {}
        }
    }
}

/// Append `CB_COMPOUND4args` (what a server sends; for test servers).
pub fn encode_cb_compound<B: BufMut>(out: &mut B, tag: &[u8], callback_ident: u32, ops: &[CbOp]) {
    out.put_opaque(tag);
    out.put_u32(1);
    out.put_u32(callback_ident);
    out.put_array(ops, |o, op| op.encode(o));
}

/// Decode a CB_COMPOUND call's arguments (the RPC call's body after its header).
/// Decoding stops after an [`CbOp::Unsupported`] op; otherwise trailing bytes are an
/// error.
pub fn decode_cb_compound(args: &[u8]) -> Result<CbCompound<'_>, XdrError> {
    let mut d = Decoder::new(args);
    let tag = Utf8::decode(&mut d)?;
    let minorversion = d.u32()?;
    let callback_ident = d.u32()?;
    let n = d.count("CB_COMPOUND argarray", MAX_OPS, 4)?;
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

/// A decoded `CB_COMPOUND4res` (what a server reads; for test servers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CbCompoundRes<'a> {
    pub status: Nfsstat4,
    pub tag: Utf8<'a>,
    pub results: Vec<CbResult>,
}

/// Decode a CB_COMPOUND reply's results. Every result but a successful CB_SEQUENCE is
/// a status alone (the client answers nothing else with a body).
pub fn decode_cb_compound_res(res: &[u8]) -> Result<CbCompoundRes<'_>, XdrError> {
    let mut d = Decoder::new(res);
    let status = d.decode()?;
    let tag = Utf8::decode(&mut d)?;
    let results = d.array("CB_COMPOUND resarray", MAX_OPS, 8, |d| {
        let op = d.u32()?;
        let status: Nfsstat4 = d.decode()?;
        Ok(match (op, status) {
            (cb_op::SEQUENCE, Nfsstat4::Ok) => CbResult::Sequence {
                sessionid: d.decode()?,
                sequenceid: d.u32()?,
                slotid: d.u32()?,
                highest_slotid: d.u32()?,
                target_highest_slotid: d.u32()?,
            },
            (op, status) => CbResult::Status(op, status),
        })
    })?;
    d.finish("CB_COMPOUND4res")?;
    Ok(CbCompoundRes {
        status,
        tag,
        results,
    })
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
