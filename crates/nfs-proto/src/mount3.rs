//! MOUNT v3 (RFC 1813 appendix I): program 100005, version 3.
//!
//! MNT takes a [`DirPath`] and gives a [`MountOk`] (root file handle and the auth
//! flavors the server accepts); DUMP gives [`MountList`]; EXPORT gives [`Exports`];
//! UMNT takes a [`DirPath`]; NULL and UMNTALL take nothing. Results of MNT decode with
//! [`decode_mnt`].

use super::nfs3::FileHandle;
use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrError, XdrPut};
use std::fmt;

/// RPC program number of MOUNT.
pub const PROGRAM: u32 = 100005;
/// MOUNT version 3 (the one that goes with NFSv3).
pub const VERSION: u32 = 3;
/// Longest export path (MNTPATHLEN).
pub const MNTPATHLEN: usize = 1024;
/// Longest host or group name (MNTNAMLEN).
pub const MNTNAMLEN: usize = 255;
/// Most auth flavors accepted in a MNT reply.
pub const MAX_FLAVORS: usize = 64;
/// Most exports, groups or mount entries accepted in one list.
pub const MAX_LIST: usize = 1 << 16;

xdr_enum!(
    /// MOUNT procedure numbers.
    pub enum Proc("mount3 procedure") {
        Null = 0,
        Mnt = 1,
        Dump = 2,
        Umnt = 3,
        Umntall = 4,
        Export = 5,
    }
);

xdr_bytes!(
    /// `dirpath`: an export path on the server.
    pub struct DirPath, "dirpath", MNTPATHLEN
);
xdr_bytes!(
    /// `name`: a host or netgroup name.
    pub struct MountName, "name", MNTNAMLEN
);

/// `mountstat3`: why a MNT failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mountstat3 {
    Ok,
    Perm,
    NoEnt,
    Io,
    Acces,
    NotDir,
    Inval,
    NameTooLong,
    NotSupp,
    ServerFault,
    Other(u32),
}

const STATUSES: [(Mountstat3, u32, &str); 10] = [
    (Mountstat3::Ok, 0, "MNT3_OK"),
    (Mountstat3::Perm, 1, "MNT3ERR_PERM"),
    (Mountstat3::NoEnt, 2, "MNT3ERR_NOENT"),
    (Mountstat3::Io, 5, "MNT3ERR_IO"),
    (Mountstat3::Acces, 13, "MNT3ERR_ACCES"),
    (Mountstat3::NotDir, 20, "MNT3ERR_NOTDIR"),
    (Mountstat3::Inval, 22, "MNT3ERR_INVAL"),
    (Mountstat3::NameTooLong, 63, "MNT3ERR_NAMETOOLONG"),
    (Mountstat3::NotSupp, 10004, "MNT3ERR_NOTSUPP"),
    (Mountstat3::ServerFault, 10006, "MNT3ERR_SERVERFAULT"),
];

impl Mountstat3 {
    pub fn from_u32(v: u32) -> Self {
        STATUSES
            .iter()
            .find(|s| s.1 == v)
            .map_or(Mountstat3::Other(v), |s| s.0)
    }

    pub fn to_u32(self) -> u32 {
        match self {
            Mountstat3::Other(v) => v,
            s => STATUSES.iter().find(|e| e.0 == s).map_or(u32::MAX, |e| e.1),
        }
    }
}

impl fmt::Display for Mountstat3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match STATUSES.iter().find(|e| e.0 == *self) {
            Some(e) => f.write_str(e.2),
            None => write!(f, "MNT3ERR_{}", self.to_u32()),
        }
    }
}

impl std::error::Error for Mountstat3 {}

/// Successful MNT: the export's root handle and the accepted auth flavors
/// (`dbio_rpc::auth::AUTH_SYS` = 1, AUTH_NONE = 0, RPCSEC_GSS = 6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountOk {
    pub fhandle: FileHandle,
    pub auth_flavors: Vec<u32>,
}

impl XdrEncode for MountOk {
    fn encode<B: BufMut>(&self, out: &mut B) {
        self.fhandle.encode(out);
        out.put_array(&self.auth_flavors, |o, f| o.put_u32(*f));
    }
}

impl<'a> XdrDecode<'a> for MountOk {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Ok(MountOk {
            fhandle: d.decode()?,
            auth_flavors: d.array("auth_flavors", MAX_FLAVORS, 4, Decoder::u32)?,
        })
    }
}

/// Decode a MNT result (`mountres3`).
pub fn decode_mnt(results: &[u8]) -> Result<Result<MountOk, Mountstat3>, XdrError> {
    let mut d = Decoder::new(results);
    match Mountstat3::from_u32(d.u32()?) {
        Mountstat3::Ok => MountOk::decode(&mut d).map(Ok),
        status => Ok(Err(status)),
    }
}

/// Append a MNT result (for test servers).
pub fn encode_mnt<B: BufMut>(out: &mut B, res: &Result<MountOk, Mountstat3>) {
    match res {
        Ok(ok) => {
            out.put_u32(0);
            ok.encode(out);
        }
        Err(status) => out.put_u32(status.to_u32()),
    }
}

xdr_struct!(
    /// `mountbody`: one client mount known to the server.
    pub struct MountEntry<'a> {
        pub hostname: MountName<'a>,
        pub directory: DirPath<'a>,
    }
);

/// DUMP result (`mountlist`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MountList<'a>(pub Vec<MountEntry<'a>>);

impl XdrEncode for MountList<'_> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        encode_list(out, &self.0, |o, e| e.encode(o));
    }
}

impl<'a> XdrDecode<'a> for MountList<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        d.list("mountbody", MAX_LIST, Decoder::decode)
            .map(MountList)
    }
}

/// `exportnode`: an export and the groups allowed to mount it (empty: everyone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export<'a> {
    pub dir: DirPath<'a>,
    pub groups: Vec<MountName<'a>>,
}

/// EXPORT result (`exports`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Exports<'a>(pub Vec<Export<'a>>);

impl XdrEncode for Exports<'_> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        encode_list(out, &self.0, |o, e| {
            e.dir.encode(o);
            encode_list(o, &e.groups, |o, g| g.encode(o));
        });
    }
}

impl<'a> XdrDecode<'a> for Exports<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        d.list("exportnode", MAX_LIST, |d| {
            Ok(Export {
                dir: d.decode()?,
                groups: d.list("groupnode", MAX_LIST, Decoder::decode)?,
            })
        })
        .map(Exports)
    }
}

fn encode_list<B: BufMut, T>(out: &mut B, items: &[T], mut f: impl FnMut(&mut B, &T)) {
    for item in items {
        out.put_xdr_bool(true);
        f(out, item);
    }
    out.put_xdr_bool(false);
}
