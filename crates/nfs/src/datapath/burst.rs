//! The calls of one flush go to one connection in bursts.

use crate::router::{Route, Router};

/// Calls and bytes of one flush that follow the first one's channel. One `writev` and
/// one wake-up of the server then carry them all, and the connection's replies come
/// back together, enough to be gathered (see `dbio_rpc`'s coalescing): spread call by
/// call, 32 outstanding reads cost twice the CPU on 4 connections as on 1 (twice the
/// system calls, and each connection too few outstanding calls to gather replies).
/// Beyond either bound the next call picks again, so large I/Os split in parts still
/// spread over the paths.
pub(super) const BURST_CALLS: u32 = 16;
pub(super) const BURST_BYTES: u64 = 256 << 10;

/// The channel the calls of the current flush go to, and what they hold so far.
#[derive(Clone, Copy)]
pub(super) struct Burst {
    ch: usize,
    calls: u32,
    bytes: u64,
}

/// The channel for a call of `len` bytes: the current burst's while it has room and its
/// path is up, else the router's pick (which starts a new burst).
pub(super) fn burst_pick(
    burst: &mut Option<Burst>,
    router: &Router,
    route: Route,
    len: u32,
) -> usize {
    if router.channels().len() == 1 {
        return 0;
    }
    if let Some(b) = burst {
        if b.calls < BURST_CALLS && b.bytes < BURST_BYTES && router.is_usable(b.ch) {
            b.calls += 1;
            b.bytes += u64::from(len);
            return b.ch;
        }
    }
    let ch = router.pick(route, None);
    *burst = Some(Burst {
        ch,
        calls: 1,
        bytes: u64::from(len),
    });
    ch
}
