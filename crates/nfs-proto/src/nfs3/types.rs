//! NFSv3 data types (RFC 1813 section 2.5 and 2.6).

use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrError};
use std::fmt;

/// Largest file handle (NFS3_FHSIZE).
pub const FHSIZE: usize = 64;
/// Longest file name accepted from a server (`filename3` has no protocol limit; servers
/// use 255, this leaves room for multi-byte encodings).
pub const MAX_NAME: usize = 1024;
/// Longest path accepted from a server (`nfspath3`: symlink targets).
pub const MAX_PATH: usize = 4096;
/// Largest READ/WRITE payload accepted when decoding (far above any rtmax/wtmax; the
/// record size bound of the transport is the effective limit).
pub const MAX_DATA: usize = 64 << 20;
/// Most directory entries accepted in one READDIR/READDIRPLUS reply.
pub const MAX_ENTRIES: usize = 1 << 20;

/// ACCESS bits (`ACCESS3_*`).
pub mod access {
    pub const READ: u32 = 0x0001;
    pub const LOOKUP: u32 = 0x0002;
    pub const MODIFY: u32 = 0x0004;
    pub const EXTEND: u32 = 0x0008;
    pub const DELETE: u32 = 0x0010;
    pub const EXECUTE: u32 = 0x0020;
    /// All of the above.
    pub const ALL: u32 = 0x003f;
}

/// FSINFO `properties` bits (`FSF3_*`).
pub mod fsf {
    pub const LINK: u32 = 0x0001;
    pub const SYMLINK: u32 = 0x0002;
    pub const HOMOGENEOUS: u32 = 0x0008;
    pub const CANSETTIME: u32 = 0x0010;
}

/// `nfs_fh3`: an opaque file handle of at most 64 bytes.
pub type FileHandle = crate::handle::InlineHandle<FHSIZE>;

impl<'a> XdrDecode<'a> for FileHandle {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        FileHandle::decode_named(d, "nfs_fh3")
    }
}

xdr_bytes!(
    /// `filename3`: one path component, raw bytes (not necessarily UTF-8).
    pub struct Name, "filename3", MAX_NAME
);
xdr_bytes!(
    /// `nfspath3`: a symbolic link target.
    pub struct Path, "nfspath3", MAX_PATH
);
xdr_bytes!(
    /// READ or WRITE payload, borrowed (zero-copy in both directions).
    pub struct Data, "data", MAX_DATA
);

/// `cookieverf3`, `createverf3` and `writeverf3`: 8 opaque bytes.
pub type Verifier = [u8; 8];

xdr_enum!(
    /// `ftype3`: file type.
    pub enum Ftype3("ftype3") {
        Reg = 1,
        Dir = 2,
        Blk = 3,
        Chr = 4,
        Lnk = 5,
        Sock = 6,
        Fifo = 7,
    }
);

xdr_enum!(
    /// `stable_how`: how far a WRITE must reach stable storage before the reply.
    pub enum StableHow("stable_how") {
        Unstable = 0,
        DataSync = 1,
        FileSync = 2,
    }
);

xdr_struct!(
    /// `nfstime3`.
    #[derive(Copy, Default, Hash)]
    pub struct Nfstime3 {
        pub seconds: u32,
        pub nseconds: u32,
    }
);

xdr_struct!(
    /// `specdata3`: device numbers.
    #[derive(Copy, Default)]
    pub struct Specdata3 {
        pub specdata1: u32,
        pub specdata2: u32,
    }
);

xdr_struct!(
    /// `fattr3`: file attributes.
    #[derive(Copy)]
    pub struct Fattr3 {
        pub ftype: Ftype3,
        pub mode: u32,
        pub nlink: u32,
        pub uid: u32,
        pub gid: u32,
        pub size: u64,
        pub used: u64,
        pub rdev: Specdata3,
        pub fsid: u64,
        pub fileid: u64,
        pub atime: Nfstime3,
        pub mtime: Nfstime3,
        pub ctime: Nfstime3,
    }
);

/// `post_op_attr`: attributes the server may omit.
pub type PostOpAttr = Option<Fattr3>;
/// `post_op_fh3`: a handle the server may omit.
pub type PostOpFh = Option<FileHandle>;

xdr_struct!(
    /// `wcc_attr`: the attributes before an operation, for weak cache consistency.
    #[derive(Copy, Default)]
    pub struct WccAttr {
        pub size: u64,
        pub mtime: Nfstime3,
        pub ctime: Nfstime3,
    }
);

