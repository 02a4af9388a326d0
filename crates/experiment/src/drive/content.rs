//! A user's buffer content: fresh, unique data for each write (so that no layer below
//! can compress or deduplicate it away), and in verify mode each block stamped with its
//! generation on write and checked on read.

use dbio_workload::content::{fill, fill_blocks, stamp_sectors};
use dbio_workload::verify::{stamp_unit, GenMap, GEN_MASK};
use dbio_workload::Op;

use super::slots::InFlight;
use super::{User, FULL_FILL_MAX};
use crate::ExperimentError;

impl User<'_> {
    /// Verify mode with `verify_sync`: the in-flight marks reach stable
    /// storage before the writes they announce.
    pub(super) fn sync_journal(&self) -> Result<(), ExperimentError> {
        match self.verify {
            Some(map) => map
                .flush()
                .map_err(|e| ExperimentError::Config(e.to_string())),
            None => Ok(()),
        }
    }

    /// Verify mode: stamps each block of the write in `slot` with its new
    /// generation.
    pub(super) fn stamp(&mut self, slot: u32, op: &Op, gens: &[u32]) {
        let Some(map) = self.verify else { return };
        let (_, us) = map.units(op.file);
        let first = op.offset / u64::from(us);
        let (id, file) = (self.dataset_id, op.file);
        let buf = &mut self.engine.buffer(slot)[..op.len as usize];
        for (i, (u, &g)) in buf.chunks_exact_mut(us as usize).zip(gens).enumerate() {
            stamp_unit(u, id, file, first + i as u64, g);
        }
    }

    /// Verify mode, an I/O completed: a write's blocks now hold their new
    /// generation; a read's blocks must hold a generation between the one
    /// at issue and the newest written since.
    pub(super) fn check(&mut self, map: &GenMap, slot: u32, f: &InFlight, gens: &[u32]) {
        let (_, us) = map.units(f.file);
        let first = f.offset / u64::from(us);
        let n = u64::from(f.len / us);
        if f.write {
            map.complete(f.file, first, n);
            return;
        }
        let buf = &self.engine.buffer(slot)[..f.len as usize];
        for (i, (u, &lo)) in buf.chunks_exact(us as usize).zip(gens).enumerate() {
            let unit = first + i as u64;
            let hi = map.get(f.file, unit) & GEN_MASK;
            // A newer generation now: a write overlapped this read.
            let racing = hi != lo;
            let range = (lo, hi.max(lo));
            self.counts
                .check(self.dataset, f.file, unit, u, range, racing);
        }
    }

    /// Fresh, unique content for a write in `slot`.
    pub(super) fn fill(&mut self, slot: u32, op: &Op, filled: &mut bool) {
        self.generation += 1;
        let bs = self.block_size;
        let whole = self.engine.buffer(slot);
        if op.len <= FULL_FILL_MAX {
            let block = op.offset / bs as u64;
            let buf = &mut whole[..op.len as usize];
            fill_blocks(buf, bs, self.dataset_id, op.file, block, self.generation);
            *filled = false;
        } else {
            if !*filled {
                fill(whole, self.dataset_id ^ self.generation);
                *filled = true;
            }
            let buf = &mut whole[..op.len as usize];
            stamp_sectors(buf, self.dataset_id ^ self.generation ^ op.offset);
        }
    }
}
