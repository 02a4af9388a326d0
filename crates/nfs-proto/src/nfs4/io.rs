//! The data path's COMPOUND: SEQUENCE, PUTFH and READ or WRITE, encoded straight into
//! the call buffer. The same bytes as `Compound::new("", 1).sequence(..).putfh(..)
//! .read(..)` and [`super::Compound::encode_head`], without the op list (an allocation
//! per call) and with one copy into the buffer instead of one per XDR word: every READ
//! and WRITE pays for it, and the words are most of an 8 KiB READ's encoding.

use dbio_xdr::BufMut;

use super::types::{Fh4, SessionId, StableHow, Stateid, FHSIZE};
use super::{Opnum, MINOR_VERSION};

/// READ or WRITE, the third op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    Read {
        count: u32,
    },
    /// The data is sent as its own slice after the encoded head: only its length is
    /// written here (the connection adds the XDR padding).
    Write {
        stable: StableHow,
        len: u32,
    },
}

/// The arguments of SEQUENCE (cachethis false), PUTFH and the I/O op.
#[derive(Clone, Copy, Debug)]
pub struct IoCompound<'a> {
    pub sessionid: SessionId,
    pub sequenceid: u32,
    pub slotid: u32,
    pub highest_slotid: u32,
    pub fh: &'a Fh4,
    pub stateid: Stateid,
    pub offset: u64,
    pub op: IoOp,
}

/// The longest head: COMPOUND header with an empty tag (12), SEQUENCE (36), PUTFH of
/// the longest handle (8 + 128), WRITE without its data (36).
const MAX_HEAD: usize = 12 + 36 + 8 + FHSIZE + 36;

/// A fixed buffer written word by word; what does not fit is dropped (nothing can:
/// [`MAX_HEAD`] is the longest head), so writing never panics.
struct Words {
    buf: [u8; MAX_HEAD],
    at: usize,
}

impl Words {
    #[inline(always)]
    fn put(&mut self, src: &[u8]) {
        let end = self.at + src.len();
        if let Some(dst) = self.buf.get_mut(self.at..end) {
            dst.copy_from_slice(src);
            self.at = end;
        }
    }

    #[inline(always)]
    fn u32(&mut self, v: u32) {
        self.put(&v.to_be_bytes());
    }

    #[inline(always)]
    fn u64(&mut self, v: u64) {
        self.put(&v.to_be_bytes());
    }

    fn stateid(&mut self, s: &Stateid) {
        self.u32(s.seqid);
        self.put(&s.other);
    }
}

impl IoCompound<'_> {
    /// Appends the COMPOUND's arguments (after the RPC call header); a WRITE's data is
    /// left out.
    pub fn encode_head<B: BufMut>(&self, out: &mut B) {
        let mut w = Words {
            buf: [0; MAX_HEAD],
            at: 0,
        };
        // Tag (empty), minor version, three ops.
        w.u32(0);
        w.u32(MINOR_VERSION);
        w.u32(3);
        w.u32(Opnum::Sequence as u32);
        w.put(&self.sessionid);
        w.u32(self.sequenceid);
        w.u32(self.slotid);
        w.u32(self.highest_slotid);
        w.u32(0); // cachethis
        w.u32(Opnum::Putfh as u32);
        let fh = self.fh.as_bytes();
        w.u32(fh.len() as u32);
        w.put(fh);
        w.put(&[0; 3][..(4 - fh.len() % 4) % 4]);
        match self.op {
            IoOp::Read { count } => {
                w.u32(Opnum::Read as u32);
                w.stateid(&self.stateid);
                w.u64(self.offset);
                w.u32(count);
            }
            IoOp::Write { stable, len } => {
                w.u32(Opnum::Write as u32);
                w.stateid(&self.stateid);
                w.u64(self.offset);
                w.u32(stable as u32);
                w.u32(len);
            }
        }
        out.put_slice(&w.buf[..w.at]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nfs4::Compound;

    /// The same bytes as the general encoder, for handles of every length.
    #[test]
    fn the_io_compound_is_the_general_encoding() {
        let stateid = Stateid {
            seqid: 7,
            other: [3; 12],
        };
        for len in 0..=FHSIZE {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
            let fh = Fh4::new(&bytes).unwrap();
            let data = vec![9u8; 8192];
            for io in [
                IoOp::Read { count: 8192 },
                IoOp::Write {
                    stable: StableHow::DataSync,
                    len: 8192,
                },
            ] {
                let general = match io {
                    IoOp::Read { .. } => Compound::new("", MINOR_VERSION)
                        .sequence([1; 16], 0xdead_beef, 5, 63, false)
                        .putfh(fh)
                        .read(stateid, 1 << 40, 8192),
                    IoOp::Write { .. } => Compound::new("", MINOR_VERSION)
                        .sequence([1; 16], 0xdead_beef, 5, 63, false)
                        .putfh(fh)
                        .write(stateid, 1 << 40, StableHow::DataSync, &data),
                };
                let mut want = Vec::new();
                general.encode_head(&mut want);
                let mut got = Vec::new();
                IoCompound {
                    sessionid: [1; 16],
                    sequenceid: 0xdead_beef,
                    slotid: 5,
                    highest_slotid: 63,
                    fh: &fh,
                    stateid,
                    offset: 1 << 40,
                    op: io,
                }
                .encode_head(&mut got);
                assert_eq!(got, want, "handle of {len} bytes, {io:?}");
            }
        }
    }
}
