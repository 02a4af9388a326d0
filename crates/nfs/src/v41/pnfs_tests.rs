//! Placement on striped layouts and the I/O counters.

use super::*;
use crate::proto::nfs4::{FileLayout, NetAddr};

fn route(stripes: u32, unit: u32, servers: Vec<Option<usize>>) -> FileRoute {
    let n = servers.len();
    let addr = |i: usize| NetAddr {
        netid: "tcp".into(),
        uaddr: format!("10.0.0.{}.8.1", i + 1),
    };
    let fh = Fh4::new(&[9; 8]).unwrap();
    FileRoute {
        fh,
        open: Stateid::ANONYMOUS,
        layout: Some((
            FileLayoutGrant {
                stateid: Stateid::ANONYMOUS,
                return_on_close: false,
                offset: 0,
                length: u64::MAX,
                iomode: LayoutIomode::Rw,
                layout: FileLayout {
                    deviceid: [0; 16],
                    util: unit,
                    first_stripe_index: 0,
                    pattern_offset: 0,
                    fh_list: vec![Fh4::new(&[7; 8]).unwrap()],
                },
            },
            FileDsAddr {
                stripe_indices: (0..stripes).map(|j| j % n as u32).collect(),
                multipath_ds_list: (0..n).map(|i| vec![addr(i)]).collect(),
            },
        )),
        servers,
        through_mds: None,
    }
}

#[test]
fn parts_go_to_the_stripes_server_or_through_the_metadata_server() {
    let unit = 64 << 10;
    let r = route(2, unit, vec![Some(4), Some(5)]);
    let p = r.place(0, 8192).unwrap();
    assert_eq!((p.server, p.offset), (4, 0));
    assert_eq!(p.fh, Fh4::new(&[7; 8]).unwrap());
    assert_eq!(r.place(u64::from(unit), 8192).unwrap().server, 5);
    assert_eq!(r.place(2 * u64::from(unit) + 100, 8192).unwrap().server, 4);
    // Across two stripe units of different servers: the metadata server.
    assert!(r.place(u64::from(unit) - 4096, 8192).is_none());
    // A data server that could not be reached: the metadata server.
    let r = route(2, unit, vec![Some(4), None]);
    assert!(r.place(u64::from(unit), 8192).is_none());
    assert_eq!(r.place(0, 8192).unwrap().server, 4);
    // One stripe (what the lab's servers give): every offset, any length.
    let r = route(1, 1 << 20, vec![Some(0)]);
    assert_eq!(r.place((1 << 20) - 4096, 1 << 20).unwrap().server, 0);
    // Striped over two indices: cut at 64 KiB units; one stripe: never cut.
    assert_eq!(
        route(2, unit, vec![Some(4), Some(5)]).stripe_units(),
        Some((0, u64::from(unit)))
    );
    assert_eq!(route(1, 1 << 20, vec![Some(0)]).stripe_units(), None);
    // No layout: the metadata server.
    let none = FileRoute {
        layout: None,
        servers: Vec::new(),
        ..route(1, 1 << 20, vec![Some(0)])
    };
    assert!(none.place(0, 8192).is_none());
    assert_eq!(none.stripe_units(), None);
}

#[test]
fn io_counts_keep_first_and_last() {
    let c = IoCount::default();
    c.add(1, 8192, 0);
    c.add(2, 16384, 1500);
    assert_eq!(c.ios.load(Relaxed), 3);
    assert_eq!(c.bytes.load(Relaxed), 24576);
    assert_eq!(
        (c.first_ms.load(Relaxed), c.last_ms.load(Relaxed)),
        (1, 1501)
    );
}
