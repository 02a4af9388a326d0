//! NFS3ERR_JUKEBOX ("busy, try later") is retried with backoff, against a
//! scripted server (real servers answer it only when data is offline).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dbio_nfs::proto::mount3::{self, DirPath, Export, Exports, MountOk};
use dbio_nfs::proto::nfs3::{
    self, encode_res_fail, encode_res_ok, Fattr3, FileHandle, FsinfoOk, Ftype3, GetattrOk, Nfsstat3,
};
use dbio_nfs::{ClientOptions, Nfs3Client, NfsUrl};
use dbio_rpc::{decode_call, encode_reply_success};

fn read_record(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut mark = [0u8; 4];
    s.read_exact(&mut mark).ok()?;
    let len = (u32::from_be_bytes(mark) & 0x7fff_ffff) as usize;
    let mut rec = vec![0u8; len];
    s.read_exact(&mut rec).ok()?;
    Some(rec)
}

fn attrs() -> Fattr3 {
    Fattr3 {
        ftype: Ftype3::Dir,
        mode: 0o755,
        nlink: 2,
        uid: 0,
        gid: 0,
        size: 4096,
        used: 4096,
        rdev: Default::default(),
        fsid: 1,
        fileid: 1,
        atime: Default::default(),
        mtime: Default::default(),
        ctime: Default::default(),
    }
}

/// Serves MOUNT EXPORT/MNT, NFS FSINFO, and GETATTR answered JUKEBOX
/// `busy` times before succeeding.
fn serve(mut s: TcpStream, busy: Arc<AtomicU32>) {
    let root = FileHandle::new(b"root-handle").unwrap();
    while let Some(rec) = read_record(&mut s) {
        let call = decode_call(&rec).unwrap();
        let mut body = Vec::new();
        encode_reply_success(&mut body, call.xid);
        match (call.prog, call.proc_) {
            (mount3::PROGRAM, 5) => {
                let list = Exports(vec![Export {
                    dir: DirPath::from("/export"),
                    groups: vec![],
                }]);
                dbio_xdr::XdrEncode::encode(&list, &mut body);
            }
            (mount3::PROGRAM, 1) => mount3::encode_mnt(
                &mut body,
                &Ok(MountOk {
                    fhandle: root,
                    auth_flavors: vec![1],
                }),
            ),
            (nfs3::PROGRAM, 19) => encode_res_ok(
                &mut body,
                &FsinfoOk {
                    obj_attributes: None,
                    rtmax: 65536,
                    rtpref: 65536,
                    rtmult: 4096,
                    wtmax: 65536,
                    wtpref: 65536,
                    wtmult: 4096,
                    dtpref: 8192,
                    maxfilesize: u64::MAX,
                    time_delta: Default::default(),
                    properties: 0,
                },
            ),
            (nfs3::PROGRAM, 1) => {
                if busy.load(Ordering::SeqCst) > 0 {
                    busy.fetch_sub(1, Ordering::SeqCst);
                    encode_res_fail(&mut body, 1, Nfsstat3::Jukebox);
                } else {
                    encode_res_ok(
                        &mut body,
                        &GetattrOk {
                            attributes: attrs(),
                        },
                    );
                }
            }
            other => panic!("unexpected call {other:?}"),
        }
        let mut out = ((body.len() as u32) | 0x8000_0000).to_be_bytes().to_vec();
        out.extend_from_slice(&body);
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

#[test]
fn jukebox_is_retried_with_backoff() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let busy = Arc::new(AtomicU32::new(0));
    let b = busy.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let b = b.clone();
            std::thread::spawn(move || serve(s.unwrap(), b));
        }
    });
    let url = NfsUrl::parse(&format!(
        "nfs://127.0.0.1/export?mountport={port}&nfsport={port}"
    ))
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let options = ClientOptions {
            jukebox_retries: 3,
            jukebox_delay: Duration::from_millis(20),
            ..ClientOptions::default()
        };
        let (c, _) = Nfs3Client::mount(&url, options).await.unwrap();
        // Busy twice: retried after 20 and 40 ms, then answered.
        busy.store(2, Ordering::SeqCst);
        let t0 = Instant::now();
        let a = c.getattr(c.root(), "").await.unwrap();
        assert_eq!(a.fileid, 1);
        assert!(
            t0.elapsed() >= Duration::from_millis(60),
            "{:?}",
            t0.elapsed()
        );
        // Busy for longer than the retries: the JUKEBOX error comes back.
        busy.store(10, Ordering::SeqCst);
        let err = c.getattr(c.root(), "").await.unwrap_err();
        assert_eq!(err.status(), Some(Nfsstat3::Jukebox));
        assert!(err.to_string().contains("GETATTR /export"), "{err}");
    });
}
