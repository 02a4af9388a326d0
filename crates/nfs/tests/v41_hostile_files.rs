//! The NFSv4.1 file operations against a scripted server on loopback that answers
//! wrongly in ways ganesha never does: an OPEN that asks for OPEN_CONFIRM (NFSv4.0
//! only), a READ with more data than was asked for, a WRITE that claims more bytes than
//! were sent, a READDIR whose cookie never moves. Each is a one-line error naming the
//! path, never a panic or a hang. And a
//! whole-file copy over a pool's data path whose READs bring more than asked and never
//! say EOF hands on no more than the size, and ends.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BufMut;
use dbio_nfs::copy::{self, CopyOptions};
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, Fh4, Ftype4, Nfsstat4, Opnum, StableHow, Stateid,
};
use dbio_nfs::v41::{Access, Attr, Client, OpenFile, SessionOptions};
use dbio_nfs::ClientConfig;
use dbio_nfs::NfsUrl;
use dbio_xdr::{XdrEncode, XdrPut};

#[path = "common/v41_script.rs"]
mod v41_script;
// The NFSv3 side of the READ length rule's test.
#[allow(dead_code)]
#[path = "hostile/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "hostile/v3_file.rs"]
mod v3_file;
use v41_script::{answer_session_op, sequence_ok, serve_calls, u32_at};

/// The extra bytes the hostile READ returns, and the hostile WRITE claims.
const EXTRA: u32 = 100;

/// Where the op after SEQUENCE and PUTFH starts (tag, minor version, count, SEQUENCE's
/// 32 bytes of arguments, PUTFH's handle).
fn third_op(args: &[u8]) -> usize {
    let at = 4 + (u32_at(args, 0) as usize).div_ceil(4) * 4 + 8;
    let putfh = at + 4 + 32;
    putfh + 8 + (u32_at(args, putfh + 4) as usize).div_ceil(4) * 4
}

/// Answers one COMPOUND.
fn answer(args: &[u8], out: &mut Vec<u8>) {
    let ok = Nfsstat4::Ok;
    let at = 4 + (u32_at(args, 0) as usize).div_ceil(4) * 4 + 4;
    let count = u32_at(args, at) as usize;
    let op = u32_at(args, at + 4);
    if answer_session_op(op, out) {
        return;
    }
    match op {
        53 => {}
        _ => panic!("unexpected op {op}"),
    }
    encode_compound_header(out, ok, b"", count);
    encode_resop_status(out, Opnum::Sequence, ok);
    sequence_ok(args, out);
    if count == 2 {
        encode_resop_status(out, Opnum::ReclaimComplete, ok);
        return;
    }
    encode_resop_status(out, Opnum::Putfh, ok);
    let third = third_op(args);
    match u32_at(args, third) {
        // OPEN, GETFH, GETATTR: a stateid, and rflags with OPEN4_RESULT_CONFIRM.
        18 => {
            encode_resop_status(out, Opnum::Open, ok);
            Stateid {
                seqid: 1,
                other: [9; 12],
            }
            .encode(out);
            out.put_u32(1); // change_info4: atomic, before, after
            out.put_u64(1);
            out.put_u64(2);
            out.put_u32(0x2 | 0x4); // CONFIRM | LOCKTYPE_POSIX
            out.put_u32(0); // attrset: empty bitmap
            out.put_u32(0); // OPEN_DELEGATE_NONE
            encode_resop_status(out, Opnum::Getfh, ok);
            out.put_opaque(b"file");
            encode_resop_status(out, Opnum::Getattr, ok);
            out.put_u32(1); // bitmap of one word: type (1), size (4)
            out.put_u32((1 << 1) | (1 << 4));
            out.put_u32(12);
            out.put_u32(1); // NF4REG
            out.put_u64(0);
        }
        // READ: more data than asked for.
        25 => {
            let want = u32_at(args, third + 4 + 16 + 8);
            encode_resop_status(out, Opnum::Read, ok);
            out.put_u32(0); // eof false
            out.put_opaque(&vec![7u8; (want + EXTRA) as usize]);
        }
        // WRITE: a count beyond the data sent.
        38 => {
            let len = u32_at(args, third + 4 + 16 + 8 + 4);
            encode_resop_status(out, Opnum::Write, ok);
            out.put_u32(len + EXTRA);
            out.put_u32(2); // FILE_SYNC4
            out.put_slice(&[5; 8]);
        }
        // READDIR: the same entry with the same cookie every time, never eof.
        26 => {
            READDIRS.fetch_add(1, SeqCst);
            encode_resop_status(out, Opnum::Readdir, ok);
            out.put_slice(&[3; 8]); // cookieverf
            out.put_u32(1); // an entry follows
            out.put_u64(5);
            out.put_opaque(b"again");
            out.put_u32(0); // fattr4: empty bitmap, empty attributes
            out.put_u32(0);
            out.put_u32(0); // no more entries
            out.put_u32(0); // eof false
        }
        other => panic!("unexpected third op {other}"),
    }
}

