//! The NFSv4.1 session's retries against a scripted server on loopback: NFS4ERR_DELAY
//! from SEQUENCE is re-sent on the same slot with the same sequence id, NFS4ERR_GRACE
//! from a later op with the next one (RFC 8881 2.10.6), and a lowered
//! `target_highest_slotid` is honoured. No external server needed.

use std::future::Future;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, Compound, Nfsstat4, Opnum, SequenceOk,
    MINOR_VERSION,
};
use dbio_nfs::v41::{Session, SessionOptions};
use dbio_rpc::{decode_call, encode_reply_success, AuthSys, Credential};
use dbio_xdr::{XdrEncode, XdrPut};

#[path = "common/v41_script.rs"]
mod v41_script;
use v41_script::{answer_session_op, u32_at, SID};

/// Answers one COMPOUND; `seen` gets (slot, seqid) of every SEQUENCE.
fn answer(args: &[u8], seen: &Mutex<Vec<(u32, u32)>>, out: &mut Vec<u8>) {
    let taglen = u32_at(args, 0) as usize;
    let at = 4 + taglen.div_ceil(4) * 4 + 4; // tag, minorversion
    let count = u32_at(args, at);
    let op = u32_at(args, at + 4);
    let ok = Nfsstat4::Ok;
    if answer_session_op(op, out) {
        return;
    }
    match op {
        53 => {
            let seqid = u32_at(args, at + 8 + 16);
            let slot = u32_at(args, at + 8 + 20);
            let n = {
                let mut s = seen.lock().unwrap();
                s.push((slot, seqid));
                s.len()
            };
            // Calls: 1 RECLAIM_COMPLETE; 2 SEQUENCE answers DELAY; 3 PUTROOTFH answers
            // GRACE; 4 succeeds with target_highest_slotid 1.
            if n == 2 {
                encode_compound_header(out, Nfsstat4::Delay, b"", 1);
                encode_resop_status(out, Opnum::Sequence, Nfsstat4::Delay);
                return;
            }
            let seq = SequenceOk {
                sessionid: SID,
                sequenceid: seqid,
                slotid: slot,
                highest_slotid: 7,
                target_highest_slotid: if n >= 4 { 1 } else { 7 },
                status_flags: 0,
            };
            if n == 3 {
                encode_compound_header(out, Nfsstat4::Grace, b"", 2);
                encode_resop_status(out, Opnum::Sequence, ok);
                seq.encode(out);
                encode_resop_status(out, Opnum::Putrootfh, Nfsstat4::Grace);
                return;
            }
            encode_compound_header(out, ok, b"", count as usize);
            encode_resop_status(out, Opnum::Sequence, ok);
            seq.encode(out);
            // The ops after SEQUENCE: RECLAIM_COMPLETE, or PUTROOTFH + GETFH.
            if count == 2 {
                encode_resop_status(out, Opnum::ReclaimComplete, ok);
            } else {
                encode_resop_status(out, Opnum::Putrootfh, ok);
                encode_resop_status(out, Opnum::Getfh, ok);
                out.put_opaque(b"rootfh");
            }
        }
        _ => panic!("unexpected op {op}"),
    }
}

fn serve(l: TcpListener, seen: Arc<Mutex<Vec<(u32, u32)>>>) {
    let (mut s, _) = l.accept().unwrap();
    loop {
        let mut h = [0u8; 4];
        if s.read_exact(&mut h).is_err() {
            return;
        }
        let len = (u32::from_be_bytes(h) & 0x7fff_ffff) as usize;
        let mut rec = vec![0; len];
        s.read_exact(&mut rec).unwrap();
        let call = decode_call(&rec).unwrap();
        let mut body = Vec::new();
        encode_reply_success(&mut body, call.xid);
        answer(call.args, &seen, &mut body);
        let mut out = ((body.len() as u32) | 0x8000_0000).to_be_bytes().to_vec();
        out.extend_from_slice(&body);
        s.write_all(&out).unwrap();
    }
}

#[test]
fn delay_and_grace_are_retried_on_the_same_slot_and_the_target_is_honoured() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = {
        let seen = seen.clone();
        std::thread::spawn(move || serve(l, seen))
    };
    let cred = Credential::sys(&AuthSys {
        stamp: 1,
        machine_name: "t".into(),
        uid: 0,
        gid: 0,
        gids: vec![],
    })
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = Session::connect(addr, cred, SessionOptions::default())
            .await
            .unwrap();
        assert_eq!(s.slot_stats().granted, 8);
        let c = Compound::new("root", MINOR_VERSION).putrootfh().getfh();
        let r = s.compound(&c, "/").await.unwrap();
        assert_eq!(r.res().unwrap().results.len(), 3);
        // RECLAIM_COMPLETE on seqid 1; DELAY from SEQUENCE: the same seqid again;
        // GRACE from PUTROOTFH: the next seqid.
        assert_eq!(*seen.lock().unwrap(), [(0, 1), (0, 2), (0, 2), (0, 3)]);
        let st = s.slot_stats();
        assert_eq!((st.target, st.busy), (1, 0));
        // A call dropped before its reply retires its slot (its sequence id on the
        // server is unknown); the next call uses slot 1.
        {
            let mut call = std::pin::pin!(s.compound(&c, "/"));
            // One poll sends the call; the future is then dropped unanswered.
            let first = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(call.as_mut().poll(cx).is_pending())
            })
            .await;
            assert!(first);
        }
        assert_eq!((s.slot_stats().retired, s.slot_stats().busy), (1, 1));
        s.compound(&c, "/").await.unwrap();
        assert_eq!(seen.lock().unwrap().last(), Some(&(1, 1)));
        s.close().await.unwrap();
    });
    drop(rt);
    server.join().unwrap();
}
