//! LAYOUTCOMMIT and COMMIT after WRITEs through data servers (RFC 8881 §18.42, §13.7),
//! against a scripted metadata server and a scripted pair of data servers on loopback:
//! the lab's ganesha takes a LAYOUTCOMMIT (tests/pnfs_lab.rs) but gives one kind of
//! answer (UNSTABLE, COMMIT to the data servers) and never needs one for the size, so
//! the scripts answer UNSTABLE, DATA_SYNC or FILE_SYNC, with or without
//! NFL4_UFLG_COMMIT_THRU_MDS, as a test asks, and say what they were sent. The layout
//! stripes the file in 16 KiB units over both data servers; 32 KiB written at 8 KiB
//! reach both.

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes};
use dbio_nfs::datapath::{FileId, Stability};
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, Fh4, FileDsAddr, FileLayout, Nfsstat4, Opnum,
    Stateid, NFL4_UFLG_COMMIT_THRU_MDS,
};
use dbio_nfs::v41::pnfs::LayoutCommitted;
use dbio_xdr::{XdrEncode, XdrPut};

#[path = "common/v41_script.rs"]
mod v41_script;
use v41_script::scripted_pnfs_file;
use v41_script::{
    answer_session_op, deviceinfo_ok, layoutget_ok, netaddr, open_ok, ops_at, second_op,
    sequence_ok, serve_calls, third_op, u32_at,
};

const UNIT: u64 = 16 << 10;
const LAYOUT_STATEID: Stateid = Stateid {
    seqid: 1,
    other: [9; 12],
};
const DS_FH: &[u8] = b"ds-file";

/// What a scripted server was sent, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// How the scripts answer.
#[derive(Clone, Copy)]
struct Script {
    /// `stable_how4` of the data servers' WRITE replies.
    committed: u32,
    /// `nfl_util`'s flags besides the stripe unit.
    flags: u32,
    /// The file's size as the metadata server gives it (GETATTR).
    mds_size: u64,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// The handle a COMPOUND's PUTFH (after SEQUENCE) carries.
fn putfh_of(args: &[u8]) -> Vec<u8> {
    let putfh = ops_at(args) + 4 + 4 + 32;
    let len = u32_at(args, putfh + 4) as usize;
    args[putfh + 8..putfh + 8 + len].to_vec()
}

fn head(out: &mut Vec<u8>, args: &[u8], ops: usize) {
    let ok = Nfsstat4::Ok;
    encode_compound_header(out, ok, b"", ops);
    encode_resop_status(out, Opnum::Sequence, ok);
    sequence_ok(args, out);
}

/// SEQUENCE + RECLAIM_COMPLETE (a session's set-up).
fn reclaim_complete(args: &[u8], out: &mut Vec<u8>) -> bool {
    if second_op(args) != 58 {
        return false;
    }
    head(out, args, 2);
    encode_resop_status(out, Opnum::ReclaimComplete, Nfsstat4::Ok);
    true
}

/// A scripted data server: WRITE answered with `script.committed`, COMMIT; each logged
/// ("WRITE offset len", "COMMIT handle").
fn data_server(script: Script, log: Log) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        serve_calls(l, |_, args, out| {
            if answer_session_op(u32_at(args, ops_at(args) + 4), out) || reclaim_complete(args, out)
            {
                return;
            }
            let at = third_op(args);
            let ok = Nfsstat4::Ok;
            head(out, args, 3);
            encode_resop_status(out, Opnum::Putfh, ok);
            match u32_at(args, at) {
                38 => {
                    let len = u32_at(args, at + 32);
                    log.lock()
                        .unwrap()
                        .push(format!("WRITE {} {len}", u64_at(args, at + 20)));
                    encode_resop_status(out, Opnum::Write, ok);
                    out.put_u32(len);
                    out.put_u32(script.committed);
                    out.put_u64(7); // verifier
                }
                5 => {
                    let fh = String::from_utf8_lossy(&putfh_of(args)).into_owned();
                    log.lock().unwrap().push(format!("COMMIT {fh}"));
                    encode_resop_status(out, Opnum::Commit, ok);
                    out.put_u64(7);
                }
                other => panic!("data server: unexpected op {other} after PUTFH"),
            }
        })
    });
    addr
}