/// READDIRs the scripted server answered.
static READDIRS: AtomicU32 = AtomicU32::new(0);

fn serve(l: TcpListener) {
    serve_calls(l, |_, args, body| answer(args, body));
}

#[test]
fn wrong_answers_to_file_operations_are_one_line_errors() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = std::thread::spawn(move || serve(l));
    let url = NfsUrl::parse(&format!("nfs://127.0.0.1:{port}/export?version=4.1")).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let opts = ClientConfig::new(url.clone()).client;
        let c = Client::connect(&url, &opts, SessionOptions::default())
            .await
            .unwrap();
        let dir = Fh4::new(b"dir").unwrap();
        let e = c
            .open(dir, "f", Access::Both, "/export/f")
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "NFSv4.1 /export/f: malformed reply: OPEN asks for OPEN_CONFIRM, \
             which NFSv4.1 does not have"
        );
        let file = OpenFile {
            fh: Fh4::new(b"file").unwrap(),
            stateid: Stateid::ANONYMOUS,
            attr: Attr {
                ftype: Ftype4::Reg,
                size: 0,
                mode: 0o644,
                fileid: 1,
                nlink: 1,
                used: None,
                fsid: None,
                uid: None,
                gid: None,
                atime: None,
                mtime: None,
                ctime: None,
            },
            rflags: 0,
            delegated: false,
            path: "/export/f".into(),
        };
        let e = c.read_open(&file, 0, 4096).await.unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "READ /export/f from 127.0.0.1:{port}: the READ reply carries 4196 bytes, \
                 4096 were asked"
            )
        );
        let e = c
            .write(&file, 0, &[1; 4096], StableHow::FileSync)
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "NFSv4.1 /export/f: malformed reply: WRITE wrote more bytes than were sent"
        );
        // A listing whose second reply brings nothing new stops there, in the file API
        // (the same guard for every version).
        let c = Arc::new(c);
        let fs = dbio_nfs::Fs::v41(c.clone());
        let dir = dbio_nfs::fs::Handle::new(b"dir").unwrap();
        let e = fs.readdir(&dir, "export/d").await.unwrap_err().to_string();
        assert!(
            e.contains("READDIR") && e.contains("/export/d") && e.contains("no progress"),
            "{e}"
        );
        assert_eq!(READDIRS.load(SeqCst), 2);
        drop(fs);
        Arc::into_inner(c).unwrap().close().await.unwrap();
    });
    drop(rt);
    server.join().unwrap();
}

/// The file of [`copy_server`]: READs at offsets below this bring data, beyond nothing.
const DATA_END: u64 = 150_000;

/// Answers one COMPOUND of a pool and its data path: the session's ops (but a refused
/// DESTROY_SESSION), READs (`extra` bytes more than asked below [`DATA_END`], nothing
/// beyond, never EOF), and anything else (the lease renewal's lookups) with
/// NFS4ERR_NOTSUPP.
fn answer_copy(args: &[u8], out: &mut Vec<u8>, reads: &AtomicU32, extra: u32) {
    let ok = Nfsstat4::Ok;
    let at = 4 + (u32_at(args, 0) as usize).div_ceil(4) * 4 + 4;
    let count = u32_at(args, at) as usize;
    let op = u32_at(args, at + 4);
    if op == 44 {
        // DESTROY_SESSION refused, as by a server that already forgot the session.
        encode_compound_header(out, Nfsstat4::Badsession, b"", 1);
        encode_resop_status(out, Opnum::DestroySession, Nfsstat4::Badsession);
        return;
    }
    if answer_session_op(op, out) {
        return;
    }
    assert_eq!(op, 53, "a COMPOUND without SEQUENCE");
    let second = u32_at(args, at + 8 + 32);
    let read = count == 3 && second == 22 && u32_at(args, third_op(args)) == 25;
    let status = if count == 1 || read || second == 58 {
        ok
    } else {
        Nfsstat4::Notsupp
    };
    encode_compound_header(out, status, b"", count.min(2) + usize::from(read));
    encode_resop_status(out, Opnum::Sequence, ok);
    sequence_ok(args, out);
    if count == 1 {
        return;
    }
    let second_op = Opnum::from_u32(second).unwrap_or(Opnum::Putfh);
    encode_resop_status(out, second_op, status);
    if !read {
        return;
    }
    reads.fetch_add(1, SeqCst);
    let third = third_op(args);
    let offset =
        u64::from(u32_at(args, third + 4 + 16)) << 32 | u64::from(u32_at(args, third + 4 + 20));
    let want = u32_at(args, third + 4 + 16 + 8);
    encode_resop_status(out, Opnum::Read, ok);
    out.put_u32(0); // eof false, always
    let n = if offset < DATA_END { want + extra } else { 0 };
    out.put_opaque(&vec![7u8; n as usize]);
}

