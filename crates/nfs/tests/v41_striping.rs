//! pNFS striping (RFC 8881 §13.4) against a scripted metadata server and a scripted
//! pair of data servers on loopback (the lab's ganesha gives every file one stripe):
//! the layout stripes the file in 16 KiB units over two data servers (stripe indices
//! [0, 1], sparse). An I/O across units is cut at their boundaries and each piece goes
//! to its own data server, none through the metadata server; what is written is read
//! back byte for byte.

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes};
use dbio_nfs::datapath::{DataPath, FileId, Outcome, ReadData, Stability};
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, Fh4, FileDsAddr, FileLayout, Nfsstat4, Opnum,
    Stateid,
};
use dbio_xdr::{XdrEncode, XdrPut};

#[path = "common/v41_script.rs"]
mod v41_script;
use v41_script::scripted_pnfs_file;
use v41_script::{
    answer_session_op, deviceinfo_ok, layoutget_ok, netaddr, open_ok, ops_at, second_op,
    sequence_ok, serve_calls, third_op, u32_at,
};

const UNIT: u64 = 16 << 10;

/// What a scripted data server was asked: (WRITE or READ, file offset, length).
type Served = Arc<Mutex<Vec<(&'static str, u64, u32)>>>;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// Answers SEQUENCE + PUTFH + RECLAIM_COMPLETE (a data server's session set-up).
fn reclaim_complete(args: &[u8], out: &mut Vec<u8>) -> bool {
    if second_op(args) != 58 {
        return false;
    }
    let ok = Nfsstat4::Ok;
    encode_compound_header(out, ok, b"", 2);
    encode_resop_status(out, Opnum::Sequence, ok);
    sequence_ok(args, out);
    encode_resop_status(out, Opnum::ReclaimComplete, ok);
    true
}

/// A scripted data server: its session, and WRITE and READ on an in-memory file (the
/// sparse layout's offsets are the file's own), each recorded in `served`.
fn data_server(served: Served) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut file: Vec<u8> = Vec::new();
        serve_calls(l, |_, args, out| {
            if answer_session_op(u32_at(args, ops_at(args) + 4), out) || reclaim_complete(args, out)
            {
                return;
            }
            let at = third_op(args);
            let ok = Nfsstat4::Ok;
            encode_compound_header(out, ok, b"", 3);
            encode_resop_status(out, Opnum::Sequence, ok);
            sequence_ok(args, out);
            encode_resop_status(out, Opnum::Putfh, ok);
            // op, stateid (16), offset (8), then WRITE: stable, data; READ: count.
            let offset = u64_at(args, at + 20);
            match u32_at(args, at) {
                38 => {
                    let len = u32_at(args, at + 32);
                    let data = &args[at + 36..at + 36 + len as usize];
                    let end = offset as usize + data.len();
                    if file.len() < end {
                        file.resize(end, 0);
                    }
                    file[offset as usize..end].copy_from_slice(data);
                    served.lock().unwrap().push(("WRITE", offset, len));
                    encode_resop_status(out, Opnum::Write, ok);
                    out.put_u32(len);
                    out.put_u32(2); // FILE_SYNC4
                    out.put_u64(7); // verifier
                }
                25 => {
                    let count = u32_at(args, at + 28);
                    served.lock().unwrap().push(("READ", offset, count));
                    let from = (offset as usize).min(file.len());
                    let to = (offset as usize + count as usize).min(file.len());
                    encode_resop_status(out, Opnum::Read, ok);
                    out.put_u32(u32::from(to == file.len()));
                    out.put_opaque(&file[from..to]);
                }
                other => panic!("data server: unexpected op {other} after PUTFH"),
            }
        })
    });
    addr
}

/// A scripted metadata server: OPEN by handle, a files layout of 16 KiB stripe units
/// over stripe indices [0, 1], its device naming `ds` (in that order), LAYOUTRETURN and
/// CLOSE; any READ or WRITE it gets is logged as "MDS I/O" (and answered with zeros).
fn metadata_server(ds: [SocketAddr; 2], log: Arc<Mutex<Vec<&'static str>>>) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    for _ in 0..2 {
        let (l, log) = (l.try_clone().unwrap(), log.clone());
        std::thread::spawn(move || serve_calls(l, |_, args, out| mds_answer(ds, &log, args, out)));
    }
    addr
}

