//! The file API's operations over NFSv3: one procedure per operation, no open state
//! (OPEN and CLOSE are lookups and nothing), exclusive create with a SETATTR after it.

use bytes::Bytes;

use super::{
    Access, Attr, Create, DirEntry, FileType, Handle, OpenFile, Ops, Page, Res, Space, Stable,
};
use super::{Time, Written};
use crate::client::Nfs3Client;
use crate::error::NfsError;
use crate::proto::nfs3::{CreateHow, Fattr3, FileHandle, Ftype3, Nfstime3, Sattr3, StableHow};
use crate::proto::nfs4::Stateid;

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

impl Ops for Nfs3Client {
    async fn root(&self) -> Res<(Handle, Attr)> {
        let a = self.getattr(Nfs3Client::root(self), "").await?;
        Ok((handle(Nfs3Client::root(self)), attr(&a)))
    }

    async fn lookup(&self, dir: &Handle, name: &str, rel: &str) -> Res<(Handle, Attr)> {
        let (fh, a) = self.lookup_attr(fh3(dir, rel)?, name, rel).await?;
        Ok((handle(fh), attr(&a)))
    }

    async fn lookup_path(&self, rel: &str) -> Res<(Handle, Attr)> {
        let (fh, a) = Nfs3Client::lookup_path(self, rel).await?;
        Ok((handle(fh), attr(&a)))
    }

    async fn getattr(&self, fh: &Handle, rel: &str) -> Res<Attr> {
        Ok(attr(&Nfs3Client::getattr(self, fh3(fh, rel)?, rel).await?))
    }

    async fn access(&self, fh: &Handle, bits: u32, rel: &str) -> Res<u32> {
        Nfs3Client::access(self, fh3(fh, rel)?, bits, rel).await
    }

    async fn mkdir(&self, dir: &Handle, name: &str, mode: u32, rel: &str) -> Res<Handle> {
        Ok(handle(
            Nfs3Client::mkdir(self, fh3(dir, rel)?, name, mode, rel).await?,
        ))
    }

    /// EXCLUSIVE sets no attributes: a SETATTR of the mode follows. UNCHECKED with size
    /// 0 truncates an existing file.
    async fn create(
        &self,
        dir: &Handle,
        name: &str,
        mode: u32,
        how: Create,
        rel: &str,
    ) -> Res<OpenFile> {
        let dir = fh3(dir, rel)?;
        let mode = mode & 0o7777;
        let fh = match how {
            Create::Exclusive(verifier) => {
                let fh = Nfs3Client::create(self, dir, name, CreateHow::Exclusive(verifier), rel)
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
    }

    async fn open(&self, dir: &Handle, name: &str, _access: Access, rel: &str) -> Res<OpenFile> {
        let (fh, a) = self.lookup_attr(fh3(dir, rel)?, name, rel).await?;
        Ok(self.opened(fh, Some(&a), rel))
    }

    async fn open_handle(&self, fh: &Handle, _access: Access, rel: &str) -> Res<OpenFile> {
        let fh = fh3(fh, rel)?;
        Ok(self.opened(fh, None, rel))
    }

    async fn close(&self, _file: &OpenFile) -> Res<()> {
        Ok(())
    }

    async fn set_size(&self, file: &OpenFile, size: u64) -> Res<()> {
        let set = Sattr3 {
            size: Some(size),
            ..Sattr3::default()
        };
        self.setattr(fh3(&file.handle, &file.rel)?, set, &file.rel)
            .await
    }

    async fn read(
        &self,
        fh: &Handle,
        _stateid: Option<Stateid>,
        offset: u64,
        count: u32,
        rel: &str,
    ) -> Res<(Bytes, bool)> {
        let r = Nfs3Client::read(self, fh3(fh, rel)?, offset, count, rel).await?;
        Ok((r.data, r.eof))
    }

    async fn write(&self, file: &OpenFile, offset: u64, data: &Bytes, how: Stable) -> Res<Written> {
        let fh = fh3(&file.handle, &file.rel)?;
        let w = Nfs3Client::write(self, fh, offset, data, stable_how(how), &file.rel).await?;
        Ok(Written {
            count: w.count,
            committed: Stable::from_wire(w.committed as u32),
            verifier: w.verf,
        })
    }

    async fn commit(&self, fh: &Handle, offset: u64, count: u32, rel: &str) -> Res<[u8; 8]> {
        Nfs3Client::commit(self, fh3(fh, rel)?, offset, count, rel).await
    }

    async fn remove(&self, dir: &Handle, name: &str, is_dir: bool, rel: &str) -> Res<()> {
        let dir = fh3(dir, rel)?;
        if is_dir {
            self.rmdir(dir, name, rel).await
        } else {
            Nfs3Client::remove(self, dir, name, rel).await
        }
    }

    async fn rename(&self, from: (&Handle, &str), to: (&Handle, &str), rel: &str) -> Res<()> {
        let (f, t) = (fh3(from.0, rel)?, fh3(to.0, rel)?);
        Nfs3Client::rename(self, (f, from.1), (t, to.1), rel).await
    }

    /// FSSTAT, FSINFO (transfer limits) and PATHCONF (name and link limits).
    async fn space(&self, fh: &Handle, rel: &str) -> Res<Space> {
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
    }

    async fn readdir_page(
        &self,
        dir: &Handle,
        cookie: u64,
        verifier: [u8; 8],
        rel: &str,
    ) -> Res<Page> {
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
