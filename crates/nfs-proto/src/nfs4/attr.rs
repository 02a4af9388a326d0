//! `fattr4` (RFC 8881 section 5): a bitmap and the values of the set bits, in bit order,
//! packed into one opaque. [`Fattr`] decodes the attributes a data client needs; a bit
//! the server returns that this codec does not know is an error naming the bit (the
//! values that follow cannot be found without knowing its size).

use super::status::Nfsstat4;
use super::types::{Bitmap4, Fh4, Fsid, Ftype4, LayoutType, Nfstime4, Utf8, MAX_ATTR_BYTES};
use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrError, XdrPut};

/// Attribute numbers (`FATTR4_*`).
pub mod bit {
    pub const SUPPORTED_ATTRS: u32 = 0;
    pub const TYPE: u32 = 1;
    pub const FH_EXPIRE_TYPE: u32 = 2;
    pub const CHANGE: u32 = 3;
    pub const SIZE: u32 = 4;
    pub const LINK_SUPPORT: u32 = 5;
    pub const SYMLINK_SUPPORT: u32 = 6;
    pub const NAMED_ATTR: u32 = 7;
    pub const FSID: u32 = 8;
    pub const UNIQUE_HANDLES: u32 = 9;
    pub const LEASE_TIME: u32 = 10;
    pub const RDATTR_ERROR: u32 = 11;
    pub const ACLSUPPORT: u32 = 13;
    pub const CANSETTIME: u32 = 15;
    pub const CASE_INSENSITIVE: u32 = 16;
    pub const CASE_PRESERVING: u32 = 17;
    pub const CHOWN_RESTRICTED: u32 = 18;
    pub const FILEHANDLE: u32 = 19;
    pub const FILEID: u32 = 20;
    pub const FILES_AVAIL: u32 = 21;
    pub const FILES_FREE: u32 = 22;
    pub const FILES_TOTAL: u32 = 23;
    pub const HOMOGENEOUS: u32 = 26;
    pub const MAXFILESIZE: u32 = 27;
    pub const MAXLINK: u32 = 28;
    pub const MAXNAME: u32 = 29;
    pub const MAXREAD: u32 = 30;
    pub const MAXWRITE: u32 = 31;
    pub const MODE: u32 = 33;
    pub const NO_TRUNC: u32 = 34;
    pub const NUMLINKS: u32 = 35;
    pub const OWNER: u32 = 36;
    pub const OWNER_GROUP: u32 = 37;
    pub const RAWDEV: u32 = 41;
    pub const SPACE_AVAIL: u32 = 42;
    pub const SPACE_FREE: u32 = 43;
    pub const SPACE_TOTAL: u32 = 44;
    pub const SPACE_USED: u32 = 45;
    pub const TIME_ACCESS: u32 = 47;
    /// Write-only: set the access time (SETATTR; never returned by GETATTR).
    pub const TIME_ACCESS_SET: u32 = 48;
    pub const TIME_CREATE: u32 = 50;
    pub const TIME_DELTA: u32 = 51;
    pub const TIME_METADATA: u32 = 52;
    pub const TIME_MODIFY: u32 = 53;
    /// Write-only: set the modify time (SETATTR; never returned by GETATTR).
    pub const TIME_MODIFY_SET: u32 = 54;
    pub const MOUNTED_ON_FILEID: u32 = 55;
    pub const FS_LAYOUT_TYPE: u32 = 62;
    pub const LAYOUT_TYPE: u32 = 64;
    pub const LAYOUT_BLKSIZE: u32 = 65;
    pub const LAYOUT_ALIGNMENT: u32 = 66;
    pub const SUPPATTR_EXCLCREAT: u32 = 75;
}

/// Most layout types accepted in `fs_layout_type` / `layout_type`.
const MAX_LAYOUT_TYPES: usize = 16;

/// Decoded attributes: a field is `Some` when its bit was returned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fattr<'a> {
    /// The bits the server returned.
    pub mask: Bitmap4,
    pub supported_attrs: Option<Bitmap4>,
    pub ftype: Option<Ftype4>,
    pub fh_expire_type: Option<u32>,
    pub change: Option<u64>,
    pub size: Option<u64>,
    pub link_support: Option<bool>,
    pub symlink_support: Option<bool>,
    pub named_attr: Option<bool>,
    pub fsid: Option<Fsid>,
    pub unique_handles: Option<bool>,
    pub lease_time: Option<u32>,
    pub rdattr_error: Option<Nfsstat4>,
    pub aclsupport: Option<u32>,
    pub cansettime: Option<bool>,
    pub case_insensitive: Option<bool>,
    pub case_preserving: Option<bool>,
    pub chown_restricted: Option<bool>,
    pub filehandle: Option<Fh4>,
    pub fileid: Option<u64>,
    pub files_avail: Option<u64>,
    pub files_free: Option<u64>,
    pub files_total: Option<u64>,
    pub homogeneous: Option<bool>,
    pub maxfilesize: Option<u64>,
    pub maxlink: Option<u32>,
    pub maxname: Option<u32>,
    pub maxread: Option<u64>,
    pub maxwrite: Option<u64>,
    pub mode: Option<u32>,
    pub no_trunc: Option<bool>,
    pub numlinks: Option<u32>,
    pub owner: Option<Utf8<'a>>,
    pub owner_group: Option<Utf8<'a>>,
    /// `specdata4`: major and minor device numbers.
    pub rawdev: Option<(u32, u32)>,
    pub space_avail: Option<u64>,
    pub space_free: Option<u64>,
    pub space_total: Option<u64>,
    pub space_used: Option<u64>,
    pub time_access: Option<Nfstime4>,
    pub time_create: Option<Nfstime4>,
    pub time_delta: Option<Nfstime4>,
    pub time_metadata: Option<Nfstime4>,
    pub time_modify: Option<Nfstime4>,
    pub mounted_on_fileid: Option<u64>,
    pub fs_layout_type: Option<Vec<LayoutType>>,
    pub layout_type: Option<Vec<LayoutType>>,
    pub layout_blksize: Option<u32>,
    pub layout_alignment: Option<u32>,
    pub suppattr_exclcreat: Option<Bitmap4>,
}

