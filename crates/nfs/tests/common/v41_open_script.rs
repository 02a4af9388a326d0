//! A scripted NFSv4.1 server on loopback that refuses OPEN by file handle (CLAIM_FH),
//! as some servers do and ganesha never does, and answers OPEN by name (CLAIM_NULL)
//! unless told to refuse that too. It walks each COMPOUND op by op: SEQUENCE,
//! PUTROOTFH, PUTFH, LOOKUP, GETFH, GETATTR (type and size), OPEN, CLOSE, LAYOUTGET
//! (a files layout of one stripe on the data server given, else
//! NFS4ERR_LAYOUTUNAVAILABLE), GETDEVICEINFO, LAYOUTCOMMIT, LAYOUTRETURN, READ, WRITE,
//! COMMIT, RECLAIM_COMPLETE; anything else gets NFS4ERR_NOTSUPP. The same script serves
//! as that data server. What matters to a test goes to its log: each OPEN with its
//! claim, the stateid each LAYOUTGET, READ and WRITE carried, COMMIT, LAYOUTCOMMIT
//! with its last byte written, LAYOUTRETURN and CLOSE.

#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

use bytes::BufMut;
use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, session_flags, FileDsAddr, FileLayout, Nfsstat4,
    Opnum, Stateid,
};
use dbio_xdr::{XdrEncode, XdrPut};

use super::v41_script::{
    answer_session_op_with, deviceinfo_ok, layoutget_ok, netaddr, ops_at, sequence_ok, serve_calls,
    u32_at, SID,
};

/// The stateid an OPEN by name grants.
pub const BY_NAME: Stateid = Stateid {
    seqid: 1,
    other: [0x4e; 12],
};

/// Size of every regular file.
pub const FILE_SIZE: u64 = 1 << 20;

pub type Log = Arc<Mutex<Vec<String>>>;

/// How a stateid shows in the log: its seqid and first byte of `other`.
pub fn shown(s: Stateid) -> String {
    format!("({}, {})", s.seqid, s.other[0])
}

/// How the script answers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// OPEN by name is refused as well (NFS4ERR_ACCESS).
    pub refuse_by_name: bool,
    /// LAYOUTGET gives a layout on this data server.
    pub data_server: Option<SocketAddr>,
    /// `stable_how4` of WRITE replies (0: UNSTABLE4); FILE_SYNC4 when `None`.
    pub committed: Option<u32>,
}

/// The layout stateid LAYOUTGET grants.
pub const LAYOUT: Stateid = Stateid {
    seqid: 1,
    other: [0x4c; 12],
};

/// Starts the server on 4 connections; `refuse_by_name`: OPEN by name is refused as
/// well (NFS4ERR_ACCESS).
pub fn start(refuse_by_name: bool, log: Log) -> SocketAddr {
    let opts = Options {
        refuse_by_name,
        ..Options::default()
    };
    start_with(opts, log)
}

/// [`start`] with all its options.
pub fn start_with(opts: Options, log: Log) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    for _ in 0..4 {
        let (l, log) = (l.try_clone().unwrap(), log.clone());
        std::thread::spawn(move || {
            serve_calls(l, |proc_, args, out| {
                // NULL (procedure 0) has no results.
                if proc_ != 0 {
                    answer(args, out, opts, &log)
                }
            })
        });
    }
    addr
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

fn padded(len: u32) -> usize {
    (len as usize).div_ceil(4) * 4
}

fn stateid_at(b: &[u8], at: usize) -> Stateid {
    Stateid {
        seqid: u32_at(b, at),
        other: b[at + 4..at + 16].try_into().unwrap(),
    }
}

