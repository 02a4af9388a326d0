//! Reply coalescing. With many calls outstanding, replies arrive one after another, and
//! waking the connection task for each costs more CPU than handling the reply. So the
//! socket's receive low-water mark (SO_RCVLOWAT) is raised to the expected size of a few
//! replies: the kernel wakes the task once per several replies, as a network card's
//! interrupt moderation does.
//!
//! The price: replies that wait in the socket are calls the caller cannot yet replace, so
//! the server works on between half and all of the outstanding calls (three quarters on
//! average) instead of all of them. A server that is saturated well below that depth, as
//! most are at 32 outstanding, keeps its rate, and by Little's law the latency at that rate
//! stays the same; `reply_batch: 1` keeps the depth exact. Replies shorter than their
//! hints (an error instead of READ data) could leave the mark unreached; a short timer
//! then reads whatever has arrived, so a wrong guess costs time, never a stuck call.
//!
//! Connections run by one thread (siblings) share that bound: what the server must keep
//! is half of the thread's outstanding calls, not half of each connection's. A
//! connection holding less than that half may wait for all of its replies, since the
//! others' calls keep the server busy meanwhile. Spread call by call, 32 outstanding on
//! 4 connections left each below the 8 needed to gather at all, and every reply woke
//! the thread.

use std::time::Duration;

use crate::recv_room::LARGE;

/// The smallest accepted reply record with its record mark: XID, message type, reply
/// state, an empty verifier and the accept state.
pub(crate) const MIN_REPLY: u64 = 28;

/// How long a raised mark may hold replies that have arrived before they are read anyway
/// (`ConnConfig::reply_wait`'s default).
pub const FALLBACK: Duration = Duration::from_millis(2);

/// Calls outstanding per reply gathered: a wake-up waits for at most half of them.
const SHARE: usize = 2;

/// Fewer outstanding calls than this (on the connection, or on all siblings) are not
/// gathered: latency matters more than wake-ups there.
const MIN_GATHERED: usize = 8;

/// Replies a sibling may leave for the next wake-up of another (see `left_to_siblings`).
const LEFT_TO_SIBLINGS: usize = 4;

/// Replies over which the smallest surplus (bytes beyond the hint) is taken before it may
/// rise; a smaller one lowers it at once.
const SURPLUS_WINDOW: u32 = 16;

/// Largest surplus believed per reply: attributes and verifiers, not data.
const MAX_SURPLUS: u64 = 4096;

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
    /// Bytes every recent reply brought beyond its hint, at least. Hints are lower bounds
    /// from the protocol (a WRITE's says nothing of the attributes a server may add: 112
    /// of ganesha's 140 bytes); without this the mark would hold a fifth of the replies
    /// meant. Negative when replies came shorter than their hints: a hint above the
    /// reply would otherwise leave a mark for all of a sibling's replies unreached,
    /// and each gathering would end only by the fallback timer.
    surplus: i64,
    /// Smallest surplus of the current window, and replies seen in it.
    window_min: i64,
    window_seen: u32,
    /// Outstanding calls expecting a large reply (see `recv_room`), and the longest of
    /// those expected since there was none.
    large: usize,
    largest: u64,
}

impl Coalescer {
    pub(crate) fn new(max_batch: usize) -> Coalescer {
        Coalescer {
            max_batch,
            expected: 0,
            lowat: 1,
            cap: 1,
            paused: false,
            surplus: 0,
            window_min: i64::MAX,
            window_seen: 0,
            large: 0,
            largest: 0,
        }
    }

    /// A reply of `len` bytes (with its record mark) came to a call with this hint.
    pub(crate) fn observed(&mut self, hint: u32, len: usize) {
        let expected = Self::reply_bytes(hint) as i64;
        // At least the smallest reply: a shorter record is not a reply.
        let extra = (len as i64 - expected).clamp(MIN_REPLY as i64 - expected, MAX_SURPLUS as i64);
        // Lower at once: the mark must stay reachable by the replies that come.
        self.surplus = self.surplus.min(extra);
        self.window_min = self.window_min.min(extra);
        self.window_seen += 1;
        if self.window_seen == SURPLUS_WINDOW {
            self.surplus = self.window_min;
            self.window_min = i64::MAX;
            self.window_seen = 0;
        }
    }

