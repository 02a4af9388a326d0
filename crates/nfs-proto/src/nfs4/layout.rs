//! pNFS files layout (RFC 8881 section 13): the body of a LAYOUT4_NFSV4_1_FILES layout
//! and of its device address, and `netaddr4` universal addresses.

use super::types::{DeviceId, Fh4, MAX_STRING};
use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrError, XdrPut};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Most file handles accepted in one files layout.
pub const MAX_LAYOUT_FHS: usize = 4096;
/// Most stripe indices accepted in one device address.
pub const MAX_STRIPES: usize = 4096;
/// Most data-server lists, and addresses per list, accepted in one device address.
pub const MAX_DS: usize = 256;

/// `nfl_util4` flag: dense packing of stripes on the data servers.
pub const NFL4_UFLG_DENSE: u32 = 0x1;
/// `nfl_util4` flag: COMMIT goes to the metadata server.
pub const NFL4_UFLG_COMMIT_THRU_MDS: u32 = 0x2;
/// `nfl_util4`: the flag bits.
pub const NFL4_UFLG_MASK: u32 = 0x3f;

/// `nfsv4_1_file_layout4`: the body of a files layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLayout {
    pub deviceid: DeviceId,
    /// `nfl_util4`: stripe unit (upper bits) and flags (lower six bits).
    pub util: u32,
    pub first_stripe_index: u32,
    pub pattern_offset: u64,
    pub fh_list: Vec<Fh4>,
}

impl FileLayout {
    /// The stripe unit in bytes.
    pub fn stripe_unit(&self) -> u32 {
        self.util & !NFL4_UFLG_MASK
    }

    /// Whether stripes are packed densely on the data servers.
    pub fn dense(&self) -> bool {
        self.util & NFL4_UFLG_DENSE != 0
    }

    /// Whether COMMIT goes through the metadata server.
    pub fn commit_through_mds(&self) -> bool {
        self.util & NFL4_UFLG_COMMIT_THRU_MDS != 0
    }

    /// Decode a `loc_body` whole (trailing bytes are an error).
    pub fn from_body(body: &[u8]) -> dbio_xdr::Result<Self> {
        Self::from_xdr(body)
    }
}

impl XdrEncode for FileLayout {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_opaque_fixed(&self.deviceid);
        out.put_u32(self.util);
        out.put_u32(self.first_stripe_index);
        out.put_u64(self.pattern_offset);
        out.put_array(&self.fh_list, |o, fh| fh.encode(o));
    }
}

impl<'a> XdrDecode<'a> for FileLayout {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Ok(FileLayout {
            deviceid: d.array_fixed("deviceid4")?,
            util: d.u32()?,
            first_stripe_index: d.u32()?,
            pattern_offset: d.u64()?,
            fh_list: d.array("nfl_fh_list", MAX_LAYOUT_FHS, 4, Fh4::decode)?,
        })
    }
}

/// `netaddr4`: a transport (`tcp`, `tcp6`, ...) and a universal address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetAddr {
    pub netid: String,
    pub uaddr: String,
}

impl NetAddr {
    /// The socket address of a universal address: `a.b.c.d.p1.p2` (tcp) or
    /// `x:y::z.p1.p2` (tcp6), port `p1 * 256 + p2`.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        parse_uaddr(&self.uaddr)
    }
}

/// Parse a universal address (RFC 5665 section 5.2.3.3/4) into a socket address.
pub fn parse_uaddr(uaddr: &str) -> Option<SocketAddr> {
    let (rest, p2) = uaddr.rsplit_once('.')?;
    let (host, p1) = rest.rsplit_once('.')?;
    let p1: u8 = p1.parse().ok()?;
    let p2: u8 = p2.parse().ok()?;
    let port = u16::from(p1) << 8 | u16::from(p2);
    let ip = if host.contains(':') {
        IpAddr::V6(host.parse::<Ipv6Addr>().ok()?)
    } else {
        IpAddr::V4(host.parse::<Ipv4Addr>().ok()?)
    };
    Some(SocketAddr::new(ip, port))
}

/// The universal address of a socket address.
pub fn format_uaddr(addr: SocketAddr) -> String {
    let port = addr.port();
    format!("{}.{}.{}", addr.ip(), port >> 8, port & 0xff)
}

impl XdrEncode for NetAddr {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_string(&self.netid);
        out.put_string(&self.uaddr);
    }
}

impl<'a> XdrDecode<'a> for NetAddr {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Ok(NetAddr {
            netid: d.string("na_r_netid", MAX_STRING)?.to_owned(),
            uaddr: d.string("na_r_addr", MAX_STRING)?.to_owned(),
        })
    }
}

/// `nfsv4_1_file_layout_ds_addr4`: the data servers of a files-layout device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDsAddr {
    /// Per stripe, the index into `multipath_ds_list`.
    pub stripe_indices: Vec<u32>,
    /// Per data server, the addresses it can be reached at (any of them, multipath).
    pub multipath_ds_list: Vec<Vec<NetAddr>>,
}

impl FileDsAddr {
    /// Decode a `da_addr_body` whole (trailing bytes are an error).
    pub fn from_body(body: &[u8]) -> dbio_xdr::Result<Self> {
        Self::from_xdr(body)
    }

    /// The data-server list for stripe `stripe` (`None` if the device does not name it).
    pub fn servers_for_stripe(&self, stripe: u32) -> Option<&[NetAddr]> {
        let n = self.stripe_indices.len();
        if n == 0 {
            return None;
        }
        let idx = *self.stripe_indices.get(stripe as usize % n)?;
        self.multipath_ds_list.get(idx as usize).map(Vec::as_slice)
    }
}

impl XdrEncode for FileDsAddr {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_array(&self.stripe_indices, |o, i| o.put_u32(*i));
        out.put_array(&self.multipath_ds_list, |o, l| {
            o.put_array(l, |o, a| a.encode(o))
        });
    }
}

impl<'a> XdrDecode<'a> for FileDsAddr {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        let stripe_indices = d.array("nflda_stripe_indices", MAX_STRIPES, 4, |d| d.u32())?;
        let multipath_ds_list = d.array("nflda_multipath_ds_list", MAX_DS, 4, |d| {
            d.array("multipath_list4", MAX_DS, 8, NetAddr::decode)
        })?;
        let lists = multipath_ds_list.len() as u32;
        if let Some(&bad) = stripe_indices.iter().find(|&&i| i >= lists) {
            return Err(XdrError::BadDiscriminant {
                item: "nflda_stripe_indices entry (beyond the data-server list)",
                offset: 0,
                value: bad,
            });
        }
        Ok(FileDsAddr {
            stripe_indices,
            multipath_ds_list,
        })
    }
}
