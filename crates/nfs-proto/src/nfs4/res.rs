//! COMPOUND results: [`OpResult`] per operation and [`decode_compound`], which stops at
//! the first operation that failed and says which one it was.

use super::args::ChannelAttrs;
use super::attr::Fattr;
use super::status::Nfsstat4;
use super::types::{
    decode_impl_id, unsupported, Bitmap4, ChangeInfo, ClientId, Component, Fh4, ImplId,
    LayoutIomode, LayoutType, Opaque, SessionId, StableHow, Stateid, Utf8, Verifier,
    MAX_ATTR_BYTES, MAX_DATA, MAX_ENTRIES, MAX_OPS,
};
use super::Opnum;
use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrError, XdrPut};
use std::fmt;

/// Most layouts accepted in one LAYOUTGET reply.
pub const MAX_LAYOUTS: usize = 64;
/// Largest layout or device-address body accepted.
pub const MAX_BODY: usize = 1 << 20;
/// Most flavours accepted in a SECINFO reply (a server lists a handful).
pub const MAX_FLAVORS: usize = 16;
/// The Kerberos V5 mechanism's OID (1.2.840.113554.1.2.2), DER-encoded with its tag
/// and length as RFC 8881 writes `sec_oid4`; servers (ganesha, Linux) send it without
/// them, the last 9 bytes, and both are taken.
pub const KRB5_OID: [u8; 11] = [
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02,
];

/// One entry of SECINFO's list, as the number the flavour goes by: AUTH_NONE 0,
/// AUTH_SYS 1, Kerberos 390003 (krb5), 390004 (krb5i), 390005 (krb5p) (RFC 2623's
/// pseudo-flavours, which is how MOUNT v3 lists them too); another GSS mechanism
/// `u32::MAX`.
fn secinfo_flavor(d: &mut Decoder<'_>) -> Result<u32, XdrError> {
    let flavor = d.u32()?;
    if flavor != 6 {
        return Ok(flavor);
    }
    let oid = d.opaque("sec_oid4", 64)?;
    let _qop = d.u32()?;
    let at = d.position();
    let service = d.u32()?;
    if !(1..=3).contains(&service) {
        return Err(Decoder::bad_discriminant("rpc_gss_svc_t", at, service));
    }
    Ok(if oid == KRB5_OID || oid == &KRB5_OID[2..] {
        390_002 + service
    } else {
        u32::MAX
    })
}

/// EXCHANGE_ID result (`EXCHANGE_ID4resok`; state protection must be SP4_NONE or
/// SP4_MACH_CRED, whose operation bitmaps are skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeIdOk<'a> {
    pub clientid: ClientId,
    pub sequenceid: u32,
    pub flags: u32,
    pub server_minor_id: u64,
    pub server_major_id: Opaque<'a>,
    pub server_scope: Opaque<'a>,
    pub server_impl_id: Option<ImplId<'a>>,
}

xdr_struct!(
    /// CREATE_SESSION result (`CREATE_SESSION4resok`).
    pub struct CreateSessionOk {
        pub sessionid: SessionId,
        pub sequence: u32,
        pub flags: u32,
        pub fore: ChannelAttrs,
        pub back: ChannelAttrs,
    }
);

/// SEQUENCE result flags (`SEQ4_STATUS_*` in `sr_status_flags`).
pub mod seq4_status {
    pub const CB_PATH_DOWN: u32 = 0x0000_0001;
    pub const CB_GSS_CONTEXTS_EXPIRING: u32 = 0x0000_0002;
    pub const CB_GSS_CONTEXTS_EXPIRED: u32 = 0x0000_0004;
    pub const EXPIRED_ALL_STATE_REVOKED: u32 = 0x0000_0008;
    pub const EXPIRED_SOME_STATE_REVOKED: u32 = 0x0000_0010;
    pub const ADMIN_STATE_REVOKED: u32 = 0x0000_0020;
    pub const RECALLABLE_STATE_REVOKED: u32 = 0x0000_0040;
    pub const LEASE_MOVED: u32 = 0x0000_0080;
    pub const RESTART_RECLAIM_NEEDED: u32 = 0x0000_0100;
    pub const CB_PATH_DOWN_SESSION: u32 = 0x0000_0200;
    pub const BACKCHANNEL_FAULT: u32 = 0x0000_0400;
    pub const DEVID_CHANGED: u32 = 0x0000_0800;
    pub const DEVID_DELETED: u32 = 0x0000_1000;
}

