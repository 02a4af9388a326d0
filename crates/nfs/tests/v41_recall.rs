//! The NFSv4.1 back channel against a scripted pNFS metadata server on loopback (the
//! lab's ganesha never recalls a layout): mid-run it sends a CB_COMPOUND
//! (CB_SEQUENCE + CB_LAYOUTRECALL of the file) on the pool's fore connection. The
//! recall is answered NFS4_OK, the I/O goes through the metadata server meanwhile, the
//! layout is returned (LAYOUTRETURN) and fetched again, the I/O goes back to the data
//! server, and no I/O fails. A server that says it lost the back channel gets the
//! pool's connections bound again.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes};
use dbio_nfs::datapath::{DataPath, FileId, Outcome, Stability};
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs4::{
    cb_op, decode_cb_compound_res, encode_cb_compound, encode_compound_header, encode_resop_status,
    session_flags, CbOp, CbResult, DeviceNotice, Fh4, FileDsAddr, FileLayout, LayoutIomode,
    LayoutRecall, LayoutType, Nfsstat4, Opnum, Stateid,
};
use dbio_nfs::ClientConfig;
use dbio_nfs::NfsUrl;
use dbio_xdr::{XdrEncode, XdrPut};

#[path = "common/v41_script.rs"]
mod v41_script;
use v41_script::scripted_pnfs_file;
use v41_script::{
    answer_session_op_with, deviceinfo_ok, layoutget_ok, netaddr, open_ok, ops_at, second_op,
    sequence_ok, serve_with_callbacks, third_op, u32_at, SID,
};

const LAYOUT_STATEID: Stateid = Stateid {
    seqid: 1,
    other: [9; 12],
};

/// SEQUENCE + PUTFH + READ/WRITE, as a data server (or the metadata server) answers;
/// `path_down`: SEQUENCE says SEQ4_STATUS_CB_PATH_DOWN.
fn io_reply(args: &[u8], out: &mut Vec<u8>, path_down: bool) {
    let at = third_op(args);
    let ok = Nfsstat4::Ok;
    encode_compound_header(out, ok, b"", 3);
    encode_resop_status(out, Opnum::Sequence, ok);
    sequence_ok(args, out);
    if path_down {
        let n = out.len();
        out[n - 4..].copy_from_slice(&1u32.to_be_bytes());
    }
    encode_resop_status(out, Opnum::Putfh, ok);
    match u32_at(args, at) {
        38 => {
            encode_resop_status(out, Opnum::Write, ok);
            out.put_u32(u32_at(args, at + 32)); // count: all of it
            out.put_u32(2); // FILE_SYNC4
            out.put_u64(7); // verifier
        }
        25 => {
            let count = u32_at(args, at + 28);
            encode_resop_status(out, Opnum::Read, ok);
            out.put_u32(0); // not eof
            out.put_opaque(&vec![0x5a; count as usize]);
        }
        other => panic!("unexpected op {other} after PUTFH"),
    }
}

/// A data server: its session, READ and WRITE; `writes` counts the WRITEs.
fn data_server(writes: Arc<AtomicU64>) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        serve_with_callbacks(
            l,
            |_, args, out| {
                let op = u32_at(args, ops_at(args) + 4);
                if answer_session_op_with(op, 0, out) {
                    return;
                }
                if second_op(args) == 58 {
                    let ok = Nfsstat4::Ok;
                    encode_compound_header(out, ok, b"", 2);
                    encode_resop_status(out, Opnum::Sequence, ok);
                    sequence_ok(args, out);
                    encode_resop_status(out, Opnum::ReclaimComplete, ok);
                    return;
                }
                if u32_at(args, third_op(args)) == 38 {
                    writes.fetch_add(1, Relaxed);
                }
                io_reply(args, out, false);
            },
            |_| {},
            None,
        )
    });
    addr
}

/// What the scripted metadata server shares between its connections.
#[derive(Clone)]
struct Mds {
    ds: SocketAddr,
    /// Every op after SEQUENCE (PUTFH) by name, and BIND_CONN_TO_SESSION.
    log: Arc<Mutex<Vec<&'static str>>>,
    /// SEQUENCE says SEQ4_STATUS_CB_PATH_DOWN while set; a BIND_CONN_TO_SESSION clears it.
    path_down: Arc<AtomicBool>,
}

