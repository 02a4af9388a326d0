//! NFSv3 client: mounting from a URL, and one method per procedure.
//!
//! Errors name the procedure and the path (export plus path inside it).
//! NFS3ERR_JUKEBOX ("try again later") is retried with a growing delay.

use std::net::SocketAddr;

use bytes::{Bytes, BytesMut};
use std::sync::Arc;

use dbio_rpc::conn::{CallBuf, ConnConfig, ReplyTo};
use dbio_xdr::{XdrDecode, XdrEncode};

use crate::channel::Results;
use crate::client_config::ClientOptions;
use crate::error::{bad_reply, call_error, check_read_len, NfsError};
use crate::mount::{getport, MountClient};
use crate::path::PathSpec;
use crate::proto::nfs3::{
    self, decode_res, AccessArgs, AccessOk, CommitArgs, CommitOk, CreateArgs, CreateHow, CreateOk,
    Data, DirOpArgs, Fattr3, FhArgs, FileHandle, FsinfoOk, FsstatOk, GetattrOk, LookupOk,
    MkdirArgs, Name, Nfsstat3, PathconfOk, Proc, ReadArgs, ReadOk, ReaddirplusArgs, ReaddirplusOk,
    RenameArgs, Sattr3, SetattrArgs, StableHow, Verifier, WriteArgs, WriteOk,
};
use crate::proto::{mount3, portmap};
use crate::retry::{Attempt, BusyStatus};
use crate::router::{Route, Router};
use crate::url::NfsUrl;

/// Data returned by READ; `data` shares the reply record (no copy).
#[derive(Clone, Debug)]
pub struct ReadReply {
    pub data: Bytes,
    pub eof: bool,
    pub attributes: Option<Fattr3>,
}

/// What WRITE reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteReply {
    pub count: u32,
    pub committed: StableHow,
    pub verf: Verifier,
}

/// One directory entry from READDIRPLUS.
#[derive(Clone, Debug)]
pub struct DirEntry {
    pub name: String,
    pub fileid: u64,
    pub attributes: Option<Fattr3>,
    pub handle: Option<FileHandle>,
}

/// The entries of one READDIRPLUS reply, each with its cookie.
pub type ReaddirplusPage = Vec<(u64, DirEntry)>;

/// The server's NFSv3 port over `path`: the URL's, else the portmapper's.
pub(crate) async fn nfs_port(
    url: &NfsUrl,
    path: &PathSpec,
    conn: &ConnConfig,
) -> Result<u16, NfsError> {
    if let Some(p) = url.nfs_port {
        return Ok(p);
    }
    let mut conn = conn.clone();
    conn.bind = path.local;
    getport(
        path.nfs_addr(portmap::PORT),
        nfs3::PROGRAM,
        nfs3::VERSION,
        &conn,
    )
    .await
}

/// A mounted NFSv3 export (a clone shares its connections).
#[derive(Clone)]
pub struct Nfs3Client {
    /// The NFS connections, with their paths (a pool's are shared with its data path).
    router: Arc<Router>,
    server: String,
    mount_addr: SocketAddr,
    export: String,
    root: FileHandle,
    fsinfo: FsinfoOk,
    options: ClientOptions,
}

impl Nfs3Client {
    /// Mounts the export containing the URL's path over `path` (MOUNT to the URL's
    /// mount port or the one the portmapper gives) and reads FSINFO through `router`,
    /// whose connections reach the server's NFS port. Returns the client and the
    /// path inside the export.
    pub(crate) async fn mount_on(
        router: Arc<Router>,
        url: &NfsUrl,
        path: &PathSpec,
        mut options: ClientOptions,
    ) -> Result<(Nfs3Client, String), NfsError> {
        options.conn.bind = path.local;
        let cred = options.credential()?;
        let mount_port = match url.mount_port {
            Some(p) => p,
            None => {
                let at = path.nfs_addr(portmap::PORT);
                getport(at, mount3::PROGRAM, mount3::VERSION, &options.conn).await?
            }
        };
        let mount_addr = path.nfs_addr(mount_port);
        let mounter = MountClient::connect(mount_addr, &options.conn, cred).await?;
        let sec = dbio_rpc::Flavor::of(options.conn.gss.as_ref());
        let (export, root, rest) = mounter.mount_path(&url.path, sec).await?;
        let mut client = Nfs3Client {
            router,
            server: url.host.clone(),
            mount_addr,
            export,
            root,
            fsinfo: FsinfoOk {
                obj_attributes: None,
                rtmax: 0,
                rtpref: 0,
                rtmult: 0,
                wtmax: 0,
                wtpref: 0,
                wtmult: 0,
                dtpref: 0,
                maxfilesize: 0,
                time_delta: Default::default(),
                properties: 0,
            },
            options,
        };
        client.fsinfo = client.fsinfo_of(root, "").await?;
        Ok((client, rest))
    }