xdr_struct!(
    /// SEQUENCE result (`SEQUENCE4resok`).
    #[derive(Copy)]
    pub struct SequenceOk {
        pub sessionid: SessionId,
        pub sequenceid: u32,
        pub slotid: u32,
        pub highest_slotid: u32,
        pub target_highest_slotid: u32,
        pub status_flags: u32,
    }
);

/// An `nfsace4` (the permissions of a delegation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ace<'a> {
    pub acetype: u32,
    pub flag: u32,
    pub access_mask: u32,
    pub who: Utf8<'a>,
}

impl<'a> XdrDecode<'a> for Ace<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Ok(Ace {
            acetype: d.u32()?,
            flag: d.u32()?,
            access_mask: d.u32()?,
            who: d.decode()?,
        })
    }
}

/// `open_delegation4`: what delegation, if any, the server granted with an OPEN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delegation<'a> {
    /// OPEN_DELEGATE_NONE.
    None,
    /// OPEN_DELEGATE_READ.
    Read {
        stateid: Stateid,
        recall: bool,
        permissions: Ace<'a>,
    },
    /// OPEN_DELEGATE_WRITE (the space limit is skipped).
    Write {
        stateid: Stateid,
        recall: bool,
        permissions: Ace<'a>,
    },
    /// OPEN_DELEGATE_NONE_EXT: none, with the reason (`why_no_delegation4`).
    NoneExt { why: u32 },
}

impl<'a> XdrDecode<'a> for Delegation<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        let offset = d.position();
        match d.u32()? {
            0 => Ok(Delegation::None),
            1 => Ok(Delegation::Read {
                stateid: d.decode()?,
                recall: d.bool()?,
                permissions: d.decode()?,
            }),
            2 => {
                let stateid = d.decode()?;
                let recall = d.bool()?;
                // nfs_space_limit4
                let at = d.position();
                match d.u32()? {
                    1 => {
                        d.u64()?;
                    }
                    2 => {
                        d.u32()?;
                        d.u32()?;
                    }
                    v => return Err(unsupported("limit_by4", at, v)),
                }
                Ok(Delegation::Write {
                    stateid,
                    recall,
                    permissions: d.decode()?,
                })
            }
            3 => {
                let why = d.u32()?;
                // WND4_CONTENTION (1) and WND4_RESOURCE (2) carry a bool.
                if why == 1 || why == 2 {
                    d.bool()?;
                }
                Ok(Delegation::NoneExt { why })
            }
            v => Err(unsupported("open_delegation_type4", offset, v)),
        }
    }
}

/// OPEN result (`OPEN4resok`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenOk<'a> {
    pub stateid: Stateid,
    pub cinfo: ChangeInfo,
    pub rflags: u32,
    pub attrset: Bitmap4,
    pub delegation: Delegation<'a>,
}

/// One READDIR entry. Its attributes are checked when the reply is decoded but kept in
/// wire form (a decoded [`Fattr`] is 800 bytes; an entry on the wire can be 28), so a
/// reply of many small entries cannot make the decoder allocate 30 times its size;
/// [`DirEntry::attrs`] decodes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry<'a> {
    pub cookie: u64,
    pub name: Component<'a>,
    /// The attributes returned.
    pub attr_mask: Bitmap4,
    /// Their values (`attrlist4`), already checked against `attr_mask`.
    pub attr_vals: &'a [u8],
}

impl<'a> DirEntry<'a> {
    /// The entry's attributes.
    pub fn attrs(&self) -> Fattr<'a> {
        // Checked when the entry was decoded, so this cannot fail.
        Fattr::from_parts(self.attr_mask, self.attr_vals).unwrap_or_default()
    }
}

impl<'a> XdrDecode<'a> for DirEntry<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        let cookie = d.u64()?;
        let name = d.decode()?;
        let attr_mask = Bitmap4::decode(d)?;
        let attr_vals = d.opaque("attrlist4", MAX_ATTR_BYTES)?;
        Fattr::from_parts(attr_mask, attr_vals)?;
        Ok(DirEntry {
            cookie,
            name,
            attr_mask,
            attr_vals,
        })
    }
}