/// A scripted metadata server: OPEN by handle, a files layout of 16 KiB units over
/// stripe indices [0, 1] with `script.flags`, its device naming `ds`, GETATTR (type
/// and size), COMMIT, LAYOUTCOMMIT, LAYOUTRETURN and CLOSE, each logged by name
/// (LAYOUTCOMMIT with its arguments); READ or WRITE through it is logged "MDS I/O".
fn metadata_server(ds: [SocketAddr; 2], script: Script, log: Log) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    for _ in 0..2 {
        let (l, log) = (l.try_clone().unwrap(), log.clone());
        std::thread::spawn(move || {
            serve_calls(l, |_, args, out| mds_answer(ds, script, &log, args, out))
        });
    }
    addr
}

fn mds_answer(
    ds: [SocketAddr; 2],
    script: Script,
    log: &Mutex<Vec<String>>,
    args: &[u8],
    out: &mut Vec<u8>,
) {
    let ok = Nfsstat4::Ok;
    if answer_session_op(u32_at(args, ops_at(args) + 4), out) || reclaim_complete(args, out) {
        return;
    }
    let second = second_op(args);
    if second == 47 {
        log.lock().unwrap().push("GETDEVICEINFO".into());
        head(out, args, 2);
        let device = FileDsAddr {
            stripe_indices: vec![0, 1],
            multipath_ds_list: ds.iter().map(|a| vec![netaddr(*a)]).collect(),
        };
        return deviceinfo_ok(out, device);
    }
    let third = if second == 22 {
        u32_at(args, third_op(args))
    } else {
        0
    };
    let at = third_op(args);
    let entry = match third {
        18 => "OPEN".to_string(),
        50 => "LAYOUTGET".into(),
        51 => "LAYOUTRETURN".into(),
        4 => "CLOSE".into(),
        5 => "COMMIT".into(),
        9 => "GETATTR".into(),
        38 | 25 => "MDS I/O".into(),
        49 => {
            // offset, length, reclaim, stateid (seqid, other), newoffset4.
            let stateid = (u32_at(args, at + 24), args[at + 28]);
            let last = (u32_at(args, at + 40) == 1).then(|| u64_at(args, at + 44));
            format!(
                "LAYOUTCOMMIT {} {} reclaim={} stateid={stateid:?} last={last:?}",
                u64_at(args, at + 4),
                u64_at(args, at + 12),
                u32_at(args, at + 20),
            )
        }
        _ => {
            // Anything else (the mount's and the lease's look-ups): not here.
            let no = Nfsstat4::Notsupp;
            encode_compound_header(out, no, b"", 2);
            encode_resop_status(out, Opnum::Sequence, ok);
            sequence_ok(args, out);
            encode_resop_status(out, Opnum::from_u32(second).unwrap(), no);
            return;
        }
    };
    log.lock().unwrap().push(entry);
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
            LAYOUT_STATEID,
            FileLayout {
                deviceid: [5; 16],
                util: UNIT as u32 | script.flags,
                first_stripe_index: 0,
                pattern_offset: 0,
                fh_list: vec![Fh4::new(DS_FH).unwrap()],
            },
        ),
        51 => {
            encode_resop_status(out, Opnum::Layoutreturn, ok);
            out.put_u32(0); // no layout left
        }
        4 => {
            encode_resop_status(out, Opnum::Close, ok);
            Stateid::ANONYMOUS.encode(out);
        }
        5 => {
            encode_resop_status(out, Opnum::Commit, ok);
            out.put_u64(7);
        }
        9 => {
            encode_resop_status(out, Opnum::Getattr, ok);
            out.put_u32(1); // bitmap of one word: type (1), size (4)
            out.put_u32((1 << 1) | (1 << 4));
            out.put_u32(12);
            out.put_u32(1); // NF4REG
            out.put_u64(script.mds_size);
        }
        49 => {
            encode_resop_status(out, Opnum::Layoutcommit, ok);
            out.put_u32(0); // size not changed
        }
        38 => {
            encode_resop_status(out, Opnum::Write, ok);
            out.put_u32(u32_at(args, at + 32));
            out.put_u32(2); // FILE_SYNC4
            out.put_u64(7);
        }
        _ => {
            let count = u32_at(args, at + 28);
            encode_resop_status(out, Opnum::Read, ok);
            out.put_u32(0);
            out.put_opaque(&vec![0; count as usize]);
        }
    }
}

