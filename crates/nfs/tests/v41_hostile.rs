//! The NFSv4.1 client against scripted servers on loopback that misbehave in ways
//! ganesha never does: a data server that accepts connections and never answers
//! (reached directly, or named by a metadata server's layout), a server that answers
//! NFS4ERR_DELAY to everything, one that refuses DESTROY_CLIENTID. Each ends in bounded
//! time with a one-line error naming the server (and the file, and what was retried).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use std::sync::Arc;

use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, Compound, Fh4, FileDsAddr, FileLayout,
    LayoutIomode, Nfsstat4, Opnum, Stateid, MINOR_VERSION,
};
use dbio_nfs::retry::Backoff;
use dbio_nfs::v41::pnfs::{FileRoute, Layouts};
use dbio_nfs::v41::{Client, Session, SessionOptions};
use dbio_nfs::ClientOptions;

#[path = "common/v41_script.rs"]
mod v41_script;
use v41_script::{
    answer_session_op, cred, deviceinfo_ok, layoutget_ok, netaddr, open_ok, rt, sequence_ok,
    serve_calls, u32_at,
};

/// A data server that accepts every connection and never answers (the connections
/// stay open until the test ends).
fn silent_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        while let Ok((s, _)) = l.accept() {
            held.push(s);
        }
    });
    addr
}

/// Serves one connection: every COMPOUND goes to `answer` (the op after SEQUENCE, or
/// the first op; its arguments; the reply to fill).
fn scripted(answer: impl Fn(u32, u32, &[u8], &mut Vec<u8>) + Send + 'static) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        serve_calls(l, |_, args, body| {
            let at = 4 + (u32_at(args, 0) as usize).div_ceil(4) * 4 + 4;
            let (count, op) = (u32_at(args, at), u32_at(args, at + 4));
            answer(op, count, args, body);
        })
    });
    addr
}

/// The op after SEQUENCE (whose arguments are 32 bytes).
fn second_op(args: &[u8]) -> u32 {
    let at = 4 + (u32_at(args, 0) as usize).div_ceil(4) * 4 + 8;
    u32_at(args, at + 4 + 32)
}

/// RECLAIM_COMPLETE's op number.
const RECLAIM_COMPLETE: u32 = 58;

/// The session's own calls as a server answers them; RECLAIM_COMPLETE succeeds; any
/// other call gets NFS4ERR_DELAY from SEQUENCE.
fn always_busy(op: u32, _count: u32, args: &[u8], out: &mut Vec<u8>) {
    if answer_session_op(op, out) {
        return;
    }
    assert_eq!(op, 53, "unexpected op {op}");
    if second_op(args) == RECLAIM_COMPLETE {
        encode_compound_header(out, Nfsstat4::Ok, b"", 2);
        encode_resop_status(out, Opnum::Sequence, Nfsstat4::Ok);
        sequence_ok(args, out);
        encode_resop_status(out, Opnum::ReclaimComplete, Nfsstat4::Ok);
        return;
    }
    encode_compound_header(out, Nfsstat4::Delay, b"", 1);
    encode_resop_status(out, Opnum::Sequence, Nfsstat4::Delay);
}

/// A server that works (RECLAIM_COMPLETE, PUTROOTFH) and refuses DESTROY_CLIENTID.
fn keeps_the_client(op: u32, count: u32, args: &[u8], out: &mut Vec<u8>) {
    if op == 57 {
        encode_compound_header(out, Nfsstat4::ClientidBusy, b"", 1);
        encode_resop_status(out, Opnum::DestroyClientid, Nfsstat4::ClientidBusy);
        return;
    }
    if answer_session_op(op, out) {
        return;
    }
    assert_eq!(op, 53, "unexpected op {op}");
    encode_compound_header(out, Nfsstat4::Ok, b"", count as usize);
    encode_resop_status(out, Opnum::Sequence, Nfsstat4::Ok);
    sequence_ok(args, out);
    let next = if second_op(args) == RECLAIM_COMPLETE {
        Opnum::ReclaimComplete
    } else {
        Opnum::Putrootfh
    };
    encode_resop_status(out, next, Nfsstat4::Ok);
}

/// Where the op after SEQUENCE and PUTFH starts.
fn third_op(args: &[u8]) -> usize {
    let at = 4 + (u32_at(args, 0) as usize).div_ceil(4) * 4 + 8;
    let putfh = at + 4 + 32;
    putfh + 8 + (u32_at(args, putfh + 4) as usize).div_ceil(4) * 4
}

/// A pNFS metadata server: OPEN by handle, a files layout of one stripe on the one
/// data server of its device, that device (the data server at `ds`: its multipath
/// list).
fn metadata_server(ds: &[SocketAddr], op: u32, count: u32, args: &[u8], out: &mut Vec<u8>) {
    let ok = Nfsstat4::Ok;
    if answer_session_op(op, out) {
        return;
    }
    assert_eq!(op, 53, "unexpected op {op}");
    encode_compound_header(out, ok, b"", count as usize);
    encode_resop_status(out, Opnum::Sequence, ok);
    sequence_ok(args, out);
    let stateid = Stateid {
        seqid: 1,
        other: [9; 12],
    };
    match second_op(args) {
        RECLAIM_COMPLETE => encode_resop_status(out, Opnum::ReclaimComplete, ok),
        // GETDEVICEINFO: one stripe, one data server.
        47 => {
            deviceinfo_ok(
                out,
                FileDsAddr {
                    stripe_indices: vec![0],
                    multipath_ds_list: vec![ds.iter().copied().map(netaddr).collect()],
                },
            );
        }
        22 => {
            encode_resop_status(out, Opnum::Putfh, ok);
            match u32_at(args, third_op(args)) {
                18 => {
                    open_ok(out, stateid);
                }
                50 => {
                    layoutget_ok(
                        out,
                        stateid,
                        FileLayout {
                            deviceid: [5; 16],
                            util: 1 << 20,
                            first_stripe_index: 0,
                            pattern_offset: 0,
                            fh_list: vec![Fh4::new(b"ds-file").unwrap()],
                        },
                    );
                }
                other => panic!("unexpected op {other} after PUTFH"),
            }
        }
        other => panic!("unexpected op {other} after SEQUENCE"),
    }
}

