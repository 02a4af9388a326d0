//! Room in the receive buffer for the replies to come, so that a large reply is received
//! where it stays.
//!
//! Replies are read into one growing buffer and split off it without copying. A reply
//! whose start lands at the end of that buffer, with too little room behind it for the
//! rest, must move to a new buffer: with 1 MiB READ replies, reads that filled whatever
//! room was left moved about a quarter of all bytes once more (a copy in user space
//! beside the kernel's, 10-13% of the client's CPU per MiB). So a large reply that is
//! expected (an outstanding call's reply hint) or whose header has come gets room for all
//! of it before it is read, and a read is cut where that reply ends, so that it does not
//! bring in the start of the next one at the end of the room. Small replies are read as
//! many as have come, into a shared chunk, as before.

/// Replies at least this long (with their record mark) are received each into room that
/// holds all of it.
pub(crate) const LARGE: usize = 64 << 10;

/// Bytes a read may bring beyond the reply it is cut for: a reply longer than its hint
/// (attributes), and the start of the next one, moved if it is large (at most this much).
pub(crate) const SLACK: usize = 4096;

/// Largest chunk shared by small replies.
pub(crate) const CHUNK: usize = 256 << 10;

/// Smallest such chunk: one allocation still serves a few replies.
pub(crate) const MIN_CHUNK: usize = 32 << 10;

/// Largest buffer reserved for a record that is not given room of its own.
pub(crate) const MAX_CHUNK: usize = 8 << 20;

/// The chunk to reserve for small replies, when `want` bytes of the current record are
/// still to come, this connection awaits `pending` replies and, with siblings (connections
/// run by one thread), all of them await `group`.
///
/// Siblings share one chunk's worth in proportion to what each awaits: the kernel copies
/// each reply into its connection's chunk, and chunks of 256 KiB on each of 4
/// connections, each kept alive by replies not yet consumed, made a working set beyond a
/// core's cache. The copy then cost 1.8-2.0x per 8 KiB read of one connection's (perf
/// samples of `_copy_to_iter` per read); with 64 KiB each, the four cost what one does. A
/// connection alone keeps the whole chunk: smaller ones there cost 3-5% more per read.
pub(crate) fn small_chunk(want: usize, pending: usize, group: Option<usize>) -> usize {
    let share = match group {
        Some(total) if total > pending => CHUNK / total * pending,
        _ => CHUNK,
    };
    want.saturating_mul(4)
        .clamp(share.clamp(MIN_CHUNK, CHUNK), MAX_CHUNK)
}

/// What to do before the next read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Room {
    /// Spare capacity the buffer must have (reserve when it has less).
    pub need: usize,
    /// How much to reserve then (at least `need`).
    pub reserve: usize,
    /// Most bytes the read may bring.
    pub cap: usize,
}

