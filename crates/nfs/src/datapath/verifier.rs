//! Write verifiers (RFC 1813 §3.3.7, RFC 8881 §18.32.3). Every WRITE reply carries
//! the server instance's verifier, which changes when the server restarts: data it
//! answered UNSTABLE under the old one, and that no COMMIT has confirmed since, may be
//! gone. A client that keeps the data sends it again; the data path keeps none (writes
//! go from the caller's buffers), so it counts what was put at risk and says so, once
//! per restart, instead of losing it silently.

use std::collections::HashMap;

use crate::kinds::Stable as Stability;
use crate::proto::nfs4::Verifier;
use crate::router::{AtRisk, Server};

/// UNSTABLE writes of one file on one server under its current verifier.
#[derive(Debug)]
struct Track {
    verifier: Verifier,
    unstable: AtRisk,
}

/// The verifiers of one data path's writes, per (server, file): the server opened
/// counts as one whatever path its replies take.
#[derive(Debug, Default)]
pub(crate) struct Verifiers {
    known: HashMap<(Server, u32), Track>,
}

impl Verifiers {
    /// A WRITE of `bytes` to `file` on `server` was answered `how`, with `verifier`.
    /// Returns what a change of verifier put at risk: the UNSTABLE writes of the file
    /// on that server since the run began (the data path sends no COMMIT of its own).
    pub fn wrote(
        &mut self,
        server: Server,
        file: u32,
        bytes: u32,
        how: Stability,
        verifier: Verifier,
    ) -> Option<AtRisk> {
        use std::collections::hash_map::Entry;
        let unstable = how == Stability::Unstable;
        // One lookup per reply: this runs for every WRITE.
        let t = match self.known.entry((server, file)) {
            Entry::Occupied(t) => t.into_mut(),
            Entry::Vacant(t) if unstable => t.insert(Track {
                verifier,
                unstable: AtRisk::default(),
            }),
            Entry::Vacant(_) => return None,
        };
        let mut risk = None;
        if t.verifier != verifier {
            risk = Some(std::mem::take(&mut t.unstable)).filter(|r| r.writes > 0);
            t.verifier = verifier;
        }
        if unstable {
            t.unstable.writes += 1;
            t.unstable.bytes += u64::from(bytes);
        }
        risk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Verifier = [1; 8];
    const B: Verifier = [2; 8];

    fn risk(writes: u64, bytes: u64) -> Option<AtRisk> {
        Some(AtRisk { writes, bytes })
    }

    #[test]
    fn a_changed_verifier_names_the_unstable_writes_before_it() {
        let mut v = Verifiers::default();
        let ds = Server::Data(3);
        assert_eq!(v.wrote(ds, 0, 8192, Stability::Unstable, A), None);
        assert_eq!(v.wrote(ds, 0, 4096, Stability::Unstable, A), None);
        // Another file and another server keep their own count.
        assert_eq!(v.wrote(ds, 1, 512, Stability::Unstable, A), None);
        assert_eq!(
            v.wrote(Server::Opened, 0, 512, Stability::Unstable, B),
            None
        );
        assert_eq!(v.wrote(ds, 0, 8192, Stability::Unstable, B), risk(2, 12288));
        // Counted once: the next write under the new verifier puts nothing at risk.
        assert_eq!(v.wrote(ds, 0, 8192, Stability::Unstable, B), None);
        // File 1 learns of the restart on its own next write.
        assert_eq!(v.wrote(ds, 1, 512, Stability::FileSync, B), risk(1, 512));
    }

    #[test]
    fn stable_writes_put_nothing_at_risk() {
        let mut v = Verifiers::default();
        let s = Server::Opened;
        assert_eq!(v.wrote(s, 0, 8192, Stability::FileSync, A), None);
        assert_eq!(v.wrote(s, 0, 8192, Stability::DataSync, B), None);
        assert_eq!(v.wrote(s, 0, 8192, Stability::FileSync, A), None);
        // Nor does a restart seen before any UNSTABLE write under the old verifier.
        assert_eq!(v.wrote(s, 0, 8192, Stability::Unstable, A), None);
        assert_eq!(v.wrote(s, 0, 8192, Stability::FileSync, B), risk(1, 8192));
        assert_eq!(v.wrote(s, 0, 8192, Stability::FileSync, A), None);
    }
}
