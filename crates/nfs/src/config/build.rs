//! The rules both file formats share: each format reads its syntax and feeds the items, with
//! their line numbers, to a [`Builder`], which checks them and builds the [`NfsConfig`].

use std::net::{IpAddr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::types::{
    normalize, one_line, ConfigError, ConfigWarning, ExportMount, NetPath, NfsConfig, NfsVersion,
    Security, ServerConfig, DEFAULT_MNT_TIMEOUT, MAX_PATHS,
};

/// Collects one file's items in order and checks them as they come.
pub(super) struct Builder<'f> {
    file: &'f str,
    done: Vec<ServerConfig>,
    /// Line of each finished server's `server:` item, parallel to `done`.
    done_lines: Vec<usize>,
    current: Option<Pending>,
    warnings: Vec<ConfigWarning>,
    /// Every mount point so far: (mount, server name, line), to refuse a second use.
    mounts: Vec<(PathBuf, String, usize)>,
}

/// The server entry being read.
struct Pending {
    config: ServerConfig,
    line: usize,
    /// Each export's own `security:`, parallel to `config.exports`; resolved at the end of the
    /// entry because `security_default:` may come after the exports.
    export_security: Vec<Option<Security>>,
    /// Keywords allowed once per entry, with the line they were first seen on.
    seen: Vec<(&'static str, usize)>,
    /// A `local:` waiting for its `path:`.
    local: Option<(String, usize)>,
}

impl<'f> Builder<'f> {
    pub(super) fn new(file: &'f str) -> Self {
        Builder {
            file,
            done: Vec::new(),
            done_lines: Vec::new(),
            current: None,
            warnings: Vec::new(),
            mounts: Vec::new(),
        }
    }

    /// An error at `line` of this file.
    pub(super) fn error(&self, line: usize, reason: impl Into<String>) -> ConfigError {
        line_error(self.file, line, reason)
    }

    /// Starts a new server entry, finishing the previous one.
    pub(super) fn server(&mut self, name: &str, line: usize) -> Result<(), ConfigError> {
        self.finish_current()?;
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return Err(self.error(line, format!("server: '{name}' must be one word")));
        }
        if let Some(i) = self
            .done
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
        {
            let first = self.done_lines[i];
            return Err(self.error(
                line,
                format!("server '{name}' is already defined at line {first}"),
            ));
        }
        self.current = Some(Pending {
            config: ServerConfig {
                name: name.to_string(),
                paths: Vec::new(),
                exports: Vec::new(),
                nfs_version: NfsVersion::default(),
                dontroute: false,
                mnt_timeout: DEFAULT_MNT_TIMEOUT,
                security_default: Security::default(),
            },
            line,
            export_security: Vec::new(),
            seen: Vec::new(),
            local: None,
        });
        Ok(())
    }

    /// Fails unless a server entry is open; every keyword but `server:` needs one.
    pub(super) fn require_server(&self, keyword: &str, line: usize) -> Result<(), ConfigError> {
        match self.current {
            Some(_) => Ok(()),
            None => Err(no_server(self.file, keyword, line)),
        }
    }

    /// `local: ADDR`, to be followed by its `path:`.
    pub(super) fn local(&mut self, addr: &str, line: usize) -> Result<(), ConfigError> {
        let file = self.file;
        let entry = self.entry("local", line)?;
        check_address("local", addr).map_err(|r| line_error(file, line, r.to_string()))?;
        entry.local = Some((addr.to_string(), line));
        Ok(())
    }

    /// `path: ADDR`, taking the `local:` before it if any.
    pub(super) fn path(&mut self, addr: &str, line: usize) -> Result<(), ConfigError> {
        let file = self.file;
        let entry = self
            .current
            .as_mut()
            .ok_or_else(|| no_server(file, "path", line))?;
        check_address("path", addr).map_err(|r| line_error(file, line, r.to_string()))?;
        if entry.config.paths.len() >= MAX_PATHS {
            let name = &entry.config.name;
            return Err(line_error(
                file,
                line,
                format!("server '{name}' has more than {MAX_PATHS} paths (the most dbio supports)"),
            ));
        }
        let local = entry.local.take().map(|(l, _)| l);
        entry.config.paths.push(NetPath {
            local,
            remote: addr.to_string(),
        });
        Ok(())
    }

