//! COMPOUND arguments: one [`ArgOp`] per operation and the [`Compound`] builder.

use super::attr::SetAttrs;
use super::types::{
    Bitmap4, ClientId, Component, DeviceId, Fh4, LayoutIomode, LayoutType, Nfstime4, SessionId,
    StableHow, Stateid, Verifier,
};
use super::Opnum;
use dbio_xdr::{BufMut, XdrEncode, XdrPut};

/// ACCESS bits (`ACCESS4_*`).
pub mod access {
    pub const READ: u32 = 0x01;
    pub const LOOKUP: u32 = 0x02;
    pub const MODIFY: u32 = 0x04;
    pub const EXTEND: u32 = 0x08;
    pub const DELETE: u32 = 0x10;
    pub const EXECUTE: u32 = 0x20;
}

/// OPEN share access and deny bits (`OPEN4_SHARE_*`).
pub mod share {
    pub const ACCESS_READ: u32 = 1;
    pub const ACCESS_WRITE: u32 = 2;
    pub const ACCESS_BOTH: u32 = 3;
    /// Ask the server for a read delegation (RFC 8881 section 18.16.3).
    pub const ACCESS_WANT_READ_DELEG: u32 = 0x0100;
    /// Ask the server for no delegation (RFC 8881 section 18.16.3).
    pub const ACCESS_WANT_NO_DELEG: u32 = 0x0400;
    pub const DENY_NONE: u32 = 0;
    pub const DENY_READ: u32 = 1;
    pub const DENY_WRITE: u32 = 2;
    pub const DENY_BOTH: u32 = 3;
}

/// EXCHANGE_ID flags (`EXCHGID4_FLAG_*`).
pub mod exchgid {
    pub const SUPP_MOVED_REFER: u32 = 0x0000_0001;
    pub const SUPP_MOVED_MIGR: u32 = 0x0000_0002;
    pub const BIND_PRINC_STATEID: u32 = 0x0000_0100;
    pub const USE_NON_PNFS: u32 = 0x0001_0000;
    pub const USE_PNFS_MDS: u32 = 0x0002_0000;
    pub const USE_PNFS_DS: u32 = 0x0004_0000;
    pub const MASK_PNFS: u32 = 0x0007_0000;
    pub const UPD_CONFIRMED_REC_A: u32 = 0x4000_0000;
    pub const CONFIRMED_R: u32 = 0x8000_0000;
}

/// BIND_CONN_TO_SESSION directions (`channel_dir_from_client4` in the arguments,
/// `channel_dir_from_server4` in the result).
pub mod chan_dir {
    pub const FORE: u32 = 0x1;
    pub const BACK: u32 = 0x2;
    /// Client: fore channel, or both if the server wants; server: both.
    pub const FORE_OR_BOTH: u32 = 0x3;
    pub const BACK_OR_BOTH: u32 = 0x7;
}

/// CREATE_SESSION flags (`CREATE_SESSION4_FLAG_*`).
pub mod session_flags {
    pub const PERSIST: u32 = 0x1;
    pub const CONN_BACK_CHAN: u32 = 0x2;
    pub const CONN_RDMA: u32 = 0x4;
}

xdr_struct!(
    /// `channel_attrs4` (without RDMA: `ca_rdma_ird` is sent empty; a received one is
    /// rejected by the decoder only if longer than one entry).
    #[derive(Copy, Default)]
    pub struct ChannelAttrs {
        pub headerpadsize: u32,
        pub maxrequestsize: u32,
        pub maxresponsesize: u32,
        pub maxresponsesize_cached: u32,
        pub maxoperations: u32,
        pub maxrequests: u32,
        pub rdma_ird: RdmaIrd,
    }
);

/// `uint32 ca_rdma_ird<1>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RdmaIrd(pub Option<u32>);

impl XdrEncode for RdmaIrd {
    fn encode<B: BufMut>(&self, out: &mut B) {
        // An optional value and a counted array of at most one have the same wire form.
        self.0.encode(out);
    }
}

