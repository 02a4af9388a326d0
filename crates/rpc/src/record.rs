//! Record marking (RFC 5531 section 11): RPC messages on a byte stream are sent as
//! records of one or more fragments, each preceded by a 4-byte header whose top bit marks
//! the last fragment and whose low 31 bits give the fragment length.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use thiserror::Error;

/// Top bit of a fragment header: this fragment ends the record.
pub const LAST_FRAGMENT: u32 = 0x8000_0000;
/// Largest fragment length a header can express.
pub const MAX_FRAGMENT: usize = 0x7fff_ffff;

/// Stream errors; after one, the stream is out of step and the connection must be closed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RecordError {
    #[error("rpc record of at least {len} bytes exceeds the limit of {max} bytes")]
    TooLarge { len: u64, max: usize },
}

/// Fragment header for `len` bytes.
pub fn fragment_header(len: usize, last: bool) -> [u8; 4] {
    debug_assert!(len <= MAX_FRAGMENT);
    let word = (len as u32 & !LAST_FRAGMENT) | if last { LAST_FRAGMENT } else { 0 };
    word.to_be_bytes()
}

/// Reserve room for a single-fragment record header; returns where the record starts.
/// Encode the message after it, then call [`finish_record`].
pub fn begin_record<B: BufMut + AsRef<[u8]>>(out: &mut B) -> usize {
    let start = out.as_ref().len();
    out.put_u32(0);
    start
}

/// Fill in the header reserved by [`begin_record`] as one last fragment covering
/// everything after it, plus `tail` bytes the caller will send separately (a WRITE
/// payload and its padding in a vectored write).
pub fn finish_record<B: AsMut<[u8]>>(out: &mut B, start: usize, tail: usize) {
    let buf = out.as_mut();
    let len = buf.len() - start - 4 + tail;
    buf[start..start + 4].copy_from_slice(&fragment_header(len, true));
}

/// Append `payload` as one record split into fragments of at most `max_fragment` bytes
/// (an empty payload is one empty last fragment).
pub fn encode_record<B: BufMut>(out: &mut B, payload: &[u8], max_fragment: usize) {
    let max = max_fragment.clamp(1, MAX_FRAGMENT);
    let mut chunks = payload.chunks(max).peekable();
    if chunks.peek().is_none() {
        out.put_slice(&fragment_header(0, true));
    }
    while let Some(chunk) = chunks.next() {
        out.put_slice(&fragment_header(chunk.len(), chunks.peek().is_none()));
        out.put_slice(chunk);
    }
}

/// Streaming record reassembly with a bound on the record size.
///
/// Read socket bytes straight into [`RecordDecoder::buffer_mut`] (or [`push`](Self::push)
/// a slice), then call [`next_record`](Self::next_record) until it returns `None`. A
/// record that arrives as one fragment is split off the input buffer without copying;
/// a multi-fragment record is copied once into a contiguous buffer.
#[derive(Debug)]
pub struct RecordDecoder {
    input: BytesMut,
    /// Fragments of the current record received so far (multi-fragment records only).
    assembled: BytesMut,
    /// Header of the fragment being received: (length, last).
    fragment: Option<(usize, bool)>,
    /// Bytes of the current record counted so far, including the current fragment.
    record_len: usize,
    max_record: usize,
}

impl RecordDecoder {
    /// A decoder that rejects records longer than `max_record` bytes.
    pub fn new(max_record: usize) -> Self {
        RecordDecoder {
            input: BytesMut::new(),
            assembled: BytesMut::new(),
            fragment: None,
            record_len: 0,
            max_record,
        }
    }

    /// The input buffer, to read socket bytes into (for example with tokio's `read_buf`).
    pub fn buffer_mut(&mut self) -> &mut BytesMut {
        &mut self.input
    }

    /// Append bytes that arrived.
    pub fn push(&mut self, data: &[u8]) {
        self.input.extend_from_slice(data);
    }

    /// Bytes still needed to finish the fragment being received (or its header); a hint
    /// for how much to reserve before the next read. Never more than the record bound.
    pub fn wanted(&self) -> usize {
        match self.fragment {
            Some((len, _)) => len.saturating_sub(self.input.len()),
            None => 4usize.saturating_sub(self.input.len()),
        }
    }

    /// The fragment under way, once its header has been read: its length and the bytes
    /// of it still to come.
    pub fn fragment(&self) -> Option<(usize, usize)> {
        self.fragment
            .map(|(len, _)| (len, len.saturating_sub(self.input.len())))
    }

    /// Next complete record, `Ok(None)` if more input is needed.
    pub fn next_record(&mut self) -> Result<Option<Bytes>, RecordError> {
        loop {
            let (len, last) = match self.fragment {
                Some(f) => f,
                None => {
                    if self.input.len() < 4 {
                        return Ok(None);
                    }
                    let word = self.input.get_u32();
                    let len = (word & !LAST_FRAGMENT) as usize;
                    let total = self.record_len as u64 + len as u64;
                    if total > self.max_record as u64 {
                        return Err(RecordError::TooLarge {
                            len: total,
                            max: self.max_record,
                        });
                    }
                    self.record_len += len;
                    let f = (len, word & LAST_FRAGMENT != 0);
                    self.fragment = Some(f);
                    f
                }
            };
            if self.input.len() < len {
                return Ok(None);
            }
            self.fragment = None;
            let data = self.input.split_to(len);
            if last && self.assembled.is_empty() {
                self.record_len = 0;
                return Ok(Some(data.freeze()));
            }
            self.assembled.extend_from_slice(&data);
            if last {
                self.record_len = 0;
                return Ok(Some(self.assembled.split().freeze()));
            }
        }
    }
}
