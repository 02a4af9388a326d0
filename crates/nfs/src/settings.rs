//! What one source says about how a client behaves: the command line, the URL's
//! parameters, an oranfstab `server:` entry. Each is a [`Settings`], `None` where the
//! source says nothing; [`Settings::over`] lays one over another, and
//! [`crate::client_config::ClientConfig`] applies the defaults to what is left unsaid.

use std::net::IpAddr;
use std::time::Duration;

use crate::path::PathSpec;

/// One source's settings of a client; `None`: this source does not say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Connections per network path (`--conns`, `conns=`).
    pub conns: Option<u32>,
    /// Largest READ or WRITE per RPC (`--rwsize`).
    pub max_transfer: Option<u32>,
    /// Replies a connection may gather per wake-up (`--reply-batch`).
    pub reply_batch: Option<usize>,
    /// Security flavour (`sec=`, an oranfstab export's `security:` or the entry's
    /// `security_default:`).
    pub sec: Option<dbio_rpc::Flavor>,
    /// AUTH_SYS user id (`--uid`, `uid=`).
    pub uid: Option<u32>,
    /// AUTH_SYS group id (`--gid`, `gid=`).
    pub gid: Option<u32>,
    /// AUTH_SYS supplementary groups (`--gids`).
    pub gids: Option<Vec<u32>>,
    /// The server's name in views (an oranfstab `server:`).
    pub server_name: Option<String>,
    /// Local address the first path sends from (an oranfstab entry's first `local:`).
    pub local: Option<IpAddr>,
    /// Network paths after the first, which reaches the URL's host (`path=`, an
    /// oranfstab entry's further `path:`s).
    pub paths: Option<Vec<PathSpec>>,
    /// With several paths: silence after which a path counts as dead (`timeo=`).
    pub timeo: Option<Duration>,
    /// Every WRITE FILE_SYNC (`sync=1`).
    pub sync: Option<bool>,
    /// pNFS: time between fetches of every file's layout; zero: only after a data
    /// server fails (`layout_refresh=`).
    pub layout_refresh: Option<Duration>,
    /// Send only to directly connected networks (oranfstab `dontroute`).
    pub dontroute: Option<bool>,
    /// Bound on each attempt to mount (oranfstab `mnt_timeout`).
    pub mnt_timeout: Option<Duration>,
    /// Time to wait for a reply before retransmitting; also bounds each connect
    /// (`--timeout`).
    pub timeout: Option<Duration>,
    /// Retransmissions before a call fails (`--retries`).
    pub retries: Option<u32>,
    /// Connect from a port below 1024 (`--reserved-port`).
    pub reserved_port: Option<bool>,
}

impl Settings {
    /// These settings over `below`: each one this source gives, else `below`'s.
    pub fn over(self, below: Settings) -> Settings {
        Settings {
            conns: self.conns.or(below.conns),
            max_transfer: self.max_transfer.or(below.max_transfer),
            reply_batch: self.reply_batch.or(below.reply_batch),
            sec: self.sec.or(below.sec),
            uid: self.uid.or(below.uid),
            gid: self.gid.or(below.gid),
            gids: self.gids.or(below.gids),
            server_name: self.server_name.or(below.server_name),
            local: self.local.or(below.local),
            paths: self.paths.or(below.paths),
            timeo: self.timeo.or(below.timeo),
            sync: self.sync.or(below.sync),
            layout_refresh: self.layout_refresh.or(below.layout_refresh),
            dontroute: self.dontroute.or(below.dontroute),
            mnt_timeout: self.mnt_timeout.or(below.mnt_timeout),
            timeout: self.timeout.or(below.timeout),
            retries: self.retries.or(below.retries),
            reserved_port: self.reserved_port.or(below.reserved_port),
        }
    }
}