/// The metadata server on `conns` connections: grants the back channel and binds
/// connections to it, OPEN by handle, a files layout of one stripe on `ds`, its device,
/// LAYOUTRETURN, CLOSE, READ and WRITE (while the layout is recalled). The first
/// connection sends what comes on `callbacks` and hands the replies to `cb_replies`.
fn metadata_server(
    mds: Mds,
    conns: usize,
    cb_replies: mpsc::Sender<Vec<u8>>,
    callbacks: mpsc::Receiver<Vec<u8>>,
) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let mut callbacks = Some(callbacks);
    for _ in 0..conns {
        let (l, mds, cb_replies) = (l.try_clone().unwrap(), mds.clone(), cb_replies.clone());
        let callbacks = callbacks.take();
        std::thread::spawn(move || {
            let on_reply = move |results: &[u8]| {
                let _ = cb_replies.send(results.to_vec());
            };
            serve_with_callbacks(l, |_, args, out| mds.answer(args, out), on_reply, callbacks);
        });
    }
    addr
}

impl Mds {
    fn answer(&self, args: &[u8], out: &mut Vec<u8>) {
        let Mds { ds, log, path_down } = self;
        let ds = *ds;
        {
            let ok = Nfsstat4::Ok;
            let op = u32_at(args, ops_at(args) + 4);
            if answer_session_op_with(op, session_flags::CONN_BACK_CHAN, out) {
                return;
            }
            if op == 41 {
                log.lock().unwrap().push("BIND_CONN_TO_SESSION");
                path_down.store(false, Relaxed);
                encode_compound_header(out, ok, b"", 1);
                encode_resop_status(out, Opnum::BindConnToSession, ok);
                out.put_slice(&SID);
                out.put_u32(3); // CDFS4_BOTH
                out.put_u32(0); // no RDMA
                return;
            }
            assert_eq!(op, 53, "unexpected op {op}");
            let sequence_ok = |args: &[u8], out: &mut Vec<u8>| {
                sequence_ok(args, out);
                if path_down.load(Relaxed) {
                    // status_flags, the last word of the result
                    let n = out.len();
                    out[n - 4..].copy_from_slice(&1u32.to_be_bytes());
                }
            };
            let second = second_op(args);
            let third = if second == 22 {
                u32_at(args, third_op(args))
            } else {
                0
            };
            if second == 24 && u32_at(args, ops_at(args) + 4 + 4 + 32 + 4) == 51 {
                // PUTROOTFH + LAYOUTRETURN of a file system or of all.
                log.lock().unwrap().push("LAYOUTRETURN ALL");
                encode_compound_header(out, ok, b"", 3);
                encode_resop_status(out, Opnum::Sequence, ok);
                sequence_ok(args, out);
                encode_resop_status(out, Opnum::Putrootfh, ok);
                encode_resop_status(out, Opnum::Layoutreturn, ok);
                out.put_u32(0); // no layout left
                return;
            }
            let name = match (second, third) {
                (22, 38) | (22, 25) => {
                    log.lock().unwrap().push("MDS I/O");
                    return io_reply(args, out, path_down.load(Relaxed));
                }
                (58, _) => "RECLAIM_COMPLETE",
                (47, _) => "GETDEVICEINFO",
                (22, 18) => "OPEN",
                (22, 50) => "LAYOUTGET",
                (22, 51) => "LAYOUTRETURN",
                (22, 49) => "LAYOUTCOMMIT",
                (22, 4) => "CLOSE",
                _ => {
                    // Anything else (the lease renewal's look-ups): not here.
                    let no = Nfsstat4::Notsupp;
                    encode_compound_header(out, no, b"", 2);
                    encode_resop_status(out, Opnum::Sequence, ok);
                    sequence_ok(args, out);
                    encode_resop_status(out, Opnum::from_u32(second).unwrap(), no);
                    return;
                }
            };
            log.lock().unwrap().push(name);
            let count = if second == 22 { 3 } else { 2 };
            encode_compound_header(out, ok, b"", count);
            encode_resop_status(out, Opnum::Sequence, ok);
            sequence_ok(args, out);
            if second == 22 {
                encode_resop_status(out, Opnum::Putfh, ok);
            }
            match name {
                "RECLAIM_COMPLETE" => encode_resop_status(out, Opnum::ReclaimComplete, ok),
                "GETDEVICEINFO" => {
                    deviceinfo_ok(
                        out,
                        FileDsAddr {
                            stripe_indices: vec![0],
                            multipath_ds_list: vec![vec![netaddr(ds)]],
                        },
                    );
                }
                "OPEN" => {
                    open_ok(
                        out,
                        Stateid {
                            seqid: 1,
                            other: [3; 12],
                        },
                    );
                }
                "LAYOUTGET" => {
                    layoutget_ok(
                        out,
                        LAYOUT_STATEID,
                        FileLayout {
                            deviceid: [5; 16],
                            util: 1 << 20,
                            first_stripe_index: 0,
                            pattern_offset: 0,
                            fh_list: vec![Fh4::new(b"ds-file").unwrap()],
                        },
                    );
                }
                "LAYOUTRETURN" => {
                    encode_resop_status(out, Opnum::Layoutreturn, ok);
                    out.put_u32(0); // no layout left
                }
                "LAYOUTCOMMIT" => {
                    encode_resop_status(out, Opnum::Layoutcommit, ok);
                    out.put_u32(0); // size not changed
                }
                _ => {
                    encode_resop_status(out, Opnum::Close, ok);
                    Stateid::ANONYMOUS.encode(out);
                }
            }
        }
    }
}