    /// Tells the server this client is done with the export (UMNT).
    pub async fn unmount(&self) -> Result<(), NfsError> {
        let mounter = MountClient::connect(
            self.mount_addr,
            &self.options.conn,
            self.options.credential()?,
        )
        .await?;
        mounter.umnt(&self.export).await
    }

    pub fn root(&self) -> FileHandle {
        self.root
    }
    pub fn export(&self) -> &str {
        &self.export
    }
    pub fn server(&self) -> &str {
        &self.server
    }
    pub fn fsinfo(&self) -> &FsinfoOk {
        &self.fsinfo
    }
    /// The NFS connections and their paths.
    pub fn router(&self) -> &Arc<Router> {
        &self.router
    }

    /// Encodes a call of procedure `proc_` (for pipelines: send it with
    /// [`Nfs3Client::submit`]).
    pub fn encode(&self, proc_: Proc, args: impl FnOnce(&mut BytesMut)) -> CallBuf {
        self.router.encode(proc_ as u32, args, Bytes::new())
    }

    /// Queues a call without waiting; its reply goes to `reply`.
    pub fn submit(&self, proc_: Proc, call: CallBuf, reply: ReplyTo) {
        let id = self.router.proc_id(proc_.name());
        self.router.send(Route::META, id, call, reply);
    }
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// READ size to use: the preferred size, within rtmax and `cap`, a multiple of rtmult.
    pub fn read_size(&self, cap: u32) -> u32 {
        // A reply must fit in the connection's record limit, with room for its header.
        let fits = (self.options.conn.max_record as u32)
            .saturating_sub(1024)
            .max(4096);
        transfer_size(
            self.fsinfo.rtpref,
            self.fsinfo.rtmax,
            self.fsinfo.rtmult,
            cap.min(fits),
        )
    }

    /// WRITE size to use, like [`Nfs3Client::read_size`].
    pub fn write_size(&self, cap: u32) -> u32 {
        transfer_size(
            self.fsinfo.wtpref,
            self.fsinfo.wtmax,
            self.fsinfo.wtmult,
            cap,
        )
    }

    /// `export/rel` for messages.
    pub fn full_path(&self, rel: &str) -> String {
        let rel = rel.trim_matches('/');
        match (self.export.as_str(), rel) {
            (e, "") => e.to_string(),
            ("/", r) => format!("/{r}"),
            (e, r) => format!("{e}/{r}"),
        }
    }

    /// Sends a call and waits; retries NFS3ERR_JUKEBOX with backoff.
    async fn call(
        &self,
        proc_: Proc,
        rel: &str,
        args: impl Fn(&mut BytesMut),
    ) -> Result<Results, NfsError> {
        self.call_buf(proc_, rel, || {
            self.router.encode(proc_ as u32, &args, Bytes::new())
        })
        .await
    }

    async fn call_buf(
        &self,
        proc_: Proc,
        rel: &str,
        make: impl Fn() -> CallBuf,
    ) -> Result<Results, NfsError> {
        let id = self.router.proc_id(proc_.name());
        let make = &make;
        let attempt = move || async move {
            let res = self
                .router
                .call(Route::META, id, make)
                .await
                .map_err(|e| call_error(proc_.name(), &self.full_path(rel), e))?;
            Ok(match is_jukebox(res.bytes()) {
                true => Attempt::Busy(BusyStatus::Jukebox, res),
                false => Attempt::Done(res),
            })
        };
        // Still busy after the last re-send: the JUKEBOX status is the reply.
        let spent = |res, _: &_| Ok(res);
        self.options.retry.retrying().run(attempt, spent).await
    }

    /// Decodes `res` as the result of `proc_`; an error status names the path.
    pub fn decode<'r, T: XdrDecode<'r>>(
        &self,
        res: &'r Results,
        proc_: Proc,
        rel: &str,
    ) -> Result<T, NfsError> {
        decode_results(res, proc_, &self.full_path(rel))
    }

    pub async fn null(&self) -> Result<(), NfsError> {
        self.call(Proc::Null, "", |_| {}).await.map(|_| ())
    }

