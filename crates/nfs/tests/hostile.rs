//! A server that misbehaves on purpose, one case per behaviour. Each case drives the
//! client through its public API (an RPC connection, or a mounted NFSv3 client) and
//! asserts the exact outcome: the typed error (or the retry that recovers), within the
//! client's deadline, with live memory bounded, under a hard time limit.

#[path = "hostile/server.rs"]
mod server;
#[path = "hostile/v3_file.rs"]
mod v3_file;

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use dbio_nfs::proto::nfs3::{self, Nfsstat3, ReadArgs};
use dbio_nfs::NfsError;
use dbio_rpc::conn::{CallBuf, ConnStats, Connection, ReplyTo, TransportError};
use dbio_rpc::{encode_call, AuthStat, Credential, ReplyError, RpcError};
use dbio_xdr::{BufMut, XdrDecode, XdrPut};
use server::*;
use v3_file::*;

/// Hard limit of one case: several deadlines, far below the test harness's patience.
const HARD: Duration = Duration::from_secs(10);
/// Live memory a case may add: the receive buffer of one maximal record, the
/// reserve step, and the small change of a runtime and a few threads.
const MEM: usize = 2 * MAX_RECORD + (1 << 20);

/// A NULL call of program 100003 (the connection fills in the XID).
fn null_call() -> CallBuf {
    let mut head = BytesMut::new();
    encode_call(&mut head, 0, nfs3::PROGRAM, 3, 0, &Credential::none());
    CallBuf::new(head)
}

async fn connect(server: &Server) -> Connection {
    Connection::connect(server.addr, conn_config())
        .await
        .expect("connect to the test server")
}

fn count(c: &std::sync::atomic::AtomicU64) -> u64 {
    ConnStats::get(c)
}

/// The call failed with a timeout (connected) or a lost connection (reconnecting)
/// within the deadline, after at least one retransmission.
fn assert_deadline_error(err: &TransportError, elapsed: Duration) {
    match err {
        TransportError::Timeout { tries, .. } => assert!(*tries >= 2, "{err}"),
        TransportError::Lost { .. } => {}
        other => panic!("expected Timeout or Lost, got {other}"),
    }
    assert!(elapsed >= conn_config().deadline(), "{elapsed:?}");
    assert!(elapsed <= deadline_bound(), "{elapsed:?}");
}

// ---- record marking ----

#[test]
fn truncated_record_reconnects_and_resends() {
    // First connection: half a reply, then close. Second: a proper reply.
    let server = Server::start(|mut peer| {
        while let Some(call) = peer.read_call() {
            let body = success(call.xid, &[0xaa; 8]);
            if peer.index == 0 {
                let mut raw = ((body.len() as u32) | 0x8000_0000).to_be_bytes().to_vec();
                raw.extend_from_slice(&body[..10]);
                peer.send_raw(&raw);
                return;
            }
            peer.reply(call.xid, &[0xaa; 8]);
        }
    });
    let accepted = run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let (res, elapsed) = timed(conn.call(null_call())).await;
        let reply = res.expect("the resent call is answered");
        assert!(reply.record.ends_with(&[0xaa; 8]));
        assert_eq!(count(&conn.stats().reconnects), 1);
        assert!(elapsed < TIMEOUT, "{elapsed:?}");
        server.accepted()
    });
    assert_eq!(accepted, 2);
}

#[test]
fn truncated_record_every_time_fails_by_the_deadline() {
    let server = Server::start(|mut peer| {
        if let Some(call) = peer.read_call() {
            let body = success(call.xid, &[0; 8]);
            let mut raw = ((body.len() as u32) | 0x8000_0000).to_be_bytes().to_vec();
            raw.extend_from_slice(&body[..6]);
            peer.send_raw(&raw);
        }
    });
    run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let (res, elapsed) = timed(conn.call(null_call())).await;
        assert_deadline_error(&res.unwrap_err(), elapsed);
        assert!(count(&conn.stats().reconnects) >= 1);
    });
}

