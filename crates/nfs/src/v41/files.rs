//! File operations over an NFSv4.1 session: OPEN (existing files, exclusive create),
//! CLOSE, READ and WRITE with the open stateid, COMMIT, REMOVE, RENAME, CREATE of
//! directories, SETATTR, ACCESS and the file system's space figures. Errors name the op
//! and the path, as those of [`Client::lookup_path`] do.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use super::{attr_mask, bad, Attr, Client};
use crate::error::{check_read_len, NfsError};
use crate::proto::nfs4::{
    bit, share, ArgOp, Bitmap4, Compound, Delegation, Fh4, OpResult, OpenClaim, OpenHow, SetAttrs,
    SetTime, StableHow, Stateid, Verifier, MINOR_VERSION,
};

/// `OPEN4_RESULT_CONFIRM`: the open-owner must be confirmed (NFSv4.0 only).
pub const OPEN4_RESULT_CONFIRM: u32 = 0x2;
/// `OPEN4_RESULT_LOCKTYPE_POSIX`.
pub const OPEN4_RESULT_LOCKTYPE_POSIX: u32 = 0x4;
/// `OPEN4_RESULT_PRESERVE_UNLINKED`.
pub const OPEN4_RESULT_PRESERVE_UNLINKED: u32 = 0x8;

/// Largest WRITE sent in one COMPOUND.
pub const MAX_WRITE: u32 = 1 << 20;

/// What an OPEN asks to do with the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Both,
}

impl Access {
    fn share(self) -> u32 {
        match self {
            Access::Read => share::ACCESS_READ,
            Access::Write => share::ACCESS_WRITE,
            Access::Both => share::ACCESS_BOTH,
        }
    }
}

/// An open file: its handle, the open stateid for READ, WRITE, SETATTR and CLOSE, and
/// its attributes right after the OPEN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenFile {
    pub fh: Fh4,
    pub stateid: Stateid,
    pub attr: Attr,
    /// `rflags` of the OPEN result (`OPEN4_RESULT_*`).
    pub rflags: u32,
    /// Whether the server granted a delegation although none was wanted (it is not
    /// used; its stateid would have to be returned before the lease ends).
    pub delegated: bool,
    /// The path the file was opened by, for messages.
    pub path: String,
}

/// A WRITE's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub count: u32,
    pub committed: StableHow,
    /// The write verifier: if a later COMMIT answers another one, the server restarted
    /// and the UNSTABLE data may be lost.
    pub verifier: Verifier,
}

/// Size and free space of the file system that holds a file (`space_*`, `files_*`),
/// and the largest READ and WRITE the server takes. `None`: the server did not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FsSpace {
    /// Bytes this user may still write.
    pub space_avail: Option<u64>,
    pub space_free: Option<u64>,
    pub space_total: Option<u64>,
    pub files_avail: Option<u64>,
    pub files_free: Option<u64>,
    pub files_total: Option<u64>,
    pub maxread: Option<u64>,
    pub maxwrite: Option<u64>,
    pub maxname: Option<u32>,
    pub maxlink: Option<u32>,
}

/// What to set once a create is known to have succeeded: the mode asked for if the
/// server did not set it (always after an exclusive create), and after an exclusive
/// create both times, where the server may keep the verifier (ganesha does: an mtime
/// decades ahead). UNCHECKED4 may have opened an existing file, left as it is.
fn after_create(how: OpenHow, attrset: Bitmap4) -> SetAttrs {
    let (want, exclusive) = match how {
        OpenHow::Exclusive41(_, a) => (a, true),
        OpenHow::Guarded(a) => (a, false),
        OpenHow::Unchecked(_) | OpenHow::NoCreate => return SetAttrs::NONE,
    };
    let now = exclusive.then_some(SetTime::ServerTime);
    SetAttrs {
        // A repeated exclusive create may report the mode as set although the first
        // one made the file: set it again along with the times.
        mode: want
            .mode
            .filter(|_| exclusive || !attrset.contains(bit::MODE)),
        time_access: now,
        time_modify: now,
        ..SetAttrs::NONE
    }
}