    pub async fn getattr(&self, fh: FileHandle, rel: &str) -> Result<Fattr3, NfsError> {
        let res = self
            .call(Proc::Getattr, rel, |b| FhArgs { object: fh }.encode(b))
            .await?;
        Ok(self
            .decode::<GetattrOk>(&res, Proc::Getattr, rel)?
            .attributes)
    }

    pub async fn setattr(&self, fh: FileHandle, attrs: Sattr3, rel: &str) -> Result<(), NfsError> {
        let args = SetattrArgs {
            object: fh,
            new_attributes: attrs,
            guard: None,
        };
        let res = self.call(Proc::Setattr, rel, |b| args.encode(b)).await?;
        self.decode::<nfs3::WccOk>(&res, Proc::Setattr, rel)
            .map(|_| ())
    }

    /// LOOKUP of one name in `dir`; `rel` is the looked-up path (for messages).
    pub async fn lookup(
        &self,
        dir: FileHandle,
        name: &str,
        rel: &str,
    ) -> Result<(FileHandle, Option<Fattr3>), NfsError> {
        let args = DirOpArgs {
            dir,
            name: Name::from(name),
        };
        let res = self.call(Proc::Lookup, rel, |b| args.encode(b)).await?;
        let ok: LookupOk = self.decode(&res, Proc::Lookup, rel)?;
        Ok((ok.object, ok.obj_attributes))
    }

    /// Walks `rel` (relative to the export root) one LOOKUP per component.
    pub async fn lookup_path(&self, rel: &str) -> Result<(FileHandle, Fattr3), NfsError> {
        let mut fh = self.root;
        let mut walked = String::new();
        let mut attrs = None;
        for name in rel.split('/').filter(|c| !c.is_empty()) {
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(name);
            let (next, a) = self.lookup(fh, name, &walked).await?;
            fh = next;
            attrs = a;
        }
        let attrs = match attrs {
            Some(a) => a,
            None => self.getattr(fh, rel).await?,
        };
        Ok((fh, attrs))
    }

    /// ACCESS: which of the `mask` bits ([`nfs3::access`]) are granted.
    pub async fn access(&self, fh: FileHandle, mask: u32, rel: &str) -> Result<u32, NfsError> {
        let args = AccessArgs {
            object: fh,
            access: mask,
        };
        let res = self.call(Proc::Access, rel, |b| args.encode(b)).await?;
        Ok(self.decode::<AccessOk>(&res, Proc::Access, rel)?.access)
    }

    /// Encodes a READ (for pipelines: submit it and decode with [`Nfs3Client::decode_read`]).
    pub fn read_call(&self, fh: FileHandle, offset: u64, count: u32) -> CallBuf {
        let mut call = self.encode(Proc::Read, |b| {
            ReadArgs {
                file: fh,
                offset,
                count,
            }
            .encode(b)
        });
        call.reply_hint = read_reply_hint(count);
        call
    }

    pub fn decode_read(&self, res: &Results, rel: &str) -> Result<ReadReply, NfsError> {
        let ok: ReadOk = self.decode(res, Proc::Read, rel)?;
        if ok.data.0.len() != ok.count as usize {
            return Err(bad_reply(
                "READ",
                &self.full_path(rel),
                "count differs from data length",
            ));
        }
        Ok(ReadReply {
            data: res.share(ok.data.0),
            eof: ok.eof,
            attributes: ok.file_attributes,
        })
    }

    pub async fn read(
        &self,
        fh: FileHandle,
        offset: u64,
        count: u32,
        rel: &str,
    ) -> Result<ReadReply, NfsError> {
        let res = self
            .call_buf(Proc::Read, rel, || self.read_call(fh, offset, count))
            .await?;
        let reply = self.decode_read(&res, rel)?;
        check_read_len(&self.server, &self.full_path(rel), count, reply.data.len())?;
        Ok(reply)
    }

    /// Encodes a WRITE; `data` is sent as its own slice, not copied.
    pub fn write_call(
        &self,
        fh: FileHandle,
        offset: u64,
        data: &Bytes,
        stable: StableHow,
    ) -> CallBuf {
        self.router.encode(
            Proc::Write as u32,
            |b| {
                WriteArgs {
                    file: fh,
                    offset,
                    stable,
                    data: Data(&data[..]),
                }
                .encode_head(b)
            },
            data.clone(),
        )
    }

