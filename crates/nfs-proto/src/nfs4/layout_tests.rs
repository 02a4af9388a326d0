//! pNFS files layouts and device addresses: byte vectors, decoding and bounds.

use super::tests::{words, SID, SID_WORDS};
use super::*;
use dbio_xdr::{XdrEncode, XdrPut};

pub(super) fn file_layout() -> FileLayout {
    FileLayout {
        deviceid: SID,
        util: (1 << 20) | NFL4_UFLG_DENSE,
        first_stripe_index: 0,
        pattern_offset: 0,
        fh_list: vec![Fh4::new(&[9; 32]).unwrap()],
    }
}

/// SEQUENCE OK, PUTFH OK, LAYOUTGET OK with one files layout.
pub(super) fn layout_reply() -> Vec<u8> {
    let mut b = words(&[0, 0, 3, 53, 0]);
    b.extend(words(&SID_WORDS));
    b.extend(words(&[1, 0, 0, 0, 0, 22, 0, 50, 0]));
    b.extend(words(&[1, 1, 0, 0, 0])); // return_on_close, stateid
    b.extend(words(&[1, 0, 0, 0xffffffff, 0xffffffff, 2, 1])); // 1 layout, range, RW, files
    let body = file_layout().to_xdr();
    // deviceid (16), util, first stripe, pattern offset (8), fh list: 1 x (4 + 32)
    assert_eq!(body.len(), 16 + 4 + 4 + 8 + 4 + 36);
    b.put_opaque(&body);
    b
}

#[test]
fn decode_layoutget_files_layout() {
    let b = layout_reply();
    let res = decode_compound(&b).unwrap().into_results().unwrap();
    let OpResult::Layoutget(l) = &res[2] else {
        panic!("{:?}", res[2])
    };
    assert!(l.return_on_close);
    assert_eq!(l.layouts.len(), 1);
    let lo = &l.layouts[0];
    assert_eq!((lo.offset, lo.length), (0, u64::MAX));
    assert_eq!(
        (lo.iomode, lo.layout_type),
        (LayoutIomode::Rw, LayoutType::NfsV41Files)
    );
    let fl = FileLayout::from_body(lo.body).unwrap();
    assert_eq!(fl, file_layout());
    assert_eq!(fl.stripe_unit(), 1 << 20);
    assert!(fl.dense() && !fl.commit_through_mds());
}

fn ds_addr() -> FileDsAddr {
    FileDsAddr {
        stripe_indices: vec![0, 1],
        multipath_ds_list: vec![
            vec![NetAddr {
                netid: "tcp".into(),
                uaddr: "10.231.0.2.8.1".into(),
            }],
            vec![
                NetAddr {
                    netid: "tcp".into(),
                    uaddr: "10.231.0.3.8.1".into(),
                },
                NetAddr {
                    netid: "tcp6".into(),
                    uaddr: "fd00::3.8.1".into(),
                },
            ],
        ],
    }
}

/// GETDEVICEINFO OK with a files-layout device address.
pub(super) fn device_reply() -> Vec<u8> {
    let mut b = words(&[0, 0, 1, 47, 0, 1]);
    let body = ds_addr().to_xdr();
    b.put_opaque(&body);
    b.extend(words(&[0]));
    b
}

#[test]
fn decode_getdeviceinfo_ds_addr() {
    let body = ds_addr().to_xdr();
    // stripe_indices<2>, then 2 lists: [tcp, 10.231.0.2.8.1], [.., ..]
    assert_eq!(
        &body[..28],
        &words(&[2, 0, 1, 2, 1, 3, 0x74637000])[..],
        "count, indices, list count, first list count, netid \"tcp\""
    );
    let b = device_reply();
    let res = decode_compound(&b).unwrap().into_results().unwrap();
    let OpResult::Getdeviceinfo(g) = &res[0] else {
        panic!("{:?}", res[0])
    };
    assert_eq!(g.layout_type, LayoutType::NfsV41Files);
    let a = FileDsAddr::from_body(g.addr_body).unwrap();
    assert_eq!(a, ds_addr());
    let ds = a.servers_for_stripe(3).unwrap();
    assert_eq!(
        ds[0].socket_addr(),
        Some("10.231.0.3:2049".parse().unwrap())
    );
    assert_eq!(ds[1].socket_addr(), Some("[fd00::3]:2049".parse().unwrap()));
    // A stripe index beyond the list is rejected.
    let mut bad = ds_addr();
    bad.stripe_indices = vec![2];
    assert!(FileDsAddr::from_body(&bad.to_xdr()).is_err());
}

#[test]
fn uaddr() {
    let a: std::net::SocketAddr = "10.231.0.2:2049".parse().unwrap();
    assert_eq!(parse_uaddr("10.231.0.2.8.1"), Some(a));
    assert_eq!(format_uaddr(a), "10.231.0.2.8.1");
    assert_eq!(
        parse_uaddr("127.0.0.1.0.111"),
        Some("127.0.0.1:111".parse().unwrap())
    );
    for bad in [
        "",
        "1.2.3.4",
        "1.2.3.4.256.1",
        "1.2.3.4.8.x",
        "host.8.1",
        "1.2.3.4.5.8.1",
    ] {
        assert_eq!(parse_uaddr(bad), None, "{bad}");
    }
}
