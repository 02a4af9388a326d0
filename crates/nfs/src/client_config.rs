//! The one configuration of a client: which server and path (the URL), and every
//! setting of how the client reaches it, each held once. The command line, the URL's
//! parameters and an oranfstab `server:` entry each give [`Settings`]; they are laid
//! one over another, the command line over the URL over the oranfstab entry, and
//! what none of them says takes the default. A [`ClientConfig`] is what
//! [`crate::pool::Pool::open`] takes.

use std::net::IpAddr;
use std::time::Duration;

use dbio_rpc::conn::ConnConfig;
use dbio_rpc::{AuthSys, Credential};

use crate::error::NfsError;
use crate::path::PathSpec;
use crate::retry::Backoff;
use crate::settings::Settings;
use crate::url::NfsUrl;

/// Connections per path unless a source says otherwise: against nfs-ganesha here 4
/// gave about a fifth more IOPS than 1 (BENCHMARKS.md).
pub const DEFAULT_CONNS: u32 = 4;
/// Largest READ or WRITE per RPC unless a source says otherwise, even when the server
/// allows more: the workloads' largest I/O.
pub const MAX_TRANSFER: u32 = 1 << 20;
/// With several paths: time without any reply before a path counts as dead, unless a
/// source sets `timeo`. Short, because the other paths carry the load meanwhile; a
/// slow path still answers something.
pub const PATH_TIMEOUT: Duration = Duration::from_secs(2);
/// pNFS: seconds between fetches of every file's layout, unless a source says.
pub const LAYOUT_REFRESH_S: u32 = 10;

/// How one client reaches one server: everything a pool is opened with.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The server, its ports, the path on it and the protocol. Its parameters are
    /// this configuration's fields: its `settings` are left empty.
    pub url: NfsUrl,
    /// The server's name in views and messages (default: the URL's host).
    pub server_name: String,
    /// Local address the first path (to the URL's host) sends from.
    pub local: Option<IpAddr>,
    /// Network paths to the same storage after the first.
    pub paths: Vec<PathSpec>,
    /// Connections on each path.
    pub conns: u32,
    /// Threads running the connection tasks; 0: none of the pool's own, the threads
    /// that wait on the pool run them (see `pool.rs`).
    pub workers: usize,
    /// Largest READ or WRITE per RPC asked for (like rsize/wsize), before the server's
    /// limits.
    pub max_transfer: u32,
    /// Bound on each attempt to mount; `None`: the connection's timeouts alone.
    pub mnt_timeout: Option<Duration>,
    /// With several paths: silence after which a path counts as dead.
    pub timeo: Duration,
    /// Every WRITE FILE_SYNC, whatever the workload asks.
    pub sync: bool,
    /// pNFS: how often every file's layout is fetched again; `None`: only after a data
    /// server fails.
    pub layout_refresh: Option<Duration>,
    /// How calls are authenticated: AUTH_SYS, or Kerberos (then every NFS connection
    /// sets up its own RPCSEC_GSS context with `nfs@HOST`; MOUNT and the portmapper
    /// stay on AUTH_SYS, as the kernel's mount does).
    pub sec: dbio_rpc::Flavor,
    /// Identity (AUTH_SYS), the connections' timeouts, retries, reserved port,
    /// `dontroute` and reply batch, and the back-off of busy replies.
    pub client: ClientOptions,
}

impl ClientConfig {
    /// The configuration of `url`: its parameters over the defaults.
    pub fn new(url: NfsUrl) -> ClientConfig {
        ClientConfig::layered(url, Settings::default(), Settings::default())
    }

    /// The configuration of `url` from its sources, first the one that wins:
    /// `command_line`, the URL's own parameters, then `below` (an oranfstab entry's
    /// settings, or a command's own defaults), then the defaults.
    pub fn layered(mut url: NfsUrl, command_line: Settings, below: Settings) -> ClientConfig {
        let from_url = std::mem::take(&mut url.settings);
        let s = command_line.over(from_url).over(below);
        let mut client = ClientOptions::default();
        client.uid = s.uid.unwrap_or(client.uid);
        client.gid = s.gid.unwrap_or(client.gid);
        client.gids = s.gids.unwrap_or_default();
        if let Some(t) = s.timeout {
            client.conn.timeout = t;
            client.conn.connect_timeout = t;
        }
        client.conn.retries = s.retries.unwrap_or(client.conn.retries);
        client.conn.reserved_port = s.reserved_port.unwrap_or(client.conn.reserved_port);
        client.conn.dontroute = s.dontroute.unwrap_or(client.conn.dontroute);
        client.conn.reply_batch = s.reply_batch.unwrap_or(client.conn.reply_batch).max(1);
        let sec = s.sec.unwrap_or_default();
        client.conn.gss = sec.service().map(|service| dbio_rpc::GssTarget {
            principal: format!("nfs@{}", url.host),
            service,
        });
        let refresh = s
            .layout_refresh
            .unwrap_or(Duration::from_secs(u64::from(LAYOUT_REFRESH_S)));
        ClientConfig {
            server_name: s.server_name.unwrap_or_else(|| url.host.clone()),
            url,
            local: s.local,
            paths: s.paths.unwrap_or_default(),
            conns: s.conns.unwrap_or(DEFAULT_CONNS).max(1),
            workers: 0,
            max_transfer: s.max_transfer.unwrap_or(MAX_TRANSFER),
            mnt_timeout: s.mnt_timeout,
            timeo: s.timeo.unwrap_or(PATH_TIMEOUT),
            sync: s.sync.unwrap_or(false),
            layout_refresh: (!refresh.is_zero()).then_some(refresh),
            sec,
            client,
        }
    }
}

/// How each connection of a client identifies itself and behaves: the part of a
/// [`crate::ClientConfig`] every connection, session and data server gets.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// AUTH_SYS identity.
    pub uid: u32,
    pub gid: u32,
    /// Supplementary groups (at most 16).
    pub gids: Vec<u32>,
    pub machine_name: String,
    /// Timeouts, retransmissions, reserved port, in-flight limit.
    pub conn: ConnConfig,
    /// Re-sends of a call answered NFS3ERR_JUKEBOX (or, in a pool, of a data call that
    /// found every path down).
    pub retry: Backoff,
}

impl Default for ClientOptions {
    fn default() -> Self {
        // SAFETY: getuid/getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        ClientOptions {
            uid,
            gid,
            gids: Vec::new(),
            machine_name: hostname(),
            conn: ConnConfig::default(),
            retry: Backoff::default(),
        }
    }
}

impl ClientOptions {
    pub fn credential(&self) -> Result<Credential, NfsError> {
        Credential::sys(&AuthSys {
            stamp: std::process::id(),
            machine_name: self.machine_name.clone(),
            uid: self.uid,
            gid: self.gid,
            gids: self.gids.clone(),
        })
        .map_err(|e| NfsError::Invalid {
            path: "AUTH_SYS credential".into(),
            reason: e.to_string(),
        })
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates or truncates.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let name = if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        String::new()
    };
    if name.is_empty() {
        "dbio".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests;
