//! Ping: round trips to an NFS server in a closed loop (`count` calls, `outstanding` in
//! flight, each replaced as soon as one returns) and their latency, for any version.
//!
//! Two kinds of call, the same for NFSv3 and NFSv4.1:
//! - the RPC NULL procedure (procedure 0 of the NFS program, no arguments, nothing done
//!   by the server but the RPC layer: the round trip with the least work), over the
//!   pool's connections;
//! - READs of one size at random aligned offsets of a file, through a [`DataPath`]
//!   (over NFSv4.1 each is a SEQUENCE + PUTFH + READ COMPOUND on a session slot).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dbio_rpc::conn::{CompletionQueue, ReplyTo};

use crate::channel::{CallError, Results};
use crate::copy::CopyError;
use crate::datapath::{DataPath, FileId};
use crate::error::call_error;
use crate::router::{Route, Router};

/// How often a ping waiting for replies looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(100);
/// Most calls in flight.
pub const MAX_OUTSTANDING: u32 = 4096;

/// What a ping measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PingStats {
    pub calls: u64,
    pub outstanding: u32,
    pub wall: Duration,
    pub min: Duration,
    pub mean: Duration,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl PingStats {
    pub fn calls_per_s(&self) -> f64 {
        self.calls as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Figures from the completed calls' latencies (any order).
    fn from_latencies(mut lat: Vec<Duration>, outstanding: u32, wall: Duration) -> PingStats {
        lat.sort_unstable();
        let n = lat.len().max(1);
        let at = |p: f64| {
            lat.get(((n - 1) as f64 * p).round() as usize)
                .copied()
                .unwrap_or_default()
        };
        let sum: Duration = lat.iter().sum();
        PingStats {
            calls: lat.len() as u64,
            outstanding,
            wall,
            min: lat.first().copied().unwrap_or_default(),
            mean: sum / n as u32,
            p50: at(0.5),
            p99: at(0.99),
            max: lat.last().copied().unwrap_or_default(),
        }
    }
}

/// `count` NULL calls (at least 1), `outstanding` in flight, over `router`'s
/// connections; `server` names the server in messages.
pub async fn null(
    router: &Router,
    count: u64,
    outstanding: u32,
    server: &str,
    stop: &AtomicBool,
) -> Result<PingStats, CopyError> {
    let count = count.max(1);
    let depth = outstanding.clamp(1, MAX_OUTSTANDING);
    let queue = Arc::new(CompletionQueue::new());
    let proc_ = router.proc_id("NULL");
    let mut started: Vec<Instant> = Vec::with_capacity(depth as usize);
    let mut latencies = Vec::with_capacity(count.min(1 << 24) as usize);
    let (mut sent, mut in_flight) = (0u64, 0u32);
    let mut replies = Vec::new();
    let t0 = Instant::now();
    let send = |tag: u64| {
        let call = router.encode(0, |_| {}, Bytes::new());
        router.send(Route::META, proc_, call, ReplyTo::Sink(queue.clone(), tag));
    };
    while (latencies.len() as u64) < count {
        if stop.load(Relaxed) {
            return Err(CopyError::Stopped(server.to_string()));
        }
        while sent < count && in_flight < depth {
            // The tag is the index of the call's start time.
            let tag = if (started.len() as u32) < depth {
                started.push(Instant::now());
                started.len() - 1
            } else {
                // A free index: the one that completed last is reused below.
                break;
            };
            send(tag as u64);
            sent += 1;
            in_flight += 1;
        }
        replies.clear();
        queue.wait_async(1, STOP_POLL, &mut replies).await;
        for (tag, result) in replies.drain(..) {
            in_flight -= 1;
            let err = match result {
                Ok(reply) => Results::from_record(reply.record).err().map(CallError::Rpc),
                Err(e) => Some(CallError::Transport(e)),
            };
            if let Some(e) = err {
                return Err(call_error("NULL", server, e).into());
            }
            let i = tag as usize;
            latencies.push(started[i].elapsed());
            if sent < count {
                started[i] = Instant::now();
                send(tag);
                sent += 1;
                in_flight += 1;
            }
        }
    }
    Ok(PingStats::from_latencies(latencies, depth, t0.elapsed()))
}

/// `count` READs of `bytes` each (at least 1) at random offsets, multiples of `bytes`,
/// of `file` (`size` bytes, at least `bytes`), `outstanding` in flight (at most the data
/// path's depth); `path` names the file in messages.
#[allow(clippy::too_many_arguments)]
pub async fn read(
    dp: &mut DataPath,
    file: FileId,
    size: u64,
    bytes: u32,
    count: u64,
    outstanding: u32,
    path: &str,
    stop: &AtomicBool,
) -> Result<PingStats, CopyError> {
    let count = count.max(1);
    let bytes = bytes.max(1);
    let depth = outstanding.clamp(1, dp.depth());
    let blocks = (size / u64::from(bytes)).max(1);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(std::process::id());
    let mut next_offset = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % blocks) * u64::from(bytes)
    };
    let mut started = vec![Instant::now(); depth as usize];
    let mut latencies = Vec::with_capacity(count.min(1 << 24) as usize);
    let mut sent = 0u64;
    let mut outs = Vec::new();
    let t0 = Instant::now();
    let mut issue = |dp: &mut DataPath, slot: u32, started: &mut [Instant]| {
        let offset = next_offset();
        started[slot as usize] = Instant::now();
        dp.read(slot, file, offset, bytes)
            .map_err(|e| CopyError::Io {
                what: "READ",
                path: path.to_string(),
                offset,
                reason: e.to_string(),
            })
    };
    for slot in 0..depth.min(count.min(u64::from(u32::MAX)) as u32) {
        issue(dp, slot, &mut started)?;
        sent += 1;
    }
    dp.commit();
    while (latencies.len() as u64) < count {
        if stop.load(Relaxed) {
            return Err(CopyError::Stopped(path.to_string()));
        }
        outs.clear();
        dp.wait(1, STOP_POLL, &mut outs).await;
        for o in outs.drain(..) {
            if let Err(e) = o.result {
                let offset = match &e {
                    crate::datapath::DataError::Io { offset, .. } => *offset,
                    _ => 0,
                };
                return Err(CopyError::Io {
                    what: "READ",
                    path: path.to_string(),
                    offset,
                    reason: e.to_string(),
                });
            }
            std::hint::black_box(&o.data);
            latencies.push(started[o.slot as usize].elapsed());
            if sent < count {
                issue(dp, o.slot, &mut started)?;
                sent += 1;
            }
        }
        dp.commit();
    }
    Ok(PingStats::from_latencies(latencies, depth, t0.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_figures_come_from_the_sorted_latencies() {
        let ms = Duration::from_millis;
        let s = PingStats::from_latencies(vec![ms(3), ms(1), ms(2)], 2, ms(6));
        assert_eq!((s.calls, s.outstanding), (3, 2));
        assert_eq!((s.min, s.p50, s.max, s.mean), (ms(1), ms(2), ms(3), ms(2)));
        assert_eq!(s.calls_per_s().round(), 500.0);
    }
}