xdr_struct!(
    /// `wcc_data`: attributes before and after a modifying operation.
    #[derive(Copy, Default)]
    pub struct WccData {
        pub before: Option<WccAttr>,
        pub after: PostOpAttr,
    }
);

/// `set_atime` / `set_mtime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetTime {
    #[default]
    DontChange,
    ServerTime,
    ClientTime(Nfstime3),
}

impl XdrEncode for SetTime {
    fn encode<B: BufMut>(&self, out: &mut B) {
        match self {
            SetTime::DontChange => out.put_u32(0),
            SetTime::ServerTime => out.put_u32(1),
            SetTime::ClientTime(t) => {
                out.put_u32(2);
                t.encode(out);
            }
        }
    }
}

impl<'a> XdrDecode<'a> for SetTime {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        let offset = d.position();
        match d.u32()? {
            0 => Ok(SetTime::DontChange),
            1 => Ok(SetTime::ServerTime),
            2 => Ok(SetTime::ClientTime(d.decode()?)),
            v => Err(Decoder::bad_discriminant("time_how", offset, v)),
        }
    }
}

xdr_struct!(
    /// `sattr3`: attributes to set; `None` leaves one unchanged.
    #[derive(Copy, Default)]
    pub struct Sattr3 {
        pub mode: Option<u32>,
        pub uid: Option<u32>,
        pub gid: Option<u32>,
        pub size: Option<u64>,
        pub atime: SetTime,
        pub mtime: SetTime,
    }
);

/// `createhow3`: the CREATE mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateHow {
    /// Create or truncate silently.
    Unchecked(Sattr3),
    /// Fail with NFS3ERR_EXIST if the file exists.
    Guarded(Sattr3),
    /// Exactly-once create keyed by a client verifier (safe to retransmit).
    Exclusive(Verifier),
}

impl XdrEncode for CreateHow {
    fn encode<B: BufMut>(&self, out: &mut B) {
        match self {
            CreateHow::Unchecked(a) => {
                out.put_u32(0);
                a.encode(out);
            }
            CreateHow::Guarded(a) => {
                out.put_u32(1);
                a.encode(out);
            }
            CreateHow::Exclusive(v) => {
                out.put_u32(2);
                v.encode(out);
            }
        }
    }
}

impl<'a> XdrDecode<'a> for CreateHow {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        let offset = d.position();
        match d.u32()? {
            0 => Ok(CreateHow::Unchecked(d.decode()?)),
            1 => Ok(CreateHow::Guarded(d.decode()?)),
            2 => Ok(CreateHow::Exclusive(d.decode()?)),
            v => Err(Decoder::bad_discriminant("createmode3", offset, v)),
        }
    }
}

xdr_struct!(
    /// `diropargs3`: a name in a directory.
    pub struct DirOpArgs<'a> {
        pub dir: FileHandle,
        pub name: Name<'a>,
    }
);

/// `nfsstat3`: the status of every NFSv3 result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Nfsstat3 {
    Ok,
    Perm,
    NoEnt,
    Io,
    Nxio,
    Acces,
    Exist,
    Xdev,
    NoDev,
    NotDir,
    IsDir,
    Inval,
    Fbig,
    NoSpc,
    Rofs,
    Mlink,
    NameTooLong,
    NotEmpty,
    Dquot,
    Stale,
    Remote,
    BadHandle,
    NotSync,
    BadCookie,
    NotSupp,
    TooSmall,
    ServerFault,
    BadType,
    Jukebox,
    /// A status RFC 1813 does not list.
    Other(u32),
}

