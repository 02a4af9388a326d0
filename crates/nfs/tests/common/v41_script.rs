//! Pieces of a scripted NFSv4.1 server on loopback (tests that need replies ganesha
//! never sends): the session's own operations answered as a server would.

use bytes::BufMut;
use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, ChannelAttrs, CreateSessionOk, Nfsstat4, Opnum,
    RdmaIrd,
};
use dbio_xdr::{XdrEncode, XdrPut};

/// The session id every scripted CREATE_SESSION grants.
pub const SID: [u8; 16] = *b"dbio-test-sessio";

/// AUTH_SYS as root, for a client of a scripted server.
#[allow(dead_code)]
pub fn cred() -> dbio_rpc::Credential {
    dbio_rpc::Credential::sys(&dbio_rpc::AuthSys {
        stamp: 1,
        machine_name: "t".into(),
        uid: 0,
        gid: 0,
        gids: vec![],
    })
    .unwrap()
}

/// A runtime on this thread for a client of a scripted server.
#[allow(dead_code)]
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// Answers a COMPOUND whose first op is `op` when that op sets the session up or tears
/// it down (EXCHANGE_ID, CREATE_SESSION with 8 slots and no back channel,
/// DESTROY_SESSION, DESTROY_CLIENTID); false for any other op, leaving `out` as it was.
#[allow(dead_code)] // Not every test that includes this file answers with it.
pub fn answer_session_op(op: u32, out: &mut Vec<u8>) -> bool {
    answer_session_op_with(op, 0, out)
}

/// [`answer_session_op`], with CREATE_SESSION's reply carrying `flags`
/// (`CREATE_SESSION4_FLAG_CONN_BACK_CHAN`: a back channel granted).
pub fn answer_session_op_with(op: u32, flags: u32, out: &mut Vec<u8>) -> bool {
    let ok = Nfsstat4::Ok;
    match op {
        42 => {
            encode_compound_header(out, ok, b"", 1);
            encode_resop_status(out, Opnum::ExchangeId, ok);
            out.put_u64(7); // clientid
            out.put_u32(1); // sequenceid
            out.put_u32(0); // flags
            out.put_u32(0); // SP4_NONE
            out.put_u64(0); // server owner minor id
            out.put_opaque(b"srv");
            out.put_opaque(b"scope");
            out.put_u32(0); // no impl id
        }
        43 => {
            encode_compound_header(out, ok, b"", 1);
            encode_resop_status(out, Opnum::CreateSession, ok);
            let fore = ChannelAttrs {
                headerpadsize: 0,
                maxrequestsize: 1 << 20,
                maxresponsesize: 1 << 20,
                maxresponsesize_cached: 8192,
                maxoperations: 16,
                maxrequests: 8,
                rdma_ird: RdmaIrd(None),
            };
            CreateSessionOk {
                sessionid: SID,
                sequence: 1,
                flags,
                fore,
                back: fore,
            }
            .encode(out);
        }
        44 | 57 => {
            encode_compound_header(out, ok, b"", 1);
            encode_resop_status(out, Opnum::from_u32(op).unwrap(), ok);
        }
        _ => return false,
    }
    true
}

/// Serves the first connection accepted on `l` until the client goes: each call's
/// procedure and arguments go to `answer`, which appends its results to the reply (an
/// accepted SUCCESS header is already in it).
#[allow(dead_code)] // Not every test that includes this file serves with it.
pub fn serve_calls(l: std::net::TcpListener, answer: impl FnMut(u32, &[u8], &mut Vec<u8>)) {
    serve_with_callbacks(l, answer, |_| {}, None);
}

/// The callback program the client names at CREATE_SESSION.
pub const CB_PROGRAM: u32 = 0x4000_0000;

