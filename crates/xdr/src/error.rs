//! Typed decoding errors: each names the item and the byte offset where decoding stopped.

use thiserror::Error;

/// Why a decode failed. Encoding cannot fail (it only appends to a buffer).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum XdrError {
    /// The input ended before the item did.
    #[error("xdr: truncated {item} at offset {offset}: need {need} bytes, {remaining} left")]
    Truncated {
        item: &'static str,
        offset: usize,
        need: u64,
        remaining: usize,
    },
    /// A length or count exceeds the bound the caller gave for this item.
    #[error("xdr: {item} at offset {offset} too long: {len} > bound {bound}")]
    TooLong {
        item: &'static str,
        offset: usize,
        len: u64,
        bound: usize,
    },
    /// A bool that is neither 0 nor 1.
    #[error("xdr: bad bool {value} at offset {offset}")]
    BadBool { offset: usize, value: u32 },
    /// An enum value or union discriminant the protocol does not define.
    #[error("xdr: bad {item} discriminant {value} at offset {offset}")]
    BadDiscriminant {
        item: &'static str,
        offset: usize,
        value: u32,
    },
    /// A string that the protocol requires to be UTF-8 is not.
    #[error("xdr: {item} at offset {offset} is not UTF-8")]
    NotUtf8 { item: &'static str, offset: usize },
    /// Bytes left over after a complete message was decoded.
    #[error("xdr: {count} trailing bytes after {item} at offset {offset}")]
    Trailing {
        item: &'static str,
        offset: usize,
        count: usize,
    },
}

/// Result of a decode.
pub type Result<T> = std::result::Result<T, XdrError>;