/// A verifier for [`Client::create`], different for every call of this process and,
/// short of a clash of clocks and process ids, of others: process id, time, counter.
pub fn create_verifier() -> Verifier {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let v = (u64::from(std::process::id()) << 40) ^ nanos.rotate_left(20) ^ n;
    v.to_be_bytes()
}

impl Client {
    /// This client's open-owner: one per client id, so that the server keeps the opens
    /// of different dbio processes apart. NFSv4.1 ignores the OPEN seqid, so several
    /// OPENs of one owner may be in flight at once.
    pub fn open_owner(&self) -> [u8; 16] {
        let mut o = [0u8; 16];
        o[..8].copy_from_slice(b"dbio-own");
        o[8..].copy_from_slice(&self.session.clientid().to_be_bytes());
        o
    }

    /// Largest WRITE this session allows in one COMPOUND (room for the other ops, in
    /// whole 4 KiB pages, so that a copy's WRITEs stay page-aligned).
    pub fn max_write(&self) -> u32 {
        let granted = self.session.fore_channel().maxrequestsize;
        (granted.saturating_sub(1024) & !4095).clamp(4096, MAX_WRITE)
    }

    /// OPEN of `claim` relative to `fh` (a directory for CLAIM_NULL, the file itself
    /// for CLAIM_FH), then its handle and attributes.
    async fn open_with(
        &self,
        fh: Fh4,
        claim: OpenClaim<'_>,
        access: Access,
        how: OpenHow,
        path: &str,
    ) -> Result<OpenFile, NfsError> {
        // No delegation: a recall of it would only cost the I/O a round trip (one
        // granted anyway is returned when recalled: v41::callback).
        let want = share::ACCESS_WANT_NO_DELEG;
        Ok(self
            .open_wanting(fh, claim, access, want, how, path)
            .await?
            .0)
    }

    /// Opens the existing file `name` of directory `dir` for reading and asks for a
    /// read delegation (`OPEN4_SHARE_ACCESS_WANT_READ_DELEG`): the open and the
    /// delegation's stateid if the server granted one. A recall of it is answered by
    /// the session's back channel (DELEGRETURN), so the session must have one.
    pub async fn open_read_delegated(
        &self,
        dir: Fh4,
        name: &str,
        path: &str,
    ) -> Result<(OpenFile, Option<Stateid>), NfsError> {
        let claim = OpenClaim::Null(name.into());
        let want = share::ACCESS_WANT_READ_DELEG;
        self.open_wanting(dir, claim, Access::Read, want, OpenHow::NoCreate, path)
            .await
    }

    /// OPEN with the delegation wish `want` (`OPEN4_SHARE_ACCESS_WANT_*`): the open and
    /// the stateid of a read or write delegation if one was granted.
    async fn open_wanting(
        &self,
        fh: Fh4,
        claim: OpenClaim<'_>,
        access: Access,
        want: u32,
        how: OpenHow,
        path: &str,
    ) -> Result<(OpenFile, Option<Stateid>), NfsError> {
        let owner = self.open_owner();
        let c = Compound::new("open", MINOR_VERSION)
            .putfh(fh)
            .op(ArgOp::Open {
                seqid: 0,
                share_access: access.share() | want,
                share_deny: share::DENY_NONE,
                clientid: self.session.clientid(),
                owner: &owner,
                how,
                claim,
            })
            .getfh()
            .getattr(attr_mask());
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        let (mut open, mut fh, mut attr) = (None, None, None);
        for op in &res.results {
            match op {
                OpResult::Open(o) => open = Some(o.clone()),
                OpResult::Getfh(h) => fh = Some(*h),
                OpResult::Getattr(a) => attr = Some(Attr::from_fattr(a)),
                _ => {}
            }
        }
        let (Some(open), Some(fh), Some(attr)) = (open, fh, attr) else {
            return Err(bad(
                path,
                "OPEN reply without stateid, handle or attributes",
            ));
        };
        // NFSv4.1 has no OPEN_CONFIRM (RFC 8881 18.16.4: the server must not set it).
        if open.rflags & OPEN4_RESULT_CONFIRM != 0 {
            return Err(bad(
                path,
                "OPEN asks for OPEN_CONFIRM, which NFSv4.1 does not have",
            ));
        }
        let delegation = match open.delegation {
            Delegation::Read { stateid, .. } | Delegation::Write { stateid, .. } => Some(stateid),
            Delegation::None | Delegation::NoneExt { .. } => None,
        };
        let delegated = delegation.is_some();
        self.opens
            .add(fh, access.share(), false, open.stateid, path);
        let mut file = OpenFile {
            fh,
            stateid: open.stateid,
            attr,
            rflags: open.rflags,
            delegated,
            path: path.to_string(),
        };
        let fix = after_create(how, open.attrset);
        drop(res);
        if !fix.is_empty() {
            let c = Compound::new("setattr", MINOR_VERSION)
                .putfh(fh)
                .setattr(file.stateid, fix)
                .getattr(attr_mask());
            let r = self.session.compound(&c, path).await?;
            if let Some(OpResult::Getattr(a)) = r.res()?.results.last() {
                file.attr = Attr::from_fattr(a);
            }
        }
        Ok((file, delegation))
    }