#[test]
fn record_length_beyond_its_data_times_out() {
    // The mark promises 1000 bytes, 28 arrive, then silence with the connection open.
    let server = Server::start(|mut peer| {
        let mut first = true;
        while let Some(call) = peer.read_call() {
            if first {
                let mut raw = (1000u32 | 0x8000_0000).to_be_bytes().to_vec();
                raw.extend_from_slice(&success(call.xid, &[0; 4]));
                peer.send_raw(&raw);
                first = false;
            }
        }
    });
    run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let (res, elapsed) = timed(conn.call(null_call())).await;
        let err = res.unwrap_err();
        assert!(matches!(err, TransportError::Timeout { .. }), "{err}");
        assert_deadline_error(&err, elapsed);
        assert_eq!(count(&conn.stats().replies), 0);
    });
}

/// A server whose first connection announces a record of `mark` bytes (beyond the
/// client's maximum) and sends 64 KiB of it; later connections answer properly.
fn oversized_once(mark: u32) -> Server {
    Server::start(move |mut peer| {
        while let Some(call) = peer.read_call() {
            if peer.index == 0 {
                let mut raw = (mark | 0x8000_0000).to_be_bytes().to_vec();
                raw.extend_from_slice(&success(call.xid, &[]));
                raw.resize(64 * 1024, 0xee);
                peer.send_raw(&raw);
                // Keep the connection open: the client must drop it itself.
                std::thread::sleep(Duration::from_secs(3));
                return;
            }
            peer.reply(call.xid, &[0xbb; 4]);
        }
    })
}

#[test]
fn record_larger_than_the_client_maximum_fails_the_calls_without_allocating_it() {
    for mark in [MAX_RECORD as u32 + 1, 0x7fff_ffff] {
        let server = oversized_once(mark);
        run_case(HARD, MEM, move || async move {
            let conn = connect(&server).await;
            // The stream is out of step: resending would meet the same reply, so the
            // pending call fails at once with a protocol error.
            let (res, elapsed) = timed(conn.call(null_call())).await;
            let err = res.unwrap_err();
            match &err {
                TransportError::Protocol { reason, .. } => {
                    assert!(reason.contains("exceeds the limit"), "{err}")
                }
                other => panic!("expected Protocol, got {other}"),
            }
            assert!(elapsed < TIMEOUT, "{elapsed:?}");
            // The next call goes out on a new connection and is answered.
            let reply = conn
                .call(null_call())
                .await
                .expect("answered after reconnecting");
            assert!(reply.record.ends_with(&[0xbb; 4]));
            assert_eq!(count(&conn.stats().reconnects), 1);
        });
    }
}

#[test]
fn record_just_under_the_maximum_is_buffered_within_the_bound() {
    // Announces MAX_RECORD bytes but stops after the header: the receive buffer may grow
    // to the announced size (the configured bound), not beyond.
    let server = Server::start(|mut peer| {
        while let Some(call) = peer.read_call() {
            let mut raw = (MAX_RECORD as u32 | 0x8000_0000).to_be_bytes().to_vec();
            raw.extend_from_slice(&call.xid.to_be_bytes());
            peer.send_raw(&raw);
        }
    });
    run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let (res, elapsed) = timed(conn.call(null_call())).await;
        let err = res.unwrap_err();
        assert!(matches!(err, TransportError::Timeout { .. }), "{err}");
        assert_deadline_error(&err, elapsed);
    });
}

// ---- XIDs ----

#[test]
fn wrong_xids_are_ignored_and_the_call_times_out() {
    let server = Server::start(|mut peer| {
        while let Some(call) = peer.read_call() {
            peer.reply(call.xid ^ 0x8000_0000, &[0; 4]);
        }
    });
    run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let (res, elapsed) = timed(conn.call(null_call())).await;
        let err = res.unwrap_err();
        let TransportError::Timeout { tries, .. } = err else {
            panic!("expected Timeout, got {err}");
        };
        assert_deadline_error(&err, elapsed);
        // Each transmission drew one wrong answer, and none reached the caller.
        assert_eq!(count(&conn.stats().unmatched), u64::from(tries));
        assert_eq!(count(&conn.stats().replies), 0);
    });
}

