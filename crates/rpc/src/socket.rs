//! A connection's TCP socket, registered with the runtime for reading only.
//!
//! The runtime's own `TcpStream` always asks to be woken when the socket becomes
//! writable too, and on Linux every acknowledgement that frees send-buffer space is such
//! a wake-up: on a connection whose replies carry those acknowledgements, the task would
//! be woken for every reply even while the receive low-water mark asks the kernel to
//! gather several (see `coalesce`). Here writability is watched only while a write is
//! blocked, through a second registration of a duplicate descriptor. [`open`] connects
//! one (timeout, reserved port, local address, fail-fast linger).

use std::io::{self, IoSlice, Write};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::net::TcpSocket;

use crate::config::ConnConfig;
use crate::error::TransportError;

/// What [`Socket::ready`] found.
pub(crate) enum Ready {
    /// Data, end of stream or an error to read.
    Read,
    /// A blocked write may go on.
    Write,
}

pub(crate) struct Socket {
    read: AsyncFd<std::net::TcpStream>,
    /// Present while a write is blocked (the send buffer is full).
    write: Option<AsyncFd<std::net::TcpStream>>,
}

impl Socket {
    /// Takes over a connected stream from the runtime.
    pub(crate) fn new(stream: tokio::net::TcpStream) -> io::Result<Socket> {
        let stream = stream.into_std()?;
        stream.set_nonblocking(true)?;
        Ok(Socket {
            read: register(stream, Interest::READABLE)?,
            write: None,
        })
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.read.get_ref().local_addr()
    }

    /// Waits until there is something to read or a blocked write may go on. The
    /// readiness is consumed here: the caller then reads (or writes) until the socket
    /// is empty or says it would block, and data that comes meanwhile raises a new event.
    /// An end of stream or an error is not consumed: the next wait returns at once, so
    /// the caller reads on to the end even after a short read.
    pub(crate) async fn ready(&self) -> io::Result<Ready> {
        match &self.write {
            None => {
                consume(self.read.readable().await?);
                Ok(Ready::Read)
            }
            Some(w) => tokio::select! {
                biased;
                r = self.read.readable() => {
                    consume(r?);
                    Ok(Ready::Read)
                }
                r = w.writable() => {
                    r?.clear_ready();
                    Ok(Ready::Write)
                }
            },
        }
    }

    /// One non-blocking read into `buf`'s spare capacity, past the runtime's readiness
    /// check (after the coalescing fallback timer, data below the mark is there but was
    /// never signalled).
    /// At most `max` bytes.
    pub(crate) fn read_buf(&self, buf: &mut BytesMut, max: usize) -> io::Result<usize> {
        recv_now(self.as_raw_fd(), buf, max)
    }

    /// Sets the receive low-water mark (SO_RCVLOWAT).
    pub(crate) fn set_rcvlowat(&self, bytes: usize) -> io::Result<()> {
        let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        set_int(self.as_raw_fd(), libc::SO_RCVLOWAT, v)
    }

    /// The receive buffer size (SO_RCVBUF), or 0 if it cannot be read.
    pub(crate) fn rcvbuf(&self) -> usize {
        get_int(self.as_raw_fd(), libc::SO_RCVBUF).map_or(0, |v| usize::try_from(v).unwrap_or(0))
    }

    /// One non-blocking `writev`; when it would block, starts watching for writability.
    pub(crate) fn write_vectored(&mut self, iov: &[IoSlice<'_>]) -> io::Result<usize> {
        match self.read.get_ref().write_vectored(iov) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if self.write.is_none() {
                    let dup = self.read.get_ref().try_clone()?;
                    self.write = Some(register(dup, Interest::WRITABLE)?);
                }
                Err(e)
            }
            r => r,
        }
    }

    /// Everything queued was written: stop watching for writability.
    pub(crate) fn drained(&mut self) {
        self.write = None;
    }
}

/// Clears a plain read readiness; keeps an end of stream or an error.
fn consume(mut guard: tokio::io::unix::AsyncFdReadyGuard<'_, std::net::TcpStream>) {
    let r = guard.ready();
    if !r.is_read_closed() && !r.is_error() {
        guard.clear_ready();
    }
}

