//! Transport tests against small scripted servers on loopback.

use super::*;
use bytes::{Bytes, BytesMut};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

pub(super) fn read_record(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let mut mark = [0u8; 4];
        s.read_exact(&mut mark)?;
        let mark = u32::from_be_bytes(mark);
        let mut frag = vec![0u8; (mark & 0x7fff_ffff) as usize];
        s.read_exact(&mut frag)?;
        out.extend_from_slice(&frag);
        if mark & 0x8000_0000 != 0 {
            return Ok(out);
        }
    }
}

pub(super) fn record(body: &[u8]) -> Vec<u8> {
    let mut v = ((body.len() as u32) | 0x8000_0000).to_be_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

pub(super) fn call_with(body: &[u8]) -> CallBuf {
    let mut head = BytesMut::from(&[0u8; 4][..]);
    head.extend_from_slice(body);
    CallBuf::new(head)
}

pub(super) fn quick() -> ConnConfig {
    ConnConfig {
        timeout: Duration::from_millis(150),
        retries: 3,
        connect_timeout: Duration::from_secs(2),
        ..ConnConfig::default()
    }
}

/// Waits until `n` calls on `q` have completed; each wait may take 5 s at most.
pub(super) fn completed(q: &CompletionQueue, n: usize) -> Vec<(u64, CallResult)> {
    let mut done = Vec::new();
    while done.len() < n {
        assert!(q.wait(1, Duration::from_secs(5), &mut done) > 0, "stalled");
    }
    done
}

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// 2000 calls submitted at once from a plain thread; the server answers
/// them in reverse order, 1024 at a time, so 1024 are in flight at once.
#[test]
fn many_in_flight_replies_in_any_order() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut seen = 0;
        while seen < 2000 {
            let batch: Vec<Vec<u8>> = (0..1024.min(2000 - seen))
                .map(|_| read_record(&mut s).unwrap())
                .collect();
            seen += batch.len();
            let mut out = Vec::new();
            for rec in batch.iter().rev() {
                out.extend_from_slice(&record(rec)); // echo: xid + body
            }
            s.write_all(&out).unwrap();
        }
    });
    let rt = runtime();
    let conn = rt.block_on(Connection::connect(addr, quick())).unwrap();
    let queue = Arc::new(CompletionQueue::new());
    for tag in 0..2000u64 {
        let sink: Arc<dyn Completions> = queue.clone();
        conn.submit(call_with(&tag.to_be_bytes()), ReplyTo::Sink(sink, tag));
    }
    let mut done = Vec::new();
    while done.len() < 2000 {
        assert!(
            queue.wait(1, Duration::from_secs(5), &mut done) > 0,
            "stalled at {}",
            done.len()
        );
    }
    for (tag, result) in &done {
        let reply = result.as_ref().unwrap();
        assert_eq!(&reply.record[4..], &tag.to_be_bytes());
        assert_eq!(&reply.record[..4], &reply.xid.to_be_bytes());
    }
    let mut tags: Vec<u64> = done.iter().map(|(t, _)| *t).collect();
    tags.sort_unstable();
    assert_eq!(tags, (0..2000).collect::<Vec<_>>());
    // Vectored, batched writes: far fewer system calls than calls.
    assert!(ConnStats::get(&conn.stats().writes) < 500);
    server.join().unwrap();
}

/// Batches for two completion queues, sent in one channel message each:
/// every reply reaches its own queue once, with its own tag, even when
/// one socket read carries replies for both.
#[test]
fn batches_reach_their_own_queues() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let recs: Vec<Vec<u8>> = (0..200).map(|_| read_record(&mut s).unwrap()).collect();
        let out: Vec<u8> = recs.iter().flat_map(|r| record(r)).collect();
        s.write_all(&out).unwrap();
    });
    let rt = runtime();
    let conn = rt.block_on(Connection::connect(addr, quick())).unwrap();
    let queues = [
        Arc::new(CompletionQueue::new()),
        Arc::new(CompletionQueue::new()),
    ];
    for round in 0..4u64 {
        let mut batch = CallBatch::with_capacity(4);
        for i in 0..50u64 {
            let tag = round * 50 + i;
            let sink: Arc<dyn Completions> = queues[(tag % 2) as usize].clone();
            batch.push(call_with(&tag.to_be_bytes()), ReplyTo::Sink(sink, tag));
        }
        conn.submit_batch(&mut batch);
        assert!(batch.is_empty());
    }
    for (k, q) in queues.iter().enumerate() {
        let mut done = Vec::new();
        while done.len() < 100 {
            assert!(
                q.wait(1, Duration::from_secs(5), &mut done) > 0,
                "queue {k} stalled"
            );
        }
        let mut tags: Vec<u64> = done.iter().map(|(t, _)| *t).collect();
        for (tag, result) in &done {
            assert_eq!(&result.as_ref().unwrap().record[4..], &tag.to_be_bytes());
        }
        tags.sort_unstable();
        let want: Vec<u64> = (0..200).filter(|t| t % 2 == k as u64).collect();
        assert_eq!(tags, want);
        assert_eq!(q.len(), 0);
    }
    assert_eq!(ConnStats::get(&conn.stats().calls), 200);
    server.join().unwrap();
}

