//! The file API's operations over NFSv4.1: COMPOUNDs on the session, OPEN state for
//! I/O (READ and WRITE carry the open's stateid when there is one), EXCLUSIVE4_1
//! create. Paths on the wire are absolute from the server's root.

use std::sync::Arc;

use bytes::Bytes;

use super::{
    Access, Attr, Create, DirEntry, FileType, Fs, Fut, Handle, OpenFile, Ops, Page, Space, Stable,
};
use super::{Time, Written};
use crate::proto::nfs4::{Fh4, Ftype4, Nfstime4, SetAttrs, StableHow, Stateid};
use crate::url::NfsVersion;
use crate::v41::{self as v4, Client};

/// `/rel`: the path the NFSv4.1 client names in messages and looks up.
fn abs(rel: &str) -> String {
    format!("/{}", rel.trim_matches('/'))
}

fn fh4(h: &Handle) -> Fh4 {
    // Both are 128-byte inline handles.
    Fh4::new(h.as_bytes()).unwrap_or_default()
}

fn handle(fh: Fh4) -> Handle {
    Handle::new(fh.as_bytes()).unwrap_or_default()
}

pub(super) fn attr(a: &v4::Attr) -> Attr {
    Attr {
        ftype: match a.ftype {
            Ftype4::Reg => FileType::Regular,
            Ftype4::Dir | Ftype4::AttrDir => FileType::Directory,
            Ftype4::Lnk => FileType::Symlink,
            Ftype4::Blk => FileType::Block,
            Ftype4::Chr => FileType::Char,
            Ftype4::Sock => FileType::Socket,
            Ftype4::Fifo => FileType::Fifo,
            Ftype4::NamedAttr => FileType::Other,
        },
        mode: a.mode,
        nlink: a.nlink,
        uid: a.uid,
        gid: a.gid,
        size: a.size,
        used: a.used,
        fileid: a.fileid,
        // One number as NFSv3 gives it: the major id, with the minor folded in
        // when there is one.
        fsid: a.fsid.map(|(major, minor)| major ^ minor.rotate_left(32)),
        atime: a.atime.map(time),
        mtime: a.mtime.map(time),
        ctime: a.ctime.map(time),
    }
}

fn time(t: Nfstime4) -> Time {
    Time {
        seconds: t.seconds,
        nanos: t.nseconds,
    }
}

fn stable_how(s: Stable) -> StableHow {
    StableHow::from_u32(s as u32).unwrap_or(StableHow::FileSync)
}

fn access(a: Access) -> v4::Access {
    match a {
        Access::Read => v4::Access::Read,
        Access::Write => v4::Access::Write,
        Access::Both => v4::Access::Both,
    }
}

fn opened(f: v4::OpenFile, rel: &str) -> OpenFile {
    OpenFile {
        handle: handle(f.fh),
        stateid: Some(f.stateid),
        attr: Some(attr(&f.attr)),
        rel: rel.to_string(),
    }
}

impl Fs {
    /// The file API over an NFSv4.1 session.
    pub fn v41(client: Arc<Client>) -> Fs {
        Fs::new(client)
    }
}

impl Ops for Client {
    fn version(&self) -> NfsVersion {
        NfsVersion::V41
    }

