//! NFSv4.1 file operations against nfs-ganesha (scripts/nfs-server): exclusive create
//! (and its safe resend after a lost reply), WRITE/COMMIT/READ with the open stateid, SETATTR, ACCESS,
//! RENAME, REMOVE, CREATE of directories, the space figures, the errors a caller meets;
//! and interop: what dbio writes over NFSv4.1 reads back the same over NFSv3 (dbio's
//! client and libnfs's nfs-cat), and the other way round. Skips without ganesha unless
//! DBIO_REQUIRE_PEERS=1.

mod common;

use std::process::Command;

use dbio_nfs::copy::{self, CopyOptions};
use dbio_nfs::fs::{join, Create, Stable};
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs4::{
    access, share, ArgOp, Compound, Fh4, Ftype4, Nfsstat4, OpenClaim, OpenHow, Opnum, SetAttrs,
    StableHow, MINOR_VERSION,
};
use dbio_nfs::v41::{self, create_verifier, Access, Client, SessionOptions};
use dbio_nfs::ClientConfig;
use dbio_nfs::Fs;
use dbio_nfs::{NfsError, NfsUrl};
use std::sync::atomic::AtomicBool;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn connect(s: &common::Server) -> Client {
    let u = NfsUrl::parse(&format!("nfs://{}/export?version=4.1", s.addr)).unwrap();
    let opts = ClientConfig::new(u.clone()).client;
    Client::connect(&u, &opts, SessionOptions::default())
        .await
        .unwrap()
}

/// Pseudo-random bytes (xorshift), different for each seed.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// The status of an NFSv4.1 error, and that its message names `op` and `path`.
fn status4(e: NfsError, op: Opnum, path: &str) -> Nfsstat4 {
    let msg = e.to_string();
    // `OP server:path: status`
    assert!(
        msg.starts_with(&format!("{op} ")) && msg.contains(&format!(":{path}: ")),
        "error does not name {op} and {path}: {msg}"
    );
    match e {
        NfsError::Status4 { status, .. } => status,
        other => panic!("not a status error: {other}"),
    }
}

/// The whole file, up to its size, READs with the open stateid.
async fn read_all(c: &Client, f: &v41::OpenFile) -> Vec<u8> {
    let mut got = Vec::new();
    let size = c.getattr(f.fh, &f.path).await.unwrap().size;
    while (got.len() as u64) < size {
        let want = (size - got.len() as u64).min(u64::from(c.max_read())) as u32;
        let (d, eof) = c.read_open(f, got.len() as u64, want).await.unwrap();
        got.extend_from_slice(&d);
        if eof || d.is_empty() {
            break;
        }
    }
    got
}

/// A pool over the export, NFSv3 or NFSv4.1 (its own runtime: not inside one).
fn pool(s: &common::Server, version: &str) -> (Pool, Fs, String) {
    let url = match version {
        "3" => s.url("/export/"),
        v => format!("nfs://{}/export/?version={v}", s.addr),
    };
    let options = ClientConfig {
        conns: 1,
        workers: 0,
        ..ClientConfig::new(NfsUrl::parse(&url).unwrap())
    };
    let (pool, rest) = Pool::open(&options).unwrap();
    let fs = pool.fs();
    (pool, fs, rest)
}

const COPY: CopyOptions = CopyOptions {
    depth: 16,
    io_size: 256 << 10,
    read_window: 4 << 20,
    stable: Stable::Unstable,
    commit_every: u64::MAX,
};

/// Writes `data` to `name` in the export, created or truncated, pipelined over the data
/// path (UNSTABLE, then COMMIT).
fn upload(s: &common::Server, version: &str, name: &str, data: &[u8]) {
    let (pool, fs, rest) = pool(s, version);
    let rel = join(&rest, name);
    let open = pool
        .block_on(async {
            let (dir, _) = fs.lookup_path(&rest).await?;
            fs.create(&dir, name, 0o644, Create::Truncate, &rel).await
        })
        .unwrap();
    let mut dp = pool.data_path(COPY.depth, COPY.io_size).unwrap();
    let id = copy::add_file(&fs, &mut dp, &open).unwrap();
    let src = |off: u64, buf: &mut [u8]| {
        let rest = data.get(off as usize..).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    };
    let stop = AtomicBool::new(false);
    let up = pool
        .block_on(copy::upload(
            &fs,
            &mut dp,
            id,
            &open,
            &COPY,
            &stop,
            src,
            "data",
            |_| {},
        ))
        .unwrap();
    assert_eq!(up.bytes, data.len() as u64);
    drop(dp);
    pool.block_on(fs.close(open)).unwrap();
    pool.close().unwrap();
}