    pub fn decode_write(&self, res: &Results, rel: &str) -> Result<WriteReply, NfsError> {
        let ok: WriteOk = self.decode(res, Proc::Write, rel)?;
        Ok(WriteReply {
            count: ok.count,
            committed: ok.committed,
            verf: ok.verf,
        })
    }

    pub async fn write(
        &self,
        fh: FileHandle,
        offset: u64,
        data: &Bytes,
        stable: StableHow,
        rel: &str,
    ) -> Result<WriteReply, NfsError> {
        let res = self
            .call_buf(Proc::Write, rel, || {
                self.write_call(fh, offset, data, stable)
            })
            .await?;
        self.decode_write(&res, rel)
    }

    /// CREATE `name` in `dir`; `rel` is the new file's path (for messages).
    pub async fn create(
        &self,
        dir: FileHandle,
        name: &str,
        how: CreateHow,
        rel: &str,
    ) -> Result<FileHandle, NfsError> {
        let args = CreateArgs {
            place: DirOpArgs {
                dir,
                name: Name::from(name),
            },
            how,
        };
        let res = self.call(Proc::Create, rel, |b| args.encode(b)).await?;
        let ok: CreateOk = self.decode(&res, Proc::Create, rel)?;
        match ok.obj {
            Some(fh) => Ok(fh),
            // The handle is optional in the reply: look the file up.
            None => Ok(self.lookup(dir, name, rel).await?.0),
        }
    }

    pub async fn mkdir(
        &self,
        dir: FileHandle,
        name: &str,
        mode: u32,
        rel: &str,
    ) -> Result<FileHandle, NfsError> {
        let args = MkdirArgs {
            place: DirOpArgs {
                dir,
                name: Name::from(name),
            },
            attributes: Sattr3 {
                mode: Some(mode),
                ..Sattr3::default()
            },
        };
        let res = self.call(Proc::Mkdir, rel, |b| args.encode(b)).await?;
        let ok: CreateOk = self.decode(&res, Proc::Mkdir, rel)?;
        match ok.obj {
            Some(fh) => Ok(fh),
            None => Ok(self.lookup(dir, name, rel).await?.0),
        }
    }

    async fn dir_op(
        &self,
        proc_: Proc,
        dir: FileHandle,
        name: &str,
        rel: &str,
    ) -> Result<(), NfsError> {
        let args = DirOpArgs {
            dir,
            name: Name::from(name),
        };
        let res = self.call(proc_, rel, |b| args.encode(b)).await?;
        self.decode::<nfs3::WccOk>(&res, proc_, rel).map(|_| ())
    }

    pub async fn remove(&self, dir: FileHandle, name: &str, rel: &str) -> Result<(), NfsError> {
        self.dir_op(Proc::Remove, dir, name, rel).await
    }

    pub async fn rmdir(&self, dir: FileHandle, name: &str, rel: &str) -> Result<(), NfsError> {
        self.dir_op(Proc::Rmdir, dir, name, rel).await
    }

    pub async fn rename(
        &self,
        from: (FileHandle, &str),
        to: (FileHandle, &str),
        rel: &str,
    ) -> Result<(), NfsError> {
        let args = RenameArgs {
            from: DirOpArgs {
                dir: from.0,
                name: Name::from(from.1),
            },
            to: DirOpArgs {
                dir: to.0,
                name: Name::from(to.1),
            },
        };
        let res = self.call(Proc::Rename, rel, |b| args.encode(b)).await?;
        self.decode::<nfs3::RenameOk>(&res, Proc::Rename, rel)
            .map(|_| ())
    }

    /// One READDIRPLUS reply from `cookie` on: entries with their cookies (the file
    /// API follows them, with its guards, in [`crate::fs::Fs::readdir`]).
    pub async fn readdir_page(
        &self,
        dir: FileHandle,
        cookie: u64,
        cookieverf: Verifier,
        rel: &str,
    ) -> Result<(ReaddirplusPage, Verifier, bool), NfsError> {
        let dircount = self.fsinfo.dtpref.clamp(4096, 65536);
        let args = ReaddirplusArgs {
            dir,
            cookie,
            cookieverf,
            dircount,
            maxcount: dircount * 4,
        };
        let res = self
            .call(Proc::Readdirplus, rel, |b| args.encode(b))
            .await?;
        let ok: ReaddirplusOk = self.decode(&res, Proc::Readdirplus, rel)?;
        let entries = ok
            .entries
            .iter()
            .map(|e| {
                (
                    e.cookie,
                    DirEntry {
                        name: String::from_utf8_lossy(e.name.0).into_owned(),
                        fileid: e.fileid,
                        attributes: e.name_attributes,
                        handle: e.name_handle,
                    },
                )
            })
            .collect();
        Ok((entries, ok.cookieverf, ok.eof))
    }

