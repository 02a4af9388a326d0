//! The NFSv4.1 back channel; the first byte picks: 0 a CB_COMPOUND call's arguments, 1 a
//! CB_COMPOUND reply, 2 a whole RPC call record as a connection hands it to the
//! back-channel handler. Whatever decodes encodes back to the same value.
#![no_main]

use dbio_nfs_proto::nfs4::*;
use libfuzzer_sys::fuzz_target;

fn call(b: &[u8]) {
    let Ok(c) = decode_cb_compound(b) else {
        return;
    };
    assert!(c.ops.len() <= b.len() / 4);
    if matches!(c.ops.last(), Some(CbOp::Unsupported(_))) {
        return;
    }
    let mut again = Vec::new();
    encode_cb_compound(&mut again, c.tag.0, c.callback_ident, &c.ops);
    let d = decode_cb_compound(&again).expect("an encoded call decodes");
    assert_eq!(d.ops, c.ops);
}

fuzz_target!(|data: &[u8]| {
    let Some((&k, b)) = data.split_first() else {
        return;
    };
    match k % 3 {
        0 => call(b),
        1 => {
            if let Ok(r) = decode_cb_compound_res(b) {
                assert!(r.results.len() <= b.len() / 8);
                let mut again = Vec::new();
                encode_cb_compound_res(&mut again, r.tag.0, &r.results);
                let d = decode_cb_compound_res(&again).expect("an encoded reply decodes");
                assert_eq!(d.results, r.results);
            }
        }
        _ => {
            if let Ok(c) = dbio_rpc::decode_call(b) {
                call(c.args);
            }
        }
    }
});
