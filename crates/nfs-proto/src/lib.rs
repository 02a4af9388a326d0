//! dbio-nfs-proto: wire formats of the RPC programs dbio speaks: pure encoders and
//! decoders, no I/O (the client, with its connections, is `dbio-nfs`).
//!
//! - [`portmap`]: portmapper v2 (program 100000): GETPORT, DUMP, SET, UNSET.
//! - [`mount3`]: MOUNT v3 (program 100005): NULL, MNT, DUMP, UMNT, UMNTALL, EXPORT.
//! - [`nfs3`]: NFSv3 (program 100003, RFC 1813): the 22 procedures.
//! - [`nfs4`]: NFSv4.1 (program 100003 version 4, RFC 8881): COMPOUND arguments and
//!   results for the operations a data client needs, pNFS files layouts.
//!
//! Every argument type implements [`dbio_xdr::XdrEncode`] (append after the RPC call
//! header) and every result type implements [`dbio_xdr::XdrDecode`] over the results
//! slice that `dbio_rpc::decode_reply` returns. Both directions are implemented for all
//! types so that tests and test servers can use them too.

/// Declares a struct whose fields are encoded and decoded in order with their own
/// `XdrEncode`/`XdrDecode` implementations (the common case in these protocols).
macro_rules! xdr_struct {
    (
        $(#[$m:meta])*
        pub struct $name:ident<$lt:lifetime> { $($(#[$fm:meta])* pub $f:ident : $t:ty),* $(,)? }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name<$lt> { $($(#[$fm])* pub $f: $t),* }
        impl<$lt> dbio_xdr::XdrEncode for $name<$lt> {
            fn encode<B: dbio_xdr::BufMut>(&self, _out: &mut B) {
                $(dbio_xdr::XdrEncode::encode(&self.$f, _out);)*
            }
        }
        impl<$lt> dbio_xdr::XdrDecode<$lt> for $name<$lt> {
            fn decode(_d: &mut dbio_xdr::Decoder<$lt>) -> dbio_xdr::Result<Self> {
                Ok($name { $($f: _d.decode()?),* })
            }
        }
    };
    (
        $(#[$m:meta])*
        pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident : $t:ty),* $(,)? }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name { $($(#[$fm])* pub $f: $t),* }
        impl dbio_xdr::XdrEncode for $name {
            fn encode<B: dbio_xdr::BufMut>(&self, _out: &mut B) {
                $(dbio_xdr::XdrEncode::encode(&self.$f, _out);)*
            }
        }
        impl<'de> dbio_xdr::XdrDecode<'de> for $name {
            fn decode(_d: &mut dbio_xdr::Decoder<'de>) -> dbio_xdr::Result<Self> {
                Ok($name { $($f: _d.decode()?),* })
            }
        }
    };
}

/// Declares a C-like enum carried as a u32, with `XdrEncode`/`XdrDecode`; an unknown
/// value is a bad discriminant naming the XDR type.
macro_rules! xdr_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident ($xdr:literal) { $($(#[$vm:meta])* $v:ident = $n:literal),* $(,)? }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $v = $n),* }
        impl $name {
            /// The value for a wire number, if the protocol defines it.
            pub fn from_u32(v: u32) -> Option<Self> {
                match v {
                    $($n => Some($name::$v),)*
                    _ => None,
                }
            }
        }
        impl dbio_xdr::XdrEncode for $name {
            fn encode<B: dbio_xdr::BufMut>(&self, out: &mut B) {
                dbio_xdr::BufMut::put_u32(out, *self as u32);
            }
        }
        impl<'de> dbio_xdr::XdrDecode<'de> for $name {
            fn decode(d: &mut dbio_xdr::Decoder<'de>) -> dbio_xdr::Result<Self> {
                d.enum_with($xdr, $name::from_u32)
            }
        }
    };
}

/// Declares a borrowed variable-length opaque or string with a decode bound.
macro_rules! xdr_bytes {
    ($(#[$m:meta])* pub struct $name:ident, $xdr:literal, $bound:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name<'a>(pub &'a [u8]);
        impl<'a> $name<'a> {
            /// Largest length accepted when decoding.
            pub const BOUND: usize = $bound;
        }
        impl<'a> From<&'a str> for $name<'a> {
            fn from(s: &'a str) -> Self {
                $name(s.as_bytes())
            }
        }
        impl<'a> From<&'a [u8]> for $name<'a> {
            fn from(s: &'a [u8]) -> Self {
                $name(s)
            }
        }
        impl<'a> dbio_xdr::XdrEncode for $name<'a> {
            fn encode<B: dbio_xdr::BufMut>(&self, out: &mut B) {
                dbio_xdr::XdrPut::put_opaque(out, self.0);
            }
        }
        impl<'a> dbio_xdr::XdrDecode<'a> for $name<'a> {
            fn decode(d: &mut dbio_xdr::Decoder<'a>) -> dbio_xdr::Result<Self> {
                d.opaque($xdr, $bound).map($name)
            }
        }
    };
}

pub mod handle;
pub mod mount3;
pub mod nfs3;
pub mod nfs4;
pub mod portmap;