/// A pNFS pool's layouts on the scripted metadata server whose device names `ds`,
/// and the route `fetch` gives the scripted file.
fn fetch_with_device(ds: Vec<SocketAddr>) -> (Layouts, Arc<FileRoute>) {
    let mds = scripted(move |op, count, args, out| metadata_server(&ds, op, count, args, out));
    rt().block_on(async {
        let s = Session::connect(mds, cred(), SessionOptions::default())
            .await
            .unwrap();
        let client = Arc::new(Client::from_session(s, mds.to_string()));
        // The pool's options: patient connections (10 s, 2 retries) for the metadata
        // server; the data server's own are the pool's fail-fast ones.
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
        let route = layouts
            .fetch(fh, "/export/f", open, "first I/O")
            .await
            .unwrap();
        (layouts, route)
    })
}

#[test]
fn a_layout_naming_a_silent_data_server_falls_back_within_seconds() {
    let silent = silent_server();
    let t = Instant::now();
    let (_, route) = fetch_with_device(vec![silent]);
    let took = t.elapsed();
    let why = route
        .through_mds
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(took < Duration::from_secs(5), "took {took:?}: {why}");
    // Through the metadata server, saying which data server failed.
    assert!(why.contains(&silent.to_string()), "{why}");
    assert!(route.place(0, 8192).is_none());
}

#[test]
fn a_device_repeating_two_silent_addresses_falls_back_once_within_one_timeout() {
    // 32 addresses, two distinct, both accepting and never answering: one try of
    // each, together, bounded by the data server's 2 s, and one warning naming each
    // once (tried one by one it took 64 s).
    let (a, b) = (silent_server(), silent_server());
    let device: Vec<SocketAddr> = (0..32).map(|i| if i % 2 == 0 { a } else { b }).collect();
    let t = Instant::now();
    let (layouts, route) = fetch_with_device(device);
    let took = t.elapsed();
    assert!(
        route.place(0, 8192).is_none(),
        "through the metadata server"
    );
    assert!(took < Duration::from_millis(3500), "took {took:?}");
    let warnings = layouts.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let head = format!("pNFS data server {a}, {b} cannot be reached (");
    assert!(warnings[0].starts_with(&head), "{}", warnings[0]);
    assert!(!warnings[0].contains('\n'), "{}", warnings[0]);
}

#[test]
fn a_data_server_that_never_answers_fails_within_its_own_timeout() {
    let silent = silent_server();
    // What the pool asks of a data server's connection: 2 s of silence, one retry,
    // fail fast. The client's own connection options are far more patient (10 s, 2
    // retries): they must not replace the data server's.
    let mut opts = SessionOptions::default();
    opts.conn.fail_fast = true;
    opts.conn.timeout = Duration::from_secs(2);
    opts.conn.connect_timeout = Duration::from_secs(2);
    opts.conn.retries = 1;
    let client = ClientOptions::default();
    assert!(client.conn.timeout > opts.conn.timeout);
    let t = Instant::now();
    let e = rt()
        .block_on(Client::connect_data_server(
            &[netaddr(silent)],
            &client,
            opts,
        ))
        .err()
        .expect("a session with a server that never answers");
    let took = t.elapsed();
    let msg = e.to_string();
    assert!(took < Duration::from_secs(5), "took {took:?}: {msg}");
    assert!(msg.contains(&silent.to_string()), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn delay_until_the_retries_run_out_names_server_path_and_retries() {
    let addr = scripted(always_busy);
    let opts = SessionOptions {
        backoff: Backoff {
            first: Duration::from_millis(5),
            max: Duration::from_millis(20),
            retries: 3,
            ..Backoff::default()
        },
        ..SessionOptions::default()
    };
    let e = rt().block_on(async {
        let s = Session::connect(addr, cred(), opts).await.unwrap();
        let c = Compound::new("root", MINOR_VERSION).putrootfh();
        s.compound(&c, "/export/f")
            .await
            .err()
            .expect("always busy")
    });
    let msg = e.to_string();
    let head =
        format!("SEQUENCE {addr}:/export/f: NFS4ERR_DELAY (server busy; retried 3 times over ");
    assert!(msg.starts_with(&head), "{msg}");
    assert!(msg.ends_with(" s)"), "{msg}");
    // Still the status the server gave, for callers that ask.
    assert!(matches!(
        e,
        dbio_nfs::NfsError::Retried { ref last, .. }
            if matches!(**last, dbio_nfs::NfsError::Status4 { status: Nfsstat4::Delay, .. })
    ));
}

#[test]
fn a_refused_destroy_clientid_is_returned_after_the_work_and_names_the_server() {
    let addr = scripted(keeps_the_client);
    rt().block_on(async {
        let s = Session::connect(addr, cred(), SessionOptions::default())
            .await
            .unwrap();
        let c = Compound::new("root", MINOR_VERSION).putrootfh();
        s.compound(&c, "/export").await.unwrap();
        // The work is done; the refusal comes back for the caller to warn about.
        let e = s.close().await.expect_err("DESTROY_CLIENTID refused");
        assert_eq!(
            e.to_string(),
            format!("DESTROY_CLIENTID {addr}: NFS4ERR_CLIENTID_BUSY")
        );
    });
}