/// The whole file `name` of the export, over the data path.
fn download(s: &common::Server, version: &str, name: &str) -> Vec<u8> {
    let (pool, fs, rest) = pool(s, version);
    let rel = join(&rest, name);
    let (open, size) = pool
        .block_on(async {
            let (fh, a) = fs.lookup_path(&rel).await?;
            Ok::<_, NfsError>((
                fs.open_handle(&fh, dbio_nfs::fs::Access::Read, &rel)
                    .await?,
                a.size,
            ))
        })
        .unwrap();
    let mut dp = pool.data_path(COPY.depth, COPY.io_size).unwrap();
    let id = copy::add_file(&fs, &mut dp, &open).unwrap();
    let mut got = Vec::new();
    let stop = AtomicBool::new(false);
    pool.block_on(copy::download(
        &mut dp,
        id,
        size,
        &COPY,
        &rel,
        &stop,
        |_, d| {
            got.extend_from_slice(d);
            Ok(())
        },
        "memory",
    ))
    .unwrap();
    drop(dp);
    pool.block_on(fs.close(open)).unwrap();
    pool.close().unwrap();
    got
}

#[test]
fn create_write_commit_read_rename_remove_over_v41() {
    let Some(s) = common::Server::start("v41files") else {
        return;
    };
    rt().block_on(async {
        let c = connect(&s).await;
        let (root, _) = c.lookup_path("/export").await.unwrap();

        // Exclusive create whose reply is lost: the OPEN runs on the server, the
        // caller never learns of it...
        let verf = create_verifier();
        let owner = c.open_owner();
        let lost = Compound::new("open", MINOR_VERSION)
            .putfh(root)
            .op(ArgOp::Open {
                seqid: 0,
                share_access: share::ACCESS_BOTH | share::ACCESS_WANT_NO_DELEG,
                share_deny: share::DENY_NONE,
                clientid: c.session().clientid(),
                owner: &owner,
                how: OpenHow::Exclusive41(
                    verf,
                    SetAttrs {
                        mode: Some(0o640),
                        ..SetAttrs::NONE
                    },
                ),
                claim: OpenClaim::Null("a.bin".into()),
            });
        c.session().compound(&lost, "/export/a.bin").await.unwrap();
        // ...and makes the same call again: it opens the file the first one made.
        let f = c
            .create(root, "a.bin", 0o640, verf, "/export/a.bin")
            .await
            .unwrap();
        eprintln!(
            "OPEN rflags {:#x}, delegation granted: {}",
            f.rflags, f.delegated
        );
        assert_eq!(f.rflags & v41::OPEN4_RESULT_CONFIRM, 0);
        let (fh, _) = c.lookup_path("/export/a.bin").await.unwrap();
        assert_eq!(fh, f.fh);
        let a = c.getattr(f.fh, "/export/a.bin").await.unwrap();
        assert_eq!((a.ftype, a.size, a.mode), (Ftype4::Reg, 0, 0o640));
        assert_eq!(f.attr, a);
        // The times that held the verifier are real times again (within a day of
        // this host's clock; ganesha keeps the verifier there, decades ahead).
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let mtime = a.mtime.unwrap().seconds;
        assert!((mtime - now).abs() < 86_400, "mtime {mtime}, now {now}");
        let again = f.clone();
        // ...another one (another verifier) fails, naming the op and the path.
        let e = c
            .create(root, "a.bin", 0o640, create_verifier(), "/export/a.bin")
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("OPEN {}:/export/a.bin: NFS4ERR_EXIST", c.server())
        );
        // A file made behind the server's back is not truncated by a create either.
        std::fs::write(s.export_dir.join("kept.txt"), b"keep me").unwrap();
        let e = c
            .create(
                root,
                "kept.txt",
                0o644,
                create_verifier(),
                "/export/kept.txt",
            )
            .await
            .unwrap_err();
        assert_eq!(status4(e, Opnum::Open, "/export/kept.txt"), Nfsstat4::Exist);
        assert_eq!(
            std::fs::read(s.export_dir.join("kept.txt")).unwrap(),
            b"keep me"
        );

        // UNSTABLE writes, then COMMIT: its verifier is that of the writes.
        let data = pattern(3 << 20 | 4321, 1);
        let chunk = c.max_write() as usize;
        let mut verifiers = Vec::new();
        for (i, piece) in data.chunks(chunk).enumerate() {
            let w = c
                .write(&again, (i * chunk) as u64, piece, StableHow::Unstable)
                .await
                .unwrap();
            assert_eq!(w.count as usize, piece.len());
            verifiers.push(w.verifier);
        }
        let committed = c.commit(f.fh, 0, 0, "/export/a.bin").await.unwrap();
        assert!(verifiers.iter().all(|v| *v == committed), "{verifiers:?}");
        assert!(read_all(&c, &again).await == data);
        assert!(std::fs::read(s.export_dir.join("a.bin")).unwrap() == data);
        // A FILE_SYNC write is durable on reply.
        let w = c
            .write(&again, 0, b"head", StableHow::FileSync)
            .await
            .unwrap();
        assert_eq!((w.count, w.committed), (4, StableHow::FileSync));

        // SETATTR: size (with the open stateid) and mode.
        let set = |size, mode| SetAttrs {
            size,
            mode,
            ..SetAttrs::NONE
        };
        c.setattr(f.fh, again.stateid, set(Some(1000), None), "/export/a.bin")
            .await
            .unwrap();
        c.setattr(f.fh, again.stateid, set(None, Some(0o600)), "/export/a.bin")
            .await
            .unwrap();
        let a = c.getattr(f.fh, "/export/a.bin").await.unwrap();
        assert_eq!((a.size, a.mode), (1000, 0o600));
        let back = read_all(&c, &again).await;
        assert_eq!(&back[..4], b"head");
        assert!(back[4..] == data[4..1000]);
        let (supported, granted) = c
            .access(f.fh, access::READ | access::MODIFY, "/export/a.bin")
            .await
            .unwrap();
        assert_eq!(supported & access::READ, access::READ);
        assert_eq!(granted & access::MODIFY, access::MODIFY);
        c.close_file(again).await.unwrap();

        // An open for reading reads, and refuses a WRITE.
        let r = c
            .open(root, "a.bin", Access::Read, "/export/a.bin")
            .await
            .unwrap();
        assert_eq!(r.fh, f.fh);
        assert_eq!(read_all(&c, &r).await, back);
        let e = c
            .write(&r, 0, b"no", StableHow::FileSync)
            .await
            .unwrap_err();
        let st = status4(e, Opnum::Write, "/export/a.bin");
        assert!(matches!(st, Nfsstat4::Openmode | Nfsstat4::Access), "{st}");
        c.close_file(r).await.unwrap();
        // By handle (CLAIM_FH): the same file.
        let h = c
            .open_handle(f.fh, Access::Read, "/export/a.bin")
            .await
            .unwrap();
        assert_eq!((h.fh, h.attr.size), (f.fh, 1000));
        assert_eq!(read_all(&c, &h).await, back);
        c.close_file(h).await.unwrap();
        let e = c
            .open(root, "nothere", Access::Read, "/export/nothere")
            .await
            .unwrap_err();
        assert_eq!(status4(e, Opnum::Open, "/export/nothere"), Nfsstat4::Noent);

        directories_rename_remove(&c, root, f.fh).await;
        space(&s, &c, root).await;
        c.close().await.unwrap();
    });
}

