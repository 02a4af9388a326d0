//! Network paths to one NFS server: the `local:`/`path:` pairs of an
//! oranfstab entry. Every path reaches the same storage, so a file handle
//! obtained over one path is valid on all of them.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// One path: an optional local address to bind (used with `dontroute`, so
/// the traffic leaves through that interface) and the server's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSpec {
    pub local: Option<IpAddr>,
    pub server: IpAddr,
}

impl PathSpec {
    pub fn new(server: IpAddr) -> PathSpec {
        PathSpec {
            local: None,
            server,
        }
    }

    /// `local->server`, or just the server when nothing is bound.
    pub fn label(&self) -> String {
        match self.local {
            Some(l) => format!("{l}->{}", self.server),
            None => self.server.to_string(),
        }
    }

    /// The NFS service address on this path.
    pub fn nfs_addr(&self, port: u16) -> SocketAddr {
        SocketAddr::new(self.server, port)
    }
}

/// A failover event: a path went down and its requests moved elsewhere.
#[derive(Clone, Debug, PartialEq)]
pub struct PathEvent {
    /// Seconds since the pool was opened.
    pub at_s: f64,
    /// Wall-clock time (seconds since the Unix epoch), to set against outside events
    /// such as a server's restart.
    pub unix_s: f64,
    /// Index of the path in the pool.
    pub path: usize,
    /// What happened ("down: reason" or "up").
    pub what: String,
    /// Requests re-issued on other paths because of this event.
    pub moved: u64,
    /// For an "up" event: seconds the path was down.
    pub recovered_after_s: Option<f64>,
}

/// The live state of one path, shared by its channels and every user.
#[derive(Debug)]
pub struct PathState {
    pub spec: PathSpec,
    /// pNFS: the data server this path reaches (`None`: the server the pool opened).
    pub data_server: Option<SocketAddr>,
    up: AtomicBool,
    down_since: Mutex<Option<Instant>>,
    /// Requests moved off this path since it last went down.
    moved: AtomicU64,
}

impl PathState {
    pub fn new(spec: PathSpec) -> PathState {
        PathState {
            spec,
            data_server: None,
            up: AtomicBool::new(true),
            down_since: Mutex::new(None),
            moved: AtomicU64::new(0),
        }
    }

    /// The path to pNFS data server `addr`.
    pub fn to_data_server(addr: SocketAddr) -> PathState {
        PathState {
            data_server: Some(addr),
            ..PathState::new(PathSpec::new(addr.ip()))
        }
    }

    /// How views name the path: `local->server`, or `DS address` for a data server
    /// (which may share its address with the metadata server).
    pub fn label(&self) -> String {
        match self.data_server {
            Some(a) => format!("DS {a}"),
            None => self.spec.label(),
        }
    }

    /// Whether new requests may be sent on this path.
    pub fn is_up(&self) -> bool {
        self.up.load(Relaxed)
    }

    /// Marks the path down; true if it was up (the caller records the event).
    pub fn mark_down(&self) -> bool {
        let was_up = self.up.swap(false, Relaxed);
        if was_up {
            if let Ok(mut d) = self.down_since.lock() {
                *d = Some(Instant::now());
            }
            self.moved.store(0, Relaxed);
        }
        was_up
    }

    /// Marks the path up; returns how long it was down if it was.
    pub fn mark_up(&self) -> Option<std::time::Duration> {
        if self.up.swap(true, Relaxed) {
            return None;
        }
        self.down_since
            .lock()
            .ok()
            .and_then(|mut d| d.take())
            .map(|t| t.elapsed())
    }

    pub fn count_moved(&self) {
        self.moved.fetch_add(1, Relaxed);
    }

    pub fn moved(&self) -> u64 {
        self.moved.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn down_and_up_are_reported_once() {
        let p = PathState::new(PathSpec {
            local: Some("10.0.0.1".parse().unwrap()),
            server: "10.0.0.2".parse().unwrap(),
        });
        assert_eq!(p.spec.label(), "10.0.0.1->10.0.0.2");
        assert!(p.is_up());
        assert!(p.mark_up().is_none());
        assert!(p.mark_down());
        assert!(!p.mark_down());
        p.count_moved();
        assert_eq!(p.moved(), 1);
        assert!(!p.is_up());
        assert!(p.mark_up().is_some());
        assert!(p.is_up());
    }
}