#[test]
fn duplicate_replies_are_dropped() {
    let server = Server::start(|mut peer| {
        let mut n = 0u8;
        while let Some(call) = peer.read_call() {
            n += 1;
            peer.reply(call.xid, &[n; 4]);
            peer.reply(call.xid, &[n; 4]);
        }
    });
    run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let first = conn.call(null_call()).await.expect("first reply");
        let second = conn.call(null_call()).await.expect("second reply");
        assert!(first.record.ends_with(&[1; 4]));
        // The duplicate of the first reply did not answer the second call.
        assert!(second.record.ends_with(&[2; 4]));
        assert_eq!(count(&conn.stats().replies), 2);
        assert!(count(&conn.stats().unmatched) >= 1);
    });
}

#[test]
fn replies_to_calls_never_made_are_dropped() {
    let server = Server::start(|mut peer| {
        while let Some(call) = peer.read_call() {
            for xid in [0, 1, call.xid.wrapping_add(1), call.xid.wrapping_sub(1)] {
                peer.reply(xid, &[0xdd; 4]);
            }
            // Too short to hold an XID at all.
            peer.send_record(&[1, 2]);
            peer.reply(call.xid, &[0xcc; 4]);
        }
    });
    run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let reply = conn.call(null_call()).await.expect("the real reply");
        assert!(reply.record.ends_with(&[0xcc; 4]));
        assert_eq!(count(&conn.stats().unmatched), 5);
        assert_eq!(count(&conn.stats().retransmits), 0);
    });
}

// ---- silence and slowness ----

#[test]
fn reply_after_the_deadline_is_a_timeout() {
    let server = Server::start(|mut peer| {
        while let Some(call) = peer.read_call() {
            if call.proc_ == 0 && peer.index == 0 {
                let mut peer2 = Peer {
                    stream: peer.stream.try_clone().expect("clone"),
                    index: 0,
                };
                std::thread::spawn(move || {
                    std::thread::sleep(conn_config().deadline() + TIMEOUT);
                    peer2.reply(call.xid, &[0; 4]);
                });
            }
        }
    });
    run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let (res, elapsed) = timed(conn.call(null_call())).await;
        assert_deadline_error(&res.unwrap_err(), elapsed);
    });
}

#[test]
fn server_that_never_replies_times_out() {
    let server = Server::start(|mut peer| while peer.read_call().is_some() {});
    run_case(HARD, MEM, move || async move {
        let conn = connect(&server).await;
        let (res, elapsed) = timed(conn.call(null_call())).await;
        let err = res.unwrap_err();
        assert!(matches!(err, TransportError::Timeout { .. }), "{err}");
        assert_deadline_error(&err, elapsed);
        // Silence makes the client try a new connection before giving up.
        assert!(count(&conn.stats().reconnects) >= 1);
    });
}

#[test]
fn server_that_never_reads_blocks_writes_then_fails() {
    // Accepts, never reads: 16 MiB of WRITE-sized calls fill the socket buffers.
    let server = Server::start(|peer| {
        std::thread::sleep(Duration::from_secs(5));
        drop(peer);
    });
    const CALLS: usize = 64;
    const PAYLOAD: usize = 256 * 1024;
    run_case(HARD, MEM + 2 * PAYLOAD, move || async move {
        let conn = connect(&server).await;
        // One payload shared by every call: the connection sends it without copying.
        let payload = Bytes::from(vec![0x5a; PAYLOAD]);
        let t0 = std::time::Instant::now();
        // Submitted all at once (as a pipeline does), then awaited.
        let mut waiting = Vec::new();
        for _ in 0..CALLS {
            let mut call = null_call();
            call.payload = payload.clone();
            let (tx, rx) = tokio::sync::oneshot::channel();
            conn.submit(call, ReplyTo::Once(tx));
            waiting.push(rx);
        }
        let mut results = Vec::new();
        for rx in waiting {
            results.push(rx.await.expect("every call ends"));
        }
        let elapsed = t0.elapsed();
        for r in &results {
            let err = r.as_ref().unwrap_err();
            assert!(
                matches!(
                    err,
                    TransportError::Timeout { .. } | TransportError::Lost { .. }
                ),
                "{err}"
            );
        }
        assert!(elapsed <= deadline_bound(), "{elapsed:?}");
        // The writes blocked: far less than everything reached the socket.
        let sent = count(&conn.stats().bytes_sent);
        assert!(sent < (CALLS * PAYLOAD) as u64, "{sent} bytes sent");
    });
}

