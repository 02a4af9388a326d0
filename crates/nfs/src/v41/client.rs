//! NFSv4.1's metadata client ([`Client`]: a session and the file operations over it;
//! the operations themselves in `files.rs`), its attributes and entries. Apart from
//! `mod.rs`, which only declares and re-exports, so that the parts that use the client
//! do not go through the module that re-exports them all.

use bytes::Bytes;

use crate::error::{check_read_len, NfsError};
use crate::proto::nfs4::{
    bit, Bitmap4, Compound, Fattr, Fh4, Ftype4, Nfsstat4, Nfstime4, OpResult, Opnum, Stateid,
    MINOR_VERSION,
};
use crate::resolve::resolve;
use crate::url::NfsUrl;
use crate::ClientOptions;

use super::opens::Opens;
use super::{Session, SessionOptions};

/// The NFSv4 port, when the URL names none.
pub const NFS4_PORT: u16 = 2049;
/// LOOKUPs put in one COMPOUND.
const LOOKUPS_PER_COMPOUND: usize = 8;
/// Largest READ asked for in one COMPOUND.
pub const MAX_READ: u32 = 1 << 20;

/// The attributes the file API asks for.
pub(super) fn attr_mask() -> Bitmap4 {
    Bitmap4::from_bits(&[
        bit::TYPE,
        bit::SIZE,
        bit::FILEID,
        bit::MODE,
        bit::NUMLINKS,
        bit::FSID,
        bit::OWNER,
        bit::OWNER_GROUP,
        bit::SPACE_USED,
        bit::TIME_ACCESS,
        bit::TIME_METADATA,
        bit::TIME_MODIFY,
    ])
}

/// A file's attributes (what a `stat` shows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    pub ftype: Ftype4,
    pub size: u64,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
    pub fileid: u64,
    pub nlink: u32,
    /// Bytes the file takes on the server's disk.
    pub used: Option<u64>,
    /// The file system's id, major and minor.
    pub fsid: Option<(u64, u64)>,
    /// Owner and group when the server sends them as numbers.
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub atime: Option<Nfstime4>,
    pub mtime: Option<Nfstime4>,
    /// `time_metadata`: the last change of the file's attributes (ctime).
    pub ctime: Option<Nfstime4>,
}

impl Attr {
    pub(super) fn from_fattr(a: &Fattr<'_>) -> Attr {
        Attr {
            ftype: a.ftype.unwrap_or(Ftype4::Reg),
            size: a.size.unwrap_or(0),
            mode: a.mode.unwrap_or(0) & 0o7777,
            fileid: a.fileid.unwrap_or(0),
            nlink: a.numlinks.unwrap_or(1),
            used: a.space_used,
            fsid: a.fsid.map(|f| (f.major, f.minor)),
            uid: a.owner_id(),
            gid: a.group_id(),
            atime: a.time_access,
            mtime: a.time_modify,
            ctime: a.time_metadata,
        }
    }
}

/// One directory entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub attr: Attr,
}

/// A session plus the file operations a listing or a copy needs.
pub struct Client {
    pub(super) session: Session,
    pub(super) server: String,
    /// The opens held, to have them again after a recovery.
    pub(super) opens: Opens,
}

impl Client {
    /// Sets up a session with the server of `url` (port 2049 unless the URL names
    /// one) with the credential of `options`.
    pub async fn connect(
        url: &NfsUrl,
        options: &ClientOptions,
        mut session: SessionOptions,
    ) -> Result<Client, NfsError> {
        let addr = resolve(&url.host, url.nfs_port.unwrap_or(NFS4_PORT)).await?;
        session.conn = options.conn.clone();
        let session = Session::connect(addr, options.credential()?, session).await?;
        Ok(Client::from_session(session, addr.to_string()))
    }

    /// A client over an established session with the server named `server`.
    pub fn from_session(session: Session, server: String) -> Client {
        Client {
            session,
            server,
            opens: Opens::default(),
        }
    }

