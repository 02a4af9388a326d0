//! Servers that stop answering at a chosen step, on loopback: one that accepts and
//! never answers, one whose accept queue is full (its SYNs are dropped, so a connect
//! never completes), and a proxy in front of a real server that forwards every call
//! until the first one of a chosen step, then holds that one and everything after it.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;

/// A server that accepts every connection and never answers.
pub fn silent(ip: &str, port: u16) -> std::io::Result<SocketAddr> {
    let l = TcpListener::bind((ip, port))?;
    let addr = l.local_addr()?;
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        while let Ok((s, _)) = l.accept() {
            held.push(s);
        }
    });
    Ok(addr)
}

/// A listener that never accepts, its queue filled by one connection of its own: the
/// kernel drops every further SYN, so a connect to it waits (as to a host that drops
/// them). Both stay open until the returned guard drops.
pub struct Unreachable {
    fd: i32,
    _filler: TcpStream,
    pub addr: SocketAddr,
}

impl Unreachable {
    pub fn new() -> Unreachable {
        // SAFETY: plain socket calls on a descriptor this function owns.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0);
            let mut sa: libc::sockaddr_in = std::mem::zeroed();
            sa.sin_family = libc::AF_INET as libc::sa_family_t;
            sa.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            assert_eq!(
                libc::bind(fd, (&sa as *const libc::sockaddr_in).cast(), len),
                0
            );
            assert_eq!(libc::listen(fd, 0), 0);
            let mut len = len;
            assert_eq!(
                libc::getsockname(fd, (&mut sa as *mut libc::sockaddr_in).cast(), &mut len),
                0
            );
            let addr = SocketAddr::from(([127, 0, 0, 1], u16::from_be(sa.sin_port)));
            let filler = TcpStream::connect(addr).unwrap();
            Unreachable {
                fd,
                _filler: filler,
                addr,
            }
        }
    }
}

impl Drop for Unreachable {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this guard's.
        unsafe { libc::close(self.fd) };
    }
}

/// What a call asks for: RPC program and procedure, and for an NFSv4 COMPOUND the
/// first op after SEQUENCE and PUTFH/PUTROOTFH (the op that names the step).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub prog: u32,
    pub proc_: u32,
    pub op: Option<u32>,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn padded(n: u32) -> usize {
    (n as usize).div_ceil(4) * 4
}

/// The step of one call record (no record mark).
pub fn step_of(rec: &[u8]) -> Option<Step> {
    let prog = u32_at(rec, 12)?;
    let proc_ = u32_at(rec, 20)?;
    let mut at = 24;
    for _ in 0..2 {
        // Credential, then verifier: flavor, length, body.
        at += 8 + padded(u32_at(rec, at + 4)?);
    }
    let mut op = None;
    if prog == 100003 && proc_ == 1 {
        at += 4 + padded(u32_at(rec, at)?); // tag
        at += 8; // minor version, op count
        let mut o = u32_at(rec, at)?;
        if o == 53 {
            at += 4 + 32; // SEQUENCE's arguments
            o = u32_at(rec, at)?;
        }
        if o == 22 {
            at += 8 + padded(u32_at(rec, at + 4)?);
            o = u32_at(rec, at)?;
        } else if o == 24 {
            at += 4;
            o = u32_at(rec, at)?;
        }
        op = Some(o);
    }
    Some(Step { prog, proc_, op })
}

/// Reads one record (all its fragments), marks and all; None at the end.
fn record(s: &mut TcpStream) -> Option<(Vec<u8>, Vec<u8>)> {
    let (mut raw, mut body) = (Vec::new(), Vec::new());
    loop {
        let mut mark = [0u8; 4];
        s.read_exact(&mut mark).ok()?;
        let m = u32::from_be_bytes(mark);
        let mut frag = vec![0u8; (m & 0x7fff_ffff) as usize];
        s.read_exact(&mut frag).ok()?;
        raw.extend_from_slice(&mark);
        raw.extend_from_slice(&frag);
        body.extend_from_slice(&frag);
        if m & 0x8000_0000 != 0 {
            return Some((raw, body));
        }
    }
}

/// A proxy on 127.0.0.1 to `upstream`: calls pass until the first whose step
/// `stalls_at` picks; that call and everything after it on that connection is read
/// and dropped, and the upstream's replies are no longer passed on. The receiver gets
/// each step held.
pub fn proxy(
    upstream: SocketAddr,
    stalls_at: fn(Step) -> bool,
) -> (SocketAddr, mpsc::Receiver<Step>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        while let Ok((mut client, _)) = l.accept() {
            let Ok(mut server) = TcpStream::connect(upstream) else {
                continue;
            };
            let tx = tx.clone();
            let (mut back_from, mut back_to) =
                (server.try_clone().unwrap(), client.try_clone().unwrap());
            let held = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let held2 = held.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                while let Ok(n) = back_from.read(&mut buf) {
                    if n == 0 || held2.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    if back_to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
            std::thread::spawn(move || {
                while let Some((raw, body)) = record(&mut client) {
                    if held.load(std::sync::atomic::Ordering::SeqCst) {
                        continue;
                    }
                    match step_of(&body) {
                        Some(step) if stalls_at(step) => {
                            held.store(true, std::sync::atomic::Ordering::SeqCst);
                            let _ = server.shutdown(Shutdown::Both);
                            let _ = tx.send(step);
                        }
                        _ => {
                            if server.write_all(&raw).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
    });
    (addr, rx)
}
