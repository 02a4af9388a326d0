//! NFS3ERR_JUKEBOX ("busy, try later") is retried with backoff, against a
//! scripted server (real servers answer it only when data is offline).

// Only the scripted server of the hostile tests is used here.
#[allow(dead_code)]
#[path = "hostile/server.rs"]
mod server;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dbio_nfs::proto::nfs3::{self, encode_res_fail, Ftype3, Nfsstat3};
use dbio_nfs::retry::Backoff;
use dbio_nfs::{ClientOptions, Nfs3Client};
use server::{attrs, nfs_server, Step};

#[test]
fn jukebox_is_retried_with_backoff() {
    // GETATTR is answered JUKEBOX while `busy` counts down, then as a good
    // server answers it.
    let busy = Arc::new(AtomicU32::new(0));
    let b = busy.clone();
    let server = nfs_server(move |call, peer| {
        if call.prog == nfs3::PROGRAM && call.proc_ == 1 && b.load(Ordering::SeqCst) > 0 {
            b.fetch_sub(1, Ordering::SeqCst);
            let mut r = Vec::new();
            encode_res_fail(&mut r, 1, Nfsstat3::Jukebox);
            peer.reply(call.xid, &r);
            return Step::Done;
        }
        Step::Default
    });
    let url = server.url();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let options = ClientOptions {
            retry: Backoff {
                first: Duration::from_millis(20),
                max: Duration::from_secs(1),
                retries: 3,
                ..Backoff::default()
            },
            ..ClientOptions::default()
        };
        let (c, _) = Nfs3Client::mount(&url, options).await.unwrap();
        // Busy twice: retried after 20 and 40 ms, then answered.
        busy.store(2, Ordering::SeqCst);
        let t0 = Instant::now();
        let a = c.getattr(c.root(), "").await.unwrap();
        assert_eq!(a.fileid, attrs(Ftype3::Dir, 4096).fileid);
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
