//! NFS URLs in libnfs's form:
//! `nfs://host[:port]/export/path?version=3&mountport=N&nfsport=N&uid=N&gid=N&conns=N`,
//! and `sec=sys|krb5|krb5i|krb5p` as the kernel's mount option (Kerberos: the server's
//! principal is `nfs/HOST`, with HOST as the library canonicalises it).
//! Multipath: each `path=SERVER` or `path=LOCAL->SERVER` (IP addresses)
//! adds a network path to the same storage after the host's own; `timeo=N`
//! (tenths of a second, like the mount option) is the reply timeout, after
//! which a silent path counts as dead; `sync=1` makes every WRITE FILE_SYNC, like the
//! `sync` mount option.
//!
//! The path holds both the export and the path inside it; where one ends
//! is learnt from the server's export list when mounting.

use std::fmt;
use std::time::Duration;

use crate::settings::Settings;

/// Why a URL was rejected. Messages quote the URL part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("not an NFS URL (must start with nfs://): {0}")]
    Scheme(String),
    #[error("NFS URL has no host: {0}")]
    NoHost(String),
    #[error("NFS URL has a bad host '{host}': {url}")]
    BadHost { host: String, url: String },
    #[error("NFS URL parameter {name}={value} is not a valid {what}")]
    BadValue {
        name: String,
        value: String,
        what: &'static str,
    },
    #[error("NFS URL port {value} out of range (1-65535) in {name}")]
    PortRange { name: String, value: String },
    #[error(
        "unknown NFS URL parameter '{0}' (known: version, mountport, nfsport, sec, uid, gid, conns, path, timeo, sync, layout_refresh)"
    )]
    UnknownParam(String),
    #[error("NFS version {0} is not supported (version=3, 4, 4.1 or pnfs)")]
    Version(String),
    #[error("NFS URL has a bad %-escape in '{0}'")]
    Escape(String),
    #[error("NFS URL path must be absolute, without '..': {0}")]
    Path(String),
}

/// A parsed NFS URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NfsUrl {
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// NFS port from `host:port` or `nfsport=`; `None`: ask the portmapper.
    pub nfs_port: Option<u16>,
    /// MOUNT port from `mountport=`; `None`: ask the portmapper.
    pub mount_port: Option<u16>,
    /// Export and path inside it, normalised: starts with `/`, no `.`, no
    /// empty components, no trailing `/` (except the root itself).
    pub path: String,
    /// The URL path ended with `/` (names a directory).
    pub trailing_slash: bool,
    /// The protocol (`version=3`, the default, or `version=4.1`; `4` means 4.1;
    /// `pnfs`: 4.1 with layouts).
    pub version: NfsVersion,
    /// What the parameters say of the client: `uid=`, `gid=`, `conns=` (1 to 64),
    /// `path=` (more paths to the same storage, after the host's own), `timeo=`
    /// (tenths of a second), `sync=1` (every WRITE FILE_SYNC, not only those the
    /// workload asks to be), `layout_refresh=` (pNFS, seconds; 0: only after a data
    /// server fails). A [`crate::ClientConfig`] takes them over.
    pub settings: Settings,
}

/// The NFS protocol a URL asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NfsVersion {
    /// NFSv3 with MOUNT v3.
    #[default]
    V3,
    /// NFSv4.1 sessions (RFC 8881), on port 2049 unless the URL names another.
    V41,
    /// NFSv4.1 with pNFS files layouts: READ and WRITE go to the data server a file's
    /// layout names (through the metadata server where there is none).
    Pnfs,
}

impl NfsVersion {
    /// NFSv4.1, with or without layouts.
    pub fn is_v41(self) -> bool {
        matches!(self, NfsVersion::V41 | NfsVersion::Pnfs)
    }

    /// As in results and views: "3", "4.1", "pnfs".
    pub fn label(self) -> &'static str {
        match self {
            NfsVersion::V3 => "3",
            NfsVersion::V41 => "4.1",
            NfsVersion::Pnfs => "pnfs",
        }
    }
}