fn mds_answer(ds: [SocketAddr; 2], log: &Mutex<Vec<&'static str>>, args: &[u8], out: &mut Vec<u8>) {
    let ok = Nfsstat4::Ok;
    if answer_session_op(u32_at(args, ops_at(args) + 4), out) || reclaim_complete(args, out) {
        return;
    }
    let second = second_op(args);
    let third = if second == 22 {
        u32_at(args, third_op(args))
    } else {
        0
    };
    let name = match (second, third) {
        (47, _) => "GETDEVICEINFO",
        (22, 18) => "OPEN",
        (22, 50) => "LAYOUTGET",
        (22, 51) => "LAYOUTRETURN",
        (22, 4) => "CLOSE",
        (22, 38) | (22, 25) => "MDS I/O",
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
    log.lock().unwrap().push(name);
    encode_compound_header(out, ok, b"", if second == 22 { 3 } else { 2 });
    encode_resop_status(out, Opnum::Sequence, ok);
    sequence_ok(args, out);
    if second == 22 {
        encode_resop_status(out, Opnum::Putfh, ok);
    }
    let at = third_op(args);
    match name {
        "GETDEVICEINFO" => {
            deviceinfo_ok(
                out,
                FileDsAddr {
                    stripe_indices: vec![0, 1],
                    multipath_ds_list: ds.iter().map(|a| vec![netaddr(*a)]).collect(),
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
                Stateid {
                    seqid: 1,
                    other: [9; 12],
                },
                FileLayout {
                    deviceid: [5; 16],
                    util: UNIT as u32, // sparse, COMMIT to the data servers
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
        "CLOSE" => {
            encode_resop_status(out, Opnum::Close, ok);
            Stateid::ANONYMOUS.encode(out);
        }
        _ if third == 38 => {
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

/// Waits for the one I/O in flight on `p`.
fn one(pool: &Pool, p: &mut DataPath) -> Outcome {
    let mut out = Vec::new();
    pool.block_on(p.wait(1, Duration::from_secs(5), &mut out));
    assert_eq!(out.len(), 1, "the I/O never finished");
    out.pop().unwrap()
}

/// A READ's data laid out in order (pieces come in any order).
fn assemble(data: ReadData, len: usize) -> Vec<u8> {
    let mut v = vec![0xee; len];
    match data {
        ReadData::None => {}
        ReadData::One(b) => v[..b.len()].copy_from_slice(&b),
        ReadData::Parts(parts) => {
            for (start, b) in parts {
                v[start as usize..start as usize + b.len()].copy_from_slice(&b);
            }
        }
    }
    v
}

/// A pool on the scripted metadata server naming data servers `ds`, the file's route
/// fetched, a data path of 2 slots on it: the pool, the data path, the server's log.
fn setup(ds: [SocketAddr; 2]) -> (Pool, DataPath, Arc<Mutex<Vec<&'static str>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mds = metadata_server(ds, log.clone());
    let (pool, fh, route) = scripted_pnfs_file(mds);
    assert_eq!(route.stripe_units(), Some((0, UNIT)));
    let mut path = pool.data_path(2, 64 << 10).unwrap();
    // One RPC would carry the whole I/O: only the stripe units cut it.
    assert!(path.transfer_sizes().1 >= 32 << 10);
    path.add_file(fh.as_bytes()).unwrap();
    (pool, path, log)
}

/// 32 KiB of a pattern written at 8 KiB, FILE_SYNC; the data written.
fn write_32k(pool: &Pool, path: &mut DataPath) -> Vec<u8> {
    let data: Vec<u8> = (0..32u32 << 10).map(|i| (i * 7 % 251) as u8).collect();
    let bytes = Bytes::from(data.clone());
    path.write(0, FileId(0), 8 << 10, bytes, Stability::FileSync)
        .unwrap();
    path.flush();
    let w = one(pool, path);
    assert_eq!(w.result, Ok(32 << 10));
    data
}

fn served_sorted(s: &Served) -> Vec<(&'static str, u64, u32)> {
    let mut v = s.lock().unwrap().clone();
    v.sort();
    v
}

#[test]
fn an_io_across_stripe_units_goes_to_each_units_data_server_and_reads_back_exact() {
    let served: [Served; 2] = Default::default();
    let ds = [
        data_server(served[0].clone()),
        data_server(served[1].clone()),
    ];
    let (pool, mut path, log) = setup(ds);

    // 32 KiB at 8 KiB: units 0 (8..16K) and 2 (32..40K) on DS0, unit 1 on DS1.
    let data = write_32k(&pool, &mut path);
    let k = 1024;
    assert_eq!(
        served_sorted(&served[0]),
        [("WRITE", 8 * k, 8 << 10), ("WRITE", 32 * k, 8 << 10)]
    );
    assert_eq!(served_sorted(&served[1]), [("WRITE", 16 * k, 16 << 10)]);

    path.read(1, FileId(0), 8 << 10, 32 << 10).unwrap();
    path.flush();
    let r = one(&pool, &mut path);
    assert_eq!(r.result, Ok(32 << 10));
    assert!(assemble(r.data, 32 << 10) == data, "read back differs");
    let reads = |i: usize| {
        let s = served[i].lock().unwrap();
        s.iter().filter(|e| e.0 == "READ").count()
    };
    assert_eq!((reads(0), reads(1)), (2, 1));

    let l = log.lock().unwrap().clone();
    assert!(
        !l.contains(&"MDS I/O"),
        "through the metadata server: {l:?}"
    );
}

#[test]
fn a_piece_whose_data_server_cannot_be_reached_goes_through_the_metadata_server() {
    let served: Served = Default::default();
    // The second data server refuses connections (nothing listens on its port).
    let gone = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = gone.local_addr().unwrap();
    drop(gone);
    let (pool, mut path, log) = setup([data_server(served.clone()), dead]);

    write_32k(&pool, &mut path);
    let k = 1024;
    // DS0's units still go to it; only unit 1 (DS1's) goes through the metadata server.
    assert_eq!(
        served_sorted(&served),
        [("WRITE", 8 * k, 8 << 10), ("WRITE", 32 * k, 8 << 10)]
    );
    let mds_io = log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| **e == "MDS I/O")
        .count();
    assert_eq!(mds_io, 1);
}
