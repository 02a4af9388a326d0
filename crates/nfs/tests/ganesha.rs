//! The NFSv3 client against nfs-ganesha: every exposed procedure, with the
//! errors a user meets (missing file, wrong export, permission denied).
//! One server for the whole binary; steps run in order in one test.

mod common;

use bytes::Bytes;
use dbio_nfs::copy::{self, CopyError, CopyOptions, Uploaded};
use dbio_nfs::fs::Handle;
use dbio_nfs::fs::{join, Create};
use dbio_nfs::mount::MountClient;
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::mount3::Mountstat3;
use dbio_nfs::proto::nfs3::{access, CreateHow, Ftype3, Nfsstat3, Sattr3, StableHow};
use dbio_nfs::ClientConfig;
use dbio_nfs::Fs;
use dbio_nfs::{ClientOptions, Nfs3Client, NfsError, NfsUrl};
use std::sync::atomic::AtomicBool;

fn opts() -> ClientOptions {
    let mut o = ClientOptions {
        uid: 0,
        gid: 0,
        ..ClientOptions::default()
    };
    o.conn.timeout = std::time::Duration::from_secs(3);
    o
}

async fn mount(url: &str, o: ClientOptions) -> Result<(Nfs3Client, String), NfsError> {
    Nfs3Client::mount(&NfsUrl::parse(url).unwrap(), o).await
}

fn status(r: Result<impl std::fmt::Debug, NfsError>) -> Nfsstat3 {
    r.unwrap_err().status().expect("an NFS status error")
}

#[test]
fn nfs3_client_against_ganesha() {
    let Some(server) = common::Server::start("nfsc") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        mounting(&server).await;
        let (c, rest) = mount(&server.url("/export/"), opts()).await.unwrap();
        let c = std::sync::Arc::new(c);
        assert_eq!(rest, "");
        files_and_data(&server, &c).await;
        directories(&c).await;
        permissions(&server).await;
        c.unmount().await.unwrap();
    });
    copies(&server);
    verifier_change_resends(&server);
}

async fn mounting(server: &common::Server) {
    // Ports given, and found through the portmapper.
    let (c, rest) = mount(&server.url("/export/sub/file"), opts())
        .await
        .unwrap();
    assert_eq!((c.export(), rest.as_str()), ("/export", "sub/file"));
    c.null().await.unwrap();
    let i = c.fsinfo();
    assert!(i.rtmax >= 4096 && i.wtmax >= 4096, "{i:?}");
    assert!(c.read_size(1 << 20) <= i.rtmax && c.write_size(1 << 20) <= i.wtmax);
    let (c2, _) = mount(&format!("nfs://{}/export", server.addr), opts())
        .await
        .unwrap();
    c2.null().await.unwrap();

    // MOUNT procedures.
    let addr = format!("{}:20048", server.addr).parse().unwrap();
    let cred = opts().credential().unwrap();
    let m = MountClient::connect(addr, &opts().conn, cred)
        .await
        .unwrap();
    m.null().await.unwrap();
    assert!(m.exports().await.unwrap().iter().any(|e| e == "/export"));
    let root = m.mnt("/export").await.unwrap();
    assert!(!root.fhandle.as_bytes().is_empty());
    m.dump().await.unwrap();
    m.umnt("/export").await.unwrap();
    match m.mnt("/no/such/export").await {
        Err(NfsError::Mount { status, .. }) => assert_ne!(status, Mountstat3::Ok),
        other => panic!("MNT of a missing export: {other:?}"),
    }

    // A wrong export names the server's exports.
    let err = mount(&server.url("/nope/x"), opts()).await.err().unwrap();
    assert!(matches!(err, NfsError::NoExport { .. }), "{err}");
    assert!(err.to_string().contains("/export"), "{err}");
}