/// Four 8 KiB writes on the data path, waited for; every one must succeed.
fn write_round(pool: &Pool, p: &mut DataPath, round: u64) {
    for slot in 0..4u32 {
        let off = (round * 4 + u64::from(slot)) % 64 * 8192;
        let data = Bytes::from(vec![round as u8; 8192]);
        p.write(slot, FileId(0), off, data, Stability::FileSync)
            .unwrap();
    }
    p.flush();
    let mut out: Vec<Outcome> = Vec::new();
    while out.len() < 4 {
        let before = out.len();
        pool.block_on(p.wait(4 - out.len(), Duration::from_secs(5), &mut out));
        assert!(out.len() > before, "I/Os of round {round} never finished");
    }
    for o in &out {
        assert_eq!(o.result, Ok(8192), "round {round}, slot {}", o.slot);
    }
}

/// A pool over the scripted servers with a data path of 4 slots on one file whose
/// layout is fetched and used: the pool, the data path, the file's handle, the
/// metadata server's log, the callbacks to send, the replies to them, the data
/// server's WRITE count.
struct Setup {
    pool: Pool,
    path: DataPath,
    fh: Fh4,
    log: Arc<Mutex<Vec<&'static str>>>,
    callbacks: mpsc::Sender<Vec<u8>>,
    replies: mpsc::Receiver<Vec<u8>>,
    ds_writes: Arc<AtomicU64>,
}

fn setup() -> Setup {
    let ds_writes = Arc::new(AtomicU64::new(0));
    let ds = data_server(ds_writes.clone());
    let log = Arc::new(Mutex::new(Vec::new()));
    let (callbacks, cb_rx) = mpsc::channel();
    let (reply_tx, replies) = mpsc::channel();
    let script = Mds {
        ds,
        log: log.clone(),
        path_down: Arc::new(AtomicBool::new(false)),
    };
    let mds = metadata_server(script, 1, reply_tx, cb_rx);
    let (pool, fh, _) = scripted_pnfs_file(mds);
    let mut path = pool.data_path(4, 64 << 10).unwrap();
    path.add_file(fh.as_bytes()).unwrap();
    write_round(&pool, &mut path, 0);
    assert_eq!(
        ds_writes.load(Relaxed),
        4,
        "the layout sends the writes to the data server"
    );
    Setup {
        pool,
        path,
        fh,
        log,
        callbacks,
        replies,
        ds_writes,
    }
}

impl Setup {
    /// Sends a CB_COMPOUND of CB_SEQUENCE (slot 0, `seqid`) and `ops`.
    fn call_back(&self, seqid: u32, ops: &[CbOp]) {
        let mut all = vec![CbOp::Sequence {
            sessionid: SID,
            sequenceid: seqid,
            slotid: 0,
            highest_slotid: 0,
            cachethis: false,
            referring: Vec::new(),
        }];
        all.extend_from_slice(ops);
        let mut args = Vec::new();
        encode_cb_compound(&mut args, b"cb", 1, &all);
        self.callbacks.send(args).unwrap();
    }

