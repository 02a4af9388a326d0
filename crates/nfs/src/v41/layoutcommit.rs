//! LAYOUTCOMMIT (RFC 8881 §18.42, §12.5.4) and the COMMIT of data written through data
//! servers (§13.7) for files layouts. What the data servers said of each file's WRITEs
//! is kept ([`PendingWrites`]) until the file's layout is committed: before the layout
//! is returned (a recall, the end of the pool) and before the run's opens are closed.
//!
//! What a file needs, by the least durable answer its data servers gave:
//! - UNSTABLE: a COMMIT, to the metadata server when the layout says
//!   `NFL4_UFLG_COMMIT_THRU_MDS`, else to each data server written, with the layout's
//!   handle for it; then LAYOUTCOMMIT.
//! - DATA_SYNC: the data is stable, the metadata (size, times) maybe not: LAYOUTCOMMIT.
//! - FILE_SYNC only: data and metadata are stable on the data servers; a LAYOUTCOMMIT
//!   only when the writes extended the file past the size the metadata server gives.
//!
//! A LAYOUTCOMMIT names the last byte written (`loca_last_write_offset`) and the layout
//! stateid.

use std::sync::Arc;

use super::{FileRoute, Layouts, MDS};
use crate::error::NfsError;
use crate::proto::nfs4::{Compound, Fh4, OpResult, Verifier, MINOR_VERSION};
use crate::v41::layout::StripeMap;
use crate::v41::pending_writes::{LayoutCommitted, PendingWrites, Taken};

impl Layouts {
    /// The record of `fh`'s writes through data servers (made on first use).
    pub fn pending(&self, fh: &Fh4) -> Arc<PendingWrites> {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.entry(*fh).or_default().clone()
    }

    /// Commits what was written through data servers to `fh` under its current
    /// layout (see the module notes); nothing when nothing is pending or none is needed.
    pub async fn layoutcommit(&self, fh: Fh4) -> Result<LayoutCommitted, NfsError> {
        let known = {
            let f = self.files.lock().unwrap_or_else(|e| e.into_inner());
            f.get(&fh).cloned()
        };
        match known {
            Some((path, route)) => self.commit_route(&path, &route).await,
            None => Ok(LayoutCommitted::default()),
        }
    }

    /// [`Layouts::layoutcommit`] of every known file; a failure is a layout event.
    pub async fn layoutcommit_all(&self) {
        let files: Vec<(String, Arc<FileRoute>)> = {
            let f = self.files.lock().unwrap_or_else(|e| e.into_inner());
            f.values().cloned().collect()
        };
        for (path, route) in files {
            if let Err(e) = self.commit_route(&path, &route).await {
                let why = format!("committing the writes through data servers failed: {e}");
                self.event(&path, MDS.into(), MDS.into(), why);
            }
        }
    }

    /// Commits the writes pending on `route`'s file under `route`'s layout (the one
    /// they were written under, when it is being returned). On failure they stay
    /// pending.
    pub(super) async fn commit_route(
        &self,
        path: &str,
        route: &FileRoute,
    ) -> Result<LayoutCommitted, NfsError> {
        let Some(pending) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&route.fh)
            .cloned()
        else {
            return Ok(LayoutCommitted::default());
        };
        let taken = pending.take();
        if taken.end == 0 {
            return Ok(LayoutCommitted::default());
        }
        let done = self.commit_taken(path, route, &taken).await;
        if done.is_err() {
            pending.put_back(&taken);
        }
        done
    }

    async fn commit_taken(
        &self,
        path: &str,
        route: &FileRoute,
        t: &Taken,
    ) -> Result<LayoutCommitted, NfsError> {
        let invalid = |reason: String| NfsError::Invalid {
            path: path.to_string(),
            reason,
        };
        let Some((grant, device)) = &route.layout else {
            return Err(invalid(
                "LAYOUTCOMMIT: data written through data servers, and no layout now".into(),
            ));
        };
        let fh = route.fh;
        let mut out = LayoutCommitted::default();
        if t.any_unstable() {
            if grant.layout.commit_through_mds() {
                self.mds.commit(fh, 0, 0, path).await?;
                out.commits += 1;
            } else {
                let map = StripeMap::new(&grant.layout, device)
                    .map_err(|e| invalid(format!("COMMIT to data servers: {e}")))?;
                // The servers the layout names now: one whose layout changed since it
                // was written to is not reached here (its handle is no longer known).
                let mut sent: Vec<(usize, Fh4)> = Vec::new();
                for (idx, ds_fh) in map.targets() {
                    let Some(&Some(server)) = route.servers.get(idx as usize) else {
                        continue;
                    };
                    let ds_fh = ds_fh.unwrap_or(fh);
                    if !t.unstable_on(server) || sent.contains(&(server, ds_fh)) {
                        continue;
                    }
                    let ds = self
                        .server(server)
                        .ok_or_else(|| invalid(format!("data server {server} unknown")))?;
                    ds.commit(ds_fh, path).await?;
                    sent.push((server, ds_fh));
                    out.commits += 1;
                }
            }
        }
        let needed = t.any_unstable()
            || t.data_sync
            // FILE_SYNC: only a size the metadata server does not know yet.
            || self.mds.getattr(fh, path).await.map_or(true, |a| a.size < t.end);
        if needed {
            out.new_size = self.mds.layoutcommit(fh, grant, t.end - 1, path).await?;
            out.layoutcommit = true;
        }
        Ok(out)
    }
}

impl super::DataServer {
    /// COMMIT of the whole file `fh` (the handle the layout gives for this server) on
    /// a session with a free slot (data paths may hold every slot of the others: one
    /// more session is made then, rather than wait for theirs); the write verifier.
    pub async fn commit(&self, fh: Fh4, path: &str) -> Result<Verifier, NfsError> {
        self.reserve(1).await?;
        let session = {
            let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            s.iter().find(|s| s.free_slots() > 0).or(s.first()).cloned()
        };
        let Some(session) = session else {
            return Err(NfsError::Invalid {
                path: format!("{}:{path}", self.addr),
                reason: "data server without a session".into(),
            });
        };
        let c = Compound::new("commit", MINOR_VERSION)
            .putfh(fh)
            .commit(0, 0);
        let r = session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(OpResult::Commit(v)) => Ok(*v),
            _ => Err(NfsError::BadReply {
                what: "NFSv4.1 pNFS".into(),
                path: format!("{}:{path}", self.addr),
                reason: "COMMIT reply without a verifier".into(),
            }),
        }
    }
}