    /// Opens the existing file `name` of directory `dir` (OPEN, CLAIM_NULL, share deny
    /// none); `path` is the file's path, for messages.
    pub async fn open(
        &self,
        dir: Fh4,
        name: &str,
        access: Access,
        path: &str,
    ) -> Result<OpenFile, NfsError> {
        self.open_with(
            dir,
            OpenClaim::Null(name.into()),
            access,
            OpenHow::NoCreate,
            path,
        )
        .await
    }

    /// Opens the file of handle `fh` (OPEN, CLAIM_FH: no name needed, e.g. after a
    /// lookup or with a handle kept from before).
    pub async fn open_handle(
        &self,
        fh: Fh4,
        access: Access,
        path: &str,
    ) -> Result<OpenFile, NfsError> {
        self.open_with(fh, OpenClaim::Fh, access, OpenHow::NoCreate, path)
            .await
    }

    /// Creates the new regular file `name` in `dir` and opens it for reading and
    /// writing (OPEN with EXCLUSIVE4_1): fails with NFS4ERR_EXIST if a file of that name
    /// exists, and never truncates one. The server keeps `verifier` with the new file,
    /// so the same call made again after its reply was lost (same `verifier`, from
    /// [`create_verifier`]) opens the file it created instead of failing. Once the reply
    /// is in, a SETATTR gives the file real times (and the mode if the server did not
    /// set it); a repeat after that SETATTR ran finds another verifier and fails.
    pub async fn create(
        &self,
        dir: Fh4,
        name: &str,
        mode: u32,
        verifier: Verifier,
        path: &str,
    ) -> Result<OpenFile, NfsError> {
        let attrs = SetAttrs {
            size: None,
            mode: Some(mode & 0o7777),
            ..SetAttrs::NONE
        };
        self.open_with(
            dir,
            OpenClaim::Null(name.into()),
            Access::Both,
            OpenHow::Exclusive41(verifier, attrs),
            path,
        )
        .await
    }

    /// Opens `name` in `dir` for writing, creating it with `mode` if it does not exist
    /// and truncating it if it does (OPEN with UNCHECKED4 and size 0), like `cp`.
    pub async fn create_or_truncate(
        &self,
        dir: Fh4,
        name: &str,
        mode: u32,
        path: &str,
    ) -> Result<OpenFile, NfsError> {
        let attrs = SetAttrs {
            size: Some(0),
            mode: Some(mode & 0o7777),
            ..SetAttrs::NONE
        };
        self.open_with(
            dir,
            OpenClaim::Null(name.into()),
            Access::Both,
            OpenHow::Unchecked(attrs),
            path,
        )
        .await
    }

    /// Releases an open (CLOSE with the open stateid; NFSv4.1 sends seqid 0).
    pub async fn close_file(&self, file: OpenFile) -> Result<(), NfsError> {
        self.close_stateid(file.fh, file.stateid, &file.path).await
    }