async fn files_and_data(server: &common::Server, c: &Nfs3Client) {
    let root = c.root();
    let attrs = Sattr3 {
        mode: Some(0o644),
        ..Sattr3::default()
    };
    // CREATE: GUARDED fails on an existing file, UNCHECKED does not,
    // EXCLUSIVE is idempotent for the same verifier only.
    let fh = c
        .create(root, "f1", CreateHow::Guarded(attrs), "f1")
        .await
        .unwrap();
    assert_eq!(
        status(c.create(root, "f1", CreateHow::Guarded(attrs), "f1").await),
        Nfsstat3::Exist
    );
    c.create(root, "f1", CreateHow::Unchecked(attrs), "f1")
        .await
        .unwrap();
    let ex = c
        .create(root, "ex", CreateHow::Exclusive([7; 8]), "ex")
        .await
        .unwrap();
    assert_eq!(
        c.create(root, "ex", CreateHow::Exclusive([7; 8]), "ex")
            .await
            .unwrap(),
        ex
    );
    assert_eq!(
        status(
            c.create(root, "ex", CreateHow::Exclusive([8; 8]), "ex")
                .await
        ),
        Nfsstat3::Exist
    );

    // WRITE in the three stabilities, COMMIT with the same verifier.
    let w1 = c
        .write(
            fh,
            0,
            &Bytes::from_static(b"hello "),
            StableHow::Unstable,
            "f1",
        )
        .await
        .unwrap();
    let w2 = c
        .write(
            fh,
            6,
            &Bytes::from_static(b"nfs "),
            StableHow::DataSync,
            "f1",
        )
        .await
        .unwrap();
    let w3 = c
        .write(
            fh,
            10,
            &Bytes::from_static(b"world"),
            StableHow::FileSync,
            "f1",
        )
        .await
        .unwrap();
    assert_eq!((w1.count, w2.count, w3.count), (6, 4, 5));
    assert_ne!(w3.committed, StableHow::Unstable);
    assert_eq!(c.commit(fh, 0, 0, "f1").await.unwrap(), w1.verf);
    let r = c.read(fh, 0, 100, "f1").await.unwrap();
    assert_eq!((&r.data[..], r.eof), (&b"hello nfs world"[..], true));
    let r = c.read(fh, 6, 3, "f1").await.unwrap();
    assert_eq!(&r.data[..], b"nfs");
    assert!(c.read(fh, 1000, 10, "f1").await.unwrap().data.is_empty());
    assert_eq!(
        std::fs::read(server.export_dir.join("f1")).unwrap(),
        b"hello nfs world"
    );

    // GETATTR, SETATTR (truncate and mode), LOOKUP, ACCESS.
    let a = c.getattr(fh, "f1").await.unwrap();
    assert_eq!((a.ftype, a.size), (Ftype3::Reg, 15));
    let set = Sattr3 {
        mode: Some(0o600),
        size: Some(5),
        ..Sattr3::default()
    };
    c.setattr(fh, set, "f1").await.unwrap();
    let (fh2, a) = c.lookup_path("f1").await.unwrap();
    assert_eq!(fh2, fh);
    assert_eq!((a.size, a.mode & 0o777), (5, 0o600));
    let granted = c
        .access(fh, access::READ | access::MODIFY, "f1")
        .await
        .unwrap();
    assert_eq!(
        granted & (access::READ | access::MODIFY),
        access::READ | access::MODIFY
    );

    // A missing file: the error names the procedure and the path.
    let err = c.lookup_path("missing/file").await.unwrap_err();
    assert_eq!(err.status(), Some(Nfsstat3::NoEnt));
    let msg = err.to_string();
    assert!(
        msg.contains("LOOKUP /export/missing") && msg.contains("NFS3ERR_NOENT"),
        "{msg}"
    );

    // RENAME, REMOVE.
    c.rename((root, "f1"), (root, "f2"), "f1").await.unwrap();
    assert_eq!(
        c.lookup_path("f1").await.unwrap_err().status(),
        Some(Nfsstat3::NoEnt)
    );
    c.remove(root, "f2", "f2").await.unwrap();
    c.remove(root, "ex", "ex").await.unwrap();
    assert_eq!(status(c.remove(root, "f2", "f2").await), Nfsstat3::NoEnt);

    // FSSTAT, PATHCONF, FSINFO.
    let s = c.fsstat(root, "").await.unwrap();
    assert!(s.tbytes >= s.fbytes && s.fbytes >= s.abytes && s.tbytes > 0);
    let p = c.pathconf(root, "").await.unwrap();
    assert!(p.name_max >= 255);
    assert!(c.fsinfo_of(root, "").await.unwrap().wtmax > 0);
}

