//! Parts of an I/O: the RPCs it goes as. Normally every part but the last is the
//! transfer size long (computed, nothing stored). On a file striped over several data
//! servers (pNFS files layout, RFC 8881 §13.4) an I/O is also cut at stripe-unit
//! boundaries, so that each part lies on one data server and goes to it, in parallel
//! with the others; those parts' ranges are kept per slot (in a buffer reused from
//! one I/O to the next).

use super::{DataPath, Io};

/// Most parts of one I/O: a part number fits a tag's 16 bits.
const MAX_PARTS: usize = 1 << 16;

/// Cuts `len` bytes at `offset` into parts of at most `size` bytes that each stay
/// within one stripe unit (`units`: where they start, how long they are), as
/// `(start from the I/O's start, length)` in `out`. False, `out` empty, when that takes
/// more parts than a tag can number (the I/O then goes in parts of `size`, those that
/// cross units through the metadata server).
pub(super) fn stripe_parts(
    offset: u64,
    len: u32,
    size: u32,
    (pattern_offset, unit): (u64, u64),
    out: &mut Vec<(u32, u32)>,
) -> bool {
    out.clear();
    let size = u64::from(size.max(1));
    let mut start = 0u32;
    while start < len {
        let at = offset.saturating_add(u64::from(start));
        let unit_left = match at.checked_sub(pattern_offset) {
            Some(rel) => unit - rel % unit,
            // Before the pattern: no data server has it; up to where it begins.
            None => pattern_offset - at,
        };
        let n = u64::from(len - start).min(size).min(unit_left) as u32;
        if out.len() == MAX_PARTS {
            out.clear();
            return false;
        }
        out.push((start, n));
        start += n;
    }
    true
}

impl DataPath {
    /// Where part `part` of the I/O `io` starts (from the I/O's start) and how long
    /// it is.
    pub(super) fn span(&self, io: &Io, part: u32) -> (u32, u32) {
        if let Some(&b) = self.ops[io.slot as usize].bounds.get(part as usize) {
            return b;
        }
        let size = self.part_size(io.dir);
        let start = part * size;
        (start, size.min(io.len - start))
    }

    /// How many parts the I/O `io` goes as: cut at stripe units when its file is
    /// striped over several data servers, else at the transfer size only.
    pub(super) fn plan_parts(&mut self, io: &Io) -> u32 {
        let size = self.part_size(io.dir);
        let op = &mut self.ops[io.slot as usize];
        op.bounds.clear();
        let units = match &mut self.pnfs {
            Some(p) if io.len > 1 => p.stripe_units(io.file),
            _ => None,
        };
        if let Some(units) = units {
            if stripe_parts(io.offset, io.len, size, units, &mut op.bounds) {
                return op.bounds.len() as u32;
            }
        }
        io.len.div_ceil(size).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(offset: u64, len: u32, size: u32, units: (u64, u64)) -> Vec<(u32, u32)> {
        let mut v = vec![(9, 9)];
        assert!(stripe_parts(offset, len, size, units, &mut v));
        v
    }

    #[test]
    fn parts_are_cut_at_stripe_units_and_the_transfer_size() {
        let k = 1024;
        // 32 KiB at 8 KiB over 16 KiB units: 8 + 16 + 8.
        assert_eq!(
            parts(8 * k, 32 << 10, 1 << 20, (0, 16 * k)),
            [(0, 8 << 10), (8 << 10, 16 << 10), (24 << 10, 8 << 10)]
        );
        // Within one unit: one part, untouched.
        assert_eq!(
            parts(16 * k, 16 << 10, 1 << 20, (0, 16 * k)),
            [(0, 16 << 10)]
        );
        // The transfer size still holds within a unit (64 KiB units, 24 KiB RPCs).
        assert_eq!(
            parts(0, 80 << 10, 24 << 10, (0, 64 * k)),
            [
                (0, 24 << 10),
                (24 << 10, 24 << 10),
                (48 << 10, 16 << 10),
                (64 << 10, 16 << 10)
            ]
        );
        // Units counted from the pattern's offset; before it, one part up to it.
        assert_eq!(
            parts(0, 12 << 10, 1 << 20, (4 * k, 4 * k)),
            [(0, 4 << 10), (4 << 10, 4 << 10), (8 << 10, 4 << 10)]
        );
        assert_eq!(
            parts(k, 8 << 10, 1 << 20, (4 * k, 16 * k)),
            [(0, 3 << 10), (3 << 10, 5 << 10)]
        );
        // Every byte once, in order.
        let v = parts(5, 100_000, 3000, (7, 4096));
        assert_eq!(v.iter().map(|p| p.1).sum::<u32>(), 100_000);
        assert!(v.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        assert!(v.iter().all(|p| p.1 > 0 && p.1 <= 3000));
        // More parts than a tag numbers: refused, nothing kept.
        let mut out = Vec::new();
        assert!(!stripe_parts(0, u32::MAX, 1 << 20, (0, 16), &mut out));
        assert!(out.is_empty());
    }
}