fn layout_types(d: &mut Decoder<'_>) -> dbio_xdr::Result<Vec<LayoutType>> {
    d.array("layouttype4<>", MAX_LAYOUT_TYPES, 4, LayoutType::decode)
}

impl<'a> Fattr<'a> {
    /// Decode the values of `mask` from `vals` (the `attrlist4` opaque), in bit order.
    /// Offsets in errors are relative to `vals`.
    pub fn from_parts(mask: Bitmap4, vals: &'a [u8]) -> dbio_xdr::Result<Self> {
        use bit::*;
        let mut a = Fattr {
            mask,
            ..Fattr::default()
        };
        let mut d = Decoder::new(vals);
        for b in mask.iter() {
            let offset = d.position();
            match b {
                SUPPORTED_ATTRS => a.supported_attrs = Some(d.decode()?),
                TYPE => a.ftype = Some(d.decode()?),
                FH_EXPIRE_TYPE => a.fh_expire_type = Some(d.u32()?),
                CHANGE => a.change = Some(d.u64()?),
                SIZE => a.size = Some(d.u64()?),
                LINK_SUPPORT => a.link_support = Some(d.bool()?),
                SYMLINK_SUPPORT => a.symlink_support = Some(d.bool()?),
                NAMED_ATTR => a.named_attr = Some(d.bool()?),
                FSID => a.fsid = Some(d.decode()?),
                UNIQUE_HANDLES => a.unique_handles = Some(d.bool()?),
                LEASE_TIME => a.lease_time = Some(d.u32()?),
                RDATTR_ERROR => a.rdattr_error = Some(d.decode()?),
                ACLSUPPORT => a.aclsupport = Some(d.u32()?),
                CANSETTIME => a.cansettime = Some(d.bool()?),
                CASE_INSENSITIVE => a.case_insensitive = Some(d.bool()?),
                CASE_PRESERVING => a.case_preserving = Some(d.bool()?),
                CHOWN_RESTRICTED => a.chown_restricted = Some(d.bool()?),
                FILEHANDLE => a.filehandle = Some(d.decode()?),
                FILEID => a.fileid = Some(d.u64()?),
                FILES_AVAIL => a.files_avail = Some(d.u64()?),
                FILES_FREE => a.files_free = Some(d.u64()?),
                FILES_TOTAL => a.files_total = Some(d.u64()?),
                HOMOGENEOUS => a.homogeneous = Some(d.bool()?),
                MAXFILESIZE => a.maxfilesize = Some(d.u64()?),
                MAXLINK => a.maxlink = Some(d.u32()?),
                MAXNAME => a.maxname = Some(d.u32()?),
                MAXREAD => a.maxread = Some(d.u64()?),
                MAXWRITE => a.maxwrite = Some(d.u64()?),
                MODE => a.mode = Some(d.u32()?),
                NO_TRUNC => a.no_trunc = Some(d.bool()?),
                NUMLINKS => a.numlinks = Some(d.u32()?),
                OWNER => a.owner = Some(d.decode()?),
                OWNER_GROUP => a.owner_group = Some(d.decode()?),
                RAWDEV => a.rawdev = Some((d.u32()?, d.u32()?)),
                SPACE_AVAIL => a.space_avail = Some(d.u64()?),
                SPACE_FREE => a.space_free = Some(d.u64()?),
                SPACE_TOTAL => a.space_total = Some(d.u64()?),
                SPACE_USED => a.space_used = Some(d.u64()?),
                TIME_ACCESS => a.time_access = Some(d.decode()?),
                TIME_CREATE => a.time_create = Some(d.decode()?),
                TIME_DELTA => a.time_delta = Some(d.decode()?),
                TIME_METADATA => a.time_metadata = Some(d.decode()?),
                TIME_MODIFY => a.time_modify = Some(d.decode()?),
                MOUNTED_ON_FILEID => a.mounted_on_fileid = Some(d.u64()?),
                FS_LAYOUT_TYPE => a.fs_layout_type = Some(layout_types(&mut d)?),
                LAYOUT_TYPE => a.layout_type = Some(layout_types(&mut d)?),
                LAYOUT_BLKSIZE => a.layout_blksize = Some(d.u32()?),
                LAYOUT_ALIGNMENT => a.layout_alignment = Some(d.u32()?),
                SUPPATTR_EXCLCREAT => a.suppattr_exclcreat = Some(d.decode()?),
                other => {
                    return Err(XdrError::BadDiscriminant {
                        item: "fattr4 attribute (bit not decoded by dbio)",
                        offset,
                        value: other,
                    })
                }
            }
        }
        d.finish("fattr4 attr_vals")?;
        Ok(a)
    }
}