/// A WRITE-like payload goes out after the head, padded to four bytes.
#[test]
fn payload_is_sent_after_head_with_padding() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let rec = read_record(&mut s).unwrap();
        s.write_all(&record(&rec[..4])).unwrap();
        rec
    });
    let rt = runtime();
    let conn = rt.block_on(Connection::connect(addr, quick())).unwrap();
    let mut call = call_with(b"hd");
    call.payload = Bytes::from_static(b"hello");
    let reply = rt.block_on(conn.call(call)).unwrap();
    let rec = server.join().unwrap();
    assert_eq!(&rec[..4], &reply.xid.to_be_bytes());
    assert_eq!(&rec[4..], b"hdhello\0\0\0");
}

/// A reply split into three fragments arrives as one record.
#[test]
fn multi_fragment_reply_is_joined() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let rec = read_record(&mut s).unwrap();
        let mut out = 4u32.to_be_bytes().to_vec();
        out.extend_from_slice(&rec[..4]);
        out.extend_from_slice(&3u32.to_be_bytes());
        out.extend_from_slice(b"abc");
        out.extend_from_slice(&(0x8000_0000u32 | 2).to_be_bytes());
        out.extend_from_slice(b"de");
        s.write_all(&out).unwrap();
        thread::sleep(Duration::from_millis(200));
    });
    let rt = runtime();
    let conn = rt.block_on(Connection::connect(addr, quick())).unwrap();
    let reply = rt.block_on(conn.call(call_with(b"x"))).unwrap();
    assert_eq!(&reply.record[4..], b"abcde");
}

/// The server ignores the first transmission; the retransmission carries
/// the same XID and its reply completes the call.
#[test]
fn retransmission_reuses_the_xid() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let mut xids = Vec::new();
        // The client may retransmit on the same connection or reconnect.
        while xids.len() < 2 {
            let (mut s, _) = listener.accept().unwrap();
            while xids.len() < 2 {
                match read_record(&mut s) {
                    Ok(rec) => xids.push(rec[..4].to_vec()),
                    Err(_) => break,
                }
            }
            if xids.len() == 2 {
                s.write_all(&record(&xids[1])).unwrap();
                thread::sleep(Duration::from_millis(100));
            }
        }
        xids
    });
    let rt = runtime();
    let conn = rt.block_on(Connection::connect(addr, quick())).unwrap();
    let reply = rt.block_on(conn.call(call_with(b"w"))).unwrap();
    let xids = server.join().unwrap();
    assert_eq!(xids[0], xids[1]);
    assert_eq!(xids[0], reply.xid.to_be_bytes());
}

/// The server drops the connection with a call pending and comes back
/// later on the same port; the call is resent and completes.
#[test]
fn reconnects_and_resends_after_the_server_returns() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let first = read_record(&mut s).unwrap();
        drop(s);
        drop(listener);
        thread::sleep(Duration::from_millis(300));
        let listener = TcpListener::bind(addr).unwrap();
        let (mut s, _) = listener.accept().unwrap();
        let again = read_record(&mut s).unwrap();
        s.write_all(&record(&again)).unwrap();
        thread::sleep(Duration::from_millis(100));
        (first, again)
    });
    let rt = runtime();
    let config = ConnConfig {
        timeout: Duration::from_millis(400),
        retries: 4,
        ..quick()
    };
    let conn = rt.block_on(Connection::connect(addr, config)).unwrap();
    let reply = rt.block_on(conn.call(call_with(b"again"))).unwrap();
    let (first, again) = server.join().unwrap();
    assert_eq!(first, again);
    assert_eq!(&reply.record[4..], b"again");
    assert!(ConnStats::get(&conn.stats().reconnects) >= 1);
}

/// A server that accepts and never answers: the call fails with a typed
/// error once its deadline passes, not later and never hangs.
#[test]
fn silent_server_gives_a_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().take(20) {
            held.push(s);
        }
    });
    let rt = runtime();
    let config = ConnConfig {
        timeout: Duration::from_millis(100),
        retries: 2,
        ..quick()
    };
    let conn = rt.block_on(Connection::connect(addr, config)).unwrap();
    let t0 = Instant::now();
    let err = rt.block_on(conn.call(call_with(b"z"))).unwrap_err();
    let took = t0.elapsed();
    assert!(
        matches!(
            err,
            TransportError::Timeout { .. } | TransportError::Lost { .. }
        ),
        "{err}"
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

/// Nothing listens: connect fails at once with the address in the message.
#[test]
fn unreachable_server_is_a_connect_error() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let rt = runtime();
    let err = match rt.block_on(Connection::connect(addr, quick())) {
        Err(e) => e,
        Ok(_) => panic!("connected to a closed port"),
    };
    assert!(matches!(err, TransportError::Connect { .. }));
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
}

