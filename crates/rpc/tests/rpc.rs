//! RPC messages and record marking: hand-checked bytes, round trips, bounds, no panics.

use dbio_rpc::record::{self, encode_record, fragment_header, RecordDecoder, RecordError};
use dbio_rpc::*;
use proptest::prelude::*;

fn sys() -> AuthSys {
    AuthSys {
        stamp: 0x1234_5678,
        machine_name: "host".into(),
        uid: 1000,
        gid: 100,
        gids: vec![100, 4],
    }
}

#[test]
fn null_call_with_auth_sys_bytes() {
    let mut buf = Vec::new();
    let start = record::begin_record(&mut buf);
    encode_call(
        &mut buf,
        0xdead_beef,
        100003,
        3,
        0,
        &Credential::sys(&sys()).unwrap(),
    );
    record::finish_record(&mut buf, start, 0);
    #[rustfmt::skip]
    let want: Vec<u8> = vec![
        0x80, 0, 0, 0x48,           // last fragment, 72 bytes
        0xde, 0xad, 0xbe, 0xef,     // xid
        0, 0, 0, 0,                 // CALL
        0, 0, 0, 2,                 // rpcvers
        0, 0x01, 0x86, 0xa3,        // NFS program 100003
        0, 0, 0, 3,                 // version 3
        0, 0, 0, 0,                 // NULL
        0, 0, 0, 1,                 // AUTH_SYS
        0, 0, 0, 32,                // body length
        0x12, 0x34, 0x56, 0x78,     // stamp
        0, 0, 0, 4, b'h', b'o', b's', b't',
        0, 0, 0x03, 0xe8,           // uid 1000
        0, 0, 0, 100,               // gid 100
        0, 0, 0, 2, 0, 0, 0, 100, 0, 0, 0, 4, // gids
        0, 0, 0, 0, 0, 0, 0, 0,     // verf AUTH_NONE
    ];
    assert_eq!(buf, want);
    let mut dec = RecordDecoder::new(1024);
    dec.push(&buf);
    let rec = dec.next_record().unwrap().unwrap();
    let call = decode_call(&rec).unwrap();
    assert_eq!(
        (call.xid, call.prog, call.vers, call.proc_),
        (0xdead_beef, 100003, 3, 0)
    );
    assert_eq!(call.cred.flavor, auth::AUTH_SYS);
    assert_eq!(AuthSys::decode_body(call.cred.body).unwrap(), sys());
    assert!(call.args.is_empty());
    assert_eq!(peek(&rec).unwrap(), (0xdead_beef, MsgType::Call));
}

#[test]
fn call_record_helper_matches_manual_steps() {
    let cred = Credential::none();
    let mut a = Vec::new();
    let start = record::begin_record(&mut a);
    encode_call(&mut a, 5, 100005, 3, 1, &cred);
    a.extend_from_slice(&[0, 0, 0, 1, b'/', 0, 0, 0]);
    record::finish_record(&mut a, start, 0);
    let mut b = bytes::BytesMut::new();
    encode_call_record(&mut b, 5, 100005, 3, 1, &cred, &7u32);
    encode_call_record(&mut b, 5, 100005, 3, 1, &cred, &7u32);
    assert_eq!(&b[..4], [0x80, 0, 0, 44]);
    assert_eq!(b.len(), 96);
    assert_eq!(a.len(), 52);
}

#[test]
fn auth_sys_limits() {
    let mut a = sys();
    a.gids = (0..17).collect();
    assert_eq!(Credential::sys(&a).unwrap_err(), AuthError::TooManyGids(17));
    let mut a = sys();
    a.machine_name = "x".repeat(256);
    assert_eq!(
        Credential::sys(&a).unwrap_err(),
        AuthError::MachineNameTooLong(256)
    );
    assert_eq!(Credential::none().wire(), [0u8; 16]);
}

#[test]
fn success_reply_gives_results_slice() {
    #[rustfmt::skip]
    let reply = [
        0, 0, 0, 9,   0, 0, 0, 1,   0, 0, 0, 0,   // xid 9, REPLY, MSG_ACCEPTED
        0, 0, 0, 0,   0, 0, 0, 0,                 // verf AUTH_NONE
        0, 0, 0, 0,                               // SUCCESS
        0xaa, 0xbb, 0xcc, 0xdd,                   // results
    ];
    let r = decode_reply(&reply).unwrap();
    assert_eq!(r.xid, 9);
    assert_eq!(r.results().unwrap(), [0xaa, 0xbb, 0xcc, 0xdd]);
    assert_eq!(peek(&reply).unwrap(), (9, MsgType::Reply));
}

#[test]
fn refusals_are_typed() {
    let cases = [
        ReplyError::ProgUnavail,
        ReplyError::ProgMismatch { low: 2, high: 4 },
        ReplyError::ProcUnavail,
        ReplyError::GarbageArgs,
        ReplyError::SystemErr,
        ReplyError::RpcMismatch { low: 2, high: 2 },
        ReplyError::Auth(AuthStat::TooWeak),
        ReplyError::Auth(AuthStat::Other(13)),
    ];
    for reason in cases {
        let mut b = Vec::new();
        encode_reply_error(&mut b, 77, reason);
        let r = decode_reply(&b).unwrap();
        assert_eq!(r.outcome, Err(reason));
        assert_eq!(
            r.results().unwrap_err(),
            RpcError::Refused { xid: 77, reason }
        );
    }
    // Hand-checked AUTH_ERROR / AUTH_BADCRED.
    let b = [0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1];
    let err = decode_reply(&b).unwrap().results().unwrap_err();
    assert_eq!(
        err.to_string(),
        "rpc call xid 0x00000005 refused: authentication failed: AUTH_BADCRED (bad credential)"
    );
}

