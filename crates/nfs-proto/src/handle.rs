//! File handles of NFSv3 (64 bytes at most) and NFSv4 (128): opaque bytes kept inline, so
//! that copying one never allocates.

use std::fmt;

use dbio_xdr::{BufMut, Decoder, XdrEncode, XdrPut};

/// An opaque file handle of at most `N` bytes (`N` under 256).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlineHandle<const N: usize> {
    len: u8,
    data: [u8; N],
}

impl<const N: usize> InlineHandle<N> {
    /// A handle from its bytes; `None` if longer than `N` bytes.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        if bytes.len() > N {
            return None;
        }
        let mut data = [0u8; N];
        data[..bytes.len()].copy_from_slice(bytes);
        Some(InlineHandle {
            len: bytes.len() as u8,
            data,
        })
    }

    /// The handle's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.data[..usize::from(self.len)]
    }

    /// Decodes an opaque of at most `N` bytes; `what` names it in errors.
    pub(crate) fn decode_named(d: &mut Decoder<'_>, what: &'static str) -> dbio_xdr::Result<Self> {
        let b = d.opaque(what, N)?;
        // The bound above guarantees the length fits.
        Ok(Self::new(b).unwrap_or_default())
    }
}

impl<const N: usize> Default for InlineHandle<N> {
    fn default() -> Self {
        InlineHandle {
            len: 0,
            data: [0; N],
        }
    }
}

impl<const N: usize> fmt::Debug for InlineHandle<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FileHandle(")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

impl<const N: usize> XdrEncode for InlineHandle<N> {
    fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_opaque(self.as_bytes());
    }
}