    /// Rounds of writes (each must succeed) until the metadata server's log has `n`
    /// entries `name` and a write reached the data server after that.
    fn write_until(&mut self, name: &str, n: usize) {
        let t = Instant::now();
        let mut ds_after = None;
        for round in 1.. {
            write_round(&self.pool, &mut self.path, round);
            let seen = self
                .log
                .lock()
                .unwrap()
                .iter()
                .filter(|e| **e == name)
                .count();
            if seen >= n {
                let now = self.ds_writes.load(Relaxed);
                match ds_after {
                    None => ds_after = Some(now),
                    Some(before) if now > before => return,
                    _ => {}
                }
            }
            let l = self.log.lock().unwrap().clone();
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "no {n} x {name}: {l:?}"
            );
            self.pool
                .block_on(async { tokio::time::sleep(Duration::from_millis(5)).await });
        }
    }

    /// The next reply to a callback (the pool's connections run only while it waits:
    /// it has no threads of its own).
    fn reply(&self) -> Vec<u8> {
        let t = Instant::now();
        loop {
            if let Ok(r) = self.replies.try_recv() {
                return r;
            }
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "no reply to the callback"
            );
            self.pool
                .block_on(async { tokio::time::sleep(Duration::from_millis(5)).await });
        }
    }

    fn count(&self, name: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|e| **e == name)
            .count()
    }
}

/// CB_NOTIFY_DEVICEID (the device's address changed) has the route fetched again; a
/// recall of every layout is returned with one LAYOUTRETURN of all and the route
/// fetched again; the same CB_SEQUENCE again gets the cached reply and redoes nothing.
#[test]
fn device_notices_and_recalls_of_everything_from_a_scripted_server() {
    let mut s = setup();
    s.call_back(
        1,
        &[CbOp::NotifyDeviceid(vec![DeviceNotice {
            layout_type: LayoutType::NfsV41Files,
            deviceid: [5; 16],
            change: Some(false),
        }])],
    );
    s.write_until("GETDEVICEINFO", 2);
    let first = s.reply();
    let r = decode_cb_compound_res(&first).unwrap();
    assert_eq!(
        r.results[1],
        CbResult::Status(cb_op::NOTIFY_DEVICEID, Nfsstat4::Ok)
    );
    assert_eq!(
        s.count("LAYOUTRETURN"),
        0,
        "a changed device returns no layout"
    );

    let all = CbOp::LayoutRecall {
        layout_type: LayoutType::NfsV41Files,
        iomode: LayoutIomode::Any,
        changed: true,
        recall: LayoutRecall::All,
    };
    s.call_back(2, std::slice::from_ref(&all));
    s.write_until("LAYOUTGET", 3);
    assert_eq!(s.count("LAYOUTRETURN ALL"), 1);
    let reply = s.reply();
    // The retry of that call: the same reply, nothing returned or fetched again.
    s.call_back(2, &[all]);
    let again = s.reply();
    assert_eq!(again, reply);
    write_round(&s.pool, &mut s.path, 99);
    assert_eq!((s.count("LAYOUTRETURN ALL"), s.count("LAYOUTGET")), (1, 3));
    let m = s.pool.v41().unwrap();
    assert_eq!(m.back_channel().counts().replays.load(Relaxed), 1);
}

