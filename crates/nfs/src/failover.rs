//! Path health of a multipath pool: which paths take new requests, the
//! failover events, and the background probe that brings a dead path back.
//!
//! A path goes down when one of its connections fails a call (refused,
//! reset, or silent for the reply timeout); the engine then re-issues that
//! call on another path (a pNFS data server's, through the metadata server).
//! A down path gets no new work; the probe sends it an NFS NULL on every
//! connection, with a doubling delay, and the path rejoins once all of them
//! answer (one answering while another still fails would flap the path). The
//! paths' state and events ([`crate::path::Health`]) live below the router, which
//! keeps them; the probe here sits above it.

use std::sync::Weak;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dbio_rpc::conn::CallBuf;
use dbio_rpc::Credential;

use crate::channel::build_call;
use crate::proto::nfs3;
use crate::router::Router;

/// First delay before probing a dead path again; doubles up to [`PROBE_MAX`]
/// (which bounds how long a path that answers again waits to rejoin).
const PROBE_FIRST: Duration = Duration::from_millis(100);
const PROBE_MAX: Duration = Duration::from_secs(1);
/// How often the probe looks for dead paths.
const PROBE_TICK: Duration = Duration::from_millis(50);

/// Probes the router's dead paths (data servers' too, as they are added) with the
/// NULL procedure of its program and version (a server that speaks only NFSv4 has no
/// NFSv3 to answer), until the router is dropped or the runtime that runs the probe
/// shuts down.
pub async fn probe(router: Weak<Router>) {
    let mut next_at: Vec<Option<Instant>> = Vec::new();
    let mut delay: Vec<Duration> = Vec::new();
    loop {
        tokio::time::sleep(PROBE_TICK).await;
        let Some(router) = router.upgrade() else {
            return;
        };
        let health = router.health();
        let n = health.paths.len();
        next_at.resize(n, None);
        delay.resize(n, PROBE_FIRST);
        let cred = router.credential();
        let (prog, vers) = router.program();
        for path in 0..n {
            if health.paths[path].is_up() {
                next_at[path] = None;
                delay[path] = PROBE_FIRST;
                continue;
            }
            let now = Instant::now();
            let due = *next_at[path].get_or_insert(now + delay[path]);
            if now < due {
                continue;
            }
            let conns = router.channels().iter().filter(|c| c.path == path);
            let calls = conns.map(|c| {
                let (c, call) = (c.conn.clone(), null_call(cred, prog, vers));
                async move { c.call(call).await }
            });
            let all_ok = futures_all(calls).await;
            if all_ok {
                health.answered(path);
            } else {
                delay[path] = (delay[path] * 2).min(PROBE_MAX);
                next_at[path] = Some(Instant::now() + delay[path]);
            }
        }
    }
}

/// Runs the calls side by side; true when every one got a reply.
async fn futures_all<F>(calls: impl Iterator<Item = F>) -> bool
where
    F: std::future::Future<Output = dbio_rpc::conn::CallResult> + Send + 'static,
{
    let handles: Vec<_> = calls.map(tokio::spawn).collect();
    let mut ok = !handles.is_empty();
    for h in handles {
        ok &= matches!(h.await, Ok(Ok(_)));
    }
    ok
}

fn null_call(cred: &Credential, prog: u32, vers: u32) -> CallBuf {
    // NULL is procedure 0 of every version of NFS.
    build_call(
        prog,
        vers,
        nfs3::Proc::Null as u32,
        cred,
        |_| {},
        Bytes::new(),
    )
}
