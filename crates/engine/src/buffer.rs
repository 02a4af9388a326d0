//! The slots' I/O buffers: page aligned, as O_DIRECT requires, and in one
//! mapping backed by huge pages where the kernel gives them.
//!
//! Why one mapping and huge pages: a direct read lands in the buffer's
//! physical pages, and a virtual disk gets one segment per physically
//! contiguous run. Buffers taken one by one from the heap and zeroed by
//! the allocator came out about one page per run, and 1 MiB reads into
//! them went at half the rate of fio's (its buffers, one mapping, came out
//! about eight pages per run); the same reads into 2 MiB huge pages went
//! faster than fio's (BENCHMARKS.md, "1 MiB reads and the buffers'
//! memory").

use std::io;

/// Alignment of every buffer: enough for O_DIRECT on any device here.
pub const ALIGN: usize = 4096;

/// The size of a transparent huge page on x86-64 and most arm64 kernels;
/// the mapping starts on such a boundary so that each can be one.
const HUGE: usize = 2 << 20;

/// Buffers of this many bytes in all and more go in huge pages (16 slots
/// of 8 KiB, or one of 128 KiB): 8 KiB reads at 16 outstanding and more
/// went faster with fio's buffers in huge pages than in ordinary ones.
const HUGE_FROM: usize = 128 << 10;

/// `count` buffers of `len` bytes each, zeroed, every one page aligned,
/// laid out one after another in a single anonymous mapping.
pub struct SlotBuffers {
    /// In shared memory: unmapping a page keeps its contents.
    shared: bool,
    map: *mut u8,
    map_len: usize,
    /// First buffer: `map` rounded up to a huge page.
    base: *mut u8,
    stride: usize,
    slot_len: usize,
    count: usize,
    /// Set when I/O that could not be cancelled may still land here: the
    /// mapping then outlives this value.
    leaked: bool,
}

// The mapping is plain owned memory.
unsafe impl Send for SlotBuffers {}

impl SlotBuffers {
    pub fn new(count: usize, len: usize) -> io::Result<Self> {
        Self::map(count, len, false)
    }

    /// [`SlotBuffers::new`] in shared memory (ordinary pages), whose pages
    /// [`SlotBuffers::unmap`] can take out of the page tables without losing them.
    pub fn shared(count: usize, len: usize) -> io::Result<Self> {
        Self::map(count, len, true)
    }

    fn map(count: usize, len: usize, shared: bool) -> io::Result<Self> {
        let count = count.max(1);
        let stride = len.max(1).div_ceil(ALIGN) * ALIGN;
        let used = stride
            .checked_mul(count)
            .filter(|&u| u <= isize::MAX as usize / 2)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        // Small sets (one slot per user, as psync has) stay in ordinary
        // pages: a huge page each would cost 2 MiB per user.
        let huge = used >= HUGE_FROM && !shared;
        let span = if huge {
            used.next_multiple_of(HUGE)
        } else {
            used
        };
        // Room to start on a huge-page boundary.
        let total = span + HUGE;
        // SAFETY: a fresh private anonymous mapping; no existing memory is
        // touched. Its pages are zero until written.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                if shared {
                    libc::MAP_SHARED
                } else {
                    libc::MAP_PRIVATE
                } | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let map = map as *mut u8;
        let skip = (map as usize).next_multiple_of(HUGE) - map as usize;
        // SAFETY: skip < HUGE, inside the mapping.
        let base = unsafe { map.add(skip) };
        if huge {
            // Advice only: with transparent huge pages off or none free,
            // the pages are ordinary ones and the buffers work the same.
            // SAFETY: base + span lies inside the mapping (skip < HUGE).
            unsafe { libc::madvise(base.cast(), span, libc::MADV_HUGEPAGE) };
        }
        Ok(Self {
            shared,
            map,
            map_len: total,
            base,
            stride,
            slot_len: len,
            count,
            leaked: false,
        })
    }
    /// How many buffers (slots).
    pub fn len(&self) -> usize {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The size of each buffer.
    pub fn slot_len(&self) -> usize {
        self.slot_len
    }
    /// The start of buffer `slot`; panics past the last.
    pub fn as_mut_ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.count, "slot {slot} of {}", self.count);
        // SAFETY: slot * stride + slot_len lies inside the mapping.
        unsafe { self.base.add(slot * self.stride) }
    }
    pub fn slice(&self, slot: usize) -> &[u8] {
        // SAFETY: valid for slot_len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.as_mut_ptr(slot), self.slot_len) }
    }
    pub fn slice_mut(&mut self, slot: usize) -> &mut [u8] {
        // SAFETY: as above; &mut self makes it exclusive, and buffers do
        // not overlap.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(slot), self.slot_len) }
    }
    /// Takes the first `pages` pages of buffer `slot` out of this process's page
    /// tables (MADV_DONTNEED). Shared buffers keep their contents, so the next access
    /// is a minor fault that maps the same page again. False for private buffers,
    /// whose contents that would discard, and when the kernel refuses.
    pub fn unmap(&self, slot: usize, pages: usize) -> bool {
        let len = (pages * ALIGN).min(self.stride);
        if !self.shared || len == 0 {
            return false;
        }
        // SAFETY: the range lies inside buffer `slot` of the mapping, page aligned;
        // its shared pages stay allocated.
        unsafe { libc::madvise(self.as_mut_ptr(slot).cast(), len, libc::MADV_DONTNEED) == 0 }
    }
    /// Keeps the mapping for the rest of the process: I/O still in flight
    /// may write into it after this value is gone.
    pub fn leak(&mut self) {
        self.leaked = true;
    }
}

