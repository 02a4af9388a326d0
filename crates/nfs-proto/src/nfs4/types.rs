//! NFSv4.1 data types (RFC 8881 section 3 and the `nfs4_prot.x` XDR): handles, stateids,
//! bitmaps, times, change info.

use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrError, XdrPut};
use std::fmt;

/// Largest file handle (`NFS4_FHSIZE`).
pub const FHSIZE: usize = 128;
/// `NFS4_OPAQUE_LIMIT`: owners, server scopes, major ids.
pub const OPAQUE_LIMIT: usize = 1024;
/// Longest component name accepted from a server.
pub const MAX_NAME: usize = 1024;
/// Longest UTF-8 string accepted from a server (tags, owners, implementation names).
pub const MAX_STRING: usize = 4096;
/// Largest READ payload accepted when decoding (the transport's record bound is the
/// effective limit).
pub const MAX_DATA: usize = 64 << 20;
/// Most operations accepted in one COMPOUND reply.
pub const MAX_OPS: usize = 1024;
/// Most directory entries accepted in one READDIR reply.
pub const MAX_ENTRIES: usize = 1 << 20;
/// Most 32-bit words accepted in a `bitmap4` (256 attribute bits; RFC 8881 defines 82).
pub const MAX_BITMAP_WORDS: usize = 8;
/// Largest `fattr4` value list accepted.
pub const MAX_ATTR_BYTES: usize = 1 << 20;

/// `verifier4`: 8 opaque bytes (write verifier, cookie verifier, client verifier).
pub type Verifier = [u8; 8];
/// `sessionid4`: 16 opaque bytes.
pub type SessionId = [u8; 16];
/// `deviceid4`: 16 opaque bytes.
pub type DeviceId = [u8; 16];
/// `clientid4`.
pub type ClientId = u64;

/// `nfs_fh4`: an opaque file handle of at most 128 bytes.
pub type Fh4 = crate::handle::InlineHandle<FHSIZE>;

impl<'a> XdrDecode<'a> for Fh4 {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Fh4::decode_named(d, "nfs_fh4")
    }
}

xdr_struct!(
    /// `stateid4`: sequence id and 12 opaque bytes.
    #[derive(Copy, Hash, Default)]
    pub struct Stateid {
        pub seqid: u32,
        pub other: [u8; 12],
    }
);

impl Stateid {
    /// The anonymous stateid (all zeros): I/O without an OPEN.
    pub const ANONYMOUS: Stateid = Stateid {
        seqid: 0,
        other: [0; 12],
    };
    /// The "current stateid" (seqid 1, other zero): the stateid that an earlier op of the
    /// same COMPOUND produced (OPEN then READ in one request).
    pub const CURRENT: Stateid = Stateid {
        seqid: 1,
        other: [0; 12],
    };
}

xdr_struct!(
    /// `nfstime4`.
    #[derive(Copy, Hash, Default)]
    pub struct Nfstime4 {
        pub seconds: i64,
        pub nseconds: u32,
    }
);

xdr_struct!(
    /// `change_info4`: the directory's change attribute before and after an operation.
    #[derive(Copy, Default)]
    pub struct ChangeInfo {
        pub atomic: bool,
        pub before: u64,
        pub after: u64,
    }
);

xdr_struct!(
    /// `fsid4`.
    #[derive(Copy, Hash, Default)]
    pub struct Fsid {
        pub major: u64,
        pub minor: u64,
    }
);

xdr_enum!(
    /// `nfs_ftype4`: object type.
    pub enum Ftype4("nfs_ftype4") {
        Reg = 1,
        Dir = 2,
        Blk = 3,
        Chr = 4,
        Lnk = 5,
        Sock = 6,
        Fifo = 7,
        AttrDir = 8,
        NamedAttr = 9,
    }
);

xdr_enum!(
    /// `stable_how4`: how durable a WRITE must be before the reply.
    pub enum StableHow("stable_how4") {
        Unstable = 0,
        DataSync = 1,
        FileSync = 2,
    }
);