// ---- refusals, through the NFS client ----

/// A server that mounts as usual and answers every GETATTR with `answer`.
fn getattr_server(answer: impl Fn(&CallMsg, &mut Peer) + Send + Sync + 'static) -> Server {
    nfs_server(move |call, peer| {
        if call.prog == nfs3::PROGRAM && call.proc_ == 1 {
            answer(call, peer);
            return Step::Done;
        }
        Step::Default
    })
}

/// Mounts, then GETATTR on the root is refused with `reason`.
fn refused_getattr(reason: ReplyError) {
    let server = getattr_server(move |call, peer| {
        peer.refuse(call.xid, reason);
    });
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let (res, elapsed) = timed(client.getattr(client.root(), "")).await;
        match res.unwrap_err() {
            NfsError::Rpc {
                what,
                path,
                source: RpcError::Refused { reason: got, .. },
            } => {
                assert_eq!(got, reason);
                assert_eq!((what.as_str(), path.as_str()), ("GETATTR", "/export"));
            }
            other => panic!("expected a refusal, got {other}"),
        }
        // A refusal is final: no retransmission, no waiting.
        assert!(elapsed < TIMEOUT, "{elapsed:?}");
    });
}

#[test]
fn denied_rpc_mismatch() {
    refused_getattr(ReplyError::RpcMismatch { low: 3, high: 4 });
}

#[test]
fn denied_auth_error() {
    refused_getattr(ReplyError::Auth(AuthStat::TooWeak));
}

#[test]
fn denied_auth_error_unknown_stat() {
    refused_getattr(ReplyError::Auth(AuthStat::Other(0xdead)));
}

#[test]
fn garbage_args() {
    refused_getattr(ReplyError::GarbageArgs);
}

#[test]
fn proc_unavail() {
    refused_getattr(ReplyError::ProcUnavail);
}

#[test]
fn prog_mismatch() {
    refused_getattr(ReplyError::ProgMismatch { low: 4, high: 4 });
}

#[test]
fn prog_unavail() {
    refused_getattr(ReplyError::ProgUnavail);
}

#[test]
fn system_err() {
    refused_getattr(ReplyError::SystemErr);
}

#[test]
fn malformed_reply_header_is_an_rpc_error() {
    // reply_stat 7 does not exist.
    getattr_reply_is_an_rpc_error(getattr_server(|call, peer| {
        let mut body = Vec::new();
        body.put_u32(call.xid);
        body.put_u32(1);
        body.put_u32(7);
        peer.send_record(&body);
    }));
}

#[test]
fn call_echoed_back_in_place_of_a_reply_is_an_rpc_error() {
    // The server sends the client's own GETATTR call back: right XID, msg_type CALL.
    getattr_reply_is_an_rpc_error(getattr_server(|call, peer| {
        let mut body = BytesMut::new();
        encode_call(&mut body, call.xid, call.prog, 3, 1, &Credential::none());
        body.extend_from_slice(&call.args);
        peer.send_record(&body);
    }));
}

/// Mounts, then GETATTR on the root fails: its reply cannot be decoded.
fn getattr_reply_is_an_rpc_error(server: Server) {
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let err = client.getattr(client.root(), "").await.unwrap_err();
        assert!(
            matches!(
                err,
                NfsError::Rpc {
                    source: RpcError::Xdr(_),
                    ..
                }
            ),
            "{err}"
        );
    });
}

// ---- results the client must not believe ----

