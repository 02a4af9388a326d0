//! The fore channel's slot table (RFC 8881 section 2.10.6.1) and slot leases.
//!
//! Metadata calls take a slot per COMPOUND from the shared [`SlotTable`]; a data path
//! takes a [`SlotLease`] once: slots of its own, used from its one thread without a
//! lock, given back when the lease is dropped. Slots whose request got no answer are
//! retired (their sequence id on the server is unknown), never used again.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::proto::nfs4::{SequenceOk, SessionId};

/// Most slots a client asks for (and uses, whatever a server grants).
pub const MAX_SLOTS: u32 = 1024;

/// The fore channel's slots: each slot's last sequence id, which are busy, and the
/// highest slot the server lets the client use now.
#[derive(Debug)]
pub(crate) struct SlotTable {
    pub(crate) seqids: Vec<u32>,
    pub(crate) busy: Vec<bool>,
    /// Highest slot id usable now (the server's `target_highest_slotid`, at most the
    /// granted table).
    pub(crate) target: u32,
    /// Slots retired after a request without reply (they stay busy).
    pub(crate) retired: u32,
}

impl SlotTable {
    pub(crate) fn new(n: u32) -> Self {
        let n = n.clamp(1, MAX_SLOTS) as usize;
        SlotTable {
            seqids: vec![0; n],
            busy: vec![false; n],
            target: (n - 1) as u32,
            retired: 0,
        }
    }

    /// The lowest free slot at or below the target: (slot, the sequence id to send).
    pub(crate) fn take(&mut self) -> Option<(u32, u32)> {
        let limit = (self.target as usize).min(self.busy.len() - 1);
        let i = self.busy[..=limit].iter().position(|b| !b)?;
        self.busy[i] = true;
        Some((i as u32, self.seqids[i].wrapping_add(1)))
    }

    /// The highest slot in use (for SEQUENCE's `highest_slotid`).
    pub(crate) fn highest_busy(&self) -> u32 {
        self.busy.iter().rposition(|b| *b).unwrap_or(0) as u32
    }

    pub(crate) fn used(&mut self, slot: u32, seqid: u32) {
        if let Some(s) = self.seqids.get_mut(slot as usize) {
            *s = seqid;
        }
    }

    pub(crate) fn free(&mut self, slot: u32) {
        if let Some(b) = self.busy.get_mut(slot as usize) {
            *b = false;
        }
    }

    /// Honours the server's view from a SEQUENCE reply.
    pub(crate) fn honour(&mut self, ok: &SequenceOk) {
        let max = (self.busy.len() - 1) as u32;
        self.target = ok.target_highest_slotid.min(ok.highest_slotid).min(max);
    }
}

/// State of a leased slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leased {
    Free,
    /// A request is out with this sequence id.
    Busy(u32),
    /// A request got no answer: never used again.
    Retired,
}

/// Slots of a session held by one data path: `take` and `answered` need no lock.
#[derive(Debug)]
pub struct SlotLease {
    table: Arc<Mutex<SlotTable>>,
    freed: Arc<Notify>,
    sessionid: SessionId,
    /// (slot id, last sequence id used on it, state), lowest slot first.
    slots: Vec<(u32, u32, Leased)>,
    /// Highest slot id the server lets the client use now.
    target: u32,
    /// Highest slot id of the whole table (for SEQUENCE's `highest_slotid`).
    highest: u32,
}

impl SlotLease {
    /// Takes up to `want` free slots of `table` (at least one, else `None`).
    pub(crate) fn take_from(
        table: &Arc<Mutex<SlotTable>>,
        freed: &Arc<Notify>,
        sessionid: SessionId,
        want: u32,
    ) -> Option<SlotLease> {
        let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
        let t = &mut *t;
        let mut slots = Vec::new();
        for (i, busy) in t.busy.iter_mut().enumerate() {
            if slots.len() as u32 >= want {
                break;
            }
            if !*busy {
                *busy = true;
                slots.push((i as u32, t.seqids[i], Leased::Free));
            }
        }
        if slots.is_empty() {
            return None;
        }
        Some(SlotLease {
            sessionid,
            target: t.target,
            highest: t.busy.len() as u32 - 1,
            slots,
            table: table.clone(),
            freed: freed.clone(),
        })
    }

    pub fn sessionid(&self) -> SessionId {
        self.sessionid
    }

    /// Slots leased (retired ones included).
    pub fn len(&self) -> u32 {
        self.slots.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Slots that can still carry requests.
    pub fn usable(&self) -> u32 {
        self.slots.iter().filter(|s| s.2 != Leased::Retired).count() as u32
    }

    /// For SEQUENCE's `highest_slotid`: the highest slot id the client may use.
    pub fn highest(&self) -> u32 {
        self.highest
    }

    /// Slots with a request out now.
    pub fn in_use(&self) -> u32 {
        self.slots
            .iter()
            .filter(|s| matches!(s.2, Leased::Busy(_)))
            .count() as u32
    }

    /// True when [`SlotLease::take`] would give a slot.
    pub fn has_free(&self) -> bool {
        self.slots
            .iter()
            .any(|s| s.2 == Leased::Free && s.0 <= self.target)
    }

    /// A free slot at or below the server's target: (index in the lease, slot id,
    /// sequence id to send).
    pub fn take(&mut self) -> Option<(u16, u32, u32)> {
        let target = self.target;
        let (i, s) = self
            .slots
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.2 == Leased::Free && s.0 <= target)?;
        let seqid = s.1.wrapping_add(1);
        s.2 = Leased::Busy(seqid);
        Some((i as u16, s.0, seqid))
    }