/// The number in an `owner` or `owner_group` string from a server that sends ids
/// as numbers (`"1000"`: ganesha with `Only_Numeric_Owners`, Linux nfsd without an
/// id mapper); None for a name (`"oracle@example.com"`) or a number over u32. At
/// most 10 digits are looked at, whatever the string's length.
pub fn numeric_id(s: Utf8<'_>) -> Option<u32> {
    let b = s.0;
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    b.iter().try_fold(0u32, |n, d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

impl Fattr<'_> {
    /// The owner as a number (see [`numeric_id`]).
    pub fn owner_id(&self) -> Option<u32> {
        self.owner.and_then(numeric_id)
    }

    /// The owning group as a number (see [`numeric_id`]).
    pub fn group_id(&self) -> Option<u32> {
        self.owner_group.and_then(numeric_id)
    }
}

impl<'a> XdrDecode<'a> for Fattr<'a> {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        let mask = Bitmap4::decode(d)?;
        let vals = d.opaque("attrlist4", MAX_ATTR_BYTES)?;
        Fattr::from_parts(mask, vals)
    }
}

/// `settime4`: how a time attribute is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetTime {
    /// SET_TO_SERVER_TIME4: the server's clock at the time of the operation.
    ServerTime,
    /// SET_TO_CLIENT_TIME4: this time.
    ClientTime(Nfstime4),
}

impl SetTime {
    fn encoded_len(&self) -> usize {
        match self {
            SetTime::ServerTime => 4,
            SetTime::ClientTime(_) => 16,
        }
    }
}

impl XdrEncode for SetTime {
    fn encode<B: BufMut>(&self, out: &mut B) {
        match self {
            SetTime::ServerTime => out.put_u32(0),
            SetTime::ClientTime(t) => {
                out.put_u32(1);
                t.encode(out);
            }
        }
    }
}

/// Attributes a client sets (SETATTR, CREATE, OPEN with create): the settable
/// attributes dbio needs, encoded as a `fattr4` in bit order. Build one with
/// `..SetAttrs::NONE` so that fields added later stay unset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetAttrs {
    /// `size` (truncate or extend).
    pub size: Option<u64>,
    /// `mode` (permission bits).
    pub mode: Option<u32>,
    /// `time_access_set`.
    pub time_access: Option<SetTime>,
    /// `time_modify_set`.
    pub time_modify: Option<SetTime>,
}

impl SetAttrs {
    /// No attributes (an empty `fattr4`).
    pub const NONE: SetAttrs = SetAttrs {
        size: None,
        mode: None,
        time_access: None,
        time_modify: None,
    };

    /// The bits that will be sent.
    pub fn mask(&self) -> Bitmap4 {
        let mut m = Bitmap4::new();
        if self.size.is_some() {
            m.set(bit::SIZE);
        }
        if self.mode.is_some() {
            m.set(bit::MODE);
        }
        if self.time_access.is_some() {
            m.set(bit::TIME_ACCESS_SET);
        }
        if self.time_modify.is_some() {
            m.set(bit::TIME_MODIFY_SET);
        }
        m
    }

    /// Whether no attribute is set.
    pub fn is_empty(&self) -> bool {
        self.mask().is_empty()
    }
}

impl XdrEncode for SetAttrs {
    fn encode<B: BufMut>(&self, out: &mut B) {
        self.mask().encode(out);
        let len = self.size.map_or(0, |_| 8)
            + self.mode.map_or(0, |_| 4)
            + self.time_access.map_or(0, |t| t.encoded_len())
            + self.time_modify.map_or(0, |t| t.encoded_len());
        out.put_opaque_len(len);
        // Bit order: size (4), mode (33), time_access_set (48), time_modify_set (54).
        if let Some(s) = self.size {
            out.put_u64(s);
        }
        if let Some(m) = self.mode {
            out.put_u32(m);
        }
        if let Some(t) = self.time_access {
            t.encode(out);
        }
        if let Some(t) = self.time_modify {
            t.encode(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_sent_as_numbers_decode_and_names_do_not() {
        let id = |s: &str| numeric_id(Utf8::from(s));
        assert_eq!(id("0"), Some(0));
        assert_eq!(id("1000"), Some(1000));
        assert_eq!(id("4294967295"), Some(u32::MAX));
        for not in [
            "",
            "4294967296",
            "99999999999",
            "oracle@example.com",
            "-1",
            "1 0",
        ] {
            assert_eq!(id(not), None, "{not:?}");
        }
    }
}