#[test]
fn unknown_nfsstat3_is_a_typed_status() {
    let server = getattr_server(|call, peer| {
        peer.reply(call.xid, &99_999u32.to_be_bytes());
    });
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let err = client.getattr(client.root(), "").await.unwrap_err();
        assert_eq!(err.status(), Some(Nfsstat3::Other(99_999)), "{err}");
        assert!(err.to_string().contains("GETATTR /export"), "{err}");
    });
}

/// Results holding a file handle of 65 bytes (one more than NFS3_FHSIZE).
fn handle_65(status_first: bool) -> Vec<u8> {
    let mut r = Vec::new();
    if status_first {
        r.put_u32(0);
    }
    r.put_opaque(&[7u8; 65]);
    r.put_xdr_bool(false);
    r.put_xdr_bool(false);
    r
}

#[test]
fn lookup_reply_with_a_65_byte_handle_is_refused() {
    let server = nfs_server(|call, peer| {
        if call.prog == nfs3::PROGRAM && call.proc_ == 3 {
            peer.reply(call.xid, &handle_65(true));
            return Step::Done;
        }
        Step::Default
    });
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let err = client.lookup(client.root(), "f", "f").await.unwrap_err();
        match &err {
            NfsError::BadReply { what, path, .. } => {
                assert_eq!((what.as_str(), path.as_str()), ("LOOKUP", "/export/f"))
            }
            other => panic!("expected BadReply, got {other}"),
        }
    });
}

#[test]
fn mnt_reply_with_a_65_byte_handle_fails_the_mount() {
    let server = nfs_server(|call, peer| {
        if call.prog == dbio_nfs::proto::mount3::PROGRAM && call.proc_ == 1 {
            let mut r = handle_65(true);
            r.truncate(4 + 4 + 68);
            r.put_u32(1);
            r.put_u32(1);
            peer.reply(call.xid, &r);
            return Step::Done;
        }
        Step::Default
    });
    run_case(HARD, MEM, move || async move {
        let err = mount(&server).await.err().expect("mount must fail");
        match &err {
            NfsError::BadReply { what, path, .. } => {
                assert_eq!((what.as_str(), path.as_str()), ("MNT", "/export"))
            }
            other => panic!("expected BadReply, got {other}"),
        }
    });
}

/// A server whose READ answers with `make(requested count)` as results.
fn read_server(make: impl Fn(u32) -> Vec<u8> + Send + Sync + 'static) -> Server {
    nfs_server(move |call, peer| {
        if call.prog == nfs3::PROGRAM && call.proc_ == 6 {
            let Ok(args) = ReadArgs::from_xdr(&call.args) else {
                return Step::Close;
            };
            peer.reply(call.xid, &make(args.count));
            return Step::Done;
        }
        Step::Default
    })
}

fn expect_bad_read(err: NfsError, why: &str) {
    match &err {
        NfsError::BadReply { what, reason, .. } => {
            assert_eq!(what, "READ");
            assert!(reason.contains(why), "{err}");
        }
        other => panic!("expected BadReply, got {other}"),
    }
}

#[test]
fn read_returning_more_than_asked_is_refused() {
    let server = read_server(|count| {
        let data = vec![1u8; count as usize + 100];
        read_res(data.len() as u32, false, &data)
    });
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let err = client.read(client.root(), 0, 512, "f").await.unwrap_err();
        assert!(
            matches!(err, NfsError::LongRead { long, .. } if long.asked == 512 && long.got == 612),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "READ /export/f from 127.0.0.1: the READ reply carries 612 bytes, 512 were asked"
        );
    });
}

#[test]
fn whole_file_read_hands_on_no_more_than_the_size_whatever_the_replies() {
    // Every READ brings all it was asked for, past the file's size, and never says EOF
    // (a READ longer than asked is an error, `a_long_read_is_the_same_error_in_both_
    // versions`): the copy hands on exactly the file's size, and ends.
    const SIZE: u64 = 150_000;
    let server = file_server(SIZE, |_, count| {
        let data = vec![1u8; count as usize];
        read_res(data.len() as u32, false, &data)
    });
    let got = run_case(HARD, MEM, move || {
        let got = pool_download(&server);
        async move { got }
    });
    assert_eq!(got.len() as u64, SIZE);
    assert!(got.iter().all(|b| *b == 1));
}

