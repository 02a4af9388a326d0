//! The stripe map against the examples of RFC 8881 13.4.2 (sparse) and 13.4.3 (dense),
//! dense offsets, and the checks on malformed layouts.

use super::*;
use crate::proto::nfs4::{NFL4_UFLG_DENSE, NFL4_UFLG_MASK};

fn addr(name: &str) -> NetAddr {
    NetAddr {
        netid: "tcp".into(),
        uaddr: name.into(),
    }
}

fn fh(b: u8) -> Fh4 {
    Fh4::new(&[b]).unwrap()
}

/// The RFC's device: seven data servers in three multipath lists
/// { A, B, C, D }, { E }, { F, G }, and stripe indices { 2, 0, 1, 0 }.
fn rfc_device() -> FileDsAddr {
    FileDsAddr {
        stripe_indices: vec![2, 0, 1, 0],
        multipath_ds_list: vec![
            vec![addr("A"), addr("B"), addr("C"), addr("D")],
            vec![addr("E")],
            vec![addr("F"), addr("G")],
        ],
    }
}

fn layout(unit: u32, dense: bool, first: u32, fhs: &[u8], pattern_offset: u64) -> FileLayout {
    FileLayout {
        deviceid: [7; 16],
        util: unit | if dense { NFL4_UFLG_DENSE } else { 0 },
        first_stripe_index: first,
        pattern_offset,
        fh_list: fhs.iter().map(|&b| fh(b)).collect(),
    }
}

