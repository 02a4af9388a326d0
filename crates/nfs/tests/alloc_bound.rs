//! Decoders allocate in proportion to their input, never to a length word: a counting
//! allocator records the largest single allocation made while decoding.

use dbio_nfs::proto::nfs3::*;
use dbio_nfs::proto::{mount3, portmap};
use dbio_xdr::{BufMut, XdrDecode, XdrPut};
use proptest::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.with(|l| l.set(l.get().max(layout.size())));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.with(|l| l.set(l.get().max(new_size)));
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Largest allocation made by `f` on this thread.
fn largest_allocation(f: impl FnOnce()) -> usize {
    LARGEST.with(|l| l.set(0));
    f();
    LARGEST.with(|l| l.get())
}

/// Decode `b` with every result decoder and return the largest allocation.
fn decode_all(b: &[u8]) -> usize {
    largest_allocation(|| {
        let _ = decode_res::<ReaddirOk>(b);
        let _ = decode_res::<ReaddirplusOk>(b);
        let _ = decode_res::<ReadOk>(b);
        let _ = decode_res::<ReadlinkOk>(b);
        let _ = decode_res::<LookupOk>(b);
        let _ = mount3::decode_mnt(b);
        let _ = mount3::Exports::from_xdr(b);
        let _ = mount3::MountList::from_xdr(b);
        let _ = portmap::MappingList::from_xdr(b);
        let _ = dbio_rpc::decode_reply(b);
        let mut rec = dbio_rpc::RecordDecoder::new(1 << 20);
        rec.push(b);
        while let Ok(Some(_)) = rec.next_record() {}
    })
}

/// Generous proportional bound: decoded structs are larger than their wire form (an
/// `entryplus3` of 32 wire bytes becomes about 200 bytes), and vectors grow by doubling.
fn bound(input: usize) -> usize {
    16 * input + 4096
}

#[test]
fn hostile_lengths_allocate_nothing_large() {
    // OK status followed by 0xFFFFFFFF words: every length and count is huge.
    let mut b = vec![0u8; 4];
    b.extend_from_slice(&[0xff; 60]);
    assert!(decode_all(&b) <= bound(b.len()));
    // Flavor count of 2^30 in a MNT reply with 8 bytes behind it.
    let mut b = Vec::new();
    b.put_u32(0);
    b.put_opaque(&[1; 8]);
    b.put_u32(1 << 30);
    b.put_u64(0);
    assert!(decode_all(&b) <= bound(b.len()));
}

#[test]
fn many_small_entries_stay_proportional() {
    let mut b = Vec::new();
    b.put_u32(0);
    b.put_xdr_bool(false); // no dir attributes
    b.put_slice(&[0; 8]);
    for i in 0..5000u64 {
        b.put_xdr_bool(true);
        b.put_u64(i);
        b.put_opaque(b"");
        b.put_u64(i);
        b.put_xdr_bool(false);
        b.put_xdr_bool(false);
    }
    b.put_xdr_bool(false);
    b.put_xdr_bool(true);
    let ok = decode_res::<ReaddirplusOk>(&b).unwrap().unwrap();
    assert_eq!(ok.entries.len(), 5000);
    let largest = decode_all(&b);
    assert!(largest <= bound(b.len()), "{largest} > {}", bound(b.len()));
}

proptest! {
    #[test]
    fn random_input_allocates_in_proportion(raw in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut b = vec![0u8; 4];
        b.extend_from_slice(&raw);
        let largest = decode_all(&b);
        prop_assert!(largest <= bound(b.len()), "{} > {}", largest, bound(b.len()));
    }
}
