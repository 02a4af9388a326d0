//! Arguments (`XXX3args`) and successful results (`XXX3resok`) of the NFSv3 procedures.
//! Results are decoded with [`decode_res`](super::decode_res).

use super::types::*;
use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrPut};

xdr_struct!(
    /// GETATTR, READLINK, FSSTAT, FSINFO, PATHCONF arguments: just a handle.
    #[derive(Copy)]
    pub struct FhArgs {
        pub object: FileHandle,
    }
);

xdr_struct!(
    /// GETATTR result.
    #[derive(Copy)]
    pub struct GetattrOk {
        pub attributes: Fattr3,
    }
);

xdr_struct!(
    /// SETATTR arguments; `guard` makes the change conditional on the ctime.
    pub struct SetattrArgs {
        pub object: FileHandle,
        pub new_attributes: Sattr3,
        pub guard: Option<Nfstime3>,
    }
);

xdr_struct!(
    /// SETATTR, REMOVE and RMDIR results: the directory or object WCC data.
    #[derive(Copy, Default)]
    pub struct WccOk {
        pub wcc: WccData,
    }
);

/// LOOKUP, REMOVE and RMDIR arguments.
pub type LookupArgs<'a> = DirOpArgs<'a>;

xdr_struct!(
    /// LOOKUP result.
    pub struct LookupOk {
        pub object: FileHandle,
        pub obj_attributes: PostOpAttr,
        pub dir_attributes: PostOpAttr,
    }
);

xdr_struct!(
    /// ACCESS arguments: the bits of [`access`] to check.
    pub struct AccessArgs {
        pub object: FileHandle,
        pub access: u32,
    }
);

xdr_struct!(
    /// ACCESS result: the granted subset of the requested bits.
    pub struct AccessOk {
        pub obj_attributes: PostOpAttr,
        pub access: u32,
    }
);

xdr_struct!(
    /// READLINK result.
    pub struct ReadlinkOk<'a> {
        pub symlink_attributes: PostOpAttr,
        pub data: Path<'a>,
    }
);

xdr_struct!(
    /// READ arguments.
    pub struct ReadArgs {
        pub file: FileHandle,
        pub offset: u64,
        pub count: u32,
    }
);

xdr_struct!(
    /// READ result; `data` borrows the reply record (no copy).
    pub struct ReadOk<'a> {
        pub file_attributes: PostOpAttr,
        pub count: u32,
        pub eof: bool,
        pub data: Data<'a>,
    }
);

/// WRITE arguments. `count` is taken from `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteArgs<'a> {
    pub file: FileHandle,
    pub offset: u64,
    pub stable: StableHow,
    pub data: Data<'a>,
}

impl WriteArgs<'_> {
    /// Encode everything up to and including the data length word; the caller sends the
    /// `data.0.len()` payload bytes and `dbio_xdr::padding(len)` zeros after it (for
    /// example as further slices of a vectored write, so the payload is never copied).
    pub fn encode_head<B: BufMut>(&self, out: &mut B) {
        let len = self.data.0.len();
        self.file.encode(out);
        out.put_u64(self.offset);
        out.put_u32(len as u32);
        self.stable.encode(out);
        out.put_opaque_len(len);
    }
}

impl XdrEncode for WriteArgs<'_> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        self.encode_head(out);
        out.put_opaque_fixed(self.data.0);
    }
}

impl<'a> XdrDecode<'a> for WriteArgs<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        let file = d.decode()?;
        let offset = d.u64()?;
        let _count = d.u32()?;
        Ok(WriteArgs {
            file,
            offset,
            stable: d.decode()?,
            data: d.decode()?,
        })
    }
}

xdr_struct!(
    /// WRITE result. Compare `verf` across WRITEs and COMMIT: a change means the server
    /// restarted and unstable data must be sent again.
    pub struct WriteOk {
        pub file_wcc: WccData,
        pub count: u32,
        pub committed: StableHow,
        pub verf: Verifier,
    }
);

xdr_struct!(
    /// CREATE arguments.
    pub struct CreateArgs<'a> {
        pub place: DirOpArgs<'a>,
        pub how: CreateHow,
    }
);

