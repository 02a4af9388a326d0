//! The kernel's share of an RPC on this machine, with no RPC at all: the CPU a sender
//! spends to write 8 KiB to a TCP socket on loopback (which, on loopback, includes the
//! receiver's TCP processing and waking it), alone and 16 to a `writev`; and the CPU of
//! one sleep and wake-up of a thread waiting for a reply. Every NFS client pays these
//! under each WRITE (and each wait) here, so they bound what its own code can save.
//!
//! `cargo run --release -p dbio-rpc --example loopback_floor [-- SECONDS]`

use std::io::{IoSlice, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

const BLOCK: usize = 8192;

/// CPU time (user + system) of the calling thread.
fn thread_cpu() -> Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes only into `ru`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// A connected pair on loopback; the accepted end is returned second.
fn pair() -> std::io::Result<(TcpStream, TcpStream)> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let a = TcpStream::connect(l.local_addr()?)?;
    let (b, _) = l.accept()?;
    a.set_nodelay(true)?;
    b.set_nodelay(true)?;
    Ok((a, b))
}

/// Sender CPU per 8 KiB block, writing `per_call` blocks per `writev` for `secs`.
fn send_floor(per_call: usize, secs: Duration) -> std::io::Result<(f64, f64)> {
    let (mut tx, mut rx) = pair()?;
    let sink = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 20];
        while rx.read(&mut buf).is_ok_and(|n| n > 0) {}
    });
    let blocks: Vec<Vec<u8>> = (0..per_call).map(|i| vec![i as u8 | 1; BLOCK]).collect();
    let (c0, t0) = (thread_cpu(), Instant::now());
    let mut sent = 0usize;
    while t0.elapsed() < secs {
        let mut iov: Vec<IoSlice> = blocks.iter().map(|b| IoSlice::new(b)).collect();
        let mut left = &mut iov[..];
        let mut want = per_call * BLOCK;
        while want > 0 {
            let n = tx.write_vectored(left)?;
            want -= n;
            sent += n;
            IoSlice::advance_slices(&mut left, n);
        }
    }
    let cpu = (thread_cpu() - c0).as_secs_f64();
    let wall = t0.elapsed().as_secs_f64();
    drop(tx);
    let _ = sink.join();
    let blocks = sent as f64 / BLOCK as f64;
    Ok((cpu / blocks * 1e6, sent as f64 / wall / 1e6))
}

/// CPU per sleep and wake-up of a thread waiting for a 1-byte reply that comes 100 us
/// after its 1-byte request (the send and receive included).
fn wake_floor(secs: Duration) -> std::io::Result<f64> {
    let (mut a, mut b) = pair()?;
    let echo = std::thread::spawn(move || {
        let mut x = [0u8; 1];
        while b.read_exact(&mut x).is_ok() {
            std::thread::sleep(Duration::from_micros(100));
            if b.write_all(&x).is_err() {
                break;
            }
        }
    });
    let (c0, t0) = (thread_cpu(), Instant::now());
    let mut n = 0u64;
    let mut x = [1u8; 1];
    while t0.elapsed() < secs {
        a.write_all(&x)?;
        a.read_exact(&mut x)?;
        n += 1;
    }
    let cpu = (thread_cpu() - c0).as_secs_f64();
    drop(a);
    let _ = echo.join();
    Ok(cpu / n as f64 * 1e6)
}

fn main() -> std::io::Result<()> {
    let secs = std::env::args()
        .nth(1)
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(3.0);
    let secs = Duration::from_secs_f64(secs.max(0.1));
    for per_call in [1, 16] {
        let (us, mbs) = send_floor(per_call, secs)?;
        println!(
            "send 8 KiB on loopback, {per_call:>2} per writev: {us:.2} us of sender CPU per 8 KiB ({mbs:.0} MB/s)"
        );
    }
    println!(
        "sleep and wake-up for a reply: {:.2} us of CPU each",
        wake_floor(secs)?
    );
    Ok(())
}