impl Drop for SlotBuffers {
    fn drop(&mut self) {
        if !self.leaked {
            // SAFETY: the mapping made in new(), unmapped once.
            unsafe { libc::munmap(self.map.cast(), self.map_len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_and_apart() {
        let mut b = SlotBuffers::new(3, 8192).unwrap();
        assert_eq!(b.len(), 3);
        for slot in 0..3 {
            assert_eq!(b.as_mut_ptr(slot) as usize % ALIGN, 0);
            assert!(b.slice(slot).iter().all(|&x| x == 0));
            assert_eq!(b.slice(slot).len(), 8192);
        }
        b.slice_mut(1)[8191] = 7;
        b.slice_mut(2)[0] = 9;
        assert_eq!(b.slice(1)[8191], 7);
        assert_eq!(b.slice(2)[0], 9);
        assert!(b.slice(0).iter().all(|&x| x == 0));
    }

    #[test]
    fn odd_sizes_still_start_on_pages() {
        let b = SlotBuffers::new(4, 5000).unwrap();
        assert_eq!(b.slot_len(), 5000);
        for slot in 0..4 {
            assert_eq!(b.as_mut_ptr(slot) as usize % ALIGN, 0);
        }
    }

    #[test]
    fn a_set_meant_for_huge_pages_starts_on_one() {
        let b = SlotBuffers::new(HUGE_FROM / 8192, 8192).unwrap();
        assert_eq!(b.as_mut_ptr(0) as usize % HUGE, 0);
        assert_eq!(b.as_mut_ptr(1) as usize - b.as_mut_ptr(0) as usize, 8192);
    }

    /// /proc/self/stat field 10: this process's minor faults so far.
    fn minor_faults() -> u64 {
        procfs::process::Process::myself()
            .unwrap()
            .stat()
            .unwrap()
            .minflt
    }

    #[test]
    fn unmapped_shared_pages_fault_back_with_their_contents() {
        let mut b = SlotBuffers::shared(2, 16384).unwrap();
        b.slice_mut(1).fill(5);
        let before = minor_faults();
        assert!(b.unmap(1, 3));
        // Write every page of the slot, as a read into it does (a write fault maps one
        // page; a read fault would map its neighbours too): three faulted back in.
        for page in b.slice_mut(1).chunks_mut(4096) {
            page[1] = 6;
        }
        let faults = minor_faults() - before;
        assert!((3..=6).contains(&faults), "{faults} faults");
        assert!(
            b.slice(1).chunks(4096).all(|p| p[0] == 5 && p[1] == 6),
            "contents kept"
        );
        // Private buffers refuse: that would zero them.
        assert!(!SlotBuffers::new(1, 8192).unwrap().unmap(0, 2));
    }

    #[test]
    fn a_size_past_the_address_space_is_an_error() {
        assert!(SlotBuffers::new(usize::MAX / 4096, 8192).is_err());
    }
}