/// (status, wire number, name) for every listed status.
const STATUSES: [(Nfsstat3, u32, &str); 29] = [
    (Nfsstat3::Ok, 0, "NFS3_OK"),
    (Nfsstat3::Perm, 1, "NFS3ERR_PERM"),
    (Nfsstat3::NoEnt, 2, "NFS3ERR_NOENT"),
    (Nfsstat3::Io, 5, "NFS3ERR_IO"),
    (Nfsstat3::Nxio, 6, "NFS3ERR_NXIO"),
    (Nfsstat3::Acces, 13, "NFS3ERR_ACCES"),
    (Nfsstat3::Exist, 17, "NFS3ERR_EXIST"),
    (Nfsstat3::Xdev, 18, "NFS3ERR_XDEV"),
    (Nfsstat3::NoDev, 19, "NFS3ERR_NODEV"),
    (Nfsstat3::NotDir, 20, "NFS3ERR_NOTDIR"),
    (Nfsstat3::IsDir, 21, "NFS3ERR_ISDIR"),
    (Nfsstat3::Inval, 22, "NFS3ERR_INVAL"),
    (Nfsstat3::Fbig, 27, "NFS3ERR_FBIG"),
    (Nfsstat3::NoSpc, 28, "NFS3ERR_NOSPC"),
    (Nfsstat3::Rofs, 30, "NFS3ERR_ROFS"),
    (Nfsstat3::Mlink, 31, "NFS3ERR_MLINK"),
    (Nfsstat3::NameTooLong, 63, "NFS3ERR_NAMETOOLONG"),
    (Nfsstat3::NotEmpty, 66, "NFS3ERR_NOTEMPTY"),
    (Nfsstat3::Dquot, 69, "NFS3ERR_DQUOT"),
    (Nfsstat3::Stale, 70, "NFS3ERR_STALE"),
    (Nfsstat3::Remote, 71, "NFS3ERR_REMOTE"),
    (Nfsstat3::BadHandle, 10001, "NFS3ERR_BADHANDLE"),
    (Nfsstat3::NotSync, 10002, "NFS3ERR_NOT_SYNC"),
    (Nfsstat3::BadCookie, 10003, "NFS3ERR_BAD_COOKIE"),
    (Nfsstat3::NotSupp, 10004, "NFS3ERR_NOTSUPP"),
    (Nfsstat3::TooSmall, 10005, "NFS3ERR_TOOSMALL"),
    (Nfsstat3::ServerFault, 10006, "NFS3ERR_SERVERFAULT"),
    (Nfsstat3::BadType, 10007, "NFS3ERR_BADTYPE"),
    (Nfsstat3::Jukebox, 10008, "NFS3ERR_JUKEBOX"),
];

impl Nfsstat3 {
    /// The status for a wire number (unknown numbers become `Other`).
    pub fn from_u32(v: u32) -> Self {
        STATUSES
            .iter()
            .find(|s| s.1 == v)
            .map_or(Nfsstat3::Other(v), |s| s.0)
    }

    /// The wire number.
    pub fn to_u32(self) -> u32 {
        match self {
            Nfsstat3::Other(v) => v,
            s => STATUSES.iter().find(|e| e.0 == s).map_or(u32::MAX, |e| e.1),
        }
    }

    /// The RFC 1813 name, such as `NFS3ERR_NOENT`.
    pub fn name(self) -> Option<&'static str> {
        STATUSES.iter().find(|e| e.0 == self).map(|e| e.2)
    }
}

impl fmt::Display for Nfsstat3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "NFS3ERR_{}", self.to_u32()),
        }
    }
}

impl std::error::Error for Nfsstat3 {}

impl XdrEncode for Nfsstat3 {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u32(self.to_u32());
    }
}

impl<'a> XdrDecode<'a> for Nfsstat3 {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        d.u32().map(Nfsstat3::from_u32)
    }
}

/// Decode an NFSv3 result: the status, then the `resok` arm on NFS3_OK. The failure arm
/// (post-operation attributes a client does not need) is not decoded.
pub fn decode_res<'a, T: XdrDecode<'a>>(
    results: &'a [u8],
) -> Result<Result<T, Nfsstat3>, XdrError> {
    let mut d = Decoder::new(results);
    match Nfsstat3::decode(&mut d)? {
        Nfsstat3::Ok => T::decode(&mut d).map(Ok),
        status => Ok(Err(status)),
    }
}

/// Append a successful result: NFS3_OK and the `resok` arm.
pub fn encode_res_ok<B: BufMut, T: XdrEncode>(out: &mut B, ok: &T) {
    out.put_u32(0);
    ok.encode(out);
}

/// Append a failed result with an empty failure arm (attributes absent) for procedure
/// `proc_`; used by test servers.
pub fn encode_res_fail<B: BufMut>(out: &mut B, proc_: u32, status: Nfsstat3) {
    out.put_u32(status.to_u32());
    // Words of the failure arm with every optional attribute absent, per procedure.
    const FAIL_WORDS: [usize; 22] = [
        0, 0, 2, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 4, 3, 1, 1, 1, 1, 1, 2,
    ];
    for _ in 0..FAIL_WORDS.get(proc_ as usize).copied().unwrap_or(0) {
        out.put_u32(0);
    }
}
