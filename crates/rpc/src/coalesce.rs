//! Reply coalescing. With many calls outstanding, replies arrive one after another, and
//! waking the connection task for each costs more CPU than handling the reply. So the
//! socket's receive low-water mark (SO_RCVLOWAT) is raised to the expected size of a few
//! replies: the kernel wakes the task once per several replies, as a network card's
//! interrupt moderation does.
//!
//! Outstanding calls are not slowed: the mark covers at most a quarter of the replies
//! still expected, so the server always has the other three quarters to work on, and by
//! Little's law a server-bound rate keeps its latency. Replies shorter than expected (an
//! error instead of READ data) could leave the mark unreached; a short timer then reads
//! whatever has arrived, so the cost of a wrong guess is time, never a stuck call.

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use bytes::BytesMut;

/// The smallest accepted reply record with its record mark: XID, message type, reply
/// state, an empty verifier and the accept state.
pub(crate) const MIN_REPLY: u64 = 28;

/// How long a raised mark may hold replies that have arrived before they are read anyway.
pub(crate) const FALLBACK: Duration = Duration::from_millis(2);

/// Calls outstanding per reply gathered: a wake-up waits for at most a quarter of them.
const SHARE: usize = 4;

/// Tracks the bytes the outstanding calls should bring back and picks the mark.
#[derive(Debug)]
pub(crate) struct Coalescer {
    /// Replies gathered per wake-up at most; 1 turns coalescing off.
    max_batch: usize,
    /// Bytes the outstanding replies are expected to bring (their hints).
    expected: u64,
    /// The socket's current mark; 1 is the kernel's default.
    lowat: usize,
    /// Largest mark for this socket: well inside its receive buffer, so that raising the
    /// mark never makes the kernel clamp the receive window.
    cap: usize,
    /// The fallback timer found the mark unreached: no gathering until data comes again
    /// (a stalled server must not cost a timer wake-up every few milliseconds).
    paused: bool,
}

impl Coalescer {
    pub(crate) fn new(max_batch: usize) -> Coalescer {
        Coalescer {
            max_batch,
            expected: 0,
            lowat: 1,
            cap: 1,
            paused: false,
        }
    }

    /// Bytes a reply to a call with this hint is expected to bring.
    pub(crate) fn reply_bytes(hint: u32) -> u64 {
        u64::from(hint).max(MIN_REPLY)
    }

    pub(crate) fn add(&mut self, hint: u32) {
        self.expected += Self::reply_bytes(hint);
    }

    pub(crate) fn remove(&mut self, hint: u32) {
        self.expected = self.expected.saturating_sub(Self::reply_bytes(hint));
    }

    /// Every outstanding call is gone.
    pub(crate) fn clear(&mut self) {
        self.expected = 0;
    }

    /// A new socket: the kernel's default mark, and a cap from its receive buffer.
    pub(crate) fn new_socket(&mut self, rcvbuf: usize) {
        self.lowat = 1;
        self.cap = (rcvbuf / 3).max(1);
    }

    /// The fallback timer fired: read at the kernel's default mark until replies flow.
    pub(crate) fn pause(&mut self) {
        self.paused = true;
    }

    /// Replies arrived.
    pub(crate) fn resume(&mut self) {
        self.paused = false;
    }

    /// True while the mark may hold replies back (the fallback timer must run).
    pub(crate) fn holding(&self) -> bool {
        self.lowat > 1
    }

    /// The mark for `pending` outstanding calls: three quarters of the expected bytes of
    /// a quarter of them (at most `max_batch`), and 1 when fewer than `2 * SHARE` are
    /// outstanding (no gathering: latency matters more than wake-ups there).
    pub(crate) fn want(&self, pending: usize) -> usize {
        if self.max_batch <= 1 || self.paused || pending < 2 * SHARE {
            return 1;
        }
        let batch = (pending / SHARE).min(self.max_batch) as u64;
        let per_reply = self.expected / pending as u64;
        let bytes = batch * per_reply * 3 / 4;
        (bytes.min(self.cap as u64) as usize).max(1)
    }

    /// The new mark, when the socket's should change. The outstanding count wobbles by a
    /// batch with every wake-up; a change smaller than a third is not worth a system call.
    pub(crate) fn retune(&mut self, pending: usize) -> Option<usize> {
        let want = self.want(pending);
        let old = self.lowat;
        let change = if want == 1 || old == 1 {
            want != old
        } else {
            want * 3 < old * 2 || want * 2 > old * 3
        };
        if change {
            self.lowat = want;
            Some(want)
        } else {
            None
        }
    }

