//! Which storage a `--target` names: a local directory, an `nfs://` URL, or
//! a path under a mount point of an oranfstab (reached through dbio's own
//! NFS client, as Oracle's Direct NFS does). Reads the oranfstab; opens
//! nothing.

use dbio_nfs::config::{default_candidates, NfsConfig};
use dbio_nfs::path::PathSpec;
use dbio_nfs::{NfsUrl, Settings};
use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};

use crate::TargetError;

/// How to reach an NFS target: its URL, and what an oranfstab entry says of the client.
#[derive(Clone, Debug, PartialEq)]
pub struct NfsPlan {
    /// The URL (with its parameters); for a path under an oranfstab mount point, the
    /// entry's first path and the export's path, without parameters.
    pub url: NfsUrl,
    /// The URL as the user wrote it (or as the oranfstab entry makes it), for messages.
    pub given: String,
    /// The oranfstab entry's settings (its `server:` name, the first path's `local:`,
    /// the further paths, `dontroute`, `mnt_timeout`); none for a URL.
    pub entry: Settings,
    /// What the user should be told about how the target was read (the oranfstab's
    /// warnings), for the CLI to print.
    pub notices: Vec<String>,
}

/// A target as resolved from its name.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    Local(PathBuf),
    Nfs(Box<NfsPlan>),
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
        let text = target.to_str().ok_or(TargetError::NotUtf8)?;
        let url = NfsUrl::parse(text).map_err(|source| TargetError::Url {
            url: text.to_string(),
            source,
        })?;
        return Ok(Resolved::Nfs(Box::new(NfsPlan {
            url,
            given: text.to_string(),
            entry: Settings::default(),
            notices: Vec::new(),
        })));
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
    let server = m.server;
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
    if paths.is_empty() {
        return Err(TargetError::Unsupported(format!(
            "server {}: entry without a path",
            server.name
        )));
    }
    // The first path reaches the URL's host; the others follow it.
    let first = paths.remove(0);
    let url = NfsUrl::new(
        &first.server.to_string(),
        &m.remote_path(),
        server.nfs_version,
    )
    .map_err(|e| TargetError::Unsupported(format!("server {}: {e}", server.name)))?;
    let entry = Settings {
        server_name: Some(server.name.clone()),
        local: first.local,
        paths: Some(paths),
        dontroute: Some(server.dontroute),
        sec: Some(m.export.security),
        mnt_timeout: Some(server.mnt_timeout),
        ..Settings::default()
    };
    Ok(Resolved::Nfs(Box::new(NfsPlan {
        given: url.to_string(),
        url,
        entry,
        notices: cfg.warnings.iter().map(|w| w.to_string()).collect(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbio_nfs::url::NfsVersion;

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
        assert_eq!(plan.url.to_string(), "nfs://10.0.1.2/vol/ora/dbio");
        assert_eq!(plan.url.version, NfsVersion::V3);
        assert!(plan.notices.is_empty());
        assert_eq!(plan.entry.local, Some("10.0.1.1".parse().unwrap()));
        let more = plan.entry.paths.as_deref().unwrap();
        assert_eq!(more.len(), 1);
        assert_eq!(more[0].label(), "10.0.2.1->10.0.2.2");
        assert_eq!(plan.entry.server_name.as_deref(), Some("filer1"));
        assert_eq!(plan.entry.dontroute, Some(true));

        let url = "nfs://127.0.0.1/export/d?version=3";
        let Resolved::Nfs(plan) = resolve(Path::new(url), Some(&tab)).unwrap() else {
            panic!("URL not NFS")
        };
        assert_eq!(plan.url, NfsUrl::parse(url).unwrap());
        assert_eq!(plan.given, url);
        let err = resolve(Path::new("nfs://127.0.0.1/x?version=5"), Some(&tab)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--target nfs://127.0.0.1/x?version=5: NFS version 5 is not supported (version=3, 4, 4.1 or pnfs)"
        );

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
        for (version, want, notice) in [
            ("nfsv4.1", NfsVersion::V41, None),
            ("nfsv4", NfsVersion::V41, Some("nfsv4 is spoken as NFSv4.1")),
            ("nfsv3", NfsVersion::V3, None),
            ("pnfs", NfsVersion::Pnfs, None),
        ] {
            std::fs::write(
                &tab,
                format!("server: f\npath: 10.0.1.2\nexport: /vol/ora mount: /u02\nnfs_version: {version}\n"),
            )
            .unwrap();
            let Resolved::Nfs(plan) = resolve(Path::new("/u02/x"), Some(&tab)).unwrap() else {
                panic!("not NFS")
            };
            assert_eq!(plan.url.version, want, "{version}");
            assert_eq!(plan.url.path, "/vol/ora/x", "{version}");
            match notice {
                None => assert!(plan.notices.is_empty(), "{:?}", plan.notices),
                Some(n) => {
                    assert_eq!(plan.notices.len(), 1, "{:?}", plan.notices);
                    assert!(plan.notices[0].contains(n), "{:?}", plan.notices);
                    assert!(
                        plan.notices[0].contains("oranfstab:4:"),
                        "{:?}",
                        plan.notices
                    );
                }
            }
        }
    }

    #[test]
    fn paths_with_url_characters_stay_as_written() {
        // Built without a detour through URL text: '%' and '?' are plain characters.
        let dir = tempfile::tempdir().unwrap();
        let tab = dir.path().join("oranfstab");
        std::fs::write(
            &tab,
            "server: f\npath: 2001:db8::2\nexport: /vol/a%20b mount: /u02\n",
        )
        .unwrap();
        let Resolved::Nfs(plan) = resolve(Path::new("/u02/q?x"), Some(&tab)).unwrap() else {
            panic!("not NFS")
        };
        assert_eq!(plan.url.path, "/vol/a%20b/q?x");
        assert_eq!(plan.url.host, "2001:db8::2");
        assert_eq!(plan.url.to_string(), "nfs://[2001:db8::2]/vol/a%20b/q?x");
    }
}