async fn directories(c: &std::sync::Arc<Nfs3Client>) {
    let fs = dbio_nfs::Fs::v3(c.clone());
    let root = c.root();
    let d = c.mkdir(root, "dir", 0o755, "dir").await.unwrap();
    assert_eq!(
        status(c.mkdir(root, "dir", 0o755, "dir").await),
        Nfsstat3::Exist
    );
    // Enough entries with long names to need several READDIRPLUS replies.
    let attrs = CreateHow::Unchecked(Sattr3::default());
    let names: Vec<String> = (0..700)
        .map(|i| format!("entry-{i:04}-{}", "x".repeat(60)))
        .collect();
    for n in &names {
        c.create(d, n, attrs, n).await.unwrap();
    }
    let dh = Handle::new(d.as_bytes()).unwrap();
    let mut listed: Vec<String> = fs
        .readdir(&dh, "dir")
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    listed.sort();
    assert_eq!(listed, names);
    assert_eq!(
        status(c.rmdir(root, "dir", "dir").await),
        Nfsstat3::NotEmpty
    );
    for n in &names {
        c.remove(d, n, n).await.unwrap();
    }
    assert!(fs.readdir(&dh, "dir").await.unwrap().is_empty());
    c.rmdir(root, "dir", "dir").await.unwrap();
}

async fn permissions(server: &common::Server) {
    let (admin, _) = mount(&server.url("/export"), opts()).await.unwrap();
    let private = admin
        .mkdir(admin.root(), "private", 0o700, "private")
        .await
        .unwrap();
    admin
        .create(
            private,
            "secret",
            CreateHow::Unchecked(Sattr3::default()),
            "private/secret",
        )
        .await
        .unwrap();
    let user = ClientOptions {
        uid: 4321,
        gid: 4321,
        ..opts()
    };
    let (c, _) = mount(&server.url("/export"), user).await.unwrap();
    let err = c.lookup_path("private/secret").await.unwrap_err();
    assert_eq!(err.status(), Some(Nfsstat3::Acces), "{err}");
    assert!(err.to_string().contains("permission denied"), "{err}");
    assert_eq!(
        status(
            dbio_nfs::Fs::v3(std::sync::Arc::new(c))
                .readdir(&Handle::new(private.as_bytes()).unwrap(), "private")
                .await
        ),
        Nfsstat3::Acces
    );
    admin
        .remove(private, "secret", "private/secret")
        .await
        .unwrap();
    admin
        .rmdir(admin.root(), "private", "private")
        .await
        .unwrap();
}

/// A pool over the server's export for the copies (its own runtime: not inside one).
fn pool(server: &common::Server, version: &str) -> (Pool, Fs, String) {
    let url = NfsUrl::parse(&format!(
        "nfs://{}/export/?version={version}&mountport=20048",
        server.addr
    ))
    .unwrap();
    let options = ClientConfig {
        conns: 2,
        workers: 0,
        client: opts(),
        ..ClientConfig::new(url.clone())
    };
    let (pool, rest) = Pool::open(&options).unwrap();
    let fs = pool.fs();
    (pool, fs, rest)
}

/// A source over `data` that counts its reads.
fn source<'a>(
    data: &'a [u8],
    reads: &'a mut u32,
) -> impl FnMut(u64, &mut [u8]) -> std::io::Result<usize> + 'a {
    move |off, buf| {
        *reads += 1;
        let rest = &data[(off as usize).min(data.len())..];
        let k = buf.len().min(rest.len());
        buf[..k].copy_from_slice(&rest[..k]);
        Ok(k)
    }
}

