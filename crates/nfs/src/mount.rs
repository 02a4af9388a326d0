//! Finding and mounting an export: portmapper GETPORT, MOUNT v3 (NULL, MNT,
//! DUMP, UMNT, EXPORT), and the split of a URL path into export and path.

use std::net::SocketAddr;

use dbio_rpc::conn::{ConnConfig, Connection};
use dbio_rpc::Credential;
use dbio_xdr::{Decoder, XdrEncode};

use crate::channel::{CallError, Results, RpcChannel};
use crate::error::{bad_reply, call_error, NfsError};
use crate::proto::mount3::{self, DirPath, Exports, MountList, MountOk};
use crate::proto::nfs3::FileHandle;
use crate::proto::portmap::{self, Mapping};

/// Asks the portmapper on `server` (port 111) for the TCP port of `prog`/`vers`.
pub async fn getport(
    server: SocketAddr,
    prog: u32,
    vers: u32,
    config: &ConnConfig,
) -> Result<u16, NfsError> {
    let addr = SocketAddr::new(server.ip(), portmap::PORT);
    let what = "portmapper GETPORT";
    let path = addr.to_string();
    // The portmapper and MOUNT take AUTH_SYS, whatever the NFS calls use.
    let config = ConnConfig {
        gss: None,
        ..config.clone()
    };
    let conn = Connection::connect(addr, config)
        .await
        .map_err(|e| call_error(what, &path, CallError::Transport(e)))?;
    let chan = RpcChannel::new(
        vec![conn],
        portmap::PROGRAM,
        portmap::VERSION,
        Credential::none(),
    );
    let mapping = Mapping {
        prog,
        vers,
        prot: portmap::IPPROTO_TCP,
        port: 0,
    };
    let call = chan.encode(portmap::Proc::Getport as u32, |b| mapping.encode(b));
    let res = chan
        .call(call)
        .await
        .map_err(|e| call_error(what, &path, e))?;
    match portmap::decode_getport(res.bytes()).map_err(|e| bad_reply(what, &path, e))? {
        0 => Err(NfsError::NotRegistered {
            server: addr.to_string(),
            prog,
            vers,
        }),
        port => Ok(port),
    }
}

/// A MOUNT v3 client on one connection.
pub struct MountClient {
    chan: RpcChannel,
    server: SocketAddr,
}

impl MountClient {
    pub async fn connect(
        server: SocketAddr,
        config: &ConnConfig,
        cred: Credential,
    ) -> Result<Self, NfsError> {
        let config = ConnConfig {
            gss: None,
            ..config.clone()
        };
        let conn = Connection::connect(server, config)
            .await
            .map_err(|e| call_error("MOUNT", &server.to_string(), CallError::Transport(e)))?;
        Ok(MountClient {
            chan: RpcChannel::new(vec![conn], mount3::PROGRAM, mount3::VERSION, cred),
            server,
        })
    }

    async fn call(
        &self,
        proc_: mount3::Proc,
        what: &str,
        path: &str,
        args: &[u8],
    ) -> Result<Results, NfsError> {
        let call = self
            .chan
            .encode(proc_ as u32, |b| b.extend_from_slice(args));
        self.chan
            .call(call)
            .await
            .map_err(|e| call_error(what, path, e))
    }

    pub async fn null(&self) -> Result<(), NfsError> {
        self.call(
            mount3::Proc::Null,
            "MOUNT NULL",
            &self.server.to_string(),
            &[],
        )
        .await
        .map(|_| ())
    }

    /// MNT: the root handle of `export`.
    pub async fn mnt(&self, export: &str) -> Result<MountOk, NfsError> {
        let args = DirPath::from(export).to_xdr();
        let res = self.call(mount3::Proc::Mnt, "MNT", export, &args).await?;
        match mount3::decode_mnt(res.bytes()).map_err(|e| bad_reply("MNT", export, e))? {
            Ok(ok) => Ok(ok),
            Err(status) => Err(NfsError::Mount {
                server: self.server.to_string(),
                export: export.to_string(),
                status,
            }),
        }
    }

    /// An empty list says nothing (some servers send none): the first call will tell.
    fn check_flavor(
        &self,
        export: &str,
        listed: &[u32],
        sec: dbio_rpc::Flavor,
    ) -> Result<(), NfsError> {
        if listed.is_empty() || listed.contains(&sec.pseudo_flavor()) {
            return Ok(());
        }
        let accepts: Vec<String> = listed
            .iter()
            .map(|&n| match dbio_rpc::Flavor::from_pseudo(n) {
                Some(f) => f.to_string(),
                None => format!("flavour {n}"),
            })
            .collect();
        Err(NfsError::Flavor {
            server: self.server.to_string(),
            export: export.to_string(),
            asked: sec,
            accepts: accepts.join(", "),
        })
    }

