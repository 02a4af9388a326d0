//! A data server first named by a later layout gets slots for every data path, like
//! the data servers known when the data paths were made: against a scripted metadata
//! server whose device names data server A, then, after a refresh, data server B (both
//! scripted on loopback; in the pNFS lab a move shows it only through the run's
//! figures). Each scripted session grants 8 slots and each of the two data paths wants
//! 6: the first takes them from B's first session, the second has a session made for
//! it, and both paths' I/O reaches B, none failed.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes};
use dbio_nfs::datapath::{DataPath, FileId, Stability};
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, FileDsAddr, FileLayout, Nfsstat4, Opnum, Stateid,
};
use dbio_xdr::XdrEncode;

#[path = "common/v41_script.rs"]
mod v41_script;
use v41_script::scripted_pnfs_file;
use v41_script::{
    answer_session_op, deviceinfo_ok, layoutget_ok, netaddr, open_ok, ops_at, second_op,
    sequence_ok, serve_calls, third_op, u32_at,
};

/// What a scripted server was sent: "CREATE_SESSION", "WRITE offset", or an op's name.
type Log = Arc<Mutex<Vec<String>>>;

fn head(out: &mut Vec<u8>, args: &[u8], ops: usize) {
    let ok = Nfsstat4::Ok;
    encode_compound_header(out, ok, b"", ops);
    encode_resop_status(out, Opnum::Sequence, ok);
    sequence_ok(args, out);
}

/// The session's own ops (CREATE_SESSION logged) and RECLAIM_COMPLETE.
fn session_op(args: &[u8], out: &mut Vec<u8>, log: &Mutex<Vec<String>>) -> bool {
    let op = u32_at(args, ops_at(args) + 4);
    if answer_session_op(op, out) {
        if op == 43 {
            log.lock().unwrap().push("CREATE_SESSION".into());
        }
        return true;
    }
    if second_op(args) == 58 {
        head(out, args, 2);
        encode_resop_status(out, Opnum::ReclaimComplete, Nfsstat4::Ok);
        return true;
    }
    false
}

/// SEQUENCE + PUTFH + WRITE (FILE_SYNC, all of it), logged with its offset.
fn write_reply(args: &[u8], out: &mut Vec<u8>, log: &Mutex<Vec<String>>, who: &str) {
    let at = third_op(args);
    assert_eq!(u32_at(args, at), 38, "{who}: only WRITEs here");
    let offset = u64::from_be_bytes(args[at + 20..at + 28].try_into().unwrap());
    log.lock().unwrap().push(format!("WRITE {offset}"));
    let ok = Nfsstat4::Ok;
    head(out, args, 3);
    encode_resop_status(out, Opnum::Putfh, ok);
    encode_resop_status(out, Opnum::Write, ok);
    out.put_u32(u32_at(args, at + 32));
    out.put_u32(2); // FILE_SYNC4
    out.put_u64(7);
}

/// A scripted data server on as many connections as it is given.
fn data_server(log: Log) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    for _ in 0..4 {
        let (l, log) = (l.try_clone().unwrap(), log.clone());
        std::thread::spawn(move || {
            serve_calls(l, |_, args, out| {
                if !session_op(args, out, &log) {
                    write_reply(args, out, &log, "data server");
                }
            })
        });
    }
    addr
}

/// A scripted metadata server: OPEN, a files layout of one stripe, whose device names
/// `ds[0]`, or `ds[1]` once `moved` is set; LAYOUTRETURN, CLOSE; WRITEs through it
/// logged "WRITE offset" in `log`.
fn metadata_server(ds: [SocketAddr; 2], moved: Arc<AtomicBool>, log: Log) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    for _ in 0..4 {
        let (l, log, moved) = (l.try_clone().unwrap(), log.clone(), moved.clone());
        std::thread::spawn(move || {
            serve_calls(l, |_, args, out| {
                if session_op(args, out, &log) {
                    return;
                }
                let ok = Nfsstat4::Ok;
                let second = second_op(args);
                if second == 47 {
                    head(out, args, 2);
                    let to = ds[usize::from(moved.load(Relaxed))];
                    let device = FileDsAddr {
                        stripe_indices: vec![0],
                        multipath_ds_list: vec![vec![netaddr(to)]],
                    };
                    return deviceinfo_ok(out, device);
                }
                let third = if second == 22 {
                    u32_at(args, third_op(args))
                } else {
                    0
                };
                if third == 38 {
                    return write_reply(args, out, &log, "metadata server");
                }
                if !matches!(third, 18 | 50 | 51 | 4) {
                    // Anything else (the mount's and the lease's look-ups): not here.
                    let no = Nfsstat4::Notsupp;
                    encode_compound_header(out, no, b"", 2);
                    encode_resop_status(out, Opnum::Sequence, ok);
                    sequence_ok(args, out);
                    encode_resop_status(out, Opnum::from_u32(second).unwrap(), no);
                    return;
                }
                head(out, args, 3);
                encode_resop_status(out, Opnum::Putfh, ok);
                match third {
                    18 => open_ok(
                        out,
                        Stateid {
                            seqid: 1,
                            other: [3; 12],
                        },
                    ),
                    50 => layoutget_ok(
                        out,
                        Stateid {
                            seqid: 1,
                            other: [9; 12],
                        },
                        FileLayout {
                            deviceid: [5; 16],
                            util: 1 << 20,
                            first_stripe_index: 0,
                            pattern_offset: 0,
                            fh_list: Vec::new(),
                        },
                    ),
                    51 => {
                        encode_resop_status(out, Opnum::Layoutreturn, ok);
                        out.put_u32(0);
                    }
                    _ => {
                        encode_resop_status(out, Opnum::Close, ok);
                        Stateid::ANONYMOUS.encode(out);
                    }
                }
            })
        });
    }
    addr
}