impl<'a> dbio_xdr::XdrDecode<'a> for RdmaIrd {
    fn decode(d: &mut dbio_xdr::Decoder<'a>) -> dbio_xdr::Result<Self> {
        let mut v = d.array("ca_rdma_ird<1>", 1, 4, |d| d.u32())?;
        Ok(RdmaIrd(v.pop()))
    }
}

/// `callback_sec_parms4`: how the server authenticates back-channel calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackSec<'a> {
    /// AUTH_NONE.
    None,
    /// AUTH_SYS with its `authsys_parms` already encoded (as `dbio_rpc::AuthSys::encode_body`
    /// writes them).
    Sys(&'a [u8]),
}

/// `open_claim4` arms dbio uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenClaim<'a> {
    /// CLAIM_NULL: `name` in the current (directory) filehandle.
    Null(Component<'a>),
    /// CLAIM_FH: the current filehandle itself.
    Fh,
    /// CLAIM_PREVIOUS: reclaim, during the server's grace period, the open the client
    /// held of the current filehandle before the server restarted, with the
    /// delegation type it had (`OPEN_DELEGATE_NONE` = 0).
    Previous(u32),
}

/// `openflag4` / `createhow4`: open an existing file or create one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenHow {
    /// OPEN4_NOCREATE.
    NoCreate,
    /// UNCHECKED4: create, or open the existing file.
    Unchecked(SetAttrs),
    /// GUARDED4: fail with NFS4ERR_EXIST if it exists.
    Guarded(SetAttrs),
    /// EXCLUSIVE4_1: exactly-once create identified by a verifier.
    Exclusive41(Verifier, SetAttrs),
}

/// `layoutreturn4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutReturn<'a> {
    /// LAYOUTRETURN4_FILE: a range of the current file, with the layout stateid and a
    /// layout-type-specific body (empty for files layouts).
    File {
        offset: u64,
        length: u64,
        stateid: Stateid,
        body: &'a [u8],
    },
    /// LAYOUTRETURN4_FSID: every layout of the current file system.
    Fsid,
    /// LAYOUTRETURN4_ALL: every layout of the client.
    All,
}

