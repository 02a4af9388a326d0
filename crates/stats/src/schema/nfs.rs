//! The NFS section of a run's result: the dNFS views.

use serde::{Deserialize, Serialize};

/// The NFS section of a run: the dNFS views, as the NFS client filled
/// them at the end of the run. Channel counters run from the opening of
/// the connections (data-set creation included); `stats` are the run's
/// calls, `setup` those made before it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsSection {
    /// dNFS view "servers": the NFS servers the run used.
    pub servers: Vec<NfsServer>,
    /// dNFS view "channels": one row per NFS connection, in pool order.
    pub channels: Vec<NfsChannel>,
    /// dNFS view "files": the server of each data file, in the order of
    /// the run's `files`.
    pub files: Vec<NfsFile>,
    /// dNFS view "stats": NFS calls per procedure and bytes moved by the run
    /// (its warm-up included), after the data set was ready.
    pub stats: NfsStats,
    /// The calls made to get the data set ready (checked, or created and
    /// written) before the run; absent in results that counted them in `stats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<NfsStats>,
    /// Path events (failover), oldest first.
    pub events: Vec<NfsEvent>,
    /// pNFS: the data servers (and the metadata server, "MDS", for I/O that went
    /// through it), with the I/Os (RPCs) and bytes each served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_servers: Vec<NfsDataServer>,
    /// pNFS: per file and server, the I/Os served and when (first and last).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_servers: Vec<NfsFileServer>,
    /// pNFS: every change of a file's data server (layout fetched, moved, fell back
    /// to the metadata server), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layout_events: Vec<NfsLayoutEvent>,
    /// Writes a server answered UNSTABLE and then restarted (its write verifier
    /// changed) before any COMMIT: they may be lost. Absent when none were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unstable_at_risk: Option<NfsAtRisk>,
}

/// UNSTABLE writes a server restart put at risk.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsAtRisk {
    pub writes: u64,
    pub bytes: u64,
}

/// A pNFS data server and what it served.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsDataServer {
    /// Address (or "MDS").
    pub address: String,
    /// READ and WRITE RPCs sent to it.
    pub ios: u64,
    pub bytes: u64,
}

/// The I/O of one file on one server (pNFS).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsFileServer {
    pub file: String,
    /// Data server address, or "MDS".
    pub server: String,
    /// READ and WRITE RPCs.
    pub ios: u64,
    pub bytes: u64,
    /// Seconds since the NFS client started, of the first and last I/O.
    pub first_s: f64,
    pub last_s: f64,
}

/// A change of a file's data server (pNFS).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsLayoutEvent {
    /// Seconds since the NFS client started.
    pub t_s: f64,
    /// Wall-clock time, seconds since the Unix epoch.
    #[serde(default)]
    pub unix_s: f64,
    pub file: String,
    /// Data servers before and after ("" before the first layout, "MDS": through the
    /// metadata server).
    pub from: String,
    pub to: String,
    pub why: String,
}

/// One data file on NFS (dNFS view "files", like V$DNFS_FILES).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsFile {
    /// File name, as in the run's `files`.
    pub name: String,
    /// File size in bytes.
    pub size: u64,
    /// NFS server holding the file.
    pub server: String,
}

/// One NFS server (dNFS view "servers", like V$DNFS_SERVERS).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsServer {
    /// Server name as given in the target or configuration.
    pub name: String,
    /// Mounted export.
    pub export: String,
    /// NFS version, e.g. "3".
    pub nfs_version: String,
    /// How the NFS calls are authenticated: "sys", "krb5", "krb5i" or "krb5p".
    #[serde(default = "sys")]
    pub sec: String,
    /// NFS port.
    pub nfs_port: u16,
    /// MOUNT port, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_port: Option<u16>,
    /// Largest READ the server accepts (FSINFO rtmax), bytes.
    pub rtmax: u32,
    /// Largest WRITE the server accepts (FSINFO wtmax), bytes.
    pub wtmax: u32,
    /// READ and WRITE sizes dbio used (larger I/Os are split), bytes.
    pub rsize: u32,
    pub wsize: u32,
    /// Network paths, as "local->server" or "server".
    pub paths: Vec<String>,
    /// NFSv4.1 sessions (the metadata session first): slots granted and in use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<NfsSession>,
}

/// One NFSv4.1 session of a server.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsSession {
    /// Fore-channel slots the server granted (as used by dbio).
    pub slots: u32,
    /// Slots busy or leased to data paths when the views were taken.
    pub in_use: u32,
}

/// One NFS connection (dNFS view "channels", like V$DNFS_CHANNELS).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsChannel {
    /// Index of the path in the server's `paths`.
    pub path: u32,
    /// Local address of the connection ("" when not connected).
    pub local_addr: String,
    /// Server address and port.
    pub server_addr: String,
    /// RPC calls sent (retransmissions not included).
    pub sends: u64,
    /// RPC replies received.
    pub receives: u64,
    /// Retransmissions after a timeout.
    pub retransmits: u64,
    /// Times the connection was re-established.
    pub reconnects: u64,
    /// RPCSEC_GSS contexts set up on this connection (Kerberos: the first, then one
    /// per renewal); 0 under AUTH_SYS.
    #[serde(default)]
    pub gss_contexts: u64,
    /// Bytes written to the socket (record marks included).
    pub bytes_sent: u64,
    /// Bytes read from the socket.
    pub bytes_received: u64,
}

/// NFS calls and bytes (dNFS view "stats", like V$DNFS_STATS).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsStats {
    /// Calls per procedure ("READ", "WRITE", ...), only procedures called.
    pub calls: Vec<NfsProcCount>,
    /// Data bytes returned by READ.
    pub read_bytes: u64,
    /// Data bytes accepted by WRITE.
    pub write_bytes: u64,
}

impl NfsStats {
    /// Adds `other`'s calls and bytes to these.
    pub fn add(&mut self, other: &NfsStats) {
        for c in &other.calls {
            match self.calls.iter_mut().find(|x| x.procedure == c.procedure) {
                Some(x) => x.calls += c.calls,
                None => self.calls.push(c.clone()),
            }
        }
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
    }

    /// What was counted since `earlier` (a snapshot of the same counters);
    /// procedures without new calls are left out.
    pub fn since(&self, earlier: &NfsStats) -> NfsStats {
        let before = |p: &str| {
            earlier
                .calls
                .iter()
                .find(|x| x.procedure == p)
                .map_or(0, |x| x.calls)
        };
        NfsStats {
            calls: self
                .calls
                .iter()
                .map(|c| NfsProcCount {
                    procedure: c.procedure.clone(),
                    calls: c.calls.saturating_sub(before(&c.procedure)),
                })
                .filter(|c| c.calls > 0)
                .collect(),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
        }
    }
}

/// Calls of one NFS procedure.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsProcCount {
    pub procedure: String,
    pub calls: u64,
}

/// A path event: a path went down (its requests moved to other paths) or
/// came back.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NfsEvent {
    /// Seconds since the connections were opened.
    pub t_s: f64,
    /// Wall-clock time (seconds since the Unix epoch; 0 in results written before it
    /// was recorded).
    #[serde(default)]
    pub unix_s: f64,
    /// The path, as in the server's `paths`.
    pub path: String,
    /// "down: reason" or "up".
    pub what: String,
    /// Requests re-issued on other paths.
    pub requests_moved: u64,
    /// For "up": seconds the path was down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_after_s: Option<f64>,
}

/// Results saved before `sec` was recorded were all AUTH_SYS.
fn sys() -> String {
    "sys".into()
}