/// Whole-file copies over the data path, both ways and both versions: several I/Os in
/// flight, READs in several RPCs, COMMITs every MiB, and a download asked for more than the file has stops at
/// its end.
fn copies(server: &common::Server) {
    let data: Vec<u8> = (0..3_000_017u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let stop = AtomicBool::new(false);
    for version in ["3", "4.1"] {
        let (pool, fs, rest) = pool(server, version);
        let rel = join(&rest, "big");
        let (dir, open) = pool
            .block_on(async {
                let (dir, _) = fs.lookup_path(&rest).await?;
                let open = fs
                    .create(&dir, "big", 0o644, Create::Truncate, &rel)
                    .await?;
                Ok::<_, NfsError>((dir, open))
            })
            .unwrap();
        assert_eq!(open.stateid.is_some(), version == "4.1");
        let opts = CopyOptions {
            depth: 8,
            io_size: 64 * 1024,
            commit_every: 1 << 20,
            ..CopyOptions::default()
        };
        // RPCs of 16 KiB: each 64 KiB READ goes as four, each WRITE is cut to one.
        let mut dp = pool.data_path(8, 16 * 1024).unwrap();
        assert_eq!(dp.transfer_sizes(), (16 * 1024, 16 * 1024));
        let id = copy::add_file(&fs, &mut dp, &open).unwrap();
        let (mut last, mut reads) = (0, 0);
        let up = pool
            .block_on(copy::upload(
                &fs,
                &mut dp,
                id,
                &open,
                &opts,
                &stop,
                source(&data, &mut reads),
                "data",
                |d| last = d,
            ))
            .unwrap();
        assert_eq!(
            up,
            Uploaded {
                bytes: data.len() as u64,
                resent: 0
            }
        );
        assert_eq!(last, data.len() as u64);
        assert!(
            std::fs::read(server.export_dir.join("big")).unwrap() == data,
            "NFSv{version} upload differs"
        );
        let mut back = Vec::new();
        let got = pool
            .block_on(copy::download(
                &mut dp,
                id,
                data.len() as u64 + 100,
                &opts,
                "big",
                &stop,
                |off, d| {
                    assert_eq!(off, back.len() as u64);
                    back.extend_from_slice(d);
                    Ok(())
                },
                "memory",
            ))
            .unwrap();
        assert_eq!(got, data.len() as u64);
        assert!(back == data, "NFSv{version} download differs");
        // A stop flag that is set ends a copy at once.
        let stopped = AtomicBool::new(true);
        let e = pool
            .block_on(copy::download(
                &mut dp,
                id,
                data.len() as u64,
                &opts,
                "big",
                &stopped,
                |_, _| Ok(()),
                "memory",
            ))
            .unwrap_err();
        assert!(matches!(e, CopyError::Stopped(_)), "{e}");
        drop(dp);
        pool.block_on(async {
            fs.close(open).await?;
            fs.remove(&dir, "big", false, &rel).await
        })
        .unwrap();
        pool.close().unwrap();
    }
}

/// UNSTABLE writes, then the server restarts (new write verifier) in the middle of an
/// upload: the last COMMIT's verifier is not the one from before the writes, so every
/// write is read from the source again and sent FILE_SYNC, and the file is complete.
/// The pool's connections come back on their own.
fn verifier_change_resends(server: &common::Server) {
    let (pool, fs, rest) = pool(server, "3");
    let rel = join(&rest, "v");
    let (dir, open) = pool
        .block_on(async {
            let (dir, _) = fs.lookup_path(&rest).await?;
            let open = fs.create(&dir, "v", 0o644, Create::Truncate, &rel).await?;
            Ok::<_, NfsError>((dir, open))
        })
        .unwrap();
    let opts = CopyOptions {
        depth: 1,
        io_size: 4,
        ..CopyOptions::default()
    };
    let mut dp = pool.data_path(1, 4096).unwrap();
    let id = copy::add_file(&fs, &mut dp, &open).unwrap();
    // Resent ranges are read from the source again: upper case shows which.
    let mut reads = std::collections::HashMap::new();
    let src = |off: u64, buf: &mut [u8]| {
        let n = reads.entry(off).or_insert(0);
        *n += 1;
        let text: &[u8] = if *n == 1 {
            b"aaaabbbbcccc"
        } else {
            b"AAAABBBBCCCC"
        };
        let rest = &text[(off as usize).min(12)..];
        let k = buf.len().min(rest.len());
        buf[..k].copy_from_slice(&rest[..k]);
        Ok(k)
    };
    let mut restarted = false;
    let stop = AtomicBool::new(false);
    let up = pool
        .block_on(copy::upload(
            &fs,
            &mut dp,
            id,
            &open,
            &opts,
            &stop,
            src,
            "text",
            |_| {
                if !restarted {
                    // ganesha derives its verifier from its start time in seconds.
                    server.restart(1.0);
                    restarted = true;
                }
            },
        ))
        .unwrap();
    assert_eq!(
        up,
        Uploaded {
            bytes: 12,
            resent: 3
        }
    );
    assert_eq!(
        std::fs::read(server.export_dir.join("v")).unwrap(),
        b"AAAABBBBCCCC"
    );
    drop(dp);
    pool.block_on(fs.remove(&dir, "v", false, &rel)).unwrap();
}
