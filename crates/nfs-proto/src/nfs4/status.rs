//! `nfsstat4` (RFC 8881 section 15.1): the status of a COMPOUND and of each operation.

use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode};
use std::fmt;

macro_rules! statuses {
    ($($v:ident = $n:literal, $name:literal;)*) => {
        /// `nfsstat4`. A value the RFC does not define is kept as `Other` (a newer server
        /// may send one; the caller still learns which op failed).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Nfsstat4 {
            $(#[doc = $name] $v,)*
            /// A status this client does not know.
            Other(u32),
        }

        impl Nfsstat4 {
            /// The status for a wire number.
            pub fn from_u32(v: u32) -> Self {
                match v {
                    $($n => Nfsstat4::$v,)*
                    other => Nfsstat4::Other(other),
                }
            }

            /// The wire number.
            pub fn to_u32(self) -> u32 {
                match self {
                    $(Nfsstat4::$v => $n,)*
                    Nfsstat4::Other(v) => v,
                }
            }

            /// The RFC 8881 name, such as `NFS4ERR_DELAY`; `None` for `Other`.
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $(Nfsstat4::$v => Some($name),)*
                    Nfsstat4::Other(_) => None,
                }
            }
        }
    };
}

statuses! {
    Ok = 0, "NFS4_OK";
    Perm = 1, "NFS4ERR_PERM";
    Noent = 2, "NFS4ERR_NOENT";
    Io = 5, "NFS4ERR_IO";
    Nxio = 6, "NFS4ERR_NXIO";
    Access = 13, "NFS4ERR_ACCESS";
    Exist = 17, "NFS4ERR_EXIST";
    Xdev = 18, "NFS4ERR_XDEV";
    Notdir = 20, "NFS4ERR_NOTDIR";
    Isdir = 21, "NFS4ERR_ISDIR";
    Inval = 22, "NFS4ERR_INVAL";
    Fbig = 27, "NFS4ERR_FBIG";
    Nospc = 28, "NFS4ERR_NOSPC";
    Rofs = 30, "NFS4ERR_ROFS";
    Mlink = 31, "NFS4ERR_MLINK";
    Nametoolong = 63, "NFS4ERR_NAMETOOLONG";
    Notempty = 66, "NFS4ERR_NOTEMPTY";
    Dquot = 69, "NFS4ERR_DQUOT";
    Stale = 70, "NFS4ERR_STALE";
    Badhandle = 10001, "NFS4ERR_BADHANDLE";
    BadCookie = 10003, "NFS4ERR_BAD_COOKIE";
    Notsupp = 10004, "NFS4ERR_NOTSUPP";
    Toosmall = 10005, "NFS4ERR_TOOSMALL";
    Serverfault = 10006, "NFS4ERR_SERVERFAULT";
    Badtype = 10007, "NFS4ERR_BADTYPE";
    Delay = 10008, "NFS4ERR_DELAY";
    Same = 10009, "NFS4ERR_SAME";
    Denied = 10010, "NFS4ERR_DENIED";
    Expired = 10011, "NFS4ERR_EXPIRED";
    Locked = 10012, "NFS4ERR_LOCKED";
    Grace = 10013, "NFS4ERR_GRACE";
    Fhexpired = 10014, "NFS4ERR_FHEXPIRED";
    ShareDenied = 10015, "NFS4ERR_SHARE_DENIED";
    Wrongsec = 10016, "NFS4ERR_WRONGSEC";
    ClidInuse = 10017, "NFS4ERR_CLID_INUSE";
    Resource = 10018, "NFS4ERR_RESOURCE";
    Moved = 10019, "NFS4ERR_MOVED";
    Nofilehandle = 10020, "NFS4ERR_NOFILEHANDLE";
    MinorVersMismatch = 10021, "NFS4ERR_MINOR_VERS_MISMATCH";
    StaleClientid = 10022, "NFS4ERR_STALE_CLIENTID";
    StaleStateid = 10023, "NFS4ERR_STALE_STATEID";
    OldStateid = 10024, "NFS4ERR_OLD_STATEID";
    BadStateid = 10025, "NFS4ERR_BAD_STATEID";
    BadSeqid = 10026, "NFS4ERR_BAD_SEQID";
    NotSame = 10027, "NFS4ERR_NOT_SAME";
    LockRange = 10028, "NFS4ERR_LOCK_RANGE";
    Symlink = 10029, "NFS4ERR_SYMLINK";
    Restorefh = 10030, "NFS4ERR_RESTOREFH";
    LeaseMoved = 10031, "NFS4ERR_LEASE_MOVED";
    Attrnotsupp = 10032, "NFS4ERR_ATTRNOTSUPP";
    NoGrace = 10033, "NFS4ERR_NO_GRACE";
    ReclaimBad = 10034, "NFS4ERR_RECLAIM_BAD";
    ReclaimConflict = 10035, "NFS4ERR_RECLAIM_CONFLICT";
    Badxdr = 10036, "NFS4ERR_BADXDR";
    LocksHeld = 10037, "NFS4ERR_LOCKS_HELD";
    Openmode = 10038, "NFS4ERR_OPENMODE";
    Badowner = 10039, "NFS4ERR_BADOWNER";
    Badchar = 10040, "NFS4ERR_BADCHAR";
    Badname = 10041, "NFS4ERR_BADNAME";
    BadRange = 10042, "NFS4ERR_BAD_RANGE";
    LockNotsupp = 10043, "NFS4ERR_LOCK_NOTSUPP";
    OpIllegal = 10044, "NFS4ERR_OP_ILLEGAL";
    Deadlock = 10045, "NFS4ERR_DEADLOCK";
    FileOpen = 10046, "NFS4ERR_FILE_OPEN";
    AdminRevoked = 10047, "NFS4ERR_ADMIN_REVOKED";
    CbPathDown = 10048, "NFS4ERR_CB_PATH_DOWN";
    Badiomode = 10049, "NFS4ERR_BADIOMODE";
    Badlayout = 10050, "NFS4ERR_BADLAYOUT";
    BadSessionDigest = 10051, "NFS4ERR_BAD_SESSION_DIGEST";
    Badsession = 10052, "NFS4ERR_BADSESSION";
    Badslot = 10053, "NFS4ERR_BADSLOT";
    CompleteAlready = 10054, "NFS4ERR_COMPLETE_ALREADY";
    ConnNotBoundToSession = 10055, "NFS4ERR_CONN_NOT_BOUND_TO_SESSION";
    DelegAlreadyWanted = 10056, "NFS4ERR_DELEG_ALREADY_WANTED";
    BackChanBusy = 10057, "NFS4ERR_BACK_CHAN_BUSY";
    Layouttrylater = 10058, "NFS4ERR_LAYOUTTRYLATER";
    Layoutunavailable = 10059, "NFS4ERR_LAYOUTUNAVAILABLE";
    NomatchingLayout = 10060, "NFS4ERR_NOMATCHING_LAYOUT";
    Recallconflict = 10061, "NFS4ERR_RECALLCONFLICT";
    UnknownLayouttype = 10062, "NFS4ERR_UNKNOWN_LAYOUTTYPE";
    SeqMisordered = 10063, "NFS4ERR_SEQ_MISORDERED";
    SequencePos = 10064, "NFS4ERR_SEQUENCE_POS";
    ReqTooBig = 10065, "NFS4ERR_REQ_TOO_BIG";
    RepTooBig = 10066, "NFS4ERR_REP_TOO_BIG";
    RepTooBigToCache = 10067, "NFS4ERR_REP_TOO_BIG_TO_CACHE";
    RetryUncachedRep = 10068, "NFS4ERR_RETRY_UNCACHED_REP";
    UnsafeCompound = 10069, "NFS4ERR_UNSAFE_COMPOUND";
    TooManyOps = 10070, "NFS4ERR_TOO_MANY_OPS";
    OpNotInSession = 10071, "NFS4ERR_OP_NOT_IN_SESSION";
    HashAlgUnsupp = 10072, "NFS4ERR_HASH_ALG_UNSUPP";
    ClientidBusy = 10074, "NFS4ERR_CLIENTID_BUSY";
    PnfsIoHole = 10075, "NFS4ERR_PNFS_IO_HOLE";
    SeqFalseRetry = 10076, "NFS4ERR_SEQ_FALSE_RETRY";
    BadHighSlot = 10077, "NFS4ERR_BAD_HIGH_SLOT";
    Deadsession = 10078, "NFS4ERR_DEADSESSION";
    EncrAlgUnsupp = 10079, "NFS4ERR_ENCR_ALG_UNSUPP";
    PnfsNoLayout = 10080, "NFS4ERR_PNFS_NO_LAYOUT";
    NotOnlyOp = 10081, "NFS4ERR_NOT_ONLY_OP";
    WrongCred = 10082, "NFS4ERR_WRONG_CRED";
    WrongType = 10083, "NFS4ERR_WRONG_TYPE";
    DirdelegUnavail = 10084, "NFS4ERR_DIRDELEG_UNAVAIL";
    RejectDeleg = 10085, "NFS4ERR_REJECT_DELEG";
    Returnconflict = 10086, "NFS4ERR_RETURNCONFLICT";
    DelegRevoked = 10087, "NFS4ERR_DELEG_REVOKED";
}

impl Nfsstat4 {
    /// Whether the same request may succeed if sent again later (the server is busy or in
    /// its grace period, or a layout is not available yet).
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            Nfsstat4::Delay | Nfsstat4::Grace | Nfsstat4::Layouttrylater
        )
    }
}

impl fmt::Display for Nfsstat4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "NFS4ERR_{}", self.to_u32()),
        }
    }
}

impl std::error::Error for Nfsstat4 {}

impl XdrEncode for Nfsstat4 {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u32(self.to_u32());
    }
}

impl<'a> XdrDecode<'a> for Nfsstat4 {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        d.u32().map(Nfsstat4::from_u32)
    }
}