    /// The system call failed: stop coalescing on this connection.
    pub(crate) fn disable(&mut self) {
        self.max_batch = 1;
        self.lowat = 1;
    }
}

/// Sets SO_RCVLOWAT.
pub(crate) fn set_rcvlowat(fd: RawFd, bytes: usize) -> io::Result<()> {
    set_int(
        fd,
        libc::SO_RCVLOWAT,
        libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX),
    )
}

/// Turns on a boolean socket option of level SOL_SOCKET.
pub(crate) fn set_flag(fd: RawFd, opt: libc::c_int) -> io::Result<()> {
    set_int(fd, opt, 1)
}

/// Reads an integer socket option of level SOL_SOCKET.
pub(crate) fn get_int(fd: RawFd, opt: libc::c_int) -> io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for writes of the sizes given.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn set_int(fd: RawFd, opt: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: `v` outlives the call and the length given is its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The socket's receive buffer size (SO_RCVBUF), or 0 if it cannot be read.
pub(crate) fn rcvbuf(fd: RawFd) -> usize {
    get_int(fd, libc::SO_RCVBUF).map_or(0, |v| usize::try_from(v).unwrap_or(0))
}

/// One non-blocking receive into `buf`'s spare capacity, past the runtime's readiness
/// check: after the fallback timer, data below the mark is there but was never signalled.
pub(crate) fn recv_now(fd: RawFd, buf: &mut BytesMut) -> io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    // SAFETY: the kernel writes at most `spare.len()` bytes into the spare capacity.
    let n = unsafe {
        libc::recv(
            fd,
            spare.as_mut_ptr().cast(),
            spare.len(),
            libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    // SAFETY: the first `n` bytes of the spare capacity were just written.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(max_batch: usize, hints: &[u32]) -> Coalescer {
        let mut c = Coalescer::new(max_batch);
        c.new_socket(1 << 20);
        for h in hints {
            c.add(*h);
        }
        c
    }

    #[test]
    fn few_outstanding_calls_are_not_held() {
        let c = with(8, &[8236; 7]);
        assert_eq!(c.want(7), 1);
        let off = with(1, &[8236; 64]);
        assert_eq!(off.want(64), 1);
    }

    #[test]
    fn the_mark_covers_part_of_a_quarter_of_the_replies() {
        let c = with(8, &[8236; 32]);
        // 8 replies of 8236 bytes, three quarters of it.
        assert_eq!(c.want(32), 8 * 8236 * 3 / 4);
        // Many outstanding: at most max_batch replies.
        let c = with(8, &[8236; 256]);
        assert_eq!(c.want(256), 8 * 8236 * 3 / 4);
        // Small replies count at least MIN_REPLY.
        let c = with(8, &[0; 32]);
        assert_eq!(c.want(32), (8 * MIN_REPLY * 3 / 4) as usize);
    }

    #[test]
    fn the_mark_never_exceeds_what_the_outstanding_replies_bring() {
        for n in 1..600usize {
            let hints: Vec<u32> = (0..n).map(|i| (i as u32 * 7919) % 70_000).collect();
            let c = with(64, &hints);
            let total: u64 = hints.iter().map(|h| Coalescer::reply_bytes(*h)).sum();
            assert!((c.want(n) as u64) < total.max(2), "{n} calls");
        }
    }

    #[test]
    fn the_mark_stays_inside_the_receive_buffer() {
        let mut c = with(64, &[1 << 20; 256]);
        c.new_socket(131_072);
        assert_eq!(c.want(256), 131_072 / 3);
    }

    #[test]
    fn small_wobbles_keep_the_mark() {
        let mut c = with(8, &[8236; 32]);
        assert_eq!(c.retune(32), Some(8 * 8236 * 3 / 4));
        // 26 outstanding after a batch came back: a quarter is 6, within the hysteresis.
        for h in [8236; 6] {
            c.remove(h);
        }
        assert_eq!(c.retune(26), None);
        // Few left: back to the kernel's default at once.
        for h in [8236; 20] {
            c.remove(h);
        }
        assert_eq!(c.retune(6), Some(1));
        assert!(!c.holding());
        c.clear();
        assert_eq!(c.retune(0), None);
    }

    #[test]
    fn a_fallback_pauses_gathering_until_replies_flow() {
        let mut c = with(8, &[8236; 32]);
        assert!(c.retune(32).is_some());
        c.pause();
        assert_eq!(c.retune(32), Some(1));
        assert_eq!(c.retune(32), None);
        c.resume();
        assert_eq!(c.retune(32), Some(8 * 8236 * 3 / 4));
    }
}