/// The room for the next read.
/// - `fragment`: the length of the fragment whose header has been read and how many of
///   its bytes have yet to come; None while the next header is awaited.
/// - `largest`: the longest reply an outstanding call expects, when it is [`LARGE`].
/// - `small`: how much the existing policy wants for small replies (bytes still wanted,
///   at least 1) and the chunk it reserves for them.
pub(crate) fn plan(
    fragment: Option<(usize, usize)>,
    largest: Option<usize>,
    small: (usize, usize),
) -> Room {
    match (fragment, largest) {
        // The rest of a large fragment, and no further.
        (Some((len, rest)), _) if len >= LARGE => {
            let need = rest.saturating_add(SLACK);
            Room {
                need,
                reserve: need,
                cap: need,
            }
        }
        // A large reply expected, and a small one (or a header) under way: the rest of
        // it, then room for a large one even if it starts at the end of this read.
        (fragment, Some(large)) => {
            let rest = fragment.map_or(0, |(_, rest)| rest);
            let one = large.saturating_add(SLACK);
            let cap = rest.saturating_add(one);
            let need = cap.saturating_add(one);
            Room {
                need,
                reserve: need,
                cap,
            }
        }
        _ => {
            let (want, chunk) = small;
            Room {
                need: want.max(1),
                reserve: chunk.max(want),
                cap: usize::MAX,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{fragment_header, RecordDecoder};
    use bytes::{BufMut, BytesMut};

    /// Receives `stream` in reads of at most the sizes in `arrivals` (cycled), planning
    /// each read as the connection does; returns the records and the bytes moved to new
    /// buffers (the part of a record already received when its buffer had to grow).
    fn receive(stream: &[u8], arrivals: &[usize], largest: Option<usize>) -> (Vec<usize>, usize) {
        let mut dec = RecordDecoder::new(8 << 20);
        let mut records = Vec::new();
        let mut moved = 0;
        let mut at = 0;
        let mut i = 0;
        while at < stream.len() {
            let small = (dec.wanted().clamp(1, CHUNK), CHUNK);
            let room = plan(dec.fragment(), largest, small);
            let buf = dec.buffer_mut();
            if buf.capacity() - buf.len() < room.need {
                moved += buf.len();
                // A new buffer, as when earlier records still hold the old one.
                let mut fresh = BytesMut::with_capacity(buf.len() + room.reserve);
                fresh.put_slice(buf);
                *buf = fresh;
            }
            let spare = buf.capacity() - buf.len();
            assert!(spare >= room.need);
            let n = arrivals[i % arrivals.len()]
                .min(spare)
                .min(room.cap)
                .min(stream.len() - at);
            i += 1;
            buf.put_slice(&stream[at..at + n]);
            at += n;
            while let Some(r) = dec.next_record().unwrap() {
                records.push(r.len());
            }
        }
        (records, moved)
    }

    fn stream(lens: &[usize]) -> Vec<u8> {
        let mut s = Vec::new();
        for (k, &len) in lens.iter().enumerate() {
            s.extend_from_slice(&fragment_header(len, true));
            s.extend((0..len).map(|j| (j + k) as u8));
        }
        s
    }

    #[test]
    fn large_replies_are_never_moved_when_expected() {
        let mib = (1 << 20) + 120;
        let lens = [mib; 12];
        let s = stream(&lens);
        // Whatever pieces they come in, all at once or a few KiB at a time.
        for arrivals in [
            &[usize::MAX][..],
            &[300 << 10],
            &[65483, 7, 1 << 20],
            &[4096],
        ] {
            let (records, moved) = receive(&s, arrivals, Some(mib + 4));
            assert_eq!(records, lens, "{arrivals:?}");
            // Only the start of the next reply that came with the end of one.
            assert!(moved <= 11 * SLACK, "{arrivals:?}: {moved} bytes moved");
        }
    }

    #[test]
    fn a_large_reply_among_small_ones_is_not_moved_either() {
        let mib = (1 << 20) + 120;
        let lens = [8300, mib, 140, 8300, mib, mib, 28, mib];
        let s = stream(&lens);
        let (records, moved) = receive(&s, &[usize::MAX], Some(mib + 4));
        assert_eq!(records, lens);
        assert!(moved <= 8 * SLACK, "{moved} bytes moved");
    }

    #[test]
    fn an_unexpected_large_reply_moves_at_most_what_one_read_brought() {
        // No hint said it was coming: it gets its room once its header is read.
        let lens = [8300, 3 << 20, 8300];
        let s = stream(&lens);
        let (records, moved) = receive(&s, &[200 << 10], None);
        assert_eq!(records, lens);
        assert!(moved <= 200 << 10, "{moved} bytes moved");
    }

    #[test]
    fn siblings_share_one_chunk() {
        // A connection alone, whatever it awaits: the whole chunk.
        assert_eq!(small_chunk(8300, 32, None), CHUNK);
        assert_eq!(small_chunk(8300, 1, None), CHUNK);
        // 32 spread over 4 siblings: a quarter each; a busier one a larger share.
        assert_eq!(small_chunk(8300, 8, Some(32)), CHUNK / 4);
        assert_eq!(small_chunk(8300, 16, Some(32)), CHUNK / 2);
        // A sibling awaiting little still gets a few replies' worth.
        assert_eq!(small_chunk(140, 1, Some(64)), MIN_CHUNK);
        assert_eq!(small_chunk(0, 0, Some(32)), MIN_CHUNK);
        // A stale total below this connection's own count is no share at all.
        assert_eq!(small_chunk(8300, 8, Some(4)), CHUNK);
        // A record longer than the chunk under way: room for it, bounded.
        assert_eq!(small_chunk(60 << 10, 8, Some(32)), 240 << 10);
        assert_eq!(small_chunk(usize::MAX, 1, None), MAX_CHUNK);
    }

    #[test]
    fn small_replies_keep_the_shared_chunk() {
        let lens = [8300; 100];
        let s = stream(&lens);
        let (records, _) = receive(&s, &[usize::MAX], None);
        assert_eq!(records, lens);
        let r = plan(None, None, (4, 256 << 10));
        assert_eq!((r.need, r.reserve, r.cap), (4, 256 << 10, usize::MAX));
        // A small fragment under way, a large reply expected later: the read is cut
        // where a large reply starting in it would end.
        let r = plan(Some((8300, 100)), Some(1 << 20), (100, 256 << 10));
        assert_eq!(r.cap, 100 + (1 << 20) + SLACK);
        assert_eq!(r.need, r.cap + (1 << 20) + SLACK);
    }
}
