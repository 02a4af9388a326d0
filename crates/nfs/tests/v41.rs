//! The NFSv4.1 session client against nfs-ganesha (scripts/nfs-server): a session with
//! the slots the server grants, lookup/getattr/readdir/read of files made on the host
//! side of the export, an error naming the op for a missing path, and more concurrent
//! reads than slots. Skips without ganesha unless DBIO_REQUIRE_PEERS=1.

mod common;

use dbio_nfs::fs::FileType;
use dbio_nfs::proto::nfs4::{Ftype4, Nfsstat4, Opnum};
use dbio_nfs::v41::{Client, SessionOptions};
use dbio_nfs::{ClientConfig, NfsError, NfsUrl};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn url(s: &common::Server, path: &str) -> NfsUrl {
    NfsUrl::parse(&format!("nfs://{}{path}?version=4.1", s.addr)).unwrap()
}

async fn connect(s: &common::Server, slots: u32) -> Client {
    let u = url(s, "/export");
    let opts = ClientConfig::new(u.clone()).client;
    let session = SessionOptions {
        slots,
        ..SessionOptions::default()
    };
    Client::connect(&u, &opts, session).await.unwrap()
}

#[test]
fn session_lookup_stat_readdir_read_and_errors() {
    let Some(s) = common::Server::start("v41") else {
        return;
    };
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(s.export_dir.join("data.bin"), &data).unwrap();
    std::fs::create_dir(s.export_dir.join("sub")).unwrap();
    std::fs::write(s.export_dir.join("sub/small.txt"), b"hello v4.1\n").unwrap();
    rt().block_on(async {
        let c = std::sync::Arc::new(connect(&s, 64).await);
        let st = c.session().slot_stats();
        eprintln!(
            "granted slots: {st:?}, fore {:?}",
            c.session().fore_channel()
        );
        assert!(
            st.granted >= 1 && st.granted <= 64 && st.busy == 0,
            "{st:?}"
        );

        let (dir, a) = c.lookup_path("/export").await.unwrap();
        assert_eq!(a.ftype, Ftype4::Dir);
        let fs = dbio_nfs::Fs::v41(c.clone());
        let dir = dbio_nfs::fs::Handle::new(dir.as_bytes()).unwrap();
        let mut names: Vec<_> = fs
            .readdir(&dir, "export")
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.attr.unwrap().ftype))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            names,
            [
                ("data.bin".to_string(), FileType::Regular),
                ("sub".to_string(), FileType::Directory)
            ]
        );

        let (fh, a) = c.lookup_path("/export/data.bin").await.unwrap();
        assert_eq!((a.ftype, a.size), (Ftype4::Reg, data.len() as u64));
        assert_eq!(c.getattr(fh, "/export/data.bin").await.unwrap(), a);
        let mut got = Vec::new();
        loop {
            let (b, eof) = c
                .read(fh, got.len() as u64, 65536, "/export/data.bin")
                .await
                .unwrap();
            got.extend_from_slice(&b);
            if eof || b.is_empty() {
                break;
            }
        }
        assert!(got == data, "read back {} bytes", got.len());
        let (fh2, a2) = c.lookup_path("/export/sub/small.txt").await.unwrap();
        assert_eq!(a2.size, 11);
        let (b, eof) = c.read(fh2, 0, 4096, "/export/sub/small.txt").await.unwrap();
        assert!(eof);
        assert_eq!(&b[..], b"hello v4.1\n");

        // A missing name: the error names LOOKUP, the path and the status.
        let e = c.lookup_path("/export/sub/missing").await.unwrap_err();
        assert!(
            matches!(
                e,
                NfsError::Status4 {
                    op: Opnum::Lookup,
                    status: Nfsstat4::Noent,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            format!("LOOKUP {}:/export/sub/missing: NFS4ERR_NOENT", c.server())
        );
        // A deep path (more components than one COMPOUND carries) still resolves.
        let deep = "a/b/c/d/e/f/g/h/i/j";
        std::fs::create_dir_all(s.export_dir.join(deep)).unwrap();
        let (_, a) = c.lookup_path(&format!("/export/{deep}")).await.unwrap();
        assert_eq!(a.ftype, Ftype4::Dir);
        drop(fs);
        std::sync::Arc::into_inner(c)
            .unwrap()
            .close()
            .await
            .unwrap();
    });
}

#[test]
fn more_concurrent_reads_than_slots_all_complete() {
    let Some(s) = common::Server::start("v41slots") else {
        return;
    };
    let data: Vec<u8> = (0..32 * 8192u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(s.export_dir.join("blocks.bin"), &data).unwrap();
    rt().block_on(async {
        // Ask for 4 slots: 32 reads must wait for free ones.
        let c = connect(&s, 4).await;
        let st = c.session().slot_stats();
        assert!(st.granted >= 1 && st.granted <= 4, "{st:?}");
        let (fh, _) = c.lookup_path("/export/blocks.bin").await.unwrap();
        let reads = (0..32u64).map(|i| {
            let c = &c;
            async move {
                let (b, _) = c.read(fh, i * 8192, 8192, "blocks.bin").await.unwrap();
                (i, b)
            }
        });
        let mut peak = 0;
        let all = futures_join(reads.collect(), &c, &mut peak).await;
        assert_eq!(all.len(), 32);
        for (i, b) in all {
            let i = i as usize;
            assert!(b[..] == data[i * 8192..(i + 1) * 8192], "block {i}");
        }
        // Every granted slot was in use at once, never more: the rest waited.
        assert_eq!(peak, st.granted, "{peak} slots busy of {}", st.granted);
        assert_eq!(c.session().slot_stats().busy, 0);
        c.close().await.unwrap();
    });
}

/// Runs the futures concurrently on this task, recording the most slots busy at once.
async fn futures_join<F: std::future::Future<Output = (u64, bytes::Bytes)>>(
    futs: Vec<F>,
    c: &Client,
    peak: &mut u32,
) -> Vec<(u64, bytes::Bytes)> {
    use std::pin::Pin;
    use std::task::Poll;
    let mut futs: Vec<Option<Pin<Box<F>>>> = futs.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut out = Vec::new();
    std::future::poll_fn(|cx| {
        for slot in futs.iter_mut() {
            if let Some(f) = slot {
                if let Poll::Ready(v) = f.as_mut().poll(cx) {
                    out.push(v);
                    *slot = None;
                }
            }
        }
        *peak = (*peak).max(c.session().slot_stats().busy);
        if futs.iter().all(Option::is_none) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    out
}