#[test]
fn malformed_replies_are_errors() {
    // A call is not a reply.
    assert!(matches!(
        decode_reply(&[0, 0, 0, 1, 0, 0, 0, 0]),
        Err(RpcError::Xdr(_))
    ));
    // Unknown reply_stat and accept_stat.
    assert!(decode_reply(&[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2]).is_err());
    let b = [
        0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6,
    ];
    assert!(decode_reply(&b).is_err());
    // Verifier body longer than 400 bytes.
    let b = [
        0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
    ];
    assert!(matches!(
        decode_reply(&b),
        Err(RpcError::Xdr(dbio_xdr::XdrError::TooLong {
            bound: 400,
            ..
        }))
    ));
}

#[test]
fn record_header_has_last_fragment_bit() {
    assert_eq!(fragment_header(0x1c, true), [0x80, 0, 0, 0x1c]);
    assert_eq!(fragment_header(0x1c, false), [0, 0, 0, 0x1c]);
    let mut b = Vec::new();
    encode_record(&mut b, b"abcdefg", 3);
    assert_eq!(
        b,
        [0, 0, 0, 3, b'a', b'b', b'c', 0, 0, 0, 3, b'd', b'e', b'f', 0x80, 0, 0, 1, b'g']
    );
    let mut b = Vec::new();
    encode_record(&mut b, b"", 3);
    assert_eq!(b, [0x80, 0, 0, 0]);
}

#[test]
fn finish_record_counts_a_separately_sent_tail() {
    let mut b = bytes::BytesMut::new();
    let start = record::begin_record(&mut b);
    b.extend_from_slice(&[1, 2, 3, 4]);
    record::finish_record(&mut b, start, 8192);
    assert_eq!(&b[..4], [0x80, 0, 0x20, 0x04]);
}

#[test]
fn oversized_record_is_refused_before_buffering() {
    let mut dec = RecordDecoder::new(1000);
    dec.push(&[0xff, 0xff, 0xff, 0xff]);
    assert_eq!(
        dec.next_record().unwrap_err(),
        RecordError::TooLarge {
            len: 0x7fff_ffff,
            max: 1000
        }
    );
    // The bound applies to the sum of fragments.
    let mut dec = RecordDecoder::new(10);
    let mut b = Vec::new();
    encode_record(&mut b, &[0; 12], 6);
    dec.push(&b);
    assert_eq!(
        dec.next_record().unwrap_err(),
        RecordError::TooLarge { len: 12, max: 10 }
    );
}

#[test]
fn split_reads_need_more_input() {
    let mut b = Vec::new();
    encode_record(&mut b, b"hello world", 4);
    let mut dec = RecordDecoder::new(100);
    for byte in &b[..b.len() - 1] {
        dec.push(std::slice::from_ref(byte));
        assert_eq!(dec.next_record().unwrap(), None);
        assert!(dec.wanted() <= 100);
    }
    dec.push(&b[b.len() - 1..]);
    assert_eq!(dec.next_record().unwrap().unwrap(), &b"hello world"[..]);
    assert_eq!(dec.next_record().unwrap(), None);
}

proptest! {
    #[test]
    fn records_survive_any_fragmentation_and_chunking(
        msgs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 1..6),
        frag in 1usize..64,
        chunk in 1usize..50,
    ) {
        let mut stream = Vec::new();
        for m in &msgs {
            encode_record(&mut stream, m, frag);
        }
        let mut dec = RecordDecoder::new(200);
        let mut got = Vec::new();
        for c in stream.chunks(chunk) {
            dec.push(c);
            while let Some(r) = dec.next_record()? {
                got.push(r.to_vec());
            }
        }
        prop_assert_eq!(got, msgs);
    }

    #[test]
    fn call_header_round_trips(
        xid: u32, prog: u32, vers: u32, proc_: u32, stamp: u32, uid: u32, gid: u32,
        name in "[a-z0-9.-]{0,255}",
        gids in proptest::collection::vec(any::<u32>(), 0..=16),
        args in proptest::collection::vec(any::<u8>(), 0..32),
    ) {
        let a = AuthSys { stamp, machine_name: name, uid, gid, gids };
        let mut b = Vec::new();
        encode_call(&mut b, xid, prog, vers, proc_, &Credential::sys(&a).unwrap());
        b.extend_from_slice(&args);
        let c = decode_call(&b)?;
        prop_assert_eq!((c.xid, c.prog, c.vers, c.proc_), (xid, prog, vers, proc_));
        prop_assert_eq!(AuthSys::decode_body(c.cred.body)?, a);
        prop_assert_eq!(c.args, &args[..]);
    }

    #[test]
    fn success_reply_round_trips(xid: u32, results in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut b = Vec::new();
        encode_reply_success(&mut b, xid);
        b.extend_from_slice(&results);
        let r = decode_reply(&b)?;
        prop_assert_eq!(r.xid, xid);
        prop_assert_eq!(r.outcome, Ok(&results[..]));
    }

    #[test]
    fn decoders_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..96)) {
        let _ = decode_reply(&buf);
        let _ = decode_call(&buf);
        let _ = peek(&buf);
        let _ = AuthSys::decode_body(&buf);
        let mut dec = RecordDecoder::new(64);
        dec.push(&buf);
        while let Ok(Some(r)) = dec.next_record() {
            prop_assert!(r.len() <= 64);
        }
    }
}
