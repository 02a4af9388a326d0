//! A proxy in front of a real pNFS metadata server that passes everything on, but
//! rewrites each GETDEVICEINFO reply of the files layout (RFC 8881, 13.2.1): every
//! stripe's data server becomes a multipath list of the addresses given, in order.
//! It gives a real server's device the shape a test needs (many addresses, none
//! answering) without a server that could be configured so.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use super::stall::step_of;

const GETDEVICEINFO: u32 = 47;
const SEQUENCE: u32 = 53;
const LAYOUT4_NFSV4_1_FILES: u32 = 1;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn padded(n: u32) -> usize {
    (n as usize).div_ceil(4) * 4
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
    out.resize(out.len() + padded(s.len() as u32) - s.len(), 0);
}

/// A universal address (RFC 5665): the IPv4 address, then the port's two bytes.
fn uaddr(a: SocketAddr) -> String {
    format!("{}.{}.{}", a.ip(), a.port() >> 8, a.port() & 0xff)
}

/// One record (its fragments joined), without marks; None at the end.
fn record(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut mark = [0u8; 4];
        s.read_exact(&mut mark).ok()?;
        let m = u32::from_be_bytes(mark);
        let start = body.len();
        body.resize(start + (m & 0x7fff_ffff) as usize, 0);
        s.read_exact(&mut body[start..]).ok()?;
        if m & 0x8000_0000 != 0 {
            return Some(body);
        }
    }
}

fn send(s: &mut TcpStream, rec: &[u8]) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(rec.len() + 4);
    put_u32(&mut out, 0x8000_0000 | rec.len() as u32);
    out.extend_from_slice(rec);
    s.write_all(&out)
}

/// The reply `rec` with its files-layout device address replaced: the same stripe
/// indices, each multipath list made of `addrs`. None when `rec` is not a successful
/// SEQUENCE + GETDEVICEINFO of the files layout.
pub fn rewrite_device(rec: &[u8], addrs: &[SocketAddr]) -> Option<Vec<u8>> {
    if u32_at(rec, 4)? != 1 || u32_at(rec, 8)? != 0 {
        return None; // not an accepted reply
    }
    let mut at = 20 + padded(u32_at(rec, 16)?); // past the verifier
    if u32_at(rec, at)? != 0 || u32_at(rec, at + 4)? != 0 {
        return None; // accept_stat, then the COMPOUND's status
    }
    at += 8;
    at += 4 + padded(u32_at(rec, at)?); // tag
    at += 4; // number of results
    if u32_at(rec, at)? == SEQUENCE {
        at += 8 + 36; // op, status, then the session's figures
    }
    if u32_at(rec, at)? != GETDEVICEINFO || u32_at(rec, at + 4)? != 0 {
        return None;
    }
    at += 8;
    if u32_at(rec, at)? != LAYOUT4_NFSV4_1_FILES {
        return None;
    }
    at += 4;
    let len = u32_at(rec, at)?;
    let (body, end) = (at + 4, at + 4 + padded(len));
    if end > rec.len() {
        return None;
    }
    let stripes = u32_at(rec, body)? as usize;
    let indices = rec.get(body..body + 4 + 4 * stripes)?;
    let lists = u32_at(rec, body + indices.len())?;
    let mut new = indices.to_vec();
    put_u32(&mut new, lists);
    for _ in 0..lists {
        put_u32(&mut new, addrs.len() as u32);
        for &a in addrs {
            put_string(&mut new, "tcp");
            put_string(&mut new, &uaddr(a));
        }
    }
    let mut out = rec[..at].to_vec();
    put_u32(&mut out, new.len() as u32);
    out.extend_from_slice(&new);
    out.extend_from_slice(&rec[end..]);
    Some(out)
}

/// A proxy on 127.0.0.1 to `upstream` whose GETDEVICEINFO replies name `addrs` for
/// every stripe. The count of replies rewritten is shared with the caller.
pub fn proxy(upstream: SocketAddr, addrs: Vec<SocketAddr>) -> (SocketAddr, Arc<Mutex<u32>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let rewritten = Arc::new(Mutex::new(0));
    let count = rewritten.clone();
    std::thread::spawn(move || {
        while let Ok((mut client, _)) = l.accept() {
            let Ok(mut server) = TcpStream::connect(upstream) else {
                continue;
            };
            // The calls' XIDs whose replies are rewritten.
            let asked = Arc::new(Mutex::new(HashSet::new()));
            let (mut from_server, mut to_client) =
                (server.try_clone().unwrap(), client.try_clone().unwrap());
            let (asked2, addrs, count) = (asked.clone(), addrs.clone(), count.clone());
            std::thread::spawn(move || {
                while let Some(rec) = record(&mut from_server) {
                    let xid = u32_at(&rec, 0).unwrap_or(0);
                    let new = match asked2.lock().unwrap().remove(&xid) {
                        true => rewrite_device(&rec, &addrs),
                        false => None,
                    };
                    if new.is_some() {
                        *count.lock().unwrap() += 1;
                    }
                    if send(&mut to_client, new.as_deref().unwrap_or(&rec)).is_err() {
                        break;
                    }
                }
            });
            std::thread::spawn(move || {
                while let Some(rec) = record(&mut client) {
                    // A call (not a reply on the back channel) asking for a device.
                    if u32_at(&rec, 4) == Some(0)
                        && step_of(&rec).and_then(|s| s.op) == Some(GETDEVICEINFO)
                    {
                        asked.lock().unwrap().insert(u32_at(&rec, 0).unwrap());
                    }
                    if send(&mut server, &rec).is_err() {
                        break;
                    }
                }
            });
        }
    });
    (addr, rewritten)
}