/// READDIR result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaddirOk<'a> {
    pub cookieverf: Verifier,
    pub entries: Vec<DirEntry<'a>>,
    pub eof: bool,
}

/// One `layout4` of a LAYOUTGET reply; `body` is the layout-type-specific
/// `loc_body` (for files layouts, [`super::FileLayout::from_body`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout<'a> {
    pub offset: u64,
    pub length: u64,
    pub iomode: LayoutIomode,
    pub layout_type: LayoutType,
    pub body: &'a [u8],
}

/// LAYOUTGET result (`LAYOUTGET4resok`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutgetOk<'a> {
    pub return_on_close: bool,
    pub stateid: Stateid,
    pub layouts: Vec<Layout<'a>>,
}

/// GETDEVICEINFO result: the device address (for files layouts,
/// [`super::FileDsAddr::from_body`]) and the notifications the server will send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetdeviceinfoOk<'a> {
    pub layout_type: LayoutType,
    pub addr_body: &'a [u8],
    pub notification: Bitmap4,
}

/// The result of one successful operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpResult<'a> {
    Access {
        supported: u32,
        access: u32,
    },
    Close(Stateid),
    Delegreturn,
    Commit(Verifier),
    /// CREATE: directory change info and the attributes set.
    Create {
        cinfo: ChangeInfo,
        attrset: Bitmap4,
    },
    Getattr(Box<Fattr<'a>>),
    Getfh(Fh4),
    Lookup,
    /// SECINFO: the flavours accepted, best first, by number (see `secinfo_flavor`).
    Secinfo(Vec<u32>),
    Open(OpenOk<'a>),
    Putfh,
    Putrootfh,
    Savefh,
    /// READ: data borrowed from the reply.
    Read {
        eof: bool,
        data: &'a [u8],
    },
    Readdir(ReaddirOk<'a>),
    Remove(ChangeInfo),
    Rename {
        source: ChangeInfo,
        target: ChangeInfo,
    },
    Setattr(Bitmap4),
    Write {
        count: u32,
        committed: StableHow,
        verifier: Verifier,
    },
    ExchangeId(ExchangeIdOk<'a>),
    CreateSession(CreateSessionOk),
    DestroySession,
    /// BIND_CONN_TO_SESSION: the session, the direction granted ([`super::chan_dir`]) and
    /// whether RDMA mode is used.
    BindConnToSession {
        sessionid: SessionId,
        dir: u32,
        rdma: bool,
    },
    Sequence(SequenceOk),
    DestroyClientid,
    ReclaimComplete,
    Layoutget(LayoutgetOk<'a>),
    Getdeviceinfo(GetdeviceinfoOk<'a>),
    /// LAYOUTCOMMIT: the new file size, if the server changed it.
    Layoutcommit {
        new_size: Option<u64>,
    },
    /// LAYOUTRETURN: the layout stateid, if layouts remain.
    Layoutreturn(Option<Stateid>),
}

impl OpResult<'_> {
    /// The operation this is the result of.
    pub fn opnum(&self) -> Opnum {
        match self {
            OpResult::Access { .. } => Opnum::Access,
            OpResult::Close(_) => Opnum::Close,
            OpResult::Delegreturn => Opnum::Delegreturn,
            OpResult::Commit(_) => Opnum::Commit,
            OpResult::Create { .. } => Opnum::Create,
            OpResult::Getattr(_) => Opnum::Getattr,
            OpResult::Getfh(_) => Opnum::Getfh,
            OpResult::Lookup => Opnum::Lookup,
            OpResult::Secinfo(_) => Opnum::Secinfo,
            OpResult::Open(_) => Opnum::Open,
            OpResult::Putfh => Opnum::Putfh,
            OpResult::Putrootfh => Opnum::Putrootfh,
            OpResult::Savefh => Opnum::Savefh,
            OpResult::Read { .. } => Opnum::Read,
            OpResult::Readdir(_) => Opnum::Readdir,
            OpResult::Remove(_) => Opnum::Remove,
            OpResult::Rename { .. } => Opnum::Rename,
            OpResult::Setattr(_) => Opnum::Setattr,
            OpResult::Write { .. } => Opnum::Write,
            OpResult::ExchangeId(_) => Opnum::ExchangeId,
            OpResult::CreateSession(_) => Opnum::CreateSession,
            OpResult::DestroySession => Opnum::DestroySession,
            OpResult::BindConnToSession { .. } => Opnum::BindConnToSession,
            OpResult::Sequence(_) => Opnum::Sequence,
            OpResult::DestroyClientid => Opnum::DestroyClientid,
            OpResult::ReclaimComplete => Opnum::ReclaimComplete,
            OpResult::Layoutget(_) => Opnum::Layoutget,
            OpResult::Getdeviceinfo(_) => Opnum::Getdeviceinfo,
            OpResult::Layoutcommit { .. } => Opnum::Layoutcommit,
            OpResult::Layoutreturn(_) => Opnum::Layoutreturn,
        }
    }
}

/// The operation that failed in a COMPOUND.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpFailure {
    /// Position in the COMPOUND (0 = first op).
    pub index: usize,
    pub op: Opnum,
    pub status: Nfsstat4,
    /// NFS4ERR_TOOSMALL from GETDEVICEINFO: the `maxcount` that would do.
    pub mincount: Option<u32>,
    /// NFS4ERR_LAYOUTTRYLATER from LAYOUTGET: whether the server will signal when a
    /// layout is available.
    pub will_signal_layout_avail: Option<bool>,
}

impl fmt::Display for OpFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (op {} of the COMPOUND) failed: {}",
            self.op,
            self.index + 1,
            self.status
        )
    }
}