impl NfsUrl {
    /// The URL of `path` (absolute, without `..`; normalised) on `host` (an address or
    /// name, IPv6 without brackets) with `version`, everything else as when unsaid:
    /// what an oranfstab entry names, without a detour through text.
    pub fn new(host: &str, path: &str, version: NfsVersion) -> Result<NfsUrl, UrlError> {
        if host.is_empty() {
            return Err(UrlError::NoHost(format!("nfs://{path}")));
        }
        Ok(NfsUrl {
            host: host.to_string(),
            nfs_port: None,
            mount_port: None,
            path: normalise(path)?,
            trailing_slash: path.ends_with('/'),
            version,
            settings: Settings::default(),
        })
    }

    /// Parses an `nfs://` URL.
    pub fn parse(url: &str) -> Result<NfsUrl, UrlError> {
        let rest = url
            .strip_prefix("nfs://")
            .ok_or_else(|| UrlError::Scheme(url.to_string()))?;
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = split_host_port(authority, url)?;
        let mut parsed = NfsUrl {
            host,
            nfs_port: port,
            mount_port: None,
            path: normalise(&percent_decode(path)?)?,
            trailing_slash: path.ends_with('/'),
            version: NfsVersion::V3,
            settings: Settings::default(),
        };
        let NfsUrl {
            version,
            mount_port,
            nfs_port,
            settings: set,
            ..
        } = &mut parsed;
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            match name {
                "version" => {
                    *version = match value {
                        "3" => NfsVersion::V3,
                        "4" | "4.1" => NfsVersion::V41,
                        "pnfs" => NfsVersion::Pnfs,
                        _ => return Err(UrlError::Version(value.to_string())),
                    };
                }
                "mountport" => *mount_port = Some(parse_port(name, value)?),
                "nfsport" => *nfs_port = Some(parse_port(name, value)?),
                "sec" => {
                    set.sec = Some(
                        value
                            .parse()
                            .map_err(|_| bad(name, value, "flavour (sys, krb5, krb5i or krb5p)"))?,
                    )
                }
                "uid" => set.uid = Some(parse_num(name, value, "user id")?),
                "gid" => set.gid = Some(parse_num(name, value, "group id")?),
                "conns" => {
                    let n = parse_num(name, value, "connection count (1-64)")?;
                    if !(1..=64).contains(&n) {
                        return Err(bad(name, value, "connection count (1-64)"));
                    }
                    set.conns = Some(n);
                }
                "path" => {
                    let paths = set.paths.get_or_insert_with(Vec::new);
                    if paths.len() >= MAX_URL_PATHS {
                        return Err(bad(name, value, "path (at most 16 in a URL)"));
                    }
                    paths.push(parse_path(name, value)?);
                }
                "layout_refresh" => {
                    let n = parse_num(name, value, "seconds (0-86400)")?;
                    if n > 86_400 {
                        return Err(bad(name, value, "seconds (0-86400)"));
                    }
                    set.layout_refresh = Some(Duration::from_secs(u64::from(n)));
                }
                "timeo" => {
                    let n = parse_num(name, value, "timeout (1-6000 tenths of a second)")?;
                    if !(1..=6000).contains(&n) {
                        return Err(bad(name, value, "timeout (1-6000 tenths of a second)"));
                    }
                    set.timeo = Some(Duration::from_millis(u64::from(n) * 100));
                }
                "sync" => {
                    set.sync = match value {
                        "1" => Some(true),
                        "0" => Some(false),
                        _ => return Err(bad(name, value, "switch (0 or 1)")),
                    };
                }
                _ => return Err(UrlError::UnknownParam(name.to_string())),
            }
        }
        Ok(parsed)
    }

    /// Path components after the root.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.path.split('/').filter(|c| !c.is_empty())
    }
}

impl fmt::Display for NfsUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(f, "nfs://{host}{}", self.path)
    }
}

