//! A user's I/O slots and, in verify mode, the claims its I/Os hold on the
//! generation map.

use std::time::Instant;

use dbio_engine::IoDir;
use dbio_workload::verify::{GenMap, GEN_MASK, IN_FLIGHT};
use dbio_workload::Op;

#[derive(Clone, Copy)]
pub(super) struct InFlight {
    pub(super) start: Instant,
    pub(super) class: u8,
    pub(super) write: bool,
    pub(super) file: u32,
    pub(super) offset: u64,
    pub(super) len: u32,
    /// When a synchronous call returned, where taken at once (else its reap).
    pub(super) end: Option<Instant>,
}

/// A user's I/O slots (one per engine buffer): what is in flight in each,
/// and which are free.
pub(super) struct Slots {
    pub(super) inflight: Vec<InFlight>,
    /// Verify mode: per slot, the generation of each block when its read
    /// was issued (the oldest a correct read may return), or the new
    /// generation of each block of its write.
    pub(super) gens: Vec<Vec<u32>>,
    /// Per slot: the buffer holds a whole PRNG fill (see [`User::fill`]).
    pub(super) filled: Vec<bool>,
    pub(super) free: Vec<u32>,
}

impl Slots {
    pub(super) fn new(depth: u32, verify: bool) -> Self {
        let idle = InFlight {
            start: Instant::now(),
            class: 0,
            write: false,
            file: 0,
            offset: 0,
            len: 0,
            end: None,
        };
        Slots {
            inflight: vec![idle; depth as usize],
            gens: if verify {
                vec![Vec::new(); depth as usize]
            } else {
                Vec::new()
            },
            filled: vec![false; depth as usize],
            free: (0..depth).rev().collect(),
        }
    }
}

/// Verify mode, before `op` is issued: a write marks its blocks in flight
/// and gets their new generations in `gens` (false when one of them already
/// has a write in flight); a read notes each block's last completed
/// generation.
pub(super) fn claim(map: &GenMap, op: &Op, gens: &mut Vec<u32>) -> bool {
    let (_, us) = map.units(op.file);
    let first = op.offset / u64::from(us);
    let n = u64::from(op.len / us);
    if op.dir == IoDir::Write {
        return map.claim(op.file, first, n, gens);
    }
    gens.clear();
    gens.extend((first..first + n).map(|u| {
        let v = map.get(op.file, u);
        if v & IN_FLIGHT != 0 {
            (v & GEN_MASK).wrapping_sub(1) & GEN_MASK
        } else {
            v
        }
    }));
    true
}

/// Undoes [`claim`] for a write that was not issued.
pub(super) fn unclaim(map: &GenMap, op: &Op, gens: &[u32]) {
    if op.dir != IoDir::Write {
        return;
    }
    let (_, us) = map.units(op.file);
    let first = op.offset / u64::from(us);
    for (i, g) in gens.iter().enumerate() {
        map.settle(op.file, first + i as u64, g.wrapping_sub(1));
    }
}