fn answer(args: &[u8], out: &mut Vec<u8>, opts: Options, log: &Mutex<Vec<String>>) {
    let start = ops_at(args);
    let count = u32_at(args, start) as usize;
    let ok = Nfsstat4::Ok;
    // A back channel granted, and the other connections bound to it.
    let first = u32_at(args, start + 4);
    if answer_session_op_with(first, session_flags::CONN_BACK_CHAN, out) {
        return;
    }
    if first == 41 {
        encode_compound_header(out, ok, b"", 1);
        encode_resop_status(out, Opnum::BindConnToSession, ok);
        out.put_slice(&SID);
        out.put_u32(3); // CDFS4_BOTH
        out.put_u32(0); // no RDMA
        return;
    }
    let mut res = Vec::new();
    let mut done = 0;
    let mut status = ok;
    let mut at = start + 4;
    // The current file: its handle (a name) and whether it is a directory.
    let mut current: Vec<u8> = b"/".to_vec();
    for _ in 0..count {
        let op = u32_at(args, at);
        at += 4;
        let opnum = Opnum::from_u32(op).unwrap_or(Opnum::Illegal);
        done += 1;
        match op {
            53 => {
                encode_resop_status(&mut res, opnum, ok);
                sequence_ok(args, &mut res);
                at += 32;
            }
            24 => {
                encode_resop_status(&mut res, opnum, ok);
                current = b"/".to_vec();
            }
            22 | 15 => {
                let len = u32_at(args, at);
                current = args[at + 4..at + 4 + len as usize].to_vec();
                at += 4 + padded(len);
                encode_resop_status(&mut res, opnum, ok);
            }
            10 => {
                encode_resop_status(&mut res, opnum, ok);
                res.put_opaque(&current);
            }
            9 => {
                at += 4 + 4 * u32_at(args, at) as usize;
                encode_resop_status(&mut res, opnum, ok);
                let dir = !current.ends_with(b".dat");
                res.put_u32(1); // bitmap of one word: type (1), size (4)
                res.put_u32((1 << 1) | (1 << 4));
                res.put_u32(12);
                res.put_u32(if dir { 2 } else { 1 }); // NF4DIR, NF4REG
                res.put_u64(if dir { 4096 } else { FILE_SIZE });
            }
            58 => {
                at += 4;
                encode_resop_status(&mut res, opnum, ok);
            }
            18 => {
                // seqid, access, deny, clientid, owner, openflag (NOCREATE), claim.
                let owner = u32_at(args, at + 20);
                let next = at + 24 + padded(owner);
                let claim = u32_at(args, next + 4);
                let (entry, refused) = match claim {
                    4 => ("OPEN by handle".to_string(), Some(Nfsstat4::Notsupp)),
                    0 => {
                        let len = u32_at(args, next + 8);
                        let name = &args[next + 12..next + 12 + len as usize];
                        at = next + 12 + padded(len);
                        current = name.to_vec();
                        let name = String::from_utf8_lossy(name);
                        let no = opts.refuse_by_name.then_some(Nfsstat4::Access);
                        (format!("OPEN by name {name}"), no)
                    }
                    other => panic!("OPEN claim {other}"),
                };
                log.lock().unwrap().push(entry);
                if let Some(no) = refused {
                    encode_resop_status(&mut res, opnum, no);
                    status = no;
                    break;
                }
                encode_resop_status(&mut res, opnum, ok);
                BY_NAME.encode(&mut res);
                res.put_u32(1); // change_info4: atomic, before, after
                res.put_u64(1);
                res.put_u64(2);
                res.put_u32(0x4); // OPEN4_RESULT_LOCKTYPE_POSIX
                res.put_u32(0); // attrset: empty bitmap
                res.put_u32(0); // OPEN_DELEGATE_NONE
            }
            4 => {
                log.lock()
                    .unwrap()
                    .push(format!("CLOSE {}", shown(stateid_at(args, at + 4))));
                at += 20;
                encode_resop_status(&mut res, opnum, ok);
                Stateid::ANONYMOUS.encode(&mut res);
            }
            50 => {
                let s = stateid_at(args, at + 36);
                log.lock().unwrap().push(format!("LAYOUTGET {}", shown(s)));
                at += 56;
                if opts.data_server.is_none() {
                    let no = Nfsstat4::Layoutunavailable;
                    encode_resop_status(&mut res, opnum, no);
                    status = no;
                    break;
                }
                let layout = FileLayout {
                    deviceid: [5; 16],
                    util: 1 << 20, // one stripe: no unit needed
                    first_stripe_index: 0,
                    pattern_offset: 0,
                    fh_list: Vec::new(),
                };
                layoutget_ok(&mut res, LAYOUT, layout);
            }
            47 => {
                // deviceid, layout type, maxcount, notification bitmap.
                at += 24;
                at += 4 + 4 * u32_at(args, at) as usize;
                let Some(ds) = opts.data_server else {
                    panic!("GETDEVICEINFO without a layout")
                };
                let device = FileDsAddr {
                    stripe_indices: vec![0],
                    multipath_ds_list: vec![vec![netaddr(ds)]],
                };
                deviceinfo_ok(&mut res, device);
            }
            49 => {
                // offset, length, reclaim, stateid, newoffset4, newtime4, layoutupdate4.
                let s = stateid_at(args, at + 20);
                let mut next = at + 36;
                let last = if u32_at(args, next) == 1 {
                    next += 8;
                    Some(u64_at(args, next - 4))
                } else {
                    None
                };
                next += 4;
                next += if u32_at(args, next) == 1 { 16 } else { 4 };
                at = next + 8 + padded(u32_at(args, next + 4));
                log.lock()
                    .unwrap()
                    .push(format!("LAYOUTCOMMIT {} last={last:?}", shown(s)));
                encode_resop_status(&mut res, opnum, ok);
                res.put_u32(0); // size not changed
            }
            51 => {
                // reclaim, type, iomode, LAYOUTRETURN4_FILE: offset, length, stateid, body.
                let body = u32_at(args, at + 48);
                at += 52 + padded(body);
                log.lock().unwrap().push("LAYOUTRETURN".into());
                encode_resop_status(&mut res, opnum, ok);
                res.put_u32(0); // no layout left
            }
            5 => {
                at += 12;
                log.lock().unwrap().push("COMMIT".into());
                encode_resop_status(&mut res, opnum, ok);
                res.put_u64(7);
            }
            38 | 25 => {
                let s = stateid_at(args, at);
                let name = if op == 38 { "WRITE" } else { "READ" };
                log.lock().unwrap().push(format!("{name} {}", shown(s)));
                // stateid, offset, then WRITE: stable, data; READ: count.
                let len = u32_at(args, if op == 38 { at + 28 } else { at + 24 });
                encode_resop_status(&mut res, opnum, ok);
                if op == 38 {
                    res.put_u32(len);
                    res.put_u32(opts.committed.unwrap_or(2));
                    res.put_u64(7);
                } else {
                    let offset = u64_at(args, at + 16);
                    res.put_u32(u32::from(offset + u64::from(len) >= FILE_SIZE));
                    res.put_opaque(&vec![0; len as usize]);
                }
                // The last op of a data path's COMPOUND.
                break;
            }
            _ => {
                let no = Nfsstat4::Notsupp;
                encode_resop_status(&mut res, opnum, no);
                status = no;
                break;
            }
        }
    }
    encode_compound_header(out, status, b"", done);
    out.extend_from_slice(&res);
}
