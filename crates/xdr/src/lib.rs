//! dbio-xdr: XDR (RFC 4506) encoding and decoding, pure functions over byte buffers.
//!
//! # API overview
//! - Encoding appends to any [`bytes::BufMut`] (`Vec<u8>` or `BytesMut`), so a caller can
//!   build a whole RPC record in one buffer. `BufMut::put_u32`/`put_u64`/`put_i32`/`put_i64`
//!   are already XDR (big-endian; `BufMut` is re-exported here); [`XdrPut`] adds `put_xdr_bool`, `put_opaque_fixed`,
//!   `put_opaque`, `put_string`, `put_option`, `put_array`, and `put_opaque_len` which writes
//!   only the length word so that a large payload can follow as its own slice
//!   (vectored write, no copy) with `&PAD[..padding(len)]` after it.
//! - Decoding is a cursor: [`Decoder::new`]`(&[u8])`, then `u32()`, `u64()`, `bool()`,
//!   `enum_with(item, f)`, `opaque_fixed(item, n)`, `array_fixed::<N>(item)`,
//!   `opaque(item, bound)` (borrowed, zero-copy), `opaque_vec(item, bound)` (owned),
//!   `string(item, bound)` / `string_bytes(item, bound)`, `option(f)`,
//!   `array(item, bound, min_size, f)`, `list(item, bound, f)` (READDIR-style chains), and
//!   `finish(item)` to reject trailing bytes. `item` names the field in error messages.
//! - Every length is checked against the remaining input and the caller's bound before
//!   anything is allocated; no decoder panics. Errors are [`XdrError`].
//! - [`XdrEncode`] / [`XdrDecode`] are implemented for integers, bool, `[u8; N]`
//!   (fixed opaque) and `Option<T>`; protocol crates implement them for their structs.

mod decode;
mod encode;
mod error;

/// Re-exported so callers can write integers without depending on `bytes` themselves.
pub use bytes::BufMut;
pub use decode::{Decoder, XdrDecode};
pub use encode::{padding, XdrEncode, XdrPut, PAD};
pub use error::{Result, XdrError};