/// The metadata server's log and each data server's, after 32 KiB written at 8 KiB
/// (units 0 and 2 on data server 0, unit 1 on data server 1) with UNSTABLE asked, by a
/// data path of `depth` slots that stays while `end` runs on the pool.
fn write_then<T>(
    script: Script,
    depth: u32,
    end: impl FnOnce(&Pool, &Log) -> T,
) -> (T, Vec<String>, [Vec<String>; 2]) {
    let ds_logs: [Log; 2] = Default::default();
    let ds = [
        data_server(script, ds_logs[0].clone()),
        data_server(script, ds_logs[1].clone()),
    ];
    let log: Log = Default::default();
    let mds = metadata_server(ds, script, log.clone());
    let (pool, fh, _) = scripted_pnfs_file(mds);
    let mut path = pool.data_path(depth, 64 << 10).unwrap();
    path.add_file(fh.as_bytes()).unwrap();
    let data = Bytes::from(vec![0x5a; 32 << 10]);
    path.write(0, FileId(0), 8 << 10, data, Stability::Unstable)
        .unwrap();
    path.flush();
    let mut out = Vec::new();
    pool.block_on(path.wait(1, Duration::from_secs(5), &mut out));
    assert_eq!(out.len(), 1, "the WRITE never finished");
    assert_eq!(out[0].result, Ok(32 << 10));
    let t = end(&pool, &log);
    drop(path);
    drop(pool);
    let take = |l: &Log| l.lock().unwrap().clone();
    (t, take(&log), [take(&ds_logs[0]), take(&ds_logs[1])])
}

fn count(log: &[String], prefix: &str) -> usize {
    log.iter().filter(|e| e.starts_with(prefix)).count()
}

/// 8 KiB + 32 KiB - 1: the last byte written; the layout stateid; the grant's range.
const WANT_LAYOUTCOMMIT: &str =
    "LAYOUTCOMMIT 0 18446744073709551615 reclaim=0 stateid=(1, 9) last=Some(40959)";

#[test]
fn unstable_writes_are_committed_on_each_data_server_then_layoutcommit_at_the_pools_end() {
    let script = Script {
        committed: 0, // UNSTABLE4
        flags: 0,
        mds_size: 0,
    };
    // The pool's end (what a run's end does): commit, then return the layout; the data
    // path still holds every slot of the data servers' sessions (8): the COMMITs go on
    // a session made for them.
    let (closed, mds, ds) = write_then(script, 8, |pool, _| pool.close());
    closed.unwrap();
    assert_eq!(
        ds[0],
        ["WRITE 8192 8192", "WRITE 32768 8192", "COMMIT ds-file"]
    );
    assert_eq!(ds[1], ["WRITE 16384 16384", "COMMIT ds-file"]);
    assert_eq!(count(&mds, "COMMIT"), 0, "{mds:?}");
    assert_eq!(count(&mds, "MDS I/O"), 0, "{mds:?}");
    let lc = mds.iter().position(|e| e.starts_with("LAYOUTCOMMIT"));
    let lr = mds.iter().position(|e| e == "LAYOUTRETURN");
    assert_eq!(
        lc.map(|i| mds[i].as_str()),
        Some(WANT_LAYOUTCOMMIT),
        "{mds:?}"
    );
    assert!(lc < lr, "LAYOUTCOMMIT after LAYOUTRETURN: {mds:?}");
    assert_eq!(count(&mds, "LAYOUTCOMMIT"), 1, "{mds:?}");
    assert_eq!(
        count(&ds[0], "COMMIT") + count(&ds[1], "COMMIT"),
        2,
        "{ds:?}"
    );
}

#[test]
fn with_commit_through_the_metadata_server_the_commit_goes_there_and_none_to_data_servers() {
    let script = Script {
        committed: 0,
        flags: NFL4_UFLG_COMMIT_THRU_MDS,
        mds_size: 0,
    };
    let fh = Fh4::new(b"file").unwrap();
    let (done, mds, ds) = write_then(script, 2, |pool, _| {
        let l = pool.layouts().unwrap();
        let first = pool.block_on(l.layoutcommit(fh)).unwrap();
        // Nothing written since: nothing to commit.
        let again = pool.block_on(l.layoutcommit(fh)).unwrap();
        (first, again)
    });
    let want = LayoutCommitted {
        commits: 1,
        layoutcommit: true,
        new_size: None,
    };
    assert_eq!(done, (want, LayoutCommitted::default()));
    assert_eq!(
        count(&ds[0], "COMMIT") + count(&ds[1], "COMMIT"),
        0,
        "{ds:?}"
    );
    assert_eq!(count(&mds, "COMMIT"), 1, "{mds:?}");
    assert_eq!(count(&mds, "LAYOUTCOMMIT"), 1, "{mds:?}");
    assert!(mds.iter().any(|e| e == WANT_LAYOUTCOMMIT), "{mds:?}");
}