#[test]
fn a_layout_recall_from_a_scripted_server_is_answered_returned_and_fetched_again() {
    let mut s = setup();
    // Mid-run, the recall, on the fore connection.
    let recall = CbOp::LayoutRecall {
        layout_type: LayoutType::NfsV41Files,
        iomode: LayoutIomode::Any,
        changed: true,
        recall: LayoutRecall::File {
            fh: s.fh,
            offset: 0,
            length: u64::MAX,
            stateid: LAYOUT_STATEID,
        },
    };
    s.call_back(1, &[recall]);
    // I/O goes on (every write succeeds) until the layout was returned and fetched
    // again and a write reached the data server after that.
    s.write_until("LAYOUTGET", 2);
    let reply = s.reply();
    let r = decode_cb_compound_res(&reply).unwrap();
    assert_eq!(r.status, Nfsstat4::Ok);
    assert!(matches!(
        r.results[0],
        CbResult::Sequence {
            sessionid: SID,
            sequenceid: 1,
            ..
        }
    ));
    assert_eq!(
        r.results[1],
        CbResult::Status(cb_op::LAYOUTRECALL, Nfsstat4::Ok)
    );
    let l = s.log.lock().unwrap().clone();
    eprintln!("metadata server saw: {l:?}");
    // Returned before it was fetched again, once.
    let back = l
        .iter()
        .position(|n| *n == "LAYOUTRETURN")
        .expect("LAYOUTRETURN");
    assert!(l[back..].contains(&"LAYOUTGET"), "{l:?}");
    // What was written through the data server is committed under the layout before
    // it goes (the script gives no size, so the metadata server's is not known).
    assert!(l[..back].contains(&"LAYOUTCOMMIT"), "{l:?}");
    assert_eq!(s.count("LAYOUTCOMMIT"), 1, "{l:?}");
    assert!(
        l[back..].contains(&"MDS I/O") || l[..back].contains(&"MDS I/O"),
        "{l:?}"
    );
    assert_eq!(
        (s.count("LAYOUTRETURN"), s.count("LAYOUTGET")),
        (1, 2),
        "{l:?}"
    );
    let m = s.pool.v41().unwrap();
    let counts = m.back_channel().counts();
    assert_eq!(counts.layout_recalls.load(Relaxed), 1);
    assert_eq!(counts.layouts_returned.load(Relaxed), 1);
    let events: Vec<String> = s
        .pool
        .layouts()
        .unwrap()
        .events()
        .iter()
        .map(|e| e.why.clone())
        .collect();
    eprintln!("layout events: {events:?}");
    assert!(
        events.iter().any(|w| w.contains("recalled by the server")),
        "{events:?}"
    );
    assert!(
        events.iter().any(|w| w.contains("fetched again after")),
        "{events:?}"
    );
    assert!(s.pool.warnings().is_empty(), "{:?}", s.pool.warnings());
}

/// A scripted server whose SEQUENCE replies say SEQ4_STATUS_CB_PATH_DOWN (a
/// connection came back as a new socket the server never bound): both connections of
/// the pool are bound again with BIND_CONN_TO_SESSION, and the user hears of it once.
#[test]
fn a_scripted_server_that_lost_the_back_channel_gets_the_connections_bound_again() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let path_down = Arc::new(AtomicBool::new(false));
    let script = Mds {
        ds: "127.0.0.1:9".parse().unwrap(),
        log: log.clone(),
        path_down: path_down.clone(),
    };
    let (_cb_tx, cb_rx) = mpsc::channel();
    let (reply_tx, _reply_rx) = mpsc::channel();
    let mds = metadata_server(script, 2, reply_tx, cb_rx);
    let url = NfsUrl::parse(&format!("nfs://{mds}/export?version=4.1")).unwrap();
    let opts = ClientConfig {
        conns: 2,
        workers: 0,
        ..ClientConfig::new(url.clone())
    };
    let (pool, _) = Pool::open(&opts).unwrap();
    let m = pool.v41().unwrap();
    let counts = m.back_channel().counts();
    let binds = || {
        let l = log.lock().unwrap();
        l.iter().filter(|n| **n == "BIND_CONN_TO_SESSION").count()
    };
    // The pool's second connection was bound when the pool opened.
    assert_eq!((binds(), counts.bound.load(Relaxed)), (1, 1));
    assert!(pool.warnings().is_empty(), "{:?}", pool.warnings());

    path_down.store(true, Relaxed);
    // Any call with SEQUENCE brings the news (this look-up itself is refused).
    let _ = pool.block_on(m.client().lookup_path("/export"));
    let t = Instant::now();
    while counts.bound.load(Relaxed) < 3 {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{:?}",
            log.lock().unwrap()
        );
        pool.block_on(async { tokio::time::sleep(Duration::from_millis(5)).await });
    }
    assert!(!path_down.load(Relaxed));
    assert!(counts.path_down.load(Relaxed) >= 1);
    assert_eq!(binds(), 3);
    let w = pool.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("back channel down") && w[0].contains(&mds.to_string()),
        "{w:?}"
    );
}