    /// Bytes a reply to a call with this hint is expected to bring.
    pub(crate) fn reply_bytes(hint: u32) -> u64 {
        u64::from(hint).max(MIN_REPLY)
    }

    pub(crate) fn add(&mut self, hint: u32) {
        let bytes = Self::reply_bytes(hint);
        self.expected += bytes;
        if bytes >= LARGE as u64 {
            self.large += 1;
            self.largest = self.largest.max(bytes);
        }
    }

    pub(crate) fn remove(&mut self, hint: u32) {
        let bytes = Self::reply_bytes(hint);
        self.expected = self.expected.saturating_sub(bytes);
        if bytes >= LARGE as u64 && self.large > 0 {
            self.large -= 1;
            if self.large == 0 {
                self.largest = 0;
            }
        }
    }

    /// Every outstanding call is gone.
    pub(crate) fn clear(&mut self) {
        self.expected = 0;
        self.large = 0;
        self.largest = 0;
    }

    /// The longest reply (with its record mark) an outstanding call expects, when it is
    /// large enough to be given room of its own (see `recv_room`).
    pub(crate) fn largest_reply(&self) -> Option<usize> {
        (self.large > 0).then(|| usize::try_from(self.largest).unwrap_or(usize::MAX))
    }

    /// A new socket: the kernel's default mark, and a cap from its receive buffer.
    pub(crate) fn new_socket(&mut self, rcvbuf: usize) {
        self.lowat = 1;
        self.set_rcvbuf(rcvbuf);
    }