async fn directories_rename_remove(c: &Client, root: Fh4, file: Fh4) {
    let d = c.mkdir(root, "d", 0o750, "/export/d").await.unwrap();
    let a = c.getattr(d, "/export/d").await.unwrap();
    assert_eq!((a.ftype, a.mode), (Ftype4::Dir, 0o750));
    let e = c.mkdir(root, "d", 0o750, "/export/d").await.unwrap_err();
    assert_eq!(status4(e, Opnum::Create, "/export/d"), Nfsstat4::Exist);

    // RENAME into the new directory: the old name is gone, the handle the same.
    c.rename((root, "a.bin"), (d, "b.bin"), "/export/a.bin")
        .await
        .unwrap();
    let e = c.lookup_path("/export/a.bin").await.unwrap_err();
    assert_eq!(status4(e, Opnum::Lookup, "/export/a.bin"), Nfsstat4::Noent);
    let (fh, a) = c.lookup_path("/export/d/b.bin").await.unwrap();
    assert_eq!((fh, a.size), (file, 1000));
    let e = c
        .rename((root, "a.bin"), (d, "c.bin"), "/export/a.bin")
        .await
        .unwrap_err();
    assert_eq!(status4(e, Opnum::Rename, "/export/a.bin"), Nfsstat4::Noent);

    // A directory with a file in it stays; the file, then the directory, go.
    let e = c.remove(root, "d", "/export/d").await.unwrap_err();
    assert_eq!(status4(e, Opnum::Remove, "/export/d"), Nfsstat4::Notempty);
    c.remove(d, "b.bin", "/export/d/b.bin").await.unwrap();
    // Reading the removed file fails, naming it: by its path, and by its old handle.
    let e = c.lookup_path("/export/d/b.bin").await.unwrap_err();
    assert_eq!(
        status4(e, Opnum::Lookup, "/export/d/b.bin"),
        Nfsstat4::Noent
    );
    let e = c
        .read(file, 0, 4096, "/export/d/b.bin")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("/export/d/b.bin: NFS4ERR_"), "{e}");
    c.remove(root, "d", "/export/d").await.unwrap();
    let e = c.remove(root, "d", "/export/d").await.unwrap_err();
    assert_eq!(status4(e, Opnum::Remove, "/export/d"), Nfsstat4::Noent);
}