/// One operation's arguments (`nfs_argop4`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgOp<'a> {
    Access(u32),
    Close {
        seqid: u32,
        stateid: Stateid,
    },
    /// DELEGRETURN of the current file's delegation (a recalled one).
    Delegreturn(Stateid),
    Commit {
        offset: u64,
        count: u32,
    },
    /// CREATE of a directory (NF4DIR).
    CreateDir {
        name: Component<'a>,
        attrs: SetAttrs,
    },
    Getattr(Bitmap4),
    Getfh,
    Lookup(Component<'a>),
    /// SECINFO: the flavours the server accepts for a name in the current directory.
    Secinfo(Component<'a>),
    Open {
        seqid: u32,
        share_access: u32,
        share_deny: u32,
        clientid: ClientId,
        owner: &'a [u8],
        how: OpenHow,
        claim: OpenClaim<'a>,
    },
    Putfh(Fh4),
    Putrootfh,
    /// SAVEFH: keep the current filehandle as the saved one (RENAME's source directory).
    Savefh,
    Read {
        stateid: Stateid,
        offset: u64,
        count: u32,
    },
    Readdir {
        cookie: u64,
        cookieverf: Verifier,
        dircount: u32,
        maxcount: u32,
        attr_request: Bitmap4,
    },
    Remove(Component<'a>),
    Rename {
        oldname: Component<'a>,
        newname: Component<'a>,
    },
    Setattr {
        stateid: Stateid,
        attrs: SetAttrs,
    },
    Write {
        stateid: Stateid,
        offset: u64,
        stable: StableHow,
        data: &'a [u8],
    },
    ExchangeId {
        verifier: Verifier,
        owner: &'a [u8],
        flags: u32,
        /// `nfs_impl_id4` (domain, name); sent with a zero date, or omitted.
        impl_id: Option<(&'a str, &'a str)>,
    },
    CreateSession {
        clientid: ClientId,
        sequence: u32,
        flags: u32,
        fore: ChannelAttrs,
        back: ChannelAttrs,
        cb_program: u32,
        sec: CallbackSec<'a>,
    },
    DestroySession(SessionId),
    /// BIND_CONN_TO_SESSION (alone in its COMPOUND): associate this connection with a
    /// session, in direction `dir` ([`chan_dir`]); RDMA mode is never asked for.
    BindConnToSession {
        sessionid: SessionId,
        dir: u32,
    },
    Sequence {
        sessionid: SessionId,
        sequenceid: u32,
        slotid: u32,
        highest_slotid: u32,
        cachethis: bool,
    },
    DestroyClientid(ClientId),
    ReclaimComplete {
        one_fs: bool,
    },
    Layoutget {
        signal_layout_avail: bool,
        layout_type: LayoutType,
        iomode: LayoutIomode,
        offset: u64,
        length: u64,
        minlength: u64,
        stateid: Stateid,
        maxcount: u32,
    },
    Getdeviceinfo {
        deviceid: DeviceId,
        layout_type: LayoutType,
        maxcount: u32,
        notify_types: Bitmap4,
    },
    Layoutcommit {
        offset: u64,
        length: u64,
        reclaim: bool,
        stateid: Stateid,
        last_write_offset: Option<u64>,
        time_modify: Option<Nfstime4>,
        layout_type: LayoutType,
        body: &'a [u8],
    },
    Layoutreturn {
        reclaim: bool,
        layout_type: LayoutType,
        iomode: LayoutIomode,
        how: LayoutReturn<'a>,
    },
}

impl ArgOp<'_> {
    /// The operation number.
    pub fn opnum(&self) -> Opnum {
        match self {
            ArgOp::Access(_) => Opnum::Access,
            ArgOp::Close { .. } => Opnum::Close,
            ArgOp::Delegreturn(_) => Opnum::Delegreturn,
            ArgOp::Commit { .. } => Opnum::Commit,
            ArgOp::CreateDir { .. } => Opnum::Create,
            ArgOp::Getattr(_) => Opnum::Getattr,
            ArgOp::Getfh => Opnum::Getfh,
            ArgOp::Lookup(_) => Opnum::Lookup,
            ArgOp::Secinfo(_) => Opnum::Secinfo,
            ArgOp::Open { .. } => Opnum::Open,
            ArgOp::Putfh(_) => Opnum::Putfh,
            ArgOp::Putrootfh => Opnum::Putrootfh,
            ArgOp::Savefh => Opnum::Savefh,
            ArgOp::Read { .. } => Opnum::Read,
            ArgOp::Readdir { .. } => Opnum::Readdir,
            ArgOp::Remove(_) => Opnum::Remove,
            ArgOp::Rename { .. } => Opnum::Rename,
            ArgOp::Setattr { .. } => Opnum::Setattr,
            ArgOp::Write { .. } => Opnum::Write,
            ArgOp::ExchangeId { .. } => Opnum::ExchangeId,
            ArgOp::CreateSession { .. } => Opnum::CreateSession,
            ArgOp::DestroySession(_) => Opnum::DestroySession,
            ArgOp::BindConnToSession { .. } => Opnum::BindConnToSession,
            ArgOp::Sequence { .. } => Opnum::Sequence,
            ArgOp::DestroyClientid(_) => Opnum::DestroyClientid,
            ArgOp::ReclaimComplete { .. } => Opnum::ReclaimComplete,
            ArgOp::Layoutget { .. } => Opnum::Layoutget,
            ArgOp::Getdeviceinfo { .. } => Opnum::Getdeviceinfo,
            ArgOp::Layoutcommit { .. } => Opnum::Layoutcommit,
            ArgOp::Layoutreturn { .. } => Opnum::Layoutreturn,
        }
    }

    /// Encode the arguments; a WRITE's payload is left out when `with_data` is false
    /// (only its length word is written), for vectored sends.
    fn encode_into<B: BufMut>(&self, out: &mut B, with_data: bool) {
        out.put_u32(self.opnum() as u32);
        match self {
            ArgOp::Access(bits) => out.put_u32(*bits),
            ArgOp::Close { seqid, stateid } => {
                out.put_u32(*seqid);
                stateid.encode(out);
            }
            ArgOp::Delegreturn(stateid) => stateid.encode(out),
            ArgOp::Commit { offset, count } => {
                out.put_u64(*offset);
                out.put_u32(*count);
            }
            ArgOp::CreateDir { name, attrs } => {
                out.put_u32(super::types::Ftype4::Dir as u32);
                name.encode(out);
                attrs.encode(out);
            }
            ArgOp::Getattr(mask) => mask.encode(out),
            ArgOp::Getfh | ArgOp::Putrootfh | ArgOp::Savefh => {}
            ArgOp::Lookup(name) | ArgOp::Remove(name) | ArgOp::Secinfo(name) => name.encode(out),
            ArgOp::Open {
                seqid,
                share_access,
                share_deny,
                clientid,
                owner,
                how,
                claim,
            } => {
                out.put_u32(*seqid);
                out.put_u32(*share_access);
                out.put_u32(*share_deny);
                out.put_u64(*clientid);
                out.put_opaque(owner);
                match how {
                    OpenHow::NoCreate => out.put_u32(0),
                    OpenHow::Unchecked(a) | OpenHow::Guarded(a) => {
                        out.put_u32(1); // OPEN4_CREATE
                        out.put_u32(if matches!(how, OpenHow::Unchecked(_)) {
                            0
                        } else {
                            1
                        });
                        a.encode(out);
                    }
                    OpenHow::Exclusive41(verf, a) => {
                        out.put_u32(1);
                        out.put_u32(3); // EXCLUSIVE4_1
                        verf.encode(out);
                        a.encode(out);
                    }
                }
                match claim {
                    OpenClaim::Null(name) => {
                        out.put_u32(0);
                        name.encode(out);
                    }
                    OpenClaim::Fh => out.put_u32(4),
                    OpenClaim::Previous(deleg) => {
                        out.put_u32(1);
                        out.put_u32(*deleg);
                    }
                }
            }
            ArgOp::Putfh(fh) => fh.encode(out),
            ArgOp::Read {
                stateid,
                offset,
                count,
            } => {
                stateid.encode(out);
                out.put_u64(*offset);
                out.put_u32(*count);
            }
            ArgOp::Readdir {
                cookie,
                cookieverf,
                dircount,
                maxcount,
                attr_request,
            } => {
                out.put_u64(*cookie);
                cookieverf.encode(out);
                out.put_u32(*dircount);
                out.put_u32(*maxcount);
                attr_request.encode(out);
            }
            ArgOp::Rename { oldname, newname } => {
                oldname.encode(out);
                newname.encode(out);
            }
            ArgOp::Setattr { stateid, attrs } => {
                stateid.encode(out);
                attrs.encode(out);
            }
            ArgOp::Write {
                stateid,
                offset,
                stable,
                data,
            } => {
                stateid.encode(out);
                out.put_u64(*offset);
                stable.encode(out);
                if with_data {
                    out.put_opaque(data);
                } else {
                    out.put_opaque_len(data.len());
                }
            }
            ArgOp::ExchangeId {
                verifier,
                owner,
                flags,
                impl_id,
            } => {
                verifier.encode(out);
                out.put_opaque(owner);
                out.put_u32(*flags);
                out.put_u32(0); // SP4_NONE
                match impl_id {
                    None => out.put_u32(0),
                    Some((domain, name)) => {
                        out.put_u32(1);
                        out.put_string(domain);
                        out.put_string(name);
                        Nfstime4::default().encode(out);
                    }
                }
            }
            ArgOp::CreateSession {
                clientid,
                sequence,
                flags,
                fore,
                back,
                cb_program,
                sec,
            } => {
                out.put_u64(*clientid);
                out.put_u32(*sequence);
                out.put_u32(*flags);
                fore.encode(out);
                back.encode(out);
                out.put_u32(*cb_program);
                out.put_u32(1); // one callback_sec_parms4
                match sec {
                    CallbackSec::None => out.put_u32(0),
                    CallbackSec::Sys(body) => {
                        out.put_u32(1);
                        out.put_slice(body);
                    }
                }
            }
            ArgOp::DestroySession(id) => id.encode(out),
            ArgOp::BindConnToSession { sessionid, dir } => {
                sessionid.encode(out);
                out.put_u32(*dir);
                out.put_xdr_bool(false);
            }
            ArgOp::Sequence {
                sessionid,
                sequenceid,
                slotid,
                highest_slotid,
                cachethis,
            } => {
                sessionid.encode(out);
                out.put_u32(*sequenceid);
                out.put_u32(*slotid);
                out.put_u32(*highest_slotid);
                out.put_xdr_bool(*cachethis);
            }
            ArgOp::DestroyClientid(id) => out.put_u64(*id),
            ArgOp::ReclaimComplete { one_fs } => out.put_xdr_bool(*one_fs),
            ArgOp::Layoutget {
                signal_layout_avail,
                layout_type,
                iomode,
                offset,
                length,
                minlength,
                stateid,
                maxcount,
            } => {
                out.put_xdr_bool(*signal_layout_avail);
                layout_type.encode(out);
                iomode.encode(out);
                out.put_u64(*offset);
                out.put_u64(*length);
                out.put_u64(*minlength);
                stateid.encode(out);
                out.put_u32(*maxcount);
            }
            ArgOp::Getdeviceinfo {
                deviceid,
                layout_type,
                maxcount,
                notify_types,
            } => {
                deviceid.encode(out);
                layout_type.encode(out);
                out.put_u32(*maxcount);
                notify_types.encode(out);
            }
            ArgOp::Layoutcommit {
                offset,
                length,
                reclaim,
                stateid,
                last_write_offset,
                time_modify,
                layout_type,
                body,
            } => {
                out.put_u64(*offset);
                out.put_u64(*length);
                out.put_xdr_bool(*reclaim);
                stateid.encode(out);
                last_write_offset.encode(out);
                time_modify.encode(out);
                layout_type.encode(out);
                out.put_opaque(body);
            }
            ArgOp::Layoutreturn {
                reclaim,
                layout_type,
                iomode,
                how,
            } => {
                out.put_xdr_bool(*reclaim);
                layout_type.encode(out);
                iomode.encode(out);
                match how {
                    LayoutReturn::File {
                        offset,
                        length,
                        stateid,
                        body,
                    } => {
                        out.put_u32(1);
                        out.put_u64(*offset);
                        out.put_u64(*length);
                        stateid.encode(out);
                        out.put_opaque(body);
                    }
                    LayoutReturn::Fsid => out.put_u32(2),
                    LayoutReturn::All => out.put_u32(3),
                }
            }
        }
    }
}

impl XdrEncode for ArgOp<'_> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        self.encode_into(out, true);
    }
}