#[test]
fn read_count_larger_than_its_data_is_refused() {
    let server = read_server(|count| read_res(count, false, &[1u8; 16]));
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let err = client.read(client.root(), 0, 512, "f").await.unwrap_err();
        expect_bad_read(err, "count differs from data length");
    });
}

#[test]
fn read_data_length_beyond_the_record_is_refused() {
    // The opaque length says 4 GiB - 16 while 16 bytes follow.
    let server = read_server(|_| {
        let mut r = read_res(16, false, &[]);
        r.truncate(r.len() - 4);
        r.put_u32(0xffff_fff0);
        r.extend_from_slice(&[1u8; 16]);
        r
    });
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let err = client.read(client.root(), 0, 512, "f").await.unwrap_err();
        assert!(matches!(err, NfsError::BadReply { .. }), "{err}");
    });
}

#[test]
fn file_size_of_u64_max_allocates_nothing_for_it() {
    // GETATTR claims a file of 2^64 - 1 bytes; READ gives 100 bytes at offset 0 and
    // nothing after, and never says EOF.
    let reads = Arc::new(AtomicU32::new(0));
    let r = reads.clone();
    let server = file_server(u64::MAX, move |offset, _| {
        r.fetch_add(1, SeqCst);
        let data = if offset == 0 { &[3u8; 100][..] } else { &[] };
        read_res(data.len() as u32, false, data)
    });
    let got = run_case(HARD, MEM, move || {
        let got = pool_download(&server);
        async move { got }
    });
    assert_eq!(got, [3u8; 100]);
    // Only the pipeline's first window and the READ that found the end went out, not
    // 2^64 / rtmax calls.
    assert!(reads.load(SeqCst) <= 8, "{} READs", reads.load(SeqCst));
}

#[test]
fn nfs_call_without_a_reply_is_a_transport_timeout() {
    let server = getattr_server(|_, _| {});
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let (res, elapsed) = timed(client.getattr(client.root(), "d")).await;
        match res.unwrap_err() {
            NfsError::Transport { what, path, source } => {
                assert_eq!((what.as_str(), path.as_str()), ("GETATTR", "/export/d"));
                assert_deadline_error(&source, elapsed);
            }
            other => panic!("expected a transport error, got {other}"),
        }
    });
}

#[test]
fn readdirplus_whose_cookie_never_advances_is_refused() {
    // Every reply gives the same entry, the same cookie, and "not at the end yet".
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let server = nfs_server(move |call, peer| {
        if call.prog == nfs3::PROGRAM && call.proc_ == 17 {
            c.fetch_add(1, SeqCst);
            let mut r = Vec::new();
            r.put_u32(0);
            r.put_xdr_bool(false);
            r.put_slice(&[0; 8]);
            r.put_xdr_bool(true);
            r.put_u64(5);
            r.put_opaque(b"again");
            r.put_u64(1);
            r.put_xdr_bool(false);
            r.put_xdr_bool(false);
            r.put_xdr_bool(false);
            r.put_xdr_bool(false);
            peer.reply(call.xid, &r);
            return Step::Done;
        }
        Step::Default
    });
    run_case(HARD, MEM, move || async move {
        let client = mount(&server).await.expect("mount");
        let root = dbio_nfs::fs::Handle::new(client.root().as_bytes()).unwrap();
        let fs = dbio_nfs::Fs::v3(Arc::new(client));
        let (res, elapsed) = timed(fs.readdir(&root, "d")).await;
        match res.unwrap_err() {
            NfsError::BadReply { what, reason, .. } => {
                assert_eq!(what, "READDIR");
                assert!(reason.contains("no progress"), "{reason}");
            }
            other => panic!("expected BadReply, got {other}"),
        }
        assert!(elapsed < TIMEOUT, "{elapsed:?}");
    });
    // The second reply repeats the first one's cookie: two calls, not millions.
    assert_eq!(calls.load(SeqCst), 2);
}