xdr_struct!(
    /// CREATE, MKDIR, SYMLINK and MKNOD result.
    pub struct CreateOk {
        pub obj: PostOpFh,
        pub obj_attributes: PostOpAttr,
        pub dir_wcc: WccData,
    }
);

xdr_struct!(
    /// MKDIR arguments.
    pub struct MkdirArgs<'a> {
        pub place: DirOpArgs<'a>,
        pub attributes: Sattr3,
    }
);

xdr_struct!(
    /// SYMLINK arguments (`symlinkdata3` flattened).
    pub struct SymlinkArgs<'a> {
        pub place: DirOpArgs<'a>,
        pub symlink_attributes: Sattr3,
        pub symlink_data: Path<'a>,
    }
);

/// `mknoddata3`: what MKNOD creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MknodData {
    Chr(Sattr3, Specdata3),
    Blk(Sattr3, Specdata3),
    Sock(Sattr3),
    Fifo(Sattr3),
    /// Regular files, directories and links carry nothing (servers answer BADTYPE).
    Other(Ftype3),
}

impl XdrEncode for MknodData {
    fn encode<B: BufMut>(&self, out: &mut B) {
        match self {
            MknodData::Chr(a, s) | MknodData::Blk(a, s) => {
                let t = if matches!(self, MknodData::Chr(..)) {
                    Ftype3::Chr
                } else {
                    Ftype3::Blk
                };
                t.encode(out);
                a.encode(out);
                s.encode(out);
            }
            MknodData::Sock(a) => {
                Ftype3::Sock.encode(out);
                a.encode(out);
            }
            MknodData::Fifo(a) => {
                Ftype3::Fifo.encode(out);
                a.encode(out);
            }
            MknodData::Other(t) => t.encode(out),
        }
    }
}

impl<'a> XdrDecode<'a> for MknodData {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Ok(match d.decode::<Ftype3>()? {
            Ftype3::Chr => MknodData::Chr(d.decode()?, d.decode()?),
            Ftype3::Blk => MknodData::Blk(d.decode()?, d.decode()?),
            Ftype3::Sock => MknodData::Sock(d.decode()?),
            Ftype3::Fifo => MknodData::Fifo(d.decode()?),
            t => MknodData::Other(t),
        })
    }
}

xdr_struct!(
    /// MKNOD arguments.
    pub struct MknodArgs<'a> {
        pub place: DirOpArgs<'a>,
        pub what: MknodData,
    }
);

xdr_struct!(
    /// RENAME arguments.
    pub struct RenameArgs<'a> {
        pub from: DirOpArgs<'a>,
        pub to: DirOpArgs<'a>,
    }
);

xdr_struct!(
    /// RENAME result.
    #[derive(Copy)]
    pub struct RenameOk {
        pub fromdir_wcc: WccData,
        pub todir_wcc: WccData,
    }
);

xdr_struct!(
    /// LINK arguments: make `link` a new name for `file`.
    pub struct LinkArgs<'a> {
        pub file: FileHandle,
        pub link: DirOpArgs<'a>,
    }
);

xdr_struct!(
    /// LINK result.
    pub struct LinkOk {
        pub file_attributes: PostOpAttr,
        pub linkdir_wcc: WccData,
    }
);

xdr_struct!(
    /// READDIR arguments. Start with cookie 0 and a zero verifier; continue with the last
    /// entry's cookie and the verifier of the previous reply.
    pub struct ReaddirArgs {
        pub dir: FileHandle,
        pub cookie: u64,
        pub cookieverf: Verifier,
        pub count: u32,
    }
);

xdr_struct!(
    /// `entry3`.
    pub struct Entry<'a> {
        pub fileid: u64,
        pub name: Name<'a>,
        pub cookie: u64,
    }
);

/// READDIR result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaddirOk<'a> {
    pub dir_attributes: PostOpAttr,
    pub cookieverf: Verifier,
    pub entries: Vec<Entry<'a>>,
    pub eof: bool,
}