/// A scripted NFSv4.1 server for one connection; counts the READs.
fn copy_server(l: TcpListener, reads: Arc<AtomicU32>, extra: u32) {
    serve_calls(l, |proc_, args, body| {
        // NULL (procedure 0) has no results.
        if proc_ != 0 {
            answer_copy(args, body, &reads, extra);
        }
    });
}

/// Downloads a file of `size` bytes (as its attributes would say) through a pool's data
/// path with the open's stateid, from a server whose READs bring `extra` bytes more
/// than asked; returns the bytes handed on and the READs sent, or the copy's error.
fn download_from_script(size: u64, extra: u32) -> Result<(Vec<u8>, u32), String> {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let reads = Arc::new(AtomicU32::new(0));
    let r = reads.clone();
    std::thread::spawn(move || copy_server(l, r, extra));
    let url = NfsUrl::parse(&format!("nfs://127.0.0.1:{port}/export?version=4.1")).unwrap();
    let options = ClientConfig {
        conns: 1,
        workers: 0,
        ..ClientConfig::new(url.clone())
    };
    let (pool, _) = Pool::open(&options).unwrap();
    let mut dp = pool.data_path(4, 1 << 16).unwrap();
    let file = dp.add_file(b"file").unwrap();
    dp.set_stateid(
        file,
        Stateid {
            seqid: 1,
            other: [9; 12],
        },
    );
    let opts = CopyOptions {
        depth: 4,
        io_size: 1 << 16,
        ..CopyOptions::default()
    };
    let stop = AtomicBool::new(false);
    let mut got = Vec::new();
    let t0 = Instant::now();
    let done = pool.block_on(copy::download(
        &mut dp,
        file,
        size,
        &opts,
        "/export/f",
        &stop,
        |off, d| {
            assert_eq!(off, got.len() as u64);
            got.extend_from_slice(d);
            Ok(())
        },
        "memory",
    ));
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    drop(dp);
    // Teardown goes on past the refused DESTROY_SESSION and reports it.
    let e = pool.close().unwrap_err().to_string();
    assert!(
        e.contains("DESTROY_SESSION") && e.contains("NFS4ERR_BADSESSION"),
        "{e}"
    );
    let n = done.map_err(|e| e.to_string())?;
    assert_eq!(n, got.len() as u64);
    Ok((got, reads.load(SeqCst)))
}

#[test]
fn whole_file_read_over_v41_hands_on_no_more_than_the_size() {
    // Every READ brings all it was asked for, past the file's size, and none says EOF
    // (a READ longer than asked is an error: the test below).
    let (got, _) = download_from_script(DATA_END, 0).unwrap();
    assert_eq!(got.len() as u64, DATA_END);
    assert!(got.iter().all(|b| *b == 7));
    // A size of 2^64 - 1: the READ that brings nothing is the end; only the first
    // window and that READ went out.
    let (got, reads) = download_from_script(u64::MAX, 0).unwrap();
    assert_eq!(got.len(), 3 << 16);
    assert!(reads <= 8, "{reads} READs");
}

#[test]
fn a_long_read_is_the_same_error_in_both_versions() {
    // The same file read the same way (`dbio nfs cat`'s whole-file read, 64 KiB READs)
    // from an NFSv4.1 server and an NFSv3 server whose READs bring 100 bytes more than
    // asked: one error, word for word.
    let v41 = download_from_script(DATA_END, EXTRA).unwrap_err();
    let server = v3_file::file_server(DATA_END, |_, count| {
        let data = vec![7u8; (count + EXTRA) as usize];
        v3_file::read_res(data.len() as u32, false, &data)
    });
    let v3 = v3_file::try_pool_download(&server).unwrap_err();
    assert_eq!(
        v41,
        "READ /export/f at offset 0: the READ reply carries 65636 bytes, 65536 were asked"
    );
    assert_eq!(v3, v41);
}