xdr_enum!(
    /// `layouttype4`.
    pub enum LayoutType("layouttype4") {
        NfsV41Files = 1,
        Osd2Objects = 2,
        BlockVolume = 3,
        FlexFiles = 4,
    }
);

xdr_enum!(
    /// `layoutiomode4`.
    pub enum LayoutIomode("layoutiomode4") {
        Read = 1,
        Rw = 2,
        Any = 3,
    }
);

/// `bitmap4`: attribute (or operation, notification) bits, at most
/// [`MAX_BITMAP_WORDS`] words, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Bitmap4 {
    len: u8,
    words: [u32; MAX_BITMAP_WORDS],
}

impl Bitmap4 {
    /// An empty bitmap.
    pub const fn new() -> Self {
        Bitmap4 {
            len: 0,
            words: [0; MAX_BITMAP_WORDS],
        }
    }

    /// A bitmap with the given bits set (bits beyond the inline capacity are ignored;
    /// RFC 8881 numbers its attributes below 82).
    pub fn from_bits(bits: &[u32]) -> Self {
        let mut b = Bitmap4::new();
        for &bit in bits {
            b.set(bit);
        }
        b
    }

    /// Set one bit (no effect beyond the inline capacity).
    pub fn set(&mut self, bit: u32) {
        let w = (bit / 32) as usize;
        if w >= MAX_BITMAP_WORDS {
            return;
        }
        self.words[w] |= 1 << (bit % 32);
        self.len = self.len.max(w as u8 + 1);
    }

    /// Whether `bit` is set.
    pub fn contains(&self, bit: u32) -> bool {
        let w = (bit / 32) as usize;
        w < usize::from(self.len) && self.words[w] & (1 << (bit % 32)) != 0
    }

    /// The words as sent on the wire.
    pub fn words(&self) -> &[u32] {
        &self.words[..usize::from(self.len)]
    }

    /// The set bits, ascending (the order of values in a `fattr4`).
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words().iter().enumerate().flat_map(|(i, &w)| {
            (0..32u32)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| i as u32 * 32 + b)
        })
    }

    /// Whether no bit is set.
    pub fn is_empty(&self) -> bool {
        self.words().iter().all(|&w| w == 0)
    }
}

impl fmt::Debug for Bitmap4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl XdrEncode for Bitmap4 {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_array(self.words(), |o, w| o.put_u32(*w));
    }
}

impl<'a> XdrDecode<'a> for Bitmap4 {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        let mut b = Bitmap4::new();
        let words = d.array("bitmap4", MAX_BITMAP_WORDS, 4, |d| d.u32())?;
        b.words[..words.len()].copy_from_slice(&words);
        b.len = words.len() as u8;
        Ok(b)
    }
}

xdr_bytes!(
    /// `component4`: one path component (UTF-8 by the RFC, kept as raw bytes).
    pub struct Component, "component4", MAX_NAME
);
xdr_bytes!(
    /// A UTF-8 string from the server (`utf8str_cs`, `utf8str_cis`, `utf8str_mixed`),
    /// kept as raw bytes.
    pub struct Utf8, "utf8str", MAX_STRING
);
xdr_bytes!(
    /// A variable-length opaque of at most `NFS4_OPAQUE_LIMIT` bytes.
    pub struct Opaque, "opaque<NFS4_OPAQUE_LIMIT>", OPAQUE_LIMIT
);

xdr_struct!(
    /// `nfs_impl_id4`: who implemented a client or server.
    pub struct ImplId<'a> {
        pub domain: Utf8<'a>,
        pub name: Utf8<'a>,
        pub date: Nfstime4,
    }
);

/// Decode an `ImplId<1>` (zero or one implementation id).
pub(crate) fn decode_impl_id<'a>(d: &mut Decoder<'a>) -> dbio_xdr::Result<Option<ImplId<'a>>> {
    let mut v = d.array("nfs_impl_id4<1>", 1, 20, ImplId::decode)?;
    Ok(v.pop())
}

/// Error for a value this codec does not decode (reported as a bad discriminant of
/// `item`, with the value that was met).
pub(crate) fn unsupported(item: &'static str, offset: usize, value: u32) -> XdrError {
    Decoder::bad_discriminant(item, offset, value)
}
