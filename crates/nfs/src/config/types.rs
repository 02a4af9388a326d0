//! What a configuration file says, as the parsers build it and the client reads it:
//! below both file formats and the rules they share, so that none of them imports the
//! module that chooses between them.

use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

pub use crate::url::NfsVersion;

/// Oracle Direct NFS uses at most this many paths per server.
pub const ORACLE_MAX_PATHS: usize = 4;

/// The most network paths dbio accepts for one server; beyond it the file is refused.
pub const MAX_PATHS: usize = 16;

/// `mnt_timeout` when a server entry gives none (Oracle's default).
pub const DEFAULT_MNT_TIMEOUT: Duration = Duration::from_secs(600);

/// The files searched when none is given explicitly, in order (like Oracle's lookup).
pub const DEFAULT_CANDIDATES: [&str; 2] = ["./oranfstab", "/etc/oranfstab"];

/// Everything one configuration file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NfsConfig {
    /// Server entries in file order.
    pub servers: Vec<ServerConfig>,
    /// Things that were accepted but have no effect, for the caller to show.
    pub warnings: Vec<ConfigWarning>,
}

/// One `server:` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The name after `server:`; identifies the entry (not necessarily a host name).
    pub name: String,
    /// Network paths to the server, in file order; never empty.
    pub paths: Vec<NetPath>,
    /// Exports and where they appear in the local name space.
    pub exports: Vec<ExportMount>,
    /// Protocol version asked for; the client decides which it supports.
    pub nfs_version: NfsVersion,
    /// Send from the local address without routing.
    pub dontroute: bool,
    /// How long to keep trying to mount.
    pub mnt_timeout: Duration,
    /// Security flavor for exports that name none.
    pub security_default: Security,
}

/// One network path: where to send from (optional) and where to send to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetPath {
    /// Local IP address, host name or interface name, as written (not resolved).
    pub local: Option<String>,
    /// The server's IP address or host name, as written (not resolved).
    pub remote: String,
}

/// One `export: X mount: Y` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportMount {
    /// The path the server exports, as written.
    pub export: String,
    /// The local mount point, lexically normalised (no `.`, `..` or trailing `/`).
    pub mount: PathBuf,
    /// The export's own `security:`, or else the entry's `security_default`.
    pub security: Security,
}

/// RPC security flavour: `sys`, `krb5`, `krb5i` or `krb5p` (RPCSEC_GSS with Kerberos).
pub use dbio_rpc::Flavor as Security;

/// Something in the file that was accepted but has no effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// File name as given to the parser.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// What was ignored and why.
    pub message: String,
}

/// Where a local path lands: which server and export, and the path below the mount point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountMatch<'a> {
    /// The server entry owning the export.
    pub server: &'a ServerConfig,
    /// The export whose mount point is the longest prefix of the path.
    pub export: &'a ExportMount,
    /// The rest of the path below the mount point (empty for the mount point itself).
    pub relative: PathBuf,
}

/// Why a configuration could not be found, read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A line of the file is wrong.
    #[error("{file}:{line}: {reason}")]
    Line {
        /// File name as given to the parser.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The file could not be read.
    #[error("{file}: {source}")]
    Read {
        /// The file.
        file: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
}

/// `reason` with control characters escaped: a value quoted from the file (a TOML multi-line
/// string, a stray carriage return) must not break the message over lines or move the cursor.
pub(crate) fn one_line(reason: &str) -> String {
    if !reason.chars().any(char::is_control) {
        return reason.to_string();
    }
    reason
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl NetPath {
    /// The remote address as an IP address, when it is written as one.
    pub fn remote_ip(&self) -> Option<std::net::IpAddr> {
        self.remote.parse().ok()
    }

    /// The local address as an IP address, when it is written as one.
    pub fn local_ip(&self) -> Option<std::net::IpAddr> {
        self.local.as_deref()?.parse().ok()
    }
}

impl MountMatch<'_> {
    /// The path on the server: the export joined with the relative path.
    pub fn remote_path(&self) -> String {
        let mut out = self.export.export.trim_end_matches('/').to_string();
        for part in self.relative.components() {
            out.push('/');
            out.push_str(&part.as_os_str().to_string_lossy());
        }
        if out.is_empty() {
            out.push('/');
        }
        out
    }
}

/// Absolute path with `.` and `..` applied lexically (`..` at the root stays at the root);
/// `None` for a relative path.
pub(super) fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::RootDir => out.push("/"),
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir | Component::Prefix(_) => {}
        }
    }
    path.has_root().then_some(out)
}