#[test]
fn data_sync_answers_need_a_layoutcommit_and_no_commit() {
    let script = Script {
        committed: 1, // DATA_SYNC4
        flags: 0,
        mds_size: 1 << 20,
    };
    let fh = Fh4::new(b"file").unwrap();
    let (done, mds, ds) = write_then(script, 2, |pool, _| {
        pool.block_on(pool.layouts().unwrap().layoutcommit(fh))
            .unwrap()
    });
    assert_eq!((done.commits, done.layoutcommit), (0, true));
    assert_eq!(count(&ds[0], "COMMIT") + count(&ds[1], "COMMIT"), 0);
    assert_eq!(count(&mds, "COMMIT"), 0, "{mds:?}");
    assert!(mds.iter().any(|e| e == WANT_LAYOUTCOMMIT), "{mds:?}");
}

#[test]
fn file_sync_answers_within_the_known_size_need_neither_commit_nor_layoutcommit() {
    let script = Script {
        committed: 2, // FILE_SYNC4
        flags: 0,
        mds_size: 1 << 20,
    };
    let (closed, mds, ds) = write_then(script, 2, |pool, _| pool.close());
    closed.unwrap();
    assert_eq!(
        count(&ds[0], "COMMIT") + count(&ds[1], "COMMIT"),
        0,
        "{ds:?}"
    );
    assert_eq!(count(&mds, "COMMIT"), 0, "{mds:?}");
    assert_eq!(count(&mds, "LAYOUTCOMMIT"), 0, "{mds:?}");
    // The metadata server was asked what size it knows.
    assert_eq!(count(&mds, "GETATTR"), 1, "{mds:?}");
    assert_eq!(count(&mds, "LAYOUTRETURN"), 1, "{mds:?}");
}

#[test]
fn file_sync_answers_that_extend_the_file_need_a_layoutcommit_with_the_new_end() {
    let script = Script {
        committed: 2,
        flags: 0,
        mds_size: 8 << 10, // short of the 40 KiB written
    };
    let (closed, mds, ds) = write_then(script, 2, |pool, _| pool.close());
    closed.unwrap();
    assert_eq!(
        count(&ds[0], "COMMIT") + count(&ds[1], "COMMIT"),
        0,
        "{ds:?}"
    );
    assert_eq!(count(&mds, "COMMIT"), 0, "{mds:?}");
    assert!(mds.iter().any(|e| e == WANT_LAYOUTCOMMIT), "{mds:?}");
}

#[test]
fn a_copy_is_done_only_once_its_data_servers_writes_are_committed() {
    use dbio_nfs::copy::{self, CopyOptions};
    use dbio_nfs::fs::{Handle, OpenFile, Stable};
    let script = Script {
        committed: 0,
        flags: 0,
        mds_size: 0,
    };
    let source: Vec<u8> = (0..48u32 << 10).map(|i| (i % 251) as u8).collect();
    // Nothing more to do at the pool's end: the copy committed before it returned.
    let (at_return, mds, ds) = write_then(script, 4, |pool, log| {
        let mut dp = pool.data_path(4, 64 << 10).unwrap();
        let file = dp.add_file(b"file").unwrap();
        let open = OpenFile {
            handle: Handle::new(b"file").unwrap(),
            stateid: None,
            attr: None,
            rel: "export/f".into(),
        };
        let opts = CopyOptions {
            depth: 4,
            io_size: 16 << 10,
            stable: Stable::Unstable,
            ..CopyOptions::default()
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        let read = |at: u64, buf: &mut [u8]| -> std::io::Result<usize> {
            let from = (at as usize).min(source.len());
            let n = buf.len().min(source.len() - from);
            buf[..n].copy_from_slice(&source[from..from + n]);
            Ok(n)
        };
        let fs = pool.fs();
        let up = pool
            .block_on(copy::upload(
                &fs,
                &mut dp,
                file,
                &open,
                &opts,
                &stop,
                read,
                "src",
                |_| {},
            ))
            .unwrap();
        assert_eq!(up.bytes, source.len() as u64);
        let at_return = log.lock().unwrap().clone();
        at_return
    });
    // At the copy's return, a LAYOUTCOMMIT of the copy's end (the pending 32 KiB at
    // 8 KiB written before it included), after a COMMIT on each data server; none
    // is left for the pool's end.
    assert!(
        at_return
            .iter()
            .any(|e| e.starts_with("LAYOUTCOMMIT") && e.ends_with("last=Some(49151)")),
        "{at_return:?}"
    );
    assert_eq!(count(&mds, "LAYOUTCOMMIT"), 1, "{mds:?}");
    assert_eq!(
        count(&ds[0], "COMMIT") + count(&ds[1], "COMMIT"),
        2,
        "{ds:?}"
    );
}
