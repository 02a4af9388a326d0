//! The file API's operations over NFSv3: one procedure per operation, no open state
//! (OPEN and CLOSE are lookups and nothing), exclusive create with a SETATTR after it.

use std::sync::Arc;

use bytes::Bytes;

use super::{
    Access, Attr, Create, DirEntry, FileType, Fs, Fut, Handle, OpenFile, Ops, Page, Space, Stable,
};
use super::{Time, Written};
use crate::client::Nfs3Client;
use crate::error::NfsError;
use crate::proto::nfs3::{CreateHow, Fattr3, FileHandle, Ftype3, Nfstime3, Sattr3, StableHow};
use crate::proto::nfs4::Stateid;
use crate::url::NfsVersion;

/// The NFSv3 handle of `h`, or an error naming the path (a handle longer than 64
/// bytes did not come from an NFSv3 server).
fn fh3(h: &Handle, rel: &str) -> Result<FileHandle, NfsError> {
    FileHandle::new(h.as_bytes()).ok_or_else(|| NfsError::Invalid {
        path: rel.to_string(),
        reason: format!(
            "a {}-byte file handle is too long for NFSv3",
            h.as_bytes().len()
        ),
    })
}

fn handle(fh: FileHandle) -> Handle {
    // 64 bytes always fit in 128.
    Handle::new(fh.as_bytes()).unwrap_or_default()
}

fn time(t: Nfstime3) -> Option<Time> {
    Some(Time {
        seconds: i64::from(t.seconds),
        nanos: t.nseconds,
    })
}

pub(super) fn attr(a: &Fattr3) -> Attr {
    Attr {
        ftype: match a.ftype {
            Ftype3::Reg => FileType::Regular,
            Ftype3::Dir => FileType::Directory,
            Ftype3::Lnk => FileType::Symlink,
            Ftype3::Blk => FileType::Block,
            Ftype3::Chr => FileType::Char,
            Ftype3::Sock => FileType::Socket,
            Ftype3::Fifo => FileType::Fifo,
        },
        mode: a.mode & 0o7777,
        nlink: a.nlink,
        uid: Some(a.uid),
        gid: Some(a.gid),
        size: a.size,
        used: Some(a.used),
        fileid: a.fileid,
        fsid: Some(a.fsid),
        atime: time(a.atime),
        mtime: time(a.mtime),
        ctime: time(a.ctime),
    }
}

fn stable_how(s: Stable) -> StableHow {
    StableHow::from_u32(s as u32).unwrap_or(StableHow::FileSync)
}

impl Nfs3Client {
    /// LOOKUP, with a GETATTR when the reply left the attributes out.
    async fn lookup_attr(
        &self,
        dir: FileHandle,
        name: &str,
        rel: &str,
    ) -> Result<(FileHandle, Fattr3), NfsError> {
        let (fh, a) = self.lookup(dir, name, rel).await?;
        let a = match a {
            Some(a) => a,
            None => self.getattr(fh, rel).await?,
        };
        Ok((fh, a))
    }

    fn opened(&self, fh: FileHandle, a: Option<&Fattr3>, rel: &str) -> OpenFile {
        OpenFile {
            handle: handle(fh),
            stateid: None,
            attr: a.map(attr),
            rel: rel.to_string(),
        }
    }
}

impl Fs {
    /// The file API over a mounted NFSv3 export.
    pub fn v3(client: Arc<Nfs3Client>) -> Fs {
        Fs::new(client)
    }
}

impl Ops for Nfs3Client {
    fn version(&self) -> NfsVersion {
        NfsVersion::V3
    }