fn bad(name: &str, value: &str, what: &'static str) -> UrlError {
    UrlError::BadValue {
        name: name.to_string(),
        value: value.to_string(),
        what,
    }
}

/// Paths a URL may name (an oranfstab has no such limit).
const MAX_URL_PATHS: usize = 16;

/// `SERVER` or `LOCAL->SERVER`, both IP addresses.
fn parse_path(name: &str, value: &str) -> Result<crate::path::PathSpec, UrlError> {
    let what = "path (SERVER or LOCAL->SERVER, IP addresses)";
    let ip = |s: &str| {
        s.trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .map_err(|_| bad(name, value, what))
    };
    match value.split_once("->") {
        Some((local, server)) => Ok(crate::path::PathSpec {
            local: Some(ip(local)?),
            server: ip(server)?,
        }),
        None => Ok(crate::path::PathSpec::new(ip(value)?)),
    }
}

fn parse_num(name: &str, value: &str, what: &'static str) -> Result<u32, UrlError> {
    value.parse::<u32>().map_err(|_| bad(name, value, what))
}

fn parse_port(name: &str, value: &str) -> Result<u16, UrlError> {
    let range = || UrlError::PortRange {
        name: name.to_string(),
        value: value.to_string(),
    };
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(name, value, "port number"));
    }
    match value.parse::<u64>() {
        Ok(p) if (1..=65535).contains(&p) => Ok(p as u16),
        _ => Err(range()),
    }
}

fn split_host_port(authority: &str, url: &str) -> Result<(String, Option<u16>), UrlError> {
    if authority.is_empty() {
        return Err(UrlError::NoHost(url.to_string()));
    }
    let bad_host = || UrlError::BadHost {
        host: authority.to_string(),
        url: url.to_string(),
    };
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let (h, after) = inner.split_once(']').ok_or_else(bad_host)?;
        h.parse::<std::net::Ipv6Addr>().map_err(|_| bad_host())?;
        match after {
            "" => (h, None),
            p => (h, Some(p.strip_prefix(':').ok_or_else(bad_host)?)),
        }
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b));
    if !host_ok {
        return Err(bad_host());
    }
    let port = port.map(|p| parse_port("host:port", p)).transpose()?;
    Ok((host.to_string(), port))
}

fn percent_decode(s: &str) -> Result<String, UrlError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| UrlError::Escape(s.to_string()))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| UrlError::Escape(s.to_string()))
}