    /// The slot's request was answered by SEQUENCE (`ok`): the slot is free again and
    /// the server's target is honoured.
    pub fn answered(&mut self, index: u16, ok: &SequenceOk) {
        if let Some(s) = self.slots.get_mut(usize::from(index)) {
            if let Leased::Busy(seqid) = s.2 {
                s.1 = seqid;
                s.2 = Leased::Free;
            }
        }
        self.target = ok
            .target_highest_slotid
            .min(ok.highest_slotid)
            .min(self.highest);
    }

    /// The slot's request was not run by the server (SEQUENCE refused it before
    /// looking at the sequence id, e.g. NFS4ERR_DELAY on SEQUENCE itself is not this):
    /// the slot is free with its old sequence id.
    pub fn unused(&mut self, index: u16) {
        if let Some(s) = self.slots.get_mut(usize::from(index)) {
            if matches!(s.2, Leased::Busy(_)) {
                s.2 = Leased::Free;
            }
        }
    }

    /// The slot's request got no usable answer: the slot is never used again.
    pub fn retire(&mut self, index: u16) {
        if let Some(s) = self.slots.get_mut(usize::from(index)) {
            s.2 = Leased::Retired;
        }
    }

    /// The slot id and sequence id of a busy slot (to re-send the same request).
    pub fn busy(&self, index: u16) -> Option<(u32, u32)> {
        match self.slots.get(usize::from(index))? {
            (slot, _, Leased::Busy(seqid)) => Some((*slot, *seqid)),
            _ => None,
        }
    }
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        for &(slot, seqid, state) in &self.slots {
            match state {
                Leased::Free => {
                    t.used(slot, seqid);
                    t.free(slot);
                }
                // An answer may still come: the slot stays out of use.
                Leased::Busy(_) | Leased::Retired => t.retired += 1,
            }
        }
        drop(t);
        self.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(slot: u32, highest: u32, target: u32) -> SequenceOk {
        SequenceOk {
            sessionid: [0; 16],
            sequenceid: 1,
            slotid: slot,
            highest_slotid: highest,
            target_highest_slotid: target,
            status_flags: 0,
        }
    }

    #[test]
    fn a_lease_holds_its_slots_until_dropped() {
        let table = Arc::new(Mutex::new(SlotTable::new(4)));
        let freed = Arc::new(Notify::new());
        table.lock().unwrap().take();
        let mut lease = SlotLease::take_from(&table, &freed, [7; 16], 2).unwrap();
        assert_eq!(lease.len(), 2);
        // Slot 0 was busy: the lease has 1 and 2; the table only 3 left.
        assert_eq!(lease.take(), Some((0, 1, 1)));
        assert_eq!(lease.take(), Some((1, 2, 1)));
        assert_eq!(lease.take(), None);
        assert_eq!(lease.busy(0), Some((1, 1)));
        lease.answered(0, &seq(1, 3, 3));
        assert_eq!(lease.take(), Some((0, 1, 2)));
        lease.retire(1);
        assert_eq!(lease.usable(), 1);
        assert_eq!(table.lock().unwrap().take(), Some((3, 1)));
        assert!(SlotLease::take_from(&table, &freed, [7; 16], 2).is_none());
        lease.answered(0, &seq(1, 3, 3));
        drop(lease);
        let t = table.lock().unwrap();
        // Slot 1 is free again with the sequence id it reached; slot 2 stays retired.
        assert_eq!(
            (t.busy[1], t.seqids[1], t.busy[2], t.retired),
            (false, 2, true, 1)
        );
    }

    #[test]
    fn slots_are_taken_lowest_first_and_bounded_by_the_target() {
        let mut t = SlotTable::new(4);
        assert_eq!(t.take(), Some((0, 1)));
        assert_eq!(t.take(), Some((1, 1)));
        t.used(0, 1);
        t.free(0);
        assert_eq!(t.take(), Some((0, 2)));
        assert_eq!(t.highest_busy(), 1);
        // The server lowers the target to slot 1: slots 2 and 3 are not used.
        t.honour(&seq(0, 3, 1));
        assert_eq!(t.take(), None);
        t.free(1);
        assert_eq!(t.take(), Some((1, 1)));
        // A target above the table is capped.
        t.honour(&seq(0, 100, 100));
        assert_eq!(t.target, 3);
        assert_eq!(SlotTable::new(0).busy.len(), 1);
        assert_eq!(SlotTable::new(u32::MAX).busy.len(), MAX_SLOTS as usize);
    }
}