    /// The receive buffer grew (the kernel tunes it to the traffic) or shrank.
    pub(crate) fn set_rcvbuf(&mut self, rcvbuf: usize) {
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

    /// The socket's current mark: at least this much has come when it signals.
    pub(crate) fn mark(&self) -> usize {
        self.lowat
    }

    /// True while the mark may hold replies back (the fallback timer must run).
    pub(crate) fn holding(&self) -> bool {
        self.lowat > 1
    }

    /// The mark for `pending` outstanding calls: the expected bytes of half of them (at
    /// most `max_batch`; hints are lower bounds of a successful reply, so that many replies
    /// reach it), and 1 when fewer than 8 are outstanding (no gathering: latency matters
    /// more than wake-ups there). With siblings, `group` is what all of them have
    /// outstanding (this one's included): the bound is half of that, and a connection
    /// may then wait for all of its own.
    pub(crate) fn want(&self, pending: usize, group: Option<usize>) -> usize {
        let total = group.unwrap_or(pending).max(pending);
        if self.max_batch <= 1 || self.paused || total < MIN_GATHERED || pending < 2 {
            return 1;
        }
        let batch = match group {
            None => pending / SHARE,
            Some(_) => pending.min(total / SHARE).max(pending / SHARE),
        };
        let batch = batch.min(self.max_batch) as u64;
        let per_reply = (self.expected / pending as u64)
            .saturating_add_signed(self.surplus)
            .max(MIN_REPLY);
        let bytes = batch * per_reply;
        (bytes.min(self.cap as u64) as usize).max(1)
    }

    /// The new mark, when the socket's should change: lower as soon as it would wait for
    /// more than three quarters of what the outstanding calls bring (the server must keep
    /// some work), higher only for a gain of half or more (not a system call for every
    /// small change in the outstanding count).
    pub(crate) fn retune(&mut self, pending: usize, group: Option<usize>) -> Option<usize> {
        let want = self.want(pending, group);
        let old = self.lowat;
        let coming = self
            .expected
            .saturating_add_signed(self.surplus.saturating_mul(pending as i64));
        // A sibling may wait for all of its replies: only a mark beyond them is too high.
        let reach = if group.is_some() {
            coming
        } else {
            coming * 3 / 4
        };
        let reachable = usize::try_from(reach).unwrap_or(usize::MAX);
        let change = if old == 1 {
            want > 1
        } else if want == 1 || (old > reachable && !self.left_to_siblings(pending, group)) {
            // Off, paused, few outstanding, or a mark the replies might not reach.
            true
        } else {
            want * 2 > old * 3
        };
        let change = change && want != old;
        if change {
            self.lowat = want;
            Some(want)
        } else {
            None
        }
    }

    /// A sibling's few replies left below a mark that they no longer reach (the others
    /// were read when a sibling woke the thread) are left for the next such wake-up:
    /// with enough calls outstanding on the siblings one comes soon, and lowering the
    /// mark now would only raise it again with the next burst, two system calls for a
    /// few replies (a quarter of the system calls of 4-connection reads).
    fn left_to_siblings(&self, pending: usize, group: Option<usize>) -> bool {
        group.is_some_and(|total| {
            pending <= LEFT_TO_SIBLINGS && total.saturating_sub(pending) >= MIN_GATHERED
        })
    }

    /// The system call failed: stop coalescing on this connection.
    pub(crate) fn disable(&mut self) {
        self.max_batch = 1;
        self.lowat = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Coalescer {
        fn want_one(&self, pending: usize) -> usize {
            self.want(pending, None)
        }
        fn retune_one(&mut self, pending: usize) -> Option<usize> {
            self.retune(pending, None)
        }
    }

    #[test]
    fn siblings_hold_up_to_half_of_what_the_thread_has_outstanding() {
        // 4 connections, 32 outstanding: one with 8 may wait for all 8.
        let c = with(16, &[8236; 8]);
        assert_eq!(c.want(8, Some(32)), 8 * 8236);
        // Alone it would hold half of them.
        assert_eq!(c.want(8, None), 4 * 8236);
        // One with 24 of the 32: half of the thread's, 16.
        let c = with(16, &[8236; 24]);
        assert_eq!(c.want(24, Some(32)), 16 * 8236);
        // Never more than max_batch, nor fewer than half of its own.
        let c = with(16, &[8236; 40]);
        assert_eq!(c.want(40, Some(40)), 16 * 8236);
        let c = with(64, &[8236; 40]);
        assert_eq!(c.want(40, Some(44)), 22 * 8236);
        // Few outstanding on the whole thread, or one call here: no gathering.
        let c = with(16, &[8236; 6]);
        assert_eq!(c.want(6, Some(7)), 1);
        let c = with(16, &[8236; 1]);
        assert_eq!(c.want(1, Some(32)), 1);
        // A mark for all of its replies stays: they all come.
        let mut c = with(16, &[8236; 8]);
        assert_eq!(c.retune(8, Some(32)), Some(8 * 8236));
        assert_eq!(c.retune(8, Some(32)), None);
        // Half of them answered (read by a sibling's wake-up): the mark follows.
        for h in [8236; 3] {
            c.remove(h);
        }
        assert_eq!(c.retune(5, Some(29)), Some(5 * 8236));
        // Two more read so: the last three are left for the siblings' next wake-up.
        for h in [8236; 2] {
            c.remove(h);
        }
        assert_eq!(c.retune(3, Some(27)), None);
        assert!(c.holding());
        // Unless the siblings have few calls of their own to wake the thread with.
        assert_eq!(c.retune(3, Some(9)), Some(3 * 8236));
    }

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
        assert_eq!(c.want_one(7), 1);
        let off = with(1, &[8236; 64]);
        assert_eq!(off.want_one(64), 1);
    }

    #[test]
    fn the_mark_covers_half_of_the_replies() {
        let c = with(16, &[8236; 32]);
        assert_eq!(c.want_one(32), 16 * 8236);
        // Many outstanding: at most max_batch replies.
        let c = with(16, &[8236; 256]);
        assert_eq!(c.want_one(256), 16 * 8236);
        // Small replies count at least MIN_REPLY.
        let c = with(16, &[0; 32]);
        assert_eq!(c.want_one(32), (16 * MIN_REPLY) as usize);
    }

    #[test]
    fn the_mark_never_exceeds_what_the_outstanding_replies_bring() {
        for n in 1..600usize {
            let hints: Vec<u32> = (0..n).map(|i| (i as u32 * 7919) % 70_000).collect();
            let c = with(64, &hints);
            let total: u64 = hints.iter().map(|h| Coalescer::reply_bytes(*h)).sum();
            assert!((c.want_one(n) as u64) * 3 / 2 <= total.max(2), "{n} calls");
        }
    }

    #[test]
    fn the_mark_stays_inside_the_receive_buffer() {
        let mut c = with(64, &[1 << 20; 256]);
        c.new_socket(131_072);
        assert_eq!(c.want_one(256), 131_072 / 3);
    }

    #[test]
    fn the_mark_follows_the_outstanding_count_without_a_call_per_batch() {
        let mut c = with(16, &[8236; 32]);
        assert_eq!(c.retune_one(32), Some(16 * 8236));
        // 24 outstanding: their replies still bring more than the mark with room.
        for h in [8236; 8] {
            c.remove(h);
        }
        assert_eq!(c.retune_one(24), None);
        // 20: the mark would wait for over three quarters of them; lower.
        for h in [8236; 4] {
            c.remove(h);
        }
        assert_eq!(c.retune_one(20), Some(10 * 8236));
        // Back to 22: not worth a system call.
        for h in [8236; 2] {
            c.add(h);
        }
        assert_eq!(c.retune_one(22), None);
        // Few left: back to the kernel's default at once.
        for h in [8236; 16] {
            c.remove(h);
        }
        assert_eq!(c.retune_one(6), Some(1));
        assert!(!c.holding());
        c.clear();
        assert_eq!(c.retune_one(0), None);
    }

    #[test]
    fn the_mark_learns_what_replies_bring_beyond_their_hints() {
        // WRITE replies: no hint, 140 bytes each with the server's attributes.
        let mut c = with(16, &[0; 32]);
        assert_eq!(c.want_one(32), 16 * MIN_REPLY as usize);
        for _ in 0..SURPLUS_WINDOW - 1 {
            c.observed(0, 140);
        }
        // A window must pass before the surplus rises.
        assert_eq!(c.want_one(32), 16 * MIN_REPLY as usize);
        c.observed(0, 140);
        assert_eq!(c.want_one(32), 16 * 140);
        // One shorter reply (an error) lowers it at once.
        c.observed(0, 60);
        assert_eq!(c.want_one(32), 16 * 60);
        // Never more than MAX_SURPLUS per reply.
        for _ in 0..2 * SURPLUS_WINDOW {
            c.observed(0, 1 << 20);
        }
        assert_eq!(c.want_one(32), 16 * (MIN_REPLY + MAX_SURPLUS) as usize);
    }

    #[test]
    fn the_mark_learns_hints_above_what_replies_bring() {
        // 8 KiB READ replies 20 bytes shorter than their hints, on a sibling with 8 of
        // the thread's 32 outstanding: the mark must stay within what its 8 bring.
        let mut c = with(16, &[8320; 8]);
        c.observed(8320, 8300);
        assert!(c.want(8, Some(32)) <= 8 * 8300);
        assert_eq!(c.retune(8, Some(32)), Some(8 * 8300));
        // Once the window with the short reply is over, a window of replies that reach
        // their hints raises it again.
        for _ in 0..2 * SURPLUS_WINDOW {
            c.observed(8320, 8320);
        }
        assert_eq!(c.want(8, Some(32)), 8 * 8320);
        // An error instead of the data lowers it at once, never below the smallest
        // reply.
        c.observed(8320, 4);
        assert_eq!(c.want(8, Some(32)), 8 * MIN_REPLY as usize);
    }

    #[test]
    fn a_fallback_pauses_gathering_until_replies_flow() {
        let mut c = with(16, &[8236; 32]);
        assert!(c.retune_one(32).is_some());
        c.pause();
        assert_eq!(c.retune_one(32), Some(1));
        assert_eq!(c.retune_one(32), None);
        c.resume();
        assert_eq!(c.retune_one(32), Some(16 * 8236));
    }
}
