//! Re-sends of a data path's parts: a part the server answered "try again later", or
//! that found every path down, waits out the client's back-off; each RPC's re-issues
//! are counted (or timed, for a grace period) against it.

use std::time::Instant;

use super::tag::part_key;
use super::{BusyStatus, DataPath};

impl DataPath {
    /// Re-sends part `part` of `slot` after the back-off.
    pub(super) fn defer(&mut self, t: u64, slot: u32, part: u32) {
        let delay = self.retry.delay(self.retry_count(t).saturating_sub(1));
        self.deferred.push((Instant::now() + delay, slot, part));
    }

    /// Re-issues so far of the RPC tagged `t`.
    pub(super) fn retry_count(&self, t: u64) -> u32 {
        let key = part_key(t);
        self.retries
            .iter()
            .find(|(k, ..)| *k == key)
            .map_or(0, |(_, n, _)| *n)
    }

    /// Re-sends deferred parts that are due; returns when the next one is.
    pub(super) fn send_due(&mut self) -> Option<Instant> {
        if self.deferred.is_empty() {
            return None;
        }
        let now = Instant::now();
        let mut i = 0;
        while i < self.deferred.len() {
            if self.deferred[i].0 <= now {
                let (_, slot, part) = self.deferred.swap_remove(i);
                self.send_part(slot, part, None);
            } else {
                i += 1;
            }
        }
        self.deferred.iter().map(|d| d.0).min()
    }

    /// Counts a re-issue of the RPC tagged `t`; false once it has had enough.
    pub(super) fn may_reissue(&mut self, t: u64) -> bool {
        self.may_reissue_after(t, BusyStatus::Delay)
    }

    /// The same after `why`: a grace period is waited out by time, the rest by count.
    pub(super) fn may_reissue_after(&mut self, t: u64, why: BusyStatus) -> bool {
        let (key, now) = (part_key(t), Instant::now());
        let i = self
            .retries
            .iter()
            .position(|r| r.0 == key)
            .unwrap_or_else(|| {
                self.retries.push((key, 0, now));
                self.retries.len() - 1
            });
        let (_, n, since) = self.retries[i];
        if !self.retry.allows_after(why, n, now - since) {
            return false;
        }
        self.retries[i].1 += 1;
        true
    }
}