/// A COMPOUND request (`COMPOUND4args`), built op by op:
/// `Compound::new("tag", 1).sequence(..).putfh(fh).read(..)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compound<'a> {
    pub tag: &'a str,
    pub minorversion: u32,
    pub ops: Vec<ArgOp<'a>>,
}

impl<'a> Compound<'a> {
    /// An empty COMPOUND with a tag (echoed by the server) and minor version (1 for
    /// NFSv4.1).
    pub fn new(tag: &'a str, minorversion: u32) -> Self {
        Compound {
            tag,
            minorversion,
            ops: Vec::with_capacity(4),
        }
    }

    /// Append any operation.
    pub fn op(mut self, op: ArgOp<'a>) -> Self {
        self.ops.push(op);
        self
    }

    /// The operation numbers, in order (to match results against).
    pub fn opnums(&self) -> impl Iterator<Item = Opnum> + '_ {
        self.ops.iter().map(ArgOp::opnum)
    }

    pub fn sequence(
        self,
        sessionid: SessionId,
        sequenceid: u32,
        slotid: u32,
        highest_slotid: u32,
        cachethis: bool,
    ) -> Self {
        self.op(ArgOp::Sequence {
            sessionid,
            sequenceid,
            slotid,
            highest_slotid,
            cachethis,
        })
    }
    pub fn putrootfh(self) -> Self {
        self.op(ArgOp::Putrootfh)
    }
    pub fn putfh(self, fh: Fh4) -> Self {
        self.op(ArgOp::Putfh(fh))
    }
    pub fn savefh(self) -> Self {
        self.op(ArgOp::Savefh)
    }
    pub fn secinfo(self, name: impl Into<Component<'a>>) -> Self {
        self.op(ArgOp::Secinfo(name.into()))
    }
    pub fn lookup(self, name: impl Into<Component<'a>>) -> Self {
        self.op(ArgOp::Lookup(name.into()))
    }
    pub fn getfh(self) -> Self {
        self.op(ArgOp::Getfh)
    }
    pub fn getattr(self, mask: Bitmap4) -> Self {
        self.op(ArgOp::Getattr(mask))
    }
    pub fn setattr(self, stateid: Stateid, attrs: SetAttrs) -> Self {
        self.op(ArgOp::Setattr { stateid, attrs })
    }
    pub fn access(self, bits: u32) -> Self {
        self.op(ArgOp::Access(bits))
    }
    pub fn read(self, stateid: Stateid, offset: u64, count: u32) -> Self {
        self.op(ArgOp::Read {
            stateid,
            offset,
            count,
        })
    }
    pub fn write(self, stateid: Stateid, offset: u64, stable: StableHow, data: &'a [u8]) -> Self {
        self.op(ArgOp::Write {
            stateid,
            offset,
            stable,
            data,
        })
    }
    pub fn commit(self, offset: u64, count: u32) -> Self {
        self.op(ArgOp::Commit { offset, count })
    }
    pub fn close(self, seqid: u32, stateid: Stateid) -> Self {
        self.op(ArgOp::Close { seqid, stateid })
    }
    pub fn delegreturn(self, stateid: Stateid) -> Self {
        self.op(ArgOp::Delegreturn(stateid))
    }
    pub fn remove(self, name: impl Into<Component<'a>>) -> Self {
        self.op(ArgOp::Remove(name.into()))
    }
    pub fn rename(
        self,
        oldname: impl Into<Component<'a>>,
        newname: impl Into<Component<'a>>,
    ) -> Self {
        self.op(ArgOp::Rename {
            oldname: oldname.into(),
            newname: newname.into(),
        })
    }
    pub fn mkdir(self, name: impl Into<Component<'a>>, attrs: SetAttrs) -> Self {
        self.op(ArgOp::CreateDir {
            name: name.into(),
            attrs,
        })
    }
    pub fn readdir(
        self,
        cookie: u64,
        cookieverf: Verifier,
        dircount: u32,
        maxcount: u32,
        attr_request: Bitmap4,
    ) -> Self {
        self.op(ArgOp::Readdir {
            cookie,
            cookieverf,
            dircount,
            maxcount,
            attr_request,
        })
    }
    pub fn reclaim_complete(self, one_fs: bool) -> Self {
        self.op(ArgOp::ReclaimComplete { one_fs })
    }
    pub fn destroy_session(self, id: SessionId) -> Self {
        self.op(ArgOp::DestroySession(id))
    }
    pub fn bind_conn_to_session(self, sessionid: SessionId, dir: u32) -> Self {
        self.op(ArgOp::BindConnToSession { sessionid, dir })
    }
    pub fn destroy_clientid(self, id: ClientId) -> Self {
        self.op(ArgOp::DestroyClientid(id))
    }

    /// Encode everything except the payload of a WRITE that is the last operation: the
    /// caller sends that payload as a slice of its own followed by
    /// `PAD[..padding(len)]` (no copy). Returns the payload left out (empty if the last
    /// op is not a WRITE, in which case the encoding is complete).
    pub fn encode_head<B: BufMut>(&self, out: &mut B) -> &'a [u8] {
        self.encode_header(out);
        let n = self.ops.len();
        for (i, op) in self.ops.iter().enumerate() {
            match op {
                ArgOp::Write { data, .. } if i + 1 == n => {
                    op.encode_into(out, false);
                    return data;
                }
                _ => op.encode_into(out, true),
            }
        }
        &[]
    }

    fn encode_header<B: BufMut>(&self, out: &mut B) {
        out.put_string(self.tag);
        out.put_u32(self.minorversion);
        out.put_opaque_len(self.ops.len());
    }
}

impl XdrEncode for Compound<'_> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        self.encode_header(out);
        for op in &self.ops {
            op.encode_into(out, true);
        }
    }
}
