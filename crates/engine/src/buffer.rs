//! Page-aligned I/O buffers, as O_DIRECT requires.

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every buffer: enough for O_DIRECT on any device here.
pub const ALIGN: usize = 4096;

/// A zeroed, page-aligned heap buffer.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// The buffer is plain owned memory.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        let size = len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(size, ALIGN).expect("buffer layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Self { ptr, len }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let size = self.len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(size, ALIGN).expect("buffer layout");
        // SAFETY: allocated in new() with this layout.
        unsafe { dealloc(self.ptr, layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn aligned_and_zeroed() {
        let mut b = AlignedBuf::new(8192);
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[8191] = 7;
        assert_eq!(b.as_slice()[8191], 7);
    }
}
