//! NFSv4.1 (RFC 8881): program 100003, version 4; procedure 0 is NULL, procedure 1 is
//! COMPOUND.
//!
//! A request is a [`Compound`] built op by op
//! (`Compound::new("tag", 1).sequence(..).putfh(fh).read(..)`) and encoded after the RPC
//! call header with `encode_call(.., PROGRAM, VERSION, PROC_COMPOUND, ..)`; for a WRITE
//! that ends the COMPOUND, [`Compound::encode_head`] leaves the payload out so that it
//! can be sent as its own slice. A reply's results slice is decoded with
//! [`decode_compound`]: the results of the ops that succeeded as [`OpResult`]s, and the
//! first failing op (index, op, [`Nfsstat4`]) as an [`OpFailure`].
//!
//! | op | request ([`Compound`] method or [`ArgOp`]) | result ([`OpResult`]) |
//! |---|---|---|
//! | EXCHANGE_ID | `ArgOp::ExchangeId` (SP4_NONE) | `ExchangeId(`[`ExchangeIdOk`]`)` |
//! | CREATE_SESSION | `ArgOp::CreateSession` ([`ChannelAttrs`], [`CallbackSec`]) | `CreateSession(`[`CreateSessionOk`]`)` |
//! | BIND_CONN_TO_SESSION | `bind_conn_to_session` | `BindConnToSession` |
//! | SEQUENCE | `sequence` | `Sequence(`[`SequenceOk`]`)` ([`seq4_status`] flags) |
//! | RECLAIM_COMPLETE | `reclaim_complete` | `ReclaimComplete` |
//! | DESTROY_SESSION, DESTROY_CLIENTID | `destroy_session`, `destroy_clientid` | unit variants |
//! | PUTROOTFH, PUTFH, SAVEFH, GETFH | `putrootfh`, `putfh`, `savefh`, `getfh` | `Getfh(`[`Fh4`]`)` |
//! | LOOKUP, ACCESS | `lookup`, `access` | `Lookup`, `Access` |
//! | GETATTR | `getattr(`[`Bitmap4`]`)` | `Getattr(`[`Fattr`]`)` |
//! | SETATTR | `setattr(stateid, `[`SetAttrs`]`)` (size, mode, [`SetTime`]s) | `Setattr(bits set)` |
//! | OPEN | `ArgOp::Open` ([`OpenHow`], [`OpenClaim`], [`share`]) | `Open(`[`OpenOk`]`)` with [`Delegation`] |
//! | CLOSE | `close` | `Close(stateid)` |
//! | DELEGRETURN | `delegreturn` | `Delegreturn` |
//! | READ, WRITE, COMMIT | `read`, `write` ([`StableHow`]), `commit` | `Read` (data borrowed), `Write`, `Commit` |
//! | REMOVE, RENAME | `remove`, `rename` | `Remove`, `Rename` ([`ChangeInfo`]) |
//! | READDIR | `readdir` | `Readdir(`[`ReaddirOk`]`)` |
//! | CREATE (directory) | `mkdir` | `Create` |
//! | LAYOUTGET | `ArgOp::Layoutget` | `Layoutget(`[`LayoutgetOk`]`)`; body: [`FileLayout::from_body`] |
//! | GETDEVICEINFO | `ArgOp::Getdeviceinfo` | `Getdeviceinfo(`[`GetdeviceinfoOk`]`)`; body: [`FileDsAddr::from_body`] |
//! | LAYOUTRETURN, LAYOUTCOMMIT | `ArgOp::Layoutreturn` ([`LayoutReturn`]), `ArgOp::Layoutcommit` | `Layoutreturn`, `Layoutcommit` |
//!
//! Operations: EXCHANGE_ID, CREATE_SESSION, BIND_CONN_TO_SESSION, SEQUENCE, RECLAIM_COMPLETE, PUTROOTFH, PUTFH,
//! LOOKUP, GETFH, GETATTR ([`Fattr`]), SETATTR ([`SetAttrs`]: size, mode, access and modify times), ACCESS, OPEN
//! (UNCHECKED4, GUARDED4, EXCLUSIVE4_1, CLAIM_NULL, CLAIM_FH), CLOSE, READ, WRITE,
//! COMMIT, REMOVE, RENAME (with SAVEFH), READDIR, CREATE (directories), DESTROY_SESSION,
//! DESTROY_CLIENTID, and for pNFS LAYOUTGET, GETDEVICEINFO, LAYOUTRETURN, LAYOUTCOMMIT
//! (files-layout bodies: [`FileLayout`], [`FileDsAddr`]).
//!
//! The back channel: [`decode_cb_compound`] reads a CB_COMPOUND call (CB_SEQUENCE,
//! CB_LAYOUTRECALL, CB_RECALL, CB_NOTIFY_DEVICEID, CB_RECALL_ANY) and
//! [`encode_cb_compound_res`] answers it; [`encode_cb_compound`] and
//! [`decode_cb_compound_res`] are the server's side, for test servers.
//!
//! Every length read from a reply is checked against the remaining input and a bound
//! before anything is allocated; no decoder panics on any input.

