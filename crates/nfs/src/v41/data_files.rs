//! The files a pool's data paths do I/O on (a run's data files), each opened once for
//! the pool: by handle, else by name in its directory (some servers refuse OPEN by
//! handle), for reading and writing, so that its I/O carries the open's stateid. With
//! pNFS the file's layout is asked with that open before its first I/O. A file the
//! server will not open goes with the anonymous stateid and no layout, and one warning.
//! At the end the writes through data servers are committed (LAYOUTCOMMIT) while the
//! opens, and the layouts that go with them, are still held; then the opens are closed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::NfsError;
use crate::proto::nfs4::{Fh4, Stateid};
use crate::v41::pnfs::Layouts;
use crate::v41::{Access, Client, OpenFile};

/// Longest the end of a pool waits for the server to take back its data files' opens
/// (and the layout commits before them): a server that does not answer drops them
/// with the lease.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The pool's opens of its data files.
pub(crate) struct DataFiles {
    client: Arc<Client>,
    layouts: Option<Arc<Layouts>>,
    /// By path from the server's root: the open, or `None` where the server refused
    /// it. Held across an OPEN, so that a file is opened once whoever asks first.
    opens: tokio::sync::Mutex<HashMap<String, Option<OpenFile>>>,
    /// What the user is told: a file that cannot be opened.
    warnings: Mutex<Vec<String>>,
}

/// A connection that failed (as opposed to a server that said no).
fn is_connection(e: &NfsError) -> bool {
    matches!(e, NfsError::Transport { .. } | NfsError::Rpc { .. })
}

impl DataFiles {
    pub(crate) fn new(client: Arc<Client>, layouts: Option<Arc<Layouts>>) -> DataFiles {
        DataFiles {
            client,
            layouts,
            opens: tokio::sync::Mutex::new(HashMap::new()),
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// The stateid of the pool's open of `fh` (at `path`, from the server's root),
    /// opening it the first time; with pNFS, its layout fetched unless known. A server
    /// that refuses the open leaves the file's I/O anonymous (`None`), with a warning;
    /// only a failing connection is an error.
    pub(crate) async fn open(&self, fh: Fh4, path: &str) -> Result<Option<Stateid>, NfsError> {
        let stateid = {
            let mut opens = self.opens.lock().await;
            match opens.get(path) {
                Some(open) => open.as_ref().map(|o| o.stateid),
                None => {
                    let open = match self.open_by_handle_else_name(fh, path).await {
                        Ok(open) => Some(open),
                        Err(e) if is_connection(&e) => return Err(e),
                        Err(e) => {
                            self.refused(fh, path, e);
                            None
                        }
                    };
                    let stateid = open.as_ref().map(|o| o.stateid);
                    opens.insert(path.to_string(), open);
                    stateid
                }
            }
        };
        if let (Some(layouts), Some(open)) = (&self.layouts, stateid) {
            // Known before the first I/O, so that data paths find its data servers.
            if layouts.route(&fh).is_none() {
                layouts.fetch(fh, path, open, "first use").await?;
            }
        }
        Ok(stateid)
    }

    /// OPEN by handle, else by name in its directory, which must open `fh` (else the
    /// name names another file now, and that open is closed again).
    async fn open_by_handle_else_name(&self, fh: Fh4, path: &str) -> Result<OpenFile, NfsError> {
        let by_handle = match self.client.open_handle(fh, Access::Both, path).await {
            Ok(open) => return Ok(open),
            Err(e) if is_connection(&e) => return Err(e),
            Err(e) => e,
        };
        let by_name = async {
            let trimmed = path.trim_end_matches('/');
            let (dir, name) = trimmed.rsplit_once('/').unwrap_or(("", trimmed));
            if name.is_empty() {
                return Err(NfsError::Invalid {
                    path: path.to_string(),
                    reason: "no file name to open by".into(),
                });
            }
            let (dir, _) = self.client.lookup_path(dir).await?;
            let open = self.client.open(dir, name, Access::Both, path).await?;
            if open.fh != fh {
                let _ = self.client.close_file(open).await;
                return Err(NfsError::Invalid {
                    path: path.to_string(),
                    reason: "the name now names another file".into(),
                });
            }
            Ok(open)
        };
        match by_name.await {
            Ok(open) => Ok(open),
            Err(e) if is_connection(&e) => Err(e),
            Err(by_name) => Err(NfsError::Invalid {
                path: path.to_string(),
                reason: format!("OPEN by handle: {by_handle}; by name: {by_name}"),
            }),
        }
    }

    /// The server refused to open `fh`: one warning, and with pNFS a route through the
    /// metadata server that says why.
    fn refused(&self, fh: Fh4, path: &str, e: NfsError) {
        let shown = format!("{}:{path}", self.client.server());
        let mut w = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        w.push(format!(
            "{shown}: cannot open for the run ({e}); its I/O carries the anonymous \
             stateid (and, with pNFS, gets no layout)"
        ));
        if let Some(layouts) = &self.layouts {
            layouts.without_open(fh, path, e, "first use");
        }
    }

    /// Gives back the pool's open of `path` (the file is being removed or replaced).
    /// A close that fails leaves state the server drops with the lease.
    pub(crate) async fn forget(&self, path: &str) {
        let open = self.opens.lock().await.remove(path).flatten();
        if let Some(open) = open {
            let _ = self.client.close_file(open).await;
        }
    }

    /// The end: the writes through data servers committed (LAYOUTCOMMIT where needed)
    /// while the opens are held, then every open closed, within [`CLOSE_TIMEOUT`] in
    /// all. Errors are left: the server drops the state with the lease.
    pub(crate) async fn close_all(&self) {
        let opens: Vec<OpenFile> = {
            let mut o = self.opens.lock().await;
            o.drain().filter_map(|(_, open)| open).collect()
        };
        if opens.is_empty() {
            // Layouts asked with no open of ours are committed when they are returned.
            return;
        }
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, async {
            if let Some(l) = &self.layouts {
                l.layoutcommit_all().await;
            }
            for open in opens {
                let _ = self.client.close_file(open).await;
            }
        })
        .await;
    }

    /// Warnings for the user: each file that could not be opened, once.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