    /// `export: X mount: Y [security: Z]`; each value with its line.
    pub(super) fn export(
        &mut self,
        (export, line): (&str, usize),
        (mount, mount_line): (&str, usize),
        security: Option<(&str, usize)>,
    ) -> Result<(), ConfigError> {
        self.entry("export", line)?;
        if !export.starts_with('/') {
            return Err(self.error(line, format!("export: '{export}' is not an absolute path")));
        }
        let mount_path = match normalize(Path::new(mount)) {
            Some(p) if mount.starts_with('/') => p,
            _ => {
                return Err(self.error(
                    mount_line,
                    format!("mount: '{mount}' is not an absolute path"),
                ))
            }
        };
        if let Some((_, owner, first)) = self.mounts.iter().find(|(m, _, _)| *m == mount_path) {
            return Err(self.error(
                mount_line,
                format!(
                    "mount: {} is already used by server '{owner}' (line {first})",
                    mount_path.display()
                ),
            ));
        }
        let security = match security {
            Some((value, at)) => {
                Some(parse_security("security", value).map_err(|r| self.error(at, r.to_string()))?)
            }
            None => None,
        };
        let entry = self.entry("export", line)?;
        let owner = entry.config.name.clone();
        entry.config.exports.push(ExportMount {
            export: export.to_string(),
            mount: mount_path.clone(),
            security: Security::default(),
        });
        entry.export_security.push(security);
        self.mounts.push((mount_path, owner, mount_line));
        Ok(())
    }

    /// `nfs_version: V`.
    pub(super) fn nfs_version(&mut self, value: &str, line: usize) -> Result<(), ConfigError> {
        self.once("nfs_version", line)?;
        let version = match value.to_ascii_lowercase().as_str() {
            "nfsv3" => NfsVersion::V3,
            "nfsv4" => {
                self.warnings.push(ConfigWarning {
                    file: self.file.to_string(),
                    line,
                    message: "nfs_version: nfsv4 is spoken as NFSv4.1 (dbio's NFSv4 client \
                              uses sessions, minor version 1)"
                        .into(),
                });
                NfsVersion::V41
            }
            "nfsv4.1" => NfsVersion::V41,
            "pnfs" => NfsVersion::Pnfs,
            _ => {
                return Err(self.error(
                    line,
                    format!("nfs_version: '{value}' is not one of nfsv3, nfsv4, nfsv4.1, pnfs"),
                ))
            }
        };
        self.entry("nfs_version", line)?.config.nfs_version = version;
        Ok(())
    }

    /// `dontroute`.
    pub(super) fn dontroute(&mut self, line: usize) -> Result<(), ConfigError> {
        self.once("dontroute", line)?.config.dontroute = true;
        Ok(())
    }

    /// `mnt_timeout: SECONDS`.
    pub(super) fn mnt_timeout(&mut self, seconds: u64, line: usize) -> Result<(), ConfigError> {
        let entry = self.once("mnt_timeout", line)?;
        if seconds == 0 {
            return Err(self.error(line, "mnt_timeout: 0 must be at least 1 second"));
        }
        entry.config.mnt_timeout = Duration::from_secs(seconds);
        Ok(())
    }

    /// `security_default: FLAVOR`.
    pub(super) fn security_default(&mut self, value: &str, line: usize) -> Result<(), ConfigError> {
        let file = self.file;
        let entry = self.once("security_default", line)?;
        entry.config.security_default = parse_security("security_default", value)
            .map_err(|r| line_error(file, line, r.to_string()))?;
        Ok(())
    }

    /// `management:` or `community:`: accepted, ignored, noted.
    pub(super) fn ignored(&mut self, keyword: &str, line: usize) -> Result<(), ConfigError> {
        self.entry(keyword, line)?;
        self.warnings.push(ConfigWarning {
            file: self.file.to_string(),
            line,
            message: format!(
                "{keyword}: accepted and ignored (it is for SNMP queries to the storage system, which dbio does not make)"
            ),
        });
        Ok(())
    }