async fn space(s: &common::Server, c: &Client, root: Fh4) {
    let sp = c.fs_space(root, "/export").await.unwrap();
    eprintln!("space figures over NFSv4.1: {sp:?}");
    // The export lives on the host's file system: the server reports its size.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let dir = std::ffi::CString::new(s.export_dir.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string and a zeroed statvfs to fill.
    assert_eq!(unsafe { libc::statvfs(dir.as_ptr(), &mut st) }, 0);
    let total = st.f_blocks as u64 * st.f_frsize as u64;
    assert_eq!(sp.space_total, Some(total));
    let (avail, free) = (sp.space_avail.unwrap(), sp.space_free.unwrap());
    assert!(avail <= free && free <= total, "{sp:?}");
    assert!(sp.files_total.unwrap() >= sp.files_free.unwrap(), "{sp:?}");
}

#[test]
fn files_written_over_v41_read_the_same_over_v3_and_back() {
    let Some(s) = common::Server::start("v41interop") else {
        return;
    };
    let v41_data = pattern(5 << 20 | 777, 2);
    let v3_data = pattern(4 << 20 | 99, 3);
    // dbio writes over NFSv4.1, pipelined, UNSTABLE then COMMIT; its NFSv3 client
    // reads it back, and the other way round.
    upload(&s, "4.1", "v41.bin", &v41_data);
    let got = download(&s, "3", "v41.bin");
    assert!(got == v41_data, "NFSv3 read back {} bytes", got.len());
    upload(&s, "3", "v3.bin", &v3_data);
    let got = download(&s, "4.1", "v3.bin");
    assert!(got == v3_data, "NFSv4.1 read back {} bytes", got.len());

    // libnfs reads dbio's NFSv4.1 file over NFSv3.
    if libnfs_available() {
        let cat = Command::new("nfs-cat")
            .arg(s.url("/export/v41.bin"))
            .output()
            .unwrap();
        assert!(
            cat.status.success(),
            "{}",
            String::from_utf8_lossy(&cat.stderr)
        );
        assert!(
            cat.stdout == v41_data,
            "nfs-cat read {} bytes",
            cat.stdout.len()
        );
    }
}

fn libnfs_available() -> bool {
    let found = Command::new("sh")
        .args(["-c", "command -v nfs-cat"])
        .output();
    let yes = matches!(found, Ok(o) if o.status.success());
    if !yes && common::require_peers() {
        panic!("DBIO_REQUIRE_PEERS=1 but libnfs-utils (nfs-cat) is missing");
    }
    yes
}