/// Removes empty and `.` components; `..` is refused (no walking above the export).
fn normalise(path: &str) -> Result<String, UrlError> {
    if !path.starts_with('/') {
        return Err(UrlError::Path(path.to_string()));
    }
    let mut out = String::new();
    for c in path.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if c == ".." {
            return Err(UrlError::Path(path.to_string()));
        }
        out.push('/');
        out.push_str(c);
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_readme_examples() {
        let u =
            NfsUrl::parse("nfs://127.0.0.1/export/big.bin?version=3&mountport=20048&nfsport=2049")
                .unwrap();
        assert_eq!(u.host, "127.0.0.1");
        assert_eq!(u.path, "/export/big.bin");
        assert_eq!((u.mount_port, u.nfs_port), (Some(20048), Some(2049)));
        assert!(!u.trailing_slash);
        let u = NfsUrl::parse("nfs://127.0.0.1/export/?version=3").unwrap();
        assert_eq!(u.path, "/export");
        assert!(u.trailing_slash);
        assert_eq!(u.nfs_port, None);
        assert_eq!(u.version, NfsVersion::V3);
        for v in ["4", "4.1"] {
            let u = NfsUrl::parse(&format!("nfs://127.0.0.1/export/?version={v}")).unwrap();
            assert_eq!((u.version, u.path.as_str()), (NfsVersion::V41, "/export"));
        }
    }

    #[test]
    fn host_port_ipv6_and_credentials() {
        let u = NfsUrl::parse("nfs://[fd00::1]:2050/a//./b?uid=1000&gid=50&conns=4").unwrap();
        assert_eq!(u.host, "fd00::1");
        assert_eq!(u.nfs_port, Some(2050));
        assert_eq!(u.path, "/a/b");
        assert_eq!(
            (u.settings.uid, u.settings.gid, u.settings.conns),
            (Some(1000), Some(50), Some(4))
        );
        assert_eq!(u.components().collect::<Vec<_>>(), ["a", "b"]);
        let u = NfsUrl::parse("nfs://server.example.com/x%20y").unwrap();
        assert_eq!(u.path, "/x y");
        assert_eq!(NfsUrl::parse("nfs://h").unwrap().path, "/");
    }

    #[test]
    fn security_flavour() {
        let u = NfsUrl::parse("nfs://h/e?sec=krb5p").unwrap();
        assert_eq!(u.settings.sec, Some(dbio_rpc::Flavor::Krb5p));
        assert_eq!(NfsUrl::parse("nfs://h/e").unwrap().settings.sec, None);
        let e = NfsUrl::parse("nfs://h/e?sec=krb6").unwrap_err().to_string();
        assert_eq!(
            e,
            "NFS URL parameter sec=krb6 is not a valid flavour (sys, krb5, krb5i or krb5p)"
        );
        let c = crate::ClientConfig::new(NfsUrl::parse("nfs://10.0.0.9/e?sec=krb5i").unwrap());
        let gss = c.client.conn.gss.unwrap();
        assert_eq!(gss.principal, "nfs@10.0.0.9");
        assert_eq!(gss.service, dbio_rpc::gss::GssService::Integrity);
    }

    #[test]
    fn extra_paths_and_timeout() {
        let u = NfsUrl::parse(
            "nfs://10.0.1.2/export/d?path=10.0.2.2&path=10.0.3.1->10.0.3.2&path=[fd00::2]&timeo=15",
        )
        .unwrap();
        let paths = u.settings.paths.as_deref().unwrap();
        assert_eq!(paths.len(), 3);
        assert_eq!(paths[0].label(), "10.0.2.2");
        assert_eq!(paths[1].label(), "10.0.3.1->10.0.3.2");
        assert_eq!(
            paths[2].server,
            "fd00::2".parse::<std::net::IpAddr>().unwrap()
        );
        assert_eq!(u.settings.timeo, Some(Duration::from_millis(1500)));
        assert_eq!(u.settings.sync, None);
        assert_eq!(
            NfsUrl::parse("nfs://h/x?sync=1").unwrap().settings.sync,
            Some(true)
        );
    }

    #[test]
    fn bad_urls_say_why() {
        let cases = [
            ("http://h/x", "must start with nfs://"),
            ("nfs:///x", "no host"),
            ("nfs://h/x?mountport=70000", "out of range"),
            ("nfs://h/x?nfsport=0", "out of range"),
            ("nfs://h:99999/x", "out of range"),
            ("nfs://h/x?nfsport=abc", "not a valid port"),
            ("nfs://h/x?color=red", "unknown NFS URL parameter 'color'"),
            ("nfs://h/x?version=4.2", "version=3, 4, 4.1 or pnfs"),
            ("nfs://h/x?uid=-1", "not a valid user id"),
            ("nfs://h/x?conns=0", "connection count"),
            ("nfs://h/x?path=host.example", "not a valid path"),
            ("nfs://h/x?path=1.2.3.4->", "not a valid path"),
            ("nfs://h/x?timeo=0", "not a valid timeout"),
            ("nfs://h/x?sync=yes", "not a valid switch"),
            ("nfs://h/x/../y", "must be absolute"),
            ("nfs://h/x%zz", "%-escape"),
            ("nfs://h h/x", "bad host"),
            ("nfs://[zz]/x", "bad host"),
        ];
        for (url, want) in cases {
            let err = NfsUrl::parse(url).unwrap_err().to_string();
            assert!(err.contains(want), "{url}: {err}");
        }
    }
}