/// Registers an owned stream with the runtime's reactor.
fn register(
    stream: std::net::TcpStream,
    interest: Interest,
) -> io::Result<AsyncFd<std::net::TcpStream>> {
    // SAFETY: the stream owns its descriptor, which stays open and the same until the
    // `AsyncFd` that takes the stream over is dropped.
    unsafe { AsyncFd::register_with_interest(stream, interest) }.map_err(|e| e.into_parts().1)
}

/// Turns on a boolean socket option of level SOL_SOCKET.
pub(crate) fn set_flag(fd: RawFd, opt: libc::c_int) -> io::Result<()> {
    set_int(fd, opt, 1)
}

/// Reads an integer socket option of level SOL_SOCKET.
pub(crate) fn get_int(fd: RawFd, opt: libc::c_int) -> io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for writes of the sizes given.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn set_int(fd: RawFd, opt: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: `v` outlives the call and the length given is its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One non-blocking receive of at most `max` bytes into `buf`'s spare capacity.
fn recv_now(fd: RawFd, buf: &mut BytesMut, max: usize) -> io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    let len = spare.len().min(max);
    // SAFETY: the kernel writes at most `len` bytes, within the spare capacity.
    let n = unsafe { libc::recv(fd, spare.as_mut_ptr().cast(), len, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    // SAFETY: the first `n` bytes of the spare capacity were just written.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        self.read.get_ref().as_raw_fd()
    }
}

/// Opens a TCP connection within `connect_timeout`, from a reserved port if asked.
pub(crate) async fn open(addr: SocketAddr, config: &ConnConfig) -> Result<Socket, TransportError> {
    let err = |reason: String| TransportError::Connect {
        addr: addr.to_string(),
        reason,
    };
    let attempt = async {
        // A reserved port may be in TIME_WAIT towards this server: try a few.
        let tries = if config.reserved_port { 16 } else { 1 };
        let mut last = io::Error::other("no attempt");
        for i in 0..tries {
            let socket = if addr.is_ipv4() {
                TcpSocket::new_v4()
            } else {
                TcpSocket::new_v6()
            }?;
            if config.fail_fast {
                // Closing resets the connection: data still queued for a
                // dead path is dropped, never delivered after a re-issue.
                // A zero linger time resets at once: the drop never blocks.
                #[allow(deprecated)]
                socket.set_linger(Some(Duration::ZERO))?;
            }
            if config.dontroute {
                set_flag(socket.as_raw_fd(), libc::SO_DONTROUTE)?;
            }
            if config.reserved_port {
                bind_reserved(&socket, addr, config.bind, i)?;
            } else if let Some(ip) = config.bind {
                socket.bind(SocketAddr::new(ip, 0))?;
            }
            match socket.connect(addr).await {
                Ok(s) => return Ok(s),
                Err(e)
                    if e.kind() == io::ErrorKind::AddrNotAvailable
                        || e.kind() == io::ErrorKind::AddrInUse =>
                {
                    last = e
                }
                Err(e) => return Err(e),
            }
        }
        Err(last)
    };
    let stream = tokio::time::timeout(config.connect_timeout, attempt)
        .await
        .map_err(|_| {
            err(format!(
                "timed out after {:.1} s",
                config.connect_timeout.as_secs_f64()
            ))
        })?
        .map_err(|e| err(e.to_string()))?;
    stream.set_nodelay(true).map_err(|e| err(e.to_string()))?;
    Socket::new(stream).map_err(|e| err(e.to_string()))
}

/// Binds a free source port in 512..1024, starting from a varying point.
fn bind_reserved(
    socket: &TcpSocket,
    addr: SocketAddr,
    bind: Option<std::net::IpAddr>,
    attempt: u32,
) -> io::Result<()> {
    let local: std::net::IpAddr = if let Some(ip) = bind {
        ip
    } else if addr.is_ipv4() {
        std::net::Ipv4Addr::UNSPECIFIED.into()
    } else {
        std::net::Ipv6Addr::UNSPECIFIED.into()
    };
    let start =
        (crate::conn_task::initial_xid().wrapping_add(attempt.wrapping_mul(97)) % 512) as u16;
    let mut last = io::Error::new(io::ErrorKind::AddrInUse, "no free reserved port");
    for i in 0..512u16 {
        let port = 512 + (start + i) % 512;
        match socket.bind(SocketAddr::new(local, port)) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => last = e,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("binding reserved port {port}: {e}"),
                ))
            }
        }
    }
    Err(last)
}