impl std::error::Error for OpFailure {}

/// A reply whose results do not answer the ops that were sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpMismatch {
    /// Position of the first result that does not match.
    pub index: usize,
    /// The op sent at that position (`None`: the reply has more results than ops sent).
    pub sent: Option<Opnum>,
    /// The op answered there (`None`: the reply ends early without a failure).
    pub got: Option<Opnum>,
}

impl fmt::Display for OpMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |o: Option<Opnum>| o.map_or("nothing", Opnum::name);
        write!(
            f,
            "COMPOUND reply does not match the request at op {}: sent {}, answered {}",
            self.index + 1,
            name(self.sent),
            name(self.got)
        )
    }
}

impl std::error::Error for OpMismatch {}

/// A decoded `COMPOUND4res`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompoundRes<'a> {
    /// The COMPOUND's status (that of the last op evaluated).
    pub status: Nfsstat4,
    pub tag: Utf8<'a>,
    /// Results of the ops that succeeded, in order.
    pub results: Vec<OpResult<'a>>,
    /// The op that failed, if one did (the server evaluates no op after it).
    pub failure: Option<OpFailure>,
}

impl<'a> CompoundRes<'a> {
    /// Check that the server answered the ops that were sent (`Compound::opnums`), in
    /// order: every result and the failed op, and, without a failure, all of them.
    pub fn check_ops(&self, sent: impl IntoIterator<Item = Opnum>) -> Result<(), OpMismatch> {
        let mut sent = sent.into_iter();
        let got = self
            .results
            .iter()
            .map(OpResult::opnum)
            .chain(self.failure.map(|f| f.op));
        let mut index = 0;
        for g in got {
            match sent.next() {
                Some(s) if s == g => {}
                s => {
                    return Err(OpMismatch {
                        index,
                        sent: s,
                        got: Some(g),
                    })
                }
            }
            index += 1;
        }
        match (self.failure, sent.next()) {
            (None, Some(s)) => Err(OpMismatch {
                index,
                sent: Some(s),
                got: None,
            }),
            _ => Ok(()),
        }
    }

    /// The results if every op succeeded, else the failure.
    pub fn into_results(self) -> Result<Vec<OpResult<'a>>, OpFailure> {
        match self.failure {
            Some(f) => Err(f),
            None => Ok(self.results),
        }
    }
}