mod args;
mod attr;
mod cb;
mod io;
mod layout;
mod res;
mod status;
mod types;

#[cfg(test)]
mod cb_tests;
#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod secinfo_tests;
#[cfg(test)]
mod tests;

pub use args::*;
pub use attr::{bit, numeric_id, Fattr, SetAttrs, SetTime};
pub use cb::*;
pub use io::{decode_io_reply, IoCompound, IoOp, IoReply, IoResult};
pub use layout::*;
pub use res::*;
pub use status::Nfsstat4;
pub use types::*;

/// RPC program number of NFS.
pub const PROGRAM: u32 = 100003;
/// NFS version 4 (minor versions travel inside the COMPOUND).
pub const VERSION: u32 = 4;
/// Minor version 1.
pub const MINOR_VERSION: u32 = 1;
/// Procedure NULL.
pub const PROC_NULL: u32 = 0;
/// Procedure COMPOUND.
pub const PROC_COMPOUND: u32 = 1;

macro_rules! opnums {
    ($($v:ident = $n:literal, $name:literal;)*) => {
        /// `nfs_opnum4`: operation numbers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Opnum {
            $(#[doc = $name] $v = $n,)*
        }

        impl Opnum {
            /// The operation for a wire number, if RFC 8881 defines it.
            pub fn from_u32(v: u32) -> Option<Self> {
                match v {
                    $($n => Some(Opnum::$v),)*
                    _ => None,
                }
            }

            /// Upper-case name (`LAYOUTGET`), for errors and per-operation statistics.
            pub fn name(self) -> &'static str {
                match self {
                    $(Opnum::$v => $name,)*
                }
            }
        }
    };
}

opnums! {
    Access = 3, "ACCESS";
    Close = 4, "CLOSE";
    Commit = 5, "COMMIT";
    Create = 6, "CREATE";
    Delegpurge = 7, "DELEGPURGE";
    Delegreturn = 8, "DELEGRETURN";
    Getattr = 9, "GETATTR";
    Getfh = 10, "GETFH";
    Link = 11, "LINK";
    Lock = 12, "LOCK";
    Lockt = 13, "LOCKT";
    Locku = 14, "LOCKU";
    Lookup = 15, "LOOKUP";
    Lookupp = 16, "LOOKUPP";
    Nverify = 17, "NVERIFY";
    Open = 18, "OPEN";
    Openattr = 19, "OPENATTR";
    OpenConfirm = 20, "OPEN_CONFIRM";
    OpenDowngrade = 21, "OPEN_DOWNGRADE";
    Putfh = 22, "PUTFH";
    Putpubfh = 23, "PUTPUBFH";
    Putrootfh = 24, "PUTROOTFH";
    Read = 25, "READ";
    Readdir = 26, "READDIR";
    Readlink = 27, "READLINK";
    Remove = 28, "REMOVE";
    Rename = 29, "RENAME";
    Renew = 30, "RENEW";
    Restorefh = 31, "RESTOREFH";
    Savefh = 32, "SAVEFH";
    Secinfo = 33, "SECINFO";
    Setattr = 34, "SETATTR";
    Setclientid = 35, "SETCLIENTID";
    SetclientidConfirm = 36, "SETCLIENTID_CONFIRM";
    Verify = 37, "VERIFY";
    Write = 38, "WRITE";
    ReleaseLockowner = 39, "RELEASE_LOCKOWNER";
    BackchannelCtl = 40, "BACKCHANNEL_CTL";
    BindConnToSession = 41, "BIND_CONN_TO_SESSION";
    ExchangeId = 42, "EXCHANGE_ID";
    CreateSession = 43, "CREATE_SESSION";
    DestroySession = 44, "DESTROY_SESSION";
    FreeStateid = 45, "FREE_STATEID";
    GetDirDelegation = 46, "GET_DIR_DELEGATION";
    Getdeviceinfo = 47, "GETDEVICEINFO";
    Getdevicelist = 48, "GETDEVICELIST";
    Layoutcommit = 49, "LAYOUTCOMMIT";
    Layoutget = 50, "LAYOUTGET";
    Layoutreturn = 51, "LAYOUTRETURN";
    SecinfoNoName = 52, "SECINFO_NO_NAME";
    Sequence = 53, "SEQUENCE";
    SetSsv = 54, "SET_SSV";
    TestStateid = 55, "TEST_STATEID";
    WantDelegation = 56, "WANT_DELEGATION";
    DestroyClientid = 57, "DESTROY_CLIENTID";
    ReclaimComplete = 58, "RECLAIM_COMPLETE";
    Illegal = 10044, "ILLEGAL";
}

impl std::fmt::Display for Opnum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