impl XdrEncode for ReaddirOk<'_> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        self.dir_attributes.encode(out);
        self.cookieverf.encode(out);
        encode_list(out, &self.entries);
        out.put_xdr_bool(self.eof);
    }
}

impl<'a> XdrDecode<'a> for ReaddirOk<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Ok(ReaddirOk {
            dir_attributes: d.decode()?,
            cookieverf: d.decode()?,
            entries: d.list("entry3", MAX_ENTRIES, Decoder::decode)?,
            eof: d.bool()?,
        })
    }
}

xdr_struct!(
    /// READDIRPLUS arguments: `dircount` bounds the names and cookies, `maxcount` the whole
    /// reply.
    pub struct ReaddirplusArgs {
        pub dir: FileHandle,
        pub cookie: u64,
        pub cookieverf: Verifier,
        pub dircount: u32,
        pub maxcount: u32,
    }
);

xdr_struct!(
    /// `entryplus3`.
    pub struct EntryPlus<'a> {
        pub fileid: u64,
        pub name: Name<'a>,
        pub cookie: u64,
        pub name_attributes: PostOpAttr,
        pub name_handle: PostOpFh,
    }
);

/// READDIRPLUS result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaddirplusOk<'a> {
    pub dir_attributes: PostOpAttr,
    pub cookieverf: Verifier,
    pub entries: Vec<EntryPlus<'a>>,
    pub eof: bool,
}

impl XdrEncode for ReaddirplusOk<'_> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        self.dir_attributes.encode(out);
        self.cookieverf.encode(out);
        encode_list(out, &self.entries);
        out.put_xdr_bool(self.eof);
    }
}

impl<'a> XdrDecode<'a> for ReaddirplusOk<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Ok(ReaddirplusOk {
            dir_attributes: d.decode()?,
            cookieverf: d.decode()?,
            entries: d.list("entryplus3", MAX_ENTRIES, Decoder::decode)?,
            eof: d.bool()?,
        })
    }
}

/// Encode a linked list (`*next` chain): each entry preceded by TRUE, then FALSE.
pub(crate) fn encode_list<B: BufMut, T: XdrEncode>(out: &mut B, items: &[T]) {
    for item in items {
        out.put_xdr_bool(true);
        item.encode(out);
    }
    out.put_xdr_bool(false);
}

xdr_struct!(
    /// FSSTAT result: bytes and files, total/free/available to this user.
    pub struct FsstatOk {
        pub obj_attributes: PostOpAttr,
        pub tbytes: u64,
        pub fbytes: u64,
        pub abytes: u64,
        pub tfiles: u64,
        pub ffiles: u64,
        pub afiles: u64,
        pub invarsec: u32,
    }
);

xdr_struct!(
    /// FSINFO result: transfer sizes the client should honour.
    pub struct FsinfoOk {
        pub obj_attributes: PostOpAttr,
        /// Largest READ.
        pub rtmax: u32,
        /// Preferred READ size.
        pub rtpref: u32,
        /// READ size multiple.
        pub rtmult: u32,
        /// Largest WRITE.
        pub wtmax: u32,
        /// Preferred WRITE size.
        pub wtpref: u32,
        /// WRITE size multiple.
        pub wtmult: u32,
        /// Preferred READDIR size.
        pub dtpref: u32,
        pub maxfilesize: u64,
        pub time_delta: Nfstime3,
        /// Bits of [`fsf`].
        pub properties: u32,
    }
);

xdr_struct!(
    /// PATHCONF result.
    pub struct PathconfOk {
        pub obj_attributes: PostOpAttr,
        pub linkmax: u32,
        pub name_max: u32,
        pub no_trunc: bool,
        pub chown_restricted: bool,
        pub case_insensitive: bool,
        pub case_preserving: bool,
    }
);

xdr_struct!(
    /// COMMIT arguments (count 0 means to the end of the file).
    pub struct CommitArgs {
        pub file: FileHandle,
        pub offset: u64,
        pub count: u32,
    }
);

xdr_struct!(
    /// COMMIT result: `verf` must equal the WRITE verifier or the data must be resent.
    pub struct CommitOk {
        pub file_wcc: WccData,
        pub verf: Verifier,
    }
);
