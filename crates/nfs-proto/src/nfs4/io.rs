//! The data path's COMPOUND: SEQUENCE, PUTFH and READ or WRITE, encoded straight into
//! the call buffer, and its reply read without a list of results. The same bytes as
//! `Compound::new("", 1).sequence(..).putfh(..).read(..)` and
//! [`super::Compound::encode_head`], without the op list (an allocation per call) and
//! with one copy into the buffer instead of one per XDR word; the same reading as
//! [`super::decode_compound`], with the all-successful reply read word by word first.
//! Every READ and WRITE pays for both, which were most of what NFSv4.1 cost the client
//! beyond NFSv3.

use dbio_xdr::{BufMut, Decoder, XdrDecode, XdrError};

use super::res::{CompoundReader, OpFailure, OpResult, SequenceOk};
use super::types::{Fh4, SessionId, StableHow, Stateid, Verifier, FHSIZE, MAX_DATA};
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

/// What a reply to an [`IoCompound`] says: SEQUENCE's result (when it was the first op
/// and succeeded), the failed op, and the third op's result if READ or WRITE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoReply<'a> {
    pub sequence: Option<SequenceOk>,
    pub failure: Option<OpFailure>,
    pub result: Option<IoResult<'a>>,
}

/// A READ's or WRITE's result (not the whole [`OpResult`], which has room for any op's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoResult<'a> {
    /// The data, borrowed from the reply.
    Read { eof: bool, data: &'a [u8] },
    Write {
        count: u32,
        committed: StableHow,
        /// The server instance's write verifier: a change means UNSTABLE data it
        /// answered earlier may be gone.
        verifier: Verifier,
    },
}

/// Reads a reply to an [`IoCompound`] (the RPC reply's results): what
/// [`super::decode_compound`] would find, without its list of results.
pub fn decode_io_reply(results: &[u8]) -> Result<IoReply<'_>, XdrError> {
    if let Some(r) = all_ok(results) {
        return Ok(r);
    }
    let mut ops = CompoundReader::new(results)?;
    let mut r = IoReply {
        sequence: None,
        failure: None,
        result: None,
    };
    let mut index = 0;
    while let Some(op) = ops.next_op() {
        match (index, op?) {
            (_, Err(f)) => r.failure = Some(f),
            (0, Ok(OpResult::Sequence(ok))) => r.sequence = Some(ok),
            (2, Ok(OpResult::Read { eof, data })) => r.result = Some(IoResult::Read { eof, data }),
            (
                2,
                Ok(OpResult::Write {
                    count,
                    committed,
                    verifier,
                }),
            ) => {
                r.result = Some(IoResult::Write {
                    count,
                    committed,
                    verifier,
                })
            }
            _ => {}
        }
        index += 1;
    }
    Ok(r)
}

/// The reply of nearly every I/O: status OK, the empty tag sent, SEQUENCE, PUTFH and
/// READ or WRITE all OK, nothing after. `None` for anything else, which the general
/// reader then decodes (and names what is wrong).
fn all_ok(results: &[u8]) -> Option<IoReply<'_>> {
    const NFS4_OK: u32 = 0;
    let mut d = Decoder::new(results);
    let mut word = |want: u32| d.u32().ok().filter(|w| *w == want).map(drop);
    word(NFS4_OK)?;
    word(0)?; // tag
    word(3)?;
    word(Opnum::Sequence as u32)?;
    word(NFS4_OK)?;
    let sequence = SequenceOk::decode(&mut d).ok()?;
    let mut word = |want: u32| d.u32().ok().filter(|w| *w == want).map(drop);
    word(Opnum::Putfh as u32)?;
    word(NFS4_OK)?;
    let op = d.u32().ok()?;
    (d.u32().ok()? == NFS4_OK).then_some(())?;
    let result = if op == Opnum::Read as u32 {
        let eof = d.bool().ok()?;
        let data = d.opaque("READ data", MAX_DATA).ok()?;
        IoResult::Read { eof, data }
    } else if op == Opnum::Write as u32 {
        let count = d.u32().ok()?;
        let committed = StableHow::decode(&mut d).ok()?;
        let verifier = d.opaque_fixed("verifier", 8).ok()?.try_into().ok()?;
        IoResult::Write {
            count,
            committed,
            verifier,
        }
    } else {
        return None;
    };
    d.finish("COMPOUND4res").ok()?;
    Some(IoReply {
        sequence: Some(sequence),
        failure: None,
        result: Some(result),
    })
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

    /// The fast reading and the general one agree on every prefix and variant of a
    /// reply.
    #[test]
    fn an_io_reply_reads_as_decode_compound_does() {
        let w = |ws: &[u32]| -> Vec<u8> { ws.iter().flat_map(|x| x.to_be_bytes()).collect() };
        let seq = [53, 0, 1, 2, 3, 4, 9, 5, 63, 31, 0];
        let mut replies = Vec::new();
        for third in [
            vec![25, 0, 1, 5, 0x6162_6364, 0x6500_0000],
            vec![38, 0, 8192, 2, 7, 7],
            vec![25, 10005],
            vec![26, 0, 0, 0, 0, 0, 0, 0],
        ] {
            let mut r = vec![0, 0, 3];
            r.extend(seq);
            r.extend([22, 0]);
            r.extend(third);
            replies.push(w(&r));
        }
        replies.push(w(&[10052, 0, 1, 53, 10052]));
        replies.push(w(&[0, 1, 0x6162_6364, 1, 22, 0]));
        for b in &replies {
            for n in 0..=b.len() + 4 {
                let mut b = b.clone();
                b.resize(n, 0);
                let general = super::super::decode_compound(&b);
                let io = decode_io_reply(&b);
                assert_eq!(io.is_ok(), general.is_ok(), "{b:?}");
                let (Ok(io), Ok(general)) = (io, general) else {
                    continue;
                };
                assert_eq!(io.failure, general.failure);
                let seq = match general.results.first() {
                    Some(OpResult::Sequence(s)) => Some(*s),
                    _ => None,
                };
                assert_eq!(io.sequence, seq);
                let third = match general.results.get(2) {
                    Some(OpResult::Read { eof, data }) => Some(IoResult::Read { eof: *eof, data }),
                    Some(OpResult::Write {
                        count,
                        committed,
                        verifier,
                    }) => Some(IoResult::Write {
                        count: *count,
                        committed: *committed,
                        verifier: *verifier,
                    }),
                    _ => None,
                };
                assert_eq!(io.result, third);
            }
        }
    }
}
