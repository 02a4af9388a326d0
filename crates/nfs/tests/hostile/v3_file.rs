//! An NFSv3 file for whole-file reads: a scripted server whose READs the case writes,
//! and the download through a pool's data path that `dbio nfs cat` and `cp` use.

use std::sync::atomic::AtomicBool;

use dbio_nfs::copy::{self, CopyOptions};
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs3::{self, ReadArgs};
use dbio_nfs::ClientConfig;
use dbio_xdr::{BufMut, XdrDecode, XdrPut};

use super::server::*;

/// READ results: OK, no attributes, `count`, `eof`, then `data` as opaque.
pub fn read_res(count: u32, eof: bool, data: &[u8]) -> Vec<u8> {
    let mut r = Vec::new();
    r.put_u32(0);
    r.put_xdr_bool(false);
    r.put_u32(count);
    r.put_xdr_bool(eof);
    r.put_opaque(data);
    r
}

/// Downloads the export's root as a file through a pool's data path, as `dbio nfs cat`
/// and `cp` do: up to the size GETATTR gives. Returns the bytes handed on, or the
/// copy's error.
pub fn try_pool_download(server: &Server) -> Result<Vec<u8>, String> {
    let options = ClientConfig {
        conns: 1,
        workers: 0,
        client: client_options(),
        ..ClientConfig::new(server.url())
    };
    let (pool, rest) = Pool::open(&options).expect("pool");
    let fs = pool.fs();
    let (fh, attr) = pool.block_on(fs.lookup_path(&rest)).expect("getattr");
    let mut dp = pool.data_path(4, 1 << 16).expect("data path");
    let file = dp.add_file(fh.as_bytes()).expect("handle");
    let opts = CopyOptions {
        depth: 4,
        io_size: 1 << 16,
        ..CopyOptions::default()
    };
    let stop = AtomicBool::new(false);
    let mut got = Vec::new();
    let n = pool
        .block_on(copy::download(
            &mut dp,
            file,
            attr.size,
            &opts,
            "/export/f",
            &stop,
            |off, d| {
                assert_eq!(off, got.len() as u64);
                got.extend_from_slice(d);
                Ok(())
            },
            "memory",
        ))
        .map_err(|e| e.to_string())?;
    assert_eq!(n, got.len() as u64);
    Ok(got)
}

/// [`try_pool_download`] that must succeed.
pub fn pool_download(server: &Server) -> Vec<u8> {
    try_pool_download(server).expect("download")
}

/// A server whose GETATTR says a regular file of `size` bytes and whose READ answers
/// with `make(offset, requested count)` as results.
pub fn file_server(
    size: u64,
    make: impl Fn(u64, u32) -> Vec<u8> + Send + Sync + 'static,
) -> Server {
    nfs_server(move |call, peer| {
        if call.prog != nfs3::PROGRAM {
            return Step::Default;
        }
        match call.proc_ {
            1 => {
                let mut res = Vec::new();
                nfs3::encode_res_ok(
                    &mut res,
                    &nfs3::GetattrOk {
                        attributes: attrs(nfs3::Ftype3::Reg, size),
                    },
                );
                peer.reply(call.xid, &res);
                Step::Done
            }
            6 => {
                let Ok(args) = ReadArgs::from_xdr(&call.args) else {
                    return Step::Close;
                };
                peer.reply(call.xid, &make(args.offset, args.count));
                Step::Done
            }
            _ => Step::Default,
        }
    })
}
