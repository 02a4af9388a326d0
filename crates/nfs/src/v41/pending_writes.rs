//! What the data servers said of a file's WRITEs since its layout was last committed
//! (`layoutcommit.rs` commits it): kept by the layouts, written by the data path.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use crate::kinds::Stable;
use crate::router::MAX_DATA_SERVERS;

/// Writes of one file through data servers since its layout was last committed.
#[derive(Debug, Default)]
pub struct PendingWrites {
    /// One past the last byte written (0: nothing pending).
    end: AtomicU64,
    /// Data servers (pool indices) holding UNSTABLE data, one bit each.
    unstable: [AtomicU64; MAX_DATA_SERVERS / 64],
    /// A data server answered DATA_SYNC.
    data_sync: AtomicBool,
}

/// What [`PendingWrites::take`] took: to commit now, or to put back on failure.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Taken {
    pub(crate) end: u64,
    pub(crate) unstable: [u64; MAX_DATA_SERVERS / 64],
    pub(crate) data_sync: bool,
}

impl Taken {
    pub(crate) fn unstable_on(&self, server: usize) -> bool {
        self.unstable
            .get(server / 64)
            .is_some_and(|w| w & (1 << (server % 64)) != 0)
    }

    pub(crate) fn any_unstable(&self) -> bool {
        self.unstable.iter().any(|w| *w != 0)
    }
}

impl PendingWrites {
    /// Data server `server` wrote the bytes up to `end` (exclusive) and said `how`
    /// durable they are.
    pub fn wrote(&self, server: usize, end: u64, how: Stable) {
        self.end.fetch_max(end, Relaxed);
        match how {
            Stable::Unstable => {
                if let Some(w) = self.unstable.get(server / 64) {
                    w.fetch_or(1 << (server % 64), Relaxed);
                }
            }
            Stable::DataSync => self.data_sync.store(true, Relaxed),
            Stable::FileSync => {}
        }
    }

    /// Takes what is pending (writes answered from now on are pending anew).
    pub(crate) fn take(&self) -> Taken {
        let mut t = Taken {
            end: self.end.swap(0, Relaxed),
            data_sync: self.data_sync.swap(false, Relaxed),
            ..Taken::default()
        };
        for (to, from) in t.unstable.iter_mut().zip(&self.unstable) {
            *to = from.swap(0, Relaxed);
        }
        t
    }

    /// Puts back what a failed commit took.
    pub(crate) fn put_back(&self, t: &Taken) {
        self.end.fetch_max(t.end, Relaxed);
        if t.data_sync {
            self.data_sync.store(true, Relaxed);
        }
        for (w, bits) in self.unstable.iter().zip(t.unstable) {
            w.fetch_or(bits, Relaxed);
        }
    }
}

/// What committing a file's layout did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayoutCommitted {
    /// COMMITs sent (to the metadata server or to data servers).
    pub commits: u32,
    /// Whether a LAYOUTCOMMIT was sent, and the new size the server gave.
    pub layoutcommit: bool,
    pub new_size: Option<u64>,
}