fn names(addrs: &[NetAddr]) -> String {
    addrs
        .iter()
        .map(|a| a.uaddr.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// RFC 8881 13.4.2: first stripe index 2, handles { 0x36, 0x87, 0x67 } (one per data
/// server); the RFC's table of where the first stripe units go.
#[test]
fn sparse_example_of_rfc_8881() {
    let dev = rfc_device();
    let unit = 64 << 10;
    let l = layout(unit, false, 2, &[0x36, 0x87, 0x67], 0);
    let map = StripeMap::new(&l, &dev).unwrap();
    let table = [
        (0, 0x87, "E"),
        (1, 0x36, "A,B,C,D"),
        (2, 0x67, "F,G"),
        (3, 0x36, "A,B,C,D"),
        (4, 0x87, "E"),
        (5, 0x36, "A,B,C,D"),
        (6, 0x67, "F,G"),
        (7, 0x36, "A,B,C,D"),
        (8, 0x87, "E"),
    ];
    for (su, h, servers) in table {
        let off = su * u64::from(unit) + 100;
        let t = map.locate(off).unwrap();
        assert_eq!(t.stripe_unit, su);
        assert_eq!(t.fh, Some(fh(h)), "SU{su}");
        assert_eq!(names(t.addrs), servers, "SU{su}");
        // Sparse: the data server gets the file offset itself.
        assert_eq!(t.ds_offset, off);
        assert_eq!(t.unit_left, u64::from(unit) - 100);
    }
    // SU0: j = (0 + 2) % 4 = 2, idx = stripe_indices[2] = 1.
    let t = map.locate(0).unwrap();
    assert_eq!((t.stripe_index, t.data_server), (2, 1));
}

/// RFC 8881 13.4.3: the same device with dense packing and handles
/// { 0x67, 0x37, 0x87, 0x36 }, one per stripe index: data server { A, B, C, D }
/// holds two stripes under two handles.
#[test]
fn dense_example_of_rfc_8881() {
    let dev = rfc_device();
    let unit = 4096u32;
    let l = layout(unit, true, 2, &[0x67, 0x37, 0x87, 0x36], 0);
    let map = StripeMap::new(&l, &dev).unwrap();
    let table = [
        (0, 0x87, "E"),
        (1, 0x36, "A,B,C,D"),
        (2, 0x67, "F,G"),
        (3, 0x37, "A,B,C,D"),
        (4, 0x87, "E"),
        (5, 0x36, "A,B,C,D"),
        (6, 0x67, "F,G"),
        (7, 0x37, "A,B,C,D"),
    ];
    let u = u64::from(unit);
    for (su, h, servers) in table {
        let t = map.locate(su * u + 5).unwrap();
        assert_eq!(t.fh, Some(fh(h)), "SU{su}");
        assert_eq!(names(t.addrs), servers, "SU{su}");
        // Dense: stripe unit su is the (su / 4)th unit in its data-server file.
        assert_eq!(t.ds_offset, (su / 4) * u + 5, "SU{su}");
    }
}

/// Dense offsets with a pattern offset: the data-server offset counts from it, and the
/// units of one stripe index follow each other with no holes.
#[test]
fn dense_offsets_pack_each_stripe_end_to_end() {
    let dev = FileDsAddr {
        stripe_indices: vec![0, 1, 2],
        multipath_ds_list: vec![vec![addr("X")], vec![addr("Y")], vec![addr("Z")]],
    };
    let unit = 8192u32;
    let l = layout(unit, true, 0, &[1, 2, 3], 1 << 20);
    let map = StripeMap::new(&l, &dev).unwrap();
    let u = u64::from(unit);
    let base = 1u64 << 20;
    // Walk 12 stripe units: each data server sees offsets 0, u, 2u, 3u in turn.
    let mut next = [0u64; 3];
    for su in 0..12u64 {
        let t = map.locate(base + su * u).unwrap();
        let ds = t.data_server as usize;
        assert_eq!(ds as u64, su % 3);
        assert_eq!(t.ds_offset, next[ds], "SU{su}");
        next[ds] += u;
        // The last byte of the unit maps just before the next unit's start.
        let end = map.locate(base + su * u + u - 1).unwrap();
        assert_eq!(end.ds_offset, t.ds_offset + u - 1);
        assert_eq!(end.unit_left, 1);
    }
    assert_eq!(next, [4 * u, 4 * u, 4 * u]);
    assert_eq!(
        map.locate(base - 1),
        Err(StripeError::BeforePattern {
            offset: base - 1,
            pattern_offset: base
        })
    );
}

/// What a Gluster-backed ganesha hands out: one stripe, one data server, one handle,
/// sparse; every offset goes to that server unchanged.
#[test]
fn single_stripe_layout_maps_every_offset_to_one_server() {
    let dev = FileDsAddr {
        stripe_indices: vec![0],
        multipath_ds_list: vec![vec![addr("10.231.0.2.8.1")]],
    };
    for unit in [0u32, 1 << 20] {
        let l = layout(unit, false, 0, &[9], 0);
        let map = StripeMap::new(&l, &dev).unwrap();
        for off in [0, 4095, 1 << 20, (1 << 40) + 3] {
            let t = map.locate(off).unwrap();
            assert_eq!((t.data_server, t.ds_offset, t.fh), (0, off, Some(fh(9))));
            assert!(t.unit_left >= 1);
        }
    }
    let t = tcp_addr(&dev.multipath_ds_list[0][0]).unwrap();
    assert_eq!(t.to_string(), "10.231.0.2:2049");
}

/// A sparse layout without handles: the data servers take the metadata server's handle.
#[test]
fn sparse_layout_without_handles_uses_the_open_handle() {
    let dev = rfc_device();
    let l = layout(4096, false, 0, &[], 0);
    let t = StripeMap::new(&l, &dev).unwrap().locate(0).unwrap();
    assert_eq!(t.fh, None);
}

#[test]
fn malformed_layouts_are_refused() {
    let dev = rfc_device();
    // Dense needs one handle per stripe index (4), or one.
    let l = layout(4096, true, 0, &[1, 2, 3], 0);
    assert_eq!(
        StripeMap::new(&l, &dev).unwrap_err(),
        StripeError::HandleCount {
            fhs: 3,
            stripes: 4,
            servers: 3
        }
    );
    // Sparse needs 0, 1 or one per data server (3).
    let l = layout(4096, false, 0, &[1, 2], 0);
    assert!(matches!(
        StripeMap::new(&l, &dev),
        Err(StripeError::HandleCount { fhs: 2, .. })
    ));
    // Several stripes need a stripe unit.
    let l = layout(0, false, 0, &[1], 0);
    assert_eq!(
        StripeMap::new(&l, &dev).unwrap_err(),
        StripeError::ZeroStripeUnit(4)
    );
    let empty = FileDsAddr {
        stripe_indices: vec![],
        multipath_ds_list: vec![vec![addr("A")]],
    };
    assert_eq!(
        StripeMap::new(&l, &empty).unwrap_err(),
        StripeError::NoStripes
    );
    // A stripe index beyond the data-server list (a device built by hand; the decoder
    // already refuses it on the wire).
    let bad = FileDsAddr {
        stripe_indices: vec![0, 5],
        multipath_ds_list: vec![vec![addr("A")]],
    };
    let l = layout(4096, false, 0, &[1], 0);
    assert_eq!(
        StripeMap::new(&l, &bad).unwrap_err(),
        StripeError::BadStripeIndex {
            index: 1,
            server: 5,
            servers: 1
        }
    );
    // The flag bits never count as stripe unit.
    let l = layout(4096 | NFL4_UFLG_MASK, false, 0, &[1], 0);
    assert_eq!(l.stripe_unit(), 4096);
}

/// Offsets near u64::MAX neither overflow nor panic.
#[test]
fn extreme_offsets_do_not_overflow() {
    let dev = rfc_device();
    for dense in [false, true] {
        let l = layout(
            64,
            dense,
            u32::MAX,
            &[1, 2, 3, 4][..if dense { 4 } else { 1 }],
            0,
        );
        let map = StripeMap::new(&l, &dev).unwrap();
        let t = map.locate(u64::MAX).unwrap();
        assert!(t.unit_left >= 1 && (t.stripe_index as usize) < 4);
    }
}

#[test]
fn layoutget_statuses_that_mean_no_layout() {
    assert_eq!(
        NoLayout::from_status(Nfsstat4::Layoutunavailable),
        Some(NoLayout::Unavailable)
    );
    assert_eq!(
        NoLayout::from_status(Nfsstat4::UnknownLayouttype),
        Some(NoLayout::UnknownLayoutType)
    );
    assert_eq!(
        NoLayout::from_status(Nfsstat4::Notsupp),
        Some(NoLayout::NotMetadataServer(Nfsstat4::Notsupp))
    );
    // A bad stateid or a stale handle is the caller's error, not a missing layout.
    assert_eq!(NoLayout::from_status(Nfsstat4::BadStateid), None);
    assert_eq!(NoLayout::from_status(Nfsstat4::Stale), None);
}

proptest::proptest! {
    /// For any layout the map accepts, every offset maps without panic, within one
    /// stripe unit, and with dense packing no two file bytes share a data-server byte:
    /// (handle, data server, offset) is one-to-one over several stripe widths, and the
    /// bytes of one stripe unit are consecutive on the data server.
    #[test]
    fn dense_map_is_one_to_one(
        stripes in 1usize..6,
        servers in 1usize..4,
        unit_64 in 1u32..5,
        first in proptest::prelude::any::<u32>(),
        pattern_offset in 0u64..10_000,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let unit = unit_64 * 64;
        let dev = FileDsAddr {
            stripe_indices: (0..stripes).map(|i| ((seed >> (i * 4)) % servers as u64) as u32).collect(),
            multipath_ds_list: (0..servers).map(|i| vec![addr(&i.to_string())]).collect(),
        };
        let fhs: Vec<u8> = (0..stripes as u8).collect();
        let l = layout(unit, true, first, &fhs, pattern_offset);
        let map = StripeMap::new(&l, &dev).unwrap();
        let width = u64::from(unit) * stripes as u64;
        let mut seen = std::collections::HashSet::new();
        let mut prev: Option<StripeTarget> = None;
        for off in pattern_offset..pattern_offset + 3 * width {
            let t = map.locate(off).unwrap();
            proptest::prop_assert!(t.unit_left >= 1 && t.unit_left <= u64::from(unit));
            proptest::prop_assert!(seen.insert((t.fh, t.data_server, t.ds_offset)), "offset {}", off);
            if let Some(p) = prev.filter(|p| p.unit_left > 1) {
                proptest::prop_assert_eq!(t.ds_offset, p.ds_offset + 1);
                proptest::prop_assert_eq!(t.fh, p.fh);
            }
            prev = Some(t);
        }
    }
}