    pub async fn fsstat(&self, fh: FileHandle, rel: &str) -> Result<FsstatOk, NfsError> {
        let res = self
            .call(Proc::Fsstat, rel, |b| FhArgs { object: fh }.encode(b))
            .await?;
        self.decode(&res, Proc::Fsstat, rel)
    }

    pub async fn fsinfo_of(&self, fh: FileHandle, rel: &str) -> Result<FsinfoOk, NfsError> {
        let res = self
            .call(Proc::Fsinfo, rel, |b| FhArgs { object: fh }.encode(b))
            .await?;
        self.decode(&res, Proc::Fsinfo, rel)
    }

    pub async fn pathconf(&self, fh: FileHandle, rel: &str) -> Result<PathconfOk, NfsError> {
        let res = self
            .call(Proc::Pathconf, rel, |b| FhArgs { object: fh }.encode(b))
            .await?;
        self.decode(&res, Proc::Pathconf, rel)
    }

    /// COMMIT `count` bytes from `offset` (0: to the end); returns the verifier.
    pub async fn commit(
        &self,
        fh: FileHandle,
        offset: u64,
        count: u32,
        rel: &str,
    ) -> Result<Verifier, NfsError> {
        let args = CommitArgs {
            file: fh,
            offset,
            count,
        };
        let res = self.call(Proc::Commit, rel, |b| args.encode(b)).await?;
        Ok(self.decode::<CommitOk>(&res, Proc::Commit, rel)?.verf)
    }
}

/// The names of the NFSv3 procedures, by number (the order of the "stats" view).
pub fn nfs3_proc_names() -> Vec<&'static str> {
    (0..22).filter_map(Proc::from_u32).map(Proc::name).collect()
}

/// Decodes an NFS result; an error status becomes [`NfsError::Status`].
pub fn decode_results<'r, T: XdrDecode<'r>>(
    res: &'r Results,
    proc_: Proc,
    path: &str,
) -> Result<T, NfsError> {
    match decode_res::<T>(res.bytes()) {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(status)) => Err(NfsError::Status {
            proc_: proc_.name(),
            path: path.to_string(),
            status,
        }),
        Err(e) => Err(bad_reply(proc_.name(), path, e)),
    }
}

/// Bytes a successful READ reply of `count` bytes brings at least (record mark, RPC reply
/// header, status, no attributes, count, eof, data length, data): the hint that lets the
/// connection gather several replies per wake-up.
pub fn read_reply_hint(count: u32) -> u32 {
    count.saturating_add(48)
}

/// The result status is NFS3ERR_JUKEBOX.
pub fn is_jukebox(results: &[u8]) -> bool {
    results.len() >= 4
        && u32::from_be_bytes([results[0], results[1], results[2], results[3]])
            == Nfsstat3::Jukebox.to_u32()
}

/// Transfer size: as large as `cap` allows (fewer RPCs), never above the
/// server's max nor below its preferred size when the cap permits, rounded
/// down to a multiple of `mult`.
fn transfer_size(pref: u32, max: u32, mult: u32, cap: u32) -> u32 {
    let max = if max == 0 { 64 * 1024 } else { max };
    let want = if pref == 0 {
        max
    } else {
        pref.max(max.min(cap))
    };
    let mut size = want.min(max).min(cap).max(1);
    if mult > 1 && size >= mult {
        size -= size % mult;
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_sizes_honour_fsinfo() {
        // Up to the cap, within max, a multiple of mult.
        assert_eq!(transfer_size(65536, 1 << 20, 4096, 1 << 20), 1 << 20);
        assert_eq!(transfer_size(65536, 1 << 20, 4096, 256 * 1024), 256 * 1024);
        assert_eq!(transfer_size(65536, 32768, 4096, 1 << 20), 32768);
        assert_eq!(transfer_size(0, 0, 0, 1 << 20), 65536);
        assert_eq!(transfer_size(8192, 10000, 4096, 1 << 20), 8192);
        assert!(is_jukebox(&10008u32.to_be_bytes()));
        assert!(!is_jukebox(&2u32.to_be_bytes()));
    }
}