/// Calls submitted after the server is gone for good fail with `Lost`
/// after the deadline.
#[test]
fn lost_server_fails_pending_calls() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let _ = read_record(&mut s);
        // Listener and connection dropped: connection refused from now on.
    });
    let rt = runtime();
    let config = ConnConfig {
        timeout: Duration::from_millis(100),
        retries: 1,
        ..quick()
    };
    let conn = rt.block_on(Connection::connect(addr, config)).unwrap();
    let err = rt.block_on(conn.call(call_with(b"q"))).unwrap_err();
    assert!(matches!(err, TransportError::Lost { .. }), "{err}");
    assert!(err.to_string().contains("lost"), "{err}");
}

/// With `reserved_port`, the server sees a source port below 1024 (needs
/// root; skipped otherwise).
#[test]
fn reserved_source_port() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("note: not root, reserved port not tested");
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // The accepted stream is kept open so the client stays connected.
    let server = thread::spawn(move || listener.accept().unwrap());
    let rt = runtime();
    let config = ConnConfig {
        reserved_port: true,
        ..quick()
    };
    let conn = rt.block_on(Connection::connect(addr, config)).unwrap();
    let (_stream, peer) = server.join().unwrap();
    assert!(peer.port() < 1024, "{peer}");
    assert_eq!(
        conn.stats().local_addr().map(|a| a.port()),
        Some(peer.port())
    );
}

/// A reply larger than the record limit fails the pending calls at once
/// with a protocol error, instead of resending into the same reply.
#[test]
fn oversized_reply_is_a_protocol_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let rec = read_record(&mut s).unwrap();
        let mut body = rec[..4].to_vec();
        body.resize(2048, 0);
        let _ = s.write_all(&record(&body));
        thread::sleep(Duration::from_millis(500));
    });
    let rt = runtime();
    let config = ConnConfig {
        max_record: 1024,
        ..quick()
    };
    let conn = rt.block_on(Connection::connect(addr, config)).unwrap();
    let t0 = Instant::now();
    let err = rt.block_on(conn.call(call_with(b"big"))).unwrap_err();
    assert!(matches!(err, TransportError::Protocol { .. }), "{err}");
    assert!(t0.elapsed() < Duration::from_millis(300));
}

/// Multipath mode: a dropped connection hands its calls back at once
/// (long before the deadline), and a server gone silent does too after
/// `timeout`; a later call reconnects when the server is back.
#[test]
fn fail_fast_hands_calls_back_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        // First connection: read one call, then reset.
        let (mut s, _) = listener.accept().unwrap();
        let _ = read_record(&mut s);
        drop(s);
        // Second connection: read one call and stay silent.
        let (mut s, _) = listener.accept().unwrap();
        let _ = read_record(&mut s);
        let (mut s2, _) = listener.accept().unwrap();
        // Third: answer (the reply echoes the XID).
        let call = read_record(&mut s2).unwrap();
        s2.write_all(&record(&call[..4])).unwrap();
        drop(s);
        s2
    });
    let rt = runtime();
    let config = ConnConfig {
        timeout: Duration::from_millis(300),
        retries: 100,
        fail_fast: true,
        ..quick()
    };
    let conn = rt.block_on(Connection::connect(addr, config)).unwrap();
    let t = Instant::now();
    let err = rt.block_on(conn.call(call_with(b"a"))).unwrap_err();
    assert!(matches!(err, TransportError::Dropped { .. }), "{err}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let t = Instant::now();
    let err = rt.block_on(conn.call(call_with(b"b"))).unwrap_err();
    assert!(err.to_string().contains("no reply within"), "{err}");
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    let reply = rt.block_on(conn.call(call_with(b"c"))).unwrap();
    assert_eq!(reply.record.len(), 4);
    assert_eq!(ConnStats::get(&conn.stats().retransmits), 0);
    drop(server.join().unwrap());
}

/// Multipath mode: a call whose path dies while an earlier reply is still on its way
/// (the reply arrives after the call went out) is handed back once the connection
/// has been silent for `timeout`, not held until its deadline.
#[test]
fn fail_fast_counts_silence_after_a_late_reply() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let first = read_record(&mut s).unwrap();
        let second = read_record(&mut s).unwrap();
        // The first call's reply comes after the second call went out; then silence.
        s.write_all(&record(&first[..4])).unwrap();
        let _ = second;
        s
    });
    let rt = runtime();
    let config = ConnConfig {
        timeout: Duration::from_millis(300),
        retries: 100,
        fail_fast: true,
        ..quick()
    };
    let conn = rt.block_on(Connection::connect(addr, config)).unwrap();
    let t = Instant::now();
    let (a, b) = rt.block_on(async {
        let a = conn.call(call_with(b"a"));
        let b = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            conn.call(call_with(b"b")).await
        };
        tokio::join!(a, b)
    });
    assert!(a.is_ok(), "{:?}", a.err());
    let err = b.unwrap_err();
    assert!(err.to_string().contains("no reply within"), "{err}");
    // The deadline is 100 timeouts away; silence is 1-2 timeouts.
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    drop(server.join().unwrap());
}
