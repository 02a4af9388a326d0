//! Network paths to one NFS server: the `local:`/`path:` pairs of an
//! oranfstab entry. Every path reaches the same storage, so a file handle
//! obtained over one path is valid on all of them.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

use crate::table::Table;

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

/// Paths and their events, shared by the pool and its probe task.
#[derive(Debug)]
pub struct Health {
    pub paths: Table<PathState>,
    events: Mutex<Vec<PathEvent>>,
    opened: Instant,
}

impl Health {
    /// Health of `paths`, with room for `more` added later (pNFS data servers).
    pub fn new(paths: Vec<PathState>, more: usize) -> Health {
        Health {
            paths: Table::new(paths, more),
            events: Mutex::new(Vec::new()),
            opened: Instant::now(),
        }
    }

    /// Marks `path` down (recording the event once) and counts one request
    /// moved off it when `moved`.
    pub fn failed(&self, path: usize, reason: &str, moved: bool) {
        let Some(p) = self.paths.get(path) else {
            return;
        };
        if p.mark_down() {
            self.record(path, format!("down: {reason}"), None);
        }
        if moved {
            p.count_moved();
            if let Ok(mut ev) = self.events.lock() {
                if let Some(e) = ev
                    .iter_mut()
                    .rev()
                    .find(|e| e.path == path && e.what.starts_with("down"))
                {
                    e.moved += 1;
                }
            }
        }
    }

    /// `path` answered: if it was down, it rejoins and the time it was
    /// down is recorded.
    pub fn answered(&self, path: usize) {
        let Some(p) = self.paths.get(path) else {
            return;
        };
        if let Some(down) = p.mark_up() {
            self.record(path, "up".into(), Some(down.as_secs_f64()));
        }
    }

    /// Records what happened on `path` that is neither down nor up (a new session).
    pub fn note(&self, path: usize, what: String) {
        self.record(path, what, None);
    }

    /// Records an event of `path` ("up" events and state recovered: with how long it
    /// took to recover).
    pub(crate) fn record(&self, path: usize, what: String, recovered_after_s: Option<f64>) {
        self.record_at(path, what, recovered_after_s);
    }

    /// [`Self::record`], returning the event's index (for [`Self::lengthen`]).
    pub(crate) fn record_at(
        &self,
        path: usize,
        what: String,
        recovered_after_s: Option<f64>,
    ) -> Option<usize> {
        let mut ev = self.events.lock().ok()?;
        let unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        ev.push(PathEvent {
            at_s: self.opened.elapsed().as_secs_f64(),
            unix_s,
            path,
            what,
            moved: 0,
            recovered_after_s,
        });
        Some(ev.len() - 1)
    }

    /// Event `index` took at least `secs` to recover for someone: a caller that had
    /// waited longer came after it was recorded.
    pub(crate) fn lengthen(&self, index: usize, secs: f64) {
        if let Some(e) = self
            .events
            .lock()
            .ok()
            .as_mut()
            .and_then(|ev| ev.get_mut(index))
        {
            if e.recovered_after_s.is_some_and(|s| s < secs) {
                e.recovered_after_s = Some(secs);
            }
        }
    }

    /// An event of `path` that happened at `when` (recorded elsewhere, such as a
    /// connection's RPCSEC_GSS contexts), on this table's clock.
    pub(crate) fn event_at(
        &self,
        path: usize,
        when: std::time::SystemTime,
        what: String,
    ) -> PathEvent {
        let ago = std::time::SystemTime::now()
            .duration_since(when)
            .unwrap_or_default();
        PathEvent {
            at_s: self.opened.elapsed().saturating_sub(ago).as_secs_f64(),
            unix_s: when
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            path,
            what,
            moved: 0,
            recovered_after_s: None,
        }
    }

    /// Events so far, oldest first.
    pub fn events(&self) -> Vec<PathEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod lengthen_tests {
    use super::Health;

    #[test]
    fn a_recovery_event_takes_the_longest_wait_reported() {
        let h = Health::new(Vec::new(), 0);
        let i = h.record_at(0, "state recovered".into(), Some(1.0)).unwrap();
        h.record(0, "other".into(), None);
        h.lengthen(i, 3.5);
        h.lengthen(i, 2.0); // a shorter wait changes nothing
        h.lengthen(1, 9.0); // nor does an event without a recovery time
        let ev = h.events();
        assert_eq!(ev[0].recovered_after_s, Some(3.5));
        assert_eq!(ev[1].recovered_after_s, None);
    }
}
