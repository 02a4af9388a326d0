//! A delegation recall from a real server: the pNFS lab of scripts/pnfs-lab started
//! with DBIO_PNFS_DELEGATIONS=1 (nfs-ganesha's Gluster backend, whose delegations are
//! Gluster leases). One client opens a file asking for a read delegation and reads it
//! in a loop; a second client (another client owner) opens the file for writing and
//! writes it. ganesha answers that OPEN with NFS4ERR_DELAY and sends the first client
//! a CB_RECALL over its back channel; the back channel answers it and returns the
//! delegation (DELEGRETURN), the writer's OPEN then succeeds, and the reader's I/O
//! goes on under its open stateid with no READ failed or wrong.
//! Skips without root, GlusterFS or ganesha unless DBIO_REQUIRE_PEERS=1.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dbio_nfs::proto::nfs4::StableHow;
use dbio_nfs::v41::callback::BackChannel;
use dbio_nfs::v41::{Access, Client, SessionOptions};
use dbio_nfs::{ClientConfig, NfsUrl};

#[path = "common/pnfs_lab.rs"]
mod lab;
use lab::Lab;

const LEN: usize = 256 << 10;
const CHUNK: usize = 64 << 10;

/// Pseudo-random bytes (xorshift64*).
fn content(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

/// A session to the metadata server under client owner `owner`, with a back channel
/// if `back` is given.
async fn connect(host: &str, owner: &str, back: Option<Arc<BackChannel>>) -> Client {
    let u = NfsUrl::parse(&format!("nfs://{host}/gv0?version=4.1")).unwrap();
    let opts = ClientConfig::new(u.clone()).client;
    let session = SessionOptions {
        owner: owner.to_string(),
        // The session sees the handler as its `Callbacks`.
        back_channel: back.map(|b| b as _),
        ..SessionOptions::default()
    };
    Client::connect(&u, &opts, session).await.unwrap()
}

/// Polls `done` every 20 ms for at most `limit`; whether it came true.
async fn wait_until(limit: Duration, done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

#[derive(Default)]
struct Reads {
    ok: AtomicU64,
    failed: AtomicU64,
    wrong: AtomicU64,
}

#[test]
fn a_read_delegation_is_recalled_returned_and_reads_go_on() {
    let Some(lab) = Lab::start_with(&[("DBIO_PNFS_DELEGATIONS", "1")]) else {
        return;
    };
    let data = content(LEN, 41);
    let local = std::env::temp_dir().join(format!("dbio-deleg-{}", std::process::id()));
    std::fs::write(&local, &data).unwrap();
    lab.run(&["put", local.to_str().unwrap(), "delegated"]);
    std::fs::remove_file(&local).unwrap();
    let mds = lab.host("1");
    let pid = std::process::id();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let back = BackChannel::new();
        let reader =
            Arc::new(connect(&mds, &format!("dbio-reader-{pid}"), Some(back.clone())).await);
        back.attach(&reader, None);
        assert_eq!(
            back.counts().granted.load(Relaxed),
            1,
            "no back channel granted"
        );
        let (dir, _) = reader.lookup_path("/gv0").await.unwrap();
        let (file, deleg) = reader
            .open_read_delegated(dir, "delegated", "/gv0/delegated")
            .await
            .unwrap();
        assert!(deleg.is_some(), "ganesha granted no read delegation");

        // The reader's I/O: READs of the whole file, chunk by chunk, until stopped.
        let reads = Arc::new(Reads::default());
        let stop = Arc::new(AtomicBool::new(false));
        let io = {
            let (reader, reads, stop, data, file) = (
                reader.clone(),
                reads.clone(),
                stop.clone(),
                data.clone(),
                file.clone(),
            );
            tokio::spawn(async move {
                let mut off = 0usize;
                while !stop.load(Relaxed) {
                    match reader.read_open(&file, off as u64, CHUNK as u32).await {
                        Ok((b, _)) if b[..] == data[off..off + b.len()] && !b.is_empty() => {
                            reads.ok.fetch_add(1, Relaxed);
                            off = (off + b.len()) % LEN;
                        }
                        Ok(_) => {
                            reads.wrong.fetch_add(1, Relaxed);
                        }
                        Err(e) => {
                            eprintln!("READ failed: {e}");
                            reads.failed.fetch_add(1, Relaxed);
                        }
                    }
                }
            })
        };
        assert!(wait_until(Duration::from_secs(10), || reads.ok.load(Relaxed) >= 4).await);

        // The conflicting open: another client owner, for writing. It waits (DELAY,
        // re-sent by the session) until the delegation is back.
        let writer = connect(&mds, &format!("dbio-writer-{pid}"), None).await;
        let (wdir, _) = writer.lookup_path("/gv0").await.unwrap();
        let w = writer
            .open(wdir, "delegated", Access::Both, "/gv0/delegated")
            .await
            .expect("the conflicting OPEN succeeds once the delegation is returned");
        // The same bytes again: the reader's checks stay valid.
        let wrote = writer
            .write(&w, 0, &data[..CHUNK], StableHow::FileSync)
            .await
            .unwrap();
        assert_eq!(wrote.count as usize, CHUNK);
        writer.close_file(w).await.unwrap();

        let counts = back.counts();
        assert!(
            wait_until(Duration::from_secs(10), || counts
                .delegations_returned
                .load(Relaxed)
                == 1)
            .await,
            "delegation not returned: {counts:?}, warnings {:?}",
            back.warnings()
        );
        assert_eq!(counts.delegation_recalls.load(Relaxed), 1, "{counts:?}");
        // I/O goes on after the return.
        let after = reads.ok.load(Relaxed);
        assert!(
            wait_until(Duration::from_secs(10), || reads.ok.load(Relaxed)
                >= after + 4)
            .await,
            "reads stopped after the recall"
        );
        stop.store(true, Relaxed);
        io.await.unwrap();
        assert_eq!(reads.failed.load(Relaxed), 0, "failed READs");
        assert_eq!(reads.wrong.load(Relaxed), 0, "READs with wrong data");
        assert!(back.warnings().is_empty(), "{:?}", back.warnings());

        reader.close_file(file).await.unwrap();
        writer.close().await.unwrap();
        Arc::try_unwrap(reader).ok().unwrap().close().await.unwrap();
    });
}