    /// Ends the last entry and returns the whole configuration.
    pub(super) fn finish(mut self) -> Result<NfsConfig, ConfigError> {
        self.finish_current()?;
        Ok(NfsConfig {
            servers: self.done,
            warnings: self.warnings,
        })
    }

    /// The open server entry, provided no `local:` is still waiting for its `path:`.
    fn entry(&mut self, keyword: &str, line: usize) -> Result<&mut Pending, ConfigError> {
        let file = self.file;
        let entry = self
            .current
            .as_mut()
            .ok_or_else(|| no_server(file, keyword, line))?;
        check_no_local(file, entry)?;
        Ok(entry)
    }

    /// Like [`Self::entry`], and refuses a second use of a once-per-entry keyword.
    fn once(&mut self, keyword: &'static str, line: usize) -> Result<&mut Pending, ConfigError> {
        let file = self.file;
        let entry = self.entry(keyword, line)?;
        if let Some(&(_, first)) = entry.seen.iter().find(|(k, _)| *k == keyword) {
            let name = &entry.config.name;
            return Err(line_error(
                file,
                line,
                format!("{keyword}: given twice for server '{name}' (first at line {first})"),
            ));
        }
        entry.seen.push((keyword, line));
        Ok(entry)
    }

    fn finish_current(&mut self) -> Result<(), ConfigError> {
        let Some(mut entry) = self.current.take() else {
            return Ok(());
        };
        check_no_local(self.file, &entry)?;
        if entry.config.paths.is_empty() {
            return Err(self.error(
                entry.line,
                format!("server '{}' has no path", entry.config.name),
            ));
        }
        let default = entry.config.security_default;
        for (export, own) in entry.config.exports.iter_mut().zip(&entry.export_security) {
            export.security = own.unwrap_or(default);
        }
        self.done.push(entry.config);
        self.done_lines.push(entry.line);
        Ok(())
    }
}

fn line_error(file: &str, line: usize, reason: impl Into<String>) -> ConfigError {
    ConfigError::Line {
        file: file.to_string(),
        line,
        reason: one_line(&reason.into()),
    }
}

fn no_server(file: &str, keyword: &str, line: usize) -> ConfigError {
    line_error(
        file,
        line,
        format!("{keyword}: without a preceding server: line"),
    )
}

/// A `local:` must be followed by its `path:` before anything else.
fn check_no_local(file: &str, entry: &Pending) -> Result<(), ConfigError> {
    match &entry.local {
        Some((addr, line)) => Err(line_error(
            file,
            *line,
            format!("local: {addr} is not followed by its path:"),
        )),
        None => Ok(()),
    }
}

/// A value a keyword does not take.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum BadValue {
    #[error("{keyword}: '{value}' is not one of sys, krb5, krb5i, krb5p")]
    NotAFlavor {
        keyword: &'static str,
        value: String,
    },
    #[error("{keyword}: '{value}' is not an IP address, host name or interface name")]
    NotAnAddress {
        keyword: &'static str,
        value: String,
    },
}

/// A security flavour, in any case.
fn parse_security(keyword: &'static str, value: &str) -> Result<Security, BadValue> {
    value.parse().map_err(|_| BadValue::NotAFlavor {
        keyword,
        value: value.to_string(),
    })
}

/// An IP address (IPv6 possibly with a `%zone`), a host name or an interface name; not resolved.
fn check_address(keyword: &'static str, addr: &str) -> Result<(), BadValue> {
    let valid = if addr.parse::<IpAddr>().is_ok() {
        true
    } else if addr.contains(':') {
        // Only IPv6 has colons; allow a zone such as fe80::1%eth0.
        let (ip, zone) = addr.split_once('%').unwrap_or((addr, "x"));
        ip.parse::<Ipv6Addr>().is_ok() && is_name(zone)
    } else {
        is_name(addr)
    };
    if valid {
        Ok(())
    } else {
        Err(BadValue::NotAnAddress {
            keyword,
            value: addr.to_string(),
        })
    }
}

/// Host names and interface names: letters, digits, `.`, `-`, `_`, not starting with `-`.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}