/// Decode one `nfs_resop4`: `Ok(Ok(result))`, or `Ok(Err(failure))` if the op failed.
fn decode_resop<'a>(
    d: &mut Decoder<'a>,
    index: usize,
) -> dbio_xdr::Result<Result<OpResult<'a>, OpFailure>> {
    let offset = d.position();
    let opnum = d.u32()?;
    let op = match Opnum::from_u32(opnum) {
        Some(op) => op,
        None => return Err(unsupported("nfs_opnum4", offset, opnum)),
    };
    let status = Nfsstat4::decode(d)?;
    let mut failure = OpFailure {
        index,
        op,
        status,
        mincount: None,
        will_signal_layout_avail: None,
    };
    if status != Nfsstat4::Ok {
        match (op, status) {
            // SETATTR4res carries the bits set even when it fails.
            (Opnum::Setattr, _) => {
                Bitmap4::decode(d)?;
            }
            (Opnum::Layoutget, Nfsstat4::Layouttrylater) => {
                failure.will_signal_layout_avail = Some(d.bool()?)
            }
            (Opnum::Getdeviceinfo, Nfsstat4::Toosmall) => failure.mincount = Some(d.u32()?),
            _ => {}
        }
        return Ok(Err(failure));
    }
    let r = match op {
        Opnum::Access => OpResult::Access {
            supported: d.u32()?,
            access: d.u32()?,
        },
        Opnum::Close => OpResult::Close(d.decode()?),
        Opnum::Delegreturn => OpResult::Delegreturn,
        Opnum::Commit => OpResult::Commit(d.decode()?),
        Opnum::Create => OpResult::Create {
            cinfo: d.decode()?,
            attrset: d.decode()?,
        },
        Opnum::Getattr => OpResult::Getattr(Box::new(d.decode()?)),
        Opnum::Getfh => OpResult::Getfh(d.decode()?),
        Opnum::Lookup => OpResult::Lookup,
        Opnum::Secinfo => OpResult::Secinfo(d.array("secinfo4", MAX_FLAVORS, 4, secinfo_flavor)?),
        Opnum::Open => OpResult::Open(OpenOk {
            stateid: d.decode()?,
            cinfo: d.decode()?,
            rflags: d.u32()?,
            attrset: d.decode()?,
            delegation: d.decode()?,
        }),
        Opnum::Putfh => OpResult::Putfh,
        Opnum::Putrootfh => OpResult::Putrootfh,
        Opnum::Savefh => OpResult::Savefh,
        Opnum::Read => OpResult::Read {
            eof: d.bool()?,
            data: d.opaque("READ data", MAX_DATA)?,
        },
        Opnum::Readdir => {
            let cookieverf = d.decode()?;
            let entries = d.list("entry4", MAX_ENTRIES, DirEntry::decode)?;
            OpResult::Readdir(ReaddirOk {
                cookieverf,
                entries,
                eof: d.bool()?,
            })
        }
        Opnum::Remove => OpResult::Remove(d.decode()?),
        Opnum::Rename => OpResult::Rename {
            source: d.decode()?,
            target: d.decode()?,
        },
        Opnum::Setattr => OpResult::Setattr(d.decode()?),
        Opnum::Write => OpResult::Write {
            count: d.u32()?,
            committed: d.decode()?,
            verifier: d.decode()?,
        },
        Opnum::ExchangeId => {
            let clientid = d.u64()?;
            let sequenceid = d.u32()?;
            let flags = d.u32()?;
            let at = d.position();
            match d.u32()? {
                0 => {}
                1 => {
                    // SP4_MACH_CRED: spo_must_enforce, spo_must_allow.
                    Bitmap4::decode(d)?;
                    Bitmap4::decode(d)?;
                }
                v => {
                    return Err(unsupported(
                        "state_protect_how4 (SP4_SSV not decoded)",
                        at,
                        v,
                    ))
                }
            }
            OpResult::ExchangeId(ExchangeIdOk {
                clientid,
                sequenceid,
                flags,
                server_minor_id: d.u64()?,
                server_major_id: d.decode()?,
                server_scope: d.decode()?,
                server_impl_id: decode_impl_id(d)?,
            })
        }
        Opnum::CreateSession => OpResult::CreateSession(d.decode()?),
        Opnum::DestroySession => OpResult::DestroySession,
        Opnum::BindConnToSession => OpResult::BindConnToSession {
            sessionid: d.decode()?,
            dir: d.u32()?,
            rdma: d.bool()?,
        },
        Opnum::Sequence => OpResult::Sequence(d.decode()?),
        Opnum::DestroyClientid => OpResult::DestroyClientid,
        Opnum::ReclaimComplete => OpResult::ReclaimComplete,
        Opnum::Layoutget => OpResult::Layoutget(LayoutgetOk {
            return_on_close: d.bool()?,
            stateid: d.decode()?,
            // A layout4 takes at least 28 bytes: offset, length, iomode, type, body length.
            layouts: d.array("layout4<>", MAX_LAYOUTS, 28, |d| {
                Ok(Layout {
                    offset: d.u64()?,
                    length: d.u64()?,
                    iomode: d.decode()?,
                    layout_type: d.decode()?,
                    body: d.opaque("loc_body", MAX_BODY)?,
                })
            })?,
        }),
        Opnum::Getdeviceinfo => OpResult::Getdeviceinfo(GetdeviceinfoOk {
            layout_type: d.decode()?,
            addr_body: d.opaque("da_addr_body", MAX_BODY)?,
            notification: d.decode()?,
        }),
        Opnum::Layoutcommit => OpResult::Layoutcommit {
            new_size: d.option(|d| d.u64())?,
        },
        Opnum::Layoutreturn => OpResult::Layoutreturn(d.option(Stateid::decode)?),
        other => {
            return Err(unsupported(
                "nfs_resop4 (operation not decoded by dbio)",
                offset,
                other as u32,
            ))
        }
    };
    Ok(Ok(r))
}

