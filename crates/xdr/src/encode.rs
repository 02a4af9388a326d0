//! Encoding: XDR items appended to any [`bytes::BufMut`] (`Vec<u8>`, `BytesMut`).
//!
//! Encoding never fails; lengths that do not fit in 32 bits are a caller bug, and callers
//! bound them before encoding (a name is at most a few hundred bytes, a WRITE at most wtmax).

use bytes::BufMut;

/// Number of zero bytes that pad an item of `len` bytes to a multiple of four.
pub const fn padding(len: usize) -> usize {
    (4 - (len & 3)) & 3
}

/// Zero bytes used for padding.
pub const PAD: [u8; 3] = [0; 3];

/// XDR encoding methods on every `BufMut`.
///
/// Integers are big-endian, so `put_u32`/`put_i32`/`put_u64`/`put_i64` from `BufMut`
/// already encode XDR; this trait adds the composite items.
pub trait XdrPut: BufMut {
    /// `bool`: 0 or 1 as a u32.
    fn put_xdr_bool(&mut self, v: bool) {
        self.put_u32(u32::from(v));
    }

    /// Fixed-length opaque: the bytes, then zero padding to four.
    fn put_opaque_fixed(&mut self, data: &[u8]) {
        self.put_slice(data);
        self.put_slice(&PAD[..padding(data.len())]);
    }

    /// Variable-length opaque: length, bytes, zero padding.
    fn put_opaque(&mut self, data: &[u8]) {
        self.put_opaque_len(data.len());
        self.put_opaque_fixed(data);
    }

    /// Only the length word of a variable-length opaque. The caller then sends the bytes
    /// itself (for example as a separate slice in a vectored write) followed by
    /// `&PAD[..padding(len)]`; this is how a WRITE payload avoids being copied.
    fn put_opaque_len(&mut self, len: usize) {
        debug_assert!(u32::try_from(len).is_ok(), "xdr opaque longer than 4 GiB");
        self.put_u32(len as u32);
    }

    /// String: same wire form as variable-length opaque.
    fn put_string(&mut self, s: &str) {
        self.put_opaque(s.as_bytes());
    }

    /// Optional data (`*T`): a bool, then the value when present.
    fn put_option<T>(&mut self, v: Option<&T>, mut f: impl FnMut(&mut Self, &T)) {
        self.put_xdr_bool(v.is_some());
        if let Some(v) = v {
            f(self, v);
        }
    }

    /// Counted array (`T<>`): the count, then each item.
    fn put_array<T>(&mut self, items: &[T], mut f: impl FnMut(&mut Self, &T)) {
        self.put_opaque_len(items.len());
        for item in items {
            f(self, item);
        }
    }
}

impl<B: BufMut + ?Sized> XdrPut for B {}

/// A value with an XDR wire form.
pub trait XdrEncode {
    /// Append the value to `out`.
    fn encode<B: BufMut>(&self, out: &mut B);

    /// Encode into a fresh vector (tests and small messages).
    fn to_xdr(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.encode(&mut v);
        v
    }
}

impl XdrEncode for u32 {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u32(*self);
    }
}
impl XdrEncode for i32 {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_i32(*self);
    }
}
impl XdrEncode for u64 {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u64(*self);
    }
}
impl XdrEncode for i64 {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_i64(*self);
    }
}
impl XdrEncode for bool {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_xdr_bool(*self);
    }
}
/// Fixed-length opaque of N bytes (verifiers, cookie verifiers).
impl<const N: usize> XdrEncode for [u8; N] {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_opaque_fixed(self);
    }
}
/// Optional data.
impl<T: XdrEncode> XdrEncode for Option<T> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_option(self.as_ref(), |o, v| v.encode(o));
    }
}