    fn root<'a>(&'a self) -> Fut<'a, (Handle, Attr)> {
        Box::pin(async move {
            let (fh, a) = Client::lookup_path(self, "/").await?;
            Ok((handle(fh), attr(&a)))
        })
    }

    fn lookup<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        rel: &'a str,
    ) -> Fut<'a, (Handle, Attr)> {
        Box::pin(async move {
            let (fh, a) = Client::lookup(self, fh4(dir), name, &abs(rel)).await?;
            Ok((handle(fh), attr(&a)))
        })
    }

    fn lookup_path<'a>(&'a self, rel: &'a str) -> Fut<'a, (Handle, Attr)> {
        Box::pin(async move {
            let (fh, a) = Client::lookup_path(self, &abs(rel)).await?;
            Ok((handle(fh), attr(&a)))
        })
    }

    fn getattr<'a>(&'a self, fh: &'a Handle, rel: &'a str) -> Fut<'a, Attr> {
        Box::pin(async move { Ok(attr(&Client::getattr(self, fh4(fh), &abs(rel)).await?)) })
    }

    fn access<'a>(&'a self, fh: &'a Handle, bits: u32, rel: &'a str) -> Fut<'a, u32> {
        Box::pin(async move { Ok(Client::access(self, fh4(fh), bits, &abs(rel)).await?.1) })
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
                Client::mkdir(self, fh4(dir), name, mode, &abs(rel)).await?,
            ))
        })
    }

    fn create<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        mode: u32,
        how: Create,
        rel: &'a str,
    ) -> Fut<'a, OpenFile> {
        Box::pin(async move {
            let path = abs(rel);
            let f = match how {
                Create::Exclusive(v) => {
                    Client::create(self, fh4(dir), name, mode, v, &path).await?
                }
                Create::Truncate => self.create_or_truncate(fh4(dir), name, mode, &path).await?,
            };
            Ok(opened(f, rel))
        })
    }

    fn open<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        how: Access,
        rel: &'a str,
    ) -> Fut<'a, OpenFile> {
        Box::pin(async move {
            let f = Client::open(self, fh4(dir), name, access(how), &abs(rel)).await?;
            Ok(opened(f, rel))
        })
    }

    fn open_handle<'a>(&'a self, fh: &'a Handle, how: Access, rel: &'a str) -> Fut<'a, OpenFile> {
        Box::pin(async move {
            let f = Client::open_handle(self, fh4(fh), access(how), &abs(rel)).await?;
            Ok(opened(f, rel))
        })
    }

    fn close<'a>(&'a self, file: &'a OpenFile) -> Fut<'a, ()> {
        Box::pin(async move {
            match file.stateid {
                Some(s) => {
                    self.close_stateid(fh4(&file.handle), s, &abs(&file.rel))
                        .await
                }
                None => Ok(()),
            }
        })
    }

    /// Under the open's stateid: a size change needs an open for writing.
    fn set_size<'a>(&'a self, file: &'a OpenFile, size: u64) -> Fut<'a, ()> {
        Box::pin(async move {
            let set = SetAttrs {
                size: Some(size),
                ..SetAttrs::default()
            };
            let stateid = file.stateid.unwrap_or(Stateid::ANONYMOUS);
            self.setattr(fh4(&file.handle), stateid, set, &abs(&file.rel))
                .await
        })
    }

    fn read<'a>(
        &'a self,
        fh: &'a Handle,
        stateid: Option<Stateid>,
        offset: u64,
        count: u32,
        rel: &'a str,
    ) -> Fut<'a, (Bytes, bool)> {
        Box::pin(async move {
            let stateid = stateid.unwrap_or(Stateid::ANONYMOUS);
            self.read_stateid(fh4(fh), stateid, offset, count, &abs(rel))
                .await
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
            let stateid = file.stateid.unwrap_or(Stateid::ANONYMOUS);
            let w = self
                .write_stateid(
                    fh4(&file.handle),
                    stateid,
                    offset,
                    data,
                    stable_how(how),
                    &abs(&file.rel),
                )
                .await?;
            Ok(Written {
                count: w.count,
                committed: Stable::from_wire(w.committed as u32),
                verifier: w.verifier,
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
        Box::pin(async move { Client::commit(self, fh4(fh), offset, count, &abs(rel)).await })
    }

    /// REMOVE takes files and directories alike.
    fn remove<'a>(
        &'a self,
        dir: &'a Handle,
        name: &'a str,
        _is_dir: bool,
        rel: &'a str,
    ) -> Fut<'a, ()> {
        Box::pin(async move { Client::remove(self, fh4(dir), name, &abs(rel)).await })
    }

    fn rename<'a>(
        &'a self,
        from: (&'a Handle, &'a str),
        to: (&'a Handle, &'a str),
        rel: &'a str,
    ) -> Fut<'a, ()> {
        Box::pin(async move {
            Client::rename(self, (fh4(from.0), from.1), (fh4(to.0), to.1), &abs(rel)).await
        })
    }

    fn space<'a>(&'a self, fh: &'a Handle, rel: &'a str) -> Fut<'a, Space> {
        Box::pin(async move {
            let s = self.fs_space(fh4(fh), &abs(rel)).await?;
            Ok(Space {
                bytes_total: s.space_total,
                bytes_free: s.space_free,
                bytes_avail: s.space_avail,
                files_total: s.files_total,
                files_free: s.files_free,
                files_avail: s.files_avail,
                max_read: s.maxread,
                max_write: s.maxwrite,
                max_name: s.maxname,
                max_link: s.maxlink,
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
                Client::readdir_page(self, fh4(dir), cookie, verifier, &abs(rel)).await?;
            Ok(Page {
                entries: entries
                    .into_iter()
                    .map(|(cookie, e)| {
                        (
                            cookie,
                            DirEntry {
                                name: e.name,
                                attr: Some(attr(&e.attr)),
                                handle: None,
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
        Client::max_read(self)
    }

    fn max_write(&self) -> u32 {
        Client::max_write(self)
    }

    fn display(&self, rel: &str) -> String {
        format!("{}:{}", self.server(), abs(rel))
    }
}
