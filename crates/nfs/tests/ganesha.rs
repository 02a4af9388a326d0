//! The NFSv3 client against nfs-ganesha: every exposed procedure, with the
//! errors a user meets (missing file, wrong export, permission denied).
//! One server for the whole binary; steps run in order in one test.

mod common;

use bytes::Bytes;
use dbio_nfs::fs::Handle;
use dbio_nfs::mount::MountClient;
use dbio_nfs::proto::mount3::Mountstat3;
use dbio_nfs::proto::nfs3::{access, CreateHow, Ftype3, Nfsstat3, Sattr3, StableHow};
use dbio_nfs::transfer::{self, TransferOptions};
use dbio_nfs::{ClientOptions, Nfs3Client, NfsError, NfsUrl};

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
        transfers(&c).await;
        verifier_change_resends(&server, &c).await;
        c.unmount().await.unwrap();
    });
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

async fn transfers(c: &Nfs3Client) {
    let root = c.root();
    let fh = c
        .create(root, "big", CreateHow::Unchecked(Sattr3::default()), "big")
        .await
        .unwrap();
    let data: Vec<u8> = (0..3_000_017u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let opts = TransferOptions {
        depth: 8,
        max_io: 64 * 1024,
        commit_every: 1 << 20,
        ..TransferOptions::default()
    };
    let mut last = 0;
    let n = transfer::upload(
        c,
        fh,
        "big",
        opts,
        |off: u64, buf: &mut [u8]| {
            let rest = &data[(off as usize).min(data.len())..];
            let k = buf.len().min(rest.len());
            buf[..k].copy_from_slice(&rest[..k]);
            Ok(k)
        },
        |done| last = done,
    )
    .await
    .unwrap();
    assert_eq!((n, last), (data.len() as u64, data.len() as u64));
    let mut back = Vec::new();
    let got = transfer::download(c, fh, "big", data.len() as u64 + 100, opts, |off, d| {
        assert_eq!(off, back.len() as u64);
        back.extend_from_slice(d);
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(got, data.len() as u64);
    assert!(back == data, "downloaded data differs");
    c.remove(root, "big", "big").await.unwrap();
}

/// UNSTABLE writes, then the server restarts (new write verifier): the
/// COMMIT's verifier differs, so every write is sent again, and the file
/// is complete afterwards. The client reconnects on its own.
async fn verifier_change_resends(server: &common::Server, c: &Nfs3Client) {
    let root = c.root();
    let fh = c
        .create(root, "v", CreateHow::Unchecked(Sattr3::default()), "v")
        .await
        .unwrap();
    let mut tracker = transfer::WriteTracker::default();
    for (i, chunk) in [b"aaaa", b"bbbb", b"cccc"].iter().enumerate() {
        let off = 4 * i as u64;
        let data = Bytes::from_static(&chunk[..]);
        let r = c
            .write(fh, off, &data, StableHow::Unstable, "v")
            .await
            .unwrap();
        tracker.record(off, 4, r.committed, r.verf);
    }
    let unchanged = tracker.bytes();
    // ganesha derives its verifier from its start time in seconds.
    server.restart(1.0);
    // Resent ranges are read from the source again: upper case shows which.
    let mut source = |off: u64, buf: &mut [u8]| {
        let upper = b"AAAABBBBCCCC";
        let rest = &upper[off as usize..];
        let k = buf.len().min(rest.len());
        buf[..k].copy_from_slice(&rest[..k]);
        Ok(k)
    };
    let resent = transfer::commit(c, fh, "v", &mut tracker, &mut source)
        .await
        .unwrap();
    // Writes answered FILE_SYNC are not tracked; all tracked ones are resent.
    assert_eq!(resent as u64 * 4, unchanged);
    assert!(resent > 0, "ganesha answered UNSTABLE writes FILE_SYNC");
    let want: Vec<u8> = b"aaaabbbbcccc"
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let resent_range = tracker_was_resent(i, resent);
            if resent_range {
                b.to_ascii_uppercase()
            } else {
                *b
            }
        })
        .collect();
    assert_eq!(std::fs::read(server.export_dir.join("v")).unwrap(), want);
    let r = c.read(fh, 0, 12, "v").await.unwrap();
    assert_eq!(&r.data[..], &want[..]);
    c.remove(root, "v", "v").await.unwrap();
}

/// All three writes were UNSTABLE, so `resent` of them (the first ones) came back.
fn tracker_was_resent(byte: usize, resent: usize) -> bool {
    byte / 4 < resent
}