    /// UMNT: tells the server this client no longer uses `export`.
    pub async fn umnt(&self, export: &str) -> Result<(), NfsError> {
        let args = DirPath::from(export).to_xdr();
        self.call(mount3::Proc::Umnt, "UMNT", export, &args)
            .await
            .map(|_| ())
    }

    /// EXPORT: the export paths.
    pub async fn exports(&self) -> Result<Vec<String>, NfsError> {
        let what = "MOUNT EXPORT";
        let path = self.server.to_string();
        let res = self.call(mount3::Proc::Export, what, &path, &[]).await?;
        let list: Exports = Decoder::new(res.bytes())
            .decode()
            .map_err(|e| bad_reply(what, &path, e))?;
        Ok(list
            .0
            .iter()
            .map(|e| String::from_utf8_lossy(e.dir.0).into_owned())
            .collect())
    }

    /// DUMP: (client host, directory) pairs the server believes are mounted.
    pub async fn dump(&self) -> Result<Vec<(String, String)>, NfsError> {
        let what = "MOUNT DUMP";
        let path = self.server.to_string();
        let res = self.call(mount3::Proc::Dump, what, &path, &[]).await?;
        let list: MountList = Decoder::new(res.bytes())
            .decode()
            .map_err(|e| bad_reply(what, &path, e))?;
        Ok(list
            .0
            .iter()
            .map(|e| {
                (
                    String::from_utf8_lossy(e.hostname.0).into_owned(),
                    String::from_utf8_lossy(e.directory.0).into_owned(),
                )
            })
            .collect())
    }

    /// Mounts the export that contains `path`: the longest export in the
    /// server's list that is a prefix of `path` (by components). Without an
    /// export list, tries `path` and then its parents. Returns the export,
    /// its root handle and the rest of the path. The export must accept `sec`
    /// (MOUNT's list of flavours, checked before the first NFS call).
    pub async fn mount_path(
        &self,
        path: &str,
        sec: dbio_rpc::Flavor,
    ) -> Result<(String, FileHandle, String), NfsError> {
        let candidates: Vec<String> = match self.exports().await {
            Ok(exports) => {
                let mut matching: Vec<String> = exports
                    .iter()
                    .map(|e| normalise_export(e))
                    .filter(|e| is_prefix(e, path))
                    .collect();
                if matching.is_empty() {
                    return Err(NfsError::NoExport {
                        server: self.server.to_string(),
                        path: path.to_string(),
                        exports: if exports.is_empty() {
                            "none".into()
                        } else {
                            exports.join(", ")
                        },
                    });
                }
                matching.sort_by_key(|e| std::cmp::Reverse(e.len()));
                matching
            }
            // The server does not list exports (allowed): walk up from the path.
            Err(NfsError::Rpc { .. }) | Err(NfsError::BadReply { .. }) => prefixes(path),
            Err(e) => return Err(e),
        };
        let mut first_err = None;
        for export in candidates {
            match self.mnt(&export).await {
                Ok(ok) => {
                    self.check_flavor(&export, &ok.auth_flavors, sec)?;
                    let rest = path[export.len()..].trim_start_matches('/').to_string();
                    return Ok((export, ok.fhandle, rest));
                }
                Err(e @ NfsError::Mount { .. }) => {
                    first_err.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(first_err.unwrap_or_else(|| NfsError::NoExport {
            server: self.server.to_string(),
            path: path.to_string(),
            exports: "none".into(),
        }))
    }
}

fn normalise_export(e: &str) -> String {
    let t = e.trim_end_matches('/');
    if t.is_empty() {
        "/".into()
    } else {
        t.to_string()
    }
}

/// `export` is `path` or a parent of it, component-wise.
fn is_prefix(export: &str, path: &str) -> bool {
    export == "/"
        || path == export
        || (path.starts_with(export) && path.as_bytes().get(export.len()) == Some(&b'/'))
}

/// `path` and its parents, longest first.
fn prefixes(path: &str) -> Vec<String> {
    let mut out = vec![path.to_string()];
    let mut p = path;
    while let Some(i) = p.rfind('/') {
        p = &p[..i];
        out.push(if p.is_empty() {
            "/".into()
        } else {
            p.to_string()
        });
        if p.is_empty() {
            break;
        }
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_prefixes_are_by_component() {
        assert!(is_prefix("/export", "/export/big.bin"));
        assert!(is_prefix("/export", "/export"));
        assert!(!is_prefix("/export", "/exports/x"));
        assert!(is_prefix("/", "/anything"));
        assert_eq!(prefixes("/a/b/c"), ["/a/b/c", "/a/b", "/a", "/"]);
        assert_eq!(prefixes("/"), ["/"]);
        assert_eq!(normalise_export("/export/"), "/export");
    }
}
