//! Which storage a `--target` names: a local directory, an `nfs://` URL, or
//! a path under a mount point of an oranfstab (reached through dbio's own
//! NFS client, as Oracle's Direct NFS does). Reads the oranfstab; opens
//! nothing.

use std::net::{IpAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use dbio_nfs::config::{default_candidates, NfsConfig, NfsVersion};
use dbio_nfs::path::PathSpec;

use crate::TargetError;

/// How to reach an NFS target: its URL, network paths and server name.
#[derive(Clone, Debug, PartialEq)]
pub struct NfsPlan {
    pub url: String,
    /// Network paths; empty means the URL's host (and its `path=`s).
    pub paths: Vec<PathSpec>,
    /// The oranfstab `server:` name, for the views.
    pub server_name: Option<String>,
    /// The oranfstab entry's `dontroute`.
    pub dontroute: bool,
    /// The oranfstab entry's `mnt_timeout`.
    pub mount_timeout: Option<Duration>,
}

/// A target as resolved from its name.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    Local(PathBuf),
    Nfs(NfsPlan),
}

/// The target names an NFS export (`nfs://server/export/dir?...`).
pub fn is_nfs_url(target: &Path) -> bool {
    target.to_str().is_some_and(|t| t.starts_with("nfs://"))
}

/// Resolves `target`: an `nfs://` URL, else a path under a mount point of
/// `oranfstab` (or, when none is given, of `./oranfstab` then
/// `/etc/oranfstab`, as Oracle looks for them), else a local directory. A
/// file given explicitly that covers no mount point of the target is an
/// error: the user meant NFS.
pub fn resolve(target: &Path, oranfstab: Option<&Path>) -> Result<Resolved, TargetError> {
    if is_nfs_url(target) {
        let url = target.to_str().ok_or(TargetError::NotUtf8)?;
        return Ok(Resolved::Nfs(NfsPlan {
            url: url.to_string(),
            paths: Vec::new(),
            server_name: None,
            dontroute: false,
            mount_timeout: None,
        }));
    }
    let Some(cfg) = NfsConfig::load(oranfstab, &default_candidates())? else {
        return Ok(Resolved::Local(target.to_path_buf()));
    };
    let Some(m) = cfg.resolve(target) else {
        if let Some(file) = oranfstab {
            return Err(TargetError::NotCovered {
                target: target.to_path_buf(),
                file: file.to_path_buf(),
            });
        }
        return Ok(Resolved::Local(target.to_path_buf()));
    };
    for w in &cfg.warnings {
        eprintln!("note: {w}");
    }
    let server = m.server;
    let version = match server.nfs_version {
        NfsVersion::V3 => "",
        NfsVersion::V41 => "?version=4.1",
        NfsVersion::V4 => {
            eprintln!(
                "note: server {}: nfs_version nfsv4 is spoken as NFSv4.1 (dbio's NFSv4 client \
                 uses sessions, minor version 1)",
                server.name
            );
            "?version=4.1"
        }
        other => {
            return Err(TargetError::Unsupported(format!(
                "server {}: nfs_version {other:?} is not supported yet (nfsv3, nfsv4, nfsv4.1)",
                server.name
            )))
        }
    };
    let mut paths = Vec::new();
    for p in &server.paths {
        let remote = match p.remote_ip() {
            Some(ip) => ip,
            None => (p.remote.as_str(), 0)
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .map(|a| a.ip())
                .ok_or_else(|| {
                    TargetError::Unsupported(format!(
                        "server {}: cannot resolve path {}",
                        server.name, p.remote
                    ))
                })?,
        };
        let local = match &p.local {
            None => None,
            Some(l) => Some(p.local_ip().ok_or_else(|| {
                TargetError::Unsupported(format!(
                    "server {}: local {l}: give an IP address (interface names are not supported)",
                    server.name
                ))
            })?),
        };
        paths.push(PathSpec {
            local,
            server: remote,
        });
    }
    let first = paths.first().ok_or_else(|| {
        TargetError::Unsupported(format!("server {}: entry without a path", server.name))
    })?;
    let host = match first.server {
        IpAddr::V6(v6) => format!("[{v6}]"),
        IpAddr::V4(v4) => v4.to_string(),
    };
    Ok(Resolved::Nfs(NfsPlan {
        url: format!("nfs://{host}{}{version}", m.remote_path()),
        paths,
        server_name: Some(server.name.clone()),
        dontroute: server.dontroute,
        mount_timeout: Some(server.mnt_timeout),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_oranfstab_paths_and_local_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let tab = dir.path().join("oranfstab");
        std::fs::write(
            &tab,
            "server: filer1\nlocal: 10.0.1.1 path: 10.0.1.2\nlocal: 10.0.2.1 path: 10.0.2.2\n\
             export: /vol/ora mount: /u02/oradata\ndontroute\n",
        )
        .unwrap();
        let r = resolve(Path::new("/u02/oradata/dbio"), Some(&tab)).unwrap();
        let Resolved::Nfs(plan) = r else {
            panic!("not NFS: {r:?}")
        };
        assert_eq!(plan.url, "nfs://10.0.1.2/vol/ora/dbio");
        assert_eq!(plan.paths.len(), 2);
        assert_eq!(plan.paths[1].label(), "10.0.2.1->10.0.2.2");
        assert_eq!(plan.server_name.as_deref(), Some("filer1"));
        assert!(plan.dontroute);

        let url = "nfs://127.0.0.1/export/d?version=3";
        let Resolved::Nfs(plan) = resolve(Path::new(url), Some(&tab)).unwrap() else {
            panic!("URL not NFS")
        };
        assert_eq!(plan.url, url);

        let err = resolve(Path::new("/elsewhere"), Some(&tab)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "--target /elsewhere: no mount point of {} covers it",
                tab.display()
            )
        );
        let local = dir.path().join("data");
        // No file given and none in ./ or /etc on a test machine: local.
        if !Path::new("oranfstab").exists() && !Path::new("/etc/oranfstab").exists() {
            assert_eq!(
                resolve(&local, None).unwrap(),
                Resolved::Local(local.clone())
            );
        }
    }

    #[test]
    fn nfs_version_picks_the_protocol_of_the_url() {
        let dir = tempfile::tempdir().unwrap();
        let tab = dir.path().join("oranfstab");
        for (version, suffix) in [
            ("nfsv4.1", "?version=4.1"),
            ("nfsv4", "?version=4.1"),
            ("nfsv3", ""),
        ] {
            std::fs::write(
                &tab,
                format!("server: f\npath: 10.0.1.2\nexport: /vol/ora mount: /u02\nnfs_version: {version}\n"),
            )
            .unwrap();
            let Resolved::Nfs(plan) = resolve(Path::new("/u02/x"), Some(&tab)).unwrap() else {
                panic!("not NFS")
            };
            assert_eq!(
                plan.url,
                format!("nfs://10.0.1.2/vol/ora/x{suffix}"),
                "{version}"
            );
        }
        std::fs::write(
            &tab,
            "server: f\npath: 10.0.1.2\nexport: /vol/ora mount: /u02\nnfs_version: pnfs\n",
        )
        .unwrap();
        let err = resolve(Path::new("/u02/x"), Some(&tab))
            .unwrap_err()
            .to_string();
        assert!(err.contains("pnfs") || err.contains("Pnfs"), "{err}");
    }
}