    /// CLOSE of the open of `fh` that has `stateid`.
    pub async fn close_stateid(
        &self,
        fh: Fh4,
        stateid: Stateid,
        path: &str,
    ) -> Result<(), NfsError> {
        let stateid = self.opens.current(stateid);
        let c = Compound::new("close", MINOR_VERSION)
            .putfh(fh)
            .close(0, stateid);
        self.session.compound(&c, path).await?;
        self.opens.remove(stateid);
        Ok(())
    }

    /// One READ of at most [`Client::max_read`] bytes with the open stateid: the data
    /// (sharing the reply record) and whether it reached the end of the file.
    pub async fn read_open(
        &self,
        file: &OpenFile,
        offset: u64,
        len: u32,
    ) -> Result<(Bytes, bool), NfsError> {
        self.read_stateid(file.fh, file.stateid, offset, len, &file.path)
            .await
    }

    /// One READ with `stateid` (an open stateid, or [`Stateid::ANONYMOUS`]).
    pub async fn read_stateid(
        &self,
        fh: Fh4,
        stateid: Stateid,
        offset: u64,
        len: u32,
        path: &str,
    ) -> Result<(Bytes, bool), NfsError> {
        let len = len.min(self.max_read());
        let c = Compound::new("read", MINOR_VERSION).putfh(fh).read(
            self.opens.current(stateid),
            offset,
            len,
        );
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

    /// One WRITE of `data` (at most [`Client::max_write`] bytes) at `offset` with the
    /// open stateid.
    pub async fn write(
        &self,
        file: &OpenFile,
        offset: u64,
        data: &[u8],
        stable: StableHow,
    ) -> Result<Written, NfsError> {
        self.write_stateid(file.fh, file.stateid, offset, data, stable, &file.path)
            .await
    }

    /// One WRITE with `stateid` (an open stateid, or [`Stateid::ANONYMOUS`]).
    pub async fn write_stateid(
        &self,
        fh: Fh4,
        stateid: Stateid,
        offset: u64,
        data: &[u8],
        stable: StableHow,
        path: &str,
    ) -> Result<Written, NfsError> {
        if data.len() > self.max_write() as usize {
            return Err(NfsError::Invalid {
                path: path.to_string(),
                reason: format!(
                    "WRITE of {} bytes is larger than this session's {}",
                    data.len(),
                    self.max_write()
                ),
            });
        }
        let c = Compound::new("write", MINOR_VERSION).putfh(fh).write(
            self.opens.current(stateid),
            offset,
            stable,
            data,
        );
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(&OpResult::Write {
                count,
                committed,
                verifier,
            }) => {
                if count as usize > data.len() {
                    return Err(bad(path, "WRITE wrote more bytes than were sent"));
                }
                Ok(Written {
                    count,
                    committed,
                    verifier,
                })
            }
            _ => Err(bad(path, "WRITE reply without a count")),
        }
    }

