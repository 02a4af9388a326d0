//! A relay between a client and the real server that tampers with chosen replies, for
//! what ganesha will not do on demand: drop a context (`CTXPROBLEM` in place of the
//! reply) or answer with a verifier whose MIC fails. Records are single fragments
//! (as ganesha sends them); everything else passes as it is. Only replies to DATA calls
//! are counted: a context's INIT replies carry a GSS verifier too, and how many
//! contexts a connection sets up depends on timing.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// XIDs of the RPCSEC_GSS DATA calls sent and not yet answered.
type DataCalls = Arc<Mutex<HashSet<u32>>>;

/// What to do to the n-th accepted reply to an RPCSEC_GSS DATA call (counted from 1
/// over the relay's whole life).
#[derive(Clone, Copy, Debug)]
pub enum Tamper {
    /// Replaced by MSG_DENIED / AUTH_ERROR / RPCSEC_GSS_CTXPROBLEM.
    DropContext(usize),
    /// The verifier's last byte flipped.
    ForgeVerifier(usize),
    /// Not passed on, as a server drops a call whose number fell behind its window.
    Swallow(usize),
}

/// Starts the relay on an ephemeral port of 127.0.0.1; it runs until the process ends.
pub fn relay(server: SocketAddr, plan: Vec<Tamper>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(upstream) = TcpStream::connect(server) else {
                continue;
            };
            let _ = (client.set_nodelay(true), upstream.set_nodelay(true));
            let (c2, u2) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
            let data: DataCalls = Arc::default();
            let d2 = data.clone();
            std::thread::spawn(move || calls(c2, u2, &d2));
            let (seen, plan) = (seen.clone(), plan.clone());
            std::thread::spawn(move || replies(upstream, client, &seen, &plan, &data));
        }
    });
    addr
}

/// One record (a single fragment), or `None` at the end of the stream.
fn record(from: &mut TcpStream) -> Option<Vec<u8>> {
    let mut mark = [0u8; 4];
    from.read_exact(&mut mark).ok()?;
    let len = (u32::from_be_bytes(mark) & 0x7fff_ffff) as usize;
    let mut rec = vec![0u8; len];
    from.read_exact(&mut rec).ok()?;
    Some(rec)
}

/// Passes the calls on, noting the XIDs of RPCSEC_GSS DATA calls.
fn calls(mut from: TcpStream, mut to: TcpStream, data: &Mutex<HashSet<u32>>) {
    while let Some(rec) = record(&mut from) {
        // xid, CALL, rpcvers, prog, vers, proc, cred flavour 6, length, version, gss_proc.
        if rec.len() >= 40 && word(&rec, 4) == 0 && word(&rec, 24) == 6 && word(&rec, 36) == 0 {
            data.lock().unwrap().insert(word(&rec, 0));
        }
        let mut out = (0x8000_0000u32 | rec.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(&rec);
        if to.write_all(&out).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

fn replies(
    mut from: TcpStream,
    mut to: TcpStream,
    seen: &AtomicUsize,
    plan: &[Tamper],
    data: &Mutex<HashSet<u32>>,
) {
    while let Some(mut rec) = record(&mut from) {
        let len = rec.len();
        let to_data = len >= 4 && data.lock().unwrap().remove(&word(&rec, 0));
        // xid, REPLY, MSG_ACCEPTED, verifier flavour RPCSEC_GSS (6), length, body.
        if to_data && len >= 24 && word(&rec, 4) == 1 && word(&rec, 8) == 0 && word(&rec, 12) == 6 {
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            for t in plan {
                match *t {
                    Tamper::DropContext(at) if at == n => {
                        let mut denied = rec[..4].to_vec();
                        for w in [1u32, 1, 1, 14] {
                            denied.extend(w.to_be_bytes());
                        }
                        rec = denied;
                    }
                    Tamper::ForgeVerifier(at) if at == n => {
                        let verf_len = word(&rec, 16) as usize;
                        rec[20 + verf_len - 1] ^= 0x01;
                    }
                    Tamper::Swallow(at) if at == n => rec.clear(),
                    _ => {}
                }
            }
        }
        if rec.is_empty() {
            continue;
        }
        // One write per record: a mark and its record in two would meet Nagle and
        // delayed ACKs (40 ms a call).
        let mut out = (0x8000_0000u32 | rec.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(&rec);
        if to.write_all(&out).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

fn word(rec: &[u8], i: usize) -> u32 {
    u32::from_be_bytes(rec[i..i + 4].try_into().unwrap())
}
