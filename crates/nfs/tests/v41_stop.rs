//! The process's stop ends the NFSv4.1 client's own waits, not only the transport's:
//! a call waiting for a session slot that calls never give back, and a layout
//! recall's drain waiting for a data path that never looks at its routes again. Both
//! end within 2 s of the stop (scripted servers on loopback).
//!
//! The stop flag is the process's, so the tests run one at a time and clear it after.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::BufMut;
use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, Compound, Fh4, FileDsAddr, FileLayout,
    LayoutIomode, Nfsstat4, Opnum, Stateid, MINOR_VERSION,
};
use dbio_nfs::v41::pnfs::{Layouts, Recall};
use dbio_nfs::v41::{Client, Session, SessionOptions};
use dbio_nfs::ClientOptions;
use dbio_rpc::conn::TransportError;

#[path = "common/v41_script.rs"]
mod v41_script;
use v41_script::{
    answer_session_op, cred, deviceinfo_ok, layoutget_ok, netaddr, open_ok, ops_at, rt, second_op,
    sequence_ok, serve_calls, third_op, u32_at,
};

static STOP: AtomicBool = AtomicBool::new(false);
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How soon after the stop every wait must have ended.
const BOUND: Duration = Duration::from_secs(2);

/// A pNFS metadata server: the session's ops, RECLAIM_COMPLETE, OPEN, a files layout
/// whose device names `ds`, LAYOUTRETURN; anything else NFS4ERR_NOTSUPP.
fn metadata_server(ds: SocketAddr) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        serve_calls(l, |_, args, out| {
            let op = u32_at(args, ops_at(args) + 4);
            if answer_session_op(op, out) {
                return;
            }
            let ok = Nfsstat4::Ok;
            let second = second_op(args);
            let third = if second == 22 {
                u32_at(args, third_op(args))
            } else {
                0
            };
            let count = match (second, third) {
                (58 | 47, _) => 2,
                (22, 18 | 50 | 51) => 3,
                _ => {
                    let no = Nfsstat4::Notsupp;
                    encode_compound_header(out, no, b"", 2);
                    encode_resop_status(out, Opnum::Sequence, ok);
                    sequence_ok(args, out);
                    encode_resop_status(out, Opnum::from_u32(second).unwrap(), no);
                    return;
                }
            };
            encode_compound_header(out, ok, b"", count);
            encode_resop_status(out, Opnum::Sequence, ok);
            sequence_ok(args, out);
            let stateid = Stateid {
                seqid: 1,
                other: [9; 12],
            };
            match (second, third) {
                (58, _) => encode_resop_status(out, Opnum::ReclaimComplete, ok),
                (47, _) => deviceinfo_ok(
                    out,
                    FileDsAddr {
                        stripe_indices: vec![0],
                        multipath_ds_list: vec![vec![netaddr(ds)]],
                    },
                ),
                (_, 18) => {
                    encode_resop_status(out, Opnum::Putfh, ok);
                    open_ok(out, stateid);
                }
                (_, 50) => {
                    encode_resop_status(out, Opnum::Putfh, ok);
                    let layout = FileLayout {
                        deviceid: [5; 16],
                        util: 1 << 20,
                        first_stripe_index: 0,
                        pattern_offset: 0,
                        fh_list: vec![Fh4::new(b"ds-file").unwrap()],
                    };
                    layoutget_ok(out, stateid, layout);
                }
                _ => {
                    encode_resop_status(out, Opnum::Putfh, ok);
                    encode_resop_status(out, Opnum::Layoutreturn, ok);
                    out.put_u32(0); // no stateid
                }
            }
        })
    });
    addr
}

/// An address where nothing listens.
fn refused() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

#[test]
fn a_call_waiting_for_a_session_slot_ends_soon_after_the_stop() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    dbio_rpc::stop::end_waits_on(&STOP);
    let mds = metadata_server(refused());
    let (took, e) = rt().block_on(async {
        let s = Session::connect(mds, cred(), SessionOptions::default())
            .await
            .unwrap();
        // Every slot held, as by calls a server never answers; the wait is 30 s.
        let _held = s.lease(u32::MAX).unwrap();
        assert_eq!(s.free_slots(), 0);
        STOP.store(true, Relaxed);
        let t = Instant::now();
        let c = Compound::new("root", MINOR_VERSION).putrootfh();
        let e = s.compound(&c, "/export/f").await.err();
        (t.elapsed(), e)
    });
    STOP.store(false, Relaxed);
    let e = e.expect("no slot was ever free");
    assert!(took < BOUND, "took {took:?}: {e}");
    assert!(
        matches!(
            e,
            dbio_nfs::NfsError::Transport {
                source: TransportError::Stopped { .. },
                ..
            }
        ),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("SEQUENCE {mds}:/export/f: stopped after ")),
        "{msg}"
    );
    assert!(
        msg.ends_with("waiting for a free NFSv4.1 session slot"),
        "{msg}"
    );
}

#[test]
fn a_recall_drain_ends_soon_after_the_stop() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    dbio_rpc::stop::end_waits_on(&STOP);
    let mds = metadata_server(refused());
    let (took, recalled) = rt().block_on(async {
        let s = Session::connect(mds, cred(), SessionOptions::default())
            .await
            .unwrap();
        let client = Arc::new(Client::from_session(s, mds.to_string()));
        let layouts = Layouts::new(
            client.clone(),
            ClientOptions::default(),
            SessionOptions::default(),
            None,
            None,
        );
        let fh = Fh4::new(b"file").unwrap();
        let open = client
            .layout_open(fh, LayoutIomode::Rw, "/export/f")
            .await
            .unwrap();
        // Held as a data path that never looks at its routes again holds it.
        let _held = layouts
            .fetch(fh, "/export/f", open, "first I/O")
            .await
            .unwrap();
        STOP.store(true, Relaxed);
        let t = Instant::now();
        let recalled = layouts
            .recall(Recall::File(fh), Duration::from_secs(20))
            .await;
        (t.elapsed(), recalled)
    });
    STOP.store(false, Relaxed);
    assert!(took < BOUND, "took {took:?}");
    // The recall still went through: the file is to be fetched again.
    assert_eq!(recalled.len(), 1);
}