/// [`serve_calls`], and the back channel: each CB_COMPOUND's arguments that arrive on
/// `callbacks` go to the client as a call on the same connection (between replies, as
/// a server sends them), and the results of the client's replies go to `on_reply`.
pub fn serve_with_callbacks(
    l: std::net::TcpListener,
    mut answer: impl FnMut(u32, &[u8], &mut Vec<u8>),
    mut on_reply: impl FnMut(&[u8]),
    callbacks: Option<std::sync::mpsc::Receiver<Vec<u8>>>,
) {
    use std::io::{Read, Write};
    enum Event {
        Record(Vec<u8>),
        Callback(Vec<u8>),
    }
    let Ok((mut s, _)) = l.accept() else {
        return;
    };
    let (tx, events) = std::sync::mpsc::channel();
    let mut reader = s.try_clone().unwrap();
    let records = tx.clone();
    std::thread::spawn(move || loop {
        let mut h = [0u8; 4];
        if reader.read_exact(&mut h).is_err() {
            return;
        }
        let len = (u32::from_be_bytes(h) & 0x7fff_ffff) as usize;
        let mut rec = vec![0; len];
        if reader.read_exact(&mut rec).is_err() || records.send(Event::Record(rec)).is_err() {
            return;
        }
    });
    if let Some(cbs) = callbacks {
        std::thread::spawn(move || {
            while let Ok(args) = cbs.recv() {
                if tx.send(Event::Callback(args)).is_err() {
                    return;
                }
            }
        });
    } else {
        drop(tx);
    }
    let mut xid = 0xcb00_0000u32;
    while let Ok(event) = events.recv() {
        let body = match event {
            Event::Record(rec) if u32_at(&rec, 4) == 1 => {
                let reply = dbio_rpc::decode_reply(&rec).unwrap();
                on_reply(reply.results().unwrap());
                continue;
            }
            Event::Record(rec) => {
                let call = dbio_rpc::decode_call(&rec).unwrap();
                let mut body = Vec::new();
                dbio_rpc::encode_reply_success(&mut body, call.xid);
                answer(call.proc_, call.args, &mut body);
                body
            }
            Event::Callback(args) => {
                xid += 1;
                let mut body = Vec::new();
                let cred = dbio_rpc::Credential::none();
                dbio_rpc::encode_call(&mut body, xid, CB_PROGRAM, 1, 1, &cred);
                body.extend_from_slice(&args);
                body
            }
        };
        let mut out = ((body.len() as u32) | 0x8000_0000).to_be_bytes().to_vec();
        out.extend_from_slice(&body);
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

/// SEQUENCE's result (session [`SID`], 8 slots) for the slot and sequence id the call
/// in `args` (a COMPOUND with SEQUENCE first) used.
#[allow(dead_code)] // Not every test that includes this file answers SEQUENCE with it.
pub fn sequence_ok(args: &[u8], out: &mut Vec<u8>) {
    use dbio_nfs::proto::nfs4::SequenceOk;
    use dbio_xdr::XdrEncode;
    let at = 4 + (u32_at(args, 0) as usize).div_ceil(4) * 4 + 8;
    SequenceOk {
        sessionid: SID,
        sequenceid: u32_at(args, at + 4 + 16),
        slotid: u32_at(args, at + 4 + 20),
        highest_slotid: 7,
        target_highest_slotid: 7,
        status_flags: 0,
    }
    .encode(out);
}

/// Where a COMPOUND's op count is, and its first op, in its arguments `args`.
#[allow(dead_code)] // Not every test that includes this file parses COMPOUNDs.
pub fn ops_at(args: &[u8]) -> usize {
    4 + (u32_at(args, 0) as usize).div_ceil(4) * 4 + 4
}

/// The op after SEQUENCE (whose arguments are 32 bytes).
#[allow(dead_code)]
pub fn second_op(args: &[u8]) -> u32 {
    u32_at(args, ops_at(args) + 4 + 4 + 32)
}

/// Where the op after SEQUENCE and PUTFH starts.
#[allow(dead_code)]
pub fn third_op(args: &[u8]) -> usize {
    let putfh = ops_at(args) + 4 + 4 + 32;
    putfh + 8 + (u32_at(args, putfh + 4) as usize).div_ceil(4) * 4
}

/// A universal address (`a.b.c.d.p1.p2`) of `addr`, as a device names a data server.
#[allow(dead_code)]
pub fn netaddr(addr: std::net::SocketAddr) -> dbio_nfs::proto::nfs4::NetAddr {
    let p = addr.port();
    dbio_nfs::proto::nfs4::NetAddr {
        netid: "tcp".into(),
        uaddr: format!("{}.{}.{}", addr.ip(), p >> 8, p & 0xff),
    }
}

/// OPEN's result: `stateid`, no delegation.
#[allow(dead_code)]
pub fn open_ok(out: &mut Vec<u8>, stateid: dbio_nfs::proto::nfs4::Stateid) {
    encode_resop_status(out, Opnum::Open, Nfsstat4::Ok);
    stateid.encode(out);
    out.put_u32(1); // change_info4: atomic, before, after
    out.put_u64(1);
    out.put_u64(2);
    out.put_u32(0x4); // OPEN4_RESULT_LOCKTYPE_POSIX
    out.put_u32(0); // attrset: empty bitmap
    out.put_u32(0); // OPEN_DELEGATE_NONE
}

/// LAYOUTGET's result: one read/write files layout of the whole file.
#[allow(dead_code)]
pub fn layoutget_ok(
    out: &mut Vec<u8>,
    stateid: dbio_nfs::proto::nfs4::Stateid,
    layout: dbio_nfs::proto::nfs4::FileLayout,
) {
    encode_resop_status(out, Opnum::Layoutget, Nfsstat4::Ok);
    out.put_u32(0); // return on close: no
    stateid.encode(out);
    out.put_u32(1); // one layout
    out.put_u64(0);
    out.put_u64(u64::MAX);
    out.put_u32(2); // LAYOUTIOMODE4_RW
    out.put_u32(1); // LAYOUT4_NFSV4_1_FILES
    let mut body = Vec::new();
    layout.encode(&mut body);
    out.put_opaque(&body);
}

/// GETDEVICEINFO's result: a files device.
#[allow(dead_code)]
pub fn deviceinfo_ok(out: &mut Vec<u8>, device: dbio_nfs::proto::nfs4::FileDsAddr) {
    encode_resop_status(out, Opnum::Getdeviceinfo, Nfsstat4::Ok);
    out.put_u32(1); // LAYOUT4_NFSV4_1_FILES
    let mut body = Vec::new();
    device.encode(&mut body);
    out.put_opaque(&body);
    out.put_u32(0); // no notifications
}

/// A pool on the scripted server at `addr` ("4.1" or "pnfs" as `version`): one
/// connection, no worker threads, so that every call the test makes is one the script
/// sees in order.
#[allow(dead_code)]
pub fn scripted_pool(addr: std::net::SocketAddr, version: &str) -> dbio_nfs::pool::Pool {
    let url = dbio_nfs::NfsUrl::parse(&format!("nfs://{addr}/export?version={version}")).unwrap();
    let opts = dbio_nfs::ClientConfig {
        conns: 1,
        workers: 0,
        ..dbio_nfs::ClientConfig::new(url.clone())
    };
    dbio_nfs::pool::Pool::open(&opts).unwrap().0
}

/// A pNFS pool on the scripted metadata server at `mds` with the layout of the
/// scripted file (handle "file", /export/f) fetched with an OPEN by handle: the pool,
/// the handle and the file's route.
#[allow(dead_code)]
pub fn scripted_pnfs_file(
    mds: std::net::SocketAddr,
) -> (
    dbio_nfs::pool::Pool,
    dbio_nfs::proto::nfs4::Fh4,
    std::sync::Arc<dbio_nfs::v41::pnfs::FileRoute>,
) {
    let pool = scripted_pool(mds, "pnfs");
    let layouts = pool.layouts().unwrap().clone();
    let fh = dbio_nfs::proto::nfs4::Fh4::new(b"file").unwrap();
    let client = pool.v41().unwrap().client();
    let rw = dbio_nfs::proto::nfs4::LayoutIomode::Rw;
    let open = pool
        .block_on(client.layout_open(fh, rw, "/export/f"))
        .unwrap();
    let route = pool
        .block_on(layouts.fetch(fh, "/export/f", open, "first I/O"))
        .unwrap();
    (pool, fh, route)
}
