//! The opens a client holds, kept so that they can be had again after the server lost
//! them (RFC 8881 8.4.2.1): reclaimed with CLAIM_PREVIOUS during the server's grace
//! period, opened again by handle when the server has no grace for them. Callers keep
//! the stateid their OPEN returned; every call that carries one asks
//! [`Client::current_stateid`], which gives the stateid of the open as it is now.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{bad, Client};
use crate::error::NfsError;
use crate::proto::nfs4::{
    share, ArgOp, Compound, Fh4, OpResult, OpenClaim, OpenHow, Stateid, MINOR_VERSION,
};

/// Open owner of the OPENs that carry layouts.
pub(crate) const LAYOUT_OPEN_OWNER: &[u8] = b"dbio-layout";

/// `OPEN_DELEGATE_NONE`: the delegation a reclaimed open had (dbio takes none).
const NO_DELEGATION: u32 = 0;

/// One open, as it must be asked for again.
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub(crate) fh: Fh4,
    /// `share_access` (read, write or both).
    pub(crate) access: u32,
    /// Opened for layouts (their own open-owner) rather than by the file API.
    pub(crate) layout: bool,
    /// Its stateid now.
    pub(crate) now: Stateid,
    pub(crate) path: String,
}

/// The opens held, each known by every stateid it has had.
#[derive(Default)]
pub(crate) struct Opens {
    inner: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    held: HashMap<u64, Held>,
    /// `other` of every stateid an open had, to its key in `held`.
    alias: HashMap<[u8; 12], u64>,
    next: u64,
}

impl Opens {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps an open the server granted (a second OPEN of the same open is the same).
    pub(crate) fn add(&self, fh: Fh4, access: u32, layout: bool, stateid: Stateid, path: &str) {
        let mut t = self.table();
        if t.alias.contains_key(&stateid.other) {
            return;
        }
        let key = t.next;
        t.next += 1;
        t.alias.insert(stateid.other, key);
        t.held.insert(
            key,
            Held {
                fh,
                access: access & share::ACCESS_BOTH,
                layout,
                now: stateid,
                path: path.to_string(),
            },
        );
    }

    /// The stateid now of the open that had `stateid`; others as they are.
    pub(crate) fn current(&self, stateid: Stateid) -> Stateid {
        if stateid == Stateid::ANONYMOUS {
            return stateid;
        }
        let t = self.table();
        t.alias
            .get(&stateid.other)
            .and_then(|k| t.held.get(k))
            .map_or(stateid, |h| h.now)
    }

    /// Forgets the open that had `stateid` (it was closed).
    pub(crate) fn remove(&self, stateid: Stateid) {
        let mut t = self.table();
        if let Some(key) = t.alias.get(&stateid.other).copied() {
            t.held.remove(&key);
            t.alias.retain(|_, k| *k != key);
        }
    }

    /// Every open held: (key, open).
    pub(crate) fn all(&self) -> Vec<(u64, Held)> {
        let t = self.table();
        let mut v: Vec<(u64, Held)> = t.held.iter().map(|(k, h)| (*k, h.clone())).collect();
        v.sort_by_key(|(k, _)| *k);
        v
    }

    /// The open `key` has a new stateid.
    pub(crate) fn renewed(&self, key: u64, stateid: Stateid) {
        let mut t = self.table();
        if let Some(h) = t.held.get_mut(&key) {
            h.now = stateid;
            t.alias.insert(stateid.other, key);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.table().held.len()
    }
}

impl Client {
    /// The stateid now of the open that had `stateid` (the same after no recovery).
    pub fn current_stateid(&self, stateid: Stateid) -> Stateid {
        self.opens.current(stateid)
    }

    /// Opens held now (for tests and views).
    pub fn opens_held(&self) -> usize {
        self.opens.len()
    }

    /// OPEN of `held` again by its handle: CLAIM_PREVIOUS (`reclaim`, in the server's
    /// grace period) or CLAIM_FH; the new stateid.
    pub(crate) async fn reopen(&self, held: &Held, reclaim: bool) -> Result<Stateid, NfsError> {
        let run_owner = self.open_owner();
        let owner: &[u8] = if held.layout {
            LAYOUT_OPEN_OWNER
        } else {
            &run_owner
        };
        let (claim, want) = if reclaim {
            (OpenClaim::Previous(NO_DELEGATION), 0)
        } else {
            (OpenClaim::Fh, share::ACCESS_WANT_NO_DELEG)
        };
        let c = Compound::new("open", MINOR_VERSION)
            .putfh(held.fh)
            .op(ArgOp::Open {
                seqid: 0,
                share_access: held.access | want,
                share_deny: share::DENY_NONE,
                clientid: self.session.clientid(),
                owner,
                how: OpenHow::NoCreate,
                claim,
            });
        let r = self.session.compound(&c, &held.path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(OpResult::Open(o)) => Ok(o.stateid),
            _ => Err(bad(&held.path, "OPEN reply without a stateid")),
        }
    }
}
