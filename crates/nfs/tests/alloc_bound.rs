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

/// Record reassembly: the largest allocation while feeding `stream` in `chunk`-byte
/// pieces to a decoder bounded at `max`, and the records it gave.
fn reassemble(stream: &[u8], chunk: usize, max: usize) -> (usize, usize) {
    let mut records = 0;
    let largest = largest_allocation(|| {
        let mut dec = dbio_rpc::RecordDecoder::new(max);
        for piece in stream.chunks(chunk.max(1)) {
            dec.push(piece);
            loop {
                match dec.next_record() {
                    Ok(Some(_)) => records += 1,
                    Ok(None) => break,
                    Err(_) => return,
                }
            }
        }
    });
    (largest, records)
}

#[test]
fn record_marks_claiming_huge_lengths_allocate_nothing_large() {
    // A last fragment of 2^31 - 1 bytes, and a non-last one of 1 GiB, each with
    // 64 bytes behind them.
    for mark in [0xffff_ffffu32, 0x4000_0000] {
        let mut b = mark.to_be_bytes().to_vec();
        b.extend_from_slice(&[0xab; 64]);
        for chunk in [1, 7, 4096] {
            let (largest, records) = reassemble(&b, chunk, 4 << 20);
            assert_eq!(records, 0);
            assert!(largest <= bound(b.len()), "{largest} > {}", bound(b.len()));
        }
    }
}

#[test]
fn many_tiny_fragments_stay_proportional() {
    // One record of 20000 one-byte fragments: reassembly copies, but only what arrived.
    let mut b = Vec::new();
    for i in 0..20_000u32 {
        let last = if i == 19_999 { 0x8000_0000 } else { 0 };
        b.extend_from_slice(&(1u32 | last).to_be_bytes());
        b.push(i as u8);
    }
    let (largest, records) = reassemble(&b, 4096, 1 << 20);
    assert_eq!(records, 1);
    assert!(largest <= bound(b.len()), "{largest} > {}", bound(b.len()));
}

#[test]
fn rpc_replies_with_huge_lengths_allocate_nothing_large() {
    // Accepted reply whose verifier claims 2^32 - 1 bytes; a denied reply with a huge
    // version range; a reply of a SUCCESS with huge result words.
    let mut verf = Vec::new();
    verf.put_u32(7);
    verf.put_u32(1);
    verf.put_u32(0);
    verf.put_u32(1);
    verf.put_u32(u32::MAX);
    verf.extend_from_slice(&[0; 32]);
    let mut denied = Vec::new();
    denied.put_u32(7);
    denied.put_u32(1);
    denied.put_u32(1);
    denied.put_u32(0);
    denied.put_u32(u32::MAX);
    denied.put_u32(u32::MAX);
    let mut ok = dbio_rpc::msg::REPLY.to_be_bytes().to_vec();
    ok.splice(0..0, 7u32.to_be_bytes());
    ok.extend_from_slice(&[0; 12]);
    ok.extend_from_slice(&[0xff; 64]);
    for b in [verf, denied, ok] {
        let largest = largest_allocation(|| {
            let _ = dbio_rpc::decode_reply(&b);
            let _ = dbio_rpc::decode_call(&b);
        });
        assert!(largest <= bound(b.len()), "{largest} > {}", bound(b.len()));
    }
}

proptest! {
    #[test]
    fn chunked_record_streams_allocate_in_proportion(
        raw in proptest::collection::vec(any::<u8>(), 0..2048),
        chunk in 1usize..600,
    ) {
        let (largest, _) = reassemble(&raw, chunk, 1 << 20);
        prop_assert!(largest <= bound(raw.len()), "{} > {}", largest, bound(raw.len()));
    }
}
