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
mod types;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use crate::url::NfsVersion;
use types::normalize;
pub use types::{
    ConfigError, ConfigWarning, ExportMount, MountMatch, NetPath, NfsConfig, Security,
    ServerConfig, DEFAULT_CANDIDATES, DEFAULT_MNT_TIMEOUT, MAX_PATHS, ORACLE_MAX_PATHS,
};

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
