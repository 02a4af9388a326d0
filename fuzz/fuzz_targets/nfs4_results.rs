//! NFSv4.1 decoders; the first byte picks one: 0 COMPOUND reply, whole, op by op and as
//! a READ or WRITE reply (and the files-layout and device-address bodies inside it),
//! 1 files-layout body, 2 files device address, 3 fattr4, 4 universal address,
//! 5 CB_COMPOUND call (back channel).
#![no_main]

use dbio_nfs_proto::nfs4::*;
use dbio_xdr::XdrDecode;
use libfuzzer_sys::fuzz_target;

fn bodies(layouts: &[Layout<'_>]) {
    for l in layouts {
        if let Ok(fl) = FileLayout::from_body(l.body) {
            assert!(fl.fh_list.len() <= l.body.len() / 4);
        }
    }
}

fn ds_addr(body: &[u8]) {
    if let Ok(a) = FileDsAddr::from_body(body) {
        for i in 0..a.stripe_indices.len() as u32 {
            // Every stripe index was checked against the list when decoding.
            let servers = a.servers_for_stripe(i).expect("stripe index in range");
            for s in servers {
                let _ = s.socket_addr();
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&k, b)) = data.split_first() else {
        return;
    };
    match k % 6 {
        0 => {
            // The reader the data path uses accepts what decode_compound accepts.
            let read_ok = CompoundReader::new(b)
                .is_ok_and(|mut ops| std::iter::from_fn(|| ops.next_op()).all(|op| op.is_ok()));
            assert_eq!(read_ok, decode_compound(b).is_ok());
            assert_eq!(decode_io_reply(b).is_ok(), read_ok);
            if let Ok(r) = decode_compound(b) {
                assert!(r.results.len() <= b.len() / 8);
                if let Some(f) = r.failure {
                    assert_eq!(f.index, r.results.len());
                    let _ = f.to_string();
                }
                for res in &r.results {
                    match res {
                        OpResult::Read { data, .. } => assert!(data.len() <= b.len()),
                        OpResult::Layoutget(l) => bodies(&l.layouts),
                        OpResult::Getdeviceinfo(g) => ds_addr(g.addr_body),
                        OpResult::Readdir(rd) => {
                            assert!(rd.entries.len() <= b.len() / 28);
                            for e in &rd.entries {
                                let _ = e.attrs();
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        1 => {
            let _ = FileLayout::from_body(b);
        }
        2 => ds_addr(b),
        3 => {
            if let Ok(a) = Fattr::from_xdr(b) {
                let _ = (a.owner_id(), a.group_id());
            }
        }
        5 => {
            if let Ok(c) = decode_cb_compound(b) {
                assert!(c.ops.len() <= b.len() / 4);
            }
        }
        _ => {
            if let Ok(s) = std::str::from_utf8(b) {
                if let Some(a) = parse_uaddr(s) {
                    assert_eq!(parse_uaddr(&format_uaddr(a)), Some(a));
                }
            }
        }
    }
});
