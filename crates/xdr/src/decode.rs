//! Decoding: a cursor over a borrowed byte slice.
//!
//! Every variable-length item is checked against the bytes that remain and against a
//! bound given by the caller before anything is allocated, so a hostile length word
//! (0xFFFF_FFFF) costs nothing. No method panics on any input.

use crate::encode::padding;
use crate::error::{Result, XdrError};

/// A read cursor over XDR bytes. Borrowed results (`opaque`, `string_bytes`) point into
/// the input and live as long as it does.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// Start decoding at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }

    /// Bytes consumed so far (the offset that errors report).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The unconsumed input.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Fail unless every byte was consumed; `item` names what was decoded.
    pub fn finish(&self, item: &'static str) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(XdrError::Trailing {
                item,
                offset: self.pos,
                count,
            }),
        }
    }

    /// Take exactly `n` bytes.
    fn take(&mut self, item: &'static str, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(XdrError::Truncated {
                item,
                offset: self.pos,
                need: n as u64,
                remaining: self.remaining(),
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn word(&mut self, item: &'static str) -> Result<[u8; 4]> {
        let s = self.take(item, 4)?;
        Ok([s[0], s[1], s[2], s[3]])
    }

    /// Unsigned 32-bit integer.
    pub fn u32(&mut self) -> Result<u32> {
        self.word("u32").map(u32::from_be_bytes)
    }

    /// Signed 32-bit integer.
    pub fn i32(&mut self) -> Result<i32> {
        self.word("i32").map(i32::from_be_bytes)
    }

    /// Unsigned hyper (64-bit).
    pub fn u64(&mut self) -> Result<u64> {
        let s = self.take("u64", 8)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(s);
        Ok(u64::from_be_bytes(b))
    }

    /// Signed hyper (64-bit).
    pub fn i64(&mut self) -> Result<i64> {
        self.u64().map(|v| v as i64)
    }

    /// Boolean: exactly 0 or 1.
    pub fn bool(&mut self) -> Result<bool> {
        let offset = self.pos;
        match self.u32()? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(XdrError::BadBool { offset, value }),
        }
    }

    /// Enum or union discriminant, converted by `f`; `None` from `f` is reported as a bad
    /// discriminant of `item`.
    pub fn enum_with<T>(
        &mut self,
        item: &'static str,
        f: impl FnOnce(u32) -> Option<T>,
    ) -> Result<T> {
        let offset = self.pos;
        let value = self.u32()?;
        f(value).ok_or(XdrError::BadDiscriminant {
            item,
            offset,
            value,
        })
    }

    /// Error for an unknown discriminant just read by the caller (at `offset`).
    pub fn bad_discriminant(item: &'static str, offset: usize, value: u32) -> XdrError {
        XdrError::BadDiscriminant {
            item,
            offset,
            value,
        }
    }

    /// Fixed-length opaque of `n` bytes (plus padding), borrowed.
    pub fn opaque_fixed(&mut self, item: &'static str, n: usize) -> Result<&'a [u8]> {
        let total = n.saturating_add(padding(n));
        if total > self.remaining() {
            return Err(XdrError::Truncated {
                item,
                offset: self.pos,
                need: total as u64,
                remaining: self.remaining(),
            });
        }
        let s = self.take(item, n)?;
        // Padding is skipped, not checked: RFC 4506 asks senders for zeros, and
        // accepting other values costs nothing and interoperates with sloppy peers.
        self.pos += padding(n);
        Ok(s)
    }

    /// Fixed-length opaque into an array (verifiers, cookie verifiers).
    pub fn array_fixed<const N: usize>(&mut self, item: &'static str) -> Result<[u8; N]> {
        let s = self.opaque_fixed(item, N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Length word of a variable-length item, checked against `bound` and against the
    /// remaining input assuming each element takes at least `min_size` bytes.
    fn length(&mut self, item: &'static str, bound: usize, min_size: usize) -> Result<usize> {
        let offset = self.pos;
        let len = self.u32()?;
        if len as u64 > bound as u64 {
            self.pos = offset;
            return Err(XdrError::TooLong {
                item,
                offset,
                len: len.into(),
                bound,
            });
        }
        let need = u64::from(len) * min_size as u64;
        if need > self.remaining() as u64 {
            let remaining = self.remaining();
            self.pos = offset;
            return Err(XdrError::Truncated {
                item,
                offset,
                need,
                remaining,
            });
        }
        Ok(len as usize)
    }

    /// Variable-length opaque of at most `bound` bytes, borrowed from the input (zero-copy;
    /// READ data is returned this way).
    pub fn opaque(&mut self, item: &'static str, bound: usize) -> Result<&'a [u8]> {
        let len = self.length(item, bound, 1)?;
        self.opaque_fixed(item, len)
    }

    /// Variable-length opaque of at most `bound` bytes, copied into a new vector.
    pub fn opaque_vec(&mut self, item: &'static str, bound: usize) -> Result<Vec<u8>> {
        self.opaque(item, bound).map(<[u8]>::to_vec)
    }

    /// String of at most `bound` bytes as raw bytes (file names need not be UTF-8).
    pub fn string_bytes(&mut self, item: &'static str, bound: usize) -> Result<&'a [u8]> {
        self.opaque(item, bound)
    }

    /// String of at most `bound` bytes that must be UTF-8.
    pub fn string(&mut self, item: &'static str, bound: usize) -> Result<&'a str> {
        let offset = self.pos;
        let b = self.opaque(item, bound)?;
        std::str::from_utf8(b).map_err(|_| XdrError::NotUtf8 { item, offset })
    }

    /// Optional data (`*T`): a bool, then the value when present.
    pub fn option<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<Option<T>> {
        if self.bool()? {
            f(self).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The count of a counted array whose items the caller reads one by one (no vector),
    /// checked as [`Self::array`] checks it.
    pub fn count(&mut self, item: &'static str, bound: usize, min_size: usize) -> Result<usize> {
        self.length(item, bound, min_size.max(1))
    }

    /// Counted array of at most `bound` items, each at least `min_size` bytes on the wire
    /// (so the count is also checked against the input before the vector is allocated).
    pub fn array<T>(
        &mut self,
        item: &'static str,
        bound: usize,
        min_size: usize,
        mut f: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let n = self.length(item, bound, min_size.max(1))?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(f(self)?);
        }
        Ok(v)
    }

    /// Linked list (`*entry` chains, as in READDIR): `value_follows`, entry, repeat; at
    /// most `bound` entries. Each iteration consumes input, so it always ends.
    pub fn list<T>(
        &mut self,
        item: &'static str,
        bound: usize,
        mut f: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut v = Vec::new();
        while self.bool()? {
            if v.len() == bound {
                return Err(XdrError::TooLong {
                    item,
                    offset: self.pos,
                    len: bound as u64 + 1,
                    bound,
                });
            }
            v.push(f(self)?);
        }
        Ok(v)
    }

    /// Decode any [`XdrDecode`] value.
    pub fn decode<T: XdrDecode<'a>>(&mut self) -> Result<T> {
        T::decode(self)
    }
}

/// A value that can be decoded from XDR.
pub trait XdrDecode<'a>: Sized {
    /// Decode one value at the cursor.
    fn decode(d: &mut Decoder<'a>) -> Result<Self>;

    /// Decode a whole buffer, failing on trailing bytes.
    fn from_xdr(buf: &'a [u8]) -> Result<Self> {
        let mut d = Decoder::new(buf);
        let v = Self::decode(&mut d)?;
        d.finish(std::any::type_name::<Self>())?;
        Ok(v)
    }
}

impl<'a> XdrDecode<'a> for u32 {
    fn decode(d: &mut Decoder<'a>) -> Result<Self> {
        d.u32()
    }
}
impl<'a> XdrDecode<'a> for i32 {
    fn decode(d: &mut Decoder<'a>) -> Result<Self> {
        d.i32()
    }
}
impl<'a> XdrDecode<'a> for u64 {
    fn decode(d: &mut Decoder<'a>) -> Result<Self> {
        d.u64()
    }
}
impl<'a> XdrDecode<'a> for i64 {
    fn decode(d: &mut Decoder<'a>) -> Result<Self> {
        d.i64()
    }
}
impl<'a> XdrDecode<'a> for bool {
    fn decode(d: &mut Decoder<'a>) -> Result<Self> {
        d.bool()
    }
}
impl<'a, const N: usize> XdrDecode<'a> for [u8; N] {
    fn decode(d: &mut Decoder<'a>) -> Result<Self> {
        d.array_fixed("opaque[N]")
    }
}
impl<'a, T: XdrDecode<'a>> XdrDecode<'a> for Option<T> {
    fn decode(d: &mut Decoder<'a>) -> Result<Self> {
        d.option(T::decode)
    }
}