/// Decode a `COMPOUND4res` (the RPC reply's results slice). Decoding stops at the first
/// failed op, which is reported in [`CompoundRes::failure`]; bytes after it are not
/// looked at. Without a failure, trailing bytes are an error.
pub fn decode_compound(results: &[u8]) -> Result<CompoundRes<'_>, XdrError> {
    let mut ops = CompoundReader::new(results)?;
    let mut res = CompoundRes {
        status: ops.status,
        tag: ops.tag,
        results: Vec::with_capacity(ops.len()),
        failure: None,
    };
    while let Some(op) = ops.next_op() {
        match op? {
            Ok(r) => res.results.push(r),
            Err(f) => res.failure = Some(f),
        }
    }
    Ok(res)
}

/// A `COMPOUND4res` read one result at a time, with no list allocated: the data path
/// reads SEQUENCE, PUTFH and READ or WRITE of every reply this way. The same checks as
/// [`decode_compound`], which is built on it: the result count bounded by the bytes
/// there, reading stops after the first failed op, and without a failure trailing bytes
/// are an error.
#[derive(Debug)]
pub struct CompoundReader<'a> {
    d: Decoder<'a>,
    /// The COMPOUND's status (that of the last op evaluated).
    pub status: Nfsstat4,
    pub tag: Utf8<'a>,
    count: usize,
    index: usize,
    /// A failed op or a malformed result ended the reading.
    ended: bool,
}

impl<'a> CompoundReader<'a> {
    /// Reads the status, the tag and the number of results.
    pub fn new(results: &'a [u8]) -> Result<CompoundReader<'a>, XdrError> {
        let mut d = Decoder::new(results);
        let status = Nfsstat4::decode(&mut d)?;
        let tag = Utf8::decode(&mut d)?;
        // Each result is at least an opnum and a status.
        let count = d.count("resarray", MAX_OPS, 8)?;
        Ok(CompoundReader {
            d,
            status,
            tag,
            count,
            index: 0,
            ended: false,
        })
    }

    /// Results the reply says it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The next result: `Ok(Ok(result))`, or `Ok(Err(failure))` for the failed op,
    /// after which there is none; `None` once every result was read (and nothing
    /// follows them), an `Err` for a malformed one (then `None`).
    pub fn next_op(&mut self) -> Option<Result<Result<OpResult<'a>, OpFailure>, XdrError>> {
        if self.ended {
            return None;
        }
        if self.index == self.count {
            self.ended = true;
            return match self.d.finish("COMPOUND4res") {
                Ok(()) => None,
                Err(e) => Some(Err(e)),
            };
        }
        let r = decode_resop(&mut self.d, self.index);
        self.index += 1;
        if !matches!(r, Ok(Ok(_))) {
            self.ended = true;
        }
        Some(r)
    }
}

/// Append a successful `nfs_resop4` for an op without result data (PUTFH, LOOKUP, ...)
/// or a failed one: opnum and status. Used by tests and test servers.
pub fn encode_resop_status<B: BufMut>(out: &mut B, op: Opnum, status: Nfsstat4) {
    out.put_u32(op as u32);
    status.encode(out);
}

/// Append a `COMPOUND4res` header: status, tag and the number of results that follow.
pub fn encode_compound_header<B: BufMut>(out: &mut B, status: Nfsstat4, tag: &[u8], count: usize) {
    status.encode(out);
    out.put_opaque(tag);
    out.put_opaque_len(count);
}