    /// COMMIT of `count` bytes from `offset` (0: to the end of the file); the write
    /// verifier.
    pub async fn commit(
        &self,
        fh: Fh4,
        offset: u64,
        count: u32,
        path: &str,
    ) -> Result<Verifier, NfsError> {
        let c = Compound::new("commit", MINOR_VERSION)
            .putfh(fh)
            .commit(offset, count);
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(OpResult::Commit(v)) => Ok(*v),
            _ => Err(bad(path, "COMMIT reply without a verifier")),
        }
    }

    /// Looks up one name in a directory (PUTFH, LOOKUP, GETFH, GETATTR).
    pub async fn lookup(&self, dir: Fh4, name: &str, path: &str) -> Result<(Fh4, Attr), NfsError> {
        let c = Compound::new("lookup", MINOR_VERSION)
            .putfh(dir)
            .lookup(name)
            .getfh()
            .getattr(attr_mask());
        let r = match self.session.compound(&c, path).await {
            Err(NfsError::Status4 {
                status: crate::proto::nfs4::Nfsstat4::Wrongsec,
                ..
            }) => return Err(self.wrongsec(Some(dir), &[name], path).await),
            r => r?,
        };
        let res = r.res()?;
        match &res.results[..] {
            [.., OpResult::Getfh(fh), OpResult::Getattr(a)] => Ok((*fh, Attr::from_fattr(a))),
            _ => Err(bad(path, "LOOKUP reply without handle or attributes")),
        }
    }

    /// Removes `name` from `dir` (a file, or an empty directory).
    pub async fn remove(&self, dir: Fh4, name: &str, path: &str) -> Result<(), NfsError> {
        let c = Compound::new("remove", MINOR_VERSION)
            .putfh(dir)
            .remove(name);
        self.session.compound(&c, path).await.map(drop)
    }

    /// Renames `from.1` in directory `from.0` to `to.1` in `to.0` (SAVEFH of the
    /// source directory, PUTFH of the target, RENAME); replaces an existing target
    /// file as rename(2) does.
    pub async fn rename(
        &self,
        from: (Fh4, &str),
        to: (Fh4, &str),
        path: &str,
    ) -> Result<(), NfsError> {
        let c = Compound::new("rename", MINOR_VERSION)
            .putfh(from.0)
            .savefh()
            .putfh(to.0)
            .rename(from.1, to.1);
        self.session.compound(&c, path).await.map(drop)
    }

    /// Creates the directory `name` in `dir` with `mode` (CREATE NF4DIR); its handle.
    pub async fn mkdir(
        &self,
        dir: Fh4,
        name: &str,
        mode: u32,
        path: &str,
    ) -> Result<Fh4, NfsError> {
        let attrs = SetAttrs {
            size: None,
            mode: Some(mode & 0o7777),
            ..SetAttrs::NONE
        };
        let c = Compound::new("mkdir", MINOR_VERSION)
            .putfh(dir)
            .mkdir(name, attrs)
            .getfh();
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(OpResult::Getfh(fh)) => Ok(*fh),
            _ => Err(bad(path, "CREATE reply without a handle")),
        }
    }

    /// Sets size and/or mode (SETATTR). A size change needs the open stateid of an
    /// open for writing (or [`Stateid::ANONYMOUS`] where the server allows it).
    pub async fn setattr(
        &self,
        fh: Fh4,
        stateid: Stateid,
        attrs: SetAttrs,
        path: &str,
    ) -> Result<(), NfsError> {
        let c = Compound::new("setattr", MINOR_VERSION)
            .putfh(fh)
            .setattr(self.opens.current(stateid), attrs);
        self.session.compound(&c, path).await.map(drop)
    }

    /// ACCESS: of the `bits` asked for (`access::*`), those the server could check
    /// and those it grants.
    pub async fn access(&self, fh: Fh4, bits: u32, path: &str) -> Result<(u32, u32), NfsError> {
        let c = Compound::new("access", MINOR_VERSION)
            .putfh(fh)
            .access(bits);
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(&OpResult::Access { supported, access }) => Ok((supported, access)),
            _ => Err(bad(path, "ACCESS reply without bits")),
        }
    }

    /// The space and file counts of the file system holding `fh` (GETATTR).
    pub async fn fs_space(&self, fh: Fh4, path: &str) -> Result<FsSpace, NfsError> {
        let mask = Bitmap4::from_bits(&[
            bit::FILES_AVAIL,
            bit::FILES_FREE,
            bit::FILES_TOTAL,
            bit::MAXLINK,
            bit::MAXNAME,
            bit::MAXREAD,
            bit::MAXWRITE,
            bit::SPACE_AVAIL,
            bit::SPACE_FREE,
            bit::SPACE_TOTAL,
        ]);
        let c = Compound::new("fs_space", MINOR_VERSION)
            .putfh(fh)
            .getattr(mask);
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(OpResult::Getattr(a)) => Ok(FsSpace {
                space_avail: a.space_avail,
                space_free: a.space_free,
                space_total: a.space_total,
                files_avail: a.files_avail,
                files_free: a.files_free,
                files_total: a.files_total,
                maxread: a.maxread,
                maxwrite: a.maxwrite,
                maxname: a.maxname,
                maxlink: a.maxlink,
            }),
            _ => Err(bad(path, "GETATTR reply without attributes")),
        }
    }
}
