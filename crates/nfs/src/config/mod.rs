//! Which NFS servers to reach, over which network paths, and which mount points map to
//! which exports: Oracle's `oranfstab`, read as is, or a TOML file with the same content.
//!
//! This module only parses and validates; it never resolves a name or opens a socket.
//!
//! # The oranfstab format
//!
//! One keyword and its value per item, `keyword: value`; an entry starts with `server:` and
//! runs until the next `server:`:
//!
//! ```text
//! # filer1: four paths, one of them without a local address
//! server: filer1
//! local: 192.0.2.10
//! path: 192.0.2.1
//! local: eth1      path: 198.51.100.1
//! local: 2001:db8::10
//! path: 2001:db8::1
//! path: filer1-p4.example.com
//! export: /vol/oradata1 mount: /u02/oradata
//! export: /vol/redo     mount: /u03/redo   security: sys
//! nfs_version: nfsv3
//! dontroute
//! mnt_timeout: 600
//! security_default: sys
//! ```
//!
//! Accepted:
//! - `server: NAME` starts an entry; names are unique (compared ignoring case).
//! - `path: ADDR` is one network path to the server, optionally preceded by `local: ADDR`,
//!   the local address or interface to send from. A `local:` must be followed by its `path:`
//!   (on the same line or the next item). Oracle allows 4 paths; dbio accepts up to
//!   [`MAX_PATHS`]. Every entry needs at least one `path:`.
//! - Addresses are IPv4, IPv6, host names or (for `local:`) interface names, kept as written.
//! - `export: /X mount: /Y [security: FLAVOR]`, all on one line, as many lines as needed.
//!   Both are absolute paths; a mount point is used by one export only.
//! - `nfs_version: nfsv3|nfsv4|nfsv4.1|pnfs` (default nfsv3), returned as the URL's
//!   [`NfsVersion`]; `nfsv4` is spoken as NFSv4.1 (dbio's NFSv4 client uses sessions), with
//!   a [`ConfigWarning`].
//! - `dontroute` (no value): send from the local address without routing.
//! - `mnt_timeout: SECONDS` (default 600).
//! - `security_default: FLAVOR` for the entry and `security: FLAVOR` per export. Only `sys`
//!   is supported; `krb5`, `krb5i` and `krb5p` are recognised and refused with a clear error.
//! - Keywords in any case (and the values of `nfs_version`, `security` and `security_default`),
//!   leading whitespace, blank lines, CRLF line ends, and `#` comments to the end of the line.
//!
//! Accepted and ignored, each with a [`ConfigWarning`]: `management:` and `community:`
//! (Oracle's SNMP queries to the storage system; dbio makes none).
//!
//! Each keyword that takes one value per entry (`nfs_version`, `dontroute`, `mnt_timeout`,
//! `security_default`) may appear once per entry.
//!
//! # The TOML format
//!
//! ```toml
//! [[server]]
//! name = "filer1"
//! paths = [{ local = "192.0.2.10", path = "192.0.2.1" }, { path = "192.0.2.2" }]
//! nfs_version = "nfsv3"
//! dontroute = true
//! mnt_timeout = 600
//! security_default = "sys"
//!
//! [[server.export]]
//! export = "/vol/oradata1"
//! mount = "/u02/oradata"
//! security = "sys"
//! ```
//!
//! Same keys, same rules, same result (`dontroute = false` is the same as leaving it out).
//! Unknown keys are an error. A file is read as TOML when
//! its name ends in `.toml` or its first significant line looks like TOML (`[...]` or `key =`).
//!
//! # Errors
//!
//! Every error names the file and, for a content error, the line: `oranfstab:7: path: without
//! a preceding server: line`.

mod build;
mod oranfstab;
mod toml_file;

#[cfg(test)]
mod tests;

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

impl NfsConfig {
    /// Parses `text`, read from `file` (used in messages), as oranfstab or TOML: TOML when the
    /// name ends in `.toml` or the content looks like TOML.
    pub fn parse(text: &str, file: &str) -> Result<NfsConfig, ConfigError> {
        if file.ends_with(".toml") || looks_like_toml(text) {
            Self::parse_toml(text, file)
        } else {
            Self::parse_oranfstab(text, file)
        }
    }

    /// Parses `text` as oranfstab.
    pub fn parse_oranfstab(text: &str, file: &str) -> Result<NfsConfig, ConfigError> {
        oranfstab::parse(text, file)
    }

    /// Parses `text` as the TOML equivalent.
    pub fn parse_toml(text: &str, file: &str) -> Result<NfsConfig, ConfigError> {
        toml_file::parse(text, file)
    }

    /// Reads and parses one file.
    pub fn read(path: &Path) -> Result<NfsConfig, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            file: file.clone(),
            source,
        })?;
        Self::parse(&text, &file)
    }

    /// Finds the configuration file (see [`locate`]) and parses it; `None` when there is none.
    pub fn load(
        explicit: Option<&Path>,
        candidates: &[PathBuf],
    ) -> Result<Option<NfsConfig>, ConfigError> {
        match locate(explicit, candidates)? {
            Some(path) => Self::read(&path).map(Some),
            None => Ok(None),
        }
    }

    /// The server and export whose mount point is the longest prefix of `path`, compared by
    /// whole components after lexical normalisation; `None` when no mount point covers it or
    /// the path is relative.
    pub fn resolve(&self, path: &Path) -> Option<MountMatch<'_>> {
        let path = normalize(path)?;
        let mut best: Option<MountMatch<'_>> = None;
        for server in &self.servers {
            for export in &server.exports {
                let Ok(rest) = path.strip_prefix(&export.mount) else {
                    continue;
                };
                let depth = export.mount.components().count();
                if best
                    .as_ref()
                    .is_some_and(|b| b.export.mount.components().count() >= depth)
                {
                    continue;
                }
                best = Some(MountMatch {
                    server,
                    export,
                    relative: rest.to_path_buf(),
                });
            }
        }
        best
    }

    /// The server entry with this name (ignoring case).
    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }
}

/// The configuration file to use: `explicit` when given (an error if it cannot be read, no
/// fallback), else the first of `candidates` that exists (see [`default_candidates`]).
pub fn locate(
    explicit: Option<&Path>,
    candidates: &[PathBuf],
) -> Result<Option<PathBuf>, ConfigError> {
    if let Some(path) = explicit {
        // Checked here so that a mistyped --oranfstab never silently falls back to another file.
        return match std::fs::metadata(path) {
            Ok(_) => Ok(Some(path.to_path_buf())),
            Err(source) => Err(ConfigError::Read {
                file: path.display().to_string(),
                source,
            }),
        };
    }
    Ok(candidates.iter().find(|p| p.is_file()).cloned())
}

/// [`DEFAULT_CANDIDATES`] as paths: `./oranfstab`, then `/etc/oranfstab`.
pub fn default_candidates() -> Vec<PathBuf> {
    DEFAULT_CANDIDATES.iter().map(PathBuf::from).collect()
}

/// Absolute path with `.` and `..` applied lexically (`..` at the root stays at the root);
/// `None` for a relative path.
fn normalize(path: &Path) -> Option<PathBuf> {
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

/// True when the first significant line is a TOML table header or `key = value`.
fn looks_like_toml(text: &str) -> bool {
    let Some(line) = text
        .lines()
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .find(|l| !l.is_empty() && !l.starts_with('#'))
    else {
        return false;
    };
    if line.starts_with('[') {
        return true;
    }
    match line.split_once('=') {
        Some((key, _)) => {
            let key = key.trim();
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '"')
        }
        None => false,
    }
}
