//! Portmapper v2 (RFC 1833 section 3): program 100000, version 2, port 111.
//!
//! GETPORT takes a [`Mapping`] (port ignored) and returns the port as a u32 (0 when the
//! program is not registered); DUMP returns [`MappingList`]; SET and UNSET take a
//! [`Mapping`] and return a bool.

use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrEncode, XdrPut};

/// RPC program number of the portmapper.
pub const PROGRAM: u32 = 100000;
/// Portmapper version 2.
pub const VERSION: u32 = 2;
/// Well-known portmapper port.
pub const PORT: u16 = 111;
/// `prot` value for TCP.
pub const IPPROTO_TCP: u32 = 6;
/// `prot` value for UDP.
pub const IPPROTO_UDP: u32 = 17;
/// Most mappings accepted in a DUMP reply.
pub const MAX_MAPPINGS: usize = 1 << 16;

xdr_enum!(
    /// Portmapper procedure numbers.
    pub enum Proc("portmap procedure") {
        Null = 0,
        Set = 1,
        Unset = 2,
        Getport = 3,
        Dump = 4,
        Callit = 5,
    }
);

xdr_struct!(
    /// `mapping`: a program version on a transport protocol and its port.
    #[derive(Copy, Hash)]
    pub struct Mapping {
        pub prog: u32,
        pub vers: u32,
        pub prot: u32,
        pub port: u32,
    }
);

/// Decode a GETPORT result into a port; 0 means not registered, and values above 65535
/// are malformed.
pub fn decode_getport(results: &[u8]) -> dbio_xdr::Result<u16> {
    let mut d = Decoder::new(results);
    d.enum_with("port", |p| u16::try_from(p).ok())
}

/// DUMP result (`pmaplist`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MappingList(pub Vec<Mapping>);

impl XdrEncode for MappingList {
    fn encode<B: BufMut>(&self, out: &mut B) {
        for m in &self.0 {
            out.put_xdr_bool(true);
            m.encode(out);
        }
        out.put_xdr_bool(false);
    }
}

impl<'a> XdrDecode<'a> for MappingList {
    fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        d.list("pmaplist", MAX_MAPPINGS, Decoder::decode)
            .map(MappingList)
    }
}