    fn root<'a>(&'a self) -> Fut<'a, (Handle, Attr)> {
        Box::pin(async move {
            let a = self.getattr(Nfs3Client::root(self), "").await?;
            Ok((handle(Nfs3Client::root(self)), attr(&a)))
        })
    }

    fn lookup<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        rel: &'a str,
    ) -> Fut<'a, (Handle, Attr)> {
        Box::pin(async move {
            let (fh, a) = self.lookup_attr(fh3(dir, rel)?, name, rel).await?;
            Ok((handle(fh), attr(&a)))
        })
    }

    fn lookup_path<'a>(&'a self, rel: &'a str) -> Fut<'a, (Handle, Attr)> {
        Box::pin(async move {
            let (fh, a) = Nfs3Client::lookup_path(self, rel).await?;
            Ok((handle(fh), attr(&a)))
        })
    }

    fn getattr<'a>(&'a self, fh: &'a Handle, rel: &'a str) -> Fut<'a, Attr> {
        Box::pin(async move { Ok(attr(&Nfs3Client::getattr(self, fh3(fh, rel)?, rel).await?)) })
    }

    fn access<'a>(&'a self, fh: &'a Handle, bits: u32, rel: &'a str) -> Fut<'a, u32> {
        Box::pin(async move { Nfs3Client::access(self, fh3(fh, rel)?, bits, rel).await })
    }

    fn mkdir<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        mode: u32,
        rel: &'a str,
    ) -> Fut<'a, Handle> {
        Box::pin(async move {
            Ok(handle(
                Nfs3Client::mkdir(self, fh3(dir, rel)?, name, mode, rel).await?,
            ))
        })
    }

    /// EXCLUSIVE sets no attributes: a SETATTR of the mode follows. UNCHECKED with size
    /// 0 truncates an existing file.
    fn create<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        mode: u32,
        how: Create,
        rel: &'a str,
    ) -> Fut<'a, OpenFile> {
        Box::pin(async move {
            let dir = fh3(dir, rel)?;
            let mode = mode & 0o7777;
            let fh = match how {
                Create::Exclusive(verifier) => {
                    let fh =
                        Nfs3Client::create(self, dir, name, CreateHow::Exclusive(verifier), rel)
                            .await?;
                    let set = Sattr3 {
                        mode: Some(mode),
                        ..Sattr3::default()
                    };
                    self.setattr(fh, set, rel).await?;
                    fh
                }
                Create::Truncate => {
                    let set = Sattr3 {
                        mode: Some(mode),
                        size: Some(0),
                        ..Sattr3::default()
                    };
                    Nfs3Client::create(self, dir, name, CreateHow::Unchecked(set), rel).await?
                }
            };
            Ok(self.opened(fh, None, rel))
        })
    }

    fn open<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        _access: Access,
        rel: &'a str,
    ) -> Fut<'a, OpenFile> {
        Box::pin(async move {
            let (fh, a) = self.lookup_attr(fh3(dir, rel)?, name, rel).await?;
            Ok(self.opened(fh, Some(&a), rel))
        })
    }

    fn open_handle<'a>(
        &'a self,
        fh: &'a Handle,
        _access: Access,
        rel: &'a str,
    ) -> Fut<'a, OpenFile> {
        Box::pin(async move {
            let fh = fh3(fh, rel)?;
            Ok(self.opened(fh, None, rel))
        })
    }

    fn close<'a>(&'a self, _file: &'a OpenFile) -> Fut<'a, ()> {
        Box::pin(async move { Ok(()) })
    }

    fn set_size<'a>(&'a self, file: &'a OpenFile, size: u64) -> Fut<'a, ()> {
        Box::pin(async move {
            let set = Sattr3 {
                size: Some(size),
                ..Sattr3::default()
            };
            self.setattr(fh3(&file.handle, &file.rel)?, set, &file.rel)
                .await
        })
    }

    fn read<'a>(
        &'a self,
        fh: &'a Handle,
        _stateid: Option<Stateid>,
        offset: u64,
        count: u32,
        rel: &'a str,
    ) -> Fut<'a, (Bytes, bool)> {
        Box::pin(async move {
            let r = Nfs3Client::read(self, fh3(fh, rel)?, offset, count, rel).await?;
            Ok((r.data, r.eof))
        })
    }

    fn write<'a>(
        &'a self,
        file: &'a OpenFile,
        offset: u64,
        data: &'a Bytes,
        how: Stable,
    ) -> Fut<'a, Written> {
        Box::pin(async move {
            let fh = fh3(&file.handle, &file.rel)?;
            let w = Nfs3Client::write(self, fh, offset, data, stable_how(how), &file.rel).await?;
            Ok(Written {
                count: w.count,
                committed: Stable::from_wire(w.committed as u32),
                verifier: w.verf,
            })
        })
    }

    fn commit<'a>(
        &'a self,
        fh: &'a Handle,
        offset: u64,
        count: u32,
        rel: &'a str,
    ) -> Fut<'a, [u8; 8]> {
        Box::pin(async move { Nfs3Client::commit(self, fh3(fh, rel)?, offset, count, rel).await })
    }

    fn remove<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        is_dir: bool,
        rel: &'a str,
    ) -> Fut<'a, ()> {
        Box::pin(async move {
            let dir = fh3(dir, rel)?;
            if is_dir {
                self.rmdir(dir, name, rel).await
            } else {
                Nfs3Client::remove(self, dir, name, rel).await
            }
        })
    }

    fn rename<'a>(
        &'a self,
        from: (&'a Handle, &'a str),
        to: (&'a Handle, &'a str),
        rel: &'a str,
    ) -> Fut<'a, ()> {
        Box::pin(async move {
            let (f, t) = (fh3(from.0, rel)?, fh3(to.0, rel)?);
            Nfs3Client::rename(self, (f, from.1), (t, to.1), rel).await
        })
    }

    /// FSSTAT, FSINFO (transfer limits) and PATHCONF (name and link limits).
    fn space<'a>(&'a self, fh: &'a Handle, rel: &'a str) -> Fut<'a, Space> {
        Box::pin(async move {
            let fh = fh3(fh, rel)?;
            let s = self.fsstat(fh, rel).await?;
            let p = self.pathconf(fh, rel).await?;
            let i = self.fsinfo();
            Ok(Space {
                bytes_total: Some(s.tbytes),
                bytes_free: Some(s.fbytes),
                bytes_avail: Some(s.abytes),
                files_total: Some(s.tfiles),
                files_free: Some(s.ffiles),
                files_avail: Some(s.afiles),
                max_read: Some(u64::from(i.rtmax)),
                max_write: Some(u64::from(i.wtmax)),
                max_name: Some(p.name_max),
                max_link: Some(p.linkmax),
            })
        })
    }

    fn readdir_page<'a>(
        &'a self,
        dir: &'a Handle,
        cookie: u64,
        verifier: [u8; 8],
        rel: &'a str,
    ) -> Fut<'a, Page> {
        Box::pin(async move {
            let (entries, verifier, eof) =
                Nfs3Client::readdir_page(self, fh3(dir, rel)?, cookie, verifier, rel).await?;
            Ok(Page {
                entries: entries
                    .into_iter()
                    .map(|(cookie, e)| {
                        (
                            cookie,
                            DirEntry {
                                name: e.name,
                                attr: e.attributes.as_ref().map(attr),
                                handle: e.handle.map(handle),
                            },
                        )
                    })
                    .collect(),
                verifier,
                eof,
            })
        })
    }

    fn max_read(&self) -> u32 {
        self.read_size(1 << 20)
    }

    fn max_write(&self) -> u32 {
        self.write_size(1 << 20)
    }

    fn display(&self, rel: &str) -> String {
        format!("{}:{}", self.server(), self.full_path(rel))
    }
}