    /// The session, for a client that is done with file operations.
    pub fn into_session(self) -> Session {
        self.session
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The server's address.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Looks up an absolute path from the root file handle (PUTROOTFH, LOOKUP per
    /// component, GETFH, GETATTR); errors name the op that failed and the path.
    pub async fn lookup_path(&self, path: &str) -> Result<(Fh4, Attr), NfsError> {
        let names: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        let mut fh: Option<Fh4> = None;
        let mut chunks = names.chunks(LOOKUPS_PER_COMPOUND).peekable();
        loop {
            let chunk = chunks.next().unwrap_or(&[]);
            let mut c = Compound::new("lookup", MINOR_VERSION);
            c = match fh {
                None => c.putrootfh(),
                Some(fh) => c.putfh(fh),
            };
            for name in chunk {
                c = c.lookup(*name);
            }
            let last = chunks.peek().is_none();
            c = c.getfh();
            if last {
                c = c.getattr(attr_mask());
            }
            let r = match self.session.compound(&c, path).await {
                Err(NfsError::Status4 {
                    status: Nfsstat4::Wrongsec,
                    ..
                }) => return Err(self.wrongsec(fh, chunk, path).await),
                r => r?,
            };
            let res = r.res()?;
            let mut attr = None;
            for op in &res.results {
                match op {
                    OpResult::Getfh(h) => fh = Some(*h),
                    OpResult::Getattr(a) => attr = Some(Attr::from_fattr(a)),
                    _ => {}
                }
            }
            if last {
                return match (fh, attr) {
                    (Some(fh), Some(attr)) => Ok((fh, attr)),
                    _ => Err(bad(path, "LOOKUP reply without handle or attributes")),
                };
            }
        }
    }

    /// A LOOKUP refused this connection's flavour (NFS4ERR_WRONGSEC): SECINFO of each
    /// name in turn finds the one that wants another, and the error says which
    /// flavours it accepts.
    pub(crate) async fn wrongsec(&self, fh: Option<Fh4>, names: &[&str], path: &str) -> NfsError {
        let sec = dbio_rpc::Flavor::of(self.session.opts.conn.gss.as_ref());
        let mut dir = String::new();
        for (k, name) in names.iter().enumerate() {
            let mut c = Compound::new("secinfo", MINOR_VERSION);
            c = match fh {
                None => c.putrootfh(),
                Some(fh) => c.putfh(fh),
            };
            for n in &names[..k] {
                c = c.lookup(*n);
            }
            c = c.secinfo(*name);
            dir = format!("{dir}/{name}");
            let Ok(r) = self.session.compound(&c, path).await else {
                break;
            };
            let Ok(res) = r.res() else { break };
            let Some(OpResult::Secinfo(listed)) = res.results.last() else {
                break;
            };
            if !listed.is_empty() && !listed.contains(&sec.pseudo_flavor()) {
                let accepts: Vec<String> = listed
                    .iter()
                    .map(|&n| match dbio_rpc::Flavor::from_pseudo(n) {
                        Some(f) => f.to_string(),
                        None if n == 0 => "none".into(),
                        None => "another GSS mechanism".into(),
                    })
                    .collect();
                return NfsError::Flavor {
                    server: self.server.clone(),
                    export: dir,
                    asked: sec,
                    accepts: accepts.join(", "),
                };
            }
        }
        NfsError::Status4 {
            op: Opnum::Lookup,
            path: path.to_string(),
            status: Nfsstat4::Wrongsec,
        }
    }

    /// GETATTR of a handle.
    pub async fn getattr(&self, fh: Fh4, path: &str) -> Result<Attr, NfsError> {
        let c = Compound::new("getattr", MINOR_VERSION)
            .putfh(fh)
            .getattr(attr_mask());
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(OpResult::Getattr(a)) => Ok(Attr::from_fattr(a)),
            _ => Err(bad(path, "GETATTR reply without attributes")),
        }
    }

    /// One READDIR reply from `cookie` on: the entries with their cookies, the
    /// cookie verifier and eof (the file API follows them, with its guards, in
    /// [`crate::fs::Fs::readdir`]).
    pub async fn readdir_page(
        &self,
        dir: Fh4,
        cookie: u64,
        verf: [u8; 8],
        path: &str,
    ) -> Result<(Vec<(u64, Entry)>, [u8; 8], bool), NfsError> {
        let c = Compound::new("readdir", MINOR_VERSION).putfh(dir).readdir(
            cookie,
            verf,
            16384,
            65536,
            attr_mask(),
        );
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        let Some(OpResult::Readdir(rd)) = res.results.last() else {
            return Err(bad(path, "READDIR reply without entries"));
        };
        let entries = rd
            .entries
            .iter()
            .map(|e| {
                (
                    e.cookie,
                    Entry {
                        name: String::from_utf8_lossy(e.name.0).into_owned(),
                        attr: Attr::from_fattr(&e.attrs()),
                    },
                )
            })
            .collect();
        Ok((entries, rd.cookieverf, rd.eof))
    }

    /// Largest READ this session allows in one COMPOUND (room for the COMPOUND's other results, in whole 4 KiB pages).
    pub fn max_read(&self) -> u32 {
        let granted = self.session.fore_channel().maxresponsesize;
        (granted.saturating_sub(1024) & !4095).clamp(4096, MAX_READ)
    }

    /// One READ (anonymous stateid) of at most [`Client::max_read`] bytes: the data
    /// (sharing the reply record) and whether it reached the end of the file.
    pub async fn read(
        &self,
        fh: Fh4,
        offset: u64,
        len: u32,
        path: &str,
    ) -> Result<(Bytes, bool), NfsError> {
        let len = len.min(self.max_read());
        let c =
            Compound::new("read", MINOR_VERSION)
                .putfh(fh)
                .read(Stateid::ANONYMOUS, offset, len);
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(OpResult::Read { eof, data }) => {
                check_read_len(self.server(), path, len, data.len())?;
                Ok((r.share(data), *eof))
            }
            _ => Err(bad(path, "READ reply without data")),
        }
    }

    /// The server's lease time in seconds (`lease_time` attribute of `fh`), if it
    /// says.
    pub async fn lease_time(&self, fh: Fh4) -> Result<Option<u32>, NfsError> {
        let c = Compound::new("getattr", MINOR_VERSION)
            .putfh(fh)
            .getattr(Bitmap4::from_bits(&[bit::LEASE_TIME]));
        let r = self.session.compound(&c, "lease_time").await?;
        let res = r.res()?;
        Ok(match res.results.last() {
            Some(OpResult::Getattr(a)) => a.lease_time,
            _ => None,
        })
    }

    /// Destroys the session and the client id.
    pub async fn close(self) -> Result<(), NfsError> {
        self.session.close().await
    }
}

pub(super) fn bad(path: &str, reason: &str) -> NfsError {
    NfsError::BadReply {
        what: "NFSv4.1".into(),
        path: path.into(),
        reason: reason.into(),
    }
}