/// One 8 KiB WRITE on each data path (path `i` writes at `i` GiB + `k` * 8 KiB), all
/// waited for; none may fail.
fn write_round(pool: &Pool, paths: &mut [DataPath], k: u64) {
    for (i, p) in paths.iter_mut().enumerate() {
        let offset = ((i as u64) << 30) + k * 8192;
        p.write(
            0,
            FileId(0),
            offset,
            Bytes::from(vec![1u8; 8192]),
            Stability::FileSync,
        )
        .unwrap();
        p.flush();
    }
    for p in paths.iter_mut() {
        let mut out = Vec::new();
        pool.block_on(p.wait(1, Duration::from_secs(5), &mut out));
        assert_eq!(out.len(), 1, "a WRITE never finished");
        assert_eq!(out[0].result, Ok(8192));
    }
}

/// Which data paths' WRITEs (by the GiB they write in) a server's log shows.
fn writers(log: &Log) -> [bool; 2] {
    let l = log.lock().unwrap();
    let from = |i: u64| {
        l.iter().any(|e| {
            e.strip_prefix("WRITE ")
                .and_then(|o| o.parse::<u64>().ok())
                .is_some_and(|o| o >> 30 == i)
        })
    };
    [from(0), from(1)]
}

#[test]
fn a_data_server_first_named_by_a_refresh_gets_slots_for_every_data_path() {
    let logs: [Log; 2] = Default::default();
    let ds = [data_server(logs[0].clone()), data_server(logs[1].clone())];
    let moved = Arc::new(AtomicBool::new(false));
    let mds_log: Log = Default::default();
    let mds = metadata_server(ds, moved.clone(), mds_log.clone());
    let (pool, fh, _) = scripted_pnfs_file(mds);
    let layouts = pool.layouts().unwrap().clone();
    let mut paths: Vec<DataPath> = (0..2)
        .map(|_| {
            let mut p = pool.data_path(6, 64 << 10).unwrap();
            p.add_file(fh.as_bytes()).unwrap();
            p
        })
        .collect();

    // The data server known at the start: both paths reach it at once.
    write_round(&pool, &mut paths, 0);
    assert_eq!(writers(&logs[0]), [true, true], "{:?}", logs[0]);
    let sessions = |l: &Log| {
        let l = l.lock().unwrap();
        l.iter().filter(|e| *e == "CREATE_SESSION").count()
    };
    // 6 + 6 slots of 8-slot sessions: a second session was made for the second path.
    assert_eq!(sessions(&logs[0]), 2, "{:?}", logs[0]);
    assert_eq!(sessions(&logs[1]), 0);

    // The file moves: the refreshed layout names B, never met before.
    moved.store(true, Relaxed);
    pool.block_on(layouts.refresh_all("refresh"));
    let since = Instant::now();
    let mut k = 1;
    while writers(&logs[1]) != [true, true]
        && since.elapsed() < Duration::from_secs(5)
        && k < 10_000
    {
        write_round(&pool, &mut paths, k);
        k += 1;
    }
    assert_eq!(writers(&logs[1]), [true, true], "B: {:?}", logs[1]);
    // Slots like the first server's: a session for each path that needs one.
    assert_eq!(sessions(&logs[1]), 2, "{:?}", logs[1]);
    // From then on nothing goes through the metadata server.
    let before = mds_log.lock().unwrap().len();
    for j in 0..5 {
        write_round(&pool, &mut paths, k + j);
    }
    let mds_writes = mds_log.lock().unwrap()[before..]
        .iter()
        .filter(|e| e.starts_with("WRITE"))
        .count();
    assert_eq!(mds_writes, 0, "{:?}", mds_log.lock().unwrap());
}
