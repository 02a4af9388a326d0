//! RPC reply and call decoding, AUTH_SYS bodies, and the xid peek.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(reply) = dbio_rpc::decode_reply(data) {
        // The xid peek agrees with the full decoder.
        let (xid, kind) = dbio_rpc::peek(data).expect("peek of a decoded reply");
        assert_eq!(xid, reply.xid);
        assert_eq!(kind, dbio_rpc::MsgType::Reply);
        if let Ok(results) = reply.outcome {
            assert!(results.len() <= data.len());
        }
    }
    if let Ok(call) = dbio_rpc::decode_call(data) {
        let _ = dbio_rpc::AuthSys::decode_body(call.cred.body);
    }
});
